/*
 * Folding: what the configuration alone decides is decided at start-up.
 *
 * CRS spends much of a request on rules whose outcome is fixed once the
 * configuration is read: paranoia-level gates (TX:EXECUTING_PARANOIA_LEVEL
 * "@lt 2" ... skipAfter), defaults set from crs-setup.conf constants
 * (&TX:x "@eq 0" ... setvar:tx.x=5), initial scores. This file runs every
 * phase of a program once, abstractly, at build time:
 *
 *  - the state is what is known of TX: per key a value, "absent", or
 *    unknown; keys a request can influence become unknown (a setvar in a
 *    rule whose outcome depends on the request, a name built from a macro
 *    taints every key with its constant prefix, captures taint TX:0-9, any
 *    operator may set MSC_PCRE_LIMITS_EXCEEDED);
 *  - a rule is decided when all it reads is known: its targets are TX keys
 *    (or &TX counts) with known values, its operator is a pure one whose
 *    parameter (macros expanded) is known, and on a match it would only set
 *    TX keys to values known here, log nothing, disrupt nothing and change
 *    no severity. A rule a ctl:ruleRemove… anywhere in the program could
 *    remove, or a chain with multiMatch or captures, is never decided;
 *  - paths merge where skip/skipAfter jumps land: a key stays known only if
 *    every path agrees. A phase starts from what every way of ending the
 *    phases before it leaves (the end of the phase, and every rule that can
 *    stop a phase: allow for the next phases, any disruption for logging).
 *
 * A decided rule becomes a slot that does not evaluate anything: NOP (it
 * cannot match), or APPLY (it matches: its TX changes, already computed,
 * and MATCHED_VAR as the match would leave it, then on to where the chain
 * would go). A slot no path reaches is DEAD. The decided slots at the start
 * of phase 1 are not run at all: TX as they leave it is an image the
 * executor loads when phase 1 starts (base/bw_coll.h). The image reaches
 * past rules that neither read nor write TX, up to the first that does:
 * the decided slots between them then only set MATCHED_VAR.
 *
 * Folding may only ever be exact; the differential test (tests/program/)
 * runs every CRS test request through the folded and the unfolded program
 * and compares matched rules, final TX and disposition.
 */
#include <string.h>
#include "program/bw_prog.h"
#include "base/bw_pool.h"

enum { KV_ABSENT, KV_VALUE, KV_UNKNOWN };

typedef struct {
    int kind;
    bw_str_t name;       /* spelling of the first set (KV_VALUE) */
    bw_str_t val;
} kval_t;

typedef struct {
    apr_hash_t *keys;              /* lower-case key -> kval_t* */
    apr_array_header_t *prefixes;  /* const char*, lower case: such keys are unknown */
    int all_unknown;
    unsigned long gen;             /* two states of one gen hold the same (a copy
                                    * keeps it; every change takes a new one) */
} fstate_t;

typedef struct {
    bw_program_t *prog;
    apr_pool_t *p;                 /* the program's pool: results */
    apr_pool_t *tmp;               /* scratch, destroyed at the end */
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    bw_tfn_env_t env;
    apr_array_header_t *removers;  /* const bw_ctl_t*: ctl:ruleRemove… of the program */
    const bw_var_def_t *tx_var;
    int decided, dead;
} fold_t;

/* ---- the state --------------------------------------------------------------- */

/* A gen no state had (atomic: two contexts may be built at once). */
static unsigned long new_gen(void)
{
    static unsigned long last;
    return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

static fstate_t *st_new(apr_pool_t *p)
{
    fstate_t *s = apr_pcalloc(p, sizeof(*s));
    s->keys = apr_hash_make(p);
    s->prefixes = apr_array_make(p, 4, sizeof(const char *));
    s->gen = new_gen();
    return s;
}

static fstate_t *st_copy(apr_pool_t *p, const fstate_t *a)
{
    fstate_t *s = apr_pcalloc(p, sizeof(*s));
    s->keys = apr_hash_copy(p, a->keys);
    s->prefixes = apr_array_copy(p, a->prefixes);
    s->all_unknown = a->all_unknown;
    s->gen = a->gen;
    return s;
}

static const char *lower(apr_pool_t *p, bw_str_t s)
{
    return bw_str_pdup(p, bw_str_lower(p, s));
}

static kval_t st_get(const fstate_t *s, const char *lkey)
{
    const kval_t *v = apr_hash_get(s->keys, lkey, APR_HASH_KEY_STRING);
    kval_t r;
    int i;
    if (v)
        return *v;
    memset(&r, 0, sizeof(r));
    r.kind = KV_ABSENT;
    if (s->all_unknown)
        r.kind = KV_UNKNOWN;
    for (i = 0; i < s->prefixes->nelts && r.kind == KV_ABSENT; i++) {
        const char *pre = ((const char **)s->prefixes->elts)[i];
        if (!strncmp(lkey, pre, strlen(pre)))
            r.kind = KV_UNKNOWN;
    }
    return r;
}

static void st_put(apr_pool_t *p, fstate_t *s, const char *lkey, int kind, bw_str_t name, bw_str_t val)
{
    kval_t *v = apr_palloc(p, sizeof(*v));
    v->kind = kind;
    v->name = name;
    v->val = val;
    apr_hash_set(s->keys, lkey, APR_HASH_KEY_STRING, v);
    s->gen = new_gen();
}

/* Add a tainted prefix unless one already covers it. */
static void add_prefix(fstate_t *s, const char *lpre)
{
    int i;
    for (i = 0; i < s->prefixes->nelts; i++) {
        const char *old = ((const char **)s->prefixes->elts)[i];
        if (!strncmp(lpre, old, strlen(old)))
            return;
    }
    *(const char **)apr_array_push(s->prefixes) = lpre;
    s->gen = new_gen();
}

static void st_taint(apr_pool_t *p, fstate_t *s, const char *lkey)
{
    st_put(p, s, lkey, KV_UNKNOWN, bw_str_n("", 0), bw_str_n("", 0));
}

/* Keys starting with lpre become unknown ("" = every key). */
static void st_taint_prefix(apr_pool_t *p, fstate_t *s, const char *lpre)
{
    apr_hash_index_t *hi;
    if (!*lpre) {
        s->all_unknown = 1;
        apr_hash_clear(s->keys);
        s->gen = new_gen();
        return;
    }
    add_prefix(s, lpre);
    for (hi = apr_hash_first(p, s->keys); hi; hi = apr_hash_next(hi)) {
        const char *k = apr_hash_this_key(hi);
        if (!strncmp(k, lpre, strlen(lpre)))
            st_taint(p, s, k);
    }
}

static int kv_same(kval_t a, kval_t b)
{
    if (a.kind != b.kind || a.kind == KV_UNKNOWN)
        return 0;
    return a.kind == KV_ABSENT || (bw_str_eq(a.val, b.val) && bw_str_eq(a.name, b.name));
}

/* into := into merged with b (what both paths agree on), in place: a key
 * of either that the two do not agree on becomes unknown. Only the keys'
 * values change and b's keys are added, so the walk over into's keys reads
 * b as it is and the walk over b's reads into's prefixes as they were
 * (it adds no prefix before both are done). A derived program's fold
 * merges at every undecided slot: a new table per merge was most of the
 * time a <Location> took to build. */
static void st_merge(apr_pool_t *p, fstate_t *into, const fstate_t *b)
{
    apr_hash_index_t *hi;
    int i;
    if (into->gen == b->gen)
        return;                         /* copies of one state, unchanged since */
    for (hi = apr_hash_first(p, into->keys); hi; hi = apr_hash_next(hi)) {
        const char *k = apr_hash_this_key(hi);
        const kval_t *va = apr_hash_this_val(hi);
        if (va->kind != KV_UNKNOWN && !kv_same(*va, st_get(b, k)))
            st_taint(p, into, k);
    }
    for (hi = apr_hash_first(p, b->keys); hi; hi = apr_hash_next(hi)) {
        const char *k = apr_hash_this_key(hi);
        kval_t va, vb;
        if (apr_hash_get(into->keys, k, APR_HASH_KEY_STRING))
            continue;                   /* one of into's: done above */
        va = st_get(into, k);
        vb = *(const kval_t *)apr_hash_this_val(hi);
        if (kv_same(va, vb))
            st_put(p, into, k, va.kind, va.name, va.val);
        else
            st_taint(p, into, k);
    }
    into->all_unknown = into->all_unknown || b->all_unknown;
    for (i = 0; i < b->prefixes->nelts; i++)
        add_prefix(into, ((const char **)b->prefixes->elts)[i]);
    into->gen = new_gen();
}

/* pending[i] := pending[i] merged with s (or s, when nothing reached i yet). */
static void reach(apr_pool_t *p, fstate_t **pending, int i, const fstate_t *s)
{
    if (!pending[i])
        pending[i] = st_copy(p, s);
    else
        st_merge(p, pending[i], s);
}

/* The same, giving s itself to pending[i] when nothing reached i yet: for
 * a state no one else holds and that does not change afterwards (each
 * state goes to one place this way; read by the merges that follow, it
 * is never merged into itself but as a no-op, one gen). */
static void reach_own(apr_pool_t *p, fstate_t **pending, int i, fstate_t *s)
{
    if (!pending[i])
        pending[i] = s;
    else
        st_merge(p, pending[i], s);
}

/* ---- what a rule may touch ------------------------------------------------------ */

/* Rules some ctl:ruleRemove… could remove (or change the targets of) at
 * run time are never decided here. Which ctl: can run at all is what
 * folding finds out: the first pass takes every ctl: of the program (CRS's
 * exclusion packages remove whole id ranges, from sections a disabled
 * package skips); each next pass takes only those in rules a path still
 * reaches, until that stops shrinking. Each pass is sound because the one
 * before it assumed more removals, never fewer. */
static int collect_removers(fold_t *f, int live_only)
{
    int ph, i, k;
    f->removers = apr_array_make(f->tmp, 8, sizeof(const bw_ctl_t *));
    for (ph = 1; ph <= BW_PHASES; ph++) {
        const apr_array_header_t *arr = f->prog->phase[ph];
        const bw_code_t *code = &f->prog->code[ph];
        for (i = 0; i < (live_only ? code->n : arr->nelts); i++) {
            const bw_rule_t *r;
            if (live_only && code->slots[i].kind == BW_SLOT_DEAD)
                continue;
            r = live_only ? code->slots[i].cr->r : ((bw_rule_t **)arr->elts)[i];
            for (; r; r = r->chain_next) {
                for (k = 0; r->kind != BW_RULE_MARKER && k < r->run_actions->nelts; k++) {
                    const bw_action_t *a = &((const bw_action_t *)r->run_actions->elts)[k];
                    const bw_ctl_t *c = a->data;
                    if (a->def->op == BW_A_CTL && c->kind >= BW_CTL_REMOVE_ID
                        && c->kind <= BW_CTL_REMOVE_TARGET_MSG)
                        *(const bw_ctl_t **)apr_array_push(f->removers) = c;
                }
            }
        }
    }
    return f->removers->nelts;
}

static int removable(const fold_t *f, const bw_rule_t *r)
{
    int i;
    for (i = 0; i < f->removers->nelts; i++) {
        const bw_ctl_t *c = ((const bw_ctl_t **)f->removers->elts)[i];
        if (c->ranges ? (r->id && bw_idranges_match(c->ranges, r->id))
            : (c->kind == BW_CTL_REMOVE_TAG || c->kind == BW_CTL_REMOVE_TARGET_TAG)
            ? bw_rule_has_tag_matching(r, c->re, f->md) : bw_rule_msg_matches(r, c->re, f->md))
            return 1;
    }
    return 0;
}

/* RULE.<field> of a chain's starter, when constant (defined below). */
static int rule_field(const bw_rule_t *h, apr_pool_t *p, bw_str_t sel, bw_str_t *out);

/* The constant start of a macro, lower-cased (a RULE field of the rule's
 * own starter is constant too: tx.%{rule.id}-… names one rule's keys);
 * *whole = 1 when the whole name is constant. */
static const char *macro_prefix(apr_pool_t *p, const bw_macro_t *m, const bw_rule_t *h, int *whole)
{
    const char *out = "";
    int i;
    *whole = 1;
    for (i = 0; i < m->nparts; i++) {
        bw_str_t v = m->parts[i].literal;
        if (m->parts[i].var && (m->parts[i].var->id != BW_V_RULE
                                || !rule_field(h, p, m->parts[i].key, &v))) {
            *whole = 0;
            break;
        }
        out = apr_pstrcat(p, out, bw_str_pdup(p, v), NULL);
    }
    return lower(p, bw_str_make(out));
}

/* What a rule whose outcome depends on the request may have done to TX. */
static void taint_chain(fold_t *f, fstate_t *s, const bw_rule_t *r)
{
    int k;
    st_taint(f->tmp, s, "msc_pcre_limits_exceeded");
    for (; r; r = r->chain_next) {
        if (r->lua) {   /* m.setvar can set any key */
            st_taint_prefix(f->tmp, s, "");
            return;
        }
        if (r->capture) {
            static const char *const caps[] = { "0", "1", "2", "3", "4", "5", "6", "7", "8", "9" };
            for (k = 0; k < 10; k++)
                st_taint(f->tmp, s, caps[k]);
        }
        for (k = 0; k < r->run_actions->nelts; k++) {
            const bw_action_t *a = &((const bw_action_t *)r->run_actions->elts)[k];
            const bw_setvar_t *sv = a->data;
            int whole;
            const char *pre;
            if (a->def->op != BW_A_SETVAR && a->def->op != BW_A_EXPIREVAR
                && a->def->op != BW_A_DEPRECATEVAR)
                continue;
            if (strcmp(sv->coll, "TX"))
                continue;
            pre = macro_prefix(f->tmp, sv->name, r->chain_head, &whole);
            if (a->def->op == BW_A_EXPIREVAR)
                pre = apr_pstrcat(f->tmp, "__expire_", pre, NULL);
            if (whole)
                st_taint(f->tmp, s, pre);
            else
                st_taint_prefix(f->tmp, s, pre);
        }
    }
}

/* Can the chain stop the phase (and which phases run after)? 1 allow,
 * 2 anything else that stops (deny, drop, redirect, ctl:ruleEngine). */
static int can_stop(const bw_rule_t *h)
{
    const bw_rule_t *r;
    int k;
    bw_disruptive_t d = h->disruptive;
    if (d == BW_DA_BLOCK)
        d = h->default_set ? h->default_set->disruptive : BW_DA_PASS;
    for (r = h; r; r = r->chain_next)
        for (k = 0; k < r->run_actions->nelts; k++) {
            const bw_action_t *a = &((const bw_action_t *)r->run_actions->elts)[k];
            if (a->def->op == BW_A_CTL && ((const bw_ctl_t *)a->data)->kind == BW_CTL_RULE_ENGINE)
                return 2;
        }
    if (d == BW_DA_ALLOW || d == BW_DA_ALLOW_PHASE || d == BW_DA_ALLOW_REQUEST)
        return 1;
    return d == BW_DA_PASS || d == BW_DA_UNSET || d == BW_DA_BLOCK ? 0 : 2;
}

/* ---- deciding a chain ----------------------------------------------------------- */

/* A chain being decided: the state as its actions change it, the TX
 * changes in order, MATCHED_VAR as the executor would leave it. */
typedef struct {
    fstate_t *st;
    apr_array_header_t *fx;        /* bw_fold_fx_t */
    const bw_rule_t *head;
    bw_varval_t mv;
    int has_mv, any_match;
} dec_t;

static int rule_field(const bw_rule_t *h, apr_pool_t *p, bw_str_t sel, bw_str_t *out)
{
    if (bw_str_eq_cstr_ci(sel, "id"))
        *out = bw_str_make(h->id_str);
    else if (bw_str_eq_cstr_ci(sel, "rev"))
        *out = bw_str_make(h->rev);
    else if (bw_str_eq_cstr_ci(sel, "ver"))
        *out = bw_str_make(h->ver);
    else if (bw_str_eq_cstr_ci(sel, "phase"))
        *out = bw_str_make(apr_itoa(p, h->phase));
    else if (bw_str_eq_cstr_ci(sel, "severity") && h->severity >= 0)
        *out = bw_str_make(apr_itoa(p, h->severity));
    else if (bw_str_eq_cstr_ci(sel, "msg") && h->msg && !h->msg->has_vars)
        *out = bw_str_make(h->msg->text);
    else
        return 0;
    return 1;
}

/* One macro part's value, when this state knows it. */
static int part_known(fold_t *f, const dec_t *d, const bw_macro_part_t *mp, bw_str_t *out)
{
    kval_t v;
    switch (mp->var->id) {
    case BW_V_TX:
        v = st_get(d->st, lower(f->tmp, mp->key));
        if (v.kind == KV_UNKNOWN)
            return 0;
        *out = v.kind == KV_VALUE ? v.val : bw_str_n("", 0);
        return 1;
    case BW_V_RULE:
        return rule_field(d->head, f->tmp, mp->key, out);
    case BW_V_MATCHED_VAR:          /* known once this chain matched something */
        *out = d->has_mv ? d->mv.value : bw_str_n("", 0);
        return d->any_match;
    case BW_V_MATCHED_VAR_NAME:
        *out = d->has_mv ? bw_str_make(bw_varval_name(f->tmp, &d->mv)) : bw_str_n("", 0);
        return d->any_match;
    default:
        return 0;
    }
}

static int expand_known(fold_t *f, const dec_t *d, const bw_macro_t *m, bw_str_t *out)
{
    char *buf = "";
    int i;
    if (!m->has_vars) {
        *out = m->nparts ? m->parts[0].literal : bw_str_n("", 0);
        return 1;
    }
    for (i = 0; i < m->nparts; i++) {
        bw_str_t v = m->parts[i].literal;
        if (m->parts[i].var && !part_known(f, d, &m->parts[i], &v))
            return 0;
        buf = apr_pstrcat(f->tmp, buf, bw_str_pdup(f->tmp, v), NULL);
    }
    *out = bw_str_make(buf);
    return 1;
}

/* Operators whose verdict depends on the value and parameter alone. */
static int pure_op(const bw_op_def_t *def)
{
    static const char *const pure[] = {
        "rx", "pm", "pmFromFile", "pmf", "streq", "contains", "containsWord", "beginsWith",
        "endsWith", "within", "strmatch", "eq", "ge", "gt", "le", "lt", "unconditionalMatch",
        "noMatch", "validateByteRange", "validateUrlEncoding", "validateUtf8Encoding", NULL
    };
    int i;
    for (i = 0; pure[i]; i++)
        if (!strcmp(def->name, pure[i]))
            return 1;
    return 0;
}

/* The operator as the link would run it (macros expanded), or NULL. */
static const bw_op_t *known_op(fold_t *f, const dec_t *d, const bw_rule_t *r)
{
    bw_op_t *op;
    bw_op_cenv_t env;
    bw_str_t p;
    char *err = NULL;
    if (!pure_op(r->op.def))
        return NULL;
    if (!r->op_macro)
        return &r->op;
    if (!expand_known(f, d, r->op_macro, &p))
        return NULL;
    op = apr_pcalloc(f->tmp, sizeof(*op));
    op->def = r->op.def;
    op->param = bw_str_pdup(f->tmp, p);
    op->param_len = p.len;
    memset(&env, 0, sizeof(env));
    env.pool = f->tmp;
    env.temp_pool = f->tmp;
    env.file = r->file;
    env.line = r->line;
    env.runtime = 1;
    return op->def->compile && op->def->compile(op, &env, &err) != 0 ? NULL : op;
}

/* A setvar on TX with everything known: record the change, apply it. */
static int apply_setvar(fold_t *f, dec_t *d, const bw_setvar_t *sv)
{
    bw_str_t name, val = bw_str_n("", 0);
    const char *lk;
    kval_t cur;
    bw_fold_fx_t *fx;
    if (strcmp(sv->coll, "TX") || !expand_known(f, d, sv->name, &name)
        || (sv->value && !expand_known(f, d, sv->value, &val)))
        return 0;
    lk = lower(f->tmp, name);
    cur = st_get(d->st, lk);
    if (cur.kind == KV_UNKNOWN || !strcmp(lk, "msc_pcre_limits_exceeded"))
        return 0;
    if (sv->op == BW_SV_ADD || sv->op == BW_SV_SUB) {
        long n = cur.kind == KV_VALUE ? bw_str_to_num(cur.val) : 0;
        n = sv->op == BW_SV_ADD ? n + bw_str_to_num(val) : n - bw_str_to_num(val);
        val = bw_str_make(apr_ltoa(f->tmp, n));
    }
    fx = apr_array_push(d->fx);
    fx->unset = sv->op == BW_SV_DEL;
    fx->key.name = name;
    fx->value = val;
    if (fx->unset)
        st_put(f->tmp, d->st, lk, KV_ABSENT, bw_str_n("", 0), bw_str_n("", 0));
    else   /* a key keeps the spelling it was first set with */
        st_put(f->tmp, d->st, lk, KV_VALUE, cur.kind == KV_VALUE ? cur.name : name, val);
    return 1;
}

/* A match of link r on value v: what on_match and the actions do. */
static int decide_match(fold_t *f, dec_t *d, const bw_rule_t *r, const bw_varval_t *v,
                        bw_str_t value, int is_last)
{
    int k;
    if (r->capture)
        return 0;
    d->any_match = 1;
    d->mv = *v;
    d->mv.value = value;
    d->has_mv = v->var != NULL;
    for (k = 0; k < r->run_actions->nelts; k++) {
        const bw_action_t *a = &((const bw_action_t *)r->run_actions->elts)[k];
        if (a->def->op != BW_A_SETVAR || !apply_setvar(f, d, a->data))
            return 0;
    }
    if (is_last) {
        const bw_rule_t *h = r->chain_head;
        bw_disruptive_t dis = h->disruptive == BW_DA_BLOCK && h->default_set
                            ? h->default_set->disruptive : h->disruptive;
        if (h->log != 0 || h->severity >= 0
            || !(dis == BW_DA_PASS || dis == BW_DA_BLOCK || dis == BW_DA_UNSET))
            return 0;
    }
    return 1;
}

/* The values of a link's targets, when all are known TX keys. */
static int known_values(fold_t *f, const dec_t *d, const bw_rule_t *r, apr_array_header_t *out)
{
    const bw_target_t *t = (const bw_target_t *)r->targets->elts;
    int i;
    for (i = 0; i < r->targets->nelts; i++) {
        kval_t v;
        bw_varval_t *vv;
        if (t[i].is_exclusion || t[i].var->id != BW_V_TX || !t[i].selector.len
            || t[i].selector_re || t[i].selector_macro)
            return 0;
        v = st_get(d->st, lower(f->tmp, t[i].selector));
        if (v.kind == KV_UNKNOWN)
            return 0;
        if (!t[i].is_count && v.kind == KV_ABSENT)
            continue;
        vv = apr_array_push(out);
        vv->var = t[i].var;
        vv->is_count = t[i].is_count;
        vv->key = t[i].is_count ? t[i].selector : v.name;
        vv->value = t[i].is_count ? bw_str_make(v.kind == KV_VALUE ? "1" : "0") : v.val;
    }
    return 1;
}

/* Decide one link: 1 matched, 0 did not, -1 not decidable. */
static int decide_link(fold_t *f, dec_t *d, const bw_rule_t *r, int is_last)
{
    apr_array_header_t *vals = apr_array_make(f->tmp, 4, sizeof(bw_varval_t));
    const bw_op_t *op;
    int i, matched = 0;
    if (r->multi_match || (r->kind != BW_RULE_SECRULE && r->kind != BW_RULE_SECACTION))
        return -1;
    op = known_op(f, d, r);
    if (!op)
        return -1;
    if (r->kind == BW_RULE_SECACTION)
        apr_array_push(vals);   /* one value with no variable, all zero */
    else if (!known_values(f, d, r, vals))
        return -1;
    for (i = 0; i < vals->nelts; i++) {
        const bw_varval_t *v = &((const bw_varval_t *)vals->elts)[i];
        bw_str_t tv = v->value;
        bw_op_run_t run;
        int k, rc;
        for (k = 0; k < r->ntfns; k++)
            r->tfns[k]->fn(&f->env, f->tmp, tv, &tv);
        bw_op_run_clear(&run);
        run.pool = f->tmp;
        run.var_name = BW_OP_VAR_PLACEHOLDER;
        run.md = f->md;
        run.mctx = f->mctx;
        run.ncaptures = -1;
        run.no_msg = 1;
        rc = op->def->execute(op, &run, tv);
        if (rc < 0)
            return -1;
        if (r->op_negated)
            rc = !rc;
        if (!rc)
            continue;
        if (!decide_match(f, d, r, v, tv, is_last))
            return -1;
        matched = 1;
    }
    return matched;
}

/* Decide a chain from state in: 1 and *d filled (d->st is the state after
 * it; returns through *matched whether the whole chain matched), or 0. */
static int decide_chain(fold_t *f, const fstate_t *in, const bw_rule_t *h, dec_t *d, int *matched)
{
    const bw_rule_t *r;
    memset(d, 0, sizeof(*d));
    *matched = 0;
    if (removable(f, h))
        return 0;
    d->st = st_copy(f->tmp, in);
    d->fx = apr_array_make(f->tmp, 4, sizeof(bw_fold_fx_t));
    d->head = h;
    for (r = h; r; r = r->chain_next) {
        int rc = decide_link(f, d, r, r->chain_next == NULL);
        if (rc < 0)
            return 0;
        if (rc == 0)
            return 1;
    }
    *matched = 1;
    return 1;
}

/* ---- phases ---------------------------------------------------------------------- */

/* Record a decided slot: NOP, or APPLY with its changes and MATCHED_VAR. */
static void fold_slot(fold_t *f, bw_slot_t *s, const dec_t *d, int next)
{
    int i;
    f->decided++;
    s->next = next;
    if (!d->any_match && !d->fx->nelts) {
        s->kind = BW_SLOT_NOP;
        return;
    }
    s->kind = BW_SLOT_APPLY;
    s->nfx = d->fx->nelts;
    s->fx = apr_palloc(f->p, sizeof(bw_fold_fx_t) * (size_t)(s->nfx + 1));
    for (i = 0; i < s->nfx; i++) {
        bw_fold_fx_t fx = ((bw_fold_fx_t *)d->fx->elts)[i];
        fx.key = bw_key_make(bw_str_n(apr_pmemdup(f->p, fx.key.name.data, fx.key.name.len + 1),
                                      fx.key.name.len));
        fx.value = bw_str_n(apr_pmemdup(f->p, fx.value.data, fx.value.len + 1), fx.value.len);
        ((bw_fold_fx_t *)s->fx)[i] = fx;
    }
    s->replay_mv = d->any_match;
    s->has_mv = d->has_mv;
    s->mv = d->mv;
    if (d->has_mv) {
        s->mv.key = bw_str_n(apr_pmemdup(f->p, d->mv.key.data, d->mv.key.len + 1), d->mv.key.len);
        s->mv.value = bw_str_n(apr_pmemdup(f->p, d->mv.value.data, d->mv.value.len + 1),
                               d->mv.value.len);
    }
}

/* Run phase ph abstractly from entry. *end: the state at its end;
 * *allowed / *stopped merge in the states where an allow / any stop
 * leaves the phase. */
static void fold_phase(fold_t *f, int ph, const fstate_t *entry, fstate_t **end,
                       fstate_t **allowed, fstate_t **stopped)
{
    bw_code_t *code = &f->prog->code[ph];
    fstate_t **pending = apr_pcalloc(f->tmp, sizeof(fstate_t *) * (size_t)(code->n + 1));
    int i;
    pending[0] = st_copy(f->tmp, entry);
    for (i = 0; i < code->n; i++) {
        bw_slot_t *s = &code->slots[i];
        dec_t d;
        int matched, stop;
        if (!pending[i]) {
            s->kind = BW_SLOT_DEAD;
            f->dead++;
            continue;
        }
        if (decide_chain(f, pending[i], s->cr->r, &d, &matched)) {
            int next = matched ? s->next_on_match : i + 1;
            fold_slot(f, s, &d, next);
            reach_own(f->tmp, pending, next, d.st);   /* decide_chain's copy */
            continue;
        }
        /* jumps only go forward: no slot after this one reads pending[i],
         * so it changes in place (copying a state of a few hundred keys
         * twice per slot was most of a fold's time and scratch memory) */
        d.st = pending[i];
        taint_chain(f, d.st, s->cr->r);
        reach_own(f->tmp, pending, i + 1, d.st);
        reach(f->tmp, pending, s->next_on_match, d.st);
        stop = can_stop(s->cr->r);
        if (stop == 1)
            reach(f->tmp, allowed, 0, d.st);
        if (stop)
            reach(f->tmp, stopped, 0, d.st);
    }
    *end = pending[code->n] ? pending[code->n] : st_copy(f->tmp, entry);
    if (!pending[code->n]) {
        (*end)->all_unknown = 1;   /* no path ends the phase: nothing follows it, say so */
        (*end)->gen = new_gen();
    }
}

/* What a transaction does with TX past the image, seen once here: how
 * many keys it may add (one per distinct constant name a setvar names,
 * the captures, room for names built from macros), returned; the
 * TX:/regex/ targets it reads, into sels (bw_target_t*). */
static size_t tx_beyond_image(fold_t *f, const bw_coll_t *tx, apr_array_header_t *sels)
{
    apr_hash_t *seen = apr_hash_make(f->tmp);
    size_t more = 10 + 16;
    int ph, i, k;
    for (ph = 1; ph <= BW_PHASES; ph++) {
        const apr_array_header_t *arr = f->prog->phase[ph];
        for (i = 0; i < arr->nelts; i++) {
            const bw_rule_t *r = ((bw_rule_t **)arr->elts)[i];
            for (; r && r->kind != BW_RULE_MARKER; r = r->chain_next) {
                for (k = 0; k < r->targets->nelts; k++) {
                    const bw_target_t *t = &((const bw_target_t *)r->targets->elts)[k];
                    if (t->var->id == BW_V_TX && t->selector_re && !t->is_exclusion)
                        *(const bw_target_t **)apr_array_push(sels) = t;
                }
                for (k = 0; k < r->run_actions->nelts; k++) {
                    const bw_action_t *a = &((const bw_action_t *)r->run_actions->elts)[k];
                    const bw_setvar_t *sv = a->data;
                    const char *lk;
                    if (a->def->op != BW_A_SETVAR || strcmp(sv->coll, "TX") || sv->name->has_vars)
                        continue;
                    lk = lower(f->tmp, sv->key.name);
                    if (apr_hash_get(seen, lk, APR_HASH_KEY_STRING) || bw_coll_find(tx, &sv->key))
                        continue;
                    apr_hash_set(seen, lk, APR_HASH_KEY_STRING, "");
                    more++;
                }
            }
        }
    }
    return more;
}

/* The keys folded slots set, matched against the image's selections
 * once, here: a transaction that sets them does not run PCRE2 on them. */
static void fx_selections(fold_t *f, const bw_coll_image_t *im)
{
    int ph, i, k;
    for (ph = 1; ph <= BW_PHASES; ph++)
        for (i = 0; i < f->prog->code[ph].n; i++) {
            const bw_slot_t *s = &f->prog->code[ph].slots[i];
            for (k = 0; s->kind == BW_SLOT_APPLY && k < s->nfx; k++)
                if (!s->fx[k].unset)   /* the program's own, built above */
                    bw_coll_image_key(f->p, im, &((bw_fold_fx_t *)s->fx)[k].key, f->md);
        }
}

/* Does macro m (NULL: none) read TX? */
static int reads_tx(const bw_macro_t *m)
{
    int i;
    for (i = 0; m && i < m->nparts; i++)
        if (m->parts[i].var && m->parts[i].var->id == BW_V_TX)
            return 1;
    return 0;
}

/* A chain the image can be built past: it neither reads TX (targets,
 * macros) nor changes it (setvar and the like, captures, Lua), cannot
 * stop the phase or jump, and its actions are only ctl:s that change how
 * the body is read or logged, and setenv. Run at its place, it sees and
 * leaves TX as the unfolded program would, whatever the image holds
 * already; but for TX:MSC_PCRE_LIMITS_EXCEEDED, which any operator may
 * set (the executor rebuilds TX in order then: bw_exec.c). */
static int tx_neutral(const bw_code_t *code, int i)
{
    const bw_slot_t *s = &code->slots[i];
    const bw_rule_t *r;
    int k;
    if (s->kind != BW_SLOT_RUN || s->next_on_match != i + 1 || can_stop(s->cr->r))
        return 0;
    for (r = s->cr->r; r; r = r->chain_next) {
        if (r->lua || r->capture || reads_tx(r->op_macro) || reads_tx(r->msg)
            || reads_tx(r->logdata) || reads_tx(r->redirect))
            return 0;
        for (k = 0; k < r->targets->nelts; k++) {
            const bw_target_t *t = &((const bw_target_t *)r->targets->elts)[k];
            if (t->var->id == BW_V_TX || reads_tx(t->selector_macro))
                return 0;
        }
        for (k = 0; k < r->run_actions->nelts; k++) {
            const bw_action_t *a = &((const bw_action_t *)r->run_actions->elts)[k];
            if (a->def->op == BW_A_SETENV) {
                const bw_setenv_t *se = a->data;
                if (reads_tx(se->name) || reads_tx(se->value))
                    return 0;
                continue;
            }
            if (a->def->op != BW_A_CTL)
                return 0;
            switch (((const bw_ctl_t *)a->data)->kind) {
            case BW_CTL_REQBODY_PROCESSOR: case BW_CTL_REQBODY_ACCESS: case BW_CTL_REQBODY_LIMIT:
            case BW_CTL_RESBODY_ACCESS: case BW_CTL_RESBODY_LIMIT: case BW_CTL_FORCE_REQBODY_VAR:
            case BW_CTL_AUDIT_ENGINE: case BW_CTL_AUDIT_PARTS: case BW_CTL_IGNORED:
                break;
            default:
                return 0;
            }
        }
    }
    return 1;
}

/* TX as phase 1 leaves it up to its first rule that depends on the
 * request in a way that matters to TX is the same in every transaction:
 * build it once; the executor loads it and starts at the first slot that
 * is not decided (phase1_start). The decided slots before that are not
 * run at all; those after it, up to image_end, only set MATCHED_VAR (their
 * TX changes are in the image), and the rules between them are run as
 * they are: they neither read nor write TX (tx_neutral). In CRS, the
 * first rules of phase 1 (bulwark.conf-recommended's body processors)
 * come before crs-setup.conf's and REQUEST-901's constants. */
static void phase1_image(fold_t *f)
{
    bw_program_t *prog = f->prog;
    const bw_code_t *code = &prog->code[1];
    bw_coll_t *tx = bw_coll_create(f->p, "TX");
    apr_array_header_t *sels = apr_array_make(f->tmp, 8, sizeof(const bw_target_t *));
    apr_array_header_t *path = apr_array_make(f->p, 32, sizeof(int));
    bw_coll_image_t *im;
    int i = 0, k, start = -1;
    while (i < code->n) {
        const bw_slot_t *s = &code->slots[i];
        if (s->kind == BW_SLOT_RUN && tx_neutral(code, i)) {
            if (start < 0)
                start = i;
            i++;
            continue;
        }
        if (s->kind != BW_SLOT_NOP && s->kind != BW_SLOT_APPLY)
            break;
        if (s->kind == BW_SLOT_APPLY && s->nfx) {
            bw_slot_apply_fx(f->p, tx, s);
            *(int *)apr_array_push(path) = i;
        }
        if (start < 0 && s->kind == BW_SLOT_APPLY && s->replay_mv)
            prog->start_mv = s;
        i = s->next;
    }
    prog->phase1_start = start < 0 ? i : start;
    prog->image_end = i;
    prog->image_path = (const int *)path->elts;
    prog->image_npath = path->nelts;
    /* the image is sized for what comes after it, and knows which of
     * its names every TX:/regex/ target selects */
    im = bw_coll_image(f->p, tx, tx_beyond_image(f, tx, sels));
    for (k = 0; k < sels->nelts; k++) {
        const bw_target_t *t = ((const bw_target_t **)sels->elts)[k];
        bw_coll_image_select(f->p, im, t->selector_re, t->selector_lit, f->md);
    }
    fx_selections(f, im);
    prog->tx_image = im;
}

static int same_rules(const apr_array_header_t *a, const apr_array_header_t *b)
{
    return a->nelts == b->nelts && !memcmp(a->elts, b->elts, sizeof(bw_rule_t *) * (size_t)a->nelts);
}

/* Every slot back to RUN (before a pass). */
static void unfold(bw_program_t *prog)
{
    int ph, i;
    for (ph = 1; ph <= BW_PHASES; ph++)
        for (i = 0; i < prog->code[ph].n; i++) {
            bw_slot_t *s = &prog->code[ph].slots[i];
            s->kind = BW_SLOT_RUN;
            s->nfx = 0;
            s->fx = NULL;
            s->replay_mv = 0;
        }
}

/* One pass over all phases with the removers in f. */
static void fold_pass(fold_t *f, const bw_program_t *parent)
{
    bw_program_t *prog = f->prog;
    fstate_t *entry, *end, *allowed = NULL, *stopped = NULL, *next, *logp;
    int ph;
    f->decided = f->dead = 0;
    entry = st_new(f->tmp);
    fold_phase(f, 1, entry, &end, &allowed, &stopped);
    next = st_copy(f->tmp, end);
    if (allowed)
        st_merge(f->tmp, next, allowed);
    /* phase 1 runs with the program of the server, later phases with this
     * one: what phase 1 left is known only if the two have the same rules */
    if (parent && (!same_rules(parent->phase[1], prog->phase[1])
                   || parent->settings.unicode_map != prog->settings.unicode_map))
        st_taint_prefix(f->tmp, next, "");
    logp = st_copy(f->tmp, next);
    for (ph = 2; ph <= 4; ph++) {
        fold_phase(f, ph, next, &end, &allowed, &stopped);
        st_merge(f->tmp, logp, end);
        next = end;
        if (allowed)
            st_merge(f->tmp, next, allowed);
    }
    if (stopped)
        st_merge(f->tmp, logp, stopped);
    st_merge(f->tmp, logp, next);
    fold_phase(f, 5, logp, &end, &allowed, &stopped);
}

void bw_program_fold(bw_program_t *prog, const bw_program_t *parent)
{
    fold_t f;
    int n, pass;

    memset(&f, 0, sizeof(f));
    f.prog = prog;
    f.p = prog->pool;
    bw_pool_create_scratch(&f.tmp, prog->pool);
    f.md = pcre2_match_data_create(32, NULL);
    f.mctx = pcre2_match_context_create(NULL);
    pcre2_set_match_limit(f.mctx, (uint32_t)prog->settings.pcre_match_limit);
    pcre2_set_depth_limit(f.mctx, (uint32_t)prog->settings.pcre_recursion_limit);
    f.env.unicode_map = prog->settings.unicode_map;
    n = collect_removers(&f, 0);
    for (pass = 0; pass < 16; pass++) {
        int m;
        fold_pass(&f, parent);
        m = collect_removers(&f, 1);
        if (m >= n)
            break;
        n = m;
        unfold(prog);
    }
    phase1_image(&f);
    prog->folded = f.decided;
    prog->dead = f.dead;
    pcre2_match_data_free(f.md);
    pcre2_match_context_free(f.mctx);
    apr_pool_destroy(f.tmp);
}
