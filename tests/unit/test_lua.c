/*
 * Lua scripts (operators/bw_lua.c and the m table of run/bw_lua_api.c):
 * compiling at start-up, what main() returns, the sandbox, globals that do
 * not outlive a call, the instruction and memory limits, calls from many
 * threads at once, and SecRuleScript / exec / @inspectFile through a
 * transaction with m.getvar, m.getvars and m.setvar.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <apr_general.h>
#include <apr_file_io.h>
#include <apr_thread_proc.h>
#include "run/bw_run.h"
#include "operators/bw_lua.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

/* Write text to a temporary file whose name ends in suffix. */
static const char *temp_file(const char *text, const char *suffix)
{
    char *tmpl = apr_pstrcat(pool, "/tmp/bw_test_lua_XXXXXX", NULL), *path;
    apr_file_t *f;
    ck_assert_int_eq(apr_file_mktemp(&f, tmpl, APR_CREATE | APR_READ | APR_WRITE | APR_EXCL, pool),
                     APR_SUCCESS);
    apr_file_close(f);
    unlink(tmpl);
    path = apr_pstrcat(pool, tmpl, suffix, NULL);
    ck_assert_int_eq(apr_file_open(&f, path, APR_CREATE | APR_WRITE | APR_TRUNCATE, APR_OS_DEFAULT, pool),
                     APR_SUCCESS);
    apr_file_write_full(f, text, strlen(text), NULL);
    apr_file_close(f);
    return path;
}

static bw_lua_script_t *script(const char *text)
{
    char *err = NULL;
    const char *path = temp_file(text, ".lua");
    bw_lua_script_t *s = bw_lua_script_load(pool, path, &err);
    unlink(path);
    ck_assert_msg(s != NULL, "%s", err ? err : "?");
    return s;
}

/* main(arg) without a transaction: m is empty. */
static int run(const bw_lua_script_t *s, const char *arg, const char **out)
{
    bw_lua_call_t call;
    bw_str_t a = bw_str_make(arg ? arg : "");
    int rc;
    memset(&call, 0, sizeof(call));
    call.pool = pool;
    call.arg = arg ? &a : NULL;
    rc = bw_lua_run(s, &call);
    *out = rc < 0 ? call.error : call.msg;
    return rc;
}

START_TEST(test_is_script)
{
    ck_assert(bw_lua_is_script("/a/b.lua"));
    ck_assert(bw_lua_is_script("x.lua"));
    ck_assert(!bw_lua_is_script(".lua"));
    ck_assert(!bw_lua_is_script("/bin/scan.sh"));
    ck_assert(!bw_lua_is_script("x.lua.sh"));
}
END_TEST

START_TEST(test_load_errors)
{
    char *err = NULL;
    const char *path = temp_file("function main()\n  return 1\n\n", ".lua");
    ck_assert_ptr_null(bw_lua_script_load(pool, path, &err));
    unlink(path);
    ck_assert_msg(strstr(err, path) && strstr(err, ":4:") && strstr(err, "'end' expected"), "%s", err);
    err = NULL;
    ck_assert_ptr_null(bw_lua_script_load(pool, "/nonexistent/x.lua", &err));
    ck_assert_msg(strstr(err, "cannot read Lua script /nonexistent/x.lua"), "%s", err);
}
END_TEST

START_TEST(test_results)
{
    const char *out;
    ck_assert_int_eq(run(script("function main() return 'found it' end"), NULL, &out), 1);
    ck_assert_str_eq(out, "found it");
    ck_assert_int_eq(run(script("function main() return nil end"), NULL, &out), 0);
    ck_assert_int_eq(run(script("function main() return false end"), NULL, &out), 0);
    ck_assert_int_eq(run(script("function main() end"), NULL, &out), 0);
    ck_assert_int_eq(run(script("function main(f) return 'file ' .. f end"), "/tmp/up-1", &out), 1);
    ck_assert_str_eq(out, "file /tmp/up-1");
    ck_assert_int_eq(run(script("function main() return 42 end"), NULL, &out), 1);
    ck_assert_str_eq(out, "42");
    ck_assert_int_eq(run(script("x = 1"), NULL, &out), -1);
    ck_assert_msg(strstr(out, "defines no function main()"), "%s", out);
    ck_assert_int_eq(run(script("function main() error('boom') end"), NULL, &out), -1);
    ck_assert_msg(strstr(out, ".lua:1: boom"), "%s", out);
}
END_TEST

START_TEST(test_sandbox)
{
    const char *out;
    bw_lua_script_t *s = script(
        "function main()\n"
        "  local seen = {}\n"
        "  for _, n in ipairs({ 'io', 'require', 'package', 'debug', 'dofile', 'loadfile',\n"
        "                       'load', 'print', 'collectgarbage', 'coroutine' }) do\n"
        "    if _G[n] ~= nil then seen[#seen + 1] = n end\n"
        "  end\n"
        "  for _, n in ipairs({ 'execute', 'getenv', 'remove', 'exit', 'tmpname' }) do\n"
        "    if os[n] ~= nil then seen[#seen + 1] = 'os.' .. n end\n"
        "  end\n"
        "  if #seen > 0 then return table.concat(seen, ',') end\n"
        "  if type(os.time()) ~= 'number' or type(os.date('%Y')) ~= 'string' then return 'no clock' end\n"
        "  if string.upper('a') ~= 'A' or math.max(1, 2) ~= 2 or utf8.char(65) ~= 'A' then\n"
        "    return 'libraries missing'\n"
        "  end\n"
        "  return nil\n"
        "end\n");
    ck_assert_msg(run(s, NULL, &out) == 0, "reachable: %s", out ? out : "?");
}
END_TEST

START_TEST(test_globals_do_not_leak)
{
    const char *out;
    bw_lua_script_t *s = script("count = (count or 0) + 1\n"
                                "function main() calls = (calls or 0) + 1\n"
                                "  return count .. '/' .. calls end\n");
    int i;
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(run(s, NULL, &out), 1);
        ck_assert_str_eq(out, "1/1");
    }
}
END_TEST

START_TEST(test_endless_loop)
{
    const char *out;
    bw_lua_script_t *s = script("function main()\n"
                                "  while true do pcall(function() while true do end end) end\n"
                                "end\n");
    bw_lua_script_t *ok = script("function main() local n = 0\n"
                                 "  for i = 1, 1000 do n = n + i end\n"
                                 "  return tostring(n) end\n");
    ck_assert_int_eq(run(s, NULL, &out), -1);
    ck_assert_msg(strstr(out, "instruction limit of 10000000 exceeded"), "%s", out);
    /* the state is fine afterwards, and a short script is far from the limit */
    ck_assert_int_eq(run(s, NULL, &out), -1);
    ck_assert_int_eq(run(ok, NULL, &out), 1);
    ck_assert_str_eq(out, "500500");
}
END_TEST

START_TEST(test_endless_allocation)
{
    const char *out;
    bw_lua_script_t *s = script("function main()\n"
                                "  local kept, str = {}, 'x'\n"
                                "  while true do str = str .. str; kept[#kept + 1] = str end\n"
                                "end\n");
    bw_lua_script_t *caught = script("function main()\n"
                                     "  local ok = pcall(function() return string.rep('x', 1 << 30) end)\n"
                                     "  if ok then return 'allocated 1 GB' end\n"
                                     "  return nil\n"
                                     "end\n");
    ck_assert_int_eq(run(s, NULL, &out), -1);
    ck_assert_msg(strstr(out, "memory limit of 16777216 bytes exceeded"), "%s", out);
    /* a refused allocation a script catches is an ordinary error to it */
    ck_assert_int_eq(run(caught, NULL, &out), 0);
    ck_assert_int_eq(run(s, NULL, &out), -1);
}
END_TEST

/* ---- many threads, one script ---------------------------------------------- */

typedef struct {
    const bw_lua_script_t *s;
    int bad;
} worker_t;

static void *APR_THREAD_FUNC worker(apr_thread_t *t, void *data)
{
    worker_t *w = data;
    apr_pool_t *p;
    int i;
    apr_pool_create_unmanaged_ex(&p, NULL, NULL);
    for (i = 0; i < 200; i++) {
        char arg[32];
        bw_str_t a;
        bw_lua_call_t call;
        snprintf(arg, sizeof arg, "%d", i);
        a = bw_str_make(arg);
        memset(&call, 0, sizeof(call));
        call.pool = p;
        call.arg = &a;
        if (bw_lua_run(w->s, &call) != 1 || strcmp(call.msg, apr_psprintf(p, "%d", i * 2)))
            w->bad++;
    }
    apr_pool_destroy(p);
    /* returning, not apr_thread_exit(): pthread_exit under ASan reports the
     * frames it leaves behind */
    return NULL;
}

START_TEST(test_threads)
{
    bw_lua_script_t *s = script("function main(n) last = n; local v = tonumber(n) * 2\n"
                                "  for i = 1, 100 do end\n"
                                "  return tostring(math.floor(v)) end\n");
    apr_thread_t *th[8];
    worker_t w[8];
    int i;
    for (i = 0; i < 8; i++) {
        w[i].s = s;
        w[i].bad = 0;
        ck_assert_int_eq(apr_thread_create(&th[i], NULL, worker, &w[i], pool), APR_SUCCESS);
    }
    for (i = 0; i < 8; i++) {
        apr_status_t st;
        apr_thread_join(&st, th[i]);
        ck_assert_int_eq(w[i].bad, 0);
    }
}
END_TEST

/* ---- through a transaction ----------------------------------------------------- */

typedef struct {
    int alerts;
    char last[4096];
    char message[4096];
} sink_t;

static sink_t sink;

static void on_alert(void *baton, bw_tx_t *tx, const bw_alert_t *a)
{
    sink.alerts++;
    snprintf(sink.last, sizeof sink.last, "%s", bw_alert_format(pool, tx, a));
}

static void on_message(void *baton, bw_tx_t *tx, int level, const char *text)
{
    snprintf(sink.message, sizeof sink.message, "%s", text);
}

static bw_callbacks_t cbs = { &sink, on_alert, on_message };

/* Rules (with @S1@, @S2@ replaced by the scripts' paths) to a program. */
static bw_program_t *load(const char *rules, const char *s1, const char *s2, const char **err)
{
    bw_config_t *cfg = bw_config_create(pool);
    char *text = apr_pstrdup(pool, rules), *at;
    const char *path;
    char *berr = NULL;
    bw_program_t *prog;
    while ((at = strstr(text, "@S1@")) || (at = strstr(text, "@S2@")))
        text = apr_pstrcat(pool, apr_pstrndup(pool, text, (apr_size_t)(at - text)),
                           at[2] == '1' ? s1 : s2, at + 4, NULL);
    path = temp_file(text, ".conf");
    *err = bw_config_load_file(cfg, path);
    unlink(path);
    if (*err)
        return NULL;
    prog = bw_program_build(pool, NULL, cfg, &berr);
    *err = berr;
    return prog;
}

static bw_tx_t *request(bw_program_t *prog, const char *uri)
{
    bw_request_t req;
    memset(&req, 0, sizeof(req));
    memset(&sink, 0, sizeof(sink));
    req.method = bw_str_make("GET");
    req.uri = bw_str_make(uri);
    req.protocol = bw_str_make("HTTP/1.1");
    req.request_line = bw_str_make(apr_pstrcat(pool, "GET ", uri, " HTTP/1.1", NULL));
    req.headers = apr_array_make(pool, 1, sizeof(bw_kv_t));
    req.remote_addr = bw_str_make("10.1.2.3");
    req.server_name = bw_str_make("example.org");
    req.unique_id = bw_str_make("uid-1");
    return bw_tx_create(pool, prog, &req, &cbs);
}

static const char *txvar(bw_tx_t *tx, const char *name)
{
    const bw_kv_t *kv = bw_coll_get(tx->tx_coll, bw_str_make(name));
    return kv ? bw_str_pdup(pool, kv->value) : NULL;
}

START_TEST(test_secrulescript_api)
{
    const char *err = NULL;
    const char *s1 = temp_file(
        "function main()\n"
        "  local q = m.getvar('ARGS.q', { 'lowercase', 'compressWhitespace' })\n"
        "  local n, names = 0, {}\n"
        "  for _, v in ipairs(m.getvars('ARGS', 'none')) do\n"
        "    n = n + 1; names[#names + 1] = v.name .. '=' .. v.value\n"
        "  end\n"
        "  m.setvar('tx.args', n)\n"
        "  m.setvar('tx.names', table.concat(names, ';'))\n"
        "  m.setvar('tx.score', '+5')\n"
        "  m.setvar('tx.gone', nil)\n"
        "  if m.getvar('ARGS:missing') ~= nil then return 'missing found' end\n"
        "  m.log(1, 'looked at ' .. n)\n"
        "  if q == 'an evil thing' then return 'evil in ARGS:q' end\n"
        "  return nil\n"
        "end\n", ".lua");
    bw_program_t *p = load("SecRuleEngine On\nSecDebugLogLevel 1\n"
                           "SecAction \"id:1,phase:1,pass,nolog,setvar:tx.score=1,setvar:tx.gone=1\"\n"
                           "SecRuleScript @S1@ \"id:2,phase:2,deny,status:403,msg:'script'\"\n",
                           s1, NULL, &err);
    bw_intervention_t iv;
    bw_tx_t *tx;
    ck_assert_msg(p != NULL, "%s", err ? err : "?");
    tx = request(p, "/?q=An%20EVIL%20%20Thing&b=2");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 1);
    ck_assert_int_eq(iv.status, 403);
    ck_assert_msg(strstr(sink.last, "evil in ARGS:q") && strstr(sink.last, "[id \"2\"]")
                  && strstr(sink.last, "[msg \"script\"]"), "%s", sink.last);
    ck_assert_str_eq(txvar(tx, "args"), "2");
    ck_assert_str_eq(txvar(tx, "names"), "ARGS:q=An EVIL  Thing;ARGS:b=2");
    ck_assert_str_eq(txvar(tx, "score"), "6");
    ck_assert_ptr_null(txvar(tx, "gone"));
    ck_assert_msg(strstr(sink.message, "looked at 2"), "%s", sink.message);
    tx = request(p, "/?q=fine");
    bw_tx_run_phase(tx, 1, &iv);
    ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 0);
    ck_assert_int_eq(sink.alerts, 0);
    unlink(s1);
}
END_TEST

START_TEST(test_exec_and_inspect_file)
{
    const char *err = NULL;
    const char *s1 = temp_file("function main()\n"
                               "  m.setvar('tx.runs', (tonumber(m.getvar('TX.runs')) or 0) + 1)\n"
                               "end\n", ".lua");
    const char *s2 = temp_file("function main(v) if v == 'bad' then return 'bad: ' .. v end end\n",
                               ".lua");
    bw_program_t *p = load("SecRuleEngine On\n"
                           "SecRule ARGS \"@streq yes\" \"id:1,phase:1,pass,nolog,exec:@S1@\"\n"
                           "SecRule ARGS:f \"@inspectFile @S2@\" \"id:2,phase:1,deny,status:406\"\n",
                           s1, s2, &err);
    bw_intervention_t iv;
    bw_tx_t *tx;
    ck_assert_msg(p != NULL, "%s", err ? err : "?");
    tx = request(p, "/?a=yes&b=yes&c=no&f=ok");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    ck_assert_str_eq(txvar(tx, "runs"), "2");
    tx = request(p, "/?f=bad");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 406);
    ck_assert_msg(strstr(sink.last, "bad: bad"), "%s", sink.last);
    ck_assert_ptr_null(txvar(tx, "runs"));
    unlink(s1);
    unlink(s2);
}
END_TEST

START_TEST(test_runtime_errors_and_config_errors)
{
    const char *err = NULL;
    const char *s1 = temp_file("function main() return m.getvar('ARGS', 'noSuchTfn') end\n", ".lua");
    const char *bad = temp_file("function main(\n", ".lua");
    bw_program_t *p = load("SecRuleEngine On\n"
                           "SecRuleScript @S1@ \"id:1,phase:1,deny\"\n"
                           "SecRule ARGS \"@rx .\" \"id:2,phase:1,deny,status:406\"\n", s1, NULL, &err);
    bw_intervention_t iv;
    bw_tx_t *tx;
    ck_assert_msg(p != NULL, "%s", err ? err : "?");
    tx = request(p, "/?a=1");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 406);   /* the script failed: no match; rule 2 ran */
    ck_assert_msg(strstr(sink.message, "Rule 1 ") && strstr(sink.message, "unknown transformation \"noSuchTfn\""),
                  "%s", sink.message);
    ck_assert_ptr_null(load("SecRuleScript @S1@ \"id:1,phase:1,deny\"\n", bad, NULL, &err));
    ck_assert_msg(strstr(err, ":1: SecRuleScript: ") && strstr(err, bad), "%s", err);
    ck_assert_ptr_null(load("SecRuleScript /x/y.sh \"id:1\"\n", NULL, NULL, &err));
    ck_assert_msg(strstr(err, "not a Lua script"), "%s", err);
    ck_assert_ptr_null(load("SecRule ARGS \"@rx x\" \"id:1,exec:@S1@.missing.lua\"\n", s1, NULL, &err));
    ck_assert_msg(strstr(err, "exec: cannot read Lua script"), "%s", err);
    unlink(s1);
    unlink(bad);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("lua");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_is_script);
    tcase_add_test(tc, test_load_errors);
    tcase_add_test(tc, test_results);
    tcase_add_test(tc, test_sandbox);
    tcase_add_test(tc, test_globals_do_not_leak);
    tcase_add_test(tc, test_endless_loop);
    tcase_add_test(tc, test_endless_allocation);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_secrulescript_api);
    tcase_add_test(tc, test_exec_and_inspect_file);
    tcase_add_test(tc, test_runtime_errors_and_config_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;
    apr_initialize();
    sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_terminate();
    return failed ? 1 : 0;
}
