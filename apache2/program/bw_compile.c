/*
 * Compiling a program for the executor, once its phases' rule lists are
 * final (bw_program.c):
 *  - every rule link becomes a bw_crule_t;
 *  - its transformation chain becomes a node of the program's chain trie
 *    (equal prefixes share nodes, so a value is transformed once per
 *    prefix whichever rule asks);
 *  - each target on a variable whose values cannot change inside a phase
 *    (BW_VAR_STABLE, no count, no macro in the selector) becomes a value
 *    source, shared by every target with the same variable and literal
 *    selector (a /regex/ selector uses the variable's source and filters);
 *  - after folding and planning (bw_fold.c, bw_scan.c), each target on a
 *    source learns its rule's bit and slot in the source's plan;
 *  - each phase becomes an array of slots (markers dropped) with skip and
 *    skipAfter resolved to the slot a matching chain continues at.
 */
#include <string.h>
#include <strings.h>
#include "program/bw_prog.h"

/* bw_crule_t.excl_vars has a bit for every variable id */
_Static_assert(BW_V__COUNT <= 256, "excl_vars holds 256 variable ids");
/* a bw_apply_t entry fits one cache line (build_steps) */
_Static_assert(sizeof(bw_apply_t) <= 64, "bw_apply_t fits one line");

typedef bw_cc_t cc_t;

struct bw_cc_s {
    bw_program_t *prog;
    apr_pool_t *p;
    apr_hash_t *crules;        /* bw_rule_t* -> bw_crule_t* */
    apr_hash_t *nodes;         /* (parent, tfn) -> node index + 1 */
    apr_hash_t *srcs;          /* (var id, lower-case selector) -> source index + 1 */
    apr_array_header_t *node_arr, *src_arr;
    apr_array_header_t *all;   /* bw_crule_t*: every link compiled */
    char *blk;                 /* link_block's free space, blk_left bytes */
    const char *err;           /* a link that found no room */
    size_t blk_left;
};

/* ---- the chain trie ------------------------------------------------------ */

typedef struct {
    int parent;
    const bw_tfn_def_t *tfn;
} node_key_t;

static int intern_chain(cc_t *cc, const bw_tfn_def_t *const *tfns, int n)
{
    int i, node = -1;
    for (i = 0; i < n; i++) {
        node_key_t key;
        intptr_t idx;
        memset(&key, 0, sizeof(key));
        key.parent = node;
        key.tfn = tfns[i];
        idx = (intptr_t)apr_hash_get(cc->nodes, &key, sizeof(key));
        if (!idx) {
            bw_pnode_t *pn = apr_array_push(cc->node_arr);
            pn->parent = node;
            pn->tfn = tfns[i];
            idx = cc->node_arr->nelts;
            apr_hash_set(cc->nodes, apr_pmemdup(cc->p, &key, sizeof(key)), sizeof(key), (void *)idx);
        }
        node = (int)idx - 1;
    }
    return node;
}

/* ---- value sources ------------------------------------------------------------ */

static int source_of(cc_t *cc, const bw_target_t *t)
{
    bw_str_t sel = t->selector_re ? bw_str_n("", 0) : t->selector;
    char *key;
    intptr_t idx;
    if (t->is_exclusion || t->is_count || t->selector_macro || !(t->var->flags & BW_VAR_STABLE))
        return -1;
    /* XPath selectors are case-sensitive; collection keys are not */
    if (t->var->id != BW_V_XML)
        sel = bw_str_lower(cc->p, sel);
    key = apr_psprintf(cc->p, "%d:%.*s", (int)t->var->id, (int)sel.len, sel.data);
    idx = (intptr_t)apr_hash_get(cc->srcs, key, APR_HASH_KEY_STRING);
    if (!idx) {
        bw_source_t *s = apr_array_push(cc->src_arr);
        s->var = t->var;
        s->sel = t->selector_re ? bw_str_n("", 0) : t->selector;
        idx = cc->src_arr->nelts;
        apr_hash_set(cc->srcs, key, APR_HASH_KEY_STRING, (void *)idx);
    }
    return (int)idx - 1;
}

/* ---- rules ------------------------------------------------------------------- */

/* n bytes of p from the start of a cache line. */
static void *palloc_lines(apr_pool_t *p, size_t n)
{
    return (void *)(((uintptr_t)apr_palloc(p, n + 63) + 63) & ~(uintptr_t)63);
}

/* The bytes of a link's block: the link, then its tscan and tsrc arrays
 * (nt + 1 each), from the start of a cache line. */
static size_t link_size(int nt)
{
    size_t n = sizeof(bw_crule_t) + sizeof(bw_tscan_t) * (size_t)(nt + 1)
               + sizeof(int) * (size_t)(nt + 1);
    return (n + 63) & ~(size_t)63;
}

/* The program's links in one block (prog->links), each on lines of its
 * own, in the order compile_phase reaches them (each chain's links after
 * its starter): the links a transaction runs sit in the order it runs
 * them, and a step names its link by a 32-bit offset. */
static void links_alloc(cc_t *cc)
{
    size_t total = 64;
    int ph, i;
    for (ph = 1; ph <= BW_PHASES; ph++) {
        const apr_array_header_t *arr = cc->prog->phase[ph];
        for (i = 0; i < arr->nelts; i++) {
            const bw_rule_t *r;
            for (r = ((bw_rule_t **)arr->elts)[i]; r; r = r->chain_next)
                if (r->kind != BW_RULE_MARKER)
                    total += link_size(r->targets->nelts);
        }
    }
    cc->blk = palloc_lines(cc->p, total);
    cc->blk_left = total;
    cc->prog->links = cc->blk;
}

/* A link's block, zeroed; NULL if links_alloc, which walks the same
 * rules as compile_phase, left no room for it (cannot happen). */
static bw_crule_t *link_block(cc_t *cc, int nt)
{
    size_t n = link_size(nt);
    char *b = cc->blk;
    if (n > cc->blk_left)
        return NULL;
    cc->blk += n;
    cc->blk_left -= n;
    memset(b, 0, n);
    return (bw_crule_t *)b;
}

static const bw_crule_t *compile_link(cc_t *cc, const bw_rule_t *r)
{
    bw_crule_t *c = apr_hash_get(cc->crules, &r, sizeof(r));
    const bw_target_t *t = (const bw_target_t *)r->targets->elts;
    int nt = r->targets->nelts, *tsrc, i;
    bw_tscan_t *ts;
    if (c)
        return c;
    c = link_block(cc, nt);
    if (!c) {
        cc->err = "internal error: a rule link outside the phases' lists";
        return NULL;
    }
    ts = (bw_tscan_t *)(c + 1);
    tsrc = (int *)(ts + nt + 1);
    apr_hash_set(cc->crules, apr_pmemdup(cc->p, &r, sizeof(r)), sizeof(r), c);
    c->r = r;
    c->targets = t;
    c->nt = nt;
    c->node = intern_chain(cc, r->tfns, r->ntfns);
    if (r->kind == BW_RULE_SECACTION)
        c->flags |= BW_CR_ACTION;
    if (r->multi_match)
        c->flags |= BW_CR_MULTI;
    if (r->op_macro)
        c->flags |= BW_CR_OP_MACRO;
    if (r->op_negated)
        c->flags |= BW_CR_NEGATED;
    if (r->capture)
        c->flags |= BW_CR_CAPTURE;
    if (r->chain_head->log == 0)
        c->flags |= BW_CR_QUIET;
    if (r->chain_head->log == 0 || r->chain_next || r->op_negated)
        c->flags |= BW_CR_NO_MSG;
    c->op = r->op;
    for (i = 0; i < nt; i++) {
        ts[i].bit = -1;   /* no plan yet (bw_program_link_scan) */
        tsrc[i] = source_of(cc, &t[i]);
        if (!t[i].is_exclusion && tsrc[i] < 0)
            c->flags |= BW_CR_OTHER;
        if (t[i].is_exclusion) {
            c->flags |= BW_CR_EXCL;
            c->excl_vars[t[i].var->id / 64] |= (uint64_t)1 << (t[i].var->id % 64);
        }
    }
    c->tscan = ts;
    c->tsrc = tsrc;
    *(bw_crule_t **)apr_array_push(cc->all) = c;
    if (r->chain_next)
        c->next = compile_link(cc, r->chain_next);
    return c;
}

/* ---- phases ---------------------------------------------------------------- */

/* The index in arr of the marker (or the rule with that id) skipAfter
 * names, searched after from; arr->nelts when there is none. */
static int find_marker(const apr_array_header_t *arr, int from, const char *name)
{
    int i;
    for (i = from + 1; i < arr->nelts; i++) {
        const bw_rule_t *r = ((bw_rule_t **)arr->elts)[i];
        if (r->kind == BW_RULE_MARKER ? !strcmp(r->marker, name)
                                      : (r->id_str && !strcmp(r->id_str, name)))
            return i;
    }
    return arr->nelts;
}

static void compile_phase(cc_t *cc, int ph)
{
    const apr_array_header_t *arr = cc->prog->phase[ph];
    bw_rule_t **rules = (bw_rule_t **)arr->elts;
    int *slot_after = apr_palloc(cc->p, sizeof(int) * (size_t)(arr->nelts + 1));
    bw_code_t *code = &cc->prog->code[ph];
    int i, n = 0;

    /* slot_after[i]: the first slot of a rule at or after index i */
    for (i = arr->nelts; i >= 0; i--)
        slot_after[i] = 0;
    for (i = 0; i < arr->nelts; i++)
        if (rules[i]->kind != BW_RULE_MARKER)
            n++;
    code->n = n;
    code->slots = apr_pcalloc(cc->p, sizeof(bw_slot_t) * (size_t)(n + 1));
    slot_after[arr->nelts] = n;
    for (i = arr->nelts - 1; i >= 0; i--)
        slot_after[i] = slot_after[i + 1] - (rules[i]->kind != BW_RULE_MARKER ? 1 : 0);
    for (i = 0; i < arr->nelts; i++) {
        const bw_rule_t *r = rules[i];
        bw_slot_t *s;
        if (r->kind == BW_RULE_MARKER)
            continue;
        s = &code->slots[slot_after[i]];
        s->cr = compile_link(cc, r);
        s->kind = BW_SLOT_RUN;
        if (r->skip_after) {
            int j = find_marker(arr, i, r->skip_after);
            s->next_on_match = slot_after[j < arr->nelts ? j + 1 : arr->nelts];
        } else if (r->skip)
            s->next_on_match = slot_after[i] + 1 + r->skip < n ? slot_after[i] + 1 + r->skip : n;
        else
            s->next_on_match = slot_after[i] + 1;
    }
}

static void publish(cc_t *cc)
{
    bw_program_t *prog = cc->prog;
    prog->nnodes = cc->node_arr->nelts;
    prog->nodes = (bw_pnode_t *)cc->node_arr->elts;
    prog->nsrc = cc->src_arr->nelts;
    prog->srcs = (bw_source_t *)cc->src_arr->elts;
}

/* 1 when text names one of the ARGS variables, as far as a plain search
 * can tell (a macro, a ctl: target, or just a word: it errs on "yes"). */
static int names_args(const char *text)
{
    const char *p;
    for (p = text; p && *p; p++)
        if ((*p == 'a' || *p == 'A') && strncasecmp(p, "args", 4) == 0)
            return 1;
    return 0;
}

/* 1 when link r may read the request body's arguments other than by
 * counting them all (&ARGS, &ARGS_POST): through a target, a macro in an
 * action or operator, sanitisation (the audit log masks their values), or
 * a Lua script (which may read anything). */
static int reads_body_args(const bw_rule_t *r)
{
    const bw_rule_t *sets[2] = { r, r->default_set };
    int i, k;
    if (r->lua || (r->op_macro && names_args(r->op_macro->text)))
        return 1;
    for (i = 0; r->targets && i < r->targets->nelts; i++) {
        const bw_target_t *t = &((const bw_target_t *)r->targets->elts)[i];
        bw_var_id_t id = t->var ? t->var->id : BW_V_ARGS;
        if (t->selector_macro && names_args(t->selector_macro->text))
            return 1;
        if (t->is_exclusion)
            continue;
        if (id == BW_V_ARGS_NAMES || id == BW_V_ARGS_POST_NAMES || id == BW_V_ARGS_COMBINED_SIZE)
            return 1;
        if ((id == BW_V_ARGS || id == BW_V_ARGS_POST)
            && (!t->is_count || t->selector.len || t->selector_re || t->selector_macro))
            return 1;
    }
    for (k = 0; k < 2; k++) {
        const apr_array_header_t *acts = sets[k] ? sets[k]->actions : NULL;
        for (i = 0; acts && i < acts->nelts; i++) {
            const bw_action_t *a = &((const bw_action_t *)acts->elts)[i];
            if (names_args(a->param) || (a->def && !strncasecmp(a->def->name, "sanitise", 8)))
                return 1;
        }
    }
    return 0;
}

/* Whether the program needs the body's arguments themselves, or only
 * their number (prog->body_args_counted: the JSON processor then makes no
 * names and no values, which is most of its cost). */
static void body_args_use(bw_program_t *prog, const cc_t *cc)
{
    int i;
    prog->body_args_counted = 1;
    for (i = 0; i < cc->all->nelts; i++)
        if (reads_body_args(((const bw_crule_t **)cc->all->elts)[i]->r)) {
            prog->body_args_counted = 0;
            return;
        }
}

const char *bw_program_compile(bw_program_t *prog)
{
    static const char *const names[10] = { "0", "1", "2", "3", "4", "5", "6", "7", "8", "9" };
    cc_t *cc = apr_pcalloc(prog->pool, sizeof(*cc));
    int ph;
    for (ph = 0; ph < 10; ph++)
        prog->capture_keys[ph] = bw_key_make(bw_str_make(names[ph]));
    cc->prog = prog;
    cc->p = prog->pool;
    cc->crules = apr_hash_make(cc->p);
    cc->nodes = apr_hash_make(cc->p);
    cc->srcs = apr_hash_make(cc->p);
    cc->node_arr = apr_array_make(cc->p, 64, sizeof(bw_pnode_t));
    cc->src_arr = apr_array_make(cc->p, 32, sizeof(bw_source_t));
    cc->all = apr_array_make(cc->p, 256, sizeof(bw_crule_t *));
    links_alloc(cc);
    for (ph = 1; ph <= BW_PHASES; ph++)
        compile_phase(cc, ph);
    if (cc->err)
        return cc->err;
    body_args_use(prog, cc);
    prog->cc = cc;
    publish(cc);
    /* no plans until bw_scan_build (never, without the scan) */
    prog->plans = apr_array_make(prog->pool, 1, sizeof(bw_plan_t *));
    prog->src_plan = apr_palloc(prog->pool, sizeof(int) * (size_t)(prog->nsrc + 1));
    for (ph = 0; ph < prog->nsrc; ph++)
        prog->src_plan[ph] = -1;
    return NULL;
}

/* A target's bit in its source's plan, when it has one. */
static bw_tscan_t tscan_of(const bw_program_t *prog, const bw_crule_t *c, int t)
{
    bw_tscan_t ts;
    int k = c->tsrc[t];
    const bw_plan_t *pl;
    memset(&ts, 0, sizeof(ts));
    ts.bit = -1;
    if (k < 0 || prog->src_plan[k] < 0 || !bw_scannable(c->r))
        return ts;
    pl = ((const bw_plan_t **)prog->plans->elts)[prog->src_plan[k]];
    if (!bw_plan_member(pl, c->r, &ts.bit, &ts.slot)) {
        ts.bit = -1;
        return ts;
    }
    ts.exact = (pl->exact[ts.bit / 64] & ((uint64_t)1 << (ts.bit % 64))) != 0;
    ts.line = (pl->line[ts.bit / 64] & ((uint64_t)1 << (ts.bit % 64))) != 0;
    if (c->r->multi_match) {
        bw_tscan_t *pre = apr_pcalloc(prog->pool, sizeof(*pre) * (size_t)(c->r->ntfns + 1));
        int n;
        for (n = 0; n < c->r->ntfns; n++)
            if (!bw_plan_member_prefix(pl, c->r, n, &pre[n].bit, &pre[n].slot)) {
                ts.bit = -1;
                return ts;
            }
        ts.prefix = pre;
    }
    return ts;
}

/* The scan's verdict on a chain's first link, read from the slot: for a
 * rule whose every target is a scanned source (no multiMatch, no macro in
 * the operator, not negated), the executor checks these bits and, when
 * none is set, moves on without reading the rule, its targets or its
 * values: the rule data of the ~70% of CRS rules the scan rules out stays
 * out of the caches. */
static void link_skips(bw_program_t *prog)
{
    int ph, i, t;
    for (ph = 1; ph <= BW_PHASES; ph++) {
        bw_code_t *code = &prog->code[ph];
        for (i = 0; i < code->n; i++) {
            bw_slot_t *s = &code->slots[i];
            const bw_crule_t *c = s->cr;
            const bw_target_t *tg;
            bw_skipref_t *refs;
            int n = 0;
            /* BW_CR_SCAN: some target has a bit and the operator is not negated */
            if (!c || s->kind != BW_SLOT_RUN || !(c->flags & BW_CR_SCAN) || c->r->kind != BW_RULE_SECRULE
                || c->r->multi_match || c->r->op_macro)
                continue;
            tg = (const bw_target_t *)c->r->targets->elts;
            refs = apr_palloc(prog->pool, sizeof(*refs) * (size_t)(c->r->targets->nelts + 1));
            for (t = 0; t < c->r->targets->nelts; t++) {
                if (tg[t].is_exclusion)
                    continue;
                if (tg[t].is_count || c->tsrc[t] < 0 || c->tscan[t].bit < 0)
                    break;
                refs[n].src = c->tsrc[t];
                refs[n].slot = c->tscan[t].slot;
                refs[n].word = c->tscan[t].bit / 64;
                refs[n].mask = (uint64_t)1 << (c->tscan[t].bit % 64);
                n++;
            }
            if (t == c->r->targets->nelts && n > 0) {
                s->nskip = n;
                s->skip = refs;
            }
        }
    }
}

/* Number node and its prefixes for source k. */
static void need_node(bw_program_t *prog, int k, int node)
{
    for (; node >= 0 && prog->src_local[k][node] < 0; node = prog->nodes[node].parent)
        prog->src_local[k][node] = prog->src_nlocal[k]++;
}

/* The nodes source k's scan needs, parents first (bw_prog.h): those
 * need_node has numbered for k when only its slots' chains were. A node is
 * made after its parent (intern_chain), so program order is parent first. */
static const bw_snode_t *scan_nodes(bw_program_t *prog, int k)
{
    const int *local = prog->src_local[k];
    bw_snode_t *out = apr_palloc(prog->pool, sizeof(*out) * (size_t)(prog->src_nlocal[k] + 1));
    int n = 0, node;
    for (node = 0; node < prog->nnodes; node++) {
        int parent = prog->nodes[node].parent;
        if (local[node] < 0)
            continue;
        out[n].node = node;
        out[n].local = local[node];
        out[n].plocal = parent < 0 ? -1 : local[parent];
        out[n++].tfn = prog->nodes[node].tfn;
    }
    out[n].node = -1;
    return out;
}

/* Which chain nodes each source's values go through (bw_prog.h). */
static void local_nodes(bw_program_t *prog)
{
    cc_t *cc = prog->cc;
    int k, i, t, s;
    prog->src_local = apr_palloc(prog->pool, sizeof(int *) * (size_t)(prog->nsrc + 1));
    prog->src_nlocal = apr_pcalloc(prog->pool, sizeof(int) * (size_t)(prog->nsrc + 1));
    prog->src_scan_nodes = apr_pcalloc(prog->pool, sizeof(bw_snode_t *) * (size_t)(prog->nsrc + 1));
    for (k = 0; k < prog->nsrc; k++) {
        prog->src_local[k] = apr_palloc(prog->pool, sizeof(int) * (size_t)(prog->nnodes + 1));
        for (i = 0; i < prog->nnodes; i++)
            prog->src_local[k][i] = -1;
        if (prog->src_plan[k] >= 0) {
            const bw_plan_t *pl = ((const bw_plan_t **)prog->plans->elts)[prog->src_plan[k]];
            for (s = 0; s < pl->nslots; s++)
                if (prog->src_slot_need[k][s])
                    need_node(prog, k, prog->plan_nodes[prog->src_plan[k]][s]);
            prog->src_scan_nodes[k] = scan_nodes(prog, k);
        }
    }
    for (i = 0; i < cc->all->nelts; i++) {
        const bw_crule_t *c = ((bw_crule_t **)cc->all->elts)[i];
        for (t = 0; t < c->r->targets->nelts; t++)
            if (c->tsrc[t] >= 0)
                need_node(prog, c->tsrc[t], c->node);
    }
}

/* Per source, its slots as the scan reads them (bw_sslot_t), after
 * local_nodes; the gates of all sources deduplicated into prog->gates
 * (gate 0 is the empty one). */
static void packed_slots(bw_program_t *prog)
{
    apr_array_header_t *gates = apr_array_make(prog->pool, 64, 4 * sizeof(uint64_t));
    apr_hash_t *seen = apr_hash_make(prog->pool);
    int k, j, m;
    memset(apr_array_push(gates), 0, 4 * sizeof(uint64_t));
    apr_hash_set(seen, gates->elts, 4 * sizeof(uint64_t), (void *)(intptr_t)1);
    prog->src_sslots = apr_pcalloc(prog->pool, sizeof(bw_sslot_t *) * (size_t)(prog->nsrc + 1));
    for (k = 0; k < prog->nsrc; k++) {
        const int *nodes;
        bw_sslot_t *ss;
        if (prog->src_plan[k] < 0)
            continue;
        nodes = prog->plan_nodes[prog->src_plan[k]];
        ss = apr_pcalloc(prog->pool, sizeof(*ss) * (size_t)(prog->src_nslots[k] + 1));
        for (j = 0; j < prog->src_nslots[k]; j++) {
            int s = prog->src_slots[k][j];
            ss[j].slot = s;
            ss[j].local = nodes[s] < 0 ? -1 : prog->src_local[k][nodes[s]];
            ss[j].need = prog->src_slot_need[k][s];
            for (m = 0; m < BW_PM_NGATES; m++) {
                const uint64_t *g = &prog->src_slot_gate[k][BW_SLOT_GATE(s, m)];
                intptr_t at = (intptr_t)apr_hash_get(seen, g, 4 * sizeof(uint64_t));
                if (!at) {
                    memcpy(apr_array_push(gates), g, 4 * sizeof(uint64_t));
                    at = gates->nelts;
                    apr_hash_set(seen, g, 4 * sizeof(uint64_t), (void *)at);
                }
                ss[j].gate[m] = (uint32_t)(at - 1);
            }
        }
        prog->src_sslots[k] = ss;
    }
    prog->gates = (const uint64_t *)gates->elts;
}

/* Per node, the other nodes with its transformation (bw_prog.h), in a
 * list of their number. */
static void tfn_peers(bw_program_t *prog)
{
    int i, j, n;
    prog->tfn_peers = apr_pcalloc(prog->pool, sizeof(int *) * (size_t)(prog->nnodes + 1));
    for (i = 0; i < prog->nnodes; i++) {
        const bw_tfn_def_t *tfn = prog->nodes[i].tfn;
        int *m;
        for (j = n = 0; j < prog->nnodes; j++)
            n += j != i && prog->nodes[j].tfn == tfn;
        if (!n)
            continue;
        m = apr_palloc(prog->pool, sizeof(int) * (size_t)(n + 1));
        for (j = n = 0; j < prog->nnodes; j++)
            if (j != i && prog->nodes[j].tfn == tfn)
                m[n++] = j;
        m[n] = -1;
        prog->tfn_peers[i] = m;
    }
}

/* The steps of every phase (bw_prog.h), from the final slots. */
static int same_str(bw_str_t a, bw_str_t b)
{
    return a.len == b.len && (a.data == b.data || !memcmp(a.data, b.data, a.len));
}

/* Slot s's entry in the phase's APPLY table (appended unless an equal one
 * is there: same TX changes, same MATCHED_VAR). */
static uint32_t apply_entry(apr_array_header_t *tab, const bw_slot_t *s)
{
    bw_apply_t e;
    int i;
    memset(&e, 0, sizeof(e));
    e.fx = s->nfx ? s->fx : NULL;
    e.nfx = s->nfx;
    e.replay_mv = s->replay_mv != 0;
    if (e.replay_mv) {
        e.has_mv = s->has_mv != 0;
        e.mv = s->mv;
    }
    for (i = 0; i < tab->nelts; i++) {
        const bw_apply_t *o = &((const bw_apply_t *)tab->elts)[i];
        if (o->fx == e.fx && o->nfx == e.nfx && o->replay_mv == e.replay_mv
            && o->has_mv == e.has_mv && o->mv.var == e.mv.var && o->mv.is_count == e.mv.is_count
            && same_str(o->mv.key, e.mv.key) && same_str(o->mv.value, e.mv.value))
            return (uint32_t)i;
    }
    *(bw_apply_t *)apr_array_push(tab) = e;
    return (uint32_t)(tab->nelts - 1);
}

static void build_steps(bw_program_t *prog)
{
    int ph, i, k, nskips;
    for (ph = 1; ph <= BW_PHASES; ph++) {
        bw_code_t *code = &prog->code[ph];
        apr_array_header_t *applies = apr_array_make(prog->pool, 8, sizeof(bw_apply_t));
        void *at;
        code->steps = apr_pcalloc(prog->pool, sizeof(bw_step_t) * (size_t)(code->n + 1));
        for (i = nskips = 0; i < code->n; i++)
            nskips += code->slots[i].nskip;
        code->skips = apr_pcalloc(prog->pool, sizeof(bw_skip_t) * (size_t)(nskips + 1));
        for (i = nskips = 0; i < code->n; i++) {
            const bw_slot_t *s = &code->slots[i];
            bw_step_t *st = &code->steps[i];
            st->kind = (uint8_t)s->kind;
            st->next = s->kind == BW_SLOT_RUN || s->kind == BW_SLOT_DEAD ? s->next_on_match : s->next;
            if (s->kind == BW_SLOT_APPLY)
                st->link = apply_entry(applies, s);
            else if (s->cr)
                st->link = (uint32_t)((const char *)s->cr - prog->links);
            if (s->nskip <= 0 || s->nskip > 65535)
                continue;
            st->nskip = (uint16_t)s->nskip;
            st->skip = (uint32_t)nskips;
            for (k = 0; k < s->nskip; k++) {
                const bw_skipref_t *f = &s->skip[k];
                const bw_plan_t *pl = ((const bw_plan_t **)prog->plans->elts)[prog->src_plan[f->src]];
                bw_skip_t *sk = &code->skips[nskips++];
                sk->src = (uint32_t)f->src;
                sk->off = (uint32_t)(f->slot * pl->nwords + f->word);
                sk->mask = f->mask;
            }
        }
        /* on lines of their own: an entry is one line */
        at = palloc_lines(prog->pool, sizeof(bw_apply_t) * (size_t)(applies->nelts + 1));
        code->applies = memcpy(at, applies->elts, sizeof(bw_apply_t) * (size_t)applies->nelts);
    }
}

void bw_program_link_scan(bw_program_t *prog)
{
    cc_t *cc = prog->cc;
    int i, t;
    prog->plan_nodes = apr_pcalloc(prog->pool, sizeof(int *) * (size_t)(prog->plans->nelts + 1));
    for (i = 0; i < prog->plans->nelts; i++) {
        const bw_plan_t *pl = ((const bw_plan_t **)prog->plans->elts)[i];
        int s, *nodes = apr_palloc(prog->pool, sizeof(int) * (size_t)(pl->nslots + 1));
        for (s = 0; s < pl->nslots; s++)
            nodes[s] = intern_chain(cc, pl->slot_chain[s].tfns, pl->slot_chain[s].n);
        prog->plan_nodes[i] = nodes;
    }
    for (i = 0; i < cc->all->nelts; i++) {
        bw_crule_t *c = ((bw_crule_t **)cc->all->elts)[i];
        bw_tscan_t *ts = (bw_tscan_t *)c->tscan;   /* the link's block (link_block) */
        int any = 0;
        for (t = 0; t < c->nt; t++) {
            ts[t] = tscan_of(prog, c, t);
            any |= ts[t].bit >= 0;
        }
        if (any && !c->r->op_negated)
            c->flags |= BW_CR_SCAN;
        else if (any && !c->r->multi_match)
            c->flags |= BW_CR_SCAN_NOT;
        /* an operator that needs a byte skips values without one (a
         * negated one would match them); part of the scan */
        if (!(prog->flags & BW_PROG_NO_SCAN) && c->r->kind == BW_RULE_SECRULE && !c->r->op_negated && !c->r->op_macro
            && c->r->op.def && c->r->op.def->gate)
            c->gate_kind = c->r->op.def->gate(&c->r->op, c->gate);
    }
    link_skips(prog);
    publish(cc);
    local_nodes(prog);
    packed_slots(prog);
    tfn_peers(prog);
    build_steps(prog);
}
