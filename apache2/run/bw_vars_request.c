/*
 * Variables that come from the request line, headers, connection and body:
 * ARGS*, REQUEST_*, QUERY_STRING, FILES*, MULTIPART_*, REQBODY_* and
 * friends. Each is produced on demand from data the transaction parsed
 * once; nothing here copies a value but FILES_TMP_CONTENT, read from the
 * stored uploads.
 */
#include <string.h>
#include <apr_file_io.h>
#include "run/bw_run.h"

/* ---- collections of name/value pairs ------------------------------------ */

/* Is kv selected by the literal selector sel (empty: all)? Most names
 * differ from it in length or in their first byte, decided without a call. */
static inline int kv_selected(const bw_kv_t *kv, bw_str_t sel)
{
    return !sel.len || (kv->name.len == sel.len
                        && ((unsigned char)kv->name.data[0] | 0x20) == ((unsigned char)sel.data[0] | 0x20)
                        && bw_str_eq_ci(sel, kv->name));
}

void bw_var_gen_kv(const bw_var_def_t *def, const apr_array_header_t *arr, bw_str_t sel,
                   int names_only, apr_array_header_t *out)
{
    int i;
    const bw_kv_t *kv;
    if (!arr)
        return;
    kv = (const bw_kv_t *)arr->elts;
    for (i = 0; i < arr->nelts; i++)
        if (kv_selected(&kv[i], sel))
            bw_var_emit(out, def, kv[i].name, names_only ? kv[i].name : kv[i].value);
}

int bw_var_count_kv(const apr_array_header_t *arr, bw_str_t sel)
{
    int i, n = 0;
    if (!arr)
        return 0;
    if (!sel.len)
        return arr->nelts;
    for (i = 0; i < arr->nelts; i++)
        n += kv_selected(&((const bw_kv_t *)arr->elts)[i], sel);
    return n;
}

/* Counts without values: names and values come in pairs, so a variable
 * and its _NAMES twin count alike. */
static int c_args(bw_tx_t *tx, bw_str_t sel)
{
    return bw_var_count_kv(tx->args_get, sel) + bw_var_count_kv(tx->args_post, sel)
        + (sel.len ? 0 : tx->args_post_counted);
}
static int c_args_get(bw_tx_t *tx, bw_str_t sel)
{
    return bw_var_count_kv(tx->args_get, sel);
}
static int c_args_post(bw_tx_t *tx, bw_str_t sel)
{
    return bw_var_count_kv(tx->args_post, sel) + (sel.len ? 0 : tx->args_post_counted);
}
static int c_req_headers(bw_tx_t *tx, bw_str_t sel)
{
    return bw_var_count_kv(tx->req.headers, sel);
}
static int c_cookies(bw_tx_t *tx, bw_str_t sel)
{
    return bw_var_count_kv(tx->cookies, sel);
}

static void g_args(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->args_get, sel, 0, out);
    bw_var_gen_kv(d, tx->args_post, sel, 0, out);
}
static void g_args_names(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->args_get, sel, 1, out);
    bw_var_gen_kv(d, tx->args_post, sel, 1, out);
}
static void g_args_get(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->args_get, sel, 0, out);
}
static void g_args_get_names(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->args_get, sel, 1, out);
}
static void g_args_post(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->args_post, sel, 0, out);
}
static void g_args_post_names(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->args_post, sel, 1, out);
}
static void g_req_headers(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->req.headers, sel, 0, out);
}
static void g_req_headers_names(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->req.headers, sel, 1, out);
}
static void g_cookies(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->cookies, sel, 0, out);
}
static void g_cookies_names(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->cookies, sel, 1, out);
}
static void g_part_headers(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->part_headers, sel, 0, out);
}

static void g_args_combined(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    apr_size_t total = 0;
    int i, k;
    const apr_array_header_t *arrs[2];
    arrs[0] = tx->args_get;
    arrs[1] = tx->args_post;
    for (k = 0; k < 2; k++) {
        if (!arrs[k])
            continue;
        for (i = 0; i < arrs[k]->nelts; i++) {
            const bw_kv_t *kv = &((const bw_kv_t *)arrs[k]->elts)[i];
            total += kv->name.len + kv->value.len;
        }
    }
    bw_var_emit(out, d, bw_str_n("", 0), bw_str_make(apr_psprintf(tx->pool, "%" APR_SIZE_T_FMT, total)));
}

/* ---- files ------------------------------------------------------------- */

static void gen_files(bw_tx_t *tx, const bw_var_def_t *d, bw_str_t sel, apr_array_header_t *out, int what)
{
    int i;
    if (!tx->files)
        return;
    for (i = 0; i < tx->files->nelts; i++) {
        const bw_body_file_t *f = &((const bw_body_file_t *)tx->files->elts)[i];
        bw_str_t v;
        if (sel.len && !bw_str_eq_ci(sel, f->field_name))
            continue;
        switch (what) {
        case 0: v = f->file_name; break;
        case 1: v = f->field_name; break;
        case 2: v = bw_str_make(apr_psprintf(tx->pool, "%" APR_OFF_T_FMT, f->size)); break;
        case 3: v = bw_str_make(f->tmp_name ? f->tmp_name : ""); break;
        default:
            if (!f->content.data)
                continue;   /* binary, or not captured: nothing to inspect */
            v = f->content;
            break;
        }
        bw_var_emit(out, d, f->field_name, v);
    }
}
static void g_files(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    gen_files(tx, d, sel, out, 0);
}
static void g_files_names(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    gen_files(tx, d, sel, out, 1);
}
static void g_files_sizes(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    gen_files(tx, d, sel, out, 2);
}
static void g_files_tmpnames(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    gen_files(tx, d, sel, out, 3);
}
/* What the stored copy of file i holds, read at the first use and kept
 * for the transaction: every byte, NULs too, as mod_security2 2.9.7 gives
 * FILES_TMP_CONTENT. All that is read never passes the size of the body
 * the files came in (what the transaction accepted: SecRequestBodyLimit at
 * most); a file that grew on disk past it is cut there, and said. Returns
 * 0 when there is no copy to read (not stored, or it cannot be opened). */
static int tmp_content(bw_tx_t *tx, int i, bw_str_t *out)
{
    const bw_body_file_t *f = &((const bw_body_file_t *)tx->files->elts)[i];
    apr_int64_t room = (apr_int64_t)tx->reqbody_seen - tx->files_tmp_read;
    apr_size_t want, got = 0;
    apr_file_t *fd;
    apr_finfo_t fi;
    char *buf;
    if (!f->tmp_name)
        return 0;
    if (tx->files_tmp_n < tx->files->nelts) {   /* first use, or files came since */
        bw_str_t *grown = apr_pcalloc(tx->pool, sizeof(bw_str_t) * (size_t)tx->files->nelts);
        if (tx->files_tmp_n)
            memcpy(grown, tx->files_tmp_content, sizeof(bw_str_t) * (size_t)tx->files_tmp_n);
        tx->files_tmp_content = grown;
        tx->files_tmp_n = tx->files->nelts;
    }
    if (tx->files_tmp_content[i].data) {
        *out = tx->files_tmp_content[i];
        return 1;
    }
    if (apr_file_open(&fd, f->tmp_name, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, tx->pool) != APR_SUCCESS)
        return 0;
    if (apr_file_info_get(&fi, APR_FINFO_SIZE, fd) != APR_SUCCESS)
        fi.size = f->size;
    if (room < 0)
        room = 0;
    if (fi.size > room)
        bw_tx_log_message(tx, 1, "FILES_TMP_CONTENT: %s cut at %" APR_INT64_T_FMT " bytes, "
                          "what is left of the request body's size", f->tmp_name, room);
    want = (apr_size_t)(fi.size < room ? fi.size : room);
    buf = apr_palloc(tx->pool, want + 1);
    if (want)
        apr_file_read_full(fd, buf, want, &got);
    apr_file_close(fd);
    buf[got] = '\0';
    tx->files_tmp_read += (apr_int64_t)got;
    tx->files_tmp_content[i] = bw_str_n(buf, got);
    *out = tx->files_tmp_content[i];
    return 1;
}

static void g_files_tmp_content(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel,
                                apr_array_header_t *out)
{
    int i;
    for (i = 0; tx->files && i < tx->files->nelts; i++) {
        const bw_body_file_t *f = &((const bw_body_file_t *)tx->files->elts)[i];
        bw_str_t v;
        if (sel.len && !bw_str_eq_ci(sel, f->field_name))
            continue;
        if (tmp_content(tx, i, &v))
            bw_var_emit(out, d, f->field_name, v);
    }
}
static void g_files_content(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    gen_files(tx, d, sel, out, 4);
}
static void g_files_combined(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    apr_off_t total = 0;
    int i;
    for (i = 0; tx->files && i < tx->files->nelts; i++)
        total += ((const bw_body_file_t *)tx->files->elts)[i].size;
    bw_var_emit(out, d, bw_str_n("", 0), bw_str_make(apr_psprintf(tx->pool, "%" APR_OFF_T_FMT, total)));
}

/* ---- scalars ------------------------------------------------------------ */

#define SCALAR(fname, expr) \
    static int fname(bw_tx_t *tx, bw_str_t *v) { *v = (expr); return 1; }

SCALAR(s_method, tx->req.method)
SCALAR(s_protocol, tx->req.protocol)
SCALAR(s_line, tx->req.request_line)
SCALAR(s_uri_raw, tx->req.uri)
SCALAR(s_filename, tx->filename)
SCALAR(s_basename, tx->basename)
SCALAR(s_query, tx->query_string)
SCALAR(s_remote_addr, tx->req.remote_addr)
SCALAR(s_server_addr, tx->req.server_addr)
SCALAR(s_server_name, tx->req.server_name)
SCALAR(s_unique_id, tx->req.unique_id)
SCALAR(s_auth_type, tx->req.auth_type)
SCALAR(s_remote_user, tx->req.remote_user)
SCALAR(s_empty, bw_str_n("", 0))

static int s_uri(bw_tx_t *tx, bw_str_t *v)
{
    /* REQUEST_URI never carries scheme and host, even when the request line did */
    *v = tx->uri_path;
    if (tx->query_string.len || memchr(tx->req.uri.data, '?', tx->req.uri.len)) {
        *v = bw_str_make(apr_pstrcat(tx->pool, bw_str_pdup(tx->pool, tx->uri_path), "?",
                                     bw_str_pdup(tx->pool, tx->query_string), NULL));
    }
    return 1;
}
static int s_remote_port(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(apr_itoa(tx->pool, tx->req.remote_port));
    return 1;
}
static int s_server_port(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(apr_itoa(tx->pool, tx->req.server_port));
    return 1;
}
static int s_reqbody(bw_tx_t *tx, bw_str_t *v)
{
    if (!tx->reqbody_done)
        return 0;
    if (!(tx->force_reqbody_var || tx->reqbody_guess_kept
          || (tx->reqbody_processor && !strcmp(tx->reqbody_processor, "URLENCODED"))))
        return 0;
    *v = bw_str_n(tx->reqbody ? tx->reqbody : "", tx->reqbody_len);
    return 1;
}
static int s_reqbody_guessed(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(tx->reqbody_guessed ? tx->reqbody_guessed : "");
    return 1;
}
static int s_reqbody_len(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(apr_psprintf(tx->pool, "%" APR_OFF_T_FMT, tx->reqbody_seen));
    return 1;
}
static int s_full_request(bw_tx_t *tx, bw_str_t *v)
{
    apr_size_t n = tx->req.request_line.len + 2, off = 0;
    int i;
    char *b;
    bw_str_t body = bw_str_n("", 0);
    const bw_kv_t *h = tx->req.headers ? (const bw_kv_t *)tx->req.headers->elts : NULL;
    int nh = tx->req.headers ? tx->req.headers->nelts : 0;
    /* the body only where REQUEST_BODY has it, as in mod_security2 */
    s_reqbody(tx, &body);
    for (i = 0; i < nh; i++)
        n += h[i].name.len + h[i].value.len + 4;
    n += 2 + body.len;
    b = apr_palloc(tx->pool, n + 1);
    memcpy(b, tx->req.request_line.data, tx->req.request_line.len);
    off = tx->req.request_line.len;
    memcpy(b + off, "\r\n", 2);
    off += 2;
    for (i = 0; i < nh; i++) {
        memcpy(b + off, h[i].name.data, h[i].name.len);
        off += h[i].name.len;
        memcpy(b + off, ": ", 2);
        off += 2;
        memcpy(b + off, h[i].value.data, h[i].value.len);
        off += h[i].value.len;
        memcpy(b + off, "\r\n", 2);
        off += 2;
    }
    memcpy(b + off, "\r\n", 2);
    off += 2;
    if (body.len)
        memcpy(b + off, body.data, body.len);
    off += body.len;
    b[off] = '\0';
    *v = bw_str_n(b, off);
    return 1;
}
static int s_full_request_len(bw_tx_t *tx, bw_str_t *v)
{
    bw_str_t full;
    s_full_request(tx, &full);
    *v = bw_str_make(apr_psprintf(tx->pool, "%" APR_SIZE_T_FMT, full.len));
    return 1;
}

static bw_str_t num(bw_tx_t *tx, int n)
{
    return bw_str_make(apr_itoa(tx->pool, n));
}

static int s_reqbody_error(bw_tx_t *tx, bw_str_t *v)
{
    *v = num(tx, tx->body_res.error ? 1 : 0);
    return 1;
}
static int s_reqbody_error_msg(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(tx->body_res.error_msg ? tx->body_res.error_msg : "");
    return 1;
}
static int s_reqbody_processor(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(tx->reqbody_processor ? tx->reqbody_processor : "");
    return 1;
}
static int s_urlencoded_error(bw_tx_t *tx, bw_str_t *v)
{
    *v = num(tx, (tx->urlencoded_error_get || tx->body_res.urlencoded_error) ? 1 : 0);
    return 1;
}
static int s_inbound_error(bw_tx_t *tx, bw_str_t *v)
{
    *v = num(tx, tx->reqbody_truncated ? 1 : 0);
    return 1;
}
static int s_mp_strict(bw_tx_t *tx, bw_str_t *v)
{
    *v = num(tx, tx->body_res.mp_strict_error);
    return 1;
}

/* MULTIPART_* flags by offset into bw_multipart_flags_t */
static void g_mp_flag(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    size_t off = (size_t)(uintptr_t)data;
    int val = *(const int *)((const char *)&tx->body_res.mp + off);
    bw_var_emit(out, d, bw_str_n("", 0), num(tx, val));
}

static void g_mp_names(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    int i, want_filename = !strcmp(d->name, "MULTIPART_FILENAME");
    for (i = 0; tx->files && i < tx->files->nelts; i++) {
        const bw_body_file_t *f = &((const bw_body_file_t *)tx->files->elts)[i];
        if (sel.len && !bw_str_eq_ci(sel, f->field_name))
            continue;
        bw_var_emit(out, d, f->field_name, want_filename ? f->file_name : f->field_name);
    }
}

static void g_xml(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    apr_array_header_t *kv;
    char *err = NULL;
    int i;
    if (!tx->body_res.xml_doc)
        return;
    kv = apr_array_make(tx->pool, 8, sizeof(bw_kv_t));
    if (bw_body_xml_xpath(tx->pool, tx->body_res.xml_doc,
                          sel.len ? bw_str_pdup(tx->pool, sel) : "/*", kv, &err) != 0) {
        bw_tx_log_message(tx, 1, "XML: XPath %.*s: %s", (int)sel.len, sel.data, err ? err : "failed");
        return;
    }
    for (i = 0; i < kv->nelts; i++)
        bw_var_emit(out, d, sel, ((bw_kv_t *)kv->elts)[i].value);
}


const bw_var_gen_t bw_var_gens_request[BW_V__COUNT] = {
    [BW_V_ARGS] = { g_args, NULL, c_args },
    [BW_V_ARGS_NAMES] = { g_args_names, NULL, c_args },
    [BW_V_ARGS_GET] = { g_args_get, NULL, c_args_get },
    [BW_V_ARGS_GET_NAMES] = { g_args_get_names, NULL, c_args_get },
    [BW_V_ARGS_POST] = { g_args_post, NULL, c_args_post },
    [BW_V_ARGS_POST_NAMES] = { g_args_post_names, NULL, c_args_post },
    [BW_V_ARGS_COMBINED_SIZE] = { g_args_combined, NULL },
    [BW_V_REQUEST_HEADERS] = { g_req_headers, NULL, c_req_headers },
    [BW_V_REQUEST_HEADERS_NAMES] = { g_req_headers_names, NULL, c_req_headers },
    [BW_V_REQUEST_COOKIES] = { g_cookies, NULL, c_cookies },
    [BW_V_REQUEST_COOKIES_NAMES] = { g_cookies_names, NULL, c_cookies },
    [BW_V_MULTIPART_PART_HEADERS] = { g_part_headers, NULL },
    [BW_V_FILES] = { g_files, NULL },
    [BW_V_FILES_NAMES] = { g_files_names, NULL },
    [BW_V_FILES_SIZES] = { g_files_sizes, NULL },
    [BW_V_FILES_TMPNAMES] = { g_files_tmpnames, NULL },
    [BW_V_FILES_TMP_CONTENT] = { g_files_tmp_content, NULL },
    [BW_V_FILES_CONTENT] = { g_files_content, NULL },
    [BW_V_FILES_COMBINED_SIZE] = { g_files_combined, NULL },
    [BW_V_MULTIPART_FILENAME] = { g_mp_names, NULL },
    [BW_V_MULTIPART_NAME] = { g_mp_names, NULL },
    [BW_V_XML] = { g_xml, NULL },
    [BW_V_REQUEST_METHOD] = { bw_var_gen_scalar, (const void *)s_method },
    [BW_V_REQUEST_PROTOCOL] = { bw_var_gen_scalar, (const void *)s_protocol },
    [BW_V_REQUEST_LINE] = { bw_var_gen_scalar, (const void *)s_line },
    [BW_V_REQUEST_URI] = { bw_var_gen_scalar, (const void *)s_uri },
    [BW_V_REQUEST_URI_RAW] = { bw_var_gen_scalar, (const void *)s_uri_raw },
    [BW_V_REQUEST_FILENAME] = { bw_var_gen_scalar, (const void *)s_filename },
    [BW_V_REQUEST_BASENAME] = { bw_var_gen_scalar, (const void *)s_basename },
    [BW_V_QUERY_STRING] = { bw_var_gen_scalar, (const void *)s_query },
    [BW_V_REMOTE_ADDR] = { bw_var_gen_scalar, (const void *)s_remote_addr },
    [BW_V_REMOTE_HOST] = { bw_var_gen_scalar, (const void *)s_remote_addr },
    [BW_V_USERAGENT_IP] = { bw_var_gen_scalar, (const void *)s_remote_addr },
    [BW_V_REMOTE_PORT] = { bw_var_gen_scalar, (const void *)s_remote_port },
    [BW_V_REMOTE_USER] = { bw_var_gen_scalar, (const void *)s_remote_user },
    [BW_V_AUTH_TYPE] = { bw_var_gen_scalar, (const void *)s_auth_type },
    [BW_V_SERVER_ADDR] = { bw_var_gen_scalar, (const void *)s_server_addr },
    [BW_V_SERVER_NAME] = { bw_var_gen_scalar, (const void *)s_server_name },
    [BW_V_SERVER_PORT] = { bw_var_gen_scalar, (const void *)s_server_port },
    [BW_V_UNIQUE_ID] = { bw_var_gen_scalar, (const void *)s_unique_id },
    [BW_V_PATH_INFO] = { bw_var_gen_scalar, (const void *)s_empty },
    [BW_V_REQUEST_BODY] = { bw_var_gen_scalar, (const void *)s_reqbody },
    [BW_V_REQUEST_BODY_LENGTH] = { bw_var_gen_scalar, (const void *)s_reqbody_len },
    [BW_V_FULL_REQUEST] = { bw_var_gen_scalar, (const void *)s_full_request },
    [BW_V_FULL_REQUEST_LENGTH] = { bw_var_gen_scalar, (const void *)s_full_request_len },
    [BW_V_REQBODY_ERROR] = { bw_var_gen_scalar, (const void *)s_reqbody_error },
    [BW_V_REQBODY_ERROR_MSG] = { bw_var_gen_scalar, (const void *)s_reqbody_error_msg },
    [BW_V_REQBODY_PROCESSOR] = { bw_var_gen_scalar, (const void *)s_reqbody_processor },
    [BW_V_REQBODY_PROCESSOR_GUESSED] = { bw_var_gen_scalar, (const void *)s_reqbody_guessed },
    [BW_V_REQBODY_PROCESSOR_ERROR] = { bw_var_gen_scalar, (const void *)s_reqbody_error },
    [BW_V_REQBODY_PROCESSOR_ERROR_MSG] = { bw_var_gen_scalar, (const void *)s_reqbody_error_msg },
    [BW_V_URLENCODED_ERROR] = { bw_var_gen_scalar, (const void *)s_urlencoded_error },
    [BW_V_INBOUND_DATA_ERROR] = { bw_var_gen_scalar, (const void *)s_inbound_error },
    [BW_V_MULTIPART_STRICT_ERROR] = { bw_var_gen_scalar, (const void *)s_mp_strict },
    [BW_V_MULTIPART_BOUNDARY_QUOTED] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, boundary_quoted) },
    [BW_V_MULTIPART_BOUNDARY_WHITESPACE] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, boundary_whitespace) },
    [BW_V_MULTIPART_DATA_BEFORE] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, data_before) },
    [BW_V_MULTIPART_DATA_AFTER] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, data_after) },
    [BW_V_MULTIPART_HEADER_FOLDING] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, header_folding) },
    [BW_V_MULTIPART_LF_LINE] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, lf_line) },
    [BW_V_MULTIPART_MISSING_SEMICOLON] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, missing_semicolon) },
    [BW_V_MULTIPART_INVALID_QUOTING] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, invalid_quoting) },
    [BW_V_MULTIPART_INVALID_PART] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, invalid_part) },
    [BW_V_MULTIPART_INVALID_HEADER_FOLDING] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, invalid_header_folding) },
    [BW_V_MULTIPART_FILE_LIMIT_EXCEEDED] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, file_limit_exceeded) },
    [BW_V_MULTIPART_UNMATCHED_BOUNDARY] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, unmatched_boundary) },
    [BW_V_MULTIPART_CRLF_LF_LINES] = { g_mp_flag, (const void *)offsetof(bw_multipart_flags_t, crlf_lf_lines) },
};
