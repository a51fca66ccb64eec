/*
 * The part of the matcher both implementations share: collecting patterns
 * as bits, the exact and always sets, scanning a value into a bit vector;
 * pruning the cache directory the Vectorscan matcher writes.
 */
#include <string.h>
#include <pthread.h>
#include <apr_time.h>
#include <apr_file_io.h>
#include <apr_hash.h>
#include "matcher/matcher_int.h"

bw_matcher_t *bw_matcher_create(apr_pool_t *pool)
{
    bw_matcher_t *m = apr_pcalloc(pool, sizeof(*m));
    m->pool = pool;
    m->pats = apr_array_make(pool, 16, sizeof(mx_pat_t));
    return m;
}

static void add(bw_matcher_t *m, int kind, int bit, bw_str_t text, int nocase)
{
    mx_pat_t *p = apr_array_push(m->pats);
    p->kind = kind;
    p->bit = bit;
    p->text = bw_str_n(apr_pmemdup(m->pool, text.data ? text.data : "", text.len + 1), text.len);
    ((char *)p->text.data)[text.len] = '\0';
    p->nocase = nocase;
}

int bw_matcher_add_regex_as(bw_matcher_t *m, const char *re, size_t len, int bit)
{
    if (m->compiled || bit < 0)
        return -1;
    add(m, MX_REGEX, bit, bw_str_n(re, len), 0);
    if (bit >= m->nbits)
        m->nbits = bit + 1;
    return bit;
}

int bw_matcher_add_phrases_as(bw_matcher_t *m, const bw_ac_t *phrases, int bit)
{
    size_t i, n = bw_ac_count(phrases);
    if (m->compiled || bit < 0)
        return -1;
    for (i = 0; i < n; i++)
        add(m, MX_PHRASE, bit, bw_ac_pattern(phrases, i), bw_ac_nocase(phrases));
    if (bit >= m->nbits)
        m->nbits = bit + 1;
    return bit;
}

int bw_matcher_add_literal_as(bw_matcher_t *m, bw_str_t lit, int nocase, int bit)
{
    if (m->compiled || bit < 0)
        return -1;
    add(m, MX_PHRASE, bit, lit, nocase);
    if (bit >= m->nbits)
        m->nbits = bit + 1;
    return bit;
}

int bw_matcher_add_regex(bw_matcher_t *m, const char *re, size_t len)
{
    return bw_matcher_add_regex_as(m, re, len, m->nbits);
}

int bw_matcher_add_phrases(bw_matcher_t *m, const bw_ac_t *phrases)
{
    return bw_matcher_add_phrases_as(m, phrases, m->nbits);
}

void bw_matcher_compile(bw_matcher_t *m, const char *cache_dir, const char **warning)
{
    apr_time_t t0 = apr_time_now();
    int b;
    if (warning)
        *warning = NULL;
    if (m->compiled)
        return;
    m->compiled = 1;
    m->nwords = m->nbits ? (m->nbits + 63) / 64 : 1;
    /* a bit no pattern was added for (bits are the caller's) never hits */
    m->kind = apr_pcalloc(m->pool, (size_t)m->nbits + 1);
    m->exact = apr_pcalloc(m->pool, sizeof(uint64_t) * (size_t)m->nwords);
    m->always = apr_pcalloc(m->pool, sizeof(uint64_t) * (size_t)m->nwords);
    if (m->nbits)
        bw_mx_compile(m, cache_dir, warning);
    for (b = 0; b < m->nbits; b++) {
        uint64_t bit = (uint64_t)1 << (b % 64);
        if (m->kind[b] == MX_EXACT) {
            m->exact[b / 64] |= bit;
            m->info.exact++;
        } else if (m->kind[b] == MX_MAYBE) {
            m->info.maybe++;
        } else {
            m->always[b / 64] |= bit;
            m->info.always++;
        }
    }
    m->info.compile_ms = (double)(apr_time_now() - t0) / 1000.0;
}

int bw_matcher_bits(const bw_matcher_t *m)
{
    return m->nbits;
}

int bw_matcher_words(const bw_matcher_t *m)
{
    return m->nwords;
}

const uint64_t *bw_matcher_exact(const bw_matcher_t *m)
{
    return m->exact;
}

const uint64_t *bw_matcher_always(const bw_matcher_t *m)
{
    return m->always;
}

int bw_matcher_scan(const bw_matcher_t *m, bw_str_t value, uint64_t *hits)
{
    int w, ok = m->nbits ? bw_mx_scan(m, value, hits) : 1;
    for (w = 0; w < m->nwords; w++)
        hits[w] |= ok ? m->always[w] : ~(uint64_t)0;
    return ok;
}

void bw_matcher_info(const bw_matcher_t *m, bw_matcher_info_t *info)
{
    *info = m->info;
}

/* ---- the cache directory ---------------------------------------------------- */

static pthread_mutex_t prune_lock = PTHREAD_MUTEX_INITIALIZER;
/* directories this process pruned and when: a fixed table, no allocation that
 * outlives the call (a process has one or two cache directories) */
#define PRUNED_DIRS 16
static struct { uint64_t key; apr_time_t last; } pruned[PRUNED_DIRS];

static uint64_t dir_key(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h | 1;                               /* 0 marks a free entry */
}

void bw_matcher_cache_prune(apr_pool_t *pool, const char *cache_dir, apr_interval_time_t max_age)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_time_t now = apr_time_now();
    uint64_t key;
    int due = 1, i;
    if (!cache_dir || !*cache_dir)
        return;
    key = dir_key(cache_dir);
    /* every program built calls this; a directory is read once an hour */
    pthread_mutex_lock(&prune_lock);
    for (i = 0; i < PRUNED_DIRS; i++) {
        if (pruned[i].key == key) {
            due = now - pruned[i].last > apr_time_from_sec(3600);
            break;
        }
        if (!pruned[i].key) {
            pruned[i].key = key;
            break;
        }
    }
    if (due && i < PRUNED_DIRS)
        pruned[i].last = now;
    pthread_mutex_unlock(&prune_lock);
    if (!due || apr_dir_open(&d, cache_dir, pool) != APR_SUCCESS)
        return;
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_MTIME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        size_t n = fi.name ? strlen(fi.name) : 0;
        int db = n > 13 && !strncmp(fi.name, "bulwark-", 8) && !strcmp(fi.name + n - 5, ".hsdb");
        int tmp = n > 12 && !strncmp(fi.name, "bulwark-", 8) && !strcmp(fi.name + n - 4, ".tmp");
        if (fi.filetype != APR_REG || !(db || tmp))
            continue;
        /* a temporary file older than an hour belongs to no live writer */
        if (now - fi.mtime > (db ? max_age : apr_time_from_sec(3600)))
            apr_file_remove(apr_pstrcat(pool, cache_dir, "/", fi.name, NULL), pool);
    }
    apr_dir_close(d);
}
