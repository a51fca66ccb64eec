/*
 * Filters, and the request body store they replay.
 *
 * The store: the fixups hook reads the whole request body (within the
 * limits) before any handler runs, and every byte read is kept here — in
 * memory up to SecRequestBodyInMemoryLimit, the rest in a temp file under
 * SecTmpDir — because the backend must get exactly what the client sent,
 * and only once phase 2 has let the request through.
 *
 * BULWARK_IN replays the stored bytes, in order and unchanged, to whoever
 * reads the body next (mod_proxy), honouring the read mode (READBYTES,
 * GETLINE, SPECULATIVE, EXHAUSTIVE); when the engine stopped reading early
 * (SecRequestBodyLimitAction ProcessPartial) the rest then comes from the
 * filters below, uninspected.
 *
 * It is a protocol filter, first in the request's protocol chain (above
 * HTTP_IN), not a content filter: it gives back the bytes HTTP_IN already
 * delivered, so the length stays the client's Content-Length. That matters
 * to mod_proxy_http, which trusts Content-Length only while no content
 * filter sits in r->input_filters (r->input_filters == r->proto_input_filters);
 * with one, every body over its 16 KB prefetch was first spooled to a temp
 * file in the proxy's temp dir (create, write, mmap, unlink: ~0.2 ms of
 * CPU for a 28 KB body here) before a byte went to the backend.
 *
 * BULWARK_OUT runs phase 3 when the first response bytes pass, and, when
 * the response body is to be inspected (SecResponseBodyAccess and a listed
 * MIME type), holds the body until EOS or the limit, runs phase 4, and only
 * then lets it go — so a denied response never reaches the client.
 */
#include "httpd/bw_httpd.h"
#include "apr_strings.h"

#define REPLAY_CHUNK 65536     /* bytes read back from the temp file per bucket */

/* ---- the stored request body ------------------------------------------------ */

void bw_httpd_body_init(bw_httpd_req_t *st, const bw_settings_t *set, apr_int64_t announced)
{
    apr_int64_t mem = set->reqbody_inmemory_limit > 0 ? set->reqbody_inmemory_limit : 0;
    st->body_read = 1;
    st->body_mem_limit = (apr_size_t)mem;
    st->body_tmp_dir = set->tmp_dir;
    /* a Content-Length that fits sizes the buffer once */
    if (announced > 0 && announced <= mem) {
        st->body_cap = (apr_size_t)announced;
        st->body = apr_palloc(st->r->pool, st->body_cap);
    }
}

/* Fallback when the name could not be removed at once. */
static apr_status_t remove_name(void *data)
{
    bw_httpd_req_t *st = data;
    apr_file_remove(st->body_tmp_name, st->r->pool);
    return APR_SUCCESS;
}

/* From here on the body goes to a temp file. It is made the mkstemp way
 * (O_EXCL, mode 0600) and its name removed at once: the data lives only as
 * long as the descriptor, which APR's pool cleanup closes, so nothing is
 * left behind even by a child that dies, and nobody else can open it. */
static apr_status_t body_spill(bw_httpd_req_t *st)
{
    request_rec *r = st->r;
    const char *dir = st->body_tmp_dir ? st->body_tmp_dir : "/tmp";
    char *path = apr_pstrcat(r->pool, dir, "/bulwark-reqbody-XXXXXX", NULL);
    apr_status_t rv = apr_file_mktemp(&st->body_file, path, APR_FOPEN_CREATE | APR_FOPEN_READ
                                      | APR_FOPEN_WRITE | APR_FOPEN_EXCL | APR_FOPEN_BINARY, r->pool);
    if (rv != APR_SUCCESS) {
        st->body_file = NULL;
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "ModSecurity: Input filter: cannot create a "
                      "temporary file for the request body in SecTmpDir %s", dir);
        return rv;
    }
    if (apr_file_remove(path, r->pool) != APR_SUCCESS) {
        st->body_tmp_name = path;
        apr_pool_cleanup_register(r->pool, st, remove_name, apr_pool_cleanup_null);
    }
    return APR_SUCCESS;
}

static void body_mem_append(bw_httpd_req_t *st, const char *data, apr_size_t n)
{
    if (st->body_len + n > st->body_cap) {
        apr_size_t cap = st->body_cap ? st->body_cap * 2 : 16384;
        char *b;
        while (cap < st->body_len + n)
            cap *= 2;
        if (cap > st->body_mem_limit)
            cap = st->body_mem_limit;
        b = apr_palloc(st->r->pool, cap);
        if (st->body_len)
            memcpy(b, st->body, st->body_len);
        st->body = b;
        st->body_cap = cap;
    }
    memcpy(st->body + st->body_len, data, n);
    st->body_len += n;
}

apr_status_t bw_httpd_body_store(bw_httpd_req_t *st, const char *data, apr_size_t len)
{
    apr_status_t rv;
    if (!st->body_file) {
        apr_size_t room = st->body_mem_limit - st->body_len, n = len < room ? len : room;
        if (n)
            body_mem_append(st, data, n);
        data += n;
        len -= n;
        if (len == 0)
            return APR_SUCCESS;
        if ((rv = body_spill(st)) != APR_SUCCESS)
            return rv;
    }
    rv = apr_file_write_full(st->body_file, data, len, NULL);
    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, st->r, "ModSecurity: Input filter: cannot write "
                      "the request body to its temporary file in SecTmpDir %s", st->body_tmp_dir);
        return rv;
    }
    st->body_file_len += (apr_off_t)len;
    return APR_SUCCESS;
}

/* n bytes of the temp file from offset off into buf. */
static apr_status_t file_read_at(bw_httpd_req_t *st, apr_off_t off, char *buf, apr_size_t n)
{
    apr_status_t rv = apr_file_seek(st->body_file, APR_SET, &off);
    if (rv == APR_SUCCESS)
        rv = apr_file_read_full(st->body_file, buf, n, NULL);
    if (rv != APR_SUCCESS)
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, st->r, "ModSecurity: Input filter: cannot read "
                      "back the request body from its temporary file");
    return rv;
}

apr_status_t bw_httpd_request_body(apr_pool_t *p, bw_httpd_req_t *st, bw_str_t *out)
{
    apr_size_t n = st->body_len + (apr_size_t)st->body_file_len;
    char *b;
    apr_status_t rv = APR_SUCCESS;
    if (!st->body_file) {
        *out = bw_str_n(st->body ? st->body : "", st->body_len);
        return APR_SUCCESS;
    }
    b = apr_palloc(p, n + 1);
    if (st->body_len)
        memcpy(b, st->body, st->body_len);
    rv = file_read_at(st, 0, b + st->body_len, (apr_size_t)st->body_file_len);
    b[n] = '\0';
    *out = bw_str_n(b, rv == APR_SUCCESS ? n : st->body_len);
    return rv;
}

void bw_httpd_stream_lend(bw_httpd_req_t *st)
{
    bw_str_t body;
    /* only a whole body: an edited part would be followed by the rest */
    if (!st->body_read || !st->body_complete || !bw_tx_stream_inspection(st->tx, BW_STREAM_IN))
        return;
    if (bw_httpd_request_body(st->r->pool, st, &body) == APR_SUCCESS)
        bw_tx_set_stream(st->tx, BW_STREAM_IN, body);
}

void bw_httpd_stream_take(bw_httpd_req_t *st)
{
    bw_str_t body;
    if (!bw_tx_stream_changed(st->tx, BW_STREAM_IN, &body))
        return;
    st->body = (char *)body.data;
    st->body_len = st->body_cap = body.len;
    st->body_file = NULL;            /* the old bytes go with r->pool */
    st->body_file_len = 0;
    st->body_sent = 0;
    /* mod_proxy_http sends the Content-Length it finds here; a chunked
     * request stays chunked and needs none */
    if (apr_table_get(st->r->headers_in, "Content-Length"))
        apr_table_setn(st->r->headers_in, "Content-Length",
                       apr_psprintf(st->r->pool, "%" APR_SIZE_T_FMT, body.len));
}

/* The stored bytes from offset off: at most max of them, and for GETLINE
 * up to and including the first LF. NULL with *rv on a read error. */
static apr_bucket *body_bucket(ap_filter_t *f, bw_httpd_req_t *st, apr_off_t off, apr_size_t max,
                               int line, apr_status_t *rv)
{
    apr_bucket_alloc_t *ba = f->c->bucket_alloc;
    const char *lf;
    char *buf;
    apr_size_t n;
    if (off < (apr_off_t)st->body_len) {
        n = st->body_len - (apr_size_t)off;
        n = n < max ? n : max;
        if (line && (lf = memchr(st->body + off, '\n', n)) != NULL)
            n = (apr_size_t)(lf - (st->body + off)) + 1;
        return apr_bucket_transient_create(st->body + off, n, ba);
    }
    off -= (apr_off_t)st->body_len;
    n = (apr_size_t)(st->body_file_len - off);
    n = n < max ? n : max;
    n = n < REPLAY_CHUNK ? n : REPLAY_CHUNK;
    buf = apr_bucket_alloc(n, ba);
    if ((*rv = file_read_at(st, off, buf, n)) != APR_SUCCESS) {
        apr_bucket_free(buf);
        return NULL;
    }
    if (line && (lf = memchr(buf, '\n', n)) != NULL)
        n = (apr_size_t)(lf - buf) + 1;
    return apr_bucket_heap_create(buf, n, apr_bucket_free, ba);
}

/* Everything stored is replayed: EOS when the body was read to its end,
 * else the rest (past a ProcessPartial limit) comes from below. */
static apr_status_t replay_done(ap_filter_t *f, bw_httpd_req_t *st, apr_bucket_brigade *bb,
                                ap_input_mode_t mode, apr_read_type_e block, apr_off_t readbytes)
{
    if (!st->body_complete) {
        ap_remove_input_filter(f);
        return ap_get_brigade(f->next, bb, mode, block, readbytes);
    }
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
    if (mode != AP_MODE_SPECULATIVE)
        ap_remove_input_filter(f);
    return APR_SUCCESS;
}

apr_status_t bw_httpd_input_filter(ap_filter_t *f, apr_bucket_brigade *bb, ap_input_mode_t mode,
                                   apr_read_type_e block, apr_off_t readbytes)
{
    bw_httpd_req_t *st = f->ctx;
    apr_off_t total, pos;
    apr_status_t rv = APR_SUCCESS;
    apr_bucket *b;

    if (!st || (mode != AP_MODE_READBYTES && mode != AP_MODE_GETLINE
                && mode != AP_MODE_EXHAUSTIVE && mode != AP_MODE_SPECULATIVE))
        return ap_get_brigade(f->next, bb, mode, block, readbytes);
    total = (apr_off_t)st->body_len + st->body_file_len;
    if (st->body_sent >= total)
        return replay_done(f, st, bb, mode, block, readbytes);
    if (mode == AP_MODE_EXHAUSTIVE) {
        while (st->body_sent < total) {
            if (!(b = body_bucket(f, st, st->body_sent, REPLAY_CHUNK, 0, &rv)))
                return rv;
            APR_BRIGADE_INSERT_TAIL(bb, b);
            st->body_sent += (apr_off_t)b->length;
        }
        if (st->body_complete)
            return replay_done(f, st, bb, mode, block, readbytes);
        return APR_SUCCESS;    /* the next read passes through to the rest */
    }
    pos = st->body_sent;
    b = body_bucket(f, st, pos, readbytes > 0 ? (apr_size_t)readbytes : REPLAY_CHUNK,
                    mode == AP_MODE_GETLINE, &rv);
    if (!b)
        return rv;
    APR_BRIGADE_INSERT_TAIL(bb, b);
    if (mode != AP_MODE_SPECULATIVE)
        st->body_sent = pos + (apr_off_t)b->length;
    return APR_SUCCESS;
}

const char *bw_httpd_response_protocol(void)
{
    return AP_SERVER_PROTOCOL;
}

apr_array_header_t *bw_httpd_response_headers(request_rec *r)
{
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
    return h;
}

static void set_response(bw_httpd_req_t *st, request_rec *r)
{
    bw_response_t res;
    memset(&res, 0, sizeof(res));
    res.status = r->status;
    res.protocol = bw_str_make(bw_httpd_response_protocol());
    res.status_line = bw_str_make(r->status_line ? r->status_line
                                  : apr_psprintf(r->pool, "%s %d", bw_httpd_response_protocol(),
                                                 r->status));
    res.headers = bw_httpd_response_headers(r);
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

/* The held response, or what @rsub made of it (SecStreamOutBodyInspection):
 * then one bucket of the new bytes and EOS, and no Content-Length, which
 * the core recomputes from a body it holds whole. */
static apr_bucket_brigade *stream_out(ap_filter_t *f, bw_httpd_req_t *st)
{
    apr_bucket_brigade *out;
    bw_str_t body;
    if (!bw_tx_stream_changed(st->tx, BW_STREAM_OUT, &body))
        return st->resp_bb;
    apr_brigade_cleanup(st->resp_bb);
    out = st->resp_bb;
    apr_table_unset(f->r->headers_out, "Content-Length");
    APR_BRIGADE_INSERT_TAIL(out, apr_bucket_pool_create(body.data, body.len, f->r->pool,
                                                        f->c->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(out, apr_bucket_eos_create(f->c->bucket_alloc));
    return out;
}

/* SecHashEngine On: sign a redirect's Location (HashLocation). */
static void hash_location(bw_httpd_req_t *st, request_rec *r)
{
    const char *signed_loc = bw_tx_hash_location(st->tx, apr_table_get(r->headers_out, "Location"));
    if (signed_loc)
        apr_table_set(r->headers_out, "Location", signed_loc);
}

/* SecHashEngine On: the held body replaced by the one with its links
 * signed, when any was (never a compressed one: SecDisableBackendCompression
 * On lets the backend's pages be signed); the length is then the
 * content-length filter's to compute again. */
static void hash_body(bw_httpd_req_t *st, request_rec *r, conn_rec *c)
{
    const char *enc = apr_table_get(r->headers_out, "Content-Encoding");
    bw_str_t body;
    /* compressed bytes are not HTML: a chance "<a href=" in them is no link */
    if (enc && strcasecmp(enc, "identity") != 0)
        return;
    if (bw_tx_hash_response_body(st->tx, r->content_type, &body) <= 0)
        return;
    apr_brigade_cleanup(st->resp_bb);
    APR_BRIGADE_INSERT_TAIL(st->resp_bb, apr_bucket_pool_create(body.data, body.len, r->pool,
                                                                c->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(st->resp_bb, apr_bucket_eos_create(c->bucket_alloc));
    apr_table_unset(r->headers_out, "Content-Length");
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
        hash_location(st, r);
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
    hash_body(st, r, f->c);
    ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, stream_out(f, st));
}

/* httpd places a protocol filter after those of the same type, i.e. below
 * HTTP_IN, which has already handed out the body; it is moved to the head
 * of the protocol chain, where content filters (if any) link to it. Should
 * no content filter lead there, it goes first of all: every reader still
 * gets the replay, and only mod_proxy's spooling comes back. */
void bw_httpd_add_replay_filter(request_rec *r, bw_httpd_req_t *st)
{
    ap_filter_t *f = ap_add_input_filter("BULWARK_IN", st, r, r->connection), *prev;
    if (!f || r->proto_input_filters == f)
        return;
    ap_remove_input_filter(f);
    if (r->input_filters == r->proto_input_filters) {
        f->next = r->proto_input_filters;
        r->input_filters = r->proto_input_filters = f;
        return;
    }
    for (prev = r->input_filters; prev && prev->next != r->proto_input_filters; prev = prev->next)
        ;
    if (prev) {
        f->next = r->proto_input_filters;
        prev->next = r->proto_input_filters = f;
    } else {
        f->next = r->input_filters;
        r->input_filters = f;
    }
}

void bw_httpd_register_filters(void)
{
    ap_register_input_filter("BULWARK_IN", bw_httpd_input_filter, NULL, AP_FTYPE_PROTOCOL);
    ap_register_output_filter("BULWARK_OUT", bw_httpd_output_filter, NULL, AP_FTYPE_CONTENT_SET - 3);
}
