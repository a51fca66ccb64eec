/*
 * Non-disruptive actions that change transaction data when a rule matches:
 * setvar, setenv, expirevar, deprecatevar, initcol, setsid, setuid, setrsc,
 * and the sanitise* family (which mark values to mask in audit records).
 * Names and values are split and macro-compiled here, at start-up; the
 * executor runs them (run/bw_run_actions.c).
 */
#include <string.h>
#include <ctype.h>
#include "actions/bw_action.h"

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
static const char *i_setvar(bw_action_t *a, apr_pool_t *p)
{
    bw_setvar_t *sv = apr_pcalloc(p, sizeof(*sv));
    const char *s = a->param, *dot, *eq;
    char *err = NULL;
    char *coll;

    if (*s == '!') {
        sv->op = BW_SV_DEL;
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
    if (sv->op == BW_SV_DEL && eq)
        return "a variable to delete (!coll.name) takes no value";
    sv->name = bw_macro_compile(p, eq ? apr_pstrndup(p, s, (apr_size_t)(eq - s)) : s, &err);
    if (!*s || eq == s)
        return "empty variable name";
    if (sv->op != BW_SV_DEL) {
        const char *v = eq ? eq + 1 : "1";
        if (eq && (*v == '+' || *v == '-')) {
            sv->op = *v == '+' ? BW_SV_ADD : BW_SV_SUB;
            v++;
        }
        sv->value = bw_macro_compile(p, v, &err);
    }
    if (!sv->name->has_vars)
        sv->key = bw_key_make(sv->name->nparts ? sv->name->parts[0].literal : bw_str_n("", 0));
    a->data = sv;
    return NULL;
}

/* setenv:name=value, setenv:!name */
static const char *i_setenv(bw_action_t *a, apr_pool_t *p)
{
    bw_setenv_t *se = apr_pcalloc(p, sizeof(*se));
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

/* expirevar:coll.name=seconds / deprecatevar:coll.name=N/seconds: kept as
 * ModSecurity keeps them, in the collection's __expire_/__deprecate_ keys. */
static const char *i_coll_timed(bw_action_t *a, apr_pool_t *p)
{
    bw_setvar_t *sv = apr_pcalloc(p, sizeof(*sv));
    const char *s = a->param, *dot = strchr(s, '.'), *eq = strchr(s, '=');
    char *err = NULL;
    if (!dot || !eq || eq < dot)
        return apr_psprintf(p, "invalid value \"%s\" (expected collection.name=value)", s);
    sv->coll = known_coll(apr_pstrndup(p, s, (apr_size_t)(dot - s)));
    if (!sv->coll)
        return apr_psprintf(p, "unknown collection in \"%s\"", s);
    sv->name = bw_macro_compile(p, apr_pstrndup(p, dot + 1, (apr_size_t)(eq - dot - 1)), &err);
    sv->value = bw_macro_compile(p, eq + 1, &err);
    if (!sv->name->has_vars)
        sv->key = bw_key_make(sv->name->nparts ? sv->name->parts[0].literal : bw_str_n("", 0));
    sv->op = !strcmp(a->def->name, "expirevar") ? BW_SV_SET : BW_SV_SUB;
    a->data = sv;
    return NULL;
}

/* A constant key names the same record file in every transaction: its
 * digest is taken once (run/bw_persist.c names the file after it). */
static void initcol_key(apr_pool_t *p, bw_initcol_t *ic)
{
    char *hex;
    if (ic->key->has_vars)
        return;
    hex = apr_palloc(p, 41);
    bw_sha1_hex(ic->key->nparts ? ic->key->parts[0].literal : bw_str_n("", 0), hex);
    ic->key_sha1 = hex;
}

/* initcol:ip=%{remote_addr}, setsid:%{…}, setuid:…, setrsc:… */
static const char *i_initcol(bw_action_t *a, apr_pool_t *p)
{
    bw_initcol_t *ic = apr_pcalloc(p, sizeof(*ic));
    const char *eq = strchr(a->param, '=');
    char *err = NULL;
    if (!eq)
        return apr_psprintf(p, "invalid value \"%s\" (expected collection=key)", a->param);
    ic->coll = known_coll(apr_pstrndup(p, a->param, (apr_size_t)(eq - a->param)));
    if (!ic->coll || !strcmp(ic->coll, "TX") || !strcmp(ic->coll, "GEO"))
        return apr_psprintf(p, "cannot initialise collection in \"%s\" (IP, SESSION, USER, GLOBAL "
                            "or RESOURCE)", a->param);
    ic->key = bw_macro_compile(p, eq + 1, &err);
    initcol_key(p, ic);
    a->data = ic;
    return NULL;
}

static const char *i_setxid(bw_action_t *a, apr_pool_t *p)
{
    bw_initcol_t *ic = apr_pcalloc(p, sizeof(*ic));
    char *err = NULL;
    ic->coll = !strcmp(a->def->name, "setsid") ? "SESSION"
             : !strcmp(a->def->name, "setuid") ? "USER" : "RESOURCE";
    ic->key = bw_macro_compile(p, a->param, &err);
    initcol_key(p, ic);
    a->data = ic;
    return NULL;
}

#define N(n, op, c, par) { n, BW_AK_NONDISRUPTIVE, par, op, c }

const bw_action_def_t bw_actions_data[] = {
    N("setvar", BW_A_SETVAR, i_setvar, 1), N("setenv", BW_A_SETENV, i_setenv, 1),
    N("expirevar", BW_A_EXPIREVAR, i_coll_timed, 1),
    N("deprecatevar", BW_A_DEPRECATEVAR, i_coll_timed, 1),
    N("initcol", BW_A_INITCOL, i_initcol, 1), N("setsid", BW_A_INITCOL, i_setxid, 1),
    N("setuid", BW_A_INITCOL, i_setxid, 1), N("setrsc", BW_A_INITCOL, i_setxid, 1),
    N("sanitiseArg", BW_A_SANITISE, NULL, 1), N("sanitizeArg", BW_A_SANITISE, NULL, 1),
    N("sanitiseMatched", BW_A_SANITISE, NULL, 0), N("sanitizeMatched", BW_A_SANITISE, NULL, 0),
    N("sanitiseMatchedBytes", BW_A_SANITISE, NULL, 2),
    N("sanitizeMatchedBytes", BW_A_SANITISE, NULL, 2),
    N("sanitiseRequestHeader", BW_A_SANITISE, NULL, 1),
    N("sanitizeRequestHeader", BW_A_SANITISE, NULL, 1),
    N("sanitiseResponseHeader", BW_A_SANITISE, NULL, 1),
    N("sanitizeResponseHeader", BW_A_SANITISE, NULL, 1),
    { NULL, BW_AK_META, 0, BW_A_ACCEPTED, NULL }
};
