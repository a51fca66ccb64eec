/*
 * The @rx literal prefilter at run time: per phase, the bits of a group for
 * the values of one target, computed once (program/bw_rxfilter.c builds the
 * groups).
 */
#include <string.h>
#include "run/bw_run.h"
#include "operators/bw_acmatch.h"

/* Key of one computed bitset: variable, selector, group, phase. */
typedef struct {
    const bw_var_def_t *var;
    const char *sel;
    size_t sel_len;
    const bw_pf_group_t *g;
    int phase;
} pf_key_t;

static const uint64_t *group_bits(bw_tx_t *tx, const bw_target_t *t, const bw_pf_group_t *g)
{
    pf_key_t key, *kp;
    bw_str_t sel = t->selector_re ? bw_str_n("", 0) : t->selector;
    apr_array_header_t *vals;
    uint64_t *bits;
    int i;

    memset(&key, 0, sizeof(key));
    key.var = t->var;
    key.sel = sel.data;
    key.sel_len = sel.len;
    key.g = g;
    key.phase = tx->cur_phase;
    bits = apr_hash_get(tx->pf_cache, &key, sizeof(key));
    if (bits)
        return bits;
    bits = apr_pcalloc(tx->pool, sizeof(uint64_t) * (size_t)((g->nbits + 63) / 64));
    kp = apr_pmemdup(tx->pool, &key, sizeof(key));
    apr_hash_set(tx->pf_cache, kp, sizeof(*kp), bits);
    vals = apr_array_make(tx->pool, 16, sizeof(bw_varval_t));
    bw_var_generate(tx, t->var, sel, vals);
    for (i = 0; i < vals->nelts; i++) {
        bw_str_t v = bw_tfn_apply_cached(tx, g->nodes, g->tfns, g->ntfns, ((bw_varval_t *)vals->elts)[i].value);
        bw_ac_iter_t it;
        bw_ac_match_t m;
        bw_ac_iter_init(&it, g->ac, v);
        while (bw_ac_next(&it, &m))
            bits[m.id / 64] |= (uint64_t)1 << (m.id % 64);
    }
    return bits;
}

/* 0: the rule cannot match this transaction's current values; 1: maybe. */
int bw_rxfilter_maybe(bw_tx_t *tx, const bw_rule_t *r)
{
    const bw_target_t *t = (const bw_target_t *)r->targets->elts;
    const bw_pf_group_t *g = r->pf_group;
    int i;
    if (!g || tx->prog->pf_disabled)
        return 1;
    if (!r->pf_stable)
        return 1;
    for (i = 0; i < r->targets->nelts; i++) {
        const uint64_t *bits;
        if (t[i].is_exclusion)
            continue;
        bits = group_bits(tx, &t[i], g);
        if (bits[r->pf_bit / 64] & ((uint64_t)1 << (r->pf_bit % 64)))
            return 1;
    }
    return 0;
}

/* The pf cache's keys are small structs of pointers: a cheap hash will do. */
unsigned int bw_rxfilter_key_hash(const char *key, apr_ssize_t *klen)
{
    const pf_key_t *k = (const pf_key_t *)key;
    uint64_t h = (uint64_t)(uintptr_t)k->var * 0x9e3779b97f4a7c15ULL;
    h ^= (uint64_t)(uintptr_t)k->g + (h << 6) + (h >> 2);
    h ^= (uint64_t)(uintptr_t)k->sel + (uint64_t)k->sel_len * 31 + (uint64_t)k->phase;
    return (unsigned int)(h ^ (h >> 32));
}

