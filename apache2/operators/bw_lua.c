/*
 * Lua scripts: compiled at start-up, run in sandboxed states kept on a
 * shelf per script (see bw_lua.h for why a shelf and not a state per
 * thread). The sandbox opens base, string, table, math and utf8, and of os
 * only time, date, clock and difftime: no files, no processes, no modules,
 * no loading of code at run time.
 */
#include <string.h>
#include <stdlib.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include <apr_thread_mutex.h>
#include <lualib.h>
#include "operators/bw_lua.h"

#define HOOK_PERIOD 1000   /* instructions between two looks at the budget */

/* One Lua state and what its allocator and hook count. */
typedef struct vm_s {
    lua_State *L;
    size_t used, cap;      /* bytes the state holds, and its limit */
    long periods;          /* hook periods left in this call */
    long budget;           /* this call's instruction budget, for the message */
    int killed;            /* the budget ran out: pcall raises it again */
    void *host;
    int chunk;             /* registry reference of the loaded chunk */
    int env_mt;            /* registry reference of the call globals' metatable */
    struct vm_s *next;     /* on the shelf */
} vm_t;

typedef struct {
    apr_thread_mutex_t *mu;
    vm_t *idle;
} shelf_t;

struct bw_lua_script_s {
    const char *path;
    char *code;            /* the chunk as lua_dump wrote it (debug info kept) */
    size_t len;
    shelf_t *shelf;
};

int bw_lua_is_script(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && !strcmp(path + n - 4, ".lua");
}

const char *bw_lua_script_path(const bw_lua_script_t *s)
{
    return s->path;
}

static vm_t *vm_of(lua_State *L)
{
    return *(vm_t **)lua_getextraspace(L);
}

void *bw_lua_host(lua_State *L)
{
    return vm_of(L)->host;
}

/* ---- start-up: read, check, dump --------------------------------------- */

typedef struct {
    char *buf;
    size_t len, cap;
} dump_t;

static int dump_writer(lua_State *L, const void *data, size_t size, void *ud)
{
    dump_t *d = ud;
    if (d->len + size > d->cap) {
        size_t cap = (d->len + size) * 2;
        char *nb = realloc(d->buf, cap);
        if (!nb)
            return 1;
        d->buf = nb;
        d->cap = cap;
    }
    memcpy(d->buf + d->len, data, size);
    d->len += size;
    return 0;
}

static apr_status_t shelf_close(void *data)
{
    shelf_t *sh = data;
    while (sh->idle) {
        vm_t *vm = sh->idle;
        sh->idle = vm->next;
        lua_close(vm->L);
        free(vm);
    }
    return APR_SUCCESS;
}

static char *read_file(apr_pool_t *p, const char *path, apr_size_t *len, char **err)
{
    apr_file_t *f;
    apr_finfo_t fi;
    char *buf;
    apr_status_t st = apr_file_open(&f, path, APR_READ | APR_BINARY, 0, p);
    if (st == APR_SUCCESS)
        st = apr_file_info_get(&fi, APR_FINFO_SIZE, f);
    if (st != APR_SUCCESS) {
        char msg[120];
        *err = apr_psprintf(p, "cannot read Lua script %s: %s", path, apr_strerror(st, msg, sizeof msg));
        return NULL;
    }
    *len = (apr_size_t)fi.size;
    buf = apr_palloc(p, *len + 1);
    st = apr_file_read_full(f, buf, *len, len);
    apr_file_close(f);
    if (st != APR_SUCCESS && st != APR_EOF) {
        *err = apr_psprintf(p, "cannot read Lua script %s", path);
        return NULL;
    }
    return buf;
}

bw_lua_script_t *bw_lua_script_load(apr_pool_t *p, const char *path, char **err)
{
    bw_lua_script_t *s;
    apr_pool_t *tmp;
    apr_size_t len = 0;
    dump_t d = { NULL, 0, 0 };
    lua_State *L;
    char *text;
    int rc;

    apr_pool_create(&tmp, p);
    text = read_file(tmp, path, &len, err);
    L = text ? luaL_newstate() : NULL;
    if (!L) {
        *err = text ? "cannot create a Lua state" : apr_pstrdup(p, *err);
        apr_pool_destroy(tmp);
        return NULL;
    }
    rc = luaL_loadbufferx(L, text, len, apr_pstrcat(tmp, "@", path, NULL), "bt");
    if (rc == LUA_OK && lua_dump(L, dump_writer, &d, 0) != 0)
        lua_pushliteral(L, "cannot keep the compiled chunk (out of memory)"), rc = LUA_ERRMEM;
    if (rc != LUA_OK)
        *err = apr_pstrdup(p, lua_tostring(L, -1));
    lua_close(L);
    apr_pool_destroy(tmp);
    if (rc != LUA_OK) {
        free(d.buf);
        return NULL;
    }
    s = apr_pcalloc(p, sizeof(*s));
    s->path = apr_pstrdup(p, path);
    s->code = apr_pmemdup(p, d.buf, d.len);
    s->len = d.len;
    free(d.buf);
    s->shelf = apr_pcalloc(p, sizeof(*s->shelf));
    apr_thread_mutex_create(&s->shelf->mu, APR_THREAD_MUTEX_DEFAULT, p);
    apr_pool_cleanup_register(p, s->shelf, shelf_close, apr_pool_cleanup_null);
    return s;
}

/* ---- a state: allocator, budget, sandbox --------------------------------- */

/* malloc with a ceiling: a state lives across transactions, so its memory
 * cannot come from one of their pools; refusing is how Lua learns the limit. */
static void *vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    vm_t *vm = ud;
    size_t old = ptr ? osize : 0;
    void *np;
    if (nsize == 0) {
        free(ptr);
        vm->used -= old;
        return NULL;
    }
    if (nsize > old && vm->used - old + nsize > vm->cap)
        return NULL;
    np = realloc(ptr, nsize);
    if (np)
        vm->used = vm->used - old + nsize;
    return np;
}

static void budget_hook(lua_State *L, lua_Debug *ar)
{
    vm_t *vm = vm_of(L);
    if (--vm->periods > 0)
        return;
    vm->killed = 1;
    luaL_error(L, "instruction limit of %d exceeded", (int)vm->budget);
}

/* pcall and xpcall as the base library has them (upvalue 1), except that a
 * spent budget is raised again: a script must not catch its own end. */
static int guarded_pcall(lua_State *L)
{
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    if (vm_of(L)->killed)
        return luaL_error(L, "instruction limit exceeded");
    return lua_gettop(L);
}

static void open_sandbox(lua_State *L)
{
    static const luaL_Reg libs[] = {
        { LUA_GNAME, luaopen_base }, { LUA_STRLIBNAME, luaopen_string },
        { LUA_TABLIBNAME, luaopen_table }, { LUA_MATHLIBNAME, luaopen_math },
        { LUA_UTF8LIBNAME, luaopen_utf8 }, { NULL, NULL }
    };
    /* files, the console, code loaded at run time, the collector's switches */
    static const char *const removed[] = { "dofile", "loadfile", "load", "print",
                                           "collectgarbage", NULL };
    static const char *const os_kept[] = { "time", "date", "clock", "difftime", NULL };
    static const char *const guarded[] = { "pcall", "xpcall", NULL };
    const luaL_Reg *lib;
    int i;
    for (lib = libs; lib->name; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        lua_pop(L, 1);
    }
    for (i = 0; removed[i]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, removed[i]);
    }
    for (i = 0; guarded[i]; i++) {
        lua_getglobal(L, guarded[i]);
        lua_pushcclosure(L, guarded_pcall, 1);
        lua_setglobal(L, guarded[i]);
    }
    /* os: the clock only, from a library table nobody else can reach */
    lua_pushcfunction(L, luaopen_os);
    lua_call(L, 0, 1);
    lua_newtable(L);
    for (i = 0; os_kept[i]; i++) {
        lua_getfield(L, -2, os_kept[i]);
        lua_setfield(L, -2, os_kept[i]);
    }
    lua_setglobal(L, "os");
    lua_pop(L, 1);
}

/* Protected: libraries, m, the metatable of a call's globals, the chunk. */
static int vm_setup(lua_State *L)
{
    vm_t *vm = vm_of(L);
    const bw_lua_script_t *s = lua_touserdata(L, 1);
    const luaL_Reg *api = lua_touserdata(L, 2);
    open_sandbox(L);
    lua_newtable(L);
    if (api)
        luaL_setfuncs(L, api, 0);
    lua_setglobal(L, "m");
    lua_newtable(L);
    lua_pushglobaltable(L);
    lua_setfield(L, -2, "__index");
    vm->env_mt = luaL_ref(L, LUA_REGISTRYINDEX);
    if (luaL_loadbufferx(L, s->code, s->len, s->path, "b") != LUA_OK)
        return lua_error(L);
    vm->chunk = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

static vm_t *vm_new(const bw_lua_script_t *s, const luaL_Reg *api)
{
    vm_t *vm = calloc(1, sizeof(*vm));
    if (!vm)
        return NULL;
    vm->cap = BW_LUA_MEMORY;
    vm->L = lua_newstate(vm_alloc, vm);
    if (!vm->L) {
        free(vm);
        return NULL;
    }
    *(vm_t **)lua_getextraspace(vm->L) = vm;
    lua_pushcfunction(vm->L, vm_setup);
    lua_pushlightuserdata(vm->L, (void *)s);
    lua_pushlightuserdata(vm->L, (void *)api);
    if (lua_pcall(vm->L, 2, 0, 0) != LUA_OK) {
        lua_close(vm->L);
        free(vm);
        return NULL;
    }
    return vm;
}

static vm_t *vm_take(const bw_lua_script_t *s, const luaL_Reg *api)
{
    shelf_t *sh = s->shelf;
    vm_t *vm;
    apr_thread_mutex_lock(sh->mu);
    vm = sh->idle;
    if (vm)
        sh->idle = vm->next;
    apr_thread_mutex_unlock(sh->mu);
    return vm ? vm : vm_new(s, api);
}

static void vm_put(const bw_lua_script_t *s, vm_t *vm)
{
    shelf_t *sh = s->shelf;
    apr_thread_mutex_lock(sh->mu);
    vm->next = sh->idle;
    sh->idle = vm;
    apr_thread_mutex_unlock(sh->mu);
}

/* ---- a call ----------------------------------------------------------------- */

/* Protected: the chunk in fresh globals (so it defines main there), then
 * main(arg). Leaves main's first result. */
static int call_main(lua_State *L)
{
    vm_t *vm = vm_of(L);
    const bw_lua_call_t *call = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_newtable(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm->env_mt);
    lua_setmetatable(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm->chunk);
    lua_pushvalue(L, 1);
    lua_setupvalue(L, 2, 1);   /* the chunk's only upvalue is _ENV */
    lua_call(L, 0, 0);
    lua_getfield(L, 1, "main");
    if (lua_type(L, -1) != LUA_TFUNCTION)
        return luaL_error(L, "the script defines no function main()");
    if (call->arg)
        lua_pushlstring(L, call->arg->data, call->arg->len);
    lua_call(L, call->arg ? 1 : 0, 1);
    return 1;
}

static const char *error_text(lua_State *L, const vm_t *vm, int status, const bw_lua_call_t *call,
                              const char *path)
{
    if (vm->killed)
        return apr_psprintf(call->pool, "%s: instruction limit of %ld exceeded", path, vm->budget);
    if (status == LUA_ERRMEM)
        return apr_psprintf(call->pool, "%s: memory limit of %u bytes exceeded", path, (unsigned)vm->cap);
    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
        return apr_pstrdup(call->pool, lua_tostring(L, -1));
    return apr_psprintf(call->pool, "%s: error object is a %s value", path, luaL_typename(L, -1));
}

/* What main returned: nil or false is no match, anything else a match whose
 * message is the string (or number) returned. */
static int result_of(lua_State *L, bw_lua_call_t *call)
{
    size_t n;
    const char *s;
    switch (lua_type(L, -1)) {
    case LUA_TNIL:
        return 0;
    case LUA_TBOOLEAN:
        if (!lua_toboolean(L, -1))
            return 0;
        call->msg = "Lua script matched.";
        return 1;
    case LUA_TSTRING:
    case LUA_TNUMBER:
        s = lua_tolstring(L, -1, &n);
        call->msg = apr_pstrmemdup(call->pool, s, n);
        return 1;
    default:
        call->msg = "Lua script matched.";
        return 1;
    }
}

int bw_lua_run(const bw_lua_script_t *s, bw_lua_call_t *call)
{
    vm_t *vm = vm_take(s, call->api);
    lua_State *L;
    int status, rc;
    if (!vm) {
        call->error = apr_psprintf(call->pool, "%s: cannot create a Lua state", s->path);
        return -1;
    }
    L = vm->L;
    vm->host = call->host;
    vm->killed = 0;
    vm->budget = call->instructions > 0 ? call->instructions : BW_LUA_INSTRUCTIONS;
    vm->periods = (vm->budget + HOOK_PERIOD - 1) / HOOK_PERIOD;
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, HOOK_PERIOD);
    lua_pushcfunction(L, call_main);
    lua_pushlightuserdata(L, call);
    status = lua_pcall(L, 1, 1, 0);
    lua_sethook(L, NULL, 0, 0);
    rc = status == LUA_OK ? result_of(L, call) : -1;
    if (rc < 0)
        call->error = error_text(L, vm, status, call, s->path);
    /* let this call's globals go, and its garbage when it failed or grew */
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm->chunk);
    lua_pushnil(L);
    lua_setupvalue(L, -2, 1);
    lua_settop(L, 0);
    if (rc < 0 || vm->used > vm->cap / 2)
        lua_gc(L, LUA_GCCOLLECT);
    vm->host = NULL;
    vm_put(s, vm);
    return rc;
}
