/*
 * The part of the matcher both implementations share: collecting patterns
 * as bits, the exact and always sets, scanning a value into a bit vector.
 */
#include <string.h>
#include <apr_time.h>
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
