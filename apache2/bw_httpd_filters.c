/*
 * Filters.
 *
 * BULWARK_IN replays the request body that the fixups hook read and
 * inspected, byte for byte, to whoever reads the body next (mod_proxy);
 * when the engine stopped buffering early (SecRequestBodyLimitAction
 * ProcessPartial) the rest still comes from the filters below it.
 *
 * BULWARK_OUT runs phase 3 when the first response bytes pass, and, when
 * the response body is to be inspected (SecResponseBodyAccess and a listed
 * MIME type), holds the body until EOS or the limit, runs phase 4, and only
 * then lets it go — so a denied response never reaches the client.
 */
#include "bw_httpd.h"

apr_status_t bw_httpd_input_filter(ap_filter_t *f, apr_bucket_brigade *bb, ap_input_mode_t mode,
                                   apr_read_type_e block, apr_off_t readbytes)
{
    bw_httpd_req_t *st = f->ctx;
    apr_size_t left, n;
    apr_bucket *b;

    if (!st || (mode != AP_MODE_READBYTES && mode != AP_MODE_GETLINE
                && mode != AP_MODE_EXHAUSTIVE && mode != AP_MODE_SPECULATIVE))
        return ap_get_brigade(f->next, bb, mode, block, readbytes);
    left = st->body_len - st->body_sent;
    if (left == 0) {
        if (!st->body_complete)
            return ap_get_brigade(f->next, bb, mode, block, readbytes);
        b = apr_bucket_eos_create(f->c->bucket_alloc);
        APR_BRIGADE_INSERT_TAIL(bb, b);
        ap_remove_input_filter(f);
        return APR_SUCCESS;
    }
    n = left;
    if (mode != AP_MODE_EXHAUSTIVE && readbytes > 0 && (apr_size_t)readbytes < n)
        n = (apr_size_t)readbytes;
    b = apr_bucket_transient_create(st->body + st->body_sent, n, f->c->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(bb, b);
    if (mode != AP_MODE_SPECULATIVE)
        st->body_sent += n;
    return APR_SUCCESS;
}

static void set_response(bw_httpd_req_t *st, request_rec *r)
{
    bw_response_t res;
    const apr_array_header_t *arrs[2];
    apr_array_header_t *h = apr_array_make(r->pool, 16, sizeof(bw_kv_t));
    int i, k;
    arrs[0] = apr_table_elts(r->headers_out);
    arrs[1] = apr_table_elts(r->err_headers_out);
    for (k = 0; k < 2; k++)
        for (i = 0; i < arrs[k]->nelts; i++) {
            const apr_table_entry_t *e = &((const apr_table_entry_t *)arrs[k]->elts)[i];
            bw_kv_t *kv;
            if (!e->key)
                continue;
            kv = apr_array_push(h);
            kv->name = bw_str_make(e->key);
            kv->value = bw_str_make(e->val);
        }
    if (r->content_type && !apr_table_get(r->headers_out, "Content-Type")) {
        bw_kv_t *kv = apr_array_push(h);
        kv->name = bw_str_make("Content-Type");
        kv->value = bw_str_make(r->content_type);
    }
    memset(&res, 0, sizeof(res));
    res.status = r->status;
    res.protocol = bw_str_make(r->protocol);
    res.status_line = bw_str_make(r->status_line ? r->status_line
                                  : apr_psprintf(r->pool, "%s %d", r->protocol, r->status));
    res.headers = h;
    bw_tx_set_response(st->tx, &res);
}

/* Replace the response by an error: the core turns the error bucket into
 * the configured error page. */
static apr_status_t send_error(ap_filter_t *f, bw_httpd_req_t *st, const bw_intervention_t *iv,
                               apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    int status = bw_httpd_intervene(r, iv);
    apr_bucket_brigade *out = apr_brigade_create(r->pool, f->c->bucket_alloc);
    st->intercepted = 1;
    if (bb)
        apr_brigade_cleanup(bb);
    if (st->resp_bb)
        apr_brigade_cleanup(st->resp_bb);
    ap_remove_output_filter(f);
    r->status = status;
    APR_BRIGADE_INSERT_TAIL(out, ap_bucket_error_create(status, NULL, r->pool, f->c->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(out, apr_bucket_eos_create(f->c->bucket_alloc));
    return ap_pass_brigade(f->next, out);
}

/* Copy the data of bb into the engine; returns 1 when EOS was seen. */
static int feed_body(bw_httpd_req_t *st, apr_bucket_brigade *bb)
{
    apr_bucket *b;
    for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb); b = APR_BUCKET_NEXT(b)) {
        const char *data;
        apr_size_t len;
        if (APR_BUCKET_IS_EOS(b))
            return 1;
        if (APR_BUCKET_IS_METADATA(b))
            continue;
        if (apr_bucket_read(b, &data, &len, APR_BLOCK_READ) == APR_SUCCESS && len)
            bw_tx_response_body_append(st->tx, data, len);
    }
    return 0;
}

apr_status_t bw_httpd_output_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    bw_httpd_req_t *st = f->ctx;
    request_rec *r = f->r;
    bw_intervention_t iv;
    apr_bucket *b;
    int eos;

    if (!st || st->intercepted || bw_tx_engine_mode(st->tx) == BW_ENGINE_OFF) {
        ap_remove_output_filter(f);
        return ap_pass_brigade(f->next, bb);
    }
    if (!st->resp_started) {
        st->resp_started = 1;
        set_response(st, r);
        if (bw_tx_run_phase(st->tx, BW_PHASE_RESPONSE_HEADERS, &iv))
            return send_error(f, st, &iv, bb);
        st->resp_buffering = bw_tx_wants_response_body(st->tx, r->content_type);
        if (st->resp_buffering)
            st->resp_bb = apr_brigade_create(r->pool, f->c->bucket_alloc);
    }
    if (!st->resp_buffering) {
        ap_remove_output_filter(f);
        return ap_pass_brigade(f->next, bb);
    }
    eos = feed_body(st, bb);
    /* hold everything until phase 4 has decided */
    while (!APR_BRIGADE_EMPTY(bb)) {
        b = APR_BRIGADE_FIRST(bb);
        apr_bucket_setaside(b, r->pool);
        APR_BUCKET_REMOVE(b);
        APR_BRIGADE_INSERT_TAIL(st->resp_bb, b);
    }
    if (!eos)
        return APR_SUCCESS;
    if (bw_tx_run_phase(st->tx, BW_PHASE_RESPONSE_BODY, &iv))
        return send_error(f, st, &iv, NULL);
    ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, st->resp_bb);
}

void bw_httpd_register_filters(void)
{
    ap_register_input_filter("BULWARK_IN", bw_httpd_input_filter, NULL, AP_FTYPE_CONTENT_SET);
    ap_register_output_filter("BULWARK_OUT", bw_httpd_output_filter, NULL, AP_FTYPE_CONTENT_SET - 3);
}
