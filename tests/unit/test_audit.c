/*
 * Audit records without Apache (apache2/audit/): which transactions are
 * logged and with which parts, the Native and JSON layouts, sanitisation,
 * Concurrent-mode names and index lines, escaping, and reading records
 * back (the reader `bulwark log` uses) — including cut and interleaved
 * records, which must be reported, not half-read.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <apr_general.h>
#include <apr_file_io.h>
#include <yajl/yajl_tree.h>
#include "run/bw_run.h"
#include "audit/bw_audit.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

static bw_program_t *load(const char *text)
{
    bw_config_t *cfg = bw_config_create(pool);
    char *path = apr_pstrdup(pool, "/tmp/bw_test_audit_XXXXXX");
    apr_file_t *f;
    const char *err;
    char *berr = NULL;
    bw_program_t *prog;
    ck_assert_int_eq(apr_file_mktemp(&f, path, APR_CREATE | APR_READ | APR_WRITE | APR_EXCL, pool), APR_SUCCESS);
    apr_file_write_full(f, text, strlen(text), NULL);
    apr_file_close(f);
    err = bw_config_load_file(cfg, path);
    unlink(path);
    ck_assert_msg(err == NULL, "load: %s", err);
    prog = bw_program_build(pool, NULL, cfg, &berr);
    ck_assert_msg(prog != NULL, "build: %s", berr);
    return prog;
}

static void add_header(bw_request_t *req, const char *name, const char *value)
{
    bw_kv_t *kv = apr_array_push(req->headers);
    kv->name = bw_str_make(name);
    kv->value = bw_str_make(value);
}

/* A transaction through phases 1-5 with a 200 (or status) response.
 * hdrs: "Name: value" lines separated by '\n'. */
static bw_tx_t *run_tx(const char *rules, const char *method, const char *uri, const char *hdrs,
                       const char *body, int status)
{
    bw_program_t *prog = load(rules);
    bw_request_t req;
    bw_response_t res;
    bw_intervention_t iv;
    bw_tx_t *tx;
    int ph;
    memset(&req, 0, sizeof(req));
    req.method = bw_str_make(method);
    req.uri = bw_str_make(uri);
    req.protocol = bw_str_make("HTTP/1.1");
    req.request_line = bw_str_make(apr_psprintf(pool, "%s %s HTTP/1.1", method, uri));
    req.headers = apr_array_make(pool, 8, sizeof(bw_kv_t));
    req.remote_addr = bw_str_make("192.0.2.7");
    req.remote_port = 40000;
    req.server_addr = bw_str_make("127.0.0.1");
    req.server_port = 8080;
    req.server_name = bw_str_make("example.test");
    req.unique_id = bw_str_make("UID-test-0001");
    req.start = apr_time_from_sec(1795363288) + 123456;
    add_header(&req, "Host", "example.test");
    if (hdrs) {
        char *last, *line, *copy = apr_pstrdup(pool, hdrs);
        for (line = apr_strtok(copy, "\n", &last); line; line = apr_strtok(NULL, "\n", &last)) {
            char *colon = strchr(line, ':');
            *colon = '\0';
            add_header(&req, line, colon + 2);
        }
    }
    tx = bw_tx_create(pool, prog, &req, NULL);
    ph = 1;
    bw_tx_run_phase(tx, ph, &iv);
    if (body)
        bw_tx_request_body_append(tx, body, strlen(body));
    bw_tx_request_body_end(tx);
    bw_tx_run_phase(tx, 2, &iv);
    memset(&res, 0, sizeof(res));
    res.status = status;
    res.protocol = bw_str_make("HTTP/1.1");
    res.status_line = bw_str_make(status == 403 ? "403 Forbidden" : "200 OK");
    res.headers = apr_array_make(pool, 2, sizeof(bw_kv_t));
    ((bw_kv_t *)apr_array_push(res.headers))->name = bw_str_make("Content-Type");
    ((bw_kv_t *)res.headers->elts)[0].value = bw_str_make("text/html");
    bw_tx_set_response(tx, &res);
    bw_tx_run_phase(tx, 3, &iv);
    bw_tx_run_phase(tx, 5, &iv);
    return tx;
}

static const char *native(bw_tx_t *tx)
{
    bw_audit_final_t fin;
    memset(&fin, 0, sizeof(fin));
    fin.boundary = "deadbeef";
    fin.handler = "proxy-server";
    fin.server = "Apache/2.4";
    fin.end = tx->req.start + 1500;
    return bw_str_pdup(pool, bw_audit_record(pool, tx, &fin, BW_AUDIT_NATIVE));
}

static yajl_val json(bw_tx_t *tx, const char **text)
{
    char err[256];
    bw_str_t r = bw_audit_record(pool, tx, NULL, BW_AUDIT_JSON);
    yajl_val v;
    ck_assert_int_gt((int)r.len, 2);
    ck_assert_int_eq(r.data[r.len - 1], '\n');
    ck_assert_ptr_null(memchr(r.data, '\n', r.len - 1));   /* one record, one line */
    *text = bw_str_pdup(pool, r);
    v = yajl_tree_parse(*text, err, sizeof err);
    ck_assert_msg(v != NULL, "not JSON (%s): %s", err, *text);
    return v;
}

static const char *jstr(yajl_val v, const char *a, const char *b, const char *c)
{
    const char *path[4] = { a, b, c, NULL };
    yajl_val x = yajl_tree_get(v, path, yajl_t_string);
    return x ? YAJL_GET_STRING(x) : NULL;
}

#define BASE "SecRuleEngine On\nSecRequestBodyAccess On\nSecAuditEngine On\n"
#define RULE_Q "SecRule ARGS:q \"@rx evil\" \"id:1,phase:2,deny,status:403,log,msg:'evil q',tag:'a b'\"\n"

/* ---- what is logged, which parts ------------------------------------------------- */

START_TEST(test_wanted)
{
    bw_tx_t *tx = run_tx(BASE, "GET", "/", NULL, NULL, 200);
    ck_assert_int_eq(bw_audit_wanted(tx, 200), 1);
    tx = run_tx("SecRuleEngine On\nSecAuditEngine Off\n" RULE_Q, "GET", "/?q=evil", NULL, NULL, 403);
    ck_assert_int_eq(bw_audit_wanted(tx, 403), 0);
    /* RelevantOnly: a logged match makes it relevant, nothing else does */
    tx = run_tx("SecRuleEngine On\nSecAuditEngine RelevantOnly\n" RULE_Q, "GET", "/?q=fine", NULL, NULL, 200);
    ck_assert_int_eq(bw_audit_wanted(tx, 200), 0);
    tx = run_tx("SecRuleEngine On\nSecAuditEngine RelevantOnly\n" RULE_Q, "GET", "/?q=evil", NULL, NULL, 403);
    ck_assert_int_eq(bw_audit_wanted(tx, 403), 1);
    /* noauditlog: logged to the error log only, not relevant */
    tx = run_tx("SecRuleEngine On\nSecAuditEngine RelevantOnly\n"
                "SecRule ARGS:q \"@rx evil\" \"id:2,phase:2,pass,log,noauditlog\"\n",
                "GET", "/?q=evil", NULL, NULL, 200);
    ck_assert_int_eq(tx->matches->nelts, 1);
    ck_assert_int_eq(bw_audit_wanted(tx, 200), 0);
    /* relevant status */
    tx = run_tx("SecRuleEngine On\nSecAuditEngine RelevantOnly\nSecAuditLogRelevantStatus \"^(?:5|4(?!04))\"\n",
                "GET", "/", NULL, NULL, 500);
    ck_assert_int_eq(bw_audit_wanted(tx, 500), 1);
    ck_assert_int_eq(bw_audit_wanted(tx, 404), 0);
    ck_assert_int_eq(bw_audit_wanted(tx, 403), 1);
    ck_assert_int_eq(bw_audit_wanted(tx, 200), 0);
    /* rule engine off: nothing at all, as mod_security2 */
    tx = run_tx("SecRuleEngine Off\nSecAuditEngine On\n", "GET", "/", NULL, NULL, 200);
    ck_assert_int_eq(bw_audit_wanted(tx, 200), 0);
    /* ctl:auditEngine both ways */
    tx = run_tx("SecRuleEngine On\nSecAuditEngine Off\nSecAction \"id:3,phase:1,pass,nolog,ctl:auditEngine=On\"\n",
                "GET", "/", NULL, NULL, 200);
    ck_assert_int_eq(bw_audit_wanted(tx, 200), 1);
    tx = run_tx(BASE "SecAction \"id:3,phase:1,pass,nolog,ctl:auditEngine=Off\"\n", "GET", "/", NULL, NULL, 200);
    ck_assert_int_eq(bw_audit_wanted(tx, 200), 0);
}
END_TEST

START_TEST(test_parts)
{
    bw_tx_t *tx = run_tx(BASE, "GET", "/", NULL, NULL, 200);
    ck_assert_str_eq(bw_audit_parts(pool, tx), "ABCFHZ");
    tx = run_tx(BASE "SecAuditLogParts KZHFBDG\n", "GET", "/", NULL, NULL, 200);
    ck_assert_str_eq(bw_audit_parts(pool, tx), "ABFHKZ");   /* A implied, D/G reserved, record order */
    tx = run_tx(BASE "SecAuditLogParts ABFHZ\nSecAction \"id:4,phase:1,pass,nolog,ctl:auditLogParts=+EK\"\n",
                "GET", "/", NULL, NULL, 200);
    ck_assert_str_eq(bw_audit_parts(pool, tx), "ABFEHKZ");
    tx = run_tx(BASE "SecAuditLogParts ABFHZ\nSecAction \"id:4,phase:1,pass,nolog,ctl:auditLogParts=-BH\"\n",
                "GET", "/", NULL, NULL, 200);
    ck_assert_str_eq(bw_audit_parts(pool, tx), "AFZ");
    tx = run_tx(BASE "SecAction \"id:4,phase:1,pass,nolog,ctl:auditLogParts=AK\"\n", "GET", "/", NULL, NULL, 200);
    ck_assert_str_eq(bw_audit_parts(pool, tx), "AKZ");
}
END_TEST

/* ---- Native ------------------------------------------------------------------------ */

START_TEST(test_native_layout)
{
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts ABCEFHKZ\n" RULE_Q, "POST", "/login?q=evil",
                         "Content-Type: application/x-www-form-urlencoded", "user=bob&x=1", 403);
    const char *r = native(tx);
    const char *order[] = { "--deadbeef-A--\n", "--deadbeef-B--\n", "--deadbeef-C--\n", "--deadbeef-F--\n",
                            "--deadbeef-E--\n", "--deadbeef-H--\n", "--deadbeef-K--\n", "--deadbeef-Z--\n" };
    const char *at = r;
    size_t i;
    for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        const char *f = strstr(at, order[i]);
        ck_assert_msg(f != NULL, "missing or out of order %s in:\n%s", order[i], r);
        at = f + 1;
    }
    ck_assert_ptr_nonnull(strstr(r, "--deadbeef-A--\n[") );
    ck_assert_ptr_nonnull(strstr(r, "] UID-test-0001 192.0.2.7 40000 127.0.0.1 8080\n"));
    ck_assert_ptr_nonnull(strstr(r, "--deadbeef-B--\nPOST /login?q=evil HTTP/1.1\nHost: example.test\n"
                                    "Content-Type: application/x-www-form-urlencoded\n\n"));
    ck_assert_ptr_nonnull(strstr(r, "--deadbeef-C--\nuser=bob&x=1\n--deadbeef-F--\nHTTP/1.1 403 Forbidden\n"
                                    "Content-Type: text/html\n\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nMessage: Access denied with code 403 (phase 2). "));
    ck_assert_ptr_nonnull(strstr(r, "[id \"1\"]"));
    ck_assert_ptr_null(strstr(r, "[hostname "));     /* the error log's tail is not in the record */
    ck_assert_ptr_nonnull(strstr(r, "\nAction: Intercepted (phase 2)\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nApache-Handler: proxy-server\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nStopwatch: 1795363288123456 1500 (- - -)\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nProducer: Bulwark/"));
    ck_assert_ptr_nonnull(strstr(r, "\nServer: Apache/2.4\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nEngine-Mode: \"ENABLED\"\n\n--deadbeef-K--\n"));
    ck_assert_ptr_nonnull(strstr(r, "--deadbeef-K--\nSecRule \"ARGS:q\" \"@rx evil\" "
                                    "\"id:1,phase:2,deny,status:403,log,msg:'evil q',tag:'a b'\"\n\n\n"));
    ck_assert_int_eq(strlen(r) > 16, 1);
    ck_assert_str_eq(r + strlen(r) - 16, "--deadbeef-Z--\n\n");
}
END_TEST

START_TEST(test_native_no_body_parts)
{
    /* no body: no C; no uploads: no J; a GET has nothing to show in I */
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts ABCIJFHZ\n", "GET", "/", NULL, NULL, 200);
    const char *r = native(tx);
    ck_assert_ptr_null(strstr(r, "-C--"));
    ck_assert_ptr_null(strstr(r, "-I--"));
    ck_assert_ptr_null(strstr(r, "-J--"));
    ck_assert_ptr_nonnull(strstr(r, "-F--"));
    /* part I alone for a non-multipart body is written as C (it only differs for multipart) */
    tx = run_tx(BASE "SecAuditLogParts ABIFHZ\n", "POST", "/", "Content-Type: application/x-www-form-urlencoded",
                "a=1", 200);
    r = native(tx);
    ck_assert_ptr_nonnull(strstr(r, "--deadbeef-C--\na=1\n"));
    ck_assert_ptr_null(strstr(r, "-I--"));
}
END_TEST

START_TEST(test_native_multipart)
{
    const char *body =
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nhello world\r\n"
        "--XyZ\r\nContent-Disposition: form-data; name=\"pw\"\r\n\r\nhunter2\r\n"
        "--XyZ\r\nContent-Disposition: form-data; name=\"up\"; filename=\"f.txt\"\r\n"
        "Content-Type: text/plain\r\n\r\nfile data\n\r\n--XyZ--\r\n";
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts ABCIJFHZ\n"
                         "SecRule ARGS:a \"@rx .\" \"id:5,phase:2,pass,nolog,sanitiseArg:pw\"\n",
                         "POST", "/up", "Content-Type: multipart/form-data; boundary=XyZ", body, 200);
    const char *r = native(tx);
    ck_assert_ptr_nonnull(strstr(r, "name=\"pw\"\r\n\r\n*******\r\n--XyZ"));   /* C masked in place */
    ck_assert_ptr_nonnull(strstr(r, "hello world\r\n"));
    ck_assert_ptr_nonnull(strstr(r, "--deadbeef-I--\na=hello+world&pw=*******\n"));
    ck_assert_ptr_nonnull(strstr(r, "--deadbeef-J--\n1,10,\"f.txt\",\"text/plain\"\nTotal,10\n\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nSanitised-Args: \"pw\".\n"));
    ck_assert_ptr_null(strstr(r, "hunter2"));
}
END_TEST

/* ---- sanitisation ------------------------------------------------------------------ */

START_TEST(test_sanitise)
{
    const char *rules = BASE "SecAuditLogParts ABCFHZ\n"
        "SecRule ARGS:a \"@rx .\" \"id:10,phase:1,pass,nolog,sanitiseArg:pw,sanitiseRequestHeader:X-Secret\"\n"
        "SecRule ARGS:card \"@rx ^[0-9]{8}\" \"id:11,phase:2,pass,nolog,sanitiseMatched\"\n"
        "SecRule REQUEST_HEADERS:X-Key \"@rx .\" \"id:12,phase:1,pass,nolog,sanitiseMatched\"\n"
        "SecRule ARGS:a \"@rx .\" \"id:13,phase:3,pass,nolog,sanitiseResponseHeader:Content-Type\"\n";
    bw_tx_t *tx = run_tx(rules, "POST", "/x?a=1&pw=secret&PW=secret2&keep=secret",
                         "X-Secret: topsecret\nX-Key: keyvalue\nContent-Type: application/x-www-form-urlencoded",
                         "card=1234567890&pw=abc&other=1234567890", 200);
    const char *r = native(tx), *js;
    yajl_val v;
    ck_assert_ptr_nonnull(strstr(r, "POST /x?a=1&pw=******&PW=*******&keep=secret HTTP/1.1\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nX-Secret: *********\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nX-Key: ********\n"));
    ck_assert_ptr_nonnull(strstr(r, "--deadbeef-C--\ncard=**********&pw=***&other=1234567890\n"));
    ck_assert_ptr_nonnull(strstr(r, "HTTP/1.1 200 OK\nContent-Type: *********\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nSanitised-Args: \"pw\", \"card\".\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nSanitised-Request-Headers: \"X-Secret\", \"X-Key\".\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nSanitised-Response-Headers: \"Content-Type\".\n"));
    v = json(tx, &js);
    ck_assert_ptr_null(strstr(js, "topsecret"));
    ck_assert_ptr_null(strstr(js, "keyvalue"));
    ck_assert_ptr_null(strstr(js, "pw=secret"));
    ck_assert_str_eq(jstr(v, "request", "headers", "X-Secret"), "*********");
    ck_assert_ptr_nonnull(strstr(js, "\"sanitized\":{\"args\":[\"pw\",\"card\"],"
                                     "\"request_headers\":[\"X-Secret\",\"X-Key\"],"
                                     "\"response_headers\":[\"Content-Type\"]}"));
    yajl_tree_free(v);
}
END_TEST

START_TEST(test_sanitise_json_body)
{
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts ABCFHZ\n"
                         "SecRule REQUEST_HEADERS:Content-Type \"@rx json\" "
                         "\"id:20,phase:1,pass,nolog,ctl:requestBodyProcessor=JSON\"\n"
                         "SecRule ARGS:user.pw \"@rx .\" \"id:21,phase:2,pass,nolog,sanitiseMatched\"\n",
                         "POST", "/api", "Content-Type: application/json",
                         "{\"user\":{\"name\":\"s3cr3tly\",\"pw\":\"s3cr3t\"}}", 200);
    const char *r = native(tx);
    ck_assert_ptr_nonnull(strstr(r, "{\"user\":{\"name\":\"s3cr3tly\",\"pw\":\"******\"}}\n"));
}
END_TEST

/* ---- JSON -------------------------------------------------------------------------- */

START_TEST(test_json_structure)
{
    const char *text;
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts ABCFHKZ\nSecComponentSignature \"extra/1.0\"\n" RULE_Q,
                         "POST", "/login?q=evil", "Content-Type: application/x-www-form-urlencoded",
                         "user=bob", 403);
    yajl_val v = json(tx, &text), x;
    const char *p_status[] = { "response", "status", NULL }, *p_port[] = { "transaction", "remote_port", NULL };
    const char *p_msgs[] = { "audit_data", "messages", NULL }, *p_mr[] = { "matched_rules", NULL };
    const char *p_prod[] = { "audit_data", "producer", NULL }, *p_body[] = { "request", "body", NULL };
    const char *p_int[] = { "audit_data", "action", "intercepted", NULL };
    ck_assert_str_eq(jstr(v, "transaction", "transaction_id", NULL), "UID-test-0001");
    ck_assert_str_eq(jstr(v, "transaction", "remote_address", NULL), "192.0.2.7");
    ck_assert_int_eq(YAJL_GET_INTEGER(yajl_tree_get(v, p_port, yajl_t_number)), 40000);
    ck_assert_str_eq(jstr(v, "request", "request_line", NULL), "POST /login?q=evil HTTP/1.1");
    ck_assert_str_eq(jstr(v, "request", "headers", "Host"), "example.test");
    x = yajl_tree_get(v, p_body, yajl_t_array);
    ck_assert_ptr_nonnull(x);
    ck_assert_str_eq(YAJL_GET_STRING(x->u.array.values[0]), "user=bob");
    ck_assert_int_eq(YAJL_GET_INTEGER(yajl_tree_get(v, p_status, yajl_t_number)), 403);
    ck_assert_str_eq(jstr(v, "response", "headers", "Content-Type"), "text/html");
    x = yajl_tree_get(v, p_msgs, yajl_t_array);
    ck_assert_int_eq((int)x->u.array.len, 1);
    ck_assert_ptr_nonnull(x->u.array.values[0]->u.string);
    ck_assert_ptr_nonnull(strstr(x->u.array.values[0]->u.string, "[id \"1\"]"));
    ck_assert_ptr_nonnull(yajl_tree_get(v, p_int, yajl_t_true));
    ck_assert_ptr_nonnull(strstr(text, "\"action\":{\"intercepted\":true,\"phase\":2,\"message\":\"Pattern match"));
    x = yajl_tree_get(v, p_prod, yajl_t_array);
    ck_assert_int_eq((int)x->u.array.len, 2);
    ck_assert_str_eq(YAJL_GET_STRING(x->u.array.values[1]), "extra/1.0");
    ck_assert_str_eq(jstr(v, "audit_data", "engine_mode", NULL), "ENABLED");
    x = yajl_tree_get(v, p_mr, yajl_t_array);
    ck_assert_int_eq((int)x->u.array.len, 1);
    ck_assert_ptr_nonnull(strstr(text, "\"actionset\":{\"id\":\"1\",\"msg\":\"evil q\",\"phase\":2,"
                                       "\"is_chained\":false,\"tags\":[\"a b\"]}"));
    ck_assert_ptr_nonnull(strstr(text, "\"operator\":{\"operator\":\"rx\",\"operator_param\":\"evil\","
                                       "\"target\":\"ARGS:q\",\"negated\":false}"));
    ck_assert_ptr_nonnull(strstr(text, "\"unparsed\":\"SecRule \\\"ARGS:q\\\" \\\"@rx evil\\\""));
    /* parts not asked for are not there */
    ck_assert_ptr_null(strstr(text, "\"uploads\""));
    yajl_tree_free(v);
}
END_TEST

START_TEST(test_json_chain_and_parts)
{
    const char *text;
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts AFZ\n"
                         "SecRule ARGS:a \"@rx x\" \"id:30,phase:2,pass,log,chain\"\n"
                         "  SecRule ARGS:b \"!@rx y\" \"t:none\"\n", "GET", "/?a=x&b=z", NULL, NULL, 200);
    yajl_val v = json(tx, &text);
    ck_assert_ptr_null(strstr(text, "\"request\""));
    ck_assert_ptr_null(strstr(text, "\"audit_data\""));
    ck_assert_ptr_null(strstr(text, "\"matched_rules\""));
    ck_assert_ptr_nonnull(strstr(text, "\"response\":{\"protocol\":\"HTTP/1.1\",\"status\":200,"));
    yajl_tree_free(v);
    tx = run_tx(BASE "SecAuditLogParts AKZ\n"
                "SecRule ARGS:a \"@rx x\" \"id:30,phase:2,pass,log,chain\"\n"
                "  SecRule ARGS:b \"!@rx y\" \"t:none\"\n", "GET", "/?a=x&b=z", NULL, NULL, 200);
    v = json(tx, &text);
    ck_assert_ptr_nonnull(strstr(text, "\"matched_rules\":[{\"chain\":true,\"rules\":[{"));
    ck_assert_ptr_nonnull(strstr(text, "\"negated\":true"));
    ck_assert_ptr_nonnull(strstr(text, "\"unparsed\":\"SecRule \\\"ARGS:b\\\" \\\"!@rx y\\\" \\\"t:none\\\"\""));
    yajl_tree_free(v);
}
END_TEST

START_TEST(test_json_escaping)
{
    const char *text;
    /* NUL, control bytes, a lone continuation byte, an overlong form, a
     * valid é: the record must still be one parseable line */
    static const char body[] = "a=\x01\x1f\"\\\x80\xc0\xaf\xc3\xa9\x7f";
    bw_tx_t *tx;
    yajl_val v, x;
    const char *p_body[] = { "request", "body", NULL };
    tx = run_tx(BASE "SecAuditLogParts ABCZ\n", "POST", "/", "Content-Type: text/plain", body, 200);
    v = json(tx, &text);
    x = yajl_tree_get(v, p_body, yajl_t_array);
    ck_assert_str_eq(YAJL_GET_STRING(x->u.array.values[0]), "a=\x01\x1f\"\\\xc2\x80\xc3\x80\xc2\xaf\xc3\xa9\x7f");
    yajl_tree_free(v);
}
END_TEST

START_TEST(test_native_line_safety)
{
    /* a value cannot start a line of its own in a header-like part */
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts ABHZ\n", "GET", "/", NULL, NULL, 200);
    const char *r, *f;
    int lines = 0;
    bw_kv_t *kv = apr_array_push(tx->req.headers);
    kv->name = bw_str_make("X-Evil");
    kv->value = bw_str_make("a\r\n--deadbeef-Z--\n\x01");
    r = native(tx);
    ck_assert_ptr_nonnull(strstr(r, "\nX-Evil: a\\x0d\\x0a--deadbeef-Z--\\x0a\\x01\n"));
    for (f = r; (f = strstr(f, "\n--deadbeef-Z--")) != NULL; f++)
        lines++;
    ck_assert_int_eq(lines, 1);
}
END_TEST

/* ---- Concurrent ---------------------------------------------------------------------- */

START_TEST(test_concurrent_names)
{
    bw_tx_t *tx = run_tx(BASE, "GET", "/a?b=c", "User-Agent: ua \"x\"\nReferer: http://r/", NULL, 200);
    const char *dir = NULL, *name, *line;
    unsigned char md5[16];
    apr_time_exp_t xt;
    char want[64];
    memset(md5, 0xab, sizeof md5);
    tx->req.unique_id = bw_str_make("ab/c+d");
    name = bw_audit_file_name(pool, tx, &dir);
    apr_time_exp_lt(&xt, tx->req.start);
    apr_snprintf(want, sizeof want, "/%04d%02d%02d/%04d%02d%02d-%02d%02d", xt.tm_year + 1900, xt.tm_mon + 1,
                 xt.tm_mday, xt.tm_year + 1900, xt.tm_mon + 1, xt.tm_mday, xt.tm_hour, xt.tm_min);
    ck_assert_str_eq(dir, want);
    ck_assert_int_eq(strncmp(name, want, strlen(want)), 0);
    ck_assert_ptr_nonnull(strstr(name, "-ab_c_d"));   /* path-safe */
    line = bw_audit_index_line(pool, tx, NULL, name, 1234, md5);
    ck_assert_int_eq(strncmp(line, "example.test 192.0.2.7 - - [", 28), 0);
    ck_assert_ptr_nonnull(strstr(line, "] \"GET /a?b=c HTTP/1.1\" 200 0 \"http://r/\" \"ua \\\"x\\\"\" ab/c+d \"-\" "));
    ck_assert_ptr_nonnull(strstr(line, apr_pstrcat(pool, " ", name, " 0 1234 md5:abababababababababababababababab \n", NULL)));
}
END_TEST

/* ---- reading back ---------------------------------------------------------------------- */

START_TEST(test_reader_roundtrip)
{
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts ABFHZ\n" RULE_Q, "GET", "/p?q=evil", NULL, NULL, 403);
    const char *one = native(tx);
    bw_str_t two = bw_audit_record(pool, tx, NULL, BW_AUDIT_NATIVE);
    const char *all = apr_pstrcat(pool, one, bw_str_pdup(pool, two), NULL);
    bw_audit_reader_t *rd = bw_audit_reader_create(pool, bw_str_make(all), -1);
    bw_audit_entry_t e;
    const char *err;
    int n = 0;
    while (bw_audit_reader_next(rd, pool, &e, &err) == 1) {
        n++;
        ck_assert_int_eq(e.format, BW_AUDIT_NATIVE);
        ck_assert_str_eq(e.unique_id, "UID-test-0001");
        ck_assert_str_eq(e.client, "192.0.2.7");
        ck_assert_int_eq(e.client_port, 40000);
        ck_assert_str_eq(e.method, "GET");
        ck_assert_str_eq(e.uri, "/p?q=evil");
        ck_assert_int_eq(e.status, 403);
        ck_assert_int_eq((int)(e.time - tx->req.start), 0);
        ck_assert_int_eq(e.rule_ids->nelts, 1);
        ck_assert_str_eq(((const char **)e.rule_ids->elts)[0], "1");
    }
    ck_assert_int_eq(n, 2);
    /* JSON */
    {
        bw_str_t j = bw_audit_record(pool, tx, NULL, BW_AUDIT_JSON);
        const char *jj = apr_pstrcat(pool, bw_str_pdup(pool, j), "\n", bw_str_pdup(pool, j), NULL);
        rd = bw_audit_reader_create(pool, bw_str_make(jj), -1);
        for (n = 0; bw_audit_reader_next(rd, pool, &e, &err) == 1; n++) {
            ck_assert_int_eq(e.format, BW_AUDIT_JSON);
            ck_assert_str_eq(e.uri, "/p?q=evil");
            ck_assert_int_eq(e.status, 403);
            ck_assert_int_eq((int)(e.time - tx->req.start), 0);
            ck_assert_str_eq(((const char **)e.rule_ids->elts)[0], "1");
        }
        ck_assert_int_eq(n, 2);
    }
}
END_TEST

START_TEST(test_reader_broken)
{
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts ABFHZ\n", "GET", "/", NULL, NULL, 200);
    const char *rec = bw_str_pdup(pool, bw_audit_record(pool, tx, NULL, BW_AUDIT_NATIVE));
    const char *z = strstr(rec, "-Z--");
    char *cut = apr_pstrndup(pool, rec, (apr_size_t)(z - rec) - 12);   /* before the Z line */
    const char *text = apr_pstrcat(pool, cut, rec, rec, NULL);
    bw_audit_reader_t *rd = bw_audit_reader_create(pool, bw_str_make(text), -1);
    bw_audit_entry_t e;
    const char *err = NULL;
    ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), -1);   /* cut: the next starts first */
    ck_assert_ptr_nonnull(strstr(err, "is cut"));
    ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), 1);
    ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), 1);
    ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), 0);
    /* input that ends inside a record */
    rd = bw_audit_reader_create(pool, bw_str_make(cut), BW_AUDIT_NATIVE);
    ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), -1);
    /* JSON: a cut line is reported, the next one read */
    {
        bw_str_t j = bw_audit_record(pool, tx, NULL, BW_AUDIT_JSON);
        const char *jj = apr_pstrcat(pool, apr_pstrndup(pool, j.data, j.len / 2), "\n",
                                     bw_str_pdup(pool, j), NULL);
        rd = bw_audit_reader_create(pool, bw_str_make(jj), -1);
        ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), -1);
        ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), 1);
        ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), 0);
    }
}
END_TEST

START_TEST(test_reader_marker_in_body)
{
    /* a body line that looks like another record's marker does not cut the record */
    bw_tx_t *tx = run_tx(BASE "SecAuditLogParts ABCFHZ\n", "POST", "/", "Content-Type: text/plain",
                         "x\n--cafe0001-A--\nnot a time\ny--cafe0002-A--\n--cafe0001-Z--\n", 200);
    bw_str_t rec = bw_audit_record(pool, tx, NULL, BW_AUDIT_NATIVE);
    bw_audit_reader_t *rd = bw_audit_reader_create(pool, rec, -1);
    bw_audit_entry_t e;
    const char *err = NULL;
    ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), 1);
    ck_assert_int_eq((int)e.raw.len, (int)rec.len);
    ck_assert_int_eq(bw_audit_reader_next(rd, pool, &e, &err), 0);
}
END_TEST

START_TEST(test_parse_time)
{
    apr_time_t t = bw_audit_parse_time(bw_str_make("22/Nov/2026:16:01:28.795459 +0000"));
    ck_assert(t == apr_time_from_sec(1795363288) + 795459);
    t = bw_audit_parse_time(bw_str_make("22/Nov/2026:17:01:28 +0100"));
    ck_assert(t == apr_time_from_sec(1795363288));
    ck_assert(bw_audit_parse_time(bw_str_make("22/Foo/2026:17:01:28 +0100")) == 0);
    ck_assert(bw_audit_parse_time(bw_str_make("22/Nov/2026 17:01:28 +0100")) == 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("audit");
    TCase *tc = tcase_create("audit");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_wanted);
    tcase_add_test(tc, test_parts);
    tcase_add_test(tc, test_native_layout);
    tcase_add_test(tc, test_native_no_body_parts);
    tcase_add_test(tc, test_native_multipart);
    tcase_add_test(tc, test_sanitise);
    tcase_add_test(tc, test_sanitise_json_body);
    tcase_add_test(tc, test_json_structure);
    tcase_add_test(tc, test_json_chain_and_parts);
    tcase_add_test(tc, test_json_escaping);
    tcase_add_test(tc, test_native_line_safety);
    tcase_add_test(tc, test_concurrent_names);
    tcase_add_test(tc, test_reader_roundtrip);
    tcase_add_test(tc, test_reader_broken);
    tcase_add_test(tc, test_reader_marker_in_body);
    tcase_add_test(tc, test_parse_time);
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
