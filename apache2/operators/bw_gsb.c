/*
 * Google Safe Browsing hash lists (see bw_gsb.h): reading the list once,
 * and the URL expressions a lookup hashes.
 *
 * Why MD5 and these expressions: the lists mod_security2 reads are the
 * first Safe Browsing protocol's "goog-malware-hash" lists, MD5 digests of
 * host/path expressions. The expressions tried follow that protocol's
 * client rules (host suffixes times path prefixes), bounded so that one
 * URL costs at most 2 + 5 * 7 digests, computed in pieces on the stack.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <apr_md5.h>
#include "op_internal.h"
#include "bw_gsb.h"

#define GSB_MAX_HOSTS 5   /* the host and suffixes of its last 2..5 labels */
#define GSB_MAX_DIRS  4   /* path prefixes "/a/", "/a/b/", ... */

struct bw_gsb_db_s {
    const char *path;
    size_t n;
    const unsigned char *digests;   /* n * 16 bytes, sorted */
};

static int digest_cmp(const void *a, const void *b)
{
    return memcmp(a, b, 16);
}

/* 32 hex digits into out; -1 when s is not exactly that. */
static int parse_hex(bw_str_t s, unsigned char out[16])
{
    size_t i;
    if (s.len != 32)
        return -1;
    for (i = 0; i < 16; i++) {
        int hi = bw_hexval(s.data[2 * i]), lo = bw_hexval(s.data[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

/* One line into set (keys: 16-byte digests from tmp). 0, or -1 with *why. */
static int read_line(apr_hash_t *set, apr_pool_t *tmp, bw_str_t line, const char **why)
{
    unsigned char d[16];
    while (line.len && (line.data[line.len - 1] == ' ' || line.data[line.len - 1] == '\t'
                        || line.data[line.len - 1] == '\r'))
        line.len--;
    if (line.len == 0 || line.data[0] == '#' || line.data[0] == '[')
        return 0;
    if ((line.data[0] != '+' && line.data[0] != '-')
        || parse_hex(bw_str_n(line.data + 1, line.len - 1), d) < 0) {
        *why = "not a list line: expected +HASH or -HASH (32 hex digits), a [header] or a #comment";
        return -1;
    }
    if (line.data[0] == '+')
        apr_hash_set(set, apr_pmemdup(tmp, d, 16), 16, "");
    else
        apr_hash_set(set, d, 16, NULL);
    return 0;
}

/* The set's digests, sorted, into db (memory from pool). */
static void freeze(bw_gsb_db_t *db, apr_pool_t *pool, apr_hash_t *set)
{
    apr_hash_index_t *hi;
    unsigned char *out;
    size_t i = 0;

    db->n = apr_hash_count(set);
    out = apr_palloc(pool, db->n ? db->n * 16 : 1);
    for (hi = apr_hash_first(NULL, set); hi; hi = apr_hash_next(hi)) {
        const void *key;
        apr_hash_this(hi, &key, NULL, NULL);
        memcpy(out + 16 * i++, key, 16);
    }
    qsort(out, db->n, 16, digest_cmp);
    db->digests = out;
}

bw_gsb_db_t *bw_gsb_open(apr_pool_t *pool, const char *path, const char **err)
{
    bw_gsb_db_t *db = NULL;
    apr_pool_t *tmp;
    apr_hash_t *set;
    bw_str_t rest, line;
    char *rerr = NULL;
    const char *why = NULL;
    int lineno = 0;

    /* The file and the set are scratch: only the sorted array stays. */
    apr_pool_create(&tmp, pool);
    if (bw_op_read_file(tmp, "gsbLookup", "the Safe Browsing list", path, &rest, &rerr) < 0) {
        *err = apr_pstrdup(pool, rerr);
        apr_pool_destroy(tmp);
        return NULL;
    }
    set = apr_hash_make(tmp);
    while (bw_op_next_line(&rest, &line)) {
        lineno++;
        if (read_line(set, tmp, line, &why) < 0) {
            *err = apr_psprintf(pool, "%s:%d: %s", path, lineno, why);
            apr_pool_destroy(tmp);
            return NULL;
        }
    }
    db = apr_pcalloc(pool, sizeof(*db));
    db->path = apr_pstrdup(pool, path);
    freeze(db, pool, set);
    apr_pool_destroy(tmp);
    return db;
}

const char *bw_gsb_path(const bw_gsb_db_t *db)
{
    return db->path;
}

size_t bw_gsb_count(const bw_gsb_db_t *db)
{
    return db->n;
}

int bw_gsb_has(const bw_gsb_db_t *db, const unsigned char digest[16])
{
    return db->n && bsearch(digest, db->digests, db->n, 16, digest_cmp) != NULL;
}

/* Feed s to ctx lowercased, through a small stack buffer. */
static void md5_lower(apr_md5_ctx_t *ctx, bw_str_t s)
{
    unsigned char buf[128];
    size_t off = 0;
    while (off < s.len) {
        size_t i, n = s.len - off < sizeof(buf) ? s.len - off : sizeof(buf);
        for (i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s.data[off + i];
            buf[i] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        apr_md5_update(ctx, buf, n);
        off += n;
    }
}

/* Is the lowercase concatenation a + b in the list? */
static int has2(const bw_gsb_db_t *db, bw_str_t a, bw_str_t b)
{
    apr_md5_ctx_t ctx;
    unsigned char d[APR_MD5_DIGESTSIZE];
    apr_md5_init(&ctx);
    md5_lower(&ctx, a);
    md5_lower(&ctx, b);
    apr_md5_final(d, &ctx);
    return bw_gsb_has(db, d);
}

/* The parts of a URL, pointing into it. */
typedef struct {
    bw_str_t host;    /* without user@ and :port */
    bw_str_t path;    /* from the first '/' or '?' to the end ("" when none) */
    size_t query_at;  /* offset of '?' in path, or path.len */
} gsb_url_t;

/* Split url (scheme already dropped); 0 when there is no host with a '.'. */
static int split_url(bw_str_t url, gsb_url_t *u)
{
    size_t end = 0, start = 0, i;
    while (end < url.len && url.data[end] != '/' && url.data[end] != '?' && url.data[end] != '#')
        end++;
    for (i = 0; i < end; i++)
        if (url.data[i] == '@')
            start = i + 1;
    u->host = bw_str_n(url.data + start, end - start);
    for (i = 0; i < u->host.len; i++)
        if (u->host.data[i] == ':')
            u->host.len = i;
    u->path = bw_str_n(url.data + end, url.len - end);
    for (i = 0; i < u->path.len; i++)
        if (u->path.data[i] == '#')
            u->path.len = i;
    u->query_at = u->path.len;
    for (i = 0; i < u->path.len; i++)
        if (u->path.data[i] == '?') {
            u->query_at = i;
            break;
        }
    return u->host.len && memchr(u->host.data, '.', u->host.len) != NULL;
}

static int is_ipv4(bw_str_t h)
{
    size_t i;
    for (i = 0; i < h.len; i++)
        if ((h.data[i] < '0' || h.data[i] > '9') && h.data[i] != '.')
            return 0;
    return 1;
}

/* hosts[0..return-1]: the host, then (names only) its suffixes of the last
 * 5, 4, 3 and 2 labels that are shorter than it. */
static int host_suffixes(bw_str_t host, bw_str_t hosts[GSB_MAX_HOSTS])
{
    size_t after[GSB_MAX_HOSTS];   /* just after the 1st, 2nd... dot from the right */
    int n = 1, ndots = 0, labels;
    size_t i;
    hosts[0] = host;
    if (is_ipv4(host))
        return 1;
    for (i = host.len; i-- > 0 && ndots < GSB_MAX_HOSTS;)
        if (host.data[i] == '.')
            after[ndots++] = i + 1;
    for (labels = ndots; labels >= 2 && n < GSB_MAX_HOSTS; labels--)
        hosts[n++] = bw_str_n(host.data + after[labels - 1], host.len - after[labels - 1]);
    return n;
}

/* paths[0..return-1]: the path with and without its query, "/", and the
 * first GSB_MAX_DIRS directory prefixes. */
static int path_prefixes(const gsb_url_t *u, bw_str_t paths[GSB_MAX_DIRS + 3])
{
    static const char slash[] = "/";
    bw_str_t p = u->path;
    size_t i;
    int n = 0, dirs = 0;
    if (p.len == 0)
        p = bw_str_n(slash, 1);
    paths[n++] = p;
    if (u->query_at < u->path.len && u->query_at > 0)
        paths[n++] = bw_str_n(p.data, u->query_at);
    paths[n++] = bw_str_n(slash, 1);
    for (i = 1; i < u->query_at && dirs < GSB_MAX_DIRS; i++)
        if (p.data[i] == '/' && i + 1 < u->query_at) {
            paths[n++] = bw_str_n(p.data, i + 1);
            dirs++;
        }
    return n;
}

static bw_str_t drop_scheme(bw_str_t url)
{
    static const char *const schemes[] = { "http://", "https://" };
    size_t k;
    for (k = 0; k < 2; k++) {
        size_t n = strlen(schemes[k]);
        if (url.len >= n && strncasecmp(url.data, schemes[k], n) == 0)
            return bw_str_n(url.data + n, url.len - n);
    }
    return url;
}

int bw_gsb_lookup_url(const bw_gsb_db_t *db, bw_str_t url, bw_str_t *host)
{
    static const bw_str_t none = { "", 0 }, slash = { "/", 1 };
    bw_str_t hosts[GSB_MAX_HOSTS], paths[GSB_MAX_DIRS + 3];
    gsb_url_t u;
    int nh, np, h, p;

    url = drop_scheme(url);
    if (!split_url(url, &u))
        return 0;
    *host = u.host;
    if (has2(db, url, none))
        return 1;
    if (!memchr(url.data, '/', url.len) && !memchr(url.data, '?', url.len) && has2(db, url, slash))
        return 1;
    nh = host_suffixes(u.host, hosts);
    np = path_prefixes(&u, paths);
    for (h = 0; h < nh; h++)
        for (p = 0; p < np; p++)
            if (has2(db, hosts[h], paths[p]))
                return 1;
    return 0;
}
