/*
 * Driving a transaction through httpd's request cycle.
 *
 * Hook placement (why each one):
 *  - check_config: build every server's program and every <Location> or
 *    <Directory> section's over it (bw_httpd_build_programs), so rule
 *    errors that only show when contexts merge (duplicate ids…) stop Apache
 *    at start-up, and `apachectl configtest` reports them too.
 *  - post_config: open the collection store, before the workers fork.
 *  - post_read_request, LAST: the request line and headers are read and
 *    mod_unique_id (MIDDLE) has named the request; phase 1 runs with the
 *    server's (virtual host's) configuration, as in mod_security2 — httpd
 *    has not mapped the URL to <Location> sections yet.
 *  - fixups, REALLY_FIRST: the per-dir configuration is final and no
 *    handler has run, so mod_proxy has not contacted the backend. The
 *    request body is read here in full (within limits), phase 2 runs, and
 *    the body is then replayed to the handler by the BULWARK_IN filter.
 *  - insert_filter: BULWARK_OUT runs phases 3 and 4 on the response.
 *  - log_transaction: phase 5.
 */
#include "httpd/bw_httpd.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "apr_strings.h"
#include "apr_base64.h"
#include "mod_log_config.h"

#define BODY_READ_CHUNK 65536

static bw_httpd_req_t *req_state(request_rec *r)
{
    return ap_get_module_config(r->request_config, &bulwark_module);
}

static apr_array_header_t *headers_of(apr_pool_t *p, const apr_table_t *t)
{
    const apr_array_header_t *arr = apr_table_elts(t);
    apr_array_header_t *out = apr_array_make(p, arr->nelts ? arr->nelts : 1, sizeof(bw_kv_t));
    int i;
    for (i = 0; i < arr->nelts; i++) {
        const apr_table_entry_t *e = &((const apr_table_entry_t *)arr->elts)[i];
        bw_kv_t *kv;
        if (!e->key)
            continue;
        kv = apr_array_push(out);
        kv->name = bw_str_make(e->key);
        kv->value = bw_str_make(e->val);
    }
    return out;
}

static const char *unique_id(request_rec *r)
{
    const char *id = apr_table_get(r->subprocess_env, "UNIQUE_ID");
    unsigned char raw[18];
    char *enc;
    if (id)
        return id;
    if (r->log_id)
        return r->log_id;
    if (apr_generate_random_bytes(raw, sizeof raw) != APR_SUCCESS)
        return apr_psprintf(r->pool, "%" APR_TIME_T_FMT, r->request_time);
    enc = apr_palloc(r->pool, apr_base64_encode_len(sizeof raw));
    apr_base64_encode(enc, (const char *)raw, sizeof raw);
    apr_table_setn(r->subprocess_env, "UNIQUE_ID", enc);
    return enc;
}

static void fill_request(request_rec *r, bw_request_t *req)
{
    const char *line = r->the_request ? r->the_request : "";
    memset(req, 0, sizeof(*req));
    req->request_line = bw_str_make(line);
    req->method = bw_str_make(r->method);
    req->uri = bw_str_make(r->unparsed_uri ? r->unparsed_uri : r->uri);
    req->protocol = bw_str_make(r->protocol);
    req->headers = headers_of(r->pool, r->headers_in);
    req->remote_addr = bw_str_make(r->useragent_ip ? r->useragent_ip : r->connection->client_ip);
    req->remote_port = r->useragent_addr ? r->useragent_addr->port
                     : (r->connection->client_addr ? r->connection->client_addr->port : 0);
    req->server_addr = bw_str_make(r->connection->local_ip);
    req->server_port = r->connection->local_addr ? r->connection->local_addr->port : 0;
    req->server_name = bw_str_make(r->hostname ? r->hostname : r->server->server_hostname);
    req->unique_id = bw_str_make(unique_id(r));
    req->remote_user = bw_str_make(r->user);
    req->auth_type = bw_str_make(r->ap_auth_type);
    req->start = r->request_time;
}

/* proxy:URL (phases 1 and 2; the engine turns a later one into a 500), as
 * mod_security2 does it: the request becomes a reverse-proxy request for
 * URL, which mod_proxy's own fixups (MIDDLE, after ours) and handler then
 * serve; the body read for phase 2 is replayed to it. Without mod_proxy the
 * request ends with a 500 and the reason in the error log, as mod_security2
 * answers: a configuration naming proxy loads in both engines without
 * mod_proxy (which may be loaded after this module, so parse time cannot
 * tell). */
static int intervene_proxy(request_rec *r, const bw_intervention_t *iv)
{
    if (!ap_find_linked_module("mod_proxy.c")) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR | APLOG_NOERRNO, 0, r,
                      "ModSecurity: Access denied with code 500 (phase %d): rule %ld asks to proxy to "
                      "%s, but mod_proxy is not loaded [unique_id \"%s\"]", iv->phase,
                      iv->rule ? bw_rule_id(iv->rule) : 0L, ap_escape_logitem(r->pool, iv->url),
                      unique_id(r));
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    r->filename = apr_pstrcat(r->pool, "proxy:", iv->url, NULL);
    r->proxyreq = PROXYREQ_REVERSE;
    r->handler = "proxy-server";
    return OK;
}

int bw_httpd_intervene(request_rec *r, const bw_intervention_t *iv)
{
    switch (iv->disposition) {
    case BW_DISP_PROXY:
        return intervene_proxy(r, iv);
    case BW_DISP_REDIRECT:
        apr_table_setn(r->headers_out, "Location", iv->url ? iv->url : "/");
        return iv->status ? iv->status : HTTP_MOVED_TEMPORARILY;
    case BW_DISP_DROP: {
        apr_socket_t *sock = ap_get_conn_socket(r->connection);
        r->connection->keepalive = AP_CONN_CLOSE;
        if (sock)
            apr_socket_shutdown(sock, APR_SHUTDOWN_READWRITE);
        r->connection->aborted = 1;
        return HTTP_FORBIDDEN;
    }
    default:
        return iv->status ? iv->status : HTTP_FORBIDDEN;
    }
}

/* A deny of a request that broke the OpenAPI description answers with the
 * engine's problem document (application/problem+json) instead of httpd's
 * error page: written here and DONE returned, so httpd only finalizes the
 * response (and discards a body not read yet, keeping the connection
 * usable). Any other intervention is bw_httpd_intervene's. */
static int intervene(request_rec *r, bw_httpd_req_t *st, const bw_intervention_t *iv)
{
    int status = iv->status ? iv->status : HTTP_FORBIDDEN;
    const char *doc;
    if (iv->disposition != BW_DISP_DENY || !(doc = bw_tx_openapi_problem(st->tx, status)))
        return bw_httpd_intervene(r, iv);
    r->status = status;
    ap_set_content_type(r, "application/problem+json");
    ap_set_content_length(r, (apr_off_t)strlen(doc));
    if (!r->header_only)
        ap_rputs(doc, r);
    return DONE;
}

static int post_read_request(request_rec *r)
{
    const bw_httpd_dircfg_t *d;
    const bw_program_t *prog;
    bw_httpd_req_t *st;
    bw_request_t req;
    bw_intervention_t iv;
    char *err = NULL;

    if (r->main || r->prev)
        return DECLINED;
    d = ap_get_module_config(r->per_dir_config, &bulwark_module);
    prog = bw_httpd_program(r, d, &err);
    if (!prog) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "Bulwark: cannot build rule program: %s",
                      err ? err : "unknown error");
        return DECLINED;
    }
    st = apr_pcalloc(r->pool, sizeof(*st));
    st->r = r;
    fill_request(r, &req);
    st->tx = bw_tx_create(r->pool, prog, &req, bw_httpd_callbacks(r));
    bw_tx_set_env(st->tx, r->subprocess_env);
    bw_tx_set_store(st->tx, bw_httpd_store(r->server));
    bw_httpd_status_count(r, st->tx);
    ap_set_module_config(r->request_config, &bulwark_module, st);
    if (bw_tx_run_phase(st->tx, BW_PHASE_REQUEST_HEADERS, &iv)) {
        st->intercepted = 1;
        return intervene(r, st, &iv);
    }
    return DECLINED;
}

static int request_has_body(request_rec *r)
{
    const char *cl = apr_table_get(r->headers_in, "Content-Length");
    const char *te = apr_table_get(r->headers_in, "Transfer-Encoding");
    if (te)
        return 1;
    return cl && apr_atoi64(cl) > 0;
}

/* The body's size when Content-Length announces it, else -1. */
static apr_int64_t announced_length(request_rec *r)
{
    const char *cl = apr_table_get(r->headers_in, "Content-Length");
    if (!cl || apr_table_get(r->headers_in, "Transfer-Encoding"))
        return -1;
    return apr_atoi64(cl);
}

/* The error-log line for a request body past a limit: which limit, and
 * the ModSecurity wording ("Request body (Content-Length) is larger than
 * the configured limit") that log watchers know. */
static void log_body_limit(request_rec *r, bw_httpd_req_t *st, int rejected)
{
    apr_int64_t value = 0;
    int announced = 0;
    const char *name = bw_tx_request_body_limit(st->tx, &value, &announced);
    const char *what = !strcmp(name, "SecRequestBodyNoFilesLimit") ? " no files data length"
                     : announced ? " (Content-Length)" : "";
    const char *host = r->hostname ? r->hostname : r->server->server_hostname;
    ap_log_rerror(APLOG_MARK, (rejected ? APLOG_ERR : APLOG_WARNING) | APLOG_NOERRNO, 0, r,
                  "ModSecurity: %s Request body%s is larger than the configured limit "
                  "(%s %" APR_INT64_T_FMT ")%s [hostname \"%s\"] [uri \"%s\"] [unique_id \"%s\"]",
                  rejected ? "Access denied with code 413 (phase 2)." : "Warning.", what, name,
                  value, rejected ? "." : ": the rest of the body is not inspected.",
                  ap_escape_logitem(r->pool, host ? host : ""),
                  ap_escape_logitem(r->pool, r->uri), unique_id(r));
}

/* A read that failed (client Timeout, bad chunk, LimitRequestBody…): the
 * request cannot go on, and the connection is no longer in a known state. */
static int body_read_error(request_rec *r, apr_status_t rv)
{
    char buf[120];
    r->connection->keepalive = AP_CONN_CLOSE;
    ap_log_rerror(APLOG_MARK, APLOG_ERR | APLOG_NOERRNO, 0, r,
                  "ModSecurity: Error reading request body: %s [unique_id \"%s\"]",
                  rv == AP_FILTER_ERROR ? "invalid request body framing"
                                        : apr_strerror(rv, buf, sizeof buf), unique_id(r));
    return ap_map_http_request_error(rv, HTTP_BAD_REQUEST);
}

/* Store the data buckets of bb and feed the engine (until it has had
 * enough). Returns OK, or an HTTP status. */
static int take_buckets(bw_httpd_req_t *st, apr_bucket_brigade *bb, int *feeding)
{
    apr_bucket *b;
    for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb); b = APR_BUCKET_NEXT(b)) {
        const char *data;
        apr_size_t len;
        apr_status_t rv;
        if (APR_BUCKET_IS_EOS(b)) {
            st->body_complete = 1;
            break;
        }
        if (APR_BUCKET_IS_METADATA(b))
            continue;
        if ((rv = apr_bucket_read(b, &data, &len, APR_BLOCK_READ)) != APR_SUCCESS)
            return body_read_error(st->r, rv);
        if (bw_httpd_body_store(st, data, len) != APR_SUCCESS)
            return HTTP_INTERNAL_SERVER_ERROR;
        if (*feeding && bw_tx_request_body_append(st->tx, data, len) != 0) {
            *feeding = 0;
            if (bw_tx_request_body_rejected(st->tx))
                return HTTP_REQUEST_ENTITY_TOO_LARGE;
        }
    }
    return OK;
}

/* Read the body through the input filters (HTTP_IN dechunks and enforces
 * LimitRequestBody and Timeout), storing every byte for BULWARK_IN to
 * replay and feeding the engine as it arrives. Stops at the end, or where
 * the engine stopped (ProcessPartial: the rest streams later, unread here).
 * Returns OK, or an HTTP status. */
static int read_body(request_rec *r, bw_httpd_req_t *st, const bw_settings_t *set)
{
    apr_bucket_brigade *bb;
    apr_int64_t announced = announced_length(r);
    int feeding = 1, rc;

    bw_tx_request_body_external(st->tx);
    bw_httpd_body_init(st, set, announced);
    if (announced > 0 && bw_tx_request_body_expect(st->tx, announced))
        return HTTP_REQUEST_ENTITY_TOO_LARGE;   /* refused unread, as mod_security2 does */
    bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    while (!st->body_complete && feeding) {
        apr_status_t rv = ap_get_brigade(r->input_filters, bb, AP_MODE_READBYTES, APR_BLOCK_READ,
                                         BODY_READ_CHUNK);
        if (rv != APR_SUCCESS)
            return body_read_error(r, rv);
        rc = take_buckets(st, bb, &feeding);
        apr_brigade_cleanup(bb);
        if (rc != OK)
            return rc;
    }
    return OK;
}

static apr_status_t finish_uploads(void *tx)
{
    bw_tx_finish_uploads(tx);
    return APR_SUCCESS;
}

/* Read and inspect the body (phase 2 needs it whole). Returns OK, or the
 * status that ends the request here. */
static int inspect_body(request_rec *r, bw_httpd_req_t *st, const bw_program_t *prog)
{
    int rc;
    if (bw_tx_request_body_access(st->tx) && request_has_body(r)) {
        /* stored multipart files are settled when the request is over */
        apr_pool_cleanup_register(r->pool, st->tx, finish_uploads, apr_pool_cleanup_null);
        rc = read_body(r, st, bw_program_settings(prog));
        bw_httpd_add_replay_filter(r, st);
        if (rc != OK) {
            if (bw_tx_request_body_rejected(st->tx))
                log_body_limit(r, st, 1);
            return rc;
        }
    }
    bw_tx_request_body_end(st->tx);
    if (bw_tx_request_body_limit(st->tx, NULL, NULL))
        log_body_limit(r, st, bw_tx_request_body_rejected(st->tx) != 0);
    return bw_tx_request_body_rejected(st->tx) ? HTTP_REQUEST_ENTITY_TOO_LARGE : OK;
}

static int fixups(request_rec *r)
{
    bw_httpd_req_t *st = req_state(r);
    const bw_httpd_dircfg_t *d;
    const bw_program_t *prog;
    bw_intervention_t iv;
    char *err = NULL;
    int rc;

    if (!st || st->intercepted || r->main || r->prev)
        return DECLINED;
    d = ap_get_module_config(r->per_dir_config, &bulwark_module);
    prog = bw_httpd_program(r, d, &err);
    if (!prog) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "Bulwark: cannot build rule program: %s", err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    bw_tx_set_program(st->tx, prog);
    /* authentication ran between phase 1 and here */
    bw_tx_set_identity(st->tx, r->user, r->ap_auth_type);
    if (bw_tx_engine_mode(st->tx) == BW_ENGINE_OFF)
        return DECLINED;
    if ((rc = inspect_body(r, st, prog)) != OK) {
        st->intercepted = 1;
        return rc;
    }
    bw_httpd_stream_lend(st);
    if (bw_tx_run_phase(st->tx, BW_PHASE_REQUEST_BODY, &iv)) {
        st->intercepted = 1;
        return intervene(r, st, &iv);
    }
    bw_httpd_stream_take(st);
    return DECLINED;
}

static void insert_filter(request_rec *r)
{
    bw_httpd_req_t *st = req_state(r);
    if (!st || r->main)
        return;
    ap_add_output_filter("BULWARK_OUT", st, r, r->connection);
}

static int log_transaction(request_rec *r)
{
    request_rec *orig = r;
    bw_httpd_req_t *st;
    bw_intervention_t iv;
    while (orig->prev)
        orig = orig->prev;
    st = req_state(orig);
    if (!st || st->phase5_done)
        return DECLINED;
    st->phase5_done = 1;
    if (!st->resp_started) {
        bw_response_t res;
        memset(&res, 0, sizeof(res));
        res.status = r->status;
        res.protocol = bw_str_make(bw_httpd_response_protocol());
        res.status_line = bw_str_make(r->status_line ? r->status_line : "");
        res.headers = headers_of(r->pool, r->headers_out);
        bw_tx_set_response(st->tx, &res);
    }
    bw_tx_run_phase(st->tx, BW_PHASE_LOGGING, &iv);
    return DECLINED;
}

/* The engine's libraries, once per configuration cycle (pconf). */
static void engine_init(apr_pool_t *pconf)
{
    void *done = NULL;
    apr_pool_userdata_get(&done, "bulwark-engine-init", pconf);
    if (done)
        return;
    bw_engine_init(pconf);
    apr_pool_userdata_setn("1", "bulwark-engine-init", NULL, pconf);
}

/* check_config runs for `apachectl configtest` (-t) as well as before
 * every start and graceful restart: building the programs here makes the
 * configuration test report what only shows when contexts merge. */
static int check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    engine_init(pconf);
    return bw_httpd_build_programs(s) ? HTTP_INTERNAL_SERVER_ERROR : OK;
}

static int post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    /* built by check_config; found in the contexts' caches here */
    engine_init(pconf);
    if (bw_httpd_build_programs(s))
        return HTTP_INTERNAL_SERVER_ERROR;
    if (bw_httpd_store_post_config(pconf, s) != OK)
        return HTTP_INTERNAL_SERVER_ERROR;
    bw_httpd_status_post_config(pconf, s);
#ifdef __GLIBC__
    /* compiling scan databases and regexes mallocs and frees tens of MB
     * (docs/design-notes.md, *Memory that start-up uses is given back*):
     * free heap pages go back to the system before the children fork */
    malloc_trim(0);
#endif
    ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s, "Bulwark/%s configured.", BW_VERSION);
    return OK;
}

void bw_httpd_register_hooks(apr_pool_t *p)
{
    static const char *const after_unique_id[] = { "mod_unique_id.c", NULL };
    ap_hook_check_config(check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_read_request(post_read_request, after_unique_id, NULL, APR_HOOK_LAST);
    ap_hook_fixups(fixups, NULL, NULL, APR_HOOK_REALLY_FIRST);
    ap_hook_insert_filter(insert_filter, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_log_transaction(log_transaction, NULL, NULL, APR_HOOK_FIRST);
}
