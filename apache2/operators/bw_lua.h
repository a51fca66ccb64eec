/*
 * Lua 5.4 scripts (SecRuleScript, exec:x.lua, @inspectFile x.lua): a
 * script compiled once at start-up and run in a sandboxed Lua state.
 *
 * This is the half that needs no transaction, at the level of the kinds so
 * the rule reader (lang/) can compile a script and the operators and
 * actions can hold one. The transaction's half, the functions of the `m`
 * table (m.getvar, m.setvar…), is the executor's (run/bw_lua_api.c); it
 * hands them in with each call, so nothing here calls up.
 *
 * States: each script keeps a shelf of idle Lua states, created lazily by
 * the thread that first finds the shelf empty and put back after the call
 * (a mutex guards only the push and pop). A state is thus used by one
 * thread at a time, there are never more states than concurrent calls, and
 * the shelf lives in the configuration's pool, so a graceful restart closes
 * them with the scripts they ran. Thread-local states would have outlived
 * the configuration their scripts belong to.
 *
 * Each call runs the chunk (loaded once per state from the bytecode made at
 * start-up) in a fresh global table that reads through to the sandbox's
 * libraries, so nothing a script sets survives into the next transaction,
 * as with ModSecurity's state per call. Limits: BW_LUA_INSTRUCTIONS VM
 * instructions per call (a count hook; pcall cannot catch it) and
 * BW_LUA_MEMORY bytes per state (the allocator refuses more); hitting one
 * is an error of that call, and the state stays usable.
 */
#ifndef BW_LUA_H
#define BW_LUA_H

#include <lua.h>
#include <lauxlib.h>
#include "base/bw_types.h"

#define BW_LUA_INSTRUCTIONS 10000000L        /* per call */
#define BW_LUA_MEMORY       (16u * 1024 * 1024)  /* per state */

typedef struct bw_lua_script_s bw_lua_script_t;

/* Does path name a Lua script? ModSecurity decides by the ".lua" ending. */
int bw_lua_is_script(const char *path);

/* Read path, check its syntax and keep its bytecode, from pool p. NULL with
 * *err set ("script.lua:3: 'end' expected near <eof>") on failure. */
bw_lua_script_t *bw_lua_script_load(apr_pool_t *p, const char *path, char **err);
const char *bw_lua_script_path(const bw_lua_script_t *s);

/* One call of a script's main(). */
typedef struct bw_lua_call_s {
    apr_pool_t *pool;         /* messages are copied here */
    const luaL_Reg *api;      /* the functions of the global table m */
    void *host;               /* what bw_lua_host() returns inside them */
    const bw_str_t *arg;      /* main's argument, or NULL for main() */
    long instructions;        /* budget; 0: BW_LUA_INSTRUCTIONS */
    /* outputs */
    const char *msg;          /* on a match: the string main returned */
    const char *error;        /* on -1: Lua's message, with file and line */
} bw_lua_call_t;

/* Run s's main(). 1: it returned something other than nil or false (a
 * match; msg set), 0: nil or false, -1: the script failed or hit a limit
 * (error set). */
int bw_lua_run(const bw_lua_script_t *s, bw_lua_call_t *call);

/* Inside an api function: the call's host. */
void *bw_lua_host(lua_State *L);

#endif /* BW_LUA_H */
