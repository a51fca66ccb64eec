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
 * returns its input, so benign values are not copied). The bytes of every
 * value are known at each node, and their union: a node whose
 * transformation has no trigger byte in the union is its parent's array,
 * in constant time. Then the source's scan plan (program/bw_scan.c): for
 * each value, the distinct strings the plan's chains make of it are
 * scanned once each (slots whose arrays are the same array are one), and
 * per chain the union over all values is kept, so a rule whose bit is
 * clear there is done without touching a value.
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

/* The bytes each raw value contains, and their union; once per source and
 * phase. */
static void present_of(bw_tx_t *tx, bw_src_state_t *S)
{
    if (S->present)
        return;
    int i, w;
    S->present = apr_palloc(tx->pool, sizeof(bw_byteset_t) * (size_t)(S->n + 1));
    memset(&S->all, 0, sizeof(S->all));
    for (i = 0; i < S->n; i++) {
        bw_byteset_of(S->raw[i], &S->present[i]);
        for (w = 0; w < 4; w++)
            S->all.w[w] |= S->present[i].w[w];
    }
}

/* Node `node` of S computed: values, their bytes and union. */
static void tv_node(bw_tx_t *tx, bw_src_state_t *S, int node)
{
    const bw_pnode_t *pn = &tx->prog->nodes[node];
    const bw_str_t *in;
    const bw_byteset_t *ips, *iall;
    bw_str_t *out;
    bw_byteset_t *ops, all;
    int i, w, changed = 0;
    if (pn->parent < 0) {
        in = S->raw;
        ips = S->present;
        iall = &S->all;
    } else {
        in = bw_src_tv(tx, S, pn->parent);
        ips = S->tps[pn->parent];
        iall = &S->tall[pn->parent];
    }
    /* no value has a byte the transformation acts on: the parent's arrays */
    if (!bw_tfn_may_change(pn->tfn, iall)) {
        S->tv[node] = (bw_str_t *)in;
        S->tps[node] = (bw_byteset_t *)ips;
        S->tall[node] = *iall;
        return;
    }
    out = apr_palloc(tx->pool, sizeof(bw_str_t) * (size_t)(S->n + 1));
    ops = apr_palloc(tx->pool, sizeof(bw_byteset_t) * (size_t)(S->n + 1));
    memset(&all, 0, sizeof(all));
    for (i = 0; i < S->n; i++) {
        out[i] = in[i];
        ops[i] = ips[i];
        /* a transformation without a trigger byte in its input cannot
         * change it: most values go through most chains untouched */
        if (bw_tfn_may_change(pn->tfn, &ips[i])) {
            pn->tfn->fn(&tx->tfn_env, tx->pool, in[i], &out[i]);
            if (out[i].data != in[i].data || out[i].len != in[i].len) {
                bw_byteset_of(out[i], &ops[i]);
                changed = 1;
            }
        }
        for (w = 0; w < 4; w++)
            all.w[w] |= ops[i].w[w];
    }
    if (!changed) {
        S->tv[node] = (bw_str_t *)in;
        S->tps[node] = (bw_byteset_t *)ips;
        S->tall[node] = *iall;
        return;
    }
    S->tv[node] = out;
    S->tps[node] = ops;
    S->tall[node] = all;
}

void bw_src_bytes(bw_tx_t *tx, bw_src_state_t *S)
{
    present_of(tx, S);
}

const bw_str_t *bw_src_tv(bw_tx_t *tx, bw_src_state_t *S, int node)
{
    if (node < 0)
        return S->raw;
    if (!S->tv) {
        size_t nn = (size_t)tx->prog->nnodes;
        S->tv = apr_pcalloc(tx->pool, sizeof(bw_str_t *) * nn);
        S->tps = apr_palloc(tx->pool, sizeof(bw_byteset_t *) * nn);
        S->tall = apr_palloc(tx->pool, sizeof(bw_byteset_t) * nn);
    }
    if (!S->tv[node]) {
        present_of(tx, S);
        tv_node(tx, S, node);
    }
    return S->tv[node];
}

/* One distinct string of a value: what the slots that made it need (the
 * union of their matchers and gate bytes) and their trigger bits, and its
 * bytes. */
typedef struct {
    bw_str_t str;
    const bw_byteset_t *ps;
    unsigned need;
    uint64_t gate[4];
    uint64_t *tmask;        /* nwords */
} dstr_t;

/* Slots whose chains made the same array of strings, as one. */
typedef struct {
    int rep;                /* the first slot of the group */
    unsigned need;
    uint64_t gate[4];
    uint64_t *tmask;        /* nwords: the group's trigger bits */
} sgroup_t;

/* Scan one distinct string (program/bw_scan.c): the open and literal
 * matchers when a slot that made it has patterns there, the gated one when
 * it has a gate byte of those slots, the triggered one when the literal one
 * found a trigger of those slots; trigger bits are cleared after. Returns
 * 0 when a scan failed (its bits are all set: maybe). */
static int scan_string(bw_tx_t *tx, const bw_plan_t *pl, const dstr_t *d, uint64_t *hv)
{
    const bw_byteset_t *ps = d->ps;
    int ok = 1, w, nw = pl->nwords;
    memset(hv, 0, sizeof(uint64_t) * (size_t)nw);
    if (d->need & (1u << BW_PM_OPEN))
        ok &= bw_matcher_scan(pl->m[BW_PM_OPEN], d->str, hv);
    if (d->need & (1u << BW_PM_LITS)) {
        uint64_t t = 0;
        ok &= bw_matcher_scan(pl->m[BW_PM_LITS], d->str, hv);
        for (w = 0; w < nw; w++) {
            t |= hv[w] & d->tmask[w];
            hv[w] &= ~pl->trigger_mask[w];
        }
        if (t && (d->need & (1u << BW_PM_TRIGGERED)))
            ok &= bw_matcher_scan(pl->m[BW_PM_TRIGGERED], d->str, hv);
    }
    if ((d->need & (1u << BW_PM_GATED))
        && ((ps->w[0] & d->gate[0]) | (ps->w[1] & d->gate[1]) | (ps->w[2] & d->gate[2])
            | (ps->w[3] & d->gate[3])))
        ok &= bw_matcher_scan(pl->m[BW_PM_GATED], d->str, hv);
    tx->stats.scans++;
    tx->stats.bytes_scanned += d->str.len;
    return ok;
}

/* Group the slots by the array their chain made; returns the number of
 * groups, with rep_of[s] the group of slot s. */
static int group_slots(bw_tx_t *tx, const bw_plan_t *pl, const bw_str_t *const *tv,
                       sgroup_t *g, int *group_of)
{
    int ns = pl->nslots, nw = pl->nwords, ng = 0, s, k, w;
    for (s = 0; s < ns; s++) {
        int b = pl->trigger_base + s;
        for (k = 0; k < ng; k++)
            if (tv[g[k].rep] == tv[s])
                break;
        if (k == ng) {
            memset(&g[ng], 0, sizeof(g[ng]));
            g[ng].rep = s;
            g[ng].tmask = apr_pcalloc(tx->pool, sizeof(uint64_t) * (size_t)nw);
            ng++;
        }
        group_of[s] = k;
        g[k].need |= pl->slot_need[s];
        for (w = 0; w < 4; w++)
            g[k].gate[w] |= pl->slot_gate[4 * (size_t)s + (size_t)w];
        g[k].tmask[b / 64] |= (uint64_t)1 << (b % 64);
    }
    return ng;
}

const bw_hits_t *bw_src_scan(bw_tx_t *tx, bw_src_state_t *S, int k)
{
    int pi = tx->prog->src_plan[k];
    const bw_plan_t *pl = ((const bw_plan_t **)tx->prog->plans->elts)[pi];
    const int *nodes = tx->prog->plan_nodes[pi];
    int ns = pl->nslots, nw = pl->nwords, n = S->n, ng, i, s, w, j, q, *group_of;
    const bw_str_t **tv;
    const bw_byteset_t **tps;
    uint64_t *hv, *tm, *zero;
    unsigned char *hit;
    unsigned short **grow;
    sgroup_t *g;
    dstr_t *d;
    bw_hits_t *h;

    if (S->hits)
        return S->hits;
    tv = apr_palloc(tx->pool, sizeof(*tv) * (size_t)ns);
    tps = apr_palloc(tx->pool, sizeof(*tps) * (size_t)ns);
    for (s = 0; s < ns; s++) {
        tv[s] = bw_src_tv(tx, S, nodes[s]);
        present_of(tx, S);
        tps[s] = nodes[s] < 0 ? S->present : S->tps[nodes[s]];
    }
    g = apr_palloc(tx->pool, sizeof(*g) * (size_t)(ns + 1));
    group_of = apr_palloc(tx->pool, sizeof(int) * (size_t)(ns + 1));
    ng = group_slots(tx, pl, tv, g, group_of);
    h = apr_pcalloc(tx->pool, sizeof(*h));
    h->nwords = nw;
    h->vec = apr_palloc(tx->pool, sizeof(uint64_t *) * (size_t)(n + 1));
    h->drow = apr_palloc(tx->pool, sizeof(unsigned short *) * (size_t)(ns + 1));
    grow = apr_palloc(tx->pool, sizeof(unsigned short *) * (size_t)(ng + 1));
    for (q = 0; q < ng; q++)
        grow[q] = apr_palloc(tx->pool, sizeof(unsigned short) * (size_t)(n + 1));
    for (s = 0; s < ns; s++)
        h->drow[s] = grow[group_of[s]];
    h->any = apr_pcalloc(tx->pool, sizeof(uint64_t) * (size_t)ns * (size_t)nw);
    /* a value makes at most one distinct string per group */
    hv = apr_palloc(tx->pool, sizeof(uint64_t) * (size_t)nw * (size_t)(ng + 1));
    tm = apr_palloc(tx->pool, sizeof(uint64_t) * (size_t)nw * (size_t)(ng + 1));
    zero = apr_pcalloc(tx->pool, sizeof(uint64_t) * (size_t)nw * (size_t)(ng + 1));
    hit = apr_palloc(tx->pool, (size_t)ng + 1);
    d = apr_palloc(tx->pool, sizeof(dstr_t) * (size_t)(ng + 1));
    for (i = 0; i < n; i++) {
        int nd = 0, any = 0;
        for (q = 0; q < ng; q++) {
            const sgroup_t *gq = &g[q];
            bw_str_t str = tv[gq->rep][i];
            for (j = 0; j < nd; j++)
                if (d[j].str.data == str.data && d[j].str.len == str.len)
                    break;
            if (j == nd)
                for (j = 0; j < nd; j++)
                    if (d[j].str.len == str.len && !memcmp(d[j].str.data, str.data, str.len))
                        break;
            if (j == nd) {
                d[nd].str = str;
                d[nd].ps = &tps[gq->rep][i];
                d[nd].need = gq->need;
                memcpy(d[nd].gate, gq->gate, sizeof(gq->gate));
                d[nd].tmask = tm + (size_t)nd * (size_t)nw;
                memcpy(d[nd].tmask, gq->tmask, sizeof(uint64_t) * (size_t)nw);
                nd++;
            } else {
                d[j].need |= gq->need;
                for (w = 0; w < 4; w++)
                    d[j].gate[w] |= gq->gate[w];
                for (w = 0; w < nw; w++)
                    d[j].tmask[w] |= gq->tmask[w];
            }
            grow[q][i] = (unsigned short)j;
        }
        for (j = 0; j < nd; j++) {
            uint64_t *v = &hv[(size_t)j * (size_t)nw], or = 0;
            if (!scan_string(tx, pl, &d[j], v))
                h->inexact = 1;
            for (w = 0; w < nw; w++)
                or |= v[w];
            hit[j] = or != 0;
            any |= hit[j];
        }
        /* most values hit nothing: they share one block of zeros */
        if (!any) {
            h->vec[i] = zero;
            continue;
        }
        for (s = 0; s < ns; s++) {
            j = h->drow[s][i];
            if (hit[j])
                for (w = 0; w < nw; w++)
                    h->any[(size_t)s * (size_t)nw + (size_t)w] |= hv[(size_t)j * (size_t)nw + (size_t)w];
        }
        h->vec[i] = apr_pmemdup(tx->pool, hv, sizeof(uint64_t) * (size_t)nw * (size_t)nd);
    }
    S->hits = h;
    return h;
}
