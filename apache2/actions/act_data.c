/*
 * Non-disruptive actions that change transaction data when a rule matches:
 * setvar, setenv, expirevar, deprecatevar, initcol, setsid, setuid, setrsc,
 * and the sanitise* family (which mark values to mask in audit records).
 * Names and values are split and macro-compiled at start-up.
 */
#include <string.h>
#include <ctype.h>
#include "bw_internal.h"

typedef enum { SV_SET, SV_ADD, SV_SUB, SV_DEL } sv_op_t;

typedef struct {
    const char *coll;            /* upper-case collection name */
    const bw_macro_t *name;
    const bw_macro_t *value;     /* NULL for SV_DEL */
    sv_op_t op;
} setvar_t;

static const char *known_coll(const char *name)
{
    static const char *const colls[] = { "TX", "IP", "SESSION", "USER", "GLOBAL", "RESOURCE", "GEO", NULL };
    int i;
    for (i = 0; colls[i]; i++)
        if (!strcasecmp(colls[i], name))
            return colls[i];
    return NULL;
}

/* "[!]coll.name[=[+-]value]" */
static const char *i_setvar(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    setvar_t *sv = apr_pcalloc(p, sizeof(*sv));
    const char *s = a->param, *dot, *eq;
    char *err = NULL;
    char *coll;

    if (*s == '!') {
        sv->op = SV_DEL;
        s++;
    }
    dot = strchr(s, '.');
    if (!dot || dot == s)
        return apr_psprintf(p, "invalid variable \"%s\" (expected collection.name, e.g. tx.score)", s);
    coll = apr_pstrndup(p, s, (apr_size_t)(dot - s));
    sv->coll = known_coll(coll);
    if (!sv->coll)
        return apr_psprintf(p, "unknown collection \"%s\"", coll);
    s = dot + 1;
    eq = strchr(s, '=');
    if (sv->op == SV_DEL && eq)
        return "a variable to delete (!coll.name) takes no value";
    sv->name = bw_macro_compile(p, eq ? apr_pstrndup(p, s, (apr_size_t)(eq - s)) : s, &err);
    if (!*s || eq == s)
        return "empty variable name";
    if (sv->op != SV_DEL) {
        const char *v = eq ? eq + 1 : "1";
        if (eq && (*v == '+' || *v == '-')) {
            sv->op = *v == '+' ? SV_ADD : SV_SUB;
            v++;
        }
        sv->value = bw_macro_compile(p, v, &err);
    }
    a->data = sv;
    return NULL;
}

/* ModSecurity's numbers: leading space, sign, digits; anything else 0. */
static long to_num(bw_str_t s)
{
    size_t i = 0;
    long v = 0;
    int neg = 0;
    while (i < s.len && isspace((unsigned char)s.data[i]))
        i++;
    if (i < s.len && (s.data[i] == '-' || s.data[i] == '+'))
        neg = s.data[i++] == '-';
    while (i < s.len && s.data[i] >= '0' && s.data[i] <= '9' && v < 100000000000L)
        v = v * 10 + (s.data[i++] - '0');
    return neg ? -v : v;
}

static void x_setvar(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const setvar_t *sv = a->data;
    bw_coll_t *c = bw_tx_collection(tx, sv->coll, 1);
    bw_str_t name = bw_macro_expand(tx, sv->name), val;
    long cur;

    if (sv->op == SV_DEL) {
        bw_coll_unset(c, name);
        bw_persist_mark_set(tx, c, name);
        return;
    }
    val = bw_macro_expand(tx, sv->value);
    if (sv->op == SV_SET) {
        bw_coll_set(tx->pool, c, name, val);
        bw_persist_mark_set(tx, c, name);
        return;
    }
    {
        const bw_kv_t *kv = bw_coll_get(c, name);
        cur = kv ? to_num(kv->value) : 0;
    }
    bw_persist_mark_delta(c);
    cur = sv->op == SV_ADD ? cur + to_num(val) : cur - to_num(val);
    bw_coll_set(tx->pool, c, name, bw_str_make(apr_ltoa(tx->pool, cur)));
}

/* setenv:name=value, setenv:!name */
typedef struct {
    const bw_macro_t *name, *value;
    int del;
} setenv_t;

static const char *i_setenv(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    setenv_t *se = apr_pcalloc(p, sizeof(*se));
    const char *s = a->param, *eq;
    char *err = NULL;
    if (*s == '!') {
        se->del = 1;
        s++;
    }
    eq = strchr(s, '=');
    se->name = bw_macro_compile(p, eq ? apr_pstrndup(p, s, (apr_size_t)(eq - s)) : s, &err);
    se->value = bw_macro_compile(p, eq ? eq + 1 : "1", &err);
    a->data = se;
    return NULL;
}

static void x_setenv(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const setenv_t *se = a->data;
    char *name;
    if (!tx->env)
        return;
    name = bw_str_pdup(tx->pool, bw_macro_expand(tx, se->name));
    if (se->del)
        apr_table_unset(tx->env, name);
    else
        apr_table_set(tx->env, name, bw_str_pdup(tx->pool, bw_macro_expand(tx, se->value)));
}

/* expirevar:coll.name=seconds / deprecatevar:coll.name=N/seconds: kept as
 * ModSecurity keeps them, in the collection's __expire_/__deprecate_ keys. */
static const char *i_coll_timed(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    setvar_t *sv = apr_pcalloc(p, sizeof(*sv));
    const char *s = a->param, *dot = strchr(s, '.'), *eq = strchr(s, '=');
    char *err = NULL;
    if (!dot || !eq || eq < dot)
        return apr_psprintf(p, "invalid value \"%s\" (expected collection.name=value)", s);
    sv->coll = known_coll(apr_pstrndup(p, s, (apr_size_t)(dot - s)));
    if (!sv->coll)
        return apr_psprintf(p, "unknown collection in \"%s\"", s);
    sv->name = bw_macro_compile(p, apr_pstrndup(p, dot + 1, (apr_size_t)(eq - dot - 1)), &err);
    sv->value = bw_macro_compile(p, eq + 1, &err);
    sv->op = !strcmp(a->def->name, "expirevar") ? SV_SET : SV_SUB;
    a->data = sv;
    return NULL;
}

static void x_coll_timed(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const setvar_t *sv = a->data;
    bw_coll_t *c = bw_tx_collection(tx, sv->coll, 1);
    bw_str_t name = bw_macro_expand(tx, sv->name);
    bw_str_t val = bw_macro_expand(tx, sv->value);
    long now = (long)apr_time_sec(apr_time_now());

    if (sv->op == SV_SET) {
        /* expirevar: NAME disappears when the record is next read after now+N */
        bw_str_t key = bw_str_make(apr_pstrcat(tx->pool, "__expire_", bw_str_pdup(tx->pool, name), NULL));
        bw_coll_set(tx->pool, c, key, bw_str_make(apr_ltoa(tx->pool, now + to_num(val))));
        bw_persist_mark_set(tx, c, key);
        return;
    }
    {
        /* deprecatevar: N/S — lower NAME by N for every S seconds since the
         * record's last update */
        const char *slash = memchr(val.data, '/', val.len);
        const bw_kv_t *cur = bw_coll_get(c, name), *last = bw_coll_get(c, bw_str_make("LAST_UPDATE_TIME"));
        long n = to_num(val), per = slash ? to_num(bw_str_n(slash + 1, val.len - (size_t)(slash + 1 - val.data))) : 0;
        long elapsed = last ? now - to_num(last->value) : 0, v;
        if (!cur || per <= 0 || elapsed < per)
            return;
        v = to_num(cur->value) - n * (elapsed / per);
        bw_coll_set(tx->pool, c, name, bw_str_make(apr_ltoa(tx->pool, v < 0 ? 0 : v)));
        bw_persist_mark_set(tx, c, name);
    }
}

/* initcol:ip=%{remote_addr}, setsid:%{…}, setuid:…, setrsc:… */
typedef struct {
    const char *coll;
    const bw_macro_t *key;
} initcol_t;

static const char *i_initcol(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    initcol_t *ic = apr_pcalloc(p, sizeof(*ic));
    const char *eq = strchr(a->param, '=');
    char *err = NULL;
    if (!eq)
        return apr_psprintf(p, "invalid value \"%s\" (expected collection=key)", a->param);
    ic->coll = known_coll(apr_pstrndup(p, a->param, (apr_size_t)(eq - a->param)));
    if (!ic->coll || !strcmp(ic->coll, "TX") || !strcmp(ic->coll, "GEO"))
        return apr_psprintf(p, "cannot initialise collection in \"%s\" (IP, SESSION, USER, GLOBAL "
                            "or RESOURCE)", a->param);
    ic->key = bw_macro_compile(p, eq + 1, &err);
    a->data = ic;
    return NULL;
}

static const char *i_setxid(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    initcol_t *ic = apr_pcalloc(p, sizeof(*ic));
    char *err = NULL;
    ic->coll = !strcmp(a->def->name, "setsid") ? "SESSION"
             : !strcmp(a->def->name, "setuid") ? "USER" : "RESOURCE";
    ic->key = bw_macro_compile(p, a->param, &err);
    a->data = ic;
    return NULL;
}

static void x_initcol(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const initcol_t *ic = a->data;
    /* the first initcol of a collection in a transaction wins, as in ModSecurity */
    if (bw_tx_collection(tx, ic->coll, 0))
        return;
    bw_persist_load(tx, ic->coll, bw_macro_expand(tx, ic->key));
}

/* sanitise*: remembered in TX-private keys the audit log reads. */
static const char *i_sanitise(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    return NULL;
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

#define N(n, i, x, par) { n, BW_AK_NONDISRUPTIVE, par, i, x }

const bw_action_def_t bw_actions_data[] = {
    N("setvar", i_setvar, x_setvar, 1), N("setenv", i_setenv, x_setenv, 1),
    N("expirevar", i_coll_timed, x_coll_timed, 1), N("deprecatevar", i_coll_timed, x_coll_timed, 1),
    N("initcol", i_initcol, x_initcol, 1), N("setsid", i_setxid, x_initcol, 1),
    N("setuid", i_setxid, x_initcol, 1), N("setrsc", i_setxid, x_initcol, 1),
    N("sanitiseArg", i_sanitise, x_sanitise, 1), N("sanitizeArg", i_sanitise, x_sanitise, 1),
    N("sanitiseMatched", i_sanitise, x_sanitise, 0), N("sanitizeMatched", i_sanitise, x_sanitise, 0),
    N("sanitiseMatchedBytes", i_sanitise, x_sanitise, 2),
    N("sanitizeMatchedBytes", i_sanitise, x_sanitise, 2),
    N("sanitiseRequestHeader", i_sanitise, x_sanitise, 1),
    N("sanitizeRequestHeader", i_sanitise, x_sanitise, 1),
    N("sanitiseResponseHeader", i_sanitise, x_sanitise, 1),
    N("sanitizeResponseHeader", i_sanitise, x_sanitise, 1),
    { NULL, BW_AK_META, 0, NULL, NULL }
};
