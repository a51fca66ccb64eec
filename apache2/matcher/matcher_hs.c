/*
 * The matcher on Vectorscan (Hyperscan's API): all patterns of a matcher in
 * one block-mode database, scanned once per value.
 *
 * Compile. Each regex is classified by Vectorscan's own parser: compiled
 * exactly when it can (exact, unless the pattern has a '$': Vectorscan's
 * '$' also matches before a final newline, PCRE2's with DOLLAR_ENDONLY
 * does not, so such a hit only means maybe), else in prefilter mode (a
 * superset: maybe), else left out (always: the operator runs). Phrases are
 * escaped byte by byte and compiled as literals (exact). Every expression
 * has SINGLEMATCH (one report per pattern and scan is all a bit needs),
 * DOTALL (as @rx compiles) and ALLOWEMPTY (a regex that matches the empty
 * string matches every value, as PCRE2 does). When the database as a whole
 * refuses an expression, that expression is demoted and the rest compiled
 * again.
 *
 * Cache. Compiling CRS takes seconds, so a compiled database (and the
 * classification of its bits) is stored in the cache directory under a
 * hash of everything that went into it — Vectorscan's version, every
 * expression, its flags and id — and read back on the next start or
 * graceful restart. A file that does not load is ignored and rewritten.
 *
 * Scratch. A scan needs scratch space, one per thread at a time. The
 * process keeps one prototype scratch grown for every database compiled so
 * far (under a mutex, start-up only) and a generation number; a thread
 * clones the prototype into its own thread-specific scratch whenever its
 * copy is older. These two and the key are the only process-wide state of
 * the engine: scratch belongs to threads, not to configurations.
 */
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <hs.h>
#include <apr_file_io.h>
#include "matcher/matcher_int.h"

#define MX_BASE_FLAGS (HS_FLAG_DOTALL | HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY)
#define MX_CACHE_MAGIC "BWHSDB1\n"

typedef struct {
    hs_database_t *db;
} hs_impl_t;

/* ---- the runtime ------------------------------------------------------------ */

/* Vectorscan's x86 library carries one scanner per instruction set and
 * picks the newest the CPU has. Debian 12's Vectorscan (5.4.9) misses
 * matches in its AVX-512 scanner that the others find (CRS 941140 on
 * "<p style=\"background:url(javascript:alert(1))\">", 933211, 941320…;
 * tests/matcher/diff.c finds them, later Vectorscan releases fixed the
 * accelerators): on such a CPU, databases are compiled for AVX2 and
 * scanned with the AVX2 scanner, which the library exports. Elsewhere (a
 * CPU without AVX-512, a library without the variant: Hyperscan, arm64)
 * hs_scan and the host's own target. */
typedef hs_error_t (*scan_fn_t)(const hs_database_t *, const char *, unsigned int, unsigned int,
                                hs_scratch_t *, match_event_handler, void *);
extern hs_error_t avx2_hs_scan(const hs_database_t *, const char *, unsigned int, unsigned int,
                               hs_scratch_t *, match_event_handler, void *) __attribute__((weak));

typedef struct {
    hs_platform_info_t target;
    scan_fn_t scan;
    const char *name;
} hs_runtime_t;

static hs_runtime_t the_runtime;
static pthread_once_t runtime_once = PTHREAD_ONCE_INIT;

static void runtime_init(void)
{
    hs_populate_platform(&the_runtime.target);
    the_runtime.scan = hs_scan;
    the_runtime.name = "vectorscan";
    if ((the_runtime.target.cpu_features & (HS_CPU_FEATURES_AVX512 | HS_CPU_FEATURES_AVX512VBMI))
        && avx2_hs_scan) {
        the_runtime.target.cpu_features = HS_CPU_FEATURES_AVX2;
        the_runtime.scan = avx2_hs_scan;
        the_runtime.name = "vectorscan (AVX2 scanner)";
    }
}

static const hs_runtime_t *runtime(void)
{
    pthread_once(&runtime_once, runtime_init);
    return &the_runtime;
}

/* ---- scratch --------------------------------------------------------------- */

static pthread_mutex_t proto_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_scratch_t *proto;
static unsigned proto_gen;
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

typedef struct {
    hs_scratch_t *scratch;
    unsigned gen;
} tls_scratch_t;

static void tls_free(void *p)
{
    tls_scratch_t *t = p;
    if (t->scratch)
        hs_free_scratch(t->scratch);
    free(t);
}

static void tls_init(void)
{
    pthread_key_create(&tls_key, tls_free);
}

/* Grow the prototype for db (start-up, or a context's first request). */
static int proto_grow(hs_database_t *db)
{
    hs_error_t rc;
    pthread_mutex_lock(&proto_lock);
    rc = hs_alloc_scratch(db, &proto);
    if (rc == HS_SUCCESS)
        proto_gen++;
    pthread_mutex_unlock(&proto_lock);
    return rc == HS_SUCCESS;
}

static hs_scratch_t *thread_scratch(void)
{
    tls_scratch_t *t;
    unsigned gen;
    pthread_once(&tls_once, tls_init);
    t = pthread_getspecific(tls_key);
    if (!t) {
        t = calloc(1, sizeof(*t));
        if (!t || pthread_setspecific(tls_key, t) != 0) {
            free(t);
            return NULL;
        }
    }
    gen = __atomic_load_n(&proto_gen, __ATOMIC_ACQUIRE);
    if (!t->scratch || t->gen != gen) {
        hs_scratch_t *fresh = NULL;
        pthread_mutex_lock(&proto_lock);
        gen = proto_gen;
        if (proto && hs_clone_scratch(proto, &fresh) != HS_SUCCESS)
            fresh = NULL;
        pthread_mutex_unlock(&proto_lock);
        if (!fresh)
            return NULL;
        if (t->scratch)
            hs_free_scratch(t->scratch);
        t->scratch = fresh;
        t->gen = gen;
    }
    return t->scratch;
}

/* ---- expressions ------------------------------------------------------------- */

typedef struct {
    const char **expr;
    unsigned *flags, *ids;
    int *pat;           /* expression -> pattern index */
    int n;
} exprs_t;

/* A phrase as a regex: every byte escaped. */
static const char *phrase_expr(apr_pool_t *p, bw_str_t s)
{
    char *o = apr_palloc(p, s.len * 4 + 1), *q = o;
    size_t i;
    static const char hex[] = "0123456789abcdef";
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        *q++ = '\\';
        *q++ = 'x';
        *q++ = hex[c >> 4];
        *q++ = hex[c & 15];
    }
    *q = '\0';
    return o;
}

/* The kind Vectorscan's parser allows for a regex. */
static int classify_regex(const mx_pat_t *p)
{
    hs_expr_info_t *info = NULL;
    hs_compile_error_t *ce = NULL;
    if (memchr(p->text.data, '\0', p->text.len))
        return MX_ALWAYS;
    if (hs_expression_info(p->text.data, MX_BASE_FLAGS, &info, &ce) == HS_SUCCESS) {
        free(info);
        return memchr(p->text.data, '$', p->text.len) ? MX_MAYBE | 0x10 : MX_EXACT;
    }
    hs_free_compile_error(ce);
    ce = NULL;
    if (hs_expression_info(p->text.data, MX_BASE_FLAGS | HS_FLAG_PREFILTER, &info, &ce)
        == HS_SUCCESS) {
        free(info);
        return MX_MAYBE;
    }
    hs_free_compile_error(ce);
    return MX_ALWAYS;
}

/* Expressions for every pattern whose bit is not always; regexes compiled
 * exactly carry 0x10 in mode when their hits are only maybe ('$'). */
static void build_exprs(bw_matcher_t *m, const unsigned char *mode, exprs_t *e)
{
    const mx_pat_t *pats = (const mx_pat_t *)m->pats->elts;
    int i, n = m->pats->nelts;
    e->expr = apr_palloc(m->pool, sizeof(char *) * (size_t)(n + 1));
    e->flags = apr_palloc(m->pool, sizeof(unsigned) * (size_t)(n + 1));
    e->ids = apr_palloc(m->pool, sizeof(unsigned) * (size_t)(n + 1));
    e->pat = apr_palloc(m->pool, sizeof(int) * (size_t)(n + 1));
    e->n = 0;
    for (i = 0; i < n; i++) {
        const mx_pat_t *p = &pats[i];
        int k = mode[i] & 0x0f;
        if (k == MX_ALWAYS)
            continue;
        e->expr[e->n] = p->kind == MX_REGEX ? p->text.data : phrase_expr(m->pool, p->text);
        e->flags[e->n] = MX_BASE_FLAGS | (p->kind == MX_PHRASE && p->nocase ? HS_FLAG_CASELESS : 0)
                       | (k == MX_MAYBE && !(mode[i] & 0x10) ? HS_FLAG_PREFILTER : 0);
        e->ids[e->n] = (unsigned)p->bit;
        e->pat[e->n] = i;
        e->n++;
    }
}

/* ---- cache -------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *s = data;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    return h;
}

/* Everything the database depends on, hashed twice with different seeds. */
static const char *cache_key(apr_pool_t *p, const bw_matcher_t *m)
{
    const mx_pat_t *pats = (const mx_pat_t *)m->pats->elts;
    uint64_t h[2] = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL };
    int i, k;
    const char *ver = hs_version();
    for (k = 0; k < 2; k++) {
        h[k] = fnv(h[k], ver, strlen(ver) + 1);
        h[k] = fnv(h[k], MX_CACHE_MAGIC, sizeof(MX_CACHE_MAGIC));
        h[k] = fnv(h[k], &runtime()->target.cpu_features, sizeof(runtime()->target.cpu_features));
        for (i = 0; i < m->pats->nelts; i++) {
            int meta[3];
            meta[0] = pats[i].kind;
            meta[1] = pats[i].bit;
            meta[2] = pats[i].nocase;
            h[k] = fnv(h[k], meta, sizeof(meta));
            h[k] = fnv(h[k], &pats[i].text.len, sizeof(size_t));
            h[k] = fnv(h[k], pats[i].text.data, pats[i].text.len);
        }
    }
    {
        static const char hex[] = "0123456789abcdef";
        char *out = apr_palloc(p, 33);
        for (k = 0; k < 32; k++)
            out[k] = hex[(h[k / 16] >> (60 - 4 * (k % 16))) & 15];
        out[32] = '\0';
        return out;
    }
}

/* A cache file: the magic, the 32-digit key (the file name says it too, but
 * the content is what is trusted), one kind byte per pattern, the
 * serialized database. */
static int cache_load(bw_matcher_t *m, const char *path, const char *key, unsigned char *mode,
                      hs_database_t **db)
{
    apr_file_t *f;
    apr_finfo_t fi;
    char *buf;
    apr_size_t n;
    int ok;
    size_t np = (size_t)m->pats->nelts, head = sizeof(MX_CACHE_MAGIC) - 1 + 32;
    if (apr_file_open(&f, path, APR_READ | APR_BINARY, 0, m->pool) != APR_SUCCESS)
        return 0;
    if (apr_file_info_get(&fi, APR_FINFO_SIZE, f) != APR_SUCCESS
        || (size_t)fi.size <= head + np) {
        apr_file_close(f);
        return 0;
    }
    n = (apr_size_t)fi.size;
    /* the file's bytes are needed only until the database is rebuilt from
     * them: malloc'd and freed, not kept in the program's pool for its life
     * (as large as the database itself) */
    buf = malloc(n);
    if (!buf || apr_file_read_full(f, buf, n, &n) != APR_SUCCESS || n != (apr_size_t)fi.size
        || memcmp(buf, MX_CACHE_MAGIC, sizeof(MX_CACHE_MAGIC) - 1) != 0
        || memcmp(buf + sizeof(MX_CACHE_MAGIC) - 1, key, 32) != 0) {
        free(buf);
        apr_file_close(f);
        return 0;
    }
    apr_file_close(f);
    memcpy(mode, buf + head, np);
    ok = hs_deserialize_database(buf + head + np, n - head - np, db) == HS_SUCCESS;
    free(buf);
    return ok;
}

/* Write to a temporary name, then rename: readers never see half a file. */
static void cache_store(bw_matcher_t *m, const char *path, const char *key,
                        const unsigned char *mode, const hs_database_t *db)
{
    char *bytes = NULL, *tmp;
    size_t len = 0;
    apr_file_t *f;
    apr_size_t w;
    int ok;
    if (hs_serialize_database(db, &bytes, &len) != HS_SUCCESS)
        return;
    tmp = apr_psprintf(m->pool, "%s.%ld.tmp", path, (long)getpid());
    ok = apr_file_open(&f, tmp, APR_WRITE | APR_CREATE | APR_TRUNCATE | APR_BINARY,
                       APR_FPROT_OS_DEFAULT, m->pool) == APR_SUCCESS;
    if (ok) {
        ok = apr_file_write_full(f, MX_CACHE_MAGIC, sizeof(MX_CACHE_MAGIC) - 1, &w) == APR_SUCCESS
          && apr_file_write_full(f, key, 32, &w) == APR_SUCCESS
          && apr_file_write_full(f, mode, (apr_size_t)m->pats->nelts, &w) == APR_SUCCESS
          && apr_file_write_full(f, bytes, len, &w) == APR_SUCCESS;
        ok = apr_file_close(f) == APR_SUCCESS && ok;
        if (!ok || apr_file_rename(tmp, path, m->pool) != APR_SUCCESS)
            apr_file_remove(tmp, m->pool);
    }
    free(bytes);
}

/* ---- compile ------------------------------------------------------------------- */

static apr_status_t free_db(void *data)
{
    hs_impl_t *im = data;
    if (im->db)
        hs_free_database(im->db);
    im->db = NULL;
    return APR_SUCCESS;
}

/* Compile; an expression the database refuses is demoted (exact ->
 * prefilter -> left out) and the rest tried again. */
static hs_database_t *compile_db(bw_matcher_t *m, unsigned char *mode, const char **warning)
{
    int tries;
    for (tries = 0; tries <= 2 * m->pats->nelts + 1; tries++) {
        exprs_t e;
        hs_database_t *db = NULL;
        hs_compile_error_t *ce = NULL;
        build_exprs(m, mode, &e);
        if (!e.n)
            return NULL;
        if (hs_compile_multi(e.expr, e.flags, e.ids, (unsigned)e.n, HS_MODE_BLOCK, &runtime()->target,
                             &db, &ce) == HS_SUCCESS)
            return db;
        if (ce->expression < 0 || ce->expression >= e.n) {
            *warning = apr_psprintf(m->pool, "multi-pattern database not compiled (%s): "
                                    "operators run one by one", ce->message);
            hs_free_compile_error(ce);
            memset(mode, MX_ALWAYS, (size_t)m->pats->nelts);
            return NULL;
        }
        {
            int i = e.pat[ce->expression];
            int k = mode[i] & 0x0f;
            mode[i] = (unsigned char)(k == MX_EXACT || (mode[i] & 0x10) ? MX_MAYBE : MX_ALWAYS);
        }
        hs_free_compile_error(ce);
    }
    memset(mode, MX_ALWAYS, (size_t)m->pats->nelts);
    return NULL;
}

void bw_mx_compile(bw_matcher_t *m, const char *cache_dir, const char **warning)
{
    const mx_pat_t *pats = (const mx_pat_t *)m->pats->elts;
    unsigned char *mode = apr_pcalloc(m->pool, (size_t)m->pats->nelts + 1);
    hs_impl_t *im = apr_pcalloc(m->pool, sizeof(*im));
    const char *path = NULL, *key = NULL;
    int i;

    m->impl = im;
    apr_pool_cleanup_register(m->pool, im, free_db, apr_pool_cleanup_null);
    if (cache_dir && *cache_dir) {
        key = cache_key(m->pool, m);
        path = apr_psprintf(m->pool, "%s/bulwark-%s.hsdb", cache_dir, key);
    }
    if (path && cache_load(m, path, key, mode, &im->db)) {
        m->info.from_cache = 1;
        /* used: bw_matcher_cache_prune keeps it */
        apr_file_mtime_set(path, apr_time_now(), m->pool);
    } else {
        for (i = 0; i < m->pats->nelts; i++)
            mode[i] = (unsigned char)(pats[i].kind == MX_PHRASE ? MX_EXACT : classify_regex(&pats[i]));
        im->db = compile_db(m, mode, warning);
        if (im->db && path)
            cache_store(m, path, key, mode, im->db);
    }
    if (im->db && !proto_grow(im->db)) {
        *warning = "no scratch space for the multi-pattern database: operators run one by one";
        hs_free_database(im->db);
        im->db = NULL;
    }
    if (im->db)
        hs_database_size(im->db, &m->info.db_bytes);
    /* a bit is as weak as its weakest pattern (a @pm bit has many) */
    memset(m->kind, MX_EXACT, (size_t)m->nbits);
    for (i = 0; i < m->pats->nelts; i++) {
        int k = im->db ? (mode[i] & 0x10 ? MX_MAYBE : mode[i] & 0x0f) : MX_ALWAYS;
        if (k > m->kind[pats[i].bit])
            m->kind[pats[i].bit] = (unsigned char)k;
    }
}

/* ---- scan ---------------------------------------------------------------------- */


static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ctx)
{
    uint64_t *hits = ctx;
    hits[id / 64] |= (uint64_t)1 << (id % 64);
    return 0;
}

int bw_mx_scan(const bw_matcher_t *m, bw_str_t value, uint64_t *hits)
{
    const hs_impl_t *im = m->impl;
    hs_scratch_t *s;
    if (!im || !im->db)
        return 1;
    if (value.len > 0xffffffffu || !(s = thread_scratch()))
        return 0;
    return runtime()->scan(im->db, value.data ? value.data : "", (unsigned int)value.len, 0, s,
                           on_match, hits) == HS_SUCCESS;
}

const char *bw_matcher_engine(void)
{
    return runtime()->name;
}
