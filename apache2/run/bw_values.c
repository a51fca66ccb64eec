/*
 * The values a phase looks at, built once.
 *
 * A value source (program/bw_compile.c) is a variable whose values cannot
 * change inside a phase, with a literal selector or none. The first rule of
 * a phase that needs a source builds its values; every later rule reads the
 * same array. For each chain node a rule needs, the source's values are
 * transformed once into an array beside it (a node's array is its parent's
 * transformed by one more step; a transformation that changes nothing
 * returns its input, so benign values are not copied). For each scan unit,
 * the transformed values are scanned once by the unit's matcher into one
 * bit vector per value, plus the union of them all, so a rule whose bit is
 * clear in the union is done without touching a value.
 *
 * A state is valid for one (phase, data generation): a ctl: that changes
 * what a variable yields (forceRequestBodyVariable…) bumps the generation.
 */
#include <string.h>
#include "run/bw_run.h"

void bw_src_reset(bw_tx_t *tx)
{
    tx->src = tx->prog->nsrc
            ? apr_pcalloc(tx->pool, sizeof(bw_src_state_t) * (size_t)tx->prog->nsrc) : NULL;
    bw_tfn_cache_reset(tx);
}

bw_src_state_t *bw_src_get(bw_tx_t *tx, int k)
{
    bw_src_state_t *S = &tx->src[k];
    const bw_source_t *src = &tx->prog->srcs[k];
    apr_array_header_t *tmp = tx->vals_tmp;
    int i;
    if (S->phase == tx->cur_phase && S->gen == tx->data_gen && S->vals)
        return S;
    memset(S, 0, sizeof(*S));
    S->phase = tx->cur_phase;
    S->gen = tx->data_gen;
    tmp->nelts = 0;
    bw_var_generate(tx, src->var, src->sel, tmp);
    S->n = tmp->nelts;
    S->vals = apr_pmemdup(tx->pool, tmp->elts, sizeof(bw_varval_t) * (size_t)(S->n + 1));
    S->raw = apr_palloc(tx->pool, sizeof(bw_str_t) * (size_t)(S->n + 1));
    for (i = 0; i < S->n; i++)
        S->raw[i] = S->vals[i].value;
    return S;
}

const bw_str_t *bw_src_tv(bw_tx_t *tx, bw_src_state_t *S, int node)
{
    const bw_pnode_t *pn;
    const bw_str_t *in;
    bw_str_t *out;
    int i;
    if (node < 0)
        return S->raw;
    if (!S->tv)
        S->tv = apr_pcalloc(tx->pool, sizeof(bw_str_t *) * (size_t)tx->prog->nnodes);
    if (S->tv[node])
        return S->tv[node];
    pn = &tx->prog->nodes[node];
    in = bw_src_tv(tx, S, pn->parent);
    out = apr_palloc(tx->pool, sizeof(bw_str_t) * (size_t)(S->n + 1));
    for (i = 0; i < S->n; i++)
        pn->tfn->fn(&tx->tfn_env, tx->pool, in[i], &out[i]);
    S->tv[node] = out;
    return out;
}

const bw_hits_t *bw_src_hits(bw_tx_t *tx, bw_src_state_t *S, int unit)
{
    const bw_unit_t *u = &tx->prog->units[unit];
    const bw_str_t *tv;
    bw_hits_t *h;
    int i, w, nw = u->nwords;
    if (!S->hits)
        S->hits = apr_pcalloc(tx->pool, sizeof(bw_hits_t *) * (size_t)tx->prog->nunits);
    if (S->hits[unit])
        return S->hits[unit];
    tv = bw_src_tv(tx, S, u->node);
    h = apr_pcalloc(tx->pool, sizeof(*h));
    h->bits = apr_pcalloc(tx->pool, sizeof(uint64_t) * (size_t)nw * (size_t)(S->n + 1));
    h->any = apr_pcalloc(tx->pool, sizeof(uint64_t) * (size_t)nw);
    for (i = 0; i < S->n; i++) {
        uint64_t *b = &h->bits[(size_t)i * (size_t)nw];
        if (i && tv[i].data == tv[i - 1].data && tv[i].len == tv[i - 1].len) {
            memcpy(b, b - nw, sizeof(uint64_t) * (size_t)nw);
        } else {
            if (!bw_matcher_scan(u->m, tv[i], b))
                h->inexact = 1;
            tx->stats.scans++;
            tx->stats.bytes_scanned += tv[i].len;
        }
        for (w = 0; w < nw; w++)
            h->any[w] |= b[w];
    }
    S->hits[unit] = h;
    return h;
}
