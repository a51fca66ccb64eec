/*
 * The values a phase looks at, built once.
 *
 * A value source (program/bw_compile.c) is a variable whose values cannot
 * change inside a phase, with a literal selector or none. The first rule of
 * a phase that needs a source builds its values; every later rule reads the
 * same array. For each chain node a rule needs, the source's values are
 * transformed once into an array beside it (a node's array is its parent's
 * transformed by one more step; a transformation is not even called when
 * the value has none of its trigger bytes, and one that changes nothing
 * returns its input, so benign values are not copied). Then the source's
 * scan plan (program/bw_scan.c): for each value, the distinct strings the
 * plan's chains make of it are scanned once each, and per chain the union
 * over all values is kept, so a rule whose bit is clear there is done
 * without touching a value.
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

/* The bytes each raw value contains, once per source and phase. */
static void present_of(bw_tx_t *tx, bw_src_state_t *S)
{
    int i;
    S->present = apr_palloc(tx->pool, sizeof(bw_byteset_t) * (size_t)(S->n + 1));
    for (i = 0; i < S->n; i++)
        bw_byteset_of(S->raw[i], &S->present[i]);
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
    if (!S->present)
        present_of(tx, S);
    for (i = 0; i < S->n; i++) {
        /* a transformation without a trigger byte in its input cannot
         * change it: most values go through most chains untouched */
        bw_byteset_t changed;
        const bw_byteset_t *ps = &S->present[i];
        if (!pn->tfn->always && (in[i].data != S->raw[i].data || in[i].len != S->raw[i].len)) {
            bw_byteset_of(in[i], &changed);
            ps = &changed;
        }
        if (bw_tfn_may_change(pn->tfn, ps))
            pn->tfn->fn(&tx->tfn_env, tx->pool, in[i], &out[i]);
        else
            out[i] = in[i];
    }
    S->tv[node] = out;
    return out;
}

/* What one distinct string of a value needs: the union over the slots that
 * made it of their matchers and gate bytes. */
typedef struct {
    bw_str_t str;
    unsigned need;
    uint64_t gate[4];
} dstr_t;

static int trigger_hit(const bw_plan_t *pl, const uint64_t *hv, const unsigned short *didx,
                       int n, int i, int j)
{
    int s;
    for (s = 0; s < pl->nslots; s++) {
        int b = pl->trigger_base + s;
        if (didx[(size_t)s * (size_t)n + (size_t)i] == j && (hv[b / 64] >> (b % 64) & 1))
            return 1;
    }
    return 0;
}

/* Scan one distinct string (program/bw_scan.c): the open and literal
 * matchers when a slot that made it has patterns there, the gated one when
 * it has a gate byte of those slots, the triggered one when the literal one
 * found a trigger of those slots. Trigger bits are cleared after. Returns 0
 * when a scan failed (its bits are all set: maybe). */
static int scan_string(bw_tx_t *tx, const bw_plan_t *pl, const dstr_t *d, const bw_byteset_t *ps,
                       uint64_t *hv, const unsigned short *didx, int n, int i, int j)
{
    int ok = 1, w;
    memset(hv, 0, sizeof(uint64_t) * (size_t)pl->nwords);
    if (d->need & (1u << BW_PM_OPEN))
        ok &= bw_matcher_scan(pl->m[BW_PM_OPEN], d->str, hv);
    if (d->need & (1u << BW_PM_LITS)) {
        ok &= bw_matcher_scan(pl->m[BW_PM_LITS], d->str, hv);
        if ((d->need & (1u << BW_PM_TRIGGERED)) && trigger_hit(pl, hv, didx, n, i, j))
            ok &= bw_matcher_scan(pl->m[BW_PM_TRIGGERED], d->str, hv);
        for (w = pl->trigger_base; w < pl->trigger_base + pl->nslots; w++)
            hv[w / 64] &= ~((uint64_t)1 << (w % 64));
    }
    if ((d->need & (1u << BW_PM_GATED))
        && ((ps->w[0] & d->gate[0]) | (ps->w[1] & d->gate[1]) | (ps->w[2] & d->gate[2])
            | (ps->w[3] & d->gate[3])))
        ok &= bw_matcher_scan(pl->m[BW_PM_GATED], d->str, hv);
    tx->stats.scans++;
    tx->stats.bytes_scanned += d->str.len;
    return ok;
}

const bw_hits_t *bw_src_scan(bw_tx_t *tx, bw_src_state_t *S, int k)
{
    int pi = tx->prog->src_plan[k];
    const bw_plan_t *pl = ((const bw_plan_t **)tx->prog->plans->elts)[pi];
    const int *nodes = tx->prog->plan_nodes[pi];
    int ns = pl->nslots, nw = pl->nwords, n = S->n, i, s, w, j;
    const bw_str_t **tv;
    uint64_t *hv;
    dstr_t *d;
    bw_hits_t *h;

    if (S->hits)
        return S->hits;
    if (!S->present)
        present_of(tx, S);
    tv = apr_palloc(tx->pool, sizeof(*tv) * (size_t)ns);
    for (s = 0; s < ns; s++)
        tv[s] = bw_src_tv(tx, S, nodes[s]);
    h = apr_pcalloc(tx->pool, sizeof(*h));
    h->nwords = nw;
    h->vec = apr_palloc(tx->pool, sizeof(uint64_t *) * (size_t)(n + 1));
    h->didx = apr_palloc(tx->pool, sizeof(unsigned short) * ((size_t)ns * (size_t)n + 1));
    h->any = apr_pcalloc(tx->pool, sizeof(uint64_t) * (size_t)ns * (size_t)nw);
    /* a value makes at most one distinct string per slot */
    hv = apr_palloc(tx->pool, sizeof(uint64_t) * (size_t)nw * (size_t)(ns + 1));
    d = apr_palloc(tx->pool, sizeof(dstr_t) * (size_t)(ns + 1));
    for (i = 0; i < n; i++) {
        int nd = 0;
        for (s = 0; s < ns; s++) {
            bw_str_t str = tv[s][i];
            const uint64_t *sg = pl->slot_gate + 4 * (size_t)s;
            for (j = 0; j < nd; j++)
                if (d[j].str.len == str.len
                    && (d[j].str.data == str.data || !memcmp(d[j].str.data, str.data, str.len)))
                    break;
            if (j == nd) {
                memset(&d[nd], 0, sizeof(d[nd]));
                d[nd++].str = str;
            }
            d[j].need |= pl->slot_need[s];
            for (w = 0; w < 4; w++)
                d[j].gate[w] |= sg[w];
            h->didx[(size_t)s * (size_t)n + (size_t)i] = (unsigned short)j;
        }
        for (j = 0; j < nd; j++) {
            bw_byteset_t ps;
            const bw_byteset_t *pp = &S->present[i];
            if (d[j].str.data != S->raw[i].data || d[j].str.len != S->raw[i].len) {
                bw_byteset_of(d[j].str, &ps);
                pp = &ps;
            }
            if (!scan_string(tx, pl, &d[j], pp, &hv[(size_t)j * (size_t)nw], h->didx, n, i, j))
                h->inexact = 1;
        }
        for (s = 0; s < ns; s++) {
            j = h->didx[(size_t)s * (size_t)n + (size_t)i];
            for (w = 0; w < nw; w++)
                h->any[(size_t)s * (size_t)nw + (size_t)w] |= hv[(size_t)j * (size_t)nw + (size_t)w];
        }
        h->vec[i] = apr_pmemdup(tx->pool, hv, sizeof(uint64_t) * (size_t)nw * (size_t)nd);
    }
    S->hits = h;
    return h;
}
