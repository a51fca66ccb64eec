/*
 * What a Lua script sees of the transaction: the global table m of
 * ModSecurity's reference manual, and the two ways the executor runs a
 * script (an operator's run->script, the exec action).
 *
 *   m.getvar("ARGS.name" [, tfns])  the first value, transformed, or nil
 *   m.getvars("ARGS" [, tfns])      every value: { {name=, value=}, ... }
 *   m.setvar("tx.score", v)         as setvar:tx.score=v (v nil: !tx.score)
 *   m.log(level, text)              to the error log when level is at most
 *                                   SecDebugLogLevel (no debug log here)
 *
 * tfns is a transformation name or a list of them ("none" is no
 * transformation). A name is "VARIABLE.selector" (or "VARIABLE:selector",
 * as in a rule). Values are produced the way a rule's targets are, so a
 * script reads what a rule would read at that point of the transaction.
 * The functions allocate from the transaction's pool; what they hand to
 * Lua is copied into the state.
 */
#include <string.h>
#include "run/bw_run.h"
#include "operators/bw_lua.h"

/* A call's host: the transaction and the script, for messages. */
typedef struct {
    bw_tx_t *tx;
    const bw_lua_script_t *script;
} host_t;

#define MAX_TFNS 32

static bw_tx_t *tx_of(lua_State *L)
{
    return ((host_t *)bw_lua_host(L))->tx;
}

/* Argument 1 as a target list: the first '.' is the selector's separator
 * unless the name already has a ':'. */
static const apr_array_header_t *targets_arg(lua_State *L, bw_tx_t *tx, const char *fn)
{
    size_t len;
    const char *name = luaL_checklstring(L, 1, &len);
    char *text = apr_pstrmemdup(tx->pool, name, len);
    apr_array_header_t *ts = apr_array_make(tx->pool, 1, sizeof(bw_target_t));
    const char *err;
    if (!strchr(text, ':')) {
        char *dot = strchr(text, '.');
        if (dot)
            *dot = ':';
    }
    err = bw_targets_parse(tx->pool, text, ts);
    if (err)
        luaL_error(L, "%s(\"%s\"): %s", fn, text, err);
    return ts;
}

static void add_tfn(lua_State *L, const char *fn, const char *name, const bw_tfn_def_t **tfns, int *n)
{
    const bw_tfn_def_t *def;
    if (!strcasecmp(name, "none")) {
        *n = 0;
        return;
    }
    def = bw_tfn_lookup(name);
    if (!def)
        luaL_error(L, "%s: unknown transformation \"%s\"", fn, name);
    if (*n == MAX_TFNS)
        luaL_error(L, "%s: more than %d transformations", fn, MAX_TFNS);
    tfns[(*n)++] = def;
}

/* Argument 2: nil, a transformation name or a list of them. */
static int tfns_arg(lua_State *L, const char *fn, const bw_tfn_def_t **tfns)
{
    int n = 0;
    lua_Integer i, len;
    switch (lua_type(L, 2)) {
    case LUA_TNONE:
    case LUA_TNIL:
        return 0;
    case LUA_TSTRING:
        add_tfn(L, fn, lua_tostring(L, 2), tfns, &n);
        return n;
    case LUA_TTABLE:
        len = luaL_len(L, 2);
        for (i = 1; i <= len; i++) {
            lua_geti(L, 2, i);
            if (lua_type(L, -1) != LUA_TSTRING)
                luaL_error(L, "%s: transformation %d is not a string", fn, (int)i);
            add_tfn(L, fn, lua_tostring(L, -1), tfns, &n);
            lua_pop(L, 1);
        }
        return n;
    default:
        return luaL_error(L, "%s: transformations are a name or a list of names", fn);
    }
}

/* The values of the targets in argument 1, before transformation. */
static apr_array_header_t *values_of(lua_State *L, bw_tx_t *tx, const char *fn)
{
    const apr_array_header_t *ts = targets_arg(L, tx, fn);
    apr_array_header_t *vals = apr_array_make(tx->pool, 4, sizeof(bw_varval_t));
    int i;
    for (i = 0; i < ts->nelts; i++) {
        const bw_target_t *t = &((const bw_target_t *)ts->elts)[i];
        if (!t->is_exclusion)
            bw_target_values(tx, t, vals);
    }
    return vals;
}

static int l_getvar(lua_State *L)
{
    bw_tx_t *tx = tx_of(L);
    const bw_tfn_def_t *tfns[MAX_TFNS];
    apr_array_header_t *vals = values_of(L, tx, "m.getvar");
    int n = tfns_arg(L, "m.getvar", tfns);
    bw_str_t v;
    if (!vals->nelts) {
        lua_pushnil(L);
        return 1;
    }
    v = bw_tfn_apply(tx, tfns, n, ((bw_varval_t *)vals->elts)[0].value);
    lua_pushlstring(L, v.data ? v.data : "", v.len);
    return 1;
}

static int l_getvars(lua_State *L)
{
    bw_tx_t *tx = tx_of(L);
    const bw_tfn_def_t *tfns[MAX_TFNS];
    apr_array_header_t *vals = values_of(L, tx, "m.getvars");
    int n = tfns_arg(L, "m.getvars", tfns), i;
    lua_createtable(L, vals->nelts, 0);
    for (i = 0; i < vals->nelts; i++) {
        const bw_varval_t *vv = &((const bw_varval_t *)vals->elts)[i];
        bw_str_t v = bw_tfn_apply(tx, tfns, n, vv->value);
        lua_createtable(L, 0, 2);
        lua_pushstring(L, bw_varval_name(tx->pool, vv));
        lua_setfield(L, -2, "name");
        lua_pushlstring(L, v.data ? v.data : "", v.len);
        lua_setfield(L, -2, "value");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* As the action setvar:NAME=VALUE would (macros, =+N, =-N, collections),
 * or setvar:!NAME when the value is nil. */
static int l_setvar(lua_State *L)
{
    bw_tx_t *tx = tx_of(L);
    size_t nlen, vlen;
    const char *name = luaL_checklstring(L, 1, &nlen), *value, *err;
    bw_action_t a;
    memset(&a, 0, sizeof(a));
    a.def = bw_action_lookup("setvar", 6);
    if (lua_isnoneornil(L, 2)) {
        a.param = apr_pstrcat(tx->pool, "!", apr_pstrmemdup(tx->pool, name, nlen), NULL);
    } else {
        value = luaL_tolstring(L, 2, &vlen);
        a.param = apr_pstrcat(tx->pool, apr_pstrmemdup(tx->pool, name, nlen), "=",
                              apr_pstrmemdup(tx->pool, value, vlen), NULL);
    }
    err = a.def->compile(&a, tx->pool);
    if (err)
        return luaL_error(L, "m.setvar(\"%s\"): %s", a.param, err);
    bw_run_action(tx, tx->cur_rule, &a);
    return 0;
}

static int l_log(lua_State *L)
{
    host_t *h = bw_lua_host(L);
    lua_Integer level = luaL_checkinteger(L, 1);
    const char *text = luaL_checkstring(L, 2);
    if (level > h->tx->cfg->debug_log_level)
        return 0;
    bw_tx_log_message(h->tx, level <= 1 ? 0 : level == 2 ? 1 : 2, "Lua %s: %s",
                      bw_lua_script_path(h->script), text);
    return 0;
}

static const luaL_Reg api[] = {
    { "getvar", l_getvar }, { "getvars", l_getvars }, { "setvar", l_setvar }, { "log", l_log },
    { NULL, NULL }
};

int bw_lua_tx_call(void *tx, const bw_lua_script_t *s, const bw_str_t *arg, const char **msg,
                   const char **err)
{
    host_t h;
    bw_lua_call_t call;
    int rc;
    h.tx = tx;
    h.script = s;
    memset(&call, 0, sizeof(call));
    call.pool = h.tx->pool;
    call.api = api;
    call.host = &h;
    call.arg = arg;
    rc = bw_lua_run(s, &call);
    *msg = call.msg;
    *err = call.error;
    return rc;
}

void bw_lua_tx_exec(bw_tx_t *tx, const bw_rule_t *rule, const bw_lua_script_t *s)
{
    const char *msg = NULL, *err = NULL;
    const bw_rule_t *h = rule->chain_head;
    if (bw_lua_tx_call(tx, s, NULL, &msg, &err) < 0)
        bw_tx_log_message(tx, 0, "Rule %s [file \"%s\"] [line \"%d\"]: exec failed: %s",
                          h->id_str ? h->id_str : "-", rule->file, rule->line, err);
}
