/*
 * MaxMind DB lookups for @geoLookup (see bw_geo.h).
 *
 * Which record field fills which GEO variable: ModSecurity 2 documents the
 * GEO fields of the legacy GeoIP databases; a GeoIP2/GeoLite2 record holds
 * the same facts under other names, mapped here:
 *   COUNTRY_CODE       country.iso_code, else registered_country.iso_code
 *                      (anonymous-proxy and satellite ranges have only the
 *                      latter)
 *   COUNTRY_CODE3      from COUNTRY_CODE by the ISO 3166 table (bw_iso3166.c)
 *   COUNTRY_NAME       country.names.en, else registered_country.names.en
 *   COUNTRY_CONTINENT  continent.code ("EU", as the legacy databases)
 *   REGION             subdivisions[0].iso_code ("CA" for California)
 *   CITY               city.names.en
 *   POSTAL_CODE        postal.code
 *   LATITUDE/LONGITUDE location.latitude / .longitude, "%f" as ModSecurity
 *   DMA_CODE           location.metro_code (the DMA code of US records)
 * AREA_CODE is never set: no MaxMind DB carries telephone area codes (only
 * the retired legacy City database did). A field the record lacks is left
 * out rather than set empty, so "&GEO:CITY" tells whether the database knew.
 */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <maxminddb.h>
#include "bw_geo.h"
#include "bw_iptree.h"

struct bw_geo_db_s {
    MMDB_s mmdb;
    const char *path;
};

typedef struct {
    const char *name;
    const char *const *path;     /* NULL: COUNTRY_CODE3, derived */
    const char *const *fallback; /* or NULL */
} geo_field_t;

static const char *const p_cc[] = { "country", "iso_code", NULL };
static const char *const p_rcc[] = { "registered_country", "iso_code", NULL };
static const char *const p_cname[] = { "country", "names", "en", NULL };
static const char *const p_rcname[] = { "registered_country", "names", "en", NULL };
static const char *const p_cont[] = { "continent", "code", NULL };
static const char *const p_region[] = { "subdivisions", "0", "iso_code", NULL };
static const char *const p_city[] = { "city", "names", "en", NULL };
static const char *const p_postal[] = { "postal", "code", NULL };
static const char *const p_lat[] = { "location", "latitude", NULL };
static const char *const p_lon[] = { "location", "longitude", NULL };
static const char *const p_dma[] = { "location", "metro_code", NULL };

static const geo_field_t geo_fields[] = {
    { "COUNTRY_CODE", p_cc, p_rcc },
    { "COUNTRY_CODE3", NULL, NULL },
    { "COUNTRY_NAME", p_cname, p_rcname },
    { "COUNTRY_CONTINENT", p_cont, NULL },
    { "REGION", p_region, NULL },
    { "CITY", p_city, NULL },
    { "POSTAL_CODE", p_postal, NULL },
    { "LATITUDE", p_lat, NULL },
    { "LONGITUDE", p_lon, NULL },
    { "DMA_CODE", p_dma, NULL },
};

static apr_status_t geo_close(void *data)
{
    MMDB_close(&((bw_geo_db_t *)data)->mmdb);
    return APR_SUCCESS;
}

/* Walk the search tree to a few addresses at both ends of each family and
 * decode what they lead to: a file whose metadata is intact but whose tree
 * or data section is damaged is refused at start-up, not at a request. */
static int geo_probe(bw_geo_db_t *db)
{
    static const char *const probes[] = { "0.0.0.0", "255.255.255.255", "::", "ffff::1" };
    size_t i;
    for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
        int gai = 0, rc = MMDB_SUCCESS;
        MMDB_lookup_result_s r = MMDB_lookup_string(&db->mmdb, probes[i], &gai, &rc);
        MMDB_entry_data_list_s *list = NULL;
        if (gai != 0 || rc == MMDB_IPV6_LOOKUP_IN_IPV4_DATABASE_ERROR)
            continue;
        if (rc != MMDB_SUCCESS)
            return rc;
        if (!r.found_entry)
            continue;
        rc = MMDB_get_entry_data_list(&r.entry, &list);
        MMDB_free_entry_data_list(list);
        if (rc != MMDB_SUCCESS)
            return rc;
    }
    return MMDB_SUCCESS;
}

bw_geo_db_t *bw_geo_open(apr_pool_t *pool, const char *path, const char **err)
{
    bw_geo_db_t *db = apr_pcalloc(pool, sizeof(*db));
    int rc = MMDB_open(path, MMDB_MODE_MMAP, &db->mmdb);
    if (rc != MMDB_SUCCESS) {
        int io = rc == MMDB_FILE_OPEN_ERROR || rc == MMDB_IO_ERROR;
        *err = apr_psprintf(pool, "cannot open the MaxMind DB \"%s\": %s%s%s", path,
                            MMDB_strerror(rc), io ? ": " : "", io ? strerror(errno) : "");
        return NULL;
    }
    db->path = apr_pstrdup(pool, path);
    apr_pool_cleanup_register(pool, db, geo_close, apr_pool_cleanup_null);
    rc = geo_probe(db);
    if (rc != MMDB_SUCCESS) {
        *err = apr_psprintf(pool, "the MaxMind DB \"%s\" is damaged: %s", path, MMDB_strerror(rc));
        return NULL;   /* the cleanup unmaps it with the pool */
    }
    return db;
}

const char *bw_geo_path(const bw_geo_db_t *db)
{
    return db->path;
}

/* A scalar of the record as text: strings as they are in the database,
 * numbers formatted in pool. 0 for an empty string or a map/array. */
static int geo_text(apr_pool_t *pool, const MMDB_entry_data_s *d, bw_str_t *out)
{
    switch (d->type) {
    case MMDB_DATA_TYPE_UTF8_STRING:
        *out = bw_str_n(d->utf8_string, d->data_size);
        return d->data_size > 0;
    case MMDB_DATA_TYPE_DOUBLE:
        *out = bw_str_make(apr_psprintf(pool, "%f", d->double_value));
        return 1;
    case MMDB_DATA_TYPE_FLOAT:
        *out = bw_str_make(apr_psprintf(pool, "%f", (double)d->float_value));
        return 1;
    case MMDB_DATA_TYPE_UINT16:
        *out = bw_str_make(apr_psprintf(pool, "%u", (unsigned)d->uint16));
        return 1;
    case MMDB_DATA_TYPE_UINT32:
        *out = bw_str_make(apr_psprintf(pool, "%u", (unsigned)d->uint32));
        return 1;
    case MMDB_DATA_TYPE_INT32:
        *out = bw_str_make(apr_psprintf(pool, "%d", (int)d->int32));
        return 1;
    case MMDB_DATA_TYPE_UINT64:
        *out = bw_str_make(apr_psprintf(pool, "%" APR_UINT64_T_FMT, (apr_uint64_t)d->uint64));
        return 1;
    default:
        return 0;
    }
}

/* The value at path: 1 and *out, 0 when the record has none, -1 when the
 * data section is damaged. */
static int geo_get(MMDB_entry_s *entry, const char *const *path, apr_pool_t *pool, bw_str_t *out)
{
    MMDB_entry_data_s d;
    int rc = MMDB_aget_value(entry, &d, path);
    if (rc == MMDB_INVALID_DATA_ERROR || rc == MMDB_CORRUPT_SEARCH_TREE_ERROR)
        return -1;
    if (rc != MMDB_SUCCESS || !d.has_data)
        return 0;
    return geo_text(pool, &d, out);
}

static int geo_record(MMDB_entry_s *entry, apr_pool_t *pool, bw_kv_t *out, int *n,
                      const char **err)
{
    size_t i;
    bw_str_t cc = { NULL, 0 };
    for (i = 0; i < sizeof(geo_fields) / sizeof(geo_fields[0]); i++) {
        const geo_field_t *f = &geo_fields[i];
        bw_str_t v;
        int rc;
        if (!f->path) {
            const char *a3 = cc.len ? bw_iso3166_alpha3(cc) : NULL;
            rc = a3 != NULL;
            v = bw_str_make(a3 ? a3 : "");
        } else {
            rc = geo_get(entry, f->path, pool, &v);
            if (rc == 0 && f->fallback)
                rc = geo_get(entry, f->fallback, pool, &v);
        }
        if (rc < 0) {
            *err = "the record's data is damaged";
            return -1;
        }
        if (rc == 0)
            continue;
        if (f->path == p_cc)
            cc = v;
        out[*n].name = bw_str_make(f->name);
        out[(*n)++].value = v;
    }
    return 1;
}

int bw_geo_lookup(const bw_geo_db_t *db, bw_str_t value, apr_pool_t *pool,
                  bw_kv_t out[BW_GEO_MAX_FIELDS], int *n, const char **err)
{
    static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    unsigned char a[16];
    struct sockaddr_in sin;
    struct sockaddr_in6 sin6;
    const struct sockaddr *sa;
    MMDB_lookup_result_s r;
    int fam = bw_ip_parse(value, a), rc = MMDB_SUCCESS;

    *n = 0;
    if (fam < 0)
        return 0;
    if (fam == 1 && !memcmp(a, v4mapped, sizeof(v4mapped))) {
        memmove(a, a + 12, 4);
        fam = 0;
    }
    if (fam == 0) {
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        memcpy(&sin.sin_addr, a, 4);
        sa = (const struct sockaddr *)&sin;
    } else {
        memset(&sin6, 0, sizeof(sin6));
        sin6.sin6_family = AF_INET6;
        memcpy(&sin6.sin6_addr, a, 16);
        sa = (const struct sockaddr *)&sin6;
    }
    r = MMDB_lookup_sockaddr(&db->mmdb, sa, &rc);
    if (rc == MMDB_IPV6_LOOKUP_IN_IPV4_DATABASE_ERROR)
        return 0;
    if (rc != MMDB_SUCCESS) {
        *err = MMDB_strerror(rc);
        return -1;
    }
    if (!r.found_entry)
        return 0;
    return geo_record(&r.entry, pool, out, n, err);
}
