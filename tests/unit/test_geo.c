/*
 * Unit tests for GeoIP (apache2/operators/bw_geo.c, bw_iso3166.c,
 * op_geo_lookup.c) and for what the engine makes of them: SecGeoLookupDb
 * refusing a missing or damaged file with its line, and @geoLookup filling
 * GEO in a transaction. The databases are written at test time by
 * tests/geo/make-mmdb (MaxMind's Perl writer), never committed.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <apr_thread_proc.h>
#include "operators/op_internal.h"
#include "test_files.h"
#include "operators/bw_geo.h"
#include "run/bw_run.h"

static apr_pool_t *g_pool;
/* The process's pool: g_pool is a child of it for each test (the checked
 * fixture), so what a test opens (libxml2 documents and schemas, MaxMind
 * DBs: their cleanups free memory APR does not own) is freed before the
 * forked test ends, and LeakSanitizer sees nothing left. */
static apr_pool_t *g_root;

static void per_test_pool(void)
{
    apr_pool_create(&g_pool, g_root);
}

static void per_test_pool_done(void)
{
    apr_pool_destroy(g_pool);
    g_pool = g_root;
}
static const char *g_dir;        /* temporary directory of this run */
static const char *g_city, *g_country, *g_damaged, *g_garbage;
static const char *g_make_error; /* why the databases could not be made */

/* Run tests/geo/make-mmdb MODE into g_dir/NAME; NULL on failure. */
static const char *make_db(const char *gen, const char *mode, const char *name)
{
    const char *out = apr_pstrcat(g_pool, g_dir, "/", name, NULL);
    const char *cmd = apr_psprintf(g_pool, "perl '%s' %s '%s' 2>'%s/make.err'", gen, mode, out, g_dir);
    if (system(cmd) != 0) {
        g_make_error = apr_psprintf(g_pool, "%s %s failed (see %s/make.err; Debian: "
                                    "libmaxmind-db-writer-perl)", gen, mode, g_dir);
        return NULL;
    }
    return out;
}

static void make_dbs(void)
{
    const char *data = getenv("BW_TEST_DATA");
    char *dir = apr_pstrcat(g_pool, getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                            "/bw_test_geo_XXXXXX", NULL);
    const char *gen;
    if (!data || !*data) {
        g_make_error = "set BW_TEST_DATA to tests/unit/data";
        return;
    }
    gen = apr_pstrcat(g_pool, data, "/../../geo/make-mmdb", NULL);
    g_dir = mkdtemp(dir);
    if (!g_dir) {
        g_make_error = "mkdtemp failed";
        return;
    }
    g_city = make_db(gen, "--city", "city.mmdb");
    g_country = make_db(gen, "--country", "country.mmdb");
    g_damaged = make_db(gen, "--damaged", "damaged.mmdb");
    g_garbage = make_db(gen, "--garbage", "garbage.mmdb");
}

static bw_geo_db_t *open_ok(const char *path)
{
    const char *err = NULL;
    bw_geo_db_t *db;
    ck_assert_msg(path != NULL, "%s", g_make_error ? g_make_error : "no database");
    db = bw_geo_open(g_pool, path, &err);
    ck_assert_msg(db != NULL, "bw_geo_open(%s): %s", path, err ? err : "?");
    return db;
}

/* The record of addr as "NAME=value;NAME=value;", or "0" / "-1". */
static const char *lookup(const bw_geo_db_t *db, const char *addr, size_t len)
{
    bw_kv_t f[BW_GEO_MAX_FIELDS];
    const char *err = NULL, *s = "";
    int n = -1, i, rc = bw_geo_lookup(db, bw_str_n(addr, len), g_pool, f, &n, &err);
    if (rc != 1)
        return rc == 0 ? "0" : "-1";
    for (i = 0; i < n; i++)
        s = apr_psprintf(g_pool, "%s%.*s=%.*s;", s, (int)f[i].name.len, f[i].name.data,
                         (int)f[i].value.len, f[i].value.data);
    return s;
}
#define LOOKUP(db, addr) lookup(db, addr, strlen(addr))

/* ---- the ISO 3166 table ----------------------------------------------------- */

START_TEST(test_iso3166_table)
{
    apr_hash_t *seen = apr_hash_make(g_pool);
    char a2[2];
    int n = 0;
    for (a2[0] = 'A'; a2[0] <= 'Z'; a2[0]++)
        for (a2[1] = 'A'; a2[1] <= 'Z'; a2[1]++) {
            const char *a3 = bw_iso3166_alpha3(bw_str_n(a2, 2));
            if (!a3)
                continue;
            ck_assert_msg(strlen(a3) == 3, "%.2s -> %s", a2, a3);
            ck_assert_msg(!apr_hash_get(seen, a3, 3), "%s twice", a3);
            apr_hash_set(seen, a3, 3, "");
            n++;
        }
    /* found through the binary search: so the table is in order too */
    ck_assert_int_eq(n, 250);
    ck_assert_str_eq(bw_iso3166_alpha3(bw_str_make("US")), "USA");
    ck_assert_str_eq(bw_iso3166_alpha3(bw_str_make("GB")), "GBR");
    ck_assert_str_eq(bw_iso3166_alpha3(bw_str_make("AD")), "AND");
    ck_assert_str_eq(bw_iso3166_alpha3(bw_str_make("ZW")), "ZWE");
    ck_assert_str_eq(bw_iso3166_alpha3(bw_str_make("XK")), "XKX");
    ck_assert_ptr_null(bw_iso3166_alpha3(bw_str_make("us")));
    ck_assert_ptr_null(bw_iso3166_alpha3(bw_str_make("USA")));
    ck_assert_ptr_null(bw_iso3166_alpha3(bw_str_make("U")));
    ck_assert_ptr_null(bw_iso3166_alpha3(bw_str_n("U\0", 2)));
    ck_assert_ptr_null(bw_iso3166_alpha3(bw_str_make("EU")));   /* legacy GeoIP pseudo-code */
}
END_TEST

/* ---- opening ------------------------------------------------------------------ */

START_TEST(test_open_refuses_bad_files)
{
    const char *err = NULL;
    const char *missing = apr_pstrcat(g_pool, g_dir ? g_dir : "/nonexistent", "/none.mmdb", NULL);
    ck_assert_msg(g_damaged && g_garbage, "%s", g_make_error ? g_make_error : "?");
    ck_assert_ptr_null(bw_geo_open(g_pool, missing, &err));
    ck_assert_msg(strstr(err, missing) && strstr(err, "No such file"), "%s", err);
    err = NULL;
    ck_assert_ptr_null(bw_geo_open(g_pool, g_garbage, &err));
    ck_assert_msg(strstr(err, g_garbage) && strstr(err, "metadata"), "%s", err);
    err = NULL;
    ck_assert_ptr_null(bw_geo_open(g_pool, g_damaged, &err));
    ck_assert_msg(strstr(err, g_damaged) && strstr(err, "damaged"), "%s", err);
    ck_assert_str_eq(bw_geo_path(open_ok(g_city)), g_city);
}
END_TEST

/* ---- lookups ------------------------------------------------------------------- */

START_TEST(test_city_records)
{
    bw_geo_db_t *db = open_ok(g_city);
    ck_assert_str_eq(LOOKUP(db, "198.51.100.7"),
                     "COUNTRY_CODE=FR;COUNTRY_CODE3=FRA;COUNTRY_NAME=France;COUNTRY_CONTINENT=EU;"
                     "REGION=IDF;CITY=Paris;POSTAL_CODE=75001;LATITUDE=48.856600;"
                     "LONGITUDE=2.352200;");
    ck_assert_str_eq(LOOKUP(db, "203.0.113.250"),
                     "COUNTRY_CODE=US;COUNTRY_CODE3=USA;COUNTRY_NAME=United States;"
                     "COUNTRY_CONTINENT=NA;REGION=CA;CITY=San Francisco;POSTAL_CODE=94107;"
                     "LATITUDE=37.774900;LONGITUDE=-122.419400;DMA_CODE=807;");
    /* IPv6, a country-level record */
    ck_assert_str_eq(LOOKUP(db, "2001:db8:1::5"),
                     "COUNTRY_CODE=JP;COUNTRY_CODE3=JPN;COUNTRY_NAME=Japan;COUNTRY_CONTINENT=AS;");
    ck_assert_str_eq(LOOKUP(db, "2001:DB8:2:0:0:0:0:1"),
                     "COUNTRY_CODE=XK;COUNTRY_CODE3=XKX;COUNTRY_NAME=Kosovo;COUNTRY_CONTINENT=EU;");
    /* only the registered country, as anonymous and satellite ranges */
    ck_assert_str_eq(LOOKUP(db, "192.0.2.1"),
                     "COUNTRY_CODE=DE;COUNTRY_CODE3=DEU;COUNTRY_NAME=Germany;COUNTRY_CONTINENT=EU;");
    /* an IPv4-mapped IPv6 address is its IPv4 address */
    ck_assert_str_eq(LOOKUP(db, "::ffff:198.51.100.9"), LOOKUP(db, "198.51.100.7"));
}
END_TEST

START_TEST(test_country_records)
{
    bw_geo_db_t *db = open_ok(g_country);
    ck_assert_str_eq(LOOKUP(db, "198.51.100.7"),
                     "COUNTRY_CODE=FR;COUNTRY_CODE3=FRA;COUNTRY_NAME=France;COUNTRY_CONTINENT=EU;");
    ck_assert_str_eq(LOOKUP(db, "203.0.113.1"),
                     "COUNTRY_CODE=US;COUNTRY_CODE3=USA;COUNTRY_NAME=United States;"
                     "COUNTRY_CONTINENT=NA;");
}
END_TEST

/* Not found and not an address are both "no match", and allocate nothing. */
START_TEST(test_no_record_and_not_an_address)
{
    static const char *const misses[] = {
        "10.1.2.3", "198.51.101.1", "2001:db8:3::1", "::1", "", "localhost", "example.org",
        "198.51.100.7 ", " 198.51.100.7", "198.51.100.7/24", "198.51.100", "1.2.3.4.5",
        "198.51.100.777", "2001:db8:1::5%eth0", "::ffff:198.51.100", NULL
    };
    bw_geo_db_t *db = open_ok(g_city);
    apr_pool_t *p;
    char *a, *b;
    int i;
    apr_pool_create(&p, g_pool);
    for (i = 0; misses[i]; i++) {
        bw_kv_t f[BW_GEO_MAX_FIELDS];
        const char *err = NULL;
        int n = -1;
        a = apr_palloc(p, 1);
        ck_assert_msg(bw_geo_lookup(db, bw_str_make(misses[i]), p, f, &n, &err) == 0, "%s", misses[i]);
        b = apr_palloc(p, 1);
        ck_assert_int_eq(n, 0);
        ck_assert_msg(b == a + APR_ALIGN_DEFAULT(1), "%s: allocated", misses[i]);
    }
    /* a NUL byte ends nothing: the value is not an address */
    ck_assert_str_eq(lookup(db, "198.51.100.7\0", 13), "0");
    ck_assert_str_eq(lookup(db, "198.51.100.7\0x", 14), "0");
    apr_pool_destroy(p);
}
END_TEST

typedef struct {
    const bw_geo_db_t *db;
    int bad;
} th_arg_t;

static void *APR_THREAD_FUNC lookup_thread(apr_thread_t *t, void *data)
{
    th_arg_t *a = data;
    apr_pool_t *p;
    int i;
    apr_pool_create_unmanaged_ex(&p, NULL, NULL);
    for (i = 0; i < 20000; i++) {
        bw_kv_t f[BW_GEO_MAX_FIELDS];
        const char *err = NULL;
        int n = 0;
        const char *addr = (i & 1) ? "203.0.113.9" : "2001:db8:1::77";
        if (bw_geo_lookup(a->db, bw_str_make(addr), p, f, &n, &err) != 1
            || !bw_str_eq_cstr_ci(f[0].value, (i & 1) ? "US" : "JP"))
            a->bad++;
        apr_pool_clear(p);
    }
    apr_pool_destroy(p);
    /* return, not apr_thread_exit: ASan flags pthread_exit's unwound frames */
    return NULL;
}

/* One opened database shared by threads, as Apache's workers share it. */
START_TEST(test_shared_by_threads)
{
    bw_geo_db_t *db = open_ok(g_city);
    apr_thread_t *th[4];
    th_arg_t args[4];
    apr_status_t st;
    int i;
    for (i = 0; i < 4; i++) {
        args[i].db = db;
        args[i].bad = 0;
        ck_assert_int_eq(apr_thread_create(&th[i], NULL, lookup_thread, &args[i], g_pool), APR_SUCCESS);
    }
    for (i = 0; i < 4; i++) {
        apr_thread_join(&st, th[i]);
        ck_assert_int_eq(args[i].bad, 0);
    }
}
END_TEST

/* ---- the operator ------------------------------------------------------------ */

static int op_run(const bw_geo_db_t *db, const char *value, bw_op_run_t *run)
{
    static bw_op_t op;
    op.def = bw_op_lookup("geoLookup");
    op.param = "";
    memset(run, 0, sizeof(*run));
    run->pool = g_pool;
    run->var_name = "REQUEST_HEADERS:X-Client";
    run->ncaptures = -1;
    run->geo = db;
    return op.def->execute(&op, run, bw_str_make(value));
}

START_TEST(test_operator)
{
    bw_geo_db_t *db = open_ok(g_city);
    bw_op_run_t run;
    ck_assert_int_eq(op_run(db, "2001:db8:1::1", &run), 1);
    ck_assert_str_eq(run.fill_coll, "GEO");
    ck_assert_int_eq(run.nfill, 4);
    ck_assert_msg(bw_str_eq_cstr_ci(run.fill[1].name, "COUNTRY_CODE3")
                  && bw_str_eq_cstr_ci(run.fill[1].value, "JPN"), "fill[1]");
    ck_assert_str_eq(run.msg, "Geo lookup for \"2001:db8:1::1\" succeeded at REQUEST_HEADERS:X-Client.");
    ck_assert_int_eq(op_run(db, "not an address", &run), 0);
    ck_assert_ptr_null(run.fill_coll);
    ck_assert_ptr_null(run.error);
    ck_assert_int_eq(op_run(db, "10.0.0.1", &run), 0);
    ck_assert_ptr_null(run.error);
    ck_assert_int_eq(op_run(NULL, "198.51.100.7", &run), -1);
    ck_assert_msg(strstr(run.error, "SecGeoLookupDb") != NULL, "%s", run.error);
}
END_TEST

/* ---- through the engine ----------------------------------------------------- */

START_TEST(test_directive_errors_name_the_file)
{
    const char *errs[3], *paths[3] = { "none.mmdb", "damaged.mmdb", "garbage.mmdb" };
    int i;
    ck_assert_msg(g_damaged && g_garbage, "%s", g_make_error ? g_make_error : "?");
    for (i = 0; i < 3; i++) {
        /* relative: read from the directory of the file that names it */
        const char *conf = tu_write_file(g_pool, g_dir, "rules.conf",
                                         apr_psprintf(g_pool, "# geo\n\nSecGeoLookupDb %s\n", paths[i]));
        errs[i] = bw_config_load_file(bw_config_create(g_pool), conf);
        ck_assert_msg(errs[i] && strstr(errs[i], apr_pstrcat(g_pool, conf, ":3:", NULL))
                      && strstr(errs[i], "SecGeoLookupDb")
                      && strstr(errs[i], apr_pstrcat(g_pool, g_dir, "/", paths[i], NULL)),
                      "%s", errs[i] ? errs[i] : "(loaded)");
    }
    ck_assert_msg(strstr(errs[0], "No such file") != NULL, "%s", errs[0]);
    ck_assert_msg(strstr(errs[1], "damaged") != NULL, "%s", errs[1]);
}
END_TEST

static const char *geo_of(bw_tx_t *tx, const char *name)
{
    bw_coll_t *c = bw_tx_collection(tx, "GEO", 0);
    const bw_kv_t *kv = c ? bw_coll_get(c, bw_str_make(name)) : NULL;
    return kv ? bw_str_pdup(g_pool, kv->value) : NULL;
}

static bw_tx_t *run_request(bw_program_t *prog, const char *client)
{
    bw_request_t req;
    bw_intervention_t iv;
    bw_kv_t *h;
    bw_tx_t *tx;
    memset(&req, 0, sizeof(req));
    memset(&iv, 0, sizeof(iv));
    req.method = bw_str_make("GET");
    req.uri = bw_str_make("/");
    req.protocol = bw_str_make("HTTP/1.1");
    req.request_line = bw_str_make("GET / HTTP/1.1");
    req.headers = apr_array_make(g_pool, 1, sizeof(bw_kv_t));
    h = apr_array_push(req.headers);
    h->name = bw_str_make("X-Client");
    h->value = bw_str_make(client);
    req.remote_addr = bw_str_make("127.0.0.1");
    tx = bw_tx_create(g_pool, prog, &req, NULL);
    bw_tx_run_phase(tx, BW_PHASE_REQUEST_HEADERS, &iv);
    return tx;
}

START_TEST(test_geo_collection_in_a_transaction)
{
    bw_config_t *cfg = bw_config_create(g_pool);
    bw_program_t *prog;
    bw_tx_t *tx;
    const char *err;
    char *berr = NULL;
    ck_assert_msg(g_city != NULL, "%s", g_make_error ? g_make_error : "?");
    err = bw_config_load_file(cfg, tu_write_file(g_pool, g_dir, "rules.conf", apr_psprintf(g_pool,
        "SecRuleEngine On\n"
        "SecGeoLookupDb %s\n"
        "SecRule REQUEST_HEADERS:X-Client \"@geoLookup\" \"id:1,phase:1,pass,nolog,chain\"\n"
        "  SecRule GEO:COUNTRY_CODE \"@streq US\" \"setvar:tx.us=1\"\n"
        "SecRule REQUEST_HEADERS:X-Client \"!@geoLookup\" \"id:2,phase:1,pass,nolog,setvar:tx.unknown=1\"\n"
        "SecRule &GEO:CITY \"@eq 1\" \"id:3,phase:1,pass,nolog,setvar:tx.has_city=1\"\n",
        g_city)));
    ck_assert_msg(err == NULL, "%s", err);
    prog = bw_program_build(g_pool, NULL, cfg, &berr);
    ck_assert_msg(prog != NULL, "%s", berr);

    tx = run_request(prog, "203.0.113.5");
    ck_assert_str_eq(geo_of(tx, "country_code3"), "USA");
    ck_assert_str_eq(geo_of(tx, "DMA_CODE"), "807");
    ck_assert_ptr_nonnull(bw_coll_get(tx->tx_coll, bw_str_make("us")));
    ck_assert_ptr_null(bw_coll_get(tx->tx_coll, bw_str_make("unknown")));
    ck_assert_ptr_nonnull(bw_coll_get(tx->tx_coll, bw_str_make("has_city")));

    /* country-level record: the last lookup's fields only, no CITY left over */
    tx = run_request(prog, "2001:db8:1::9");
    ck_assert_str_eq(geo_of(tx, "COUNTRY_CODE"), "JP");
    ck_assert_ptr_null(bw_coll_get(tx->tx_coll, bw_str_make("us")));
    ck_assert_ptr_null(bw_coll_get(tx->tx_coll, bw_str_make("has_city")));

    tx = run_request(prog, "not-an-ip");
    ck_assert_ptr_null(geo_of(tx, "COUNTRY_CODE"));
    ck_assert_ptr_nonnull(bw_coll_get(tx->tx_coll, bw_str_make("unknown")));
}
END_TEST

static Suite *geo_suite(void)
{
    Suite *s = suite_create("geo");
    TCase *tc = tcase_create("geo");
    tcase_add_checked_fixture(tc, per_test_pool, per_test_pool_done);
    tcase_add_test(tc, test_iso3166_table);
    tcase_add_test(tc, test_open_refuses_bad_files);
    tcase_add_test(tc, test_city_records);
    tcase_add_test(tc, test_country_records);
    tcase_add_test(tc, test_no_record_and_not_an_address);
    tcase_add_test(tc, test_shared_by_threads);
    tcase_add_test(tc, test_operator);
    tcase_add_test(tc, test_directive_errors_name_the_file);
    tcase_add_test(tc, test_geo_collection_in_a_transaction);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    apr_initialize();
    apr_pool_create(&g_root, NULL);
    bw_engine_init(g_root);
    g_pool = g_root;
    make_dbs();
    if (g_make_error)
        fprintf(stderr, "test_geo: %s\n", g_make_error);
    sr = srunner_create(geo_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (g_dir && !getenv("BW_KEEP_RUN"))
        system(apr_psprintf(g_pool, "rm -rf '%s'", g_dir));
    apr_pool_destroy(g_root);
    apr_terminate();
    return failed ? 1 : 0;
}
