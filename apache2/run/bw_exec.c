/*
 * Running rules: ModSecurity 2.9 semantics.
 *  - A rule expands its targets, drops excluded values (!VAR, ctl:
 *    ruleRemoveTarget…), transforms each value and runs the operator.
 *  - Every matching value runs the rule's non-disruptive actions (setvar…)
 *    at once; in the last link of a chain (or a rule without chain) it also
 *    logs and applies the chain starter's disruptive action.
 *  - A chain goes on to its next link only when the link matched.
 *  - skip / skipAfter take effect when the whole chain matched.
 *  - In DetectionOnly, disruptive actions are logged, never applied.
 */
#include <string.h>
#include <time.h>
#include "run/bw_run.h"

/* ---- removals (ctl:ruleRemove…) --------------------------------------- */

static int removal_hits_rule(const bw_tx_t *tx, const bw_removal_t *rm, const bw_rule_t *r)
{
    switch (rm->kind) {
    case 0: return r->id && bw_idranges_match(rm->ranges, r->id);
    case 1: return bw_rule_has_tag_matching(r, rm->re, tx->md);
    default: return bw_rule_msg_matches(r, rm->re, tx->md);
    }
}

int bw_tx_rule_removed(const bw_tx_t *tx, const bw_rule_t *r)
{
    int i;
    for (i = 0; i < tx->removals->nelts; i++) {
        const bw_removal_t *rm = &((const bw_removal_t *)tx->removals->elts)[i];
        if (!rm->target && removal_hits_rule(tx, rm, r))
            return 1;
    }
    return 0;
}

int bw_tx_target_excluded(const bw_tx_t *tx, const bw_rule_t *r, const bw_varval_t *v)
{
    int i;
    for (i = 0; i < tx->removals->nelts; i++) {
        const bw_removal_t *rm = &((const bw_removal_t *)tx->removals->elts)[i];
        if (rm->target && bw_target_covers(rm->target, v, tx->md) && removal_hits_rule(tx, rm, r->chain_head))
            return 1;
    }
    return 0;
}

/* ---- operator ----------------------------------------------------------------- */

static const bw_op_t *runtime_op(bw_tx_t *tx, const bw_crule_t *c, char **err)
{
    const bw_rule_t *r = c->r;
    bw_op_t *op;
    bw_op_cenv_t env;
    bw_str_t p;
    if (!(c->flags & BW_CR_OP_MACRO))   /* the link's copy: no line of the rule read */
        return &c->op;
    op = apr_pcalloc(tx->pool, sizeof(*op));
    p = bw_macro_expand(tx, r->op_macro);
    op->def = r->op.def;
    op->param = bw_str_pdup(tx->pool, p);
    op->param_len = p.len;
    env.pool = tx->pool;
    env.temp_pool = tx->scratch;
    env.file = r->file;
    env.line = r->line;
    env.runtime = 1;
    if (op->def->compile && op->def->compile(op, &env, err) != 0)
        return NULL;
    return op;
}

/* The operator's message with the placeholder replaced by the value's name. */
static const char *with_var_name(bw_tx_t *tx, const char *msg, const bw_varval_t *v)
{
    const char *at = strstr(msg, BW_OP_VAR_PLACEHOLDER);
    if (!at)
        return msg;
    return apr_pstrcat(tx->pool, apr_pstrndup(tx->pool, msg, (apr_size_t)(at - msg)),
                       v->var ? bw_varval_name(tx->pool, v) : "",
                       with_var_name(tx, at + sizeof(BW_OP_VAR_PLACEHOLDER) - 1, v), NULL);
}

/* What a matching operator found replaces the collection it names (GEO
 * holds the last successful @geoLookup's record, nothing of an earlier one). */
static void fill_collection(bw_tx_t *tx, const bw_op_run_t *run)
{
    bw_coll_t *c = bw_tx_collection(tx, run->fill_coll, 1);
    int i;
    bw_coll_clear(tx->pool, c);
    for (i = 0; i < run->nfill; i++)
        bw_coll_set(tx->pool, c, run->fill[i].name, run->fill[i].value);
}

/* %{macros} in an operator's text (@rsub's replacement), expanded now;
 * made only when the text has one, which the operator knows at start-up. */
static bw_str_t expand_text(void *host, bw_str_t text)
{
    bw_tx_t *tx = host;
    char *err = NULL;
    const bw_macro_t *m = bw_macro_compile(tx->pool, bw_str_pdup(tx->pool, text), &err);
    return m ? bw_macro_expand(tx, m) : text;
}

/* @validateHash's key, as the transaction has it when the rule runs. */
static bw_str_t tx_hash_key(void *host)
{
    return bw_tx_hash_key(host);
}

/* The slot of phase 1 below img_end whose rule is running, or -1. */
static int imaged_slot_running(const bw_tx_t *tx)
{
    const bw_program_t *prog = tx->prog;
    const bw_code_t *code = &prog->code[BW_PHASE_REQUEST_HEADERS];
    int j;
    if (tx->cur_phase != BW_PHASE_REQUEST_HEADERS || !tx->cur_rule)
        return -1;
    for (j = prog->phase1_start; j < tx->img_end; j++)
        if (code->slots[j].kind == BW_SLOT_RUN
            && code->slots[j].cr->r == tx->cur_rule->chain_head)
            return j;
    return -1;
}

/* An operator hit a PCRE2 limit: TX:MSC_PCRE_LIMITS_EXCEEDED. Running
 * phase 1 below img_end, TX already holds the changes of the decided
 * slots ahead (bw_fold.c: phase1_image); a new key goes before theirs,
 * as in the unfolded program, so TX is built again in that order (rare:
 * the rules there are few and seldom run PCRE2 at all). */
static void limit_hit(bw_tx_t *tx)
{
    static const bw_str_t name = { "MSC_PCRE_LIMITS_EXCEEDED", 24 };
    const bw_program_t *prog = tx->prog;
    const bw_code_t *code = &prog->code[BW_PHASE_REQUEST_HEADERS];
    int k, at;
    if (bw_coll_get(tx->tx_coll, name) || (at = imaged_slot_running(tx)) < 0) {
        bw_coll_set(tx->pool, tx->tx_coll, name, bw_str_make("1"));
        return;
    }
    bw_coll_clear(tx->pool, tx->tx_coll);
    for (k = 0; k < prog->image_npath && prog->image_path[k] < at; k++)
        bw_slot_apply_fx(tx->pool, tx->tx_coll, &code->slots[prog->image_path[k]]);
    bw_coll_set(tx->pool, tx->tx_coll, name, bw_str_make("1"));
    for (; k < prog->image_npath; k++)
        bw_slot_apply_fx(tx->pool, tx->tx_coll, &code->slots[prog->image_path[k]]);
}

/* What run_op starts each operator run from, for the phase about to run
 * (the configuration's parts are the program's; the rest stays zero). */
static void run_template(bw_tx_t *tx)
{
    bw_op_run_t *run = &tx->run0;
    bw_op_run_clear(run);
    run->pool = tx->pool;
    run->var_name = BW_OP_VAR_PLACEHOLDER;
    run->md = tx->md;
    run->mctx = tx->mctx;
    run->spawn = &tx->spawn;
    run->ncaptures = -1;
    run->geo = tx->cfg->geo;
    run->gsb = tx->cfg->gsb;
    run->script = bw_lua_tx_call;   /* SecRuleScript, @inspectFile x.lua */
    run->script_host = tx;
    run->expand = expand_text;
}

/* 1 match, 0 no match, -1 error (logged). */
static int run_op(bw_tx_t *tx, const bw_crule_t *c, const bw_op_t *op, const bw_varval_t *v,
                  bw_str_t value, bw_op_run_t *run)
{
    int rc;
    tx->stats.op_runs++;
    /* the phase's template (run_template), captures left as they are */
    memcpy(run, &tx->run0, offsetof(bw_op_run_t, captures));
    run->capture = (c->flags & BW_CR_CAPTURE) != 0;
    run->xml_doc = tx->body_res.xml_doc;
    /* only the last link's message is logged (perform_disruptive); a
     * negated operator's own message never is (its match is the rule's
     * non-match, and a non-match gets the message built below) */
    run->no_msg = (c->flags & BW_CR_NO_MSG) != 0;
    if (tx->hash_enforcement) {
        run->hash = &tx->cfg->hash;
        run->hash_key = tx_hash_key;
    }
    if (op->def->flags & BW_OP_STREAM)
        run->stream = bw_tx_stream_of(v) >= 0;
    rc = op->def->execute(op, run, value);
    if (rc >= 0 && run->rewritten)
        bw_tx_stream_rewrite(tx, v, run->rewrite);
    if (rc < 0) {
        const bw_rule_t *r = c->r, *h = r->chain_head;
        if (run->error)
            run->error = with_var_name(tx, run->error, v);
        if (run->limit_hit)
            limit_hit(tx);
        bw_tx_log_message(tx, 0, "Rule %s [file \"%s\"] [line \"%d\"]: operator @%s failed: %s",
                          h->id_str ? h->id_str : "-", r->file, r->line, op->def->name,
                          run->error ? run->error : "error");
        return -1;
    }
    if (rc == 1 && run->fill_coll)
        fill_collection(tx, run);
    if (rc == 1 && run->msg)
        run->msg = with_var_name(tx, run->msg, v);
    if (c->flags & BW_CR_NEGATED) {
        if (rc)
            return 0;
        if ((c->flags & BW_CR_QUIET) || c->next)
            return 1;
        run->var_name = v->var ? bw_varval_name(tx->pool, v) : "";
        run->msg = apr_psprintf(tx->pool, "Match of \"%s %s\" against \"%s\" required.",
                                op->def->name, bw_op_log_escape(tx->pool, bw_str_make(op->param), 252),
                                run->var_name);
        run->ncaptures = -1;
        return 1;
    }
    return rc;
}

/* Transform, then run the operator (after each step with multiMatch). */
static int eval_value(bw_tx_t *tx, const bw_crule_t *c, const bw_op_t *op, const bw_varval_t *v,
                      bw_str_t *final, bw_op_run_t *run)
{
    const bw_rule_t *r = c->r;
    bw_str_t cur = v->value;
    int i;
    if (!r->multi_match) {
        *final = bw_tfn_apply(tx, r->tfns, r->ntfns, cur);
        return run_op(tx, c, op, v, *final, run);
    }
    /* multiMatch: the operator sees the value before and after every
     * transformation that changed it */
    *final = cur;
    if (run_op(tx, c, op, v, cur, run) == 1)
        return 1;
    for (i = 0; i < r->ntfns; i++) {
        bw_str_t out;
        int changed = r->tfns[i]->fn(&tx->tfn_env, tx->pool, cur, &out);
        cur = out;
        if (changed && run_op(tx, c, op, v, cur, run) == 1) {
            *final = cur;
            return 1;
        }
    }
    return 0;
}

/* ---- disruptive actions and logging ---------------------------------------- */

static const char *disruptive_prefix(bw_tx_t *tx, const bw_rule_t *h, bw_disruptive_t d,
                                     int status, const char *url)
{
    int phase = h->phase;
    if (tx->engine_mode != BW_ENGINE_ON)
        return "Warning.";
    switch (d) {
    case BW_DA_DENY:
        return apr_psprintf(tx->pool, "Access denied with code %d (phase %d).", status, phase);
    case BW_DA_DROP:
        return apr_psprintf(tx->pool, "Access denied with connection close (phase %d).", phase);
    case BW_DA_REDIRECT:
        return apr_psprintf(tx->pool, "Access denied with redirection to %s using status %d (phase %d).",
                            url, status, phase);
    case BW_DA_PROXY:   /* the words mod_security2 logs, which log watchers know */
        if (phase > BW_PHASE_REQUEST_BODY)
            return apr_psprintf(tx->pool, "Access denied with code %d (phase %d) (proxy works in "
                                "phases 1 and 2 only: the response has started).", status, phase);
        return apr_psprintf(tx->pool, "Access denied using proxy to (phase %d) %s.", phase, url);
    case BW_DA_ALLOW:
    case BW_DA_ALLOW_PHASE:
    case BW_DA_ALLOW_REQUEST:
        return apr_psprintf(tx->pool, "Access allowed (phase %d).", phase);
    default:
        return "Warning.";
    }
}

static void record_and_log(bw_tx_t *tx, const bw_rule_t *h, const char *prefix,
                           const char *op_msg, int intercepts)
{
    bw_alert_t al;
    bw_match_record_t *m;
    memset(&al, 0, sizeof(al));
    al.rule = h;
    al.phase = h->phase;
    al.prefix = prefix;
    al.op_msg = op_msg;
    al.file = h->file;
    al.line = h->line;
    al.id = h->id_str;
    al.rev = h->rev;
    al.ver = h->ver;
    al.msg = h->msg ? bw_str_pdup(tx->pool, bw_macro_expand(tx, h->msg)) : NULL;
    al.data = h->logdata ? bw_str_pdup(tx->pool, bw_macro_expand(tx, h->logdata)) : NULL;
    al.severity = h->severity;
    al.maturity = h->maturity;
    al.accuracy = h->accuracy;
    al.tags = h->tags;
    al.is_disruptive = intercepts;
    al.noauditlog = h->auditlog == 0;
    m = apr_array_push(tx->matches);
    m->rule = h;
    m->id = al.id;
    m->msg = al.msg;
    m->data = al.data;
    m->severity = al.severity;
    m->tags = al.tags;
    m->phase = tx->cur_rule ? h->phase : 0;
    m->op_msg = op_msg;
    /* as in mod_security2, noauditlog keeps a match from making the
     * transaction relevant (bw_audit reads tx->matches), not out of a
     * record written anyway */
    if (tx->audit_engine != 0) {
        const char *text = bw_alert_format(tx->pool, tx, &al);
        if (!strncmp(text, "ModSecurity: ", 13))
            text += 13;
        *(const char **)apr_array_push(tx->audit_msgs) = text;
    }
    if (tx->cb && tx->cb->alert)
        tx->cb->alert(tx->cb->baton, tx, &al);
}

/* What the glue is asked to do; a proxy too late to happen is a deny. */
static bw_disposition_t disposition_of(bw_disruptive_t d, int phase)
{
    switch (d) {
    case BW_DA_DROP:
        return BW_DISP_DROP;
    case BW_DA_REDIRECT:
        return BW_DISP_REDIRECT;
    case BW_DA_PROXY:
        return phase > BW_PHASE_REQUEST_BODY ? BW_DISP_DENY : BW_DISP_PROXY;
    default:
        return BW_DISP_DENY;
    }
}

static void perform_disruptive(bw_tx_t *tx, const bw_rule_t *h, const char *op_msg)
{
    bw_disruptive_t d = h->disruptive;
    int status = h->status, intercept = 0;
    const char *url = NULL;
    const bw_macro_t *redirect = h->redirect;

    if (d == BW_DA_BLOCK) {
        const bw_rule_t *def = h->default_set;
        d = def ? def->disruptive : BW_DA_PASS;
        if (!status && def)
            status = def->status;
        if (def)    /* block under redirect:URL goes to that URL */
            redirect = def->redirect;
        if (d == BW_DA_BLOCK)
            d = BW_DA_PASS;
    }
    if (h->severity >= 0 && h->severity < tx->highest_severity)
        tx->highest_severity = h->severity;
    if (d == BW_DA_DENY && !status)
        status = 403;
    if (d == BW_DA_REDIRECT || d == BW_DA_PROXY)
        url = redirect ? bw_str_pdup(tx->pool, bw_macro_expand(tx, redirect)) : "/";
    if (d == BW_DA_REDIRECT && status != 301 && status != 302 && status != 303 && status != 307)
        status = 302;
    if (d == BW_DA_PROXY && h->phase > BW_PHASE_REQUEST_BODY)
        status = 500;   /* the handler has run, nothing is left to proxy: mod_security2's answer */
    if (tx->engine_mode == BW_ENGINE_ON) {
        switch (d) {
        case BW_DA_DENY:
        case BW_DA_DROP:
        case BW_DA_REDIRECT:
        case BW_DA_PROXY:
            intercept = 1;
            break;
        case BW_DA_ALLOW:
            tx->allow_level = 3;
            break;
        case BW_DA_ALLOW_REQUEST:
            tx->allow_level = 2;
            break;
        case BW_DA_ALLOW_PHASE:
            tx->allow_level = 1;
            tx->allow_phase = h->phase;
            break;
        default:
            break;
        }
    }
    if (h->log != 0)
        record_and_log(tx, h, disruptive_prefix(tx, h, d, status, url), op_msg, intercept);
    if (intercept) {
        tx->intercepted = 1;
        tx->iv.disposition = disposition_of(d, h->phase);
        tx->iv.status = status;
        tx->iv.url = url;
        tx->iv.rule = h;
        tx->iv.phase = h->phase;
    }
}

/* ---- one rule, one chain ------------------------------------------------------ */

const char *bw_tx_matched_var_name(bw_tx_t *tx)
{
    if (!tx->has_matched_var)
        return NULL;
    if (!tx->matched_var_name)
        tx->matched_var_name = bw_varval_name_n(tx->pool, &tx->matched_var,
                                                &tx->matched_var_name_len);
    return tx->matched_var_name;
}

int bw_tx_matched_var_name_str(bw_tx_t *tx, bw_str_t *name)
{
    const char *s = bw_tx_matched_var_name(tx);
    if (!s)
        return 0;
    *name = bw_str_n(s, tx->matched_var_name_len);
    return 1;
}

/* TX:0.. from the operator's captures: the names are the program's, the
 * captured strings the transaction's (operators make them in its pool),
 * and neither is ever written: both kept as they are. */
static void set_captures(bw_tx_t *tx, const bw_op_run_t *run)
{
    int i;
    for (i = 0; i < run->ncaptures && i < 10; i++)
        bw_coll_put(tx->pool, tx->tx_coll, &tx->prog->capture_keys[i], run->captures[i],
                    BW_COLL_KEEP_NAME | BW_COLL_KEEP_VALUE);
}

static void run_actions(bw_tx_t *tx, const bw_rule_t *r)
{
    int i;
    for (i = 0; i < r->run_actions->nelts; i++) {
        const bw_action_t *a = &((const bw_action_t *)r->run_actions->elts)[i];
        bw_run_action(tx, r, a);
    }
}

static void on_match(bw_tx_t *tx, const bw_rule_t *r, const bw_varval_t *v, bw_str_t value,
                     const bw_op_run_t *run, int is_last)
{
    bw_varval_t *m = bw_array_push(tx->cur_matched);
    *m = *v;
    m->value = value;
    tx->matched_var = *m;
    tx->has_matched_var = v->var != NULL;
    tx->matched_var_name = NULL;   /* built when someone asks (bw_tx_matched_var_name) */
    if (r->capture && run->ncaptures >= 0)
        set_captures(tx, run);
    run_actions(tx, r);
    if (is_last)
        perform_disruptive(tx, r->chain_head, run->msg ? run->msg : "");
}

/* ---- one rule link ------------------------------------------------------------ */

/* One link being evaluated. */
typedef struct {
    const bw_crule_t *c;
    const bw_op_t *op;
    int is_last;
    int matched;
    int looked;          /* values the operator (or the scan's verdict) was tried on */
    bw_src_state_t *S;   /* the source of the value being tried, or NULL */
    int si;              /* its index there */
} ev_t;

/* Excluded from this rule by one of its own !targets or by a ctl: removal? */
static int excluded(bw_tx_t *tx, const ev_t *e, const bw_varval_t *v)
{
    const bw_rule_t *r = e->c->r;
    /* most values are of a variable no !target names: one bit says so */
    if ((e->c->flags & BW_CR_EXCL)
        && ((e->c->excl_vars[v->var->id / 64] >> (v->var->id % 64)) & 1)) {
        const bw_target_t *t = e->c->targets;
        int i;
        for (i = 0; i < e->c->nt; i++)
            if (t[i].is_exclusion && t[i].var == v->var && !v->is_count
                && bw_target_covers(&t[i], v, tx->md))
                return 1;
    }
    return tx->removals->nelts && bw_tx_target_excluded(tx, r, v);
}

static int has_gate_byte(const uint64_t gate[4], const bw_byteset_t *ps)
{
    return ((gate[0] & ps->w[0]) | (gate[1] & ps->w[1]) | (gate[2] & ps->w[2])
            | (gate[3] & ps->w[3])) != 0;
}

/* multiMatch on value i of source S: the operator on the value and on the
 * string after each transformation that changed it, read from the source's
 * node arrays (each computed once per phase, shared by every rule); a
 * string without a byte of the operator's gate is not tried. */
static int eval_multi_src(bw_tx_t *tx, ev_t *e, const bw_varval_t *v, bw_str_t *final,
                          bw_op_run_t *run)
{
    const bw_crule_t *c = e->c;
    bw_src_state_t *S = e->S;
    int i = e->si, nn = 0, node, k, stack[32];
    int *nodes = c->r->ntfns <= 32 ? stack : apr_palloc(tx->pool, sizeof(int) * (size_t)c->r->ntfns);
    bw_str_t prev = S->raw[i];
    *final = prev;
    if ((!c->gate_kind || has_gate_byte(c->gate, &S->present[i]))
        && run_op(tx, c, e->op, v, prev, run) == 1)
        return 1;
    for (node = c->node; node >= 0 && nn < c->r->ntfns; node = tx->prog->nodes[node].parent)
        nodes[nn++] = node;
    for (k = nn - 1; k >= 0; k--) {
        bw_str_t cur = bw_src_tv(tx, S, nodes[k])[i];
        if (cur.data == prev.data && cur.len == prev.len)
            continue;
        prev = cur;
        if (c->gate_kind && !has_gate_byte(c->gate, &bw_src_tps(S, nodes[k])[i]))
            continue;
        if (run_op(tx, c, e->op, v, cur, run) == 1) {
            *final = cur;
            return 1;
        }
    }
    return 0;
}

/* One value: the operator on its transformed form (tval), unless the scan
 * already knows the answer and nobody needs the operator's message or
 * captures. Returns 1 when the transaction was intercepted. */
static int try_value(bw_tx_t *tx, ev_t *e, const bw_varval_t *v, bw_str_t tval, int scanned,
                     int exact)
{
    bw_op_run_t run;
    int rc;
    e->looked++;
    if (excluded(tx, e, v))
        return 0;
    if (exact && (e->c->flags & (BW_CR_CAPTURE | BW_CR_QUIET)) == BW_CR_QUIET) {
        bw_op_run_clear(&run);
        run.ncaptures = -1;
        rc = 1;
    } else if (e->c->flags & BW_CR_MULTI) {
        tx->stats.confirms += scanned;
        /* the node arrays are the scan's; without it, as a rule alone would */
        rc = e->S && !(tx->prog->flags & BW_PROG_NO_SCAN) ? eval_multi_src(tx, e, v, &tval, &run)
                                                          : eval_value(tx, e->c, e->op, v, &tval, &run);
    } else {
        tx->stats.confirms += scanned;
        rc = run_op(tx, e->c, e->op, v, tval, &run);
    }
    if (rc != 1)
        return 0;
    e->matched = 1;
    on_match(tx, e->c->r, v, tval, &run, e->is_last);
    return tx->intercepted;
}

static int scan_any(const bw_hits_t *h, int slot, int bit)
{
    return (int)(h->any[(size_t)slot * (size_t)h->nwords + (size_t)(bit / 64)] >> (bit % 64)) & 1;
}

/* multiMatch: the operator sees the value after each transformation that
 * changed it, so a value can match only where the scan of its string after
 * one of the chain's prefixes hit. Such a value runs the rule as usual. */
static int multi_values(bw_tx_t *tx, ev_t *e, const bw_target_t *t, const bw_tscan_t *ts,
                        bw_src_state_t *S, const bw_hits_t *h)
{
    int nt = e->c->r->ntfns, i, k, any = scan_any(h, ts->slot, ts->bit);
    for (k = 0; k < nt && !any; k++)
        any = scan_any(h, ts->prefix[k].slot, ts->prefix[k].bit);
    if (!any)
        return 0;
    for (i = 0; i < S->n; i++) {
        int hit = bw_hits_has(h, i, ts->slot, ts->bit);
        for (k = 0; k < nt && !hit; k++)
            hit = bw_hits_has(h, i, ts->prefix[k].slot, ts->prefix[k].bit);
        if (!hit)
            continue;
        if (t->selector_re && bw_regex_match(t->selector_re, S->vals[i].key, tx->md) <= 0)
            continue;
        e->S = S;
        e->si = i;
        if (try_value(tx, e, &S->vals[i], S->raw[i], 1, 0))
            return 1;
    }
    return 0;
}

/* Does a byte of the link's operator gate occur in some value of S, as the
 * link sees them (for multiMatch: after some prefix of its chain)? */
static int gate_may_hit(bw_tx_t *tx, const bw_crule_t *c, bw_src_state_t *S)
{
    int node;
    bw_src_bytes(tx, S);
    bw_src_tv(tx, S, c->node);
    if (!(c->flags & BW_CR_MULTI))
        return has_gate_byte(c->gate, c->node < 0 ? &S->all : bw_src_tall(S, c->node));
    if (has_gate_byte(c->gate, &S->all))
        return 1;
    for (node = c->node; node >= 0; node = tx->prog->nodes[node].parent)
        if (has_gate_byte(c->gate, bw_src_tall(S, node)))
            return 1;
    return 0;
}

/* A value a ^ or $ regex may have hit at a newline or separator byte
 * inside its string (bw_matcher_line): its scan bit is not exact. */
static int line_unsure(const bw_tscan_t *ts, const bw_byteset_t *ps, int i)
{
    return ts->line && (bw_byteset_has(&ps[i], '\n') || bw_byteset_has(&ps[i], BW_MATCHER_SEP));
}

/* The values of a source through the link: only those whose bit is set in
 * the scan of the string the link's chain made of them, when the link can
 * use its source's scan. */
static int source_values(bw_tx_t *tx, ev_t *e, const bw_target_t *t, int ti)
{
    const bw_crule_t *c = e->c;
    const bw_tscan_t *ts = &c->tscan[ti];
    bw_src_state_t *S = bw_src_at(tx, c->tsrc[ti]);
    const bw_str_t *tv;
    const bw_byteset_t *ps;
    int i;
    if ((c->flags & BW_CR_SCAN) && ts->bit >= 0) {
        const bw_hits_t *h = bw_src_scan(tx, S, c->tsrc[ti]);
        int nw = h->nwords, w = ts->bit / 64, exact = ts->exact && !h->inexact;
        if (c->flags & BW_CR_MULTI)
            return multi_values(tx, e, t, ts, S, h);
        if (!(h->any[(size_t)ts->slot * (size_t)nw + (size_t)w] & ((uint64_t)1 << (ts->bit % 64))))
            return 0;
        tv = bw_src_tv(tx, S, c->node);
        ps = c->node < 0 ? S->present : bw_src_tps(S, c->node);
        for (i = 0; i < S->n; i++) {
            if (!bw_hits_has(h, i, ts->slot, ts->bit))
                continue;
            if (t->selector_re && bw_regex_match(t->selector_re, S->vals[i].key, tx->md) <= 0)
                continue;
            if (try_value(tx, e, &S->vals[i], tv[i], 1, exact && !line_unsure(ts, ps, i)))
                return 1;
        }
        return 0;
    }
    if ((c->flags & BW_CR_SCAN_NOT) && ts->bit >= 0) {
        /* a negated operator: an exact hit is the operator's match, so
         * the rule's non-match, without running it (CRS's "the value is
         * well formed" checks: !@rx on REQUEST_LINE, Accept...); any
         * other value runs it as usual */
        const bw_hits_t *h = bw_src_scan(tx, S, c->tsrc[ti]);
        int exact = ts->exact && !h->inexact;
        tv = bw_src_tv(tx, S, c->node);
        ps = c->node < 0 ? S->present : bw_src_tps(S, c->node);
        for (i = 0; i < S->n; i++) {
            if (t->selector_re && bw_regex_match(t->selector_re, S->vals[i].key, tx->md) <= 0)
                continue;
            if (exact && bw_hits_has(h, i, ts->slot, ts->bit) && !line_unsure(ts, ps, i)
                && !excluded(tx, e, &S->vals[i])) {
                e->looked++;
                continue;
            }
            e->S = S;
            e->si = i;
            if (try_value(tx, e, &S->vals[i], tv[i], 0, 0))
                return 1;
        }
        return 0;
    }
    /* an operator gate: no value has one of its bytes, or this one has not */
    if (c->gate_kind && !gate_may_hit(tx, c, S))
        return 0;
    ps = !c->gate_kind || (c->flags & BW_CR_MULTI) ? NULL : c->node < 0 ? S->present
                                                                       : bw_src_tps(S, c->node);
    tv = c->flags & BW_CR_MULTI ? S->raw : bw_src_tv(tx, S, c->node);
    for (i = 0; i < S->n; i++) {
        if (ps && !has_gate_byte(c->gate, &ps[i]))
            continue;
        if (t->selector_re && bw_regex_match(t->selector_re, S->vals[i].key, tx->md) <= 0)
            continue;
        e->S = S;
        e->si = i;
        if (try_value(tx, e, &S->vals[i], tv[i], 0, 0))
            return 1;
    }
    return 0;
}

/* Values of targets without a source, collected before any of the link's
 * matches runs actions (a setvar must not change what this link sees). */
static void collect_other(bw_tx_t *tx, const bw_crule_t *c, int *start)
{
    const bw_target_t *t = c->targets;
    int i;
    tx->vals->nelts = 0;
    for (i = 0; i < c->nt; i++) {
        start[i] = tx->vals->nelts;
        if (!t[i].is_exclusion && c->tsrc[i] < 0)
            bw_target_values(tx, &t[i], tx->vals);
    }
    start[i] = tx->vals->nelts;
}

static void eval_targets(bw_tx_t *tx, ev_t *e)
{
    const bw_crule_t *c = e->c;
    const bw_target_t *t = c->targets;
    int nt = c->nt, i, j, small[17], *start = NULL;
    int scan_skip = (c->flags & BW_CR_SCAN) || c->gate_kind;
    bw_varval_t *vals;
    /* only targets without a source read start */
    if (c->flags & BW_CR_OTHER) {
        start = nt < 16 ? small : apr_palloc(tx->pool, sizeof(int) * (size_t)(nt + 1));
        collect_other(tx, c, start);
    }
    /* tx->vals is scratch every link reuses; nothing below refills it */
    vals = (bw_varval_t *)tx->vals->elts;
    for (i = 0; i < nt && !tx->intercepted; i++) {
        if ((c->flags & BW_CR_EXCL) && t[i].is_exclusion)
            continue;
        if (c->tsrc[i] >= 0) {
            if ((!(c->flags & BW_CR_SCAN) || c->tscan[i].bit < 0) && !c->gate_kind)
                scan_skip = 0;
            if (source_values(tx, e, &t[i], i))
                break;
            continue;
        }
        scan_skip = 0;
        e->S = NULL;
        for (j = start[i]; j < start[i + 1]; j++) {
            bw_str_t tv = c->flags & BW_CR_MULTI ? vals[j].value
                                            : bw_tfn_apply_node(tx, c->node, vals[j].value);
            if (try_value(tx, e, &vals[j], tv, 0, 0))
                break;
        }
    }
    if (scan_skip && !e->looked)
        tx->stats.rules_skipped++;
}

static int eval_link(bw_tx_t *tx, const bw_crule_t *c, int is_last)
{
    const bw_rule_t *r = c->r;
    char *err = NULL;
    ev_t e;
    memset(&e, 0, sizeof(e));
    e.c = c;
    e.is_last = is_last;
    e.op = runtime_op(tx, c, &err);
    if (!e.op) {
        bw_tx_log_message(tx, 0, "Rule %s [file \"%s\"] [line \"%d\"]: @%s: %s",
                          r->chain_head->id_str ? r->chain_head->id_str : "-", r->file, r->line,
                          r->op.def->name, err ? err : "cannot compile");
        return 0;
    }
    tx->stats.rules++;
    /* the earlier links' matches stay visible as MATCHED_VARS while this
     * link runs; its own are added to them when it is done, as
     * mod_security2 2.9.7 keeps every link's (run_chain empties them) */
    tx->cur_matched->nelts = 0;
    if (c->flags & BW_CR_ACTION) {
        bw_varval_t single;
        memset(&single, 0, sizeof(single));
        try_value(tx, &e, &single, single.value, 0, 0);
    } else {
        eval_targets(tx, &e);
    }
    if (tx->cur_matched->nelts)
        apr_array_cat(tx->matched_vars, tx->cur_matched);
    return e.matched;
}

static int run_chain(bw_tx_t *tx, const bw_crule_t *starter)
{
    const bw_crule_t *link;
    tx->matched_vars->nelts = 0;
    for (link = starter; link; link = link->next) {
        tx->cur_rule = link->r;
        if (!eval_link(tx, link, link->next == NULL))
            return 0;
        if (tx->intercepted)
            return 1;
    }
    return 1;
}

/* A folded slot that matches: its TX changes, computed at start-up
 * (unless TX holds them already: imaged), and MATCHED_VAR as the match
 * would have left it. */
static void apply_slot(bw_tx_t *tx, const bw_apply_t *s, int imaged)
{
    if (!imaged)
        bw_fold_fx_apply(tx->pool, tx->tx_coll, s->fx, s->nfx);
    if (s->replay_mv) {
        tx->matched_var = s->mv;
        tx->has_matched_var = s->has_mv;
        tx->matched_var_name = NULL;
    }
}

/* Where phase 1 starts: past the folded slots every transaction runs the
 * same way, with TX as they leave it (when TX is still empty, as it is). */
static int phase1_start(bw_tx_t *tx)
{
    const bw_program_t *prog = tx->prog;
    if (!prog->tx_image || tx->tx_coll->order->nelts)
        return 0;
    bw_coll_load_image(tx->pool, tx->tx_coll, prog->tx_image);
    tx->img_end = prog->image_end;
    if (prog->start_mv)
        apply_slot(tx, &(bw_apply_t){ .replay_mv = 1, .has_mv = prog->start_mv->has_mv != 0,
                                      .mv = prog->start_mv->mv }, 0);
    return prog->phase1_start;
}

/* 1 when the scan says the slot's first link matches no value: no bit of
 * its targets is set in their sources' scans (see link_skips). */
static int scan_rules_out(bw_tx_t *tx, const bw_skip_t *sk, int n)
{
    int k;
    for (k = 0; k < n; k++)
        if (bw_src_any(tx, (int)sk[k].src)[sk[k].off] & sk[k].mask)
            return 0;
    return 1;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* How the loop counts (run_steps): not at all, in the thread's own shard
 * rule by rule (plain adds), in the shared one (atomic adds), or as a
 * path: what decided it noted (path_key_t), counted once at the end of
 * the phase (bw_metrics_path_seen). Jumps only go forward (a skipAfter's
 * marker is found after its rule, skip:N counts forward), so a phase
 * reaches a step at most once, and where it goes from a step is decided
 * by the step alone except for a rule's: removed by a ctl: (the next
 * step), matched (its `next`) or not (the next step), and whether the
 * phase stops there. Those are what the loop notes; path_expand retraces
 * the steps from them. */
enum { COUNT_OFF, COUNT_OWNED, COUNT_SHARED, COUNT_PATH };

#define PATH_WORDS (BW_TX_PATH_STEPS / 64)

/* What decided a phase's path (COUNT_PATH): key[0] where it started and
 * stopped, then nw words of the rule steps that matched, then, once a
 * removed rule was met (removed), nw words of those. */
typedef struct {
    uint64_t key[1 + 2 * PATH_WORDS];
    int nw, stop, blocked, removed;
} path_key_t;

/* A path's steps spelt out: reached, and matched. */
typedef struct {
    uint64_t vis[PATH_WORDS], mat[PATH_WORDS];
} path_bits_t;

/* Bit i of a bitmap of 64-bit words. */
static inline __attribute__((always_inline)) void bit_set(uint64_t *w, int i)
{
    w[i >> 6] |= (uint64_t)1 << (i & 63);
}

static inline int bit_get(const uint64_t *w, int i)
{
    return (int)(w[i >> 6] >> (i & 63) & 1);
}

/* Step i reached (and matched) on the path. */
static inline __attribute__((always_inline)) void path_note(path_bits_t *pb, int i, int matched)
{
    bit_set(pb->vis, i);
    if (matched)
        bit_set(pb->mat, i);
}

/* Rule step i, removed, was not reached. */
static void __attribute__((noinline)) path_removed(path_key_t *pk, int i)
{
    uint64_t *rem = pk->key + 1 + pk->nw;
    if (!pk->removed) {
        memset(rem, 0, sizeof(uint64_t) * (size_t)pk->nw);
        pk->removed = 1;
    }
    bit_set(rem, i);
}

/* A timed transaction: the rule of index k took ns. */
static void count_time(const bw_metrics_ctr_t *c, uint32_t k, uint64_t ns)
{
    bw_metrics_add(c, &c->timed[k], 1);
    bw_metrics_add(c, &c->ns[k], ns);
    bw_metrics_max(c, &c->max_ns[k], ns);
}

/* Slot i's chain cr, timed. */
static int __attribute__((noinline)) timed_chain(bw_tx_t *tx, const bw_crule_t *cr, int i,
                                                 const bw_tx_mphase_t *mp)
{
    uint64_t t0 = mono_ns();
    int rc = run_chain(tx, cr);
    count_time(mp->ctr, mp->ix[i], mono_ns() - t0);
    return rc;
}

/* The phase's steps from slot i; with `how` not COUNT_OFF every rule
 * reached is counted in mp, *reached says how many. What the loop reads of
 * mp is copied to locals first: the calls in between could change what a
 * pointer shows, for all the compiler knows, and would make it read them
 * again for every rule. `how` is a constant in each of the four copies
 * below, so the uncounted loop is the one before counters existed and the
 * counted ones test nothing per rule. */
static inline __attribute__((always_inline)) int
steps(bw_tx_t *tx, int phase, int i, const bw_tx_mphase_t *mp, uint64_t *reached,
      path_key_t *pk, const int how)
{
    const bw_code_t *code = &tx->prog->code[phase];
    const char *const links = tx->prog->links;
    const uint16_t *const ix = mp->ix;
    const int on = how != COUNT_OFF, timed = on && how != COUNT_PATH && mp->timed;
    const int shared = how == COUNT_SHARED, path = how == COUNT_PATH;
    /* uncounted, mp->ctr is NULL: not even its members' addresses are taken */
    uint64_t *const evals = on && !path ? mp->ctr->evals : NULL;
    uint64_t n = 0;
    int out = 0;
#define COUNT(matched) do {                                                  \
        if (path) {   /* a rule's match: where NOP and APPLY go is known */    \
            if (matched && st->kind != BW_SLOT_APPLY)                        \
                bit_set(pk->key + 1, i);                                     \
        } else {                                                             \
            uint64_t *e_ = evals + ix[i];                                    \
            bw_metrics_inc(e_, shared);                                      \
            if (matched)                                                     \
                bw_metrics_inc(BW_METRICS_MATCHES(e_), shared);              \
            ++n;                                                             \
        }                                                                    \
    } while (0)
    while (i < code->n) {
        const bw_step_t *st = &code->steps[i];
        const bw_crule_t *cr;
        int rc;
        /* a DEAD slot is never reached; were it, running it is what the
         * unfolded program does. Folded slots count as the evaluations
         * they stand for, so the counts do not depend on folding. */
        if (st->kind == BW_SLOT_NOP) {
            if (on)
                COUNT(0);
            i = st->next;
            continue;
        }
        if (st->kind == BW_SLOT_APPLY) {
            if (on)
                COUNT(1);
            apply_slot(tx, &code->applies[st->link], i < tx->img_end);
            i = st->next;
            continue;
        }
        cr = (const bw_crule_t *)(links + st->link);
        if (tx->removals->nelts && bw_tx_rule_removed(tx, cr->r)) {
            if (path)
                path_removed(pk, i);
            i++;
            continue;
        }
        if (st->nskip && scan_rules_out(tx, &code->skips[st->skip], st->nskip)) {
            /* what evaluating it would leave: no match, MATCHED_VARS empty */
            tx->stats.rules++;
            tx->stats.rules_skipped++;
            tx->matched_vars->nelts = 0;
            tx->cur_matched->nelts = 0;
            if (on) {
                COUNT(0);
                if (timed)   /* a verdict read from the scan: no time of its own */
                    count_time(mp->ctr, ix[i], 0);
            }
            i++;
            continue;
        }
        rc = timed ? timed_chain(tx, cr, i, mp) : run_chain(tx, cr);
        tx->cur_rule = NULL;
        if (on) {
            COUNT(rc == 1);
            if (tx->intercepted) {
                if (path)
                    pk->blocked = i;
                else
                    bw_metrics_inc(BW_METRICS_BLOCKS(evals + ix[i]), shared);
            }
        }
        if (tx->intercepted) {
            if (path)
                pk->stop = i;
            out = 1;
            break;
        }
        if (tx->allow_level || tx->engine_mode == BW_ENGINE_OFF) {
            if (path)
                pk->stop = i;
            break;
        }
        i = rc == 1 ? st->next : i + 1;
    }
#undef COUNT
    *reached += n;
    return out;
}

static int run_steps(bw_tx_t *tx, int phase, int i)
{
    uint64_t reached = 0;
    return steps(tx, phase, i, &(bw_tx_mphase_t){ .on = 0 }, &reached, NULL, COUNT_OFF);
}

static int __attribute__((noinline)) run_steps_owned(bw_tx_t *tx, int phase, int i,
                                                     const bw_tx_mphase_t *mp, uint64_t *reached)
{
    return steps(tx, phase, i, mp, reached, NULL, COUNT_OWNED);
}

static int __attribute__((noinline)) run_steps_shared(bw_tx_t *tx, int phase, int i,
                                                      const bw_tx_mphase_t *mp, uint64_t *reached)
{
    return steps(tx, phase, i, mp, reached, NULL, COUNT_SHARED);
}

/* Phase 1 starts past the folded slots every transaction runs the same
 * way (phase1_start): they are counted as the unfolded program would
 * have evaluated them, rule by rule (*reached says how many) or, with
 * pb, in the phase's path. */
static void count_prefix(bw_tx_t *tx, int phase, int start, const bw_tx_mphase_t *mp,
                         uint64_t *reached, path_bits_t *pb)
{
    const bw_code_t *code = &tx->prog->code[phase];
    int i = 0;
    while (i < start) {
        const bw_step_t *st = &code->steps[i];
        int matched = st->kind == BW_SLOT_APPLY;
        if (st->kind != BW_SLOT_NOP && !matched)
            break;
        if (pb) {
            path_note(pb, i, matched);
        } else {
            uint64_t *ev = mp->ctr->evals + mp->ix[i];
            bw_metrics_inc(ev, mp->ctr->shared);
            if (matched)
                bw_metrics_inc(BW_METRICS_MATCHES(ev), mp->ctr->shared);
            ++*reached;
        }
        i = st->next;
    }
}

/* The steps of the path pk decided, from `start` (phase 1's folded
 * prefix before it, as count_prefix notes it), retraced as the loop took
 * them: once per path a shard has not seen. */
static void path_expand(bw_tx_t *tx, int phase, int start, const path_key_t *pk,
                        path_bits_t *pb)
{
    const bw_code_t *code = &tx->prog->code[phase];
    const uint64_t *mat = pk->key + 1, *rem = pk->removed ? pk->key + 1 + pk->nw : NULL;
    int i = start;
    memset(pb, 0, sizeof(*pb));
    count_prefix(tx, phase, start, NULL, NULL, pb);
    while (i < code->n) {
        const bw_step_t *st = &code->steps[i];
        if (st->kind == BW_SLOT_NOP || st->kind == BW_SLOT_APPLY) {
            path_note(pb, i, st->kind == BW_SLOT_APPLY);
            i = st->next;
            continue;
        }
        if (rem && bit_get(rem, i)) {
            i++;
            continue;
        }
        path_note(pb, i, bit_get(mat, i));
        if (i == pk->stop)
            break;
        i = bit_get(mat, i) ? st->next : i + 1;
    }
}

/* The phase counted as a path (an owned shard, not a sampled transaction,
 * a phase with a layout): the steps with what decides their path noted,
 * then the path counted once, spelt out the first time. */
static int __attribute__((noinline)) run_steps_path(bw_tx_t *tx, int phase, int i,
                                                    const bw_tx_mphase_t *mp, uint64_t *reached)
{
    const bw_code_t *code = &tx->prog->code[phase];
    path_key_t pk;
    path_bits_t pb;
    int start = i, nk, rc;
    pk.nw = (code->n + 63) / 64;
    memset(pk.key + 1, 0, sizeof(uint64_t) * (size_t)pk.nw);
    pk.stop = pk.blocked = -1;
    pk.removed = 0;
    rc = steps(tx, phase, i, mp, reached, &pk, COUNT_PATH);
    pk.key[0] = (uint64_t)(uint32_t)start << 32 | (uint32_t)(pk.stop + 1);
    nk = 1 + pk.nw * (pk.removed ? 2 : 1);
    if (!bw_metrics_path_seen(mp->ctr, mp->layout, pk.key, nk, pk.blocked, reached)) {
        path_expand(tx, phase, start, &pk, &pb);
        *reached += bw_metrics_path(mp->ctr, mp->layout, mp->ix, pk.key, nk, pb.vis, pb.mat,
                                    pk.nw, pk.blocked);
    }
    return rc;
}

int bw_tx_exec_phase(bw_tx_t *tx, int phase)
{
    bw_tx_mphase_t mp;
    uint64_t t0 = 0, reached = 0;
    int start, rc, path;
    tx->cur_phase = phase;
    tx->img_end = 0;   /* phase1_start sets it when it loads the image */
    run_template(tx);
    start = phase == BW_PHASE_REQUEST_HEADERS ? phase1_start(tx) : 0;
    if (!tx->metrics)
        return run_steps(tx, phase, start);
    bw_tx_metrics_phase(tx, phase, &mp);
    path = mp.on && !mp.timed && !mp.ctr->shared && mp.layout
           && tx->prog->code[phase].n <= BW_TX_PATH_STEPS;
    if (mp.on) {
        /* a clock read is ~20 ns, two a phase 1% of a GET: the phase is
         * timed, as its rules are, in the sampled transactions only */
        if (mp.timed)
            t0 = mono_ns();
        if (!path)
            count_prefix(tx, phase, start, &mp, &reached, NULL);
    }
    rc = !mp.on ? run_steps(tx, phase, start)
         : path ? run_steps_path(tx, phase, start, &mp, &reached)
         : mp.ctr->shared ? run_steps_shared(tx, phase, start, &mp, &reached)
                         : run_steps_owned(tx, phase, start, &mp, &reached);
    if (mp.on) {
        if (mp.timed) {
            bw_metrics_add(mp.ctr, &mp.ctr->phase_ns[phase], mono_ns() - t0);
            bw_metrics_add(mp.ctr, &mp.ctr->phase_timed[phase], 1);
        }
        bw_metrics_add(mp.ctr, &mp.ctr->phase_runs[phase], 1);
        bw_metrics_add(mp.ctr, &mp.ctr->phase_evals[phase], reached);
    }
    return rc;
}

const bw_tx_stats_t *bw_tx_stats(const bw_tx_t *tx)
{
    return &tx->stats;
}
