/*
 * The matcher on Vectorscan (Hyperscan's API): the patterns of a matcher
 * in block-mode databases, scanned once per value or once for many values
 * joined (matcher.c, bw_matcher_scan_many).
 *
 * Compile. Each regex is classified by Vectorscan's own parser: compiled
 * exactly when it can, else in prefilter mode (a superset: maybe), else
 * left out (always: the operator runs). Phrases are escaped byte by byte
 * and compiled as literals (exact). Every expression has SINGLEMATCH (one
 * report per pattern and scan is all a bit needs), DOTALL (as @rx
 * compiles), ALLOWEMPTY (a regex that matches the empty string matches
 * every value, as PCRE2 does). Two databases: the patterns that may be
 * joined, each regex's ^ and $ also matching the byte between joined
 * values (matcher.c: the hit of such a regex is exact only in a value
 * with neither that byte nor a newline, before which Vectorscan's $ also
 * matches), and those scanned value by value (matcher.c, MX_T_WHOLE).
 * Universal regexes (^.*$) are not compiled at all (matcher.c sets their
 * bits). When a database as a whole refuses an expression, that
 * expression is demoted and the rest compiled again.
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
#define MX_CACHE_MAGIC "BWHSDB4\n"

/* The two databases: patterns that may be joined, and MX_T_WHOLE ones. */
enum { DB_JOINED, DB_WHOLE, DB_N };

typedef struct {
    hs_database_t *db[DB_N];
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
static int tls_made;            /* tls_key exists (under proto_lock) */

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

void bw_matcher_release(void)
{
    pthread_mutex_lock(&proto_lock);
    if (proto)
        hs_free_scratch(proto);
    proto = NULL;
    proto_gen++;
    if (tls_made) {
        /* other threads have ended (the last pool of the code going);
         * this one's copy is freed here, the key with it */
        tls_scratch_t *t = pthread_getspecific(tls_key);
        if (t)
            tls_free(t);
        pthread_key_delete(tls_key);
        tls_made = 0;
    }
    pthread_mutex_unlock(&proto_lock);
}

static hs_scratch_t *thread_scratch(void)
{
    tls_scratch_t *t;
    unsigned gen;
    if (!__atomic_load_n(&tls_made, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&proto_lock);
        if (!tls_made && pthread_key_create(&tls_key, tls_free) == 0)
            __atomic_store_n(&tls_made, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&proto_lock);
        if (!tls_made)
            return NULL;
    }
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

/* The kind Vectorscan's parser allows for a regex, in the form its
 * database holds (joined: with anchors that match the separator). */
static int classify_regex(const mx_pat_t *p)
{
    hs_expr_info_t *info = NULL;
    hs_compile_error_t *ce = NULL;
    bw_str_t t = p->traits & MX_T_WHOLE ? p->text : p->jtext;
    if (memchr(t.data, '\0', t.len))
        return MX_ALWAYS;
    if (hs_expression_info(t.data, MX_BASE_FLAGS, &info, &ce) == HS_SUCCESS) {
        free(info);
        return MX_EXACT;
    }
    hs_free_compile_error(ce);
    ce = NULL;
    if (hs_expression_info(t.data, MX_BASE_FLAGS | HS_FLAG_PREFILTER, &info, &ce) == HS_SUCCESS) {
        free(info);
        return MX_MAYBE;
    }
    hs_free_compile_error(ce);
    return MX_ALWAYS;
}

/* Does pattern p go into database `which`? */
static int in_db(const mx_pat_t *p, int which)
{
    if (p->traits & MX_T_DECIDED)
        return 0;
    return (which == DB_WHOLE) == ((p->traits & MX_T_WHOLE) != 0);
}

/* Expressions for every pattern of database `which` whose bit is not always. */
static void build_exprs(bw_matcher_t *m, const unsigned char *mode, int which, exprs_t *e)
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
        int k = mode[i];
        if (k == MX_ALWAYS || !in_db(p, which))
            continue;
        e->expr[e->n] = p->kind == MX_PHRASE ? phrase_expr(m->pool, p->text)
                      : which == DB_JOINED ? p->jtext.data : p->text.data;
        e->flags[e->n] = MX_BASE_FLAGS | (p->kind == MX_PHRASE && p->nocase ? HS_FLAG_CASELESS : 0)
                       | (k == MX_MAYBE ? HS_FLAG_PREFILTER : 0);
        /* a literal matcher's joined scans want every occurrence */
        if (m->literal && which == DB_JOINED)
            e->flags[e->n] &= ~(unsigned)HS_FLAG_SINGLEMATCH;
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

/* Everything the databases depend on, hashed twice with different seeds. */
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
            int meta[4];
            meta[0] = pats[i].kind;
            meta[1] = pats[i].bit;
            meta[2] = pats[i].nocase;
            meta[3] = (int)pats[i].traits;
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
 * the content is what is trusted), per pattern its traits and kind bytes,
 * then per database its serialized length (8 bytes, 0: none) and bytes. */
static int cache_load(bw_matcher_t *m, const char *path, const char *key, unsigned char *traits,
                      unsigned char *mode, hs_database_t **db)
{
    apr_file_t *f;
    apr_finfo_t fi;
    char *buf;
    apr_size_t n;
    int ok = 1, k;
    size_t np = (size_t)m->pats->nelts, head = sizeof(MX_CACHE_MAGIC) - 1 + 32, at;
    if (apr_file_open(&f, path, APR_READ | APR_BINARY, 0, m->pool) != APR_SUCCESS)
        return 0;
    if (apr_file_info_get(&fi, APR_FINFO_SIZE, f) != APR_SUCCESS
        || (size_t)fi.size < head + 2 * np + 8 * DB_N) {
        apr_file_close(f);
        return 0;
    }
    n = (apr_size_t)fi.size;
    /* the file's bytes are needed only until the databases are rebuilt
     * from them: malloc'd and freed, not kept in the program's pool for its
     * life (as large as the databases themselves) */
    buf = malloc(n);
    if (!buf || apr_file_read_full(f, buf, n, &n) != APR_SUCCESS || n != (apr_size_t)fi.size
        || memcmp(buf, MX_CACHE_MAGIC, sizeof(MX_CACHE_MAGIC) - 1) != 0
        || memcmp(buf + sizeof(MX_CACHE_MAGIC) - 1, key, 32) != 0) {
        free(buf);
        apr_file_close(f);
        return 0;
    }
    apr_file_close(f);
    memcpy(traits, buf + head, np);
    memcpy(mode, buf + head + np, np);
    at = head + 2 * np;
    for (k = 0; k < DB_N && ok; k++) {
        uint64_t len;
        memcpy(&len, buf + at, 8);
        at += 8;
        if (len > n - at) {
            ok = 0;
        } else if (len) {
            ok = hs_deserialize_database(buf + at, (size_t)len, &db[k]) == HS_SUCCESS;
            at += (size_t)len;
        }
    }
    free(buf);
    for (k = 0; !ok && k < DB_N; k++) {
        if (db[k])
            hs_free_database(db[k]);
        db[k] = NULL;
    }
    return ok;
}

/* Write to a temporary name, then rename: readers never see half a file. */
static void cache_store(bw_matcher_t *m, const char *path, const char *key,
                        const unsigned char *traits, const unsigned char *mode,
                        hs_database_t *const *db)
{
    char *bytes[DB_N] = { NULL }, *tmp;
    uint64_t len[DB_N] = { 0 };
    apr_file_t *f;
    apr_size_t w;
    int ok = 1, k;
    for (k = 0; k < DB_N && ok; k++) {
        size_t l = 0;
        if (db[k])
            ok = hs_serialize_database(db[k], &bytes[k], &l) == HS_SUCCESS;
        len[k] = l;
    }
    tmp = apr_psprintf(m->pool, "%s.%ld.tmp", path, (long)getpid());
    ok = ok && apr_file_open(&f, tmp, APR_WRITE | APR_CREATE | APR_TRUNCATE | APR_BINARY,
                             APR_FPROT_OS_DEFAULT, m->pool) == APR_SUCCESS;
    if (ok) {
        ok = apr_file_write_full(f, MX_CACHE_MAGIC, sizeof(MX_CACHE_MAGIC) - 1, &w) == APR_SUCCESS
          && apr_file_write_full(f, key, 32, &w) == APR_SUCCESS
          && apr_file_write_full(f, traits, (apr_size_t)m->pats->nelts, &w) == APR_SUCCESS
          && apr_file_write_full(f, mode, (apr_size_t)m->pats->nelts, &w) == APR_SUCCESS;
        for (k = 0; k < DB_N && ok; k++)
            ok = apr_file_write_full(f, &len[k], 8, &w) == APR_SUCCESS
              && (!len[k] || apr_file_write_full(f, bytes[k], (apr_size_t)len[k], &w) == APR_SUCCESS);
        ok = apr_file_close(f) == APR_SUCCESS && ok;
        if (!ok || apr_file_rename(tmp, path, m->pool) != APR_SUCCESS)
            apr_file_remove(tmp, m->pool);
    }
    for (k = 0; k < DB_N; k++)
        free(bytes[k]);
}

/* ---- compile ------------------------------------------------------------------- */

static apr_status_t free_db(void *data)
{
    hs_impl_t *im = data;
    int k;
    for (k = 0; k < DB_N; k++) {
        if (im->db[k])
            hs_free_database(im->db[k]);
        im->db[k] = NULL;
    }
    return APR_SUCCESS;
}

/* Compile database `which`; an expression it refuses is demoted (exact ->
 * prefilter -> left out) and the rest tried again. */
static hs_database_t *compile_db(bw_matcher_t *m, unsigned char *mode, int which,
                                 const char **warning)
{
    const mx_pat_t *pats = (const mx_pat_t *)m->pats->elts;
    int tries, i;
    for (tries = 0; tries <= 2 * m->pats->nelts + 1; tries++) {
        exprs_t e;
        hs_database_t *db = NULL;
        hs_compile_error_t *ce = NULL;
        build_exprs(m, mode, which, &e);
        if (!e.n)
            return NULL;
        if (hs_compile_multi(e.expr, e.flags, e.ids, (unsigned)e.n, HS_MODE_BLOCK, &runtime()->target,
                             &db, &ce) == HS_SUCCESS)
            return db;
        if (ce->expression < 0 || ce->expression >= e.n) {
            *warning = apr_psprintf(m->pool, "multi-pattern database not compiled (%s): "
                                    "operators run one by one", ce->message);
            hs_free_compile_error(ce);
            for (i = 0; i < m->pats->nelts; i++)
                if (in_db(&pats[i], which))
                    mode[i] = MX_ALWAYS;
            return NULL;
        }
        i = e.pat[ce->expression];
        mode[i] = (unsigned char)(mode[i] == MX_EXACT ? MX_MAYBE : MX_ALWAYS);
        hs_free_compile_error(ce);
    }
    for (i = 0; i < m->pats->nelts; i++)
        if (in_db(&pats[i], which))
            mode[i] = MX_ALWAYS;
    return NULL;
}

/* Every pattern that can be joined a phrase? Then joined scans report every
 * occurrence (a phrase without the separator byte cannot span two values). */
static void literal_mode(bw_matcher_t *m)
{
    const mx_pat_t *pats = (const mx_pat_t *)m->pats->elts;
    int i, any = 0;
    for (i = 0; i < m->pats->nelts; i++) {
        if (!in_db(&pats[i], DB_JOINED))
            continue;
        if (pats[i].kind != MX_PHRASE)
            return;
        any = 1;
    }
    m->literal = any;
}

void bw_mx_compile(bw_matcher_t *m, const char *cache_dir, const char **warning)
{
    mx_pat_t *pats = (mx_pat_t *)m->pats->elts;
    size_t np = (size_t)m->pats->nelts;
    unsigned char *mode = apr_pcalloc(m->pool, np + 1);
    unsigned char *traits = apr_pcalloc(m->pool, np + 1);
    hs_impl_t *im = apr_pcalloc(m->pool, sizeof(*im));
    const char *path = NULL, *key = NULL;
    size_t i;
    int k;

    m->impl = im;
    apr_pool_cleanup_register(m->pool, im, free_db, apr_pool_cleanup_null);
    if (cache_dir && *cache_dir) {
        key = cache_key(m->pool, m);
        path = apr_psprintf(m->pool, "%s/bulwark-%s.hsdb", cache_dir, key);
    }
    if (path && cache_load(m, path, key, traits, mode, im->db)) {
        m->info.from_cache = 1;
        /* used: bw_matcher_cache_prune keeps it */
        apr_file_mtime_set(path, apr_time_now(), m->pool);
        for (i = 0; i < np; i++)
            pats[i].traits = traits[i];
        literal_mode(m);
    } else {
        /* which regexes join badly is worth finding out once, not at each
         * start: it is kept in the cache with the databases */
        for (i = 0; i < np; i++) {
            if (pats[i].kind == MX_REGEX && !(pats[i].traits & (MX_T_WHOLE | MX_T_DECIDED))
                && bw_mx_joins_badly(&pats[i]))
                pats[i].traits |= MX_T_WHOLE;
            traits[i] = (unsigned char)pats[i].traits;
            mode[i] = (unsigned char)(pats[i].kind == MX_PHRASE ? MX_EXACT : classify_regex(&pats[i]));
        }
        literal_mode(m);
        for (k = 0; k < DB_N; k++)
            im->db[k] = compile_db(m, mode, k, warning);
        if (path && (im->db[DB_JOINED] || im->db[DB_WHOLE]))
            cache_store(m, path, key, traits, mode, im->db);
    }
    for (k = 0; k < DB_N; k++) {
        size_t bytes = 0;
        if (im->db[k] && !proto_grow(im->db[k])) {
            *warning = "no scratch space for the multi-pattern database: operators run one by one";
            hs_free_database(im->db[k]);
            im->db[k] = NULL;
        }
        if (im->db[k] && hs_database_size(im->db[k], &bytes) == HS_SUCCESS)
            m->info.db_bytes += bytes;
    }
    /* a bit is as weak as its weakest pattern (a @pm bit has many); a
     * pattern whose database is missing is always; universal and byte
     * patterns are in no database (matcher.c sets their bits) */
    memset(m->kind, MX_EXACT, (size_t)m->nbits);
    for (i = 0; i < np; i++) {
        int kd = pats[i].traits & MX_T_DECIDED ? MX_EXACT
               : im->db[pats[i].traits & MX_T_WHOLE ? DB_WHOLE : DB_JOINED] ? mode[i] : MX_ALWAYS;
        if (kd > m->kind[pats[i].bit])
            m->kind[pats[i].bit] = (unsigned char)kd;
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

typedef struct {
    mx_joined_fn f;
    void *ctx;
} joined_t;

static int on_joined(unsigned int id, unsigned long long from, unsigned long long to,
                     unsigned int flags, void *ctx)
{
    const joined_t *j = ctx;
    return j->f(j->ctx, (int)id, (size_t)to);
}

static int scan_db(const hs_database_t *db, const char *data, size_t len, match_event_handler f,
                   void *ctx)
{
    hs_scratch_t *s;
    hs_error_t rc;
    if (len > 0xffffffffu || !(s = thread_scratch()))
        return -1;
    rc = runtime()->scan(db, data ? data : "", (unsigned int)len, 0, s, f, ctx);
    return rc == HS_SUCCESS ? 0 : rc == HS_SCAN_TERMINATED ? 1 : -1;
}

int bw_mx_scan(const bw_matcher_t *m, bw_str_t value, uint64_t *hits, int which)
{
    const hs_impl_t *im = m->impl;
    int k;
    if (!im)
        return 1;
    for (k = 0; k < DB_N; k++) {
        if (!im->db[k] || (which == MX_SCAN_JOINED && k != DB_JOINED)
            || (which == MX_SCAN_WHOLE && k != DB_WHOLE))
            continue;
        if (scan_db(im->db[k], value.data, value.len, on_match, hits) < 0)
            return 0;
    }
    return 1;
}

int bw_mx_joins(const bw_matcher_t *m)
{
    const hs_impl_t *im = m->impl;
    return im && im->db[DB_JOINED];
}

int bw_mx_has_whole(const bw_matcher_t *m)
{
    const hs_impl_t *im = m->impl;
    return im && im->db[DB_WHOLE];
}

int bw_mx_scan_joined(const bw_matcher_t *m, const char *data, size_t len, mx_joined_fn f,
                      void *ctx)
{
    const hs_impl_t *im = m->impl;
    joined_t j;
    j.f = f;
    j.ctx = ctx;
    return scan_db(im->db[DB_JOINED], data, len, on_joined, &j);
}

const char *bw_matcher_engine(void)
{
    return runtime()->name;
}
