/*
 * Engine tests without Apache: the rule-language parser (words, quoting,
 * continuations, action lists, targets, errors with file:line), programs
 * (defaults, removals, updates, inheritance) and transactions (variables,
 * chains, setvar/anomaly scoring, skipAfter, ctl, DetectionOnly).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <apr_general.h>
#include <apr_file_io.h>
#include "run/bw_run.h"
#include "matcher/bw_matcher.h"
#include "test_program.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

/* Write text to a temp rule file and return its path. */
static const char *rule_file(const char *text)
{
    char *path = apr_pstrdup(pool, "/tmp/bw_test_rules_XXXXXX");
    apr_file_t *f;
    apr_size_t n = strlen(text);
    ck_assert_int_eq(apr_file_mktemp(&f, path, APR_CREATE | APR_READ | APR_WRITE | APR_EXCL, pool), APR_SUCCESS);
    apr_file_write_full(f, text, n, NULL);
    apr_file_close(f);
    return path;
}

static bw_program_t *load(const char *text, const char **err_out)
{
    bw_config_t *cfg = bw_config_create(pool);
    const char *path = rule_file(text);
    const char *err = bw_config_load_file(cfg, path);
    char *berr = NULL;
    bw_program_t *prog;
    unlink(path);
    if (err_out)
        *err_out = err;
    if (err)
        return NULL;
    prog = bw_program_build(pool, NULL, cfg, &berr);
    if (err_out)
        *err_out = berr;
    return prog;
}

static const char *load_error(const char *text)
{
    const char *err = NULL;
    bw_program_t *p = load(text, &err);
    ck_assert_msg(p == NULL, "expected an error for:\n%s", text);
    ck_assert_ptr_nonnull(err);
    return err;
}

typedef struct {
    int alerts;
    char last[4096];
} sink_t;

static void on_alert(void *baton, bw_tx_t *tx, const bw_alert_t *a)
{
    sink_t *s = baton;
    s->alerts++;
    snprintf(s->last, sizeof s->last, "%s", bw_alert_format(pool, tx, a));
}

static sink_t sink;
static bw_callbacks_t cbs = { &sink, on_alert, NULL };

static bw_tx_t *request(bw_program_t *prog, const char *method, const char *uri, const char *hdrs)
{
    bw_request_t req;
    memset(&req, 0, sizeof(req));
    memset(&sink, 0, sizeof(sink));
    req.method = bw_str_make(method);
    req.uri = bw_str_make(uri);
    req.protocol = bw_str_make("HTTP/1.1");
    req.request_line = bw_str_make(apr_pstrcat(pool, method, " ", uri, " HTTP/1.1", NULL));
    req.headers = apr_array_make(pool, 4, sizeof(bw_kv_t));
    req.remote_addr = bw_str_make("10.1.2.3");
    req.server_name = bw_str_make("example.org");
    req.unique_id = bw_str_make("uid-1");
    while (hdrs && *hdrs) {
        const char *colon = strchr(hdrs, ':'), *nl = strchr(hdrs, '\n');
        bw_kv_t *kv = apr_array_push(req.headers);
        if (!nl)
            nl = hdrs + strlen(hdrs);
        kv->name = bw_str_n(hdrs, (size_t)(colon - hdrs));
        kv->value = bw_str_n(colon + 2, (size_t)(nl - colon - 2));
        hdrs = *nl ? nl + 1 : nl;
    }
    return bw_tx_create(pool, prog, &req, &cbs);
}

static const char *txvar(bw_tx_t *tx, const char *name)
{
    const bw_kv_t *kv = bw_coll_get(tx->tx_coll, bw_str_make(name));
    return kv ? bw_str_pdup(pool, kv->value) : NULL;
}

/* ---- words ---------------------------------------------------------------- */

START_TEST(test_getword_quotes)
{
    const char *line = "ARGS \"@rx a\\\"b\\\\c\" 'x y' plain\\\\z";
    char *w;
    ck_assert_ptr_null(bw_conf_getword(pool, &line, &w));
    ck_assert_str_eq(w, "ARGS");
    ck_assert_ptr_null(bw_conf_getword(pool, &line, &w));
    ck_assert_str_eq(w, "@rx a\"b\\c");
    ck_assert_ptr_null(bw_conf_getword(pool, &line, &w));
    ck_assert_str_eq(w, "x y");
    ck_assert_ptr_null(bw_conf_getword(pool, &line, &w));
    ck_assert_str_eq(w, "plain\\z");
    ck_assert_ptr_null(bw_conf_getword(pool, &line, &w));
    ck_assert_str_eq(w, "");
}
END_TEST

/* httpd runs a quote nobody closes to the end of the line; so do we */
START_TEST(test_getword_unbalanced)
{
    const char *line = "\"@rx abc 'd\\\"e";
    char *w;
    ck_assert_ptr_null(bw_conf_getword(pool, &line, &w));
    ck_assert_str_eq(w, "@rx abc 'd\"e");
    ck_assert_str_eq(line, "");
    line = "'x\\'y";
    ck_assert_ptr_null(bw_conf_getword(pool, &line, &w));
    ck_assert_str_eq(w, "x'y");
}
END_TEST

/* ---- parse errors name file, line and reason ---------------------------------- */

START_TEST(test_errors)
{
    const char *e;
    e = load_error("SecRule ARGS \"@nosuchop x\" \"id:1,pass\"\n");
    ck_assert_msg(strstr(e, ":1: unknown operator \"@nosuchop\""), "%s", e);
    e = load_error("# comment\n\nSecRule ARGS \"@rx (abc\" \"id:1,pass\"\n");
    ck_assert_msg(strstr(e, ":3: @rx") && strstr(e, "offset"), "%s", e);
    e = load_error("SecRule ARGS \"@rx a\" \"phase:2,pass\"\n");
    ck_assert_msg(strstr(e, "no id"), "%s", e);
    e = load_error("SecRule ARGS \"@rx a\" \"id:5,pass\"\nSecRule ARGS \"@rx b\" \"id:5,pass\"\n");
    ck_assert_msg(strstr(e, ":2: duplicate rule id 5"), "%s", e);
    e = load_error("SecRule NOPE \"@rx a\" \"id:5,pass\"\n");
    ck_assert_msg(strstr(e, "unknown variable \"NOPE\""), "%s", e);
    e = load_error("SecRule ARGS \"@rx a\" \"id:5,pass,t:nosuch\"\n");
    ck_assert_msg(strstr(e, "unknown transformation \"nosuch\""), "%s", e);
    e = load_error("SecRule ARGS \"@rx a\" \"id:5,pass,frobnicate\"\n");
    ck_assert_msg(strstr(e, "unknown action \"frobnicate\""), "%s", e);
    e = load_error("SecRule ARGS \"@rx a\" \"id:5,msg:'unterminated\"\n");
    ck_assert_msg(strstr(e, "missing closing quote"), "%s", e);
    e = load_error("SecRule ARGS \"@rx a\" \"id:5,pass,chain\"\n");
    ck_assert_msg(strstr(e, "chain"), "%s", e);
    e = load_error("SecRuleEngine Sometimes\n");
    ck_assert_msg(strstr(e, ":1: SecRuleEngine: invalid value \"Sometimes\""), "%s", e);
    e = load_error("SecFooBar On\n");
    ck_assert_msg(strstr(e, ":1: unknown directive \"SecFooBar\""), "%s", e);
}
END_TEST

START_TEST(test_continuation_and_all_errors)
{
    const char *e;
    bw_program_t *p = load("SecRule ARGS \\\n    \"@rx a\" \\\n    \"id:1,\\\n    pass\"\n", &e);
    ck_assert_ptr_nonnull(p);
    /* an unclosed last quote runs to the end of the line (httpd's reading) */
    p = load("SecRule ARGS \"@rx a\" \"id:5,pass\n", &e);
    ck_assert_msg(p != NULL, "%s", e ? e : "?");
    /* "\\\\" before the newline joins too: the word is x\ y */
    p = load("SecRule ARGS \"@streq x\\\\\n y\" \"id:6,pass\"\n", &e);
    ck_assert_msg(p != NULL, "%s", e ? e : "?");
    /* white space after the backslash: no join, "\\" is a fourth word */
    e = load_error("SecRule ARGS \"@rx a\" \"id:7,pass\" \\ \n\"nolog\"\n");
    ck_assert_msg(strstr(e, ":1: SecRule takes two or three"), "%s", e);
    /* a backslash ending the file is kept, as httpd keeps it */
    e = load_error("SecAction \"id:8,pass\" \\");
    ck_assert_msg(strstr(e, ":1: SecAction takes one argument"), "%s", e);
    e = load_error("SecRule A1 \"@rx a\" \"id:1\"\nSecRule ARGS \"@rx b\" \"id:2\"\nSecRule B2 \"@rx c\" \"id:3\"\n");
    ck_assert_msg(strstr(e, ":1: unknown variable") && strstr(e, ":3: unknown variable"), "%s", e);
}
END_TEST

/* ---- SecRemoteRules: what is decided before any download ---------------------- */

START_TEST(test_remote_rules_args)
{
    const char *e;
    bw_config_t *cfg;
    e = load_error("SecRemoteRules key http://127.0.0.1:1/rules.conf\n");
    ck_assert_msg(strstr(e, ":1: SecRemoteRules: only https://"), "%s", e);
    e = load_error("SecRemoteRulesFailAction Warn\nSecRemoteRules key http://127.0.0.1:1/r\n");
    ck_assert_msg(strstr(e, ":2: SecRemoteRules: only https://"), "%s", e);
    e = load_error("SecRemoteRules crypto key https://127.0.0.1:1/r\n");
    ck_assert_msg(strstr(e, "crypto option") , "%s", e);
    e = load_error("SecRemoteRules https://127.0.0.1:1/r\n");
    ck_assert_msg(strstr(e, "takes a key and an https:// URL"), "%s", e);
    e = load_error("SecRemoteRulesFailAction Sometimes\n");
    ck_assert_msg(strstr(e, "expected Abort or Warn"), "%s", e);
    e = load_error("SecRemoteRulesTimeout 0\n");
    ck_assert_msg(strstr(e, "SecRemoteRulesTimeout: invalid value"), "%s", e);
    /* nothing listens on port 1: Abort (the default) stops, Warn goes on */
    e = load_error("SecRemoteRules key https://127.0.0.1:1/rules.conf\n");
    ck_assert_msg(strstr(e, ":1: SecRemoteRules: cannot download https://127.0.0.1:1/"), "%s", e);
    cfg = bw_config_create(pool);
    {
        const char *path = rule_file("SecRemoteRulesFailAction Warn\n"
                                     "SecRemoteRulesTimeout 2 3\n"
                                     "SecRemoteRules key https://127.0.0.1:1/rules.conf\n");
        e = bw_config_load_file(cfg, path);
        unlink(path);
    }
    ck_assert_msg(e == NULL, "%s", e);
    ck_assert_int_eq(bw_config_warnings(cfg)->nelts, 1);
    e = ((const char **)bw_config_warnings(cfg)->elts)[0];
    ck_assert_msg(strstr(e, ":3: SecRemoteRules: cannot download") && strstr(e, "Warn"), "%s", e);
}
END_TEST

/* ---- runtime ------------------------------------------------------------------- */

START_TEST(test_deny_and_log_format)
{
    bw_intervention_t iv;
    bw_program_t *p = load("SecRuleEngine On\n"
                           "SecRule ARGS:id \"@rx ^\\d+'\" \"id:100,phase:1,deny,status:406,"
                           "msg:'quote after number',logdata:'%{MATCHED_VAR_NAME}=%{MATCHED_VAR}',"
                           "severity:CRITICAL,tag:'a/b'\"\n", NULL);
    bw_tx_t *tx = request(p, "GET", "/x?id=1'%20or", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 406);
    ck_assert_int_eq(sink.alerts, 1);
    ck_assert_msg(strstr(sink.last, "Access denied with code 406 (phase 1).")
                  && strstr(sink.last, "[id \"100\"]") && strstr(sink.last, "[msg \"quote after number\"]")
                  && strstr(sink.last, "[data \"ARGS:id=1' or\"]") && strstr(sink.last, "[severity \"CRITICAL\"]")
                  && strstr(sink.last, "[tag \"a/b\"]") && strstr(sink.last, "[hostname \"example.org\"]")
                  && strstr(sink.last, "[uri \"/x\"]") && strstr(sink.last, "[unique_id \"uid-1\"]"),
                  "%s", sink.last);
}
END_TEST

/* proxy:URL: the URL's macros expanded, mod_security2's words in the log;
 * a block under a proxy default goes there too; in phase 3 the handler has
 * run, so it is a deny with 500. */
START_TEST(test_proxy_intervention)
{
    bw_intervention_t iv;
    bw_program_t *p = load("SecRuleEngine On\n"
                           "SecDefaultAction \"phase:2,log,proxy:http://127.0.0.1:8/trap\"\n"
                           "SecRule ARGS:to \"@rx ^\\w+$\" \"id:1,phase:1,proxy:http://10.0.0.1/%{ARGS.to}\"\n"
                           "SecRule ARGS:b \"@streq 1\" \"id:2,phase:2,block\"\n"
                           "SecRule ARGS:late \"@streq 1\" \"id:3,phase:3,proxy:http://10.0.0.1/\"\n", NULL);
    bw_tx_t *tx = request(p, "GET", "/?to=honeypot", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.disposition, BW_DISP_PROXY);
    ck_assert_str_eq(iv.url, "http://10.0.0.1/honeypot");
    ck_assert_msg(strstr(sink.last, "Access denied using proxy to (phase 1) http://10.0.0.1/honeypot."),
                  "%s", sink.last);

    tx = request(p, "GET", "/?b=1", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    bw_tx_request_body_end(tx);
    ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 1);
    ck_assert_int_eq(iv.disposition, BW_DISP_PROXY);
    ck_assert_str_eq(iv.url, "http://127.0.0.1:8/trap");

    tx = request(p, "GET", "/?late=1", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    bw_tx_request_body_end(tx);
    ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 0);
    ck_assert_int_eq(bw_tx_run_phase(tx, 3, &iv), 1);
    ck_assert_int_eq(iv.disposition, BW_DISP_DENY);
    ck_assert_int_eq(iv.status, 500);
    ck_assert_msg(strstr(sink.last, "Access denied with code 500 (phase 3) (proxy works in phases 1 and 2"),
                  "%s", sink.last);
}
END_TEST

/* SecChrootDir: the directory is checked where it is named; the glue
 * reads it from the settings. */
START_TEST(test_chroot_dir)
{
    const char *err;
    bw_program_t *p = load("SecChrootDir /tmp\n", NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(bw_program_settings(p)->chroot_dir, "/tmp");
    err = load_error("SecChrootDir /no/such/jail\n");
    ck_assert_msg(strstr(err, ":1: SecChrootDir: /no/such/jail: No such file or directory"), "%s", err);
    err = load_error("SecChrootDir /dev/null\n");
    ck_assert_msg(strstr(err, "/dev/null: not a directory"), "%s", err);
    err = load_error("SecChrootDir\n");
    ck_assert_msg(strstr(err, "SecChrootDir"), "%s", err);
}
END_TEST

START_TEST(test_detection_only)
{
    bw_intervention_t iv;
    bw_program_t *p = load("SecRuleEngine DetectionOnly\n"
                           "SecRule REQUEST_METHOD \"@streq GET\" \"id:1,phase:1,deny\"\n", NULL);
    bw_tx_t *tx = request(p, "GET", "/", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    ck_assert_int_eq(sink.alerts, 1);
    ck_assert_msg(strstr(sink.last, "ModSecurity: Warning."), "%s", sink.last);
}
END_TEST

START_TEST(test_anomaly_scoring_chain_skip)
{
    bw_intervention_t iv;
    bw_program_t *p = load(
        "SecRuleEngine On\n"
        "SecDefaultAction \"phase:2,log,auditlog,pass\"\n"
        "SecAction \"id:1,phase:1,nolog,pass,setvar:tx.score=0,setvar:tx.limit=5\"\n"
        "SecRule ARGS \"@contains evil\" \"id:2,phase:2,block,t:none,t:lowercase,"
        "setvar:'tx.score=+%{tx.limit}'\"\n"
        "SecRule REQUEST_HEADERS:User-Agent \"@contains bot\" \"id:3,phase:2,block,chain\"\n"
        "  SecRule REQUEST_METHOD \"@streq POST\" \"setvar:tx.score=+100\"\n"
        "SecRule TX:score \"@lt 1\" \"id:4,phase:2,pass,nolog,skipAfter:END\"\n"
        "SecRule TX:score \"@ge %{tx.limit}\" \"id:5,phase:2,deny,status:403,msg:'score %{tx.score}'\"\n"
        "SecMarker END\n", NULL);
    bw_tx_t *tx = request(p, "GET", "/?a=EVIL&b=evil", "User-Agent: somebot\n");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    bw_tx_request_body_end(tx);
    ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 1);
    /* both ARGS matched: the action ran per match, as in ModSecurity 2 */
    ck_assert_str_eq(txvar(tx, "score"), "10");
    ck_assert_int_eq(iv.status, 403);
    ck_assert_msg(strstr(sink.last, "[msg \"score 10\"]"), "%s", sink.last);

    tx = request(p, "GET", "/?a=fine", NULL);
    bw_tx_run_phase(tx, 1, &iv);
    ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 0);
    ck_assert_str_eq(txvar(tx, "score"), "0");
}
END_TEST

START_TEST(test_exclusions_and_counts)
{
    bw_intervention_t iv;
    bw_program_t *p = load(
        "SecRuleEngine On\n"
        "SecRule ARGS|!ARGS:safe \"@rx x\" \"id:1,phase:1,deny\"\n"
        "SecRule &ARGS \"@gt 2\" \"id:2,phase:1,deny,status:400\"\n"
        "SecRule ARGS_NAMES \"@rx ^p_\" \"id:3,phase:1,deny,status:401\"\n"
        "SecRule REQUEST_COOKIES:/^sess/ \"@rx bad\" \"id:4,phase:1,deny,status:402\"\n", NULL);
    bw_tx_t *tx = request(p, "GET", "/?safe=x", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    tx = request(p, "GET", "/?a=1&b=2&c=3", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 400);
    tx = request(p, "GET", "/?p_x=1", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 401);
    tx = request(p, "GET", "/", "Cookie: other=bad; sessid=bad\n");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 402);
    ck_assert_msg(strstr(sink.last, "REQUEST_COOKIES:sessid"), "%s", sink.last);
}
END_TEST

/* &VAR counts where the variable counts without making its values (ARGS,
 * headers, cookies and their names): literal selectors case-insensitive,
 * query and body arguments together, beside the counts that still
 * generate (a /regex/ selector). Each rule that sees its expected count
 * sets a TX variable. */
START_TEST(test_counts_without_values)
{
    static const struct {
        const char *target;
        int n;
    } want[] = {
        { "&ARGS", 5 }, { "&ARGS_NAMES", 5 }, { "&ARGS:a", 3 }, { "&ARGS_NAMES:A", 3 },
        { "&ARGS:/^[ab]$/", 4 }, { "&ARGS_GET", 3 }, { "&ARGS_GET_NAMES:b", 1 },
        { "&ARGS_GET:zz", 0 }, { "&ARGS_POST", 2 }, { "&ARGS_POST_NAMES:c", 1 },
        { "&REQUEST_HEADERS", 4 }, { "&REQUEST_HEADERS_NAMES", 4 },
        { "&REQUEST_HEADERS:x-dup", 2 }, { "&REQUEST_HEADERS_NAMES:COOKIE", 1 },
        { "&REQUEST_COOKIES", 3 }, { "&REQUEST_COOKIES:sess", 2 }, { "&REQUEST_COOKIES_NAMES:other", 1 },
        { "&REQUEST_COOKIES_NAMES:none", 0 },
    };
    const char *body = "a=4&c=5";
    char *rules = apr_pstrdup(pool, "SecRuleEngine On\nSecRequestBodyAccess On\n");
    bw_intervention_t iv;
    bw_program_t *p;
    bw_tx_t *tx;
    size_t i;
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        rules = apr_psprintf(pool, "%sSecRule %s \"@eq %d\" \"id:%d,phase:2,pass,nolog,setvar:tx.c%d=1\"\n",
                             rules, want[i].target, want[i].n, (int)i + 1, (int)i);
    p = load(rules, NULL);
    ck_assert_ptr_nonnull(p);
    tx = request(p, "POST", "/?a=1&A=2&b=3",
                 "Content-Type: application/x-www-form-urlencoded\n"
                 "X-Dup: 1\nx-dup: 2\nCookie: sess=1; other=2; SESS=3\n");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    bw_tx_request_body_append(tx, body, strlen(body));
    bw_tx_request_body_end(tx);
    ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 0);
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        ck_assert_msg(txvar(tx, apr_psprintf(pool, "c%d", (int)i)) != NULL, "%s is not %d",
                      want[i].target, want[i].n);
}
END_TEST

/* Every transformed array a source computed holds, for every value, what
 * its node's chain makes of the raw value, and its byte sets cover the
 * result: checked on chains that end in the same transformation behind
 * first steps that change some values and leave others, where a node may
 * take a peer's result for a string the peer already transformed. */
START_TEST(test_transformed_arrays)
{
    static const char *const chains[] = {
        "t:lowercase", "t:urlDecodeUni,t:lowercase", "t:htmlEntityDecode,t:lowercase",
        "t:compressWhitespace,t:lowercase", "t:removeWhitespace,t:lowercase",
        "t:urlDecodeUni,t:htmlEntityDecode,t:lowercase", "t:cmdLine", "t:urlDecodeUni,t:cmdLine",
        "t:lowercase,t:urlDecodeUni", "t:htmlEntityDecode,t:urlDecodeUni",
    };
    char *rules = apr_pstrdup(pool, "SecRuleEngine On\n");
    bw_intervention_t iv;
    bw_program_t *p;
    bw_tx_t *tx;
    int k, node, i, checked = 0;
    size_t c;
    for (c = 0; c < sizeof(chains) / sizeof(chains[0]); c++)
        rules = apr_psprintf(pool, "%sSecRule ARGS|ARGS_NAMES \"@rx zq%dzq\" \"id:%d,phase:1,pass,nolog,%s\"\n",
                             rules, (int)c, (int)c + 1, chains[c]);
    p = load(rules, NULL);
    ck_assert_ptr_nonnull(p);
    tx = request(p, "GET", "/?ABC=1&a%2542c=A%2542C&amp=A%26amp;B&x=A%20%20B&MiXeD=MiXeD%2520Case%20%26lt;"
                 "&plain=plain&Sh=A%5cB%20c&e=&q=%22C%22AT%2520/ETC&w=w%2541%26%2365;", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    for (k = 0; k < tx->prog->nsrc; k++) {
        const bw_src_state_t *S = &tx->src[k];
        if (!tx->src_built[k] || !S->tv)
            continue;
        for (node = 0; node < tx->prog->nnodes; node++) {
            int l = S->local[node];
            if (l < 0 || !S->tv[l])
                continue;
            for (i = 0; i < S->n; i++) {
                const bw_tfn_def_t *steps[16];
                int n = 0, m, w;
                bw_str_t want = S->raw[i];
                bw_byteset_t bytes;
                for (m = node; m >= 0 && n < 16; m = tx->prog->nodes[m].parent)
                    steps[n++] = tx->prog->nodes[m].tfn;
                while (n--)
                    steps[n]->fn(&tx->tfn_env, tx->pool, want, &want);
                ck_assert_msg(S->tv[l][i].len == want.len
                              && !memcmp(S->tv[l][i].data, want.data, want.len),
                              "value %d at node %d (%s): '%.*s', want '%.*s'", i, node,
                              tx->prog->nodes[node].tfn->name, (int)S->tv[l][i].len,
                              S->tv[l][i].data, (int)want.len, want.data);
                bw_byteset_of(want, &bytes);
                for (w = 0; w < 4; w++) {
                    ck_assert_msg((bytes.w[w] & ~S->tps[l][i].w[w]) == 0,
                                  "value %d at node %d: bytes missing", i, node);
                    ck_assert_msg((bytes.w[w] & ~S->tall[l]->w[w]) == 0,
                                  "value %d at node %d: union misses bytes", i, node);
                }
                checked++;
            }
        }
    }
    ck_assert_int_gt(checked, 100);
}
END_TEST

START_TEST(test_removals_and_updates)
{
    bw_intervention_t iv;
    bw_program_t *p = load(
        "SecRuleEngine On\n"
        "SecRule ARGS \"@rx x\" \"id:10,phase:1,deny,tag:'attack-x'\"\n"
        "SecRule ARGS \"@rx y\" \"id:11,phase:1,deny,status:418\"\n"
        "SecRule ARGS \"@rx z\" \"id:12,phase:1,deny,status:419\"\n"
        "SecRuleRemoveByTag attack-x\n"
        "SecRuleUpdateTargetById 11 \"!ARGS:ok\"\n"
        "SecRuleUpdateActionById 12 \"status:420\"\n", NULL);
    bw_tx_t *tx = request(p, "GET", "/?a=x", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    tx = request(p, "GET", "/?ok=y", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    tx = request(p, "GET", "/?a=y", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 418);
    tx = request(p, "GET", "/?a=z", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 420);
}
END_TEST

START_TEST(test_ctl_runtime)
{
    bw_intervention_t iv;
    bw_program_t *p = load(
        "SecRuleEngine On\n"
        "SecRule REQUEST_HEADERS:X-Test \"@rx ^.*$\" \"id:1,phase:1,pass,log,ctl:ruleRemoveById=2-3\"\n"
        "SecRule ARGS \"@rx x\" \"id:2,phase:1,deny\"\n"
        "SecRule ARGS \"@rx y\" \"id:4,phase:1,pass,ctl:ruleRemoveTargetById=5;ARGS:q\"\n"
        "SecRule ARGS \"@rx y\" \"id:5,phase:1,deny,status:499\"\n", NULL);
    bw_tx_t *tx = request(p, "GET", "/?a=x", "X-Test: 1\n");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    tx = request(p, "GET", "/?q=y", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    tx = request(p, "GET", "/?r=y", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 499);
}
END_TEST

START_TEST(test_inheritance)
{
    bw_config_t *parent = bw_config_create(pool), *child = bw_config_create(pool);
    bw_program_t *pp, *cp;
    bw_intervention_t iv;
    char *err = NULL;
    ck_assert_ptr_null(bw_config_directive(parent, "SecRuleEngine", "On", "p.conf", 1));
    ck_assert_ptr_null(bw_config_directive(parent, "SecRule",
                                           "ARGS \"@rx x\" \"id:1,phase:1,deny\"", "p.conf", 2));
    ck_assert_ptr_null(bw_config_directive(child, "SecRuleRemoveById", "1", "c.conf", 1));
    ck_assert_ptr_null(bw_config_directive(child, "SecRule",
                                           "ARGS \"@rx y\" \"id:2,phase:1,deny,status:410\"", "c.conf", 2));
    pp = bw_program_build(pool, NULL, parent, &err);
    cp = bw_program_build(pool, pp, child, &err);
    ck_assert_ptr_nonnull(cp);
    ck_assert_int_eq(bw_tx_run_phase(request(pp, "GET", "/?a=x", NULL), 1, &iv), 1);
    ck_assert_int_eq(bw_tx_run_phase(request(cp, "GET", "/?a=x", NULL), 1, &iv), 0);
    ck_assert_int_eq(bw_tx_run_phase(request(cp, "GET", "/?a=y", NULL), 1, &iv), 1);
    ck_assert_int_eq(iv.status, 410);
    ck_assert_int_eq(bw_tx_run_phase(request(pp, "GET", "/?a=y", NULL), 1, &iv), 0);
}
END_TEST

/* Two transactions that overlap both add 1: the record must hold 2. */
/* A value's name as logs and MATCHED_VAR_NAME show it, as mod_security2
 * 2.9.7 does (tests/regression/compat/chains.yaml): a count by its variable
 * alone, ":" and the key when it has one (up to a NUL, as printf's %.*s), a
 * value of MATCHED_VARS by the variable it came from. */
START_TEST(test_varval_name)
{
    bw_varval_t v;
    memset(&v, 0, sizeof(v));
    v.var = bw_var_lookup("ARGS", 4);
    ck_assert_str_eq(bw_varval_name(pool, &v), "ARGS");
    v.is_count = 1;
    ck_assert_str_eq(bw_varval_name(pool, &v), "ARGS");
    v.key = bw_str_make("id");
    ck_assert_str_eq(bw_varval_name(pool, &v), "ARGS");
    v.is_count = 0;
    ck_assert_str_eq(bw_varval_name(pool, &v), "ARGS:id");
    v.key = bw_str_n("a\0b", 3);
    ck_assert_str_eq(bw_varval_name(pool, &v), "ARGS:a");
    v.var = bw_var_lookup("MATCHED_VARS", 12);
    v.key = bw_str_make("ARGS:id");
    ck_assert_str_eq(bw_varval_name(pool, &v), "ARGS:id");
}
END_TEST

START_TEST(test_persistent_no_lost_update)
{
    bw_intervention_t iv;
    char dir[] = "/tmp/bw_test_data_XXXXXX";
    bw_program_t *p;
    bw_tx_t *a, *b, *c;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    p = load(apr_psprintf(pool,
        "SecRuleEngine On\nSecDataDir %s\nSecCollectionTimeout 600\n"
        "SecAction \"id:1,phase:1,pass,nolog,initcol:ip=%%{remote_addr},setvar:ip.count=+1,"
        "setvar:ip.last=%%{request_uri}\"\n"
        "SecRule IP:count \"@ge 3\" \"id:2,phase:1,deny,status:429\"\n", dir), NULL);
    ck_assert_ptr_nonnull(p);
    a = request(p, "GET", "/a", NULL);
    b = request(p, "GET", "/b", NULL);
    ck_assert_int_eq(bw_tx_run_phase(a, 1, &iv), 0);
    ck_assert_int_eq(bw_tx_run_phase(b, 1, &iv), 0);
    bw_tx_run_phase(a, 5, &iv);
    bw_tx_run_phase(b, 5, &iv);
    c = request(p, "GET", "/c", NULL);
    ck_assert_int_eq(bw_tx_run_phase(c, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 429);
    {
        bw_coll_t *ip = bw_tx_collection(c, "IP", 0);
        ck_assert_str_eq(bw_str_pdup(pool, bw_coll_get(ip, bw_str_make("count"))->value), "3");
        ck_assert_str_eq(bw_str_pdup(pool, bw_coll_get(ip, bw_str_make("last"))->value), "/c");
        ck_assert_str_eq(bw_str_pdup(pool, bw_coll_get(ip, bw_str_make("IS_NEW"))->value), "0");
    }
    bw_tx_run_phase(c, 5, &iv);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ck_assert_int_eq(system(cmd), 0);
    }
}
END_TEST

/* The rules built with the scan (plain 0) or without it (plain 1). */
static bw_program_t *scan_or_plain(const char *rules, int plain)
{
    bw_config_t *cfg = bw_config_create(pool);
    const char *path = rule_file(rules);
    char *err = NULL;
    bw_program_t *p;
    ck_assert_ptr_null(bw_config_load_file(cfg, path));
    unlink(path);
    p = bw_program_build_ex(pool, NULL, cfg, plain ? BW_PROG_NO_SCAN : 0, &err);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Operator byte gates and multiMatch through the node arrays (the scan's)
 * give what the plain program gives: values without a gate byte, with one
 * only after a transformation, rules without transformations. */
START_TEST(test_operator_gates)
{
    static const char *const rules =
        "SecRuleEngine On\n"
        "SecRule ARGS \"@validateByteRange 32-126\" \"id:10,phase:1,pass,nolog,setvar:tx.vbr=+1\"\n"
        "SecRule ARGS \"@validateByteRange 32-126\" "
        "\"id:11,phase:1,pass,nolog,t:urlDecodeUni,setvar:tx.vbr2=+1\"\n"
        "SecRule ARGS|ARGS_NAMES \"@detectXSS\" \"id:12,phase:1,pass,nolog,setvar:tx.xss=+1\"\n"
        "SecRule ARGS \"@validateByteRange 32-126\" "
        "\"id:13,phase:1,pass,nolog,t:none,t:urlDecodeUni,t:lowercase,multiMatch,setvar:tx.mm=+1\"\n"
        "SecRule ARGS \"@rx ^a\\x01\" \"id:14,phase:1,pass,nolog,t:urlDecodeUni,multiMatch,setvar:tx.mrx=+1\"\n";
    int k;
    for (k = 0; k < 2; k++) {
        bw_intervention_t iv;
        bw_tx_t *tx = request(scan_or_plain(rules, k), "GET", "/x?a=plain&b=%01x&c=%3Cscript%3Ealert(1)%3C/script%3E&d=a%2501"
                               "&e=%3Ca&f=A%2501", NULL);
        ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
        ck_assert_str_eq(txvar(tx, "vbr"), "1");       /* b */
        ck_assert_str_eq(txvar(tx, "vbr2"), "3");      /* b, d and f decoded */
        ck_assert_str_eq(txvar(tx, "xss"), "1");       /* c */
        ck_assert_str_eq(txvar(tx, "mm"), "3");        /* b as is, d and f after decoding */
        ck_assert_str_eq(txvar(tx, "mrx"), "1");       /* d after decoding (f keeps its capital) */
    }
}
END_TEST

/* Open regexes (no gate rare enough, no trigger) skip the strings that
 * have no byte of their gate, however common the gate; one without a gate
 * still sees every string, the empty one included. Scan and plain
 * program agree. */
START_TEST(test_open_gates)
{
    static const char *const rules =
        "SecRuleEngine On\n"
        "SecRule ARGS \"@rx (?:\\s|;)\\w\" \"id:20,phase:1,pass,nolog,setvar:tx.og=+1\"\n"
        "SecRule ARGS_GET \"@rx ^$\" \"id:21,phase:1,pass,nolog,setvar:tx.empty=+1\"\n"
        "SecRule ARGS_GET \"@rx ^$|[\\s;]x\" \"id:22,phase:1,pass,nolog,setvar:tx.both=+1\"\n";
    int k;
    for (k = 0; k < 2; k++) {
        bw_intervention_t iv;
        bw_tx_t *tx = request(scan_or_plain(rules, k), "GET", "/x?a=plain&b=a%20x&c=&d=%3Bx&e=yx&f=x%20", NULL);
        ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
        ck_assert_str_eq(txvar(tx, "og"), "2");        /* b and d */
        ck_assert_str_eq(txvar(tx, "empty"), "1");     /* c */
        ck_assert_str_eq(txvar(tx, "both"), "3");      /* b, c and d */
    }
}
END_TEST

/* The scan cache keeps what start-ups used and drops the rest: databases
 * older than the limit, temporary files older than an hour; nothing else. */
START_TEST(test_scan_cache_prune)
{
    static const char *const names[] = {
        "bulwark-old.hsdb", "bulwark-new.hsdb", "bulwark-x.hsdb.99.tmp", "bulwark-y.hsdb.98.tmp",
        "other.hsdb", "bulwark-notes.txt",
    };
    static const int age_days[] = { 20, 1, 1, 0, 20, 20 };
    static const int kept[] = { 0, 1, 0, 1, 1, 1 };
    char *dir = apr_pstrdup(pool, "/tmp/bw_cache_XXXXXX");
    size_t i;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *path = apr_pstrcat(pool, dir, "/", names[i], NULL);
        apr_file_t *f;
        ck_assert_int_eq(apr_file_open(&f, path, APR_WRITE | APR_CREATE, APR_FPROT_OS_DEFAULT, pool),
                         APR_SUCCESS);
        apr_file_close(f);
        /* the temporary file of a live writer is minutes old */
        apr_file_mtime_set(path, apr_time_now() - (age_days[i] ? apr_time_from_sec(age_days[i] * 86400)
                                                               : apr_time_from_sec(60)), pool);
    }
    bw_matcher_cache_prune(pool, dir, apr_time_from_sec(14 * 86400));
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        apr_finfo_t fi;
        int there = apr_stat(&fi, apr_pstrcat(pool, dir, "/", names[i], NULL), APR_FINFO_TYPE, pool)
                    == APR_SUCCESS;
        ck_assert_msg(there == kept[i], "%s: %s", names[i], there ? "kept" : "removed");
        if (there)
            apr_file_remove(apr_pstrcat(pool, dir, "/", names[i], NULL), pool);
    }
    rmdir(dir);
}
END_TEST

/* A record is named after the SHA-1 of its key, whether the key is
 * constant (digested at start-up) or built per request. */
START_TEST(test_persistent_record_names)
{
    bw_intervention_t iv;
    char dir[] = "/tmp/bw_test_data_XXXXXX";
    bw_program_t *p;
    bw_tx_t *a;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    p = load(apr_psprintf(pool,
        "SecRuleEngine On\nSecDataDir %s\n"
        "SecAction \"id:1,phase:1,pass,nolog,initcol:global=global,setvar:global.n=+1,"
        "initcol:ip=%%{remote_addr}_x,setvar:ip.n=1\"\n", dir), NULL);
    ck_assert_ptr_nonnull(p);
    a = request(p, "GET", "/a", NULL);
    ck_assert_int_eq(bw_tx_run_phase(a, 1, &iv), 0);
    bw_tx_run_phase(a, 5, &iv);
    /* sha1("global"), sha1("10.1.2.3_x") */
    ck_assert_int_eq(access(apr_pstrcat(pool, dir, "/bulwark-GLOBAL-"
                            "9027cc5a2c1321de60a2d71ccde6229d1152d6d3", NULL), R_OK), 0);
    ck_assert_int_eq(access(apr_pstrcat(pool, dir, "/bulwark-IP-"
                            "facba9b569a4f4a8cee6f20676e335d57ffa8bd3", NULL), R_OK), 0);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ck_assert_int_eq(system(cmd), 0);
    }
}
END_TEST

START_TEST(test_directive_table_complete)
{
    int i;
    for (i = 0; bw_config_directive_names[i]; i++)
        ck_assert_msg(bw_config_is_directive(bw_config_directive_names[i]), "%s",
                      bw_config_directive_names[i]);
    ck_assert_int_gt(i, 60);
}
END_TEST

/* rules/ of the source tree: beside $BW_TEST_DATA (tests/unit/data, as make
 * check sets it), else found from this file's path. */
static const char *rules_dir(void)
{
    const char *data = getenv("BW_TEST_DATA");
    const char *slash = strrchr(__FILE__, '/');
    if (data && *data)
        return apr_pstrcat(pool, data, "/../../../rules", NULL);
    return apr_psprintf(pool, "%.*s/../../rules", slash ? (int)(slash - __FILE__) : 1,
                        slash ? __FILE__ : ".");
}

/* The fail-closed rule for regular-expression limits, set up as README.md
 * says: bulwark.conf-recommended, a rule set whose phase-2 rule hits
 * SecPcreMatchLimit (a back-reference, so PCRE2 runs whatever the scan
 * says), then bulwark-after.conf. The rule set's limit hit must deny the
 * request: 200005 runs before the rule set and cannot see it. */
START_TEST(test_pcre_limit_fails_closed_after_rule_set)
{
    const char *dir = rules_dir(), *err = NULL;
    bw_intervention_t iv;
    bw_program_t *p = load(apr_psprintf(pool,
                                        "Include %s/bulwark.conf-recommended\n"
                                        "SecRuleEngine On\n"
                                        "SecAuditEngine Off\n"
                                        "SecPcreMatchLimit 1000\n"
                                        "SecRule ARGS \"@rx (a|aa)+\\1$\" \"id:10,phase:2,pass,nolog\"\n"
                                        "Include %s/bulwark-after.conf\n", dir, dir), &err);
    bw_tx_t *tx;
    ck_assert_msg(p != NULL, "%s", err ? err : "?");
    tx = request(p, "GET", "/search?q=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    bw_tx_request_body_end(tx);
    ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 1);
    ck_assert_int_eq(iv.status, 403);
    ck_assert_str_eq(txvar(tx, "MSC_PCRE_LIMITS_EXCEEDED"), "1");
    ck_assert_msg(strstr(sink.last, "[id \"200008\"]")
                  && strstr(sink.last, "TX:MSC_PCRE_LIMITS_EXCEEDED"), "%s", sink.last);
}
END_TEST

/* TX in order, "name=value;" each (unset names left out). */
static const char *tx_listing(bw_tx_t *tx)
{
    const apr_array_header_t *o = tx->tx_coll->order;
    const char *out = "";
    int i;
    for (i = 0; i < o->nelts; i++) {
        const bw_kv_t *kv = ((bw_kv_t **)o->elts)[i];
        if (kv->name.data)
            out = apr_psprintf(pool, "%s%.*s=%.*s;", out, (int)kv->name.len, kv->name.data,
                               (int)kv->value.len, kv->value.data);
    }
    return out;
}

/* Phase 1's TX image reaches past rules that neither read nor write TX
 * (bulwark.conf-recommended's body processors before crs-setup.conf):
 * the decided slots after them only replay MATCHED_VAR. Such a rule may
 * still add TX:MSC_PCRE_LIMITS_EXCEEDED (a back-reference: PCRE2 runs,
 * and hits SecPcreMatchLimit on "aaa…!"); TX must then list it before the
 * keys the later slots set, as the unfolded program does. */
START_TEST(test_image_past_neutral_rules)
{
    static const char *const probes[] = {
        "", "X-One: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
        "X-Two: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
        "X-One: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\nX-Two: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
    };
    /* zero is unset by rule 5: its place stays, unlisted */
    static const char *const first[] = { "first=1;second=2;",
                                         "MSC_PCRE_LIMITS_EXCEEDED=1;first=1;second=2;",
                                         "first=1;MSC_PCRE_LIMITS_EXCEEDED=1;second=2;",
                                         "MSC_PCRE_LIMITS_EXCEEDED=1;first=1;second=2;" };
    const char *rules =
        "SecRuleEngine On\n"
        "SecPcreMatchLimit 1000\n"
        "SecAction \"id:1,phase:1,pass,nolog,setvar:tx.zero=0\"\n"
        "SecRule REQUEST_HEADERS:X-One \"@rx (a|aa)+\\1$\" "
        "\"id:2,phase:1,pass,nolog,ctl:requestBodyProcessor=JSON\"\n"
        "SecAction \"id:3,phase:1,pass,nolog,setvar:tx.first=1\"\n"
        "SecRule REQUEST_HEADERS:X-Two \"@rx (a|aa)+\\1$\" \"id:4,phase:1,pass,nolog\"\n"
        "SecAction \"id:5,phase:1,pass,nolog,setvar:tx.second=2,setvar:!tx.zero\"\n"
        "SecRule REQUEST_HEADERS:Host \"@rx (.*)\" "
        "\"id:6,phase:1,pass,nolog,capture,setvar:tx.host=%{tx.1}\"\n";
    const char *path = rule_file(rules);
    bw_config_t *cfg = bw_config_create(pool);
    bw_program_t *prog[2];
    char *err = NULL;
    unsigned k, q;
    ck_assert_ptr_null(bw_config_load_file(cfg, path));
    unlink(path);
    for (k = 0; k < 2; k++) {
        prog[k] = bw_program_build_ex(pool, NULL, cfg, k ? BW_PROG_NO_FOLD : 0, &err);
        ck_assert_msg(prog[k] != NULL, "%s", err ? err : "?");
    }
    /* the image starts at rule 2 and holds rules 3 and 5's changes */
    ck_assert_int_eq(prog[0]->phase1_start, 1);
    ck_assert_int_eq(prog[0]->image_end, 5);
    for (q = 0; q < 4; q++) {
        const char *hdrs = apr_pstrcat(pool, "Host: example.org", *probes[q] ? "\n" : "",
                                       probes[q], NULL);
        const char *got[2];
        for (k = 0; k < 2; k++) {
            bw_intervention_t iv;
            bw_tx_t *tx = request(prog[k], "GET", "/", hdrs);
            ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
            got[k] = tx_listing(tx);
        }
        ck_assert_msg(!strcmp(got[0], got[1]), "probe %u: folded %s, unfolded %s", q, got[0],
                      got[1]);
        ck_assert_msg(!strncmp(got[0], first[q], strlen(first[q])), "probe %u: %s", q, got[0]);
        ck_assert_msg(strstr(got[0], "host=example.org;") != NULL, "%s", got[0]);
    }
}
END_TEST

/* <IfModule> in files the CLI reads, as httpd reads them with Bulwark
 * loaded: Bulwark's names are there, any other module is not, "!" negates,
 * sections nest; an unclosed or stray section is an error with the file. */
START_TEST(test_ifmodule_sections)
{
    bw_intervention_t iv;
    const char *err = NULL;
    bw_program_t *p = load("SecRuleEngine On\n"
                           "<IfModule bulwark_module>\n"
                           "  SecAction \"id:1,phase:1,pass,nolog,setvar:tx.a=1\"\n"
                           "  <IfModule security2_module>\n"
                           "    SecAction \"id:2,phase:1,pass,nolog,setvar:tx.b=1\"\n"
                           "    NotADirectiveAtAll\n"
                           "  </IfModule>\n"
                           "  <IfModule !security2_module>\n"
                           "    SecAction \"id:3,phase:1,pass,nolog,setvar:tx.c=1\"\n"
                           "  </IfModule>\n"
                           "</IfModule>\n"
                           "<IfModule !mod_bulwark.c>\n"
                           "  SecAction \"id:4,phase:1,pass,nolog,setvar:tx.d=1\"\n"
                           "</IfModule>\n", &err);
    bw_tx_t *tx;
    ck_assert_msg(p != NULL, "%s", err ? err : "?");
    tx = request(p, "GET", "/", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    ck_assert_str_eq(txvar(tx, "a"), "1");
    ck_assert_str_eq(txvar(tx, "c"), "1");
    ck_assert_ptr_null(txvar(tx, "b"));
    ck_assert_ptr_null(txvar(tx, "d"));
    err = load_error("<IfModule bulwark_module>\nSecRuleEngine On\n");
    ck_assert_msg(strstr(err, "not closed"), "%s", err);
    err = load_error("SecRuleEngine On\n</IfModule>\n");
    ck_assert_msg(strstr(err, ":2: </IfModule> without"), "%s", err);
    err = load_error("<IfModule >\n</IfModule>\n");
    ck_assert_msg(strstr(err, ":1: malformed"), "%s", err);
}
END_TEST

/* ---- external programs (@inspectFile, exec) ------------------------------ */

static char last_message[4096];
static void on_message(void *baton, bw_tx_t *tx, int level, const char *text)
{
    if (level < 3)
        snprintf(last_message, sizeof(last_message), "%s", text);
}

/* Start-up: programs checked, SecExternalPrograms Off refused with file
 * and line wherever the directive stands, the timeout's range. */
START_TEST(test_external_programs_startup)
{
    const char *e;
    bw_config_t *parent = bw_config_create(pool), *child = bw_config_create(pool);
    bw_program_t *pp;
    char *err = NULL;

    e = load_error("SecRule ARGS \"@rx a\" \"id:5,pass,exec:/nonexistent/notify\"\n");
    ck_assert_msg(strstr(e, ":1: exec: cannot use program \"/nonexistent/notify\": No such file"),
                  "%s", e);
    e = load_error("SecExternalPrograms Off\nSecRule ARGS \"@rx a\" \"id:5,pass,exec:/bin/true\"\n");
    ck_assert_msg(strstr(e, ":2: the rule runs the external program \"/bin/true\", which "
                            "SecExternalPrograms Off forbids (SecExternalPrograms On allows it)"), "%s", e);
    e = load_error("SecExternalPrograms Off\nSecRule ARGS \"@rx a\" \"id:5,chain\"\n"
                   "SecRule ARGS \"@inspectFile /bin/true\" \"t:none\"\n");
    ck_assert_msg(strstr(e, ":3: the rule runs the external program"), "%s", e);
    /* after the rule: refused when the program is built */
    e = load_error("SecRule ARGS \"@rx a\" \"id:5,pass,exec:/bin/true\"\nSecExternalPrograms Off\n");
    ck_assert_msg(strstr(e, ":1: the rule runs the external program"), "%s", e);
    ck_assert_ptr_nonnull(load("SecExternalPrograms On\n"
                               "SecRule ARGS \"@rx a\" \"id:5,pass,exec:/bin/true\"\n", NULL));
    /* Off in an enclosing context covers the rules of a nested one */
    ck_assert_ptr_null(bw_config_directive(parent, "SecExternalPrograms", "Off", "p.conf", 1));
    ck_assert_ptr_null(bw_config_directive(child, "SecRule",
                                           "ARGS \"@rx y\" \"id:2,exec:/bin/true\"", "c.conf", 7));
    pp = bw_program_build(pool, NULL, parent, &err);
    ck_assert_ptr_nonnull(pp);
    ck_assert_ptr_null(bw_program_build(pool, pp, child, &err));
    ck_assert_msg(err && strstr(err, "c.conf:7: the rule runs"), "%s", err);
    e = load_error("SecExternalProgramTimeout 0\n");
    ck_assert_msg(strstr(e, ":1: SecExternalProgramTimeout: invalid value \"0\""), "%s", e);
    load_error("SecExternalProgramTimeout 3601\n");
    load_error("SecExternalProgramTimeout 5s\n");
    load_error("SecExternalPrograms Maybe\n");
}
END_TEST

/* exec gets the request as CGI variables and the ENV collection, no
 * arguments, no credentials; @inspectFile's verdict denies; a program
 * past SecExternalProgramTimeout is an error logged with the limit. */
START_TEST(test_external_programs_run)
{
    char dir[] = "/tmp/bw-test-extprog-XXXXXX";
    const char *rec, *out, *rules;
    bw_program_t *prog;
    bw_tx_t *tx;
    bw_intervention_t iv;
    bw_callbacks_t cb = { &sink, on_alert, on_message };
    apr_table_t *env = apr_table_make(pool, 2);
    char buf[8192];
    size_t n;
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    out = apr_pstrcat(pool, dir, "/env.out", NULL);
    rec = test_program(pool, dir, "rec.sh", apr_psprintf(pool, "{ echo \"ARGC=$#\"; env; } > %s; echo ok", out));
    test_program(pool, dir, "scan.sh", "case \"$1\" in *evil*) echo '0 evil';; *) echo '1 ok';; esac");
    test_program(pool, dir, "hang.sh", "sleep 30");
    rules = apr_psprintf(pool,
        "SecRuleEngine On\nSecExternalProgramTimeout 1\n"
        "SecRule ARGS:a \"@streq rec\" \"id:1,phase:1,pass,nolog,exec:%s\"\n"
        "SecRule ARGS:s \"@inspectFile %s/scan.sh\" \"id:2,phase:1,deny,status:403\"\n"
        "SecRule ARGS:h \"@inspectFile %s/hang.sh\" \"id:3,phase:1,deny,status:403\"\n",
        rec, dir, dir);
    prog = load(rules, NULL);
    ck_assert_ptr_nonnull(prog);
    apr_table_set(env, "FROM_SETENV", "yes");
    tx = request(prog, "GET", "/p?a=rec", "X-Test: v 1\nAuthorization: Basic c2VjcmV0\n"
                                          "Content-Type: text/plain");
    bw_tx_set_env(tx, env);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    f = fopen(out, "r");
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    ck_assert_msg(strstr(buf, "ARGC=0\n") && strstr(buf, "REQUEST_METHOD=GET\n")
                  && strstr(buf, "QUERY_STRING=a=rec\n") && strstr(buf, "REQUEST_URI=/p?a=rec\n")
                  && strstr(buf, "HTTP_X_TEST=v 1\n") && strstr(buf, "CONTENT_TYPE=text/plain\n")
                  && strstr(buf, "REMOTE_ADDR=10.1.2.3\n") && strstr(buf, "UNIQUE_ID=uid-1\n")
                  && strstr(buf, "FROM_SETENV=yes\n") && strstr(buf, "PATH="), "%s", buf);
    ck_assert_msg(!strstr(buf, "AUTHORIZATION") && !strstr(buf, "c2VjcmV0"), "%s", buf);

    tx = request(prog, "GET", "/p?s=evil", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 403);
    ck_assert_msg(strstr(sink.last, "File \"evil\" rejected by the approver script")
                  && strstr(sink.last, ": 0 evil"), "%s", sink.last);
    tx = request(prog, "GET", "/p?s=fine", NULL);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);

    tx = request(prog, "GET", "/p?h=x", NULL);
    tx->cb = &cb;
    last_message[0] = '\0';
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    ck_assert_msg(strstr(last_message, "Rule 3 ") && strstr(last_message, "SecExternalProgramTimeout"),
                  "%s", last_message);
    {
        const char *argv[] = { "/bin/rm", "-rf", dir, NULL };
        bw_spawn_result_t res;
        const char *e2;
        bw_spawn_run(pool, argv, NULL, NULL, &res, &e2);
    }
}
END_TEST

/* @rsub on the streams: each rewrite is what the next rule reads (the
 * phase's cached values are dropped), macros in the replacement are
 * expanded, and what the glue forwards is the last rewrite; the response's
 * only with SecContentInjection On, as in mod_security2 2.9.7. */
START_TEST(test_rsub_streams)
{
    bw_intervention_t iv;
    bw_str_t out;
    bw_response_t res;
    const char *rules =
        "SecRuleEngine On\n"
        "SecStreamInBodyInspection On\n"
        "SecStreamOutBodyInspection On\n"
        "SecResponseBodyAccess On\n"
        "SecResponseBodyMimeType text/plain\n"
        "SecRule STREAM_INPUT_BODY \"@rsub s/secret/%{REQUEST_METHOD}/\" \"id:1,phase:2,pass,log\"\n"
        "SecRule STREAM_INPUT_BODY \"@streq a POST b POST\" \"id:2,phase:2,pass,log,setvar:tx.seen=1\"\n"
        "SecRule REQUEST_BODY \"@rsub s/a/b/\" \"id:3,phase:2,pass,log,setvar:tx.other=1\"\n"
        "SecRule STREAM_OUTPUT_BODY \"@rsub s/token-[0-9]+/[hidden]/\" \"id:4,phase:4,pass,log\"\n";
    bw_program_t *p = load(rules, NULL);
    bw_tx_t *tx = request(p, "POST", "/", "Content-Type: text/plain");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    bw_tx_request_body_append(tx, "a secret b secret", 17);
    bw_tx_request_body_end(tx);
    ck_assert(bw_tx_stream_inspection(tx, BW_STREAM_IN));
    bw_tx_set_stream(tx, BW_STREAM_IN, bw_str_make("a secret b secret"));
    ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 0);
    ck_assert_int_eq(bw_tx_stream_changed(tx, BW_STREAM_IN, &out), 1);
    ck_assert_str_eq(bw_str_pdup(pool, out), "a POST b POST");
    ck_assert_str_eq(txvar(tx, "seen"), "1");
    ck_assert_ptr_null(txvar(tx, "other"));     /* not a stream: never matches */

    memset(&res, 0, sizeof(res));
    res.status = 200;
    res.headers = apr_array_make(pool, 1, sizeof(bw_kv_t));
    bw_tx_set_response(tx, &res);
    bw_tx_response_body_append(tx, "x token-12 y", 12);
    ck_assert_int_eq(bw_tx_run_phase(tx, 4, &iv), 0);
    ck_assert_int_eq(bw_tx_stream_changed(tx, BW_STREAM_OUT, &out), 0);   /* no injection */

    p = load(apr_pstrcat(pool, "SecContentInjection On\n", rules, NULL), NULL);
    tx = request(p, "GET", "/", NULL);
    bw_tx_set_response(tx, &res);
    bw_tx_response_body_append(tx, "x token-12 y", 12);
    ck_assert_int_eq(bw_tx_run_phase(tx, 4, &iv), 0);
    ck_assert_int_eq(bw_tx_stream_changed(tx, BW_STREAM_OUT, &out), 1);
    ck_assert_str_eq(bw_str_pdup(pool, out), "x [hidden] y");
    ck_assert_int_eq(bw_tx_stream_changed(tx, BW_STREAM_IN, &out), 0);
}
END_TEST

/* ---- BulwarkOpenAPI in a transaction -------------------------------------------- */

/* An order breaking the shop's description, through the engine: the
 * violations reach the rules (OPENAPI_VIOLATIONS), the problem document
 * names them with JSON-safe text whatever bytes they carry; the same with
 * the JSON body processor reading the body (its events shared) and
 * without it (the validator's own parser). */
/* A JSON body's arguments are only counted when no link reads more than
 * their number (&ARGS, &ARGS_POST): the counts, REQBODY_ERROR and its
 * message (the argument limit) are those of the same rules with one more
 * rule that reads ARGS, and every other way of reading them (targets,
 * selectors, macros in actions and operators, sanitisation, a chained
 * link, a target added by SecRuleUpdateTargetById) makes them. With a
 * query string the limit is reached by the sink (ARGS_GET counts), without
 * one by the parser. */
static bw_tx_t *json_request(bw_program_t *prog, const char *uri, const char *body)
{
    bw_intervention_t iv;
    bw_tx_t *tx = request(prog, "POST", uri, "Content-Type: application/json");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    bw_tx_request_body_append(tx, body, strlen(body));
    bw_tx_run_phase(tx, 2, &iv);
    return tx;
}

START_TEST(test_body_args_counted)
{
    static const char *const base =
        "SecRuleEngine On\nSecRequestBodyAccess On\nSecArgumentsLimit %d\n"
        "SecRule REQUEST_HEADERS:Content-Type \"@rx json\" "
        "\"id:1,phase:1,pass,nolog,ctl:requestBodyProcessor=JSON\"\n"
        "SecRule &ARGS \"@ge 0\" \"id:2,phase:2,pass,nolog,setvar:tx.n=%%{MATCHED_VAR}\"\n"
        "SecRule &ARGS_POST \"@ge 0\" \"id:3,phase:2,pass,nolog,setvar:tx.p=%%{MATCHED_VAR}\"\n"
        "SecRule REQBODY_ERROR_MSG \"@rx ^\" \"id:4,phase:2,pass,nolog,setvar:'tx.e=%%{MATCHED_VAR}'\"\n"
        "SecRule REQUEST_HEADERS|!ARGS:a \"@rx ^never$\" \"id:5,phase:2,pass,nolog\"\n";
    static const char *const readers[] = {
        "SecRule ARGS \"@rx ^never$\" \"id:9,phase:2,pass,nolog\"",
        "SecRule &ARGS:a \"@eq 9\" \"id:9,phase:2,pass,nolog\"",
        "SecRule &ARGS_POST:/^a/ \"@eq 9\" \"id:9,phase:2,pass,nolog\"",
        "SecRule ARGS_NAMES \"@rx ^never$\" \"id:9,phase:2,pass,nolog\"",
        "SecRule ARGS_POST_NAMES \"@rx ^never$\" \"id:9,phase:2,pass,nolog\"",
        "SecRule ARGS_COMBINED_SIZE \"@gt 99999\" \"id:9,phase:2,pass,nolog\"",
        "SecAction \"id:9,phase:2,pass,nolog,setvar:tx.v=%{ARGS.a}\"",
        "SecAction \"id:9,phase:2,pass,log,logdata:'%{args_post.a}'\"",
        "SecAction \"id:9,phase:2,pass,nolog,sanitiseArg:a\"",
        "SecRule REQUEST_URI \"@streq %{ARGS.a}\" \"id:9,phase:2,pass,nolog\"",
        "SecRule REQUEST_METHOD \"@streq POST\" \"id:9,phase:2,pass,nolog,chain\"\n"
        "SecRule ARGS_POST:a \"@rx ^never$\"",
        "SecRuleUpdateTargetById 5 ARGS",
    };
    static const char *const bodies[] = {
        "{\"a\":1,\"b\":[true,null,\"x\"],\"c\":{\"d\":-2.5}}", "[]", "{\"a\":", "1",
    };
    int limit, b;
    size_t i;
    for (limit = 2; limit <= 100; limit += 98) {
        const char *conf = apr_psprintf(pool, base, limit);
        bw_program_t *counted = load(conf, NULL);
        bw_program_t *made = load(apr_pstrcat(pool, conf, readers[0], "\n", NULL), NULL);
        ck_assert_ptr_nonnull(counted);
        ck_assert_ptr_nonnull(made);
        ck_assert_int_eq(counted->body_args_counted, 1);
        ck_assert_int_eq(made->body_args_counted, 0);
        for (b = 0; b < 2 * (int)(sizeof(bodies) / sizeof(bodies[0])); b++) {
            const char *uri = b % 2 ? "/p" : "/p?g=1", *body = bodies[b / 2];
            bw_tx_t *c = json_request(counted, uri, body), *m = json_request(made, uri, body);
            const char *names[] = { "n", "p", "e" };
            int k;
            ck_assert_int_eq(c->args_post->nelts, 0);
            ck_assert_int_eq(c->args_post_counted, m->args_post->nelts);
            for (k = 0; k < 3; k++) {
                const char *x = txvar(c, names[k]), *y = txvar(m, names[k]);
                ck_assert_msg(x && y && strcmp(x, y) == 0, "limit %d, %s %s, tx.%s: %s vs %s",
                              limit, uri, body, names[k], x ? x : "(none)", y ? y : "(none)");
            }
        }
    }
    for (i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
        bw_program_t *prog = load(apr_pstrcat(pool, apr_psprintf(pool, base, 100), readers[i], "\n",
                                              NULL), NULL);
        bw_tx_t *tx;
        ck_assert_msg(prog != NULL, "%s", readers[i]);
        ck_assert_msg(prog->body_args_counted == 0, "counted with %s", readers[i]);
        tx = json_request(prog, "/p?g=1", bodies[0]);
        ck_assert_int_eq(tx->args_post->nelts, 5);
        ck_assert_int_eq(tx->args_post_counted, 0);
    }
}
END_TEST

START_TEST(test_openapi_tx)
{
    const char *data = getenv("BW_TEST_DATA");
    const char *body = "{\"customer\":{\"email\":\"a@example.com\"},\"items\":[{\"sku\":\"SKU000001\","
                       "\"quantity\":0}],\"payment\":{\"method\":\"card\",\"last4\":\"4242\"}}";
    const char *conf = apr_psprintf(pool, "SecRuleEngine On\nSecRequestBodyAccess On\n"
        "BulwarkOpenAPI %s/openapi/shop.yaml\n"
        "SecRule OPENAPI_VIOLATIONS \"@rx .\" \"id:1,phase:2,deny,status:400,log,"
        "logdata:'%%{MATCHED_VAR_NAME}'\"\n", data ? data : "tests/unit/data");
    const char *json = "SecRule REQUEST_HEADERS:Content-Type \"@rx json\" "
        "\"id:2,phase:1,pass,nolog,ctl:requestBodyProcessor=JSON\"\n";
    int shared;
    for (shared = 0; shared < 2; shared++) {
        bw_program_t *prog = load(shared ? apr_pstrcat(pool, conf, json, NULL) : conf, NULL);
        bw_intervention_t iv;
        const char *doc;
        size_t i, n = strlen(body);
        bw_tx_t *tx;
        ck_assert_ptr_nonnull(prog);
        tx = request(prog, "POST", "/api/v1/orders?x%22%C3=1", "Content-Type: application/json");
        ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
        for (i = 0; i < n; i += 7)
            bw_tx_request_body_append(tx, body + i, n - i < 7 ? n - i : 7);
        ck_assert_int_eq(bw_tx_run_phase(tx, 2, &iv), 1);
        ck_assert_int_eq(iv.status, 400);
        ck_assert_msg(strstr(sink.last, "[data \"OPENAPI_VIOLATIONS:/query/x") != NULL, "%s", sink.last);
        doc = bw_tx_openapi_problem(tx, 400);
        ck_assert_ptr_nonnull(doc);
        ck_assert_msg(strstr(doc, "\"pointer\":\"/query/x\\\"\\u00c3\",\"reason\":\"a query parameter "
                                  "the operation does not describe\"") != NULL, "%s", doc);
        ck_assert_msg(strstr(doc, "{\"pointer\":\"/body/items/0/quantity\",\"reason\":\"below the "
                                  "minimum 1\",\"schema\":\"#/components/schemas/OrderItem/properties/"
                                  "quantity\"}") != NULL, "%s", doc);
        ck_assert_msg(strstr(doc, "\"status\":400,") && strstr(doc, "\"detail\":\"2 violations\"")
                      && strstr(doc, "\"operation\":\"createOrder\""), "%s", doc);
        /* the JSON processor reads the body too: nothing reads its
         * arguments, so they are counted, not made */
        ck_assert_int_eq(tx->args_post->nelts, 0);
        ck_assert_int_eq(tx->args_post_counted, (shared ? 5 : 0));
    }
}
END_TEST

START_TEST(test_openapi_problem_off)
{
    const char *data = getenv("BW_TEST_DATA");
    bw_program_t *prog = load(apr_psprintf(pool, "SecRuleEngine On\n"
        "BulwarkOpenAPI %s/openapi/shop.yaml\nBulwarkOpenAPIProblem Off\n",
        data ? data : "tests/unit/data"), NULL);
    bw_program_t *on = load(apr_psprintf(pool, "SecRuleEngine On\n"
        "BulwarkOpenAPI %s/openapi/shop.yaml\n", data ? data : "tests/unit/data"), NULL);
    ck_assert_ptr_null(bw_tx_openapi_problem(request(prog, "GET", "/nowhere", NULL), 400));
    ck_assert_ptr_nonnull(bw_tx_openapi_problem(request(on, "GET", "/nowhere", NULL), 400));
    /* a valid request: no document */
    ck_assert_ptr_null(bw_tx_openapi_problem(request(on, "GET", "/api/v1/products?limit=5", NULL), 400));
    ck_assert_ptr_nonnull(strstr(load_error("BulwarkOpenAPI /no/such/api.yaml\n"),
                                 "BulwarkOpenAPI: /no/such/api.yaml: cannot read"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_getword_quotes);
    tcase_add_test(tc, test_getword_unbalanced);
    tcase_add_test(tc, test_ifmodule_sections);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_continuation_and_all_errors);
    tcase_add_test(tc, test_remote_rules_args);
    tcase_add_test(tc, test_deny_and_log_format);
    tcase_add_test(tc, test_proxy_intervention);
    tcase_add_test(tc, test_chroot_dir);
    tcase_add_test(tc, test_detection_only);
    tcase_add_test(tc, test_anomaly_scoring_chain_skip);
    tcase_add_test(tc, test_exclusions_and_counts);
    tcase_add_test(tc, test_counts_without_values);
    tcase_add_test(tc, test_transformed_arrays);
    tcase_add_test(tc, test_removals_and_updates);
    tcase_add_test(tc, test_ctl_runtime);
    tcase_add_test(tc, test_inheritance);
    tcase_add_test(tc, test_varval_name);
    tcase_add_test(tc, test_persistent_no_lost_update);
    tcase_add_test(tc, test_persistent_record_names);
    tcase_add_test(tc, test_directive_table_complete);
    tcase_add_test(tc, test_operator_gates);
    tcase_add_test(tc, test_open_gates);
    tcase_add_test(tc, test_scan_cache_prune);
    tcase_add_test(tc, test_pcre_limit_fails_closed_after_rule_set);
    tcase_add_test(tc, test_image_past_neutral_rules);
    tcase_add_test(tc, test_external_programs_startup);
    tcase_add_test(tc, test_external_programs_run);
    tcase_add_test(tc, test_rsub_streams);
    tcase_add_test(tc, test_openapi_tx);
    tcase_add_test(tc, test_body_args_counted);
    tcase_add_test(tc, test_openapi_problem_off);
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
