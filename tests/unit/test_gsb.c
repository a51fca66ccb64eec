/*
 * Unit tests for Google Safe Browsing lists (apache2/operators/bw_gsb.c,
 * op_gsb_lookup.c): reading a list and refusing a bad one with its line,
 * the URL expressions a lookup tries, the operator's captures and message,
 * and SecGsbLookupDb's errors through the configuration reader. The lists
 * are written here from the expressions the tests name (MD5 with APR),
 * never taken from Google.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_md5.h>
#include "operators/op_internal.h"
#include "test_files.h"
#include "operators/bw_gsb.h"
#include "run/bw_run.h"

static apr_pool_t *g_pool, *g_root;
static const char *g_dir;

static void per_test_pool(void)
{
    apr_pool_create(&g_pool, g_root);
}

static void per_test_pool_done(void)
{
    apr_pool_destroy(g_pool);
    g_pool = g_root;
}

/* "+<md5 of expr>\n" (op '+' or '-'), hex in lowercase or uppercase. */
static const char *hash_line(char op, const char *expr, int upper)
{
    unsigned char d[APR_MD5_DIGESTSIZE];
    char *s = apr_palloc(g_pool, 35);
    int i;
    apr_md5(d, expr, strlen(expr));
    s[0] = op;
    for (i = 0; i < 16; i++)
        sprintf(s + 1 + 2 * i, upper ? "%02X" : "%02x", d[i]);
    s[33] = '\n';
    s[34] = '\0';
    return s;
}

static const char *const g_listed[] = {
    "evil.example/", "bad.example/a/b.html", "www.pathy.example/dir/", "203.0.113.9/",
    "q.example/p?x=1", "a.b.c.d.e.example/", NULL
};

static bw_gsb_db_t *open_list(void)
{
    const char *text = "[goog-malware-hash 1.42]\n# a comment\n\n", *err = NULL;
    bw_gsb_db_t *db;
    int i;
    for (i = 0; g_listed[i]; i++)
        text = apr_pstrcat(g_pool, text, hash_line('+', g_listed[i], i & 1), NULL);
    /* added, then removed by a later update */
    text = apr_pstrcat(g_pool, text, hash_line('+', "gone.example/", 0),
                       hash_line('-', "gone.example/", 1), NULL);
    db = bw_gsb_open(g_pool, tu_write_file(g_pool, g_dir, "list.dat", text), &err);
    ck_assert_msg(db != NULL, "%s", err ? err : "?");
    return db;
}

static int look(const bw_gsb_db_t *db, const char *url, size_t len, const char **host)
{
    bw_str_t h = { NULL, 0 };
    int rc = bw_gsb_lookup_url(db, bw_str_n(url, len), &h);
    *host = rc ? apr_pstrmemdup(g_pool, h.data, h.len) : NULL;
    return rc;
}

START_TEST(test_open_reads_the_list)
{
    bw_gsb_db_t *db = open_list();
    unsigned char d[16];
    ck_assert_int_eq((int)bw_gsb_count(db), 6);
    ck_assert_str_eq(bw_gsb_path(db), apr_pstrcat(g_pool, g_dir, "/list.dat", NULL));
    apr_md5(d, "evil.example/", 13);
    ck_assert_int_eq(bw_gsb_has(db, d), 1);
    apr_md5(d, "gone.example/", 13);
    ck_assert_int_eq(bw_gsb_has(db, d), 0);
}
END_TEST

START_TEST(test_open_refuses_bad_lists)
{
    static const char *const bad[] = {
        "+0123\n",                                      /* too short */
        "+0123456789abcdef0123456789abcdeg\n",          /* not hex */
        "0123456789abcdef0123456789abcdef\n",           /* no + or - */
        "+0123456789abcdef0123456789abcdef00\n",        /* too long */
        "+ 0123456789abcdef0123456789abcdef\n",
        NULL
    };
    const char *err = NULL, *path;
    int i;
    ck_assert_ptr_null(bw_gsb_open(g_pool, apr_pstrcat(g_pool, g_dir, "/none.dat", NULL), &err));
    ck_assert_msg(strstr(err, "none.dat") && strstr(err, "No such file"), "%s", err);
    for (i = 0; bad[i]; i++) {
        path = tu_write_file(g_pool, g_dir, "bad.dat", apr_pstrcat(g_pool, "[goog-malware-hash 1.1]\r\n\t\n",
                                                 bad[i], NULL));
        err = NULL;
        ck_assert_ptr_null(bw_gsb_open(g_pool, path, &err));
        ck_assert_msg(strstr(err, apr_pstrcat(g_pool, path, ":3: not a list line", NULL)), "%s", err);
    }
    /* an empty list, CRLF lines and trailing blanks load */
    ck_assert_ptr_nonnull(bw_gsb_open(g_pool, tu_write_file(g_pool, g_dir, "empty.dat", ""), &err));
    path = tu_write_file(g_pool, g_dir, "crlf.dat", "[h]\r\n+0123456789abcdef0123456789ABCDEF \t\r\n");
    ck_assert_int_eq((int)bw_gsb_count(bw_gsb_open(g_pool, path, &err)), 1);
}
END_TEST

START_TEST(test_lookup_expressions)
{
    static const struct { const char *url; const char *host; } hits[] = {
        { "evil.example/", "evil.example" },
        { "evil.example", "evil.example" },                 /* + "/" */
        { "http://evil.example/", "evil.example" },
        { "HTTPS://Evil.EXAMPLE/Some/Path?q=1#f", "Evil.EXAMPLE" },
        { "a.b.c.d.evil.example/x/y", "a.b.c.d.evil.example" },  /* host suffix */
        { "z.y.x.w.v.u.www.pathy.example/dir/", "z.y.x.w.v.u.www.pathy.example" },
        { "evil.example:8080/x", "evil.example" },
        { "user:pw@evil.example/x", "evil.example" },
        { "bad.example/a/b.html", "bad.example" },
        { "bad.example/a/b.html?id=7", "bad.example" },     /* path without query */
        { "x.www.pathy.example/dir/sub/page", "x.www.pathy.example" },  /* directory prefix */
        { "203.0.113.9/anything", "203.0.113.9" },
        { "q.example/p?x=1", "q.example" },
        { "a.b.c.d.e.example", "a.b.c.d.e.example" },   /* no suffix past 5 labels: only as is */
        { NULL, NULL }
    };
    static const char *const misses[] = {
        "notevil.example/", "evil.examples/", "example/", "bad.example/a/c.html",
        "bad.example/a/", "pathy.example/dir/x", "www.pathy.example/other/dir/",
        "1.203.0.113.9/", "q.example/p?x=2", "q.a.b.c.d.e.example/", "q.example/p", "gone.example/", "localhost/",
        "", "http://", "/evil.example/", "ftp://evil.example/", NULL
    };
    bw_gsb_db_t *db = open_list();
    const char *host;
    int i;
    for (i = 0; hits[i].url; i++) {
        ck_assert_msg(look(db, hits[i].url, strlen(hits[i].url), &host) == 1, "%s", hits[i].url);
        ck_assert_str_eq(host, hits[i].host);
    }
    for (i = 0; misses[i]; i++)
        ck_assert_msg(look(db, misses[i], strlen(misses[i]), &host) == 0, "%s", misses[i]);
    /* NUL bytes are data: the host ends at the first '/' */
    ck_assert_int_eq(look(db, "evil.example/\0x", 15, &host), 1);
    ck_assert_int_eq(look(db, "evil.example\0/", 14, &host), 0);
}
END_TEST

/* A long URL (past the hashing buffer) with every kind of part. */
START_TEST(test_lookup_long_url)
{
    bw_gsb_db_t *db = open_list();
    char *url = apr_palloc(g_pool, 5000);
    const char *host;
    memset(url, 'a', 4999);
    url[4999] = '\0';
    memcpy(url, "http://w.evil.example/", 22);
    ck_assert_int_eq(look(db, url, 4999, &host), 1);
    memcpy(url, "http://w.evil.exampl//", 22);
    ck_assert_int_eq(look(db, url, 4999, &host), 0);
}
END_TEST

static int op_run(const bw_gsb_db_t *db, const char *regex, const char *value, int capture,
                  bw_op_run_t *run)
{
    static bw_op_t op;
    bw_op_cenv_t env;
    char *err = NULL;
    memset(&env, 0, sizeof(env));
    env.pool = g_pool;
    env.temp_pool = g_pool;
    op.def = bw_op_lookup("gsbLookup");
    ck_assert_ptr_nonnull(op.def);
    op.param = regex;
    op.param_len = strlen(regex);
    ck_assert_msg(op.def->compile(&op, &env, &err) == 0, "%s", err ? err : "?");
    memset(run, 0, sizeof(*run));
    run->pool = g_pool;
    run->var_name = "ARGS:u";
    run->ncaptures = -1;
    run->capture = capture;
    run->md = pcre2_match_data_create(32, NULL);
    run->gsb = db;
    {
        int rc = op.def->execute(&op, run, bw_str_make(value));
        pcre2_match_data_free(run->md);
        run->md = NULL;
        return rc;
    }
}

START_TEST(test_operator)
{
    bw_gsb_db_t *db = open_list();
    bw_op_run_t run;
    const char *re = "https?://([^\\s\"'<>]+)";
    ck_assert_int_eq(op_run(db, re, "see <a href=\"http://ok.example/\">, "
                            "<a href=\"https://Evil.Example/X\">", 1, &run), 1);
    ck_assert_int_eq(run.ncaptures, 2);
    ck_assert_str_eq(bw_str_pdup(g_pool, run.captures[0]), "evil.example/x");
    ck_assert_str_eq(bw_str_pdup(g_pool, run.captures[1]), "evil.example");
    ck_assert_str_eq(run.msg, "Gsb lookup for \"evil.example/x\" succeeded at ARGS:u.");
    /* no capture action: no captures */
    ck_assert_int_eq(op_run(db, re, "http://evil.example/", 0, &run), 1);
    ck_assert_int_eq(run.ncaptures, -1);
    /* no group: the whole match, its scheme dropped */
    ck_assert_int_eq(op_run(db, "https?://\\S+", "go http://bad.example/a/b.html now", 1, &run), 1);
    ck_assert_str_eq(bw_str_pdup(g_pool, run.captures[0]), "http://bad.example/a/b.html");
    /* misses, an empty regex and empty matches end */
    ck_assert_int_eq(op_run(db, re, "http://ok.example/ http://evil.examples/", 1, &run), 0);
    ck_assert_ptr_null(run.msg);
    ck_assert_int_eq(op_run(db, "", "http://evil.example/", 1, &run), 0);
    ck_assert_int_eq(op_run(db, "x*", "evil.example/", 1, &run), 0);
    ck_assert_int_eq(op_run(db, "(x*)(evil\\S*)?", "a evil.example/", 1, &run), 1);
    /* no list for the rule's context */
    ck_assert_int_eq(op_run(NULL, re, "http://evil.example/", 1, &run), -1);
    ck_assert_msg(strstr(run.error, "SecGsbLookupDb") != NULL, "%s", run.error);
}
END_TEST

/* The miss path allocates nothing. */
START_TEST(test_no_allocation_on_miss)
{
    bw_gsb_db_t *db = open_list();
    apr_pool_t *p;
    char *a, *b;
    const char *urls[] = { "ok.example/a/b/c/d/e?f", "a.b.c.d.e.f.g.example/", "x", NULL };
    int i;
    apr_pool_create(&p, g_pool);
    for (i = 0; urls[i]; i++) {
        bw_str_t h;
        a = apr_palloc(p, 1);
        ck_assert_int_eq(bw_gsb_lookup_url(db, bw_str_make(urls[i]), &h), 0);
        b = apr_palloc(p, 1);
        ck_assert_msg(b == a + APR_ALIGN_DEFAULT(1), "%s: allocated", urls[i]);
    }
    apr_pool_destroy(p);
}
END_TEST

START_TEST(test_directive_errors_name_the_file)
{
    const char *conf, *err;
    tu_write_file(g_pool, g_dir, "bad.dat", "+0123456789abcdef0123456789abcdef\nnot a hash\n");
    /* relative: read from the directory of the file that names it */
    conf = tu_write_file(g_pool, g_dir, "rules.conf", "# gsb\n\nSecGsbLookupDb bad.dat\n");
    err = bw_config_load_file(bw_config_create(g_pool), conf);
    ck_assert_msg(err && strstr(err, apr_pstrcat(g_pool, conf, ":3:", NULL))
                  && strstr(err, "SecGsbLookupDb")
                  && strstr(err, apr_pstrcat(g_pool, g_dir, "/bad.dat:2: not a list line", NULL)),
                  "%s", err ? err : "(loaded)");
    conf = tu_write_file(g_pool, g_dir, "rules.conf", "SecGsbLookupDb none.dat\n");
    err = bw_config_load_file(bw_config_create(g_pool), conf);
    ck_assert_msg(err && strstr(err, ":1:") && strstr(err, "No such file"), "%s", err ? err : "(loaded)");
    tu_write_file(g_pool, g_dir, "ok.dat", hash_line('+', "evil.example/", 0));
    conf = tu_write_file(g_pool, g_dir, "rules.conf", "SecGsbLookupDb ok.dat\n"
                      "SecRule ARGS \"@gsbLookup https?://(\\S+)\" \"id:1,phase:2,deny,capture\"\n"
                      "SecRule ARGS \"@gsbLookup\" \"id:2,phase:2,deny\"\n");
    err = bw_config_load_file(bw_config_create(g_pool), conf);
    ck_assert_msg(err == NULL, "%s", err);
    conf = tu_write_file(g_pool, g_dir, "rules.conf", "SecRule ARGS \"@gsbLookup (\" \"id:1,phase:2,deny\"\n");
    err = bw_config_load_file(bw_config_create(g_pool), conf);
    ck_assert_msg(err && strstr(err, ":1:") && strstr(err, "@gsbLookup"), "%s", err ? err : "(loaded)");
}
END_TEST

static Suite *gsb_suite(void)
{
    Suite *s = suite_create("gsb");
    TCase *tc = tcase_create("gsb");
    tcase_add_checked_fixture(tc, per_test_pool, per_test_pool_done);
    tcase_add_test(tc, test_open_reads_the_list);
    tcase_add_test(tc, test_open_refuses_bad_lists);
    tcase_add_test(tc, test_lookup_expressions);
    tcase_add_test(tc, test_lookup_long_url);
    tcase_add_test(tc, test_operator);
    tcase_add_test(tc, test_no_allocation_on_miss);
    tcase_add_test(tc, test_directive_errors_name_the_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;
    char *dir;

    apr_initialize();
    apr_pool_create(&g_root, NULL);
    bw_engine_init(g_root);
    g_pool = g_root;
    dir = apr_pstrcat(g_root, getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", "/bw_test_gsb_XXXXXX", NULL);
    g_dir = mkdtemp(dir);
    if (!g_dir) {
        fprintf(stderr, "test_gsb: mkdtemp failed\n");
        return 1;
    }
    sr = srunner_create(gsb_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (!getenv("BW_KEEP_RUN"))
        system(apr_psprintf(g_root, "rm -rf '%s'", g_dir));
    apr_pool_destroy(g_root);
    apr_terminate();
    return failed ? 1 : 0;
}
