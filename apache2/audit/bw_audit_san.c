/*
 * Sanitisation of audit records: values that sanitiseArg, sanitiseMatched,
 * sanitiseMatchedBytes, sanitiseRequestHeader and sanitiseResponseHeader
 * marked are replaced by '*' (one per byte, as mod_security2 2.9 does)
 * wherever the record shows them: the query string of the request line,
 * request and response headers, the raw request body (part C) and the
 * multipart summary (part I).
 *
 * Bodies are masked by structure: urlencoded pairs and multipart fields by
 * name. JSON and XML bodies carry no byte offsets here, so a sanitised
 * argument's value is masked wherever it stands in them as a whole token —
 * more than needed rather than a secret left in the log.
 *
 * sanitiseMatchedBytes masks the whole value, as 2.9.7 does for ARGS
 * (checked against it: "sanitiseMatchedBytes:2/3" stars every byte).
 */
#include <string.h>
#include <ctype.h>
#include "audit/bw_audit_int.h"

static void add_name(apr_array_header_t *arr, bw_str_t name)
{
    if (!bw_audit_san_has(arr, name))
        *(const char **)apr_array_push(arr) = apr_pstrmemdup(arr->pool, name.data, name.len);
}

int bw_audit_san_has(const apr_array_header_t *names, bw_str_t name)
{
    int i;
    for (i = 0; names && i < names->nelts; i++)
        if (bw_str_eq_cstr_ci(name, ((const char **)names->elts)[i]))
            return 1;
    return 0;
}

static int prefix_ci(bw_str_t s, const char *pre, bw_str_t *rest)
{
    size_t n = strlen(pre);
    if (s.len < n || strncasecmp(s.data, pre, n))
        return 0;
    *rest = bw_str_n(s.data + n, s.len - n);
    return 1;
}

/* "ARGS:name", "REQUEST_HEADERS:name"…: the matched variable of a
 * sanitiseMatched*. Other variables have nothing to mask in a record. */
static void add_matched(bw_audit_san_t *s, bw_str_t var)
{
    bw_str_t k;
    if (prefix_ci(var, "ARGS:", &k)) {
        add_name(s->get_args, k);
        add_name(s->post_args, k);
        add_name(s->arg_names, k);
    } else if (prefix_ci(var, "ARGS_GET:", &k)) {
        add_name(s->get_args, k);
        add_name(s->arg_names, k);
    } else if (prefix_ci(var, "ARGS_POST:", &k)) {
        add_name(s->post_args, k);
        add_name(s->arg_names, k);
    } else if (prefix_ci(var, "REQUEST_HEADERS:", &k)) {
        add_name(s->req_headers, k);
    } else if (prefix_ci(var, "RESPONSE_HEADERS:", &k)) {
        add_name(s->res_headers, k);
    }
}

void bw_audit_san_build(apr_pool_t *p, const bw_tx_t *tx, bw_audit_san_t *s)
{
    apr_array_header_t *marks = apr_array_make(p, 4, sizeof(bw_kv_t));
    int i;
    s->get_args = apr_array_make(p, 2, sizeof(char *));
    s->post_args = apr_array_make(p, 2, sizeof(char *));
    s->req_headers = apr_array_make(p, 2, sizeof(char *));
    s->res_headers = apr_array_make(p, 2, sizeof(char *));
    s->arg_names = apr_array_make(p, 2, sizeof(char *));
    bw_tx_collection_dump(tx, "__SANITISE", marks);
    for (i = 0; i < marks->nelts; i++) {
        bw_str_t key = ((bw_kv_t *)marks->elts)[i].name, what;
        /* "sanitise" and "sanitize" spell the same actions */
        if (key.len < 8 || strncasecmp(key.data, "saniti", 6))
            continue;
        key = bw_str_n(key.data + 8, key.len - 8);
        if (prefix_ci(key, "Arg:", &what)) {
            add_name(s->get_args, what);
            add_name(s->post_args, what);
            add_name(s->arg_names, what);
        } else if (prefix_ci(key, "MatchedBytes:", &what) || prefix_ci(key, "Matched:", &what)) {
            add_matched(s, what);
        } else if (prefix_ci(key, "RequestHeader:", &what)) {
            add_name(s->req_headers, what);
        } else if (prefix_ci(key, "ResponseHeader:", &what)) {
            add_name(s->res_headers, what);
        }
    }
}

static int hexv(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* URL-decode a name ('+' is a space) into p, for comparison only. */
static bw_str_t url_decode(apr_pool_t *p, bw_str_t in)
{
    char *o = apr_palloc(p, in.len + 1);
    size_t i, n = 0;
    for (i = 0; i < in.len; i++) {
        int c = (unsigned char)in.data[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%' && i + 2 < in.len && hexv(in.data[i + 1]) >= 0 && hexv(in.data[i + 2]) >= 0) {
            c = hexv(in.data[i + 1]) * 16 + hexv(in.data[i + 2]);
            i += 2;
        }
        o[n++] = (char)c;
    }
    return bw_str_n(o, n);
}

/* Star the values of listed names in name=value pairs of buf[0..len). */
static int mask_pairs(apr_pool_t *p, char *buf, size_t len, char sep, const apr_array_header_t *names)
{
    size_t s = 0;
    int hits = 0;
    while (s < len) {
        size_t e = s, eq;
        while (e < len && buf[e] != sep)
            e++;
        for (eq = s; eq < e && buf[eq] != '='; eq++)
            ;
        if (eq < e && bw_audit_san_has(names, url_decode(p, bw_str_n(buf + s, eq - s)))) {
            memset(buf + eq + 1, '*', e - eq - 1);
            hits++;
        }
        s = e + 1;
    }
    return hits;
}

bw_str_t bw_audit_san_request_line(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_san_t *s,
                                   bw_str_t line)
{
    const char *q, *sp1, *end;
    char *copy;
    if (!s->get_args->nelts || !line.len)
        return line;
    sp1 = memchr(line.data, ' ', line.len);
    q = sp1 ? memchr(sp1, '?', line.len - (size_t)(sp1 - line.data)) : NULL;
    if (!q)
        return line;
    /* the target ends at the space before the protocol, if there is one */
    for (end = line.data + line.len; end > q && end[-1] != ' '; end--)
        ;
    if (end <= q + 1)
        end = line.data + line.len;
    else
        end--;
    copy = apr_pmemdup(p, line.data, line.len);
    mask_pairs(p, copy + (q + 1 - line.data), (size_t)(end - q - 1), (char)tx->cfg->arg_separator,
               s->get_args);
    return bw_str_n(copy, line.len);
}

bw_str_t bw_audit_san_header(apr_pool_t *p, const apr_array_header_t *names, bw_str_t name,
                             bw_str_t value)
{
    char *m;
    if (!names->nelts || !bw_audit_san_has(names, name))
        return value;
    m = apr_palloc(p, value.len + 1);
    memset(m, '*', value.len);
    m[value.len] = '\0';
    return bw_str_n(m, value.len);
}

static const char *req_header(const bw_tx_t *tx, const char *name, size_t *len)
{
    int i;
    for (i = 0; i < tx->req.headers->nelts; i++) {
        const bw_kv_t *h = &((const bw_kv_t *)tx->req.headers->elts)[i];
        if (bw_str_eq_cstr_ci(h->name, name)) {
            *len = h->value.len;
            return h->value.data;
        }
    }
    return NULL;
}

/* boundary=… of a multipart Content-Type (quotes removed), or empty. */
static bw_str_t mp_boundary(const bw_tx_t *tx)
{
    size_t len = 0, i;
    const char *ct = req_header(tx, "Content-Type", &len), *b;
    bw_str_t out = bw_str_n("", 0);
    if (!ct || !(b = bw_memmem(ct, len, "boundary=", 9)))
        return out;
    b += 9;
    len -= (size_t)(b - ct);
    if (len && *b == '"') {
        for (i = 1; i < len && b[i] != '"'; i++)
            ;
        return bw_str_n(b + 1, i - 1);
    }
    for (i = 0; i < len && b[i] != ';' && b[i] != ' ' && b[i] != '\t'; i++)
        ;
    return bw_str_n(b, i);
}

/* name="…" of a part's headers; *is_file when filename= is there too. */
static bw_str_t part_name(const char *h, size_t len, int *is_file)
{
    size_t i;
    bw_str_t none = bw_str_n("", 0);
    *is_file = bw_memmem(h, len, "filename=", 9) != NULL;
    for (i = 0; i + 5 <= len; i++) {
        size_t e;
        if (strncasecmp(h + i, "name=", 5) || (i > 0 && h[i - 1] != ' ' && h[i - 1] != ';' && h[i - 1] != '\t'))
            continue;
        i += 5;
        if (i < len && h[i] == '"') {
            for (e = ++i; e < len && h[e] != '"'; e++)
                ;
        } else {
            for (e = i; e < len && h[e] != ';' && h[e] != '\r' && h[e] != '\n'; e++)
                ;
        }
        return bw_str_n(h + i, e - i);
    }
    return none;
}

static void mask_multipart(char *buf, size_t len, bw_str_t boundary, const apr_array_header_t *names)
{
    char *delim = apr_pstrcat(names->pool, "--", bw_str_pdup(names->pool, boundary), NULL);
    size_t dl = boundary.len + 2;
    const char *pos = bw_memmem(buf, len, delim, dl);
    while (pos) {
        const char *hs = pos + dl, *end = buf + len, *he, *ds, *next, *de;
        int is_file;
        bw_str_t name;
        if (end - hs >= 2 && hs[0] == '-' && hs[1] == '-')
            return;
        hs = memchr(hs, '\n', (size_t)(end - hs));
        if (!hs)
            return;
        hs++;
        he = bw_memmem(hs, (size_t)(end - hs), "\n\r\n", 3);
        ds = he ? he + 3 : NULL;
        if (!he && (he = bw_memmem(hs, (size_t)(end - hs), "\n\n", 2)) != NULL)
            ds = he + 2;
        if (!ds)
            return;
        next = bw_memmem(ds, (size_t)(end - ds), delim, dl);
        de = next ? next : end;
        if (de > ds && de[-1] == '\n')
            de--;
        if (de > ds && de[-1] == '\r')
            de--;
        name = part_name(hs, (size_t)(ds - hs), &is_file);
        if (!is_file && de > ds && bw_audit_san_has(names, name))
            memset((char *)ds, '*', (size_t)(de - ds));
        pos = next;
    }
}

static int word_byte(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Star each occurrence of v in buf that stands as a whole token. */
static void mask_value(char *buf, size_t len, bw_str_t v)
{
    const char *f = buf;
    if (!v.len)
        return;
    while ((f = bw_memmem(f, len - (size_t)(f - buf), v.data, v.len)) != NULL) {
        size_t at = (size_t)(f - buf);
        if ((at == 0 || !word_byte(buf[at - 1])) && (at + v.len >= len || !word_byte(buf[at + v.len])))
            memset(buf + at, '*', v.len);
        f += v.len;
    }
}

bw_str_t bw_audit_san_body(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_san_t *s, bw_str_t body)
{
    const char *proc = tx->reqbody_processor;
    char *copy;
    int i;
    if (!s->post_args->nelts || !body.len)
        return body;
    copy = apr_pmemdup(p, body.data, body.len);
    if (proc && !strcmp(proc, "URLENCODED")) {
        mask_pairs(p, copy, body.len, (char)tx->cfg->arg_separator, s->post_args);
    } else if (proc && !strcmp(proc, "MULTIPART")) {
        bw_str_t b = mp_boundary(tx);
        if (b.len)
            mask_multipart(copy, body.len, b, s->post_args);
    } else {
        for (i = 0; tx->args_post && i < tx->args_post->nelts; i++) {
            const bw_kv_t *a = &((const bw_kv_t *)tx->args_post->elts)[i];
            if (bw_audit_san_has(s->post_args, a->name))
                mask_value(copy, body.len, a->value);
        }
    }
    return bw_str_n(copy, body.len);
}

static void url_encode(bw_abuf_t *b, bw_str_t s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i;
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '*') {
            bw_abuf_byte(b, (char)c);
        } else if (c == ' ') {
            bw_abuf_byte(b, '+');
        } else {
            char e[3] = { '%', hex[c >> 4], hex[c & 15] };
            bw_abuf_add(b, e, 3);
        }
    }
}

bw_str_t bw_audit_fake_body(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_san_t *s)
{
    bw_abuf_t b;
    int i;
    bw_abuf_init(&b, p, 256);
    for (i = 0; tx->args_post && i < tx->args_post->nelts; i++) {
        const bw_kv_t *a = &((const bw_kv_t *)tx->args_post->elts)[i];
        if (i)
            bw_abuf_byte(&b, '&');
        url_encode(&b, a->name);
        bw_abuf_byte(&b, '=');
        if (bw_audit_san_has(s->post_args, a->name)) {
            size_t k;
            for (k = 0; k < a->value.len; k++)
                bw_abuf_byte(&b, '*');
        } else {
            url_encode(&b, a->value);
        }
    }
    return bw_str_n(b.data, b.len);
}
