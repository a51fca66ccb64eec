/*
 * Running the non-disruptive actions of a matching rule: setvar, setenv,
 * expirevar, deprecatevar, initcol (and setsid/setuid/setrsc), the
 * sanitise* family and ctl:. Their parameters were compiled at start-up
 * (actions/); here they change the transaction.
 */
#include <string.h>
#include <ctype.h>
#include "run/bw_run.h"
#include "run/bw_store.h"


/* Does expanding m give a string that outlives the transaction's
 * collections and is never written (a constant, a buffer made for it, a
 * keyed collection's value), so that storing it needs no copy? */
static unsigned kept(const bw_macro_t *m, unsigned flag)
{
    return !m->has_vars || m->nparts > 1 || (m->parts[0].var->flags & BW_VAR_TX_COLL) ? flag : 0;
}

static void x_setvar(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const bw_setvar_t *sv = a->data;
    bw_coll_t *c = bw_tx_collection(tx, sv->coll, 1);
    bw_key_t key = sv->key;          /* hashed at start-up when constant */
    unsigned keep = kept(sv->name, BW_COLL_KEEP_NAME);
    bw_str_t val;
    long cur;

    if (sv->name->has_vars)
        key = bw_key_make(bw_macro_expand(tx, sv->name));
    if (sv->op == BW_SV_DEL) {
        bw_coll_remove(c, &key);
        if (c->persist)
            bw_persist_change(tx, rule, c, BW_PCH_DEL, key.name, bw_str_n("", 0), 0, &val);
        return;
    }
    val = bw_macro_expand(tx, sv->value);
    if (sv->op == BW_SV_SET) {
        bw_coll_put(tx->pool, c, &key, val, keep | kept(sv->value, BW_COLL_KEEP_VALUE));
        if (c->persist)
            bw_persist_change(tx, rule, c, BW_PCH_SET, key.name, val, 0, &val);
        return;
    }
    {
        long delta = sv->op == BW_SV_ADD ? bw_str_to_num(val) : -bw_str_to_num(val);
        const bw_kv_t *kv;
        bw_str_t stored;
        if (!c->persist) {   /* read and written through one probe */
            int made;
            bw_kv_t *e = bw_coll_entry(tx->pool, c, &key, keep, &made);
            e->value = bw_num_str(tx->pool, (made ? 0 : bw_str_to_num(e->value)) + delta);
            return;
        }
        kv = bw_coll_find(c, &key);
        cur = (kv ? bw_str_to_num(kv->value) : 0) + delta;
        /* a store that applied it returns the count of every worker and node */
        if (bw_persist_change(tx, rule, c, BW_PCH_ADD, key.name, val, delta, &stored)) {
            bw_coll_put(tx->pool, c, &key, stored, keep | BW_COLL_KEEP_VALUE);
            return;
        }
    }
    bw_coll_put(tx->pool, c, &key, bw_num_str(tx->pool, cur), keep | BW_COLL_KEEP_VALUE);
}

static void x_setenv(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const bw_setenv_t *se = a->data;
    char *name;
    if (!tx->env)
        return;
    name = bw_str_pdup(tx->pool, bw_macro_expand(tx, se->name));
    if (se->del)
        apr_table_unset(tx->env, name);
    else
        apr_table_set(tx->env, name, bw_str_pdup(tx->pool, bw_macro_expand(tx, se->value)));
}

static void x_coll_timed(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const bw_setvar_t *sv = a->data;
    bw_coll_t *c = bw_tx_collection(tx, sv->coll, 1);
    bw_str_t name = bw_macro_expand(tx, sv->name);
    bw_str_t val = bw_macro_expand(tx, sv->value);
    long now = (long)apr_time_sec(apr_time_now());

    if (sv->op == BW_SV_SET) {
        /* expirevar: NAME disappears when the record is next read after
         * now+N. TX is never read back: mod_security2 2.9.7 leaves no
         * __expire_ key there and keeps NAME (compat/expirevar.yaml). */
        bw_str_t key, when;
        if (!c->persist)
            return;
        key = bw_str_make(apr_pstrcat(tx->pool, BW_EXPIRE_PREFIX, bw_str_pdup(tx->pool, name), NULL));
        when = bw_num_str(tx->pool, now + bw_str_to_num(val));
        bw_coll_set(tx->pool, c, key, when);
        bw_persist_change(tx, rule, c, BW_PCH_SET, key, when, 0, &when);
        return;
    }
    {
        /* deprecatevar: N/S — lower NAME by N for every S seconds since the
         * record's last update */
        const char *slash = memchr(val.data, '/', val.len);
        const bw_kv_t *cur = bw_coll_get(c, name), *last = bw_coll_get(c, bw_str_make("LAST_UPDATE_TIME"));
        long n = bw_str_to_num(val), per = slash ? bw_str_to_num(bw_str_n(slash + 1, val.len - (size_t)(slash + 1 - val.data))) : 0;
        long elapsed = last ? now - bw_str_to_num(last->value) : 0, v;
        if (!cur || per <= 0 || elapsed < per)
            return;
        v = bw_str_to_num(cur->value) - n * (elapsed / per);
        val = bw_num_str(tx->pool, v < 0 ? 0 : v);
        bw_coll_set(tx->pool, c, name, val);
        if (c->persist)
            bw_persist_change(tx, rule, c, BW_PCH_SET, name, val, 0, &val);
    }
}

static void x_initcol(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const bw_initcol_t *ic = a->data;
    /* the first initcol of a collection in a transaction wins, as in ModSecurity */
    if (bw_tx_collection(tx, ic->coll, 0))
        return;
    bw_persist_load(tx, rule, ic->coll, bw_macro_expand(tx, ic->key), ic->key_sha1);
}

static void x_sanitise(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    bw_coll_t *c = bw_tx_collection(tx, "__SANITISE", 1);
    /* sanitiseArg:NAME / …Header:NAME name what to mask; sanitiseMatched and
     * sanitiseMatchedBytes[:N/M] mask the variable that just matched */
    const char *what = *a->param && strncmp(a->def->name + 8, "Matched", 7) ? a->param
                     : (bw_tx_matched_var_name(tx) ? bw_tx_matched_var_name(tx) : "");
    bw_coll_set(tx->pool, c, bw_str_make(apr_pstrcat(tx->pool, a->def->name, ":", what, NULL)),
                bw_str_make(a->def->name));
}

static void add_removal(bw_tx_t *tx, int kind, const bw_ctl_t *c)
{
    int i, n = c->targets ? c->targets->nelts : 1;
    for (i = 0; i < n; i++) {
        bw_removal_t *rm = apr_array_push(tx->removals);
        memset(rm, 0, sizeof(*rm));
        rm->kind = kind;
        rm->re = c->re;
        rm->ranges = c->ranges;
        rm->target = c->targets ? &((const bw_target_t *)c->targets->elts)[i] : NULL;
    }
}

static void audit_parts(bw_tx_t *tx, const char *spec)
{
    const char *cur = tx->audit_parts ? tx->audit_parts : tx->cfg->audit_parts;
    char buf[32];
    size_t n = 0;
    const char *s;
    if (*spec != '+' && *spec != '-') {
        tx->audit_parts = spec;
        return;
    }
    for (s = cur; *s && n < sizeof(buf) - 1; s++)
        if (!(*spec == '-' && strchr(spec + 1, *s)))
            buf[n++] = *s;
    if (*spec == '+')
        for (s = spec + 1; *s && n < sizeof(buf) - 1; s++)
            if (!memchr(buf, *s, n))
                buf[n++] = *s;
    tx->audit_parts = apr_pstrndup(tx->pool, buf, n);
}

static void x_ctl(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const bw_ctl_t *c = a->data;
    switch (c->kind) {
    case BW_CTL_RULE_ENGINE: tx->engine_mode = c->ival; break;
    case BW_CTL_REMOVE_ID: case BW_CTL_REMOVE_TARGET_ID: add_removal(tx, 0, c); break;
    case BW_CTL_REMOVE_TAG: case BW_CTL_REMOVE_TARGET_TAG: add_removal(tx, 1, c); break;
    case BW_CTL_REMOVE_MSG: case BW_CTL_REMOVE_TARGET_MSG: add_removal(tx, 2, c); break;
    /* what the body's variables yield changes; those of the request line
     * and headers do not */
    case BW_CTL_REQBODY_PROCESSOR:
        tx->reqbody_processor = c->sval;
        tx->reqbody_processor_set = 1;
        tx->cls_gen[BW_SRC_BODY]++;
        bw_src_stale(tx);
        break;
    case BW_CTL_REQBODY_ACCESS: tx->reqbody_access = c->ival; break;
    case BW_CTL_RESBODY_ACCESS: tx->resbody_access = c->ival; break;
    case BW_CTL_REQBODY_LIMIT: tx->reqbody_limit = c->ival; break;
    case BW_CTL_RESBODY_LIMIT: tx->resbody_limit = c->ival; break;
    case BW_CTL_FORCE_REQBODY_VAR:
        tx->force_reqbody_var = c->ival;
        tx->cls_gen[BW_SRC_BODY]++;
        bw_src_stale(tx);
        break;
    case BW_CTL_AUDIT_ENGINE: tx->audit_engine = c->ival; break;
    case BW_CTL_HASH_ENGINE: tx->hash_engine = c->ival; break;
    case BW_CTL_HASH_ENFORCEMENT: tx->hash_enforcement = c->ival; break;
    case BW_CTL_AUDIT_PARTS: audit_parts(tx, c->sval); break;
    default: break;
    }
}

void bw_run_action(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    switch (a->def->op) {
    case BW_A_SETVAR: x_setvar(tx, rule, a); break;
    case BW_A_SETENV: x_setenv(tx, rule, a); break;
    case BW_A_EXPIREVAR:
    case BW_A_DEPRECATEVAR: x_coll_timed(tx, rule, a); break;
    case BW_A_INITCOL: x_initcol(tx, rule, a); break;
    case BW_A_SANITISE: x_sanitise(tx, rule, a); break;
    case BW_A_CTL: x_ctl(tx, rule, a); break;
    case BW_A_EXEC:
        if (a->num == BW_EXEC_LUA)
            bw_lua_tx_exec(tx, rule, a->data);
        else
            bw_run_exec(tx, rule, a);
        break;
    default: break;
    }
}
