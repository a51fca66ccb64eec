/*
 * The matcher without Vectorscan: the literal prefilter. Each regex gives
 * a set of literals one of which every match contains
 * (apache2/prefilter); its bit is set when a literal occurs (maybe). A
 * regex without such a set is always. Phrases go into an automaton of
 * their own case handling and are exact. Two Aho-Corasick automata, one
 * case-sensitive and one ASCII case-insensitive, so a value is read twice
 * at most.
 */
#include <string.h>
#include "matcher/matcher_int.h"
#include "prefilter/bw_prefilter.h"

/* Shortest literal worth a lookup: one-byte literals hit almost every value. */
#define MX_MIN_LITERAL 2

typedef struct {
    bw_ac_t *ac[2];     /* [0] case-sensitive, [1] case-insensitive */
    int used[2];
} ac_impl_t;

static void add_regex(bw_matcher_t *m, ac_impl_t *im, const mx_pat_t *p, unsigned char *kind)
{
    apr_array_header_t *lits = NULL;
    int nocase = 0, i;
    if (!bw_prefilter_extract(m->pool, p->text.data, p->text.len, 0, MX_MIN_LITERAL, &lits,
                              &nocase)) {
        kind[p->bit] = MX_ALWAYS;
        return;
    }
    for (i = 0; i < lits->nelts; i++)
        bw_ac_add(im->ac[nocase ? 1 : 0], ((bw_str_t *)lits->elts)[i], p->bit);
    im->used[nocase ? 1 : 0] = 1;
    if (kind[p->bit] < MX_MAYBE)
        kind[p->bit] = MX_MAYBE;
}

void bw_mx_compile(bw_matcher_t *m, const char *cache_dir, const char **warning)
{
    const mx_pat_t *pats = (const mx_pat_t *)m->pats->elts;
    ac_impl_t *im = apr_pcalloc(m->pool, sizeof(*im));
    int i;

    im->ac[0] = bw_ac_create(m->pool, 0);
    im->ac[1] = bw_ac_create(m->pool, 1);
    memset(m->kind, MX_EXACT, (size_t)m->nbits);
    for (i = 0; i < m->pats->nelts; i++) {
        const mx_pat_t *p = &pats[i];
        if (m->kind[p->bit] == MX_ALWAYS || (p->traits & MX_T_DECIDED))
            continue;
        if (p->kind == MX_REGEX) {
            add_regex(m, im, p, m->kind);
        } else if (p->text.len == 0) {
            m->kind[p->bit] = MX_ALWAYS;   /* an automaton takes no empty phrase */
        } else {
            bw_ac_add(im->ac[p->nocase ? 1 : 0], p->text, p->bit);
            im->used[p->nocase ? 1 : 0] = 1;
        }
    }
    bw_ac_compile(im->ac[0]);
    bw_ac_compile(im->ac[1]);
    m->impl = im;
}

int bw_mx_scan(const bw_matcher_t *m, bw_str_t value, uint64_t *hits, int which)
{
    const ac_impl_t *im = m->impl;
    int k;
    if (which == MX_SCAN_WHOLE)   /* nothing is scanned joined here */
        return 1;
    for (k = 0; k < 2; k++) {
        bw_ac_iter_t it;
        bw_ac_match_t mt;
        if (!im->used[k])
            continue;
        bw_ac_iter_init(&it, im->ac[k], value);
        while (bw_ac_next(&it, &mt))
            hits[mt.id / 64] |= (uint64_t)1 << (mt.id % 64);
    }
    return 1;
}

/* Automata take no joined values (a literal could span two): the values
 * are scanned one by one. */
int bw_mx_joins(const bw_matcher_t *m)
{
    return 0;
}

int bw_mx_has_whole(const bw_matcher_t *m)
{
    return 0;
}

int bw_mx_scan_joined(const bw_matcher_t *m, const char *data, size_t len, mx_joined_fn f,
                      void *ctx)
{
    return -1;
}

const char *bw_matcher_engine(void)
{
    return "literal prefilter";
}

void bw_matcher_release(void)
{
}
