/*
 * Raw HTTP/1.x requests from files, for `bulwark eval` and `bulwark bench`,
 * read the way Apache httpd 2.4 reads them with its defaults
 * (HttpProtocolOptions Strict LenientMethods Allow0.9): the engine gets what
 * the module would get in production, and a request httpd answers with an
 * error before any module runs is an error here, naming the reason.
 *
 *  - Blank lines before the request line are skipped.
 *  - Request line: METHOD SP TARGET SP HTTP/<1-9>.<0-9>, single spaces, the
 *    method a token, the target visible characters. "GET TARGET" alone is
 *    HTTP/0.9: no headers are read, nothing after the line belongs to it.
 *  - Target: /path or ?query, an absolute URI (whose http:// host stands for
 *    Host), * for OPTIONS, host:port for CONNECT; no fragment.
 *  - Header lines: a token name right before ':', the value trimmed and free
 *    of control characters. A line that starts with white space continues the
 *    previous one (joined by one space). A repeated name is merged into its
 *    first line, values joined by ", ", as httpd's apr_table_compress does.
 *  - Host: a name of letters, digits, '_', '.', '-' (no "..") or [v6], and an
 *    optional :port; required by HTTP/1.1, and a host name (Host or target)
 *    by later versions. Expect, when set, is 100-continue.
 *  - Body: with Transfer-Encoding (which must end in chunked) the dechunked
 *    data, trailers skipped and Content-Length dropped as httpd drops it;
 *    else Content-Length bytes; else none. Bytes after the request are not
 *    part of it.
 *
 * Leniencies for files written by hand: bare LF line ends (httpd takes them
 * only with HttpProtocolOptions Unsafe), and data that ends where the blank
 * line after the headers or after a chunked trailer should be. httpd's size
 * limits (LimitRequestLine, ...) are configuration and not applied here.
 * tests/crsreq/parser_cases.py has a case for each rule. Connection facts
 * are fixed loopback values.
 */
#include <string.h>
#include <stdlib.h>
#include <apr_lib.h>
#include "cli.h"

static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
        || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int is_token(bw_str_t s)
{
    size_t i;
    for (i = 0; i < s.len; i++)
        if (!is_tchar((unsigned char)s.data[i]))
            return 0;
    return s.len > 0;
}

/* The line at p (without LF and a CR before it); returns where the next
 * line starts. A last line without LF ends at end. */
static const char *next_line(const char *p, const char *end, bw_str_t *line)
{
    const char *e = memchr(p, '\n', (size_t)(end - p));
    const char *stop = e ? e : end;
    line->data = p;
    line->len = (size_t)(stop - p);
    if (line->len && line->data[line->len - 1] == '\r')
        line->len--;
    return e ? e + 1 : end;
}

static const bw_kv_t *find_field(const apr_array_header_t *h, const char *name)
{
    int i;
    for (i = 0; i < h->nelts; i++)
        if (bw_str_eq_cstr_ci(((const bw_kv_t *)h->elts)[i].name, name))
            return &((const bw_kv_t *)h->elts)[i];
    return NULL;
}

static void drop_field(apr_array_header_t *h, const char *name)
{
    bw_kv_t *kv = (bw_kv_t *)h->elts;
    int i, n = 0;
    for (i = 0; i < h->nelts; i++)
        if (!bw_str_eq_cstr_ci(kv[i].name, name))
            kv[n++] = kv[i];
    h->nelts = n;
}

/* METHOD SP TARGET [SP PROTOCOL]: fills method, uri and protocol
 * ("HTTP/0.9" when there is none). */
static const char *parse_request_line(apr_pool_t *p, bw_str_t line, bw_request_t *req)
{
    const unsigned char *s = (const unsigned char *)line.data, *end = s + line.len, *m, *t;
    bw_str_t proto;

    if (s < end && (*s == ' ' || *s == '\t' || *s == '\v' || *s == '\f' || *s == '\r'))
        return "white space before the method";
    for (m = s; m < end && is_tchar(*m); m++)
        ;
    if (m == s || (m < end && *m != ' '))
        return "the method is not a token";
    if (m == end || m + 1 == end || m[1] == ' ')
        return "no request target, or more than one space after the method";
    for (t = m + 1; t < end && *t > 0x20 && *t != 0x7f; t++)
        ;
    if (t < end && *t != ' ')
        return "control character in the request target";
    req->request_line = line;
    req->method = bw_str_n((const char *)s, (size_t)(m - s));
    req->uri = bw_str_n((const char *)m + 1, (size_t)(t - m - 1));
    if (t == end || t + 1 == end) {
        if (!bw_str_eq(req->method, bw_str_make("GET")))
            return "HTTP/0.9 request line with a method other than GET";
        req->protocol = bw_str_make("HTTP/0.9");
        return NULL;
    }
    proto = bw_str_n((const char *)t + 1, (size_t)(end - t - 1));
    if (proto.len != 8 || memcmp(proto.data, "HTTP/", 5) || proto.data[5] < '1' || proto.data[5] > '9'
        || proto.data[6] != '.' || proto.data[7] < '0' || proto.data[7] > '9')
        return apr_psprintf(p, "protocol \"%.*s\" is not HTTP/<1-9>.<0-9> (extra white space?)",
                            (int)proto.len, proto.data);
    req->protocol = proto;
    return NULL;
}

/* One header field (continuation lines already joined) into h; a repeated
 * name is merged into its first field. */
static const char *add_field(apr_pool_t *p, apr_array_header_t *h, bw_str_t name, bw_str_t value)
{
    bw_kv_t *kv;
    size_t i;
    int j;
    for (i = 0; i < value.len; i++) {
        unsigned char c = (unsigned char)value.data[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return apr_psprintf(p, "control character in the value of header %.*s",
                                (int)name.len, name.data);
    }
    for (j = 0; j < h->nelts; j++) {
        kv = &((bw_kv_t *)h->elts)[j];
        if (bw_str_eq_ci(kv->name, name)) {
            char *v = apr_palloc(p, kv->value.len + 2 + value.len);
            memcpy(v, kv->value.data, kv->value.len);
            memcpy(v + kv->value.len, ", ", 2);
            memcpy(v + kv->value.len + 2, value.data, value.len);
            kv->value = bw_str_n(v, kv->value.len + 2 + value.len);
            return NULL;
        }
    }
    kv = apr_array_push(h);
    kv->name = name;
    kv->value = value;
    return NULL;
}

/* Header lines from *sp up to the blank line (or the end of the data);
 * *sp is left after them. */
static const char *read_fields(apr_pool_t *p, const char **sp, const char *end,
                               apr_array_header_t *h)
{
    const char *s = *sp, *e;
    bw_str_t line, name = { NULL, 0 }, value = { NULL, 0 };
    for (;;) {
        line.len = 0;
        if (s < end)
            s = next_line(s, end, &line);
        if (line.len && (line.data[0] == ' ' || line.data[0] == '\t')) {
            bw_str_t cont = bw_str_trim(line);
            size_t sep = value.len ? 1 : 0;
            char *v;
            if (!name.data)
                return "folded line before the first header";
            v = apr_palloc(p, value.len + sep + cont.len + 1);
            memcpy(v, value.data, value.len);
            if (sep)
                v[value.len] = ' ';
            memcpy(v + value.len + sep, cont.data, cont.len);
            if (cont.len)
                value = bw_str_n(v, value.len + sep + cont.len);
            continue;
        }
        if (name.data && (e = add_field(p, h, name, value)) != NULL)
            return e;
        if (!line.len)
            break;
        e = memchr(line.data, ':', line.len);
        if (!e)
            return apr_psprintf(p, "header line without ':' \"%.*s\"", (int)line.len, line.data);
        name = bw_str_n(line.data, (size_t)(e - line.data));
        if (!is_token(name))
            return apr_psprintf(p, "header name \"%.*s\" is not a token (white space before ':'?)",
                                (int)name.len, name.data);
        value = bw_str_trim(bw_str_n(e + 1, (size_t)(line.data + line.len - e - 1)));
    }
    *sp = s;
    return NULL;
}

/* Dechunk the body at *sp: chunk-size [BWS] [;ext] line, data, line end, ...,
 * last chunk, trailer lines up to a blank line. *sp is left after it. */
static const char *dechunk(apr_pool_t *p, const char **sp, const char *end, bw_str_t *out)
{
    const char *s = *sp;
    char *o = apr_palloc(p, (size_t)(end - s) + 1), *w = o;
    bw_str_t line;
    for (;;) {
        apr_uint64_t n = 0;
        size_t i;
        if (s >= end)
            return "the chunked body ends early";
        s = next_line(s, end, &line);
        for (i = 0; i < line.len && i < 16 && bw_hexval(line.data[i]) >= 0; i++)
            n = n * 16 + (apr_uint64_t)bw_hexval(line.data[i]);
        if (!i)
            return "malformed chunk size line";
        while (i < line.len && (line.data[i] == ' ' || line.data[i] == '\t'))
            i++;
        if (i < line.len && line.data[i] != ';')
            return "malformed chunk size line";
        if (n == 0)
            break;
        if ((apr_uint64_t)(end - s) < n)
            return "the chunked body ends early";
        memcpy(w, s, (size_t)n);
        w += n;
        s += n;
        if (s < end && *s == '\r')
            s++;
        if (s >= end || *s != '\n')
            return "chunk data not followed by a line end";
        s++;
    }
    do {                        /* trailer fields: not part of the request here */
        if (s >= end)
            break;
        s = next_line(s, end, &line);
    } while (line.len);
    *w = '\0';
    out->data = o;
    out->len = (size_t)(w - o);
    *sp = s;
    return NULL;
}

/* host:port or [v6]:port, the only target CONNECT takes. */
static int is_host_port(bw_str_t t)
{
    const char *colon = NULL, *end = t.data + t.len, *c;
    for (c = t.data; c < end; c++)
        if (*c == ':')
            colon = c;
    if (!colon || colon == t.data || colon + 1 == end)
        return 0;
    for (c = colon + 1; c < end; c++)
        if (!apr_isdigit(*c))
            return 0;
    if (t.data[0] == '[')
        return colon[-1] == ']';
    return memchr(t.data, ':', (size_t)(colon - t.data)) == NULL;
}

/* Length of the [v6] or name part of host[:port], or 0 when it has none. */
static size_t host_part(bw_str_t h, int strict)
{
    size_t i = 0;
    if (h.len && h.data[0] == '[') {
        for (i = 1; i < h.len && h.data[i] != ']'; i++)
            if (strict && !apr_isxdigit(h.data[i]) && h.data[i] != ':' && h.data[i] != '.')
                return 0;
        return i < h.len && (i > 1 || !strict) ? i + 1 : 0;
    }
    while (i < h.len && h.data[i] != ':' && (!strict || apr_isalnum(h.data[i])
                                             || h.data[i] == '_' || h.data[i] == '.' || h.data[i] == '-'))
        i++;
    return i;
}

/* What httpd takes after the host part: nothing, or ':' and digits (which
 * may be none when strict is 0, as in a target's authority). */
static int port_part(bw_str_t h, size_t i, int strict)
{
    if (i == h.len)
        return 1;
    if (h.data[i] != ':' || (strict && i + 1 == h.len))
        return 0;
    for (i++; i < h.len; i++)
        if (!apr_isdigit(h.data[i]))
            return 0;
    return 1;
}

/* A Host header value httpd's vhost code accepts: a name of letters,
 * digits, '_', '.', '-' (no ".."), or [v6], then an optional :port. */
static int valid_host(bw_str_t h)
{
    size_t i = host_part(h, 1);
    return i && port_part(h, i, 1) && !bw_memmem(h.data, h.len, "..", 2);
}

/* The request target in a form httpd takes (else it answers 400 before any
 * module runs); *uri_host is the host an absolute http:// target names. */
static const char *check_target(const bw_request_t *req, bw_str_t *uri_host)
{
    bw_str_t t = req->uri, rest;
    size_t i = 0;
    uri_host->data = NULL;
    uri_host->len = 0;
    if (bw_str_eq(req->method, bw_str_make("CONNECT")))
        return is_host_port(t) ? NULL : "CONNECT target is not host:port";
    if (bw_str_eq(t, bw_str_make("*")))
        return bw_str_eq(req->method, bw_str_make("OPTIONS")) ? NULL
             : "target * with a method other than OPTIONS";
    if (memchr(t.data, '#', t.len))
        return "target with a fragment";
    while (i < t.len && (apr_isalpha(t.data[i]) || (i && (apr_isdigit(t.data[i]) || t.data[i] == '+'
                                                         || t.data[i] == '-' || t.data[i] == '.'))))
        i++;
    i = (i && i < t.len && t.data[i] == ':') ? i + 1 : 0;     /* after scheme ':' */
    rest = bw_str_n(t.data + i, t.len - i);
    if (i && rest.len >= 2 && !memcmp(rest.data, "//", 2)) {
        bw_str_t auth = bw_str_n(rest.data + 2, 0);
        const char *at;
        while (auth.len < rest.len - 2 && auth.data[auth.len] != '/' && auth.data[auth.len] != '?')
            auth.len++;
        rest = bw_str_n(auth.data + auth.len, rest.len - 2 - auth.len);
        for (at = auth.data + auth.len; at > auth.data && at[-1] != '@'; at--)
            ;
        auth = bw_str_n(at, (size_t)(auth.data + auth.len - at));
        if (!port_part(auth, host_part(auth, 0), 0))
            return "bad port in the target";
        if (i == 5 && bw_str_eq_cstr_ci(bw_str_n(t.data, 5), "http:"))
            *uri_host = auth;
    }
    if (rest.len && rest.data[0] != '/' && rest.data[0] != '?')
        return "target is no /path, absolute URI, * (OPTIONS) or host:port (CONNECT)";
    return NULL;
}

/* What httpd checks of the headers before any module sees the request:
 * the host the request names, and Expect. */
static const char *check_headers(const bw_request_t *req, bw_str_t uri_host)
{
    int version = (req->protocol.data[5] - '0') * 10 + (req->protocol.data[7] - '0');
    const bw_kv_t *host = find_field(req->headers, "Host");
    const bw_kv_t *expect = find_field(req->headers, "Expect");
    if (!uri_host.len && host && host->value.len && !valid_host(host->value))
        return "malformed Host header";
    if (version == 11 && !host)
        return "HTTP/1.1 request without Host";
    if (version >= 11 && (!host || !host->value.len) && !uri_host.len)
        return "request without a host name (Host or absolute target)";
    if (expect && expect->value.len && !bw_str_eq_cstr_ci(expect->value, "100-continue"))
        return "Expect other than 100-continue (Apache answers 417)";
    return NULL;
}

/* The body at s as its framing headers say. */
static const char *read_body(apr_pool_t *p, const char *s, const char *end, bw_cli_request_t *out)
{
    const bw_kv_t *te = find_field(out->req.headers, "Transfer-Encoding");
    const bw_kv_t *cl = find_field(out->req.headers, "Content-Length");
    apr_uint64_t n = 0;
    size_t i;
    if (te) {
        bw_str_t last = te->value;
        const char *comma = NULL;
        for (i = 0; i < last.len; i++)
            if (last.data[i] == ',')
                comma = last.data + i;
        if (comma)
            last = bw_str_n(comma + 1, (size_t)(last.data + last.len - comma - 1));
        if (!bw_str_eq_cstr_ci(bw_str_trim(last), "chunked"))
            return "Transfer-Encoding does not end in chunked";
        drop_field(out->req.headers, "Content-Length");  /* as httpd does: the chunks say the length */
        return dechunk(p, &s, end, &out->body);
    }
    if (!cl) {
        out->body = bw_str_n(s, 0);
        return NULL;
    }
    for (i = 0; i < cl->value.len && apr_isdigit(cl->value.data[i]) && i < 18; i++)
        n = n * 10 + (apr_uint64_t)(cl->value.data[i] - '0');
    if (!i || i < cl->value.len)
        return apr_psprintf(p, "invalid Content-Length \"%.*s\"", (int)cl->value.len, cl->value.data);
    if ((apr_uint64_t)(end - s) < n)
        return apr_psprintf(p, "the body has %" APR_SIZE_T_FMT " bytes, Content-Length says %.*s",
                            (apr_size_t)(end - s), (int)cl->value.len, cl->value.data);
    out->body = bw_str_n(s, (size_t)n);
    return NULL;
}

const char *bw_cli_parse_request(apr_pool_t *p, bw_str_t raw, bw_cli_request_t *out)
{
    const char *s = raw.data, *end = raw.data + raw.len, *e;
    const bw_kv_t *host;
    bw_str_t line, uri_host;
    memset(out, 0, sizeof(*out));
    out->req.headers = apr_array_make(p, 16, sizeof(bw_kv_t));
    do {
        if (s >= end)
            return "empty request";
        s = next_line(s, end, &line);
    } while (!line.len);
    if ((e = parse_request_line(p, line, &out->req)) != NULL
        || (e = check_target(&out->req, &uri_host)) != NULL)
        return e;
    out->body = bw_str_n(s, 0);
    if (out->req.protocol.data[5] != '0') {     /* HTTP/0.9 has no headers */
        if ((e = read_fields(p, &s, end, out->req.headers)) != NULL
            || (e = check_headers(&out->req, uri_host)) != NULL
            || (e = read_body(p, s, end, out)) != NULL)
            return e;
    }
    if ((host = find_field(out->req.headers, "Host")) != NULL)
        out->req.server_name = host->value;
    out->req.remote_addr = bw_str_make("127.0.0.1");
    out->req.remote_port = 40000;
    out->req.server_addr = bw_str_make("127.0.0.1");
    out->req.server_port = 80;
    out->req.unique_id = bw_str_make("bulwark-eval");
    return NULL;
}

void bw_cli_respond(apr_pool_t *p, bw_tx_t *tx)
{
    static const char body[] = "<!DOCTYPE html><html><body><p>perf ok</p></body></html>\n";
    static const char *const fields[][2] = {
        { "Content-Type", "text/html; charset=utf-8" },
        { "Content-Length", "58" },
        { "Cache-Control", "no-store" },
    };
    bw_response_t res;
    size_t i;
    memset(&res, 0, sizeof(res));
    res.status = 200;
    res.protocol = bw_str_make("HTTP/1.1");
    res.status_line = bw_str_make("200 OK");
    res.headers = apr_array_make(p, 3, sizeof(bw_kv_t));
    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        bw_kv_t *kv = apr_array_push(res.headers);
        kv->name = bw_str_make(fields[i][0]);
        kv->value = bw_str_make(fields[i][1]);
    }
    bw_tx_set_response(tx, &res);
    if (bw_tx_wants_response_body(tx, "text/html; charset=utf-8"))
        bw_tx_response_body_append(tx, body, sizeof(body) - 1);
}
