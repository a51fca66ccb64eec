/*
 * The JSON audit record: mod_security2 2.9's structure (checked against
 * 2.9.7 with SecAuditLogFormat JSON), one object per line:
 *
 *   transaction   time, transaction_id, remote/local address and port  (A)
 *   request       request_line, headers (B), body: [raw] (C), fake_body (I)
 *   response      protocol, status, headers (F), body (E)
 *   audit_data    messages, action, handler, stopwatch, producer, server,
 *                 sanitized, reqbody_processor_guessed (Bulwark's own, when
 *                 the body's content chose its processor), engine_mode (H)
 *   uploads       info[], total (J)
 *   matched_rules [{chain, rules: [{actionset, operator, config,
 *                 unparsed, is_matched}]}] (K)
 *
 * Differences: audit_data.stopwatch holds the start and duration (µs) that
 * Native's Stopwatch: line has — Bulwark does not time phases one by one —
 * and actionset carries msg. Bytes that are not UTF-8 are written as
 * \u00XX so every record parses.
 */
#include <string.h>
#include "audit/bw_audit_int.h"

static void key(bw_abuf_t *b, int *first, const char *k)
{
    if (!*first)
        bw_abuf_byte(b, ',');
    *first = 0;
    bw_abuf_byte(b, '"');
    bw_abuf_cstr(b, k);
    bw_abuf_add(b, "\":", 2);
}

static void kv_str(bw_abuf_t *b, int *first, const char *k, bw_str_t v)
{
    key(b, first, k);
    bw_abuf_json(b, v);
}

static void kv_num(bw_abuf_t *b, int *first, const char *k, apr_int64_t v)
{
    key(b, first, k);
    bw_abuf_num(b, v);
}

static void kv_bool(bw_abuf_t *b, int *first, const char *k, int v)
{
    key(b, first, k);
    bw_abuf_cstr(b, v ? "true" : "false");
}

static void headers(bw_abuf_t *b, apr_pool_t *p, const apr_array_header_t *h,
                    const apr_array_header_t *masked)
{
    int i, first = 1;
    bw_abuf_byte(b, '{');
    for (i = 0; h && i < h->nelts; i++) {
        const bw_kv_t *kv = &((const bw_kv_t *)h->elts)[i];
        if (!first)
            bw_abuf_byte(b, ',');
        first = 0;
        bw_abuf_json(b, kv->name);
        bw_abuf_byte(b, ':');
        bw_abuf_json(b, bw_audit_san_header(p, masked, kv->name, kv->value));
    }
    bw_abuf_byte(b, '}');
}

static void str_array(bw_abuf_t *b, const apr_array_header_t *a)
{
    int i;
    bw_abuf_byte(b, '[');
    for (i = 0; a && i < a->nelts; i++) {
        if (i)
            bw_abuf_byte(b, ',');
        bw_abuf_json_c(b, ((const char **)a->elts)[i]);
    }
    bw_abuf_byte(b, ']');
}

static void transaction(bw_audit_rec_t *r, bw_abuf_t *b)
{
    const bw_request_t *q = &r->tx->req;
    int first = 1;
    bw_abuf_cstr(b, "\"transaction\":{");
    kv_str(b, &first, "time", bw_str_make(r->time_text));
    kv_str(b, &first, "transaction_id", q->unique_id);
    kv_str(b, &first, "remote_address", q->remote_addr);
    kv_num(b, &first, "remote_port", q->remote_port);
    kv_str(b, &first, "local_address", q->server_addr);
    kv_num(b, &first, "local_port", q->server_port);
    bw_abuf_byte(b, '}');
}

static void request(bw_audit_rec_t *r, bw_abuf_t *b)
{
    int first = 1, c = bw_audit_want_c(r), i = bw_audit_want_i(r);
    if (!bw_audit_has_part(r, 'B') && !c && !i)
        return;
    bw_abuf_cstr(b, ",\"request\":{");
    if (bw_audit_has_part(r, 'B')) {
        kv_str(b, &first, "request_line", r->request_line);
        key(b, &first, "headers");
        headers(b, r->pool, r->tx->req.headers, r->san.req_headers);
    }
    if (c) {
        key(b, &first, "body");
        bw_abuf_byte(b, '[');
        bw_abuf_json(b, r->body);
        bw_abuf_byte(b, ']');
    }
    if (i)
        kv_str(b, &first, "fake_body", bw_audit_fake_body(r->pool, r->tx, &r->san));
    bw_abuf_byte(b, '}');
}

static void response(bw_audit_rec_t *r, bw_abuf_t *b)
{
    int first = 1;
    const bw_tx_t *tx = r->tx;
    if (!bw_audit_has_part(r, 'F') && !bw_audit_has_part(r, 'E'))
        return;
    bw_abuf_cstr(b, ",\"response\":{");
    if (bw_audit_has_part(r, 'F')) {
        kv_str(b, &first, "protocol", r->protocol);
        kv_num(b, &first, "status", r->status);
        key(b, &first, "headers");
        headers(b, r->pool, r->res_headers, r->san.res_headers);
    }
    if (bw_audit_has_part(r, 'E'))
        kv_str(b, &first, "body", bw_str_n(tx->resbody ? tx->resbody : "", tx->resbody ? tx->resbody_len : 0));
    bw_abuf_byte(b, '}');
}

static void sanitized(bw_audit_rec_t *r, bw_abuf_t *b, int *first)
{
    int f2 = 1;
    if (!r->san.arg_names->nelts && !r->san.req_headers->nelts && !r->san.res_headers->nelts)
        return;
    key(b, first, "sanitized");
    bw_abuf_byte(b, '{');
    if (r->san.arg_names->nelts) {
        key(b, &f2, "args");
        str_array(b, r->san.arg_names);
    }
    if (r->san.req_headers->nelts) {
        key(b, &f2, "request_headers");
        str_array(b, r->san.req_headers);
    }
    if (r->san.res_headers->nelts) {
        key(b, &f2, "response_headers");
        str_array(b, r->san.res_headers);
    }
    bw_abuf_byte(b, '}');
}

static void audit_data(bw_audit_rec_t *r, bw_abuf_t *b)
{
    const bw_tx_t *tx = r->tx;
    apr_array_header_t *prod = apr_array_make(r->pool, 2, sizeof(char *));
    int first = 1, i;
    bw_abuf_cstr(b, ",\"audit_data\":{");
    if (r->messages->nelts) {
        key(b, &first, "messages");
        bw_abuf_byte(b, '[');
        for (i = 0; i < r->messages->nelts; i++) {
            if (i)
                bw_abuf_byte(b, ',');
            bw_abuf_json(b, ((bw_str_t *)r->messages->elts)[i]);
        }
        bw_abuf_byte(b, ']');
    }
    if (tx->intercepted) {
        int f2 = 1;
        const char *m = bw_audit_action_message(tx);
        key(b, &first, "action");
        bw_abuf_byte(b, '{');
        kv_bool(b, &f2, "intercepted", 1);
        kv_num(b, &f2, "phase", tx->iv.phase);
        if (m)
            kv_str(b, &f2, "message", bw_str_make(m));
        bw_abuf_byte(b, '}');
    }
    if (r->handler)
        kv_str(b, &first, "handler", bw_str_make(r->handler));
    key(b, &first, "stopwatch");
    {
        int f2 = 1;
        bw_abuf_byte(b, '{');
        kv_num(b, &f2, "start", r->start);
        kv_num(b, &f2, "duration", r->end - r->start);
        bw_abuf_byte(b, '}');
    }
    bw_audit_producer(r->pool, tx, 1, prod);
    key(b, &first, "producer");
    str_array(b, prod);
    if (r->server)
        kv_str(b, &first, "server", bw_str_make(r->server));
    sanitized(r, b, &first);
    if (tx->reqbody_guessed)
        kv_str(b, &first, "reqbody_processor_guessed", bw_str_make(tx->reqbody_guessed));
    kv_str(b, &first, "engine_mode", bw_str_make(bw_audit_engine_mode(tx)));
    bw_abuf_byte(b, '}');
}

static void uploads(bw_audit_rec_t *r, bw_abuf_t *b)
{
    const apr_array_header_t *f = r->tx->files;
    apr_off_t total = 0;
    int i;
    if (!f->nelts && !r->multipart)
        return;
    bw_abuf_cstr(b, ",\"uploads\":{\"info\":[");
    for (i = 0; i < f->nelts; i++) {
        const bw_body_file_t *bf = &((const bw_body_file_t *)f->elts)[i];
        int first = 1;
        bw_abuf_cstr(b, i ? ",{" : "{");
        kv_num(b, &first, "file_size", bf->size);
        kv_str(b, &first, "file_name", bf->file_name);
        kv_str(b, &first, "content_type", bf->content_type.len ? bf->content_type
                                                               : bw_str_make("<Unknown Content-Type>"));
        bw_abuf_byte(b, '}');
        total += bf->size;
    }
    bw_abuf_cstr(b, "],\"total\":");
    bw_abuf_num(b, total);
    bw_abuf_byte(b, '}');
}

static void actionset(bw_abuf_t *b, const bw_rule_t *rule, const bw_rule_t *head)
{
    int first = 1;
    bw_abuf_byte(b, '{');
    if (rule->id_str)
        kv_str(b, &first, "id", bw_str_make(rule->id_str));
    if (rule->rev)
        kv_str(b, &first, "rev", bw_str_make(rule->rev));
    if (rule->msg)
        kv_str(b, &first, "msg", bw_str_make(rule->msg->text));
    if (rule->ver)
        kv_str(b, &first, "version", bw_str_make(rule->ver));
    if (rule->severity >= 0)
        kv_num(b, &first, "severity", rule->severity);
    if (rule->accuracy >= 0)
        kv_num(b, &first, "accuracy", rule->accuracy);
    if (rule->maturity >= 0)
        kv_num(b, &first, "maturity", rule->maturity);
    kv_num(b, &first, "phase", head->phase);
    kv_bool(b, &first, "is_chained", rule->chained || rule != head);
    if (rule->tags && rule->tags->nelts) {
        key(b, &first, "tags");
        str_array(b, rule->tags);
    }
    bw_abuf_byte(b, '}');
}

static void one_rule(bw_audit_rec_t *r, bw_abuf_t *b, const bw_rule_t *rule, const bw_rule_t *head)
{
    int first = 1;
    bw_abuf_byte(b, '{');
    key(b, &first, "actionset");
    actionset(b, rule, head);
    if (rule->kind == BW_RULE_SECRULE) {
        int f2 = 1;
        key(b, &first, "operator");
        bw_abuf_byte(b, '{');
        kv_str(b, &f2, "operator", bw_str_make(rule->op.def ? rule->op.def->name : ""));
        kv_str(b, &f2, "operator_param", bw_str_n(rule->op.param ? rule->op.param : "", rule->op.param_len));
        kv_str(b, &f2, "target", bw_str_make(bw_audit_rule_targets(r->pool, rule)));
        kv_bool(b, &f2, "negated", rule->op_negated);
        bw_abuf_byte(b, '}');
    }
    key(b, &first, "config");
    {
        int f2 = 1;
        bw_abuf_byte(b, '{');
        kv_str(b, &f2, "filename", bw_str_make(rule->file));
        kv_num(b, &f2, "line_num", rule->line);
        bw_abuf_byte(b, '}');
    }
    kv_str(b, &first, "unparsed", bw_str_make(bw_audit_rule_text(r->pool, rule)));
    kv_bool(b, &first, "is_matched", 1);
    bw_abuf_byte(b, '}');
}

static void matched_rules(bw_audit_rec_t *r, bw_abuf_t *b)
{
    int i;
    bw_abuf_cstr(b, ",\"matched_rules\":[");
    for (i = 0; i < r->rules->nelts; i++) {
        const bw_rule_t *head = ((const bw_rule_t **)r->rules->elts)[i], *rule;
        bw_abuf_cstr(b, i ? ",{\"chain\":" : "{\"chain\":");
        bw_abuf_cstr(b, head->chain_next ? "true" : "false");
        bw_abuf_cstr(b, ",\"rules\":[");
        for (rule = head; rule; rule = rule->chain_next) {
            if (rule != head)
                bw_abuf_byte(b, ',');
            one_rule(r, b, rule, head);
        }
        bw_abuf_cstr(b, "]}");
    }
    bw_abuf_byte(b, ']');
}

void bw_audit_json(bw_audit_rec_t *r, bw_abuf_t *b)
{
    bw_abuf_byte(b, '{');
    transaction(r, b);
    request(r, b);
    response(r, b);
    if (bw_audit_has_part(r, 'H'))
        audit_data(r, b);
    if (bw_audit_has_part(r, 'J'))
        uploads(r, b);
    if (bw_audit_has_part(r, 'K'))
        matched_rules(r, b);
    bw_abuf_add(b, "}\n", 2);
}
