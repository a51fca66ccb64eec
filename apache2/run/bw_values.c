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
 * in constant time; a node whose peer (the same transformation in another
 * chain) was handed the very same array takes the peer's arrays, also in
 * constant time: chains that differ only in steps that changed nothing
 * (t:lowercase after seven different prefixes in CRS) make one array, not
 * seven copies of it, and the scan below sees one group of slots, not
 * seven. Then the source's scan plan (program/bw_scan.c): the distinct
 * strings the plan's chains make of each value (slots whose
 * arrays are the same array are one) are scanned by each matcher their
 * slots need, all of a chunk of values in one call (matcher/,
 * bw_matcher_scan_many); a value keeps a row of hits only when something
 * hit, and per chain the union over all values is kept, so a rule whose
 * bit is clear there is done without touching a value.
 *
 * A state is kept across phases while the data its variable comes from is
 * the same: values of the request line and headers are built once per
 * transaction, those of the body again once the body is in, those of the
 * response once it arrives; a ctl: that changes what a variable yields
 * (forceRequestBodyVariable…) or a stream rewrite makes every state stale.
 */
#include <string.h>
#include "run/bw_run.h"

void bw_src_reset(bw_tx_t *tx)
{
    size_t n = (size_t)tx->prog->nsrc + 1;
    /* a state is zeroed when first built (bw_src_get): zeroing them all
     * here cost a GET with CRS more than all its states' building */
    tx->src = bw_tx_alloc(tx, sizeof(bw_src_state_t) * n);
    tx->src_built = bw_tx_calloc(tx, n);
    tx->src_any = bw_tx_calloc(tx, sizeof(const uint64_t *) * n);
    bw_tfn_cache_reset(tx);
}

void bw_src_stale(bw_tx_t *tx)
{
    if (tx->src_any)
        memset(tx->src_any, 0, sizeof(const uint64_t *) * (size_t)tx->prog->nsrc);
}

/* The class of the data a variable's values come from (bw_var.h). */
static int class_of(const bw_var_def_t *var)
{
    if (var->flags & BW_VAR_FROM_BODY)
        return BW_SRC_BODY;
    if (var->flags & BW_VAR_FROM_RESPONSE)
        return BW_SRC_RESPONSE;
    return BW_SRC_HEAD;
}

bw_src_state_t *bw_src_get(bw_tx_t *tx, int k)
{
    bw_src_state_t *S = &tx->src[k];
    const bw_source_t *src = &tx->prog->srcs[k];
    apr_array_header_t *tmp = tx->vals_tmp;
    int i, n, cls = class_of(src->var);
    if (tx->src_built[k] && S->gen == tx->data_gen && S->cgen == tx->cls_gen[cls])
        return S;
    bw_memzero(S, sizeof(*S));   /* not an inline rep stos, per source */
    tx->src_built[k] = 1;
    S->cls = cls;
    S->gen = tx->data_gen;
    S->cgen = tx->cls_gen[cls];
    S->local = tx->prog->src_local[k];
    /* a whole collection that knows its size (ARGS of a large body) is
     * made in place, neither grown nor copied (were the count short, the
     * array would grow); a selector would be matched twice */
    n = src->sel.len ? -1 : bw_var_count(tx, src->var, src->sel);
    if (n >= 0) {
        apr_array_header_t *arr = bw_scratch_array(tx->pool, n + 1, sizeof(bw_varval_t));
        bw_var_generate(tx, src->var, src->sel, arr);
        S->n = arr->nelts;
        S->vals = (bw_varval_t *)arr->elts;
    } else {
        tmp->nelts = 0;
        bw_var_generate(tx, src->var, src->sel, tmp);
        S->n = tmp->nelts;
        S->vals = memcpy(bw_tx_alloc(tx, sizeof(bw_varval_t) * (size_t)(S->n + 1)), tmp->elts,
                         sizeof(bw_varval_t) * (size_t)(S->n + 1));
    }
    S->raw = bw_tx_alloc(tx, sizeof(bw_str_t) * (size_t)(S->n + 1));
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
    S->present = bw_tx_alloc(tx, sizeof(bw_byteset_t) * (size_t)(S->n + 1));
    memset(&S->all, 0, sizeof(S->all));
    for (i = 0; i < S->n; i++) {
        bw_byteset_of(S->raw[i], &S->present[i]);
        for (w = 0; w < 4; w++)
            S->all.w[w] |= S->present[i].w[w];
    }
}

/* The array node `node` of S starts from (computed). */
static const bw_str_t *node_input(const bw_tx_t *tx, const bw_src_state_t *S, int node)
{
    int parent = tx->prog->nodes[node].parent;
    return parent < 0 ? S->raw : S->tv[S->local[parent]];
}

/* At most this many peers are asked for each value. */
#define MAX_PEERS 8

/* The peers of `node` (same transformation) S has computed, and that
 * changed some value: their inputs and results (bw_prog.h, tfn_peers).
 * A peer whose input is `in` itself (its chain and ours made the same
 * array: the steps before changed nothing) made what node `node` would
 * make, arrays and all: returns -1 with *same its own number. */
static int computed_peers(const bw_tx_t *tx, const bw_src_state_t *S, int node,
                          const bw_str_t *own, int *same,
                          const bw_str_t **pin, const bw_str_t **pout, const bw_byteset_t **pps)
{
    const int *m = tx->prog->tfn_peers ? tx->prog->tfn_peers[node] : NULL;
    int n = 0, i;
    for (i = 0; m && m[i] >= 0; i++) {
        int l = S->local[m[i]];
        const bw_str_t *in;
        if (l < 0 || !S->tv[l])
            continue;
        in = node_input(tx, S, m[i]);
        if (in == own) {
            *same = l;
            return -1;
        }
        if (S->tv[l] == in || n == MAX_PEERS)   /* it changed nothing: nothing to share */
            continue;
        pin[n] = in;
        pout[n] = S->tv[l];
        pps[n++] = S->tps[l];
    }
    return n;
}

/* Node `node` of S (own number l), whose transformation may change some
 * of the values `in` (bytes ips): values, their bytes and union. A value
 * whose string a peer node (same transformation) already transformed takes
 * that result instead of transforming it again. Out of line: most nodes
 * change nothing (node_from), and this one's frame would be theirs too. */
static __attribute__((noinline)) void tv_node_change(bw_tx_t *tx, bw_src_state_t *S, int node,
                                                     int l, const bw_str_t *in,
                                                     const bw_byteset_t *ips)
{
    const bw_pnode_t *pn = &tx->prog->nodes[node];
    int i, w, q, np, changed = 0;
    const bw_str_t *pin[MAX_PEERS], *pout[MAX_PEERS];
    const bw_byteset_t *pps[MAX_PEERS];
    bw_str_t *out;
    bw_byteset_t *ops, *all, acc;
    np = computed_peers(tx, S, node, in, &q, pin, pout, pps);
    if (np < 0) {   /* a peer made these very arrays from this very input */
        S->tv[l] = S->tv[q];
        S->tps[l] = S->tps[q];
        S->tall[l] = S->tall[q];
        return;
    }
    /* one block for the three (the sets first: 32 bytes each keep the
     * strings after them aligned) */
    ops = bw_tx_alloc(tx, sizeof(bw_byteset_t) * (size_t)(S->n + 2)
                               + sizeof(bw_str_t) * (size_t)(S->n + 1));
    all = ops + S->n + 1;
    out = (bw_str_t *)(all + 1);
    memset(&acc, 0, sizeof(acc));
    for (i = 0; i < S->n; i++) {
        out[i] = in[i];
        ops[i] = ips[i];
        /* a transformation without a trigger byte in its input cannot
         * change it: most values go through most chains untouched */
        if (bw_tfn_may_change_value(pn->tfn, &ips[i], in[i])) {
            for (q = 0; q < np; q++)
                if (pin[q][i].data == in[i].data && pin[q][i].len == in[i].len)
                    break;
            if (q < np) {   /* the same string, transformed at a peer */
                out[i] = pout[q][i];
                ops[i] = pps[q][i];
            } else {
                pn->tfn->fn(&tx->tfn_env, tx->pool, in[i], &out[i]);
                if (out[i].data != in[i].data || out[i].len != in[i].len) {
                    if (pn->tfn->bytes)   /* without reading the output */
                        pn->tfn->bytes(&ips[i], &ops[i]);
                    else
                        bw_byteset_of(out[i], &ops[i]);
                }
            }
            if (out[i].data != in[i].data || out[i].len != in[i].len)
                changed = 1;
        }
        for (w = 0; w < 4; w++)
            acc.w[w] |= ops[i].w[w];
    }
    if (!changed)   /* the parent's arrays, set by node_from */
        return;
    *all = acc;
    S->tv[l] = out;
    S->tps[l] = ops;
    S->tall[l] = all;
}

/* Node `node` of S (own number l; its parent's plocal, -1 for the raw
 * values) from its parent's arrays, which stay its own until one of its
 * values changes. The parent is computed. */
static inline void node_from(bw_tx_t *tx, bw_src_state_t *S, int node, int l, int plocal,
                             const bw_tfn_def_t *tfn)
{
    const bw_str_t *in = S->raw;
    const bw_byteset_t *ips = S->present, *iall = &S->all;
    if (plocal >= 0) {
        in = S->tv[plocal];
        ips = S->tps[plocal];
        iall = S->tall[plocal];
    }
    S->tv[l] = (bw_str_t *)in;
    S->tps[l] = (bw_byteset_t *)ips;
    S->tall[l] = iall;
    /* no value has a byte the transformation acts on: nothing more */
    if (bw_tfn_may_change(tfn, iall))
        tv_node_change(tx, S, node, l, in, ips);
}

/* Node `node` of S computed, its parent first (for a lazy caller). */
static void tv_node(bw_tx_t *tx, bw_src_state_t *S, int node)
{
    const bw_pnode_t *pn = &tx->prog->nodes[node];
    if (pn->parent >= 0)
        bw_src_tv(tx, S, pn->parent);
    node_from(tx, S, node, S->local[node], pn->parent < 0 ? -1 : S->local[pn->parent], pn->tfn);
}

void bw_src_bytes(bw_tx_t *tx, bw_src_state_t *S)
{
    present_of(tx, S);
}

/* S's per node tables, made at the first node. */
static void tv_tables(bw_tx_t *tx, bw_src_state_t *S)
{
    size_t nl;
    if (S->tv)
        return;
    nl = (size_t)tx->prog->src_nlocal[S - tx->src] + 1;
    /* one block for the three tables; only tv needs zeroing */
    S->tv = bw_tx_alloc(tx, 3 * sizeof(void *) * nl);
    S->tps = (bw_byteset_t **)(S->tv + nl);
    S->tall = (const bw_byteset_t **)(S->tps + nl);
    memset(S->tv, 0, sizeof(bw_str_t *) * nl);
}

const bw_str_t *bw_src_tv_make(bw_tx_t *tx, bw_src_state_t *S, int node)
{
    int l;
    if (node < 0)
        return S->raw;
    tv_tables(tx, S);
    l = S->local[node];
    if (!S->tv[l]) {
        present_of(tx, S);
        tv_node(tx, S, node);
    }
    return S->tv[l];
}

/* Every node in `nodes` (parents first, ended by node -1) computed, in
 * one pass: no call per node, and each node's parent is ready. */
static void tv_nodes(bw_tx_t *tx, bw_src_state_t *S, const bw_snode_t *nodes)
{
    const bw_snode_t *e;
    if (nodes[0].node < 0)
        return;
    tv_tables(tx, S);
    for (e = nodes; e->node >= 0; e++)
        if (!S->tv[e->local])
            node_from(tx, S, e->node, e->local, e->plocal, e->tfn);
}

/* Scratch for one scan (the arrays a scan needs only while it runs): a
 * block the transaction keeps, taken from the front at each scan; a scan
 * that needs more gets a larger block (what it took before stays valid). */
static void *take(bw_tx_t *tx, size_t n)
{
    bw_scan_arena_t *a = &tx->scan_arena;
    void *p;
    n = (n + 15) & ~(size_t)15;
    if (a->used + n > a->cap) {
        a->cap = a->cap * 2 > n * 2 ? a->cap * 2 : n * 2;
        if (a->cap < 4096)
            a->cap = 4096;
        a->base = apr_palloc(tx->pool, a->cap);
        a->used = 0;
    }
    p = a->base + a->used;
    a->used += n;
    return p;
}

/* Values are deduplicated and scanned in chunks of this many: the
 * scratch a chunk needs stays small whatever the body, and a chunk's
 * strings are still enough to pay for a joined scan. */
#define SCAN_CHUNK 256

/* A plan's slots grouped by the array their chain made. */
typedef struct {
    int rep;                /* the first slot of the group */
    unsigned need;          /* 1 << BW_PM_… of its slots' matchers */
    uint64_t gate[BW_PM_NGATES][4];  /* per matcher of BW_PM_GATES: its slots' gates */
    int oall;               /* open gate of all bytes: an open regex without a
                               gate, which the empty string may match too */
    uint64_t *tmask;        /* nwords: its slots' trigger bits */
} sgroup_t;

/* One distinct string of a value: what the slots that made it need. */
typedef struct {
    bw_str_t str;
    const bw_byteset_t *ps;
    int value;              /* the value it was made of */
    unsigned need;
    unsigned gated;         /* 1 << BW_PM_…: has a byte of that matcher's gate
                               of one of its slots (or needs no gate) */
    uint64_t *hits;         /* NULL until something hit */
} dstr_t;

/* The scan of one source, while it runs. */
typedef struct {
    bw_tx_t *tx;
    const bw_plan_t *pl;
    int nw, ng;
    const sgroup_t *g;
    int **grow;             /* per group: per value of the chunk, its string */
    int first;              /* the chunk's first value */
    dstr_t *d;
    int nd;
    bw_str_t *vs;           /* the strings of one matcher's scan */
    const uint64_t **vps;   /* their bytes (when a matcher has byte patterns) */
    int *ids;               /* and which dstr each is */
    int all_triggers;       /* the bits every string hits include triggers */
    uint64_t *gany;         /* per group: nw words, what any of its strings hit
                               (made at the first hit: most sources have none) */
    int inexact;
    const uint64_t *want;   /* the bits the source's rules read */
    unsigned needs;         /* 1 << BW_PM_… of any group */
} scan_t;

/* Group the slots the source needs (ss, nsl of them) by the array their
 * chain made; returns the number of groups, with group_of[s] the group of
 * slot s (-1: not needed). */
static int group_slots(bw_tx_t *tx, const bw_plan_t *pl, const bw_sslot_t *ss, int nsl,
                       const uint64_t *gates, const bw_str_t *const *tv, sgroup_t *g,
                       int *group_of)
{
    int nw = pl->nwords, ng = 0, s, k, j, m;
    unsigned todo;
    for (j = 0; j < pl->nslots; j++)
        group_of[j] = -1;
    for (j = 0; j < nsl; j++) {
        const bw_sslot_t *e = &ss[j];
        int b;
        s = e->slot;
        b = pl->trigger_base + s;
        for (k = 0; k < ng; k++)
            if (tv[g[k].rep] == tv[s])
                break;
        if (k == ng) {
            memset(&g[ng], 0, sizeof(g[ng]));
            g[ng].rep = s;
            ng++;
        }
        group_of[s] = k;
        g[k].need |= e->need;
        for (todo = e->need & BW_PM_GATES; todo; todo &= todo - 1) {
            const uint64_t *sg;
            uint64_t *gg;
            m = __builtin_ctz(todo);
            sg = gates + 4 * (size_t)e->gate[m];
            gg = g[k].gate[m];
            /* spelt out: as a loop it was not unrolled */
            gg[0] |= sg[0];
            gg[1] |= sg[1];
            gg[2] |= sg[2];
            gg[3] |= sg[3];
        }
        if (e->need & (1u << BW_PM_TRIGGERED)) {
            if (!g[k].tmask) {
                g[k].tmask = take(tx, sizeof(uint64_t) * (size_t)nw);
                memset(g[k].tmask, 0, sizeof(uint64_t) * (size_t)nw);
            }
            g[k].tmask[b / 64] |= (uint64_t)1 << (b % 64);
        }
    }
    for (k = 0; k < ng; k++) {
        const uint64_t *og = g[k].gate[BW_PM_OPEN];
        g[k].oall = (og[0] & og[1] & og[2] & og[3]) == ~(uint64_t)0;
    }
    return ng;
}

static int has_gate(const uint64_t gate[4], const bw_byteset_t *ps)
{
    return ((ps->w[0] & gate[0]) | (ps->w[1] & gate[1]) | (ps->w[2] & gate[2])
            | (ps->w[3] & gate[3])) != 0;
}

/* A matcher found bits in string ids[i] of the scan. */
static void on_hit(void *ctx, int i, const uint64_t *bits)
{
    scan_t *sc = ctx;
    dstr_t *d = &sc->d[sc->ids[i]];
    int w;
    if (!d->hits)
        d->hits = bw_tx_calloc(sc->tx, sizeof(uint64_t) * (size_t)sc->nw);
    for (w = 0; w < sc->nw; w++)
        d->hits[w] |= bits[w];
}

/* Did the literal matcher find, in string di (or among the bits every
 * string hits), the trigger of a slot that made it? */
static int triggered(const scan_t *sc, int di)
{
    const dstr_t *d = &sc->d[di];
    int q, w;
    if (!d->hits && !sc->all_triggers)
        return 0;
    for (q = 0; q < sc->ng; q++) {
        if (sc->grow[q][d->value - sc->first] != di || !sc->g[q].tmask)
            continue;
        for (w = 0; w < sc->nw; w++)
            if (((d->hits ? d->hits[w] : 0) | sc->pl->all[w]) & sc->g[q].tmask[w])
                return 1;
    }
    return 0;
}

/* Scan with matcher k the strings of the chunk that want it. */
static void scan_kind(scan_t *sc, int k)
{
    int i, n = 0;
    unsigned want = 1u << k;
    const uint64_t **vps = NULL;
    if (!(sc->needs & want))
        return;
    for (i = 0; i < sc->nd; i++) {
        const dstr_t *d = &sc->d[i];
        if (!(d->need & want) || !(d->gated & want)
            || (k == BW_PM_TRIGGERED && !triggered(sc, i)))
            continue;
        sc->vs[n] = d->str;
        sc->ids[n++] = i;
    }
    /* the strings' bytes, for the matcher's patterns they decide */
    if (n && sc->vps && bw_matcher_byte_patterns(sc->pl->m[k])) {
        vps = sc->vps;
        for (i = 0; i < n; i++)
            vps[i] = sc->d[sc->ids[i]].ps ? sc->d[sc->ids[i]].ps->w : NULL;
    }
    sc->tx->scanbuf.want = sc->want;
    if (n && !bw_matcher_scan_many(sc->pl->m[k], sc->vs, vps, n, sc->tx->pool, &sc->tx->scanbuf,
                                   on_hit, sc))
        sc->inexact = 1;
    sc->tx->scanbuf.want = NULL;
}

/* The distinct strings the groups made of values [first, end): each
 * scanned by the matchers its slots need (open and literal first: the
 * triggered one needs the literal one's triggers). */
static void scan_chunk(scan_t *sc, const bw_str_t *const *tv, const bw_byteset_t *const *tps,
                       int first, int end)
{
    int i, q, j;
    unsigned todo, need, gated;
    sc->first = first;
    sc->nd = 0;
    for (i = first; i < end; i++) {
        int start = sc->nd;
        for (q = 0; q < sc->ng; q++) {
            const sgroup_t *gq = &sc->g[q];
            bw_str_t str = tv[gq->rep][i];
            dstr_t *d;
            for (j = start; j < sc->nd; j++)
                if (sc->d[j].str.data == str.data && sc->d[j].str.len == str.len)
                    break;
            if (j == sc->nd)
                for (j = start; j < sc->nd; j++)
                    if (sc->d[j].str.len == str.len && !memcmp(sc->d[j].str.data, str.data, str.len))
                        break;
            if (j == sc->nd) {
                d = &sc->d[sc->nd++];
                memset(d, 0, sizeof(*d));
                d->str = str;
                d->ps = &tps[gq->rep][i];
                d->value = i;
                sc->tx->stats.scans++;
                sc->tx->stats.bytes_scanned += str.len;
            }
            d = &sc->d[j];
            /* in locals, each field written once: the two are next to each
             * other, and reading them as one word right after writing one
             * of them stalls the load (store forwarding) */
            need = d->need | gq->need;
            gated = d->gated;
            /* the matchers without a gate need none */
            todo = gq->need & ~gated;
            gated |= todo & ~BW_PM_GATES;
            if (todo & (1u << BW_PM_OPEN) && (gq->oall || has_gate(gq->gate[BW_PM_OPEN], d->ps)))
                gated |= 1u << BW_PM_OPEN;
            if (todo & (1u << BW_PM_GATED) && has_gate(gq->gate[BW_PM_GATED], d->ps))
                gated |= 1u << BW_PM_GATED;
            if (todo & (1u << BW_PM_BYTES) && has_gate(gq->gate[BW_PM_BYTES], d->ps))
                gated |= 1u << BW_PM_BYTES;
            d->need = need;
            d->gated = gated;
            sc->grow[q][i - first] = j;
        }
    }
    scan_kind(sc, BW_PM_BYTES);
    scan_kind(sc, BW_PM_OPEN);
    scan_kind(sc, BW_PM_LITS);
    scan_kind(sc, BW_PM_TRIGGERED);
    scan_kind(sc, BW_PM_GATED);
}

/* After a chunk: the rows of its values that hit, and the union per
 * group (a slot's union is its group's: the slots of a group see the same
 * strings; made per slot at the end, not per string and slot). Out of
 * line: run once per chunk, inlined it only crowds the scan's loops. */
static __attribute__((noinline)) void chunk_rows(scan_t *sc, const uint64_t ***vrow)
{
    const bw_plan_t *pl = sc->pl;
    int i, q, w;
    for (i = 0; i < sc->nd; i++) {
        dstr_t *d = &sc->d[i];
        uint64_t or = 0;
        if (!d->hits)
            continue;
        for (w = 0; w < sc->nw; w++) {
            d->hits[w] &= ~pl->trigger_mask[w];
            or |= d->hits[w];
        }
        if (!or) {
            d->hits = NULL;
            continue;
        }
        if (!vrow[d->value])
            vrow[d->value] = bw_tx_calloc(sc->tx, sizeof(uint64_t *) * (size_t)sc->ng);
        for (q = 0; q < sc->ng; q++)
            if (sc->grow[q][d->value - sc->first] == i) {
                vrow[d->value][q] = d->hits;
                if (!sc->gany) {
                    size_t n = (size_t)sc->ng * (size_t)sc->nw;
                    sc->gany = take(sc->tx, sizeof(uint64_t) * (n + 1));
                    memset(sc->gany, 0, sizeof(uint64_t) * n);
                }
                for (w = 0; w < sc->nw; w++)
                    sc->gany[(size_t)q * (size_t)sc->nw + (size_t)w] |= d->hits[w];
            }
    }
}

const bw_hits_t *bw_src_scan(bw_tx_t *tx, bw_src_state_t *S, int k)
{
    int pi = tx->prog->src_plan[k];
    const bw_plan_t *pl = ((const bw_plan_t **)tx->prog->plans->elts)[pi];
    const bw_sslot_t *ss = tx->prog->src_sslots[k];
    int nsl = tx->prog->src_nslots[k], ns = pl->nslots, nw = pl->nwords, n = S->n, s, q, w, j;
    int first, chunk;
    const bw_str_t **tv;
    const bw_byteset_t **tps;
    const uint64_t ***vrow;
    int *group_of;
    sgroup_t *g;
    scan_t sc;
    bw_hits_t *h;

    if (S->hits)
        return S->hits;
    if (!n) {   /* no value (an absent header, no body): nothing to scan */
        h = bw_tx_calloc(tx, sizeof(*h));
        h->nwords = nw;
        h->all = pl->all;
        h->any = bw_tx_calloc(tx, sizeof(uint64_t) * (size_t)(ns * nw + 1));
        return S->hits = h;
    }
    present_of(tx, S);
    tx->scan_arena.used = 0;
    /* the scan's scratch in two takes: what grouping needs, then what the
     * chunks need (sgroup_t first: its words stay aligned) */
    g = take(tx, sizeof(*g) * (size_t)(ns + 1) + (sizeof(*tv) + sizeof(*tps)) * (size_t)ns);
    tv = (const bw_str_t **)(g + ns + 1);
    tps = (const bw_byteset_t **)(tv + ns);
    /* only the slots of this source's rules (the plan may be shared with
     * sources that have more) */
    tv_nodes(tx, S, tx->prog->src_scan_nodes[k]);
    for (j = 0; j < nsl; j++) {
        int l = ss[j].local;
        s = ss[j].slot;
        /* bw_src_tv's read without its checks (1.4 K instructions a GET):
         * tv_nodes made every node a slot needs */
        tv[s] = l < 0 ? S->raw : S->tv[l];
        tps[s] = l < 0 ? S->present : S->tps[l];
    }
    /* what the rules read, kept: one zeroed block (the hits, the slots'
     * unions, the rows; group_slots sets every slot's group) */
    h = bw_tx_calloc(tx, sizeof(*h) + sizeof(uint64_t) * (size_t)ns * (size_t)nw
                    + sizeof(*vrow) * (size_t)(n + 1) + sizeof(int) * (size_t)(ns + 1));
    h->any = (uint64_t *)(h + 1);
    vrow = (const uint64_t ***)(h->any + (size_t)ns * (size_t)nw);
    group_of = (int *)(vrow + n + 1);
    h->nwords = nw;
    h->group_of = group_of;
    h->all = pl->all;
    h->vrow = (const uint64_t *const *const *)vrow;
    memset(&sc, 0, sizeof(sc));
    sc.tx = tx;
    sc.pl = pl;
    sc.nw = nw;
    sc.g = g;
    sc.ng = group_slots(tx, pl, ss, nsl, tx->prog->gates, (const bw_str_t *const *)tv, g,
                        group_of);
    for (q = 0; q < sc.ng; q++)
        sc.needs |= g[q].need;
    sc.all_triggers = pl->all_triggers;
    sc.want = tx->prog->src_want[k];
    chunk = n < SCAN_CHUNK ? n : SCAN_CHUNK;
    {
        size_t nds = (size_t)(chunk * sc.ng + 1);
        char *b = take(tx, sizeof(dstr_t) * nds + sizeof(bw_str_t) * nds
                           + sizeof(uint64_t *) * (nds + (size_t)sc.ng)
                           + sizeof(int) * (nds + (size_t)sc.ng * (size_t)(chunk + 1)));
        sc.d = (dstr_t *)b;
        sc.vs = (bw_str_t *)(sc.d + nds);
        sc.vps = (const uint64_t **)(sc.vs + nds);   /* used with byte patterns */
        sc.grow = (int **)(sc.vps + nds);
        sc.ids = (int *)(sc.grow + sc.ng);
        for (q = 0; q < sc.ng; q++)
            sc.grow[q] = sc.ids + nds + (size_t)q * (size_t)(chunk + 1);
        if (!pl->byte_patterns)
            sc.vps = NULL;
    }
    for (first = 0; first < n; first += chunk) {
        int end = first + chunk < n ? first + chunk : n;
        scan_chunk(&sc, (const bw_str_t *const *)tv, (const bw_byteset_t *const *)tps, first, end);
        chunk_rows(&sc, vrow);
    }
    h->inexact = sc.inexact;
    tx->stats.scan_calls = tx->scanbuf.calls;
    /* per slot: its group's union, and the bits every string hits (most
     * sources hit nothing, and h->any is zero already) */
    if (sc.gany || pl->any_all)
        for (j = 0; j < nsl; j++) {
            uint64_t *any = h->any + (size_t)ss[j].slot * (size_t)nw;
            const uint64_t *ga = sc.gany ? sc.gany + (size_t)group_of[ss[j].slot] * (size_t)nw : NULL;
            for (w = 0; w < nw; w++)
                any[w] = (ga ? ga[w] : 0) | pl->all[w];
        }
    S->hits = h;
    return h;
}
