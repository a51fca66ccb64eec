/*
 * Raw HTTP/1.1 requests from files, for `bulwark eval` and `bulwark bench`:
 * request line, headers up to the blank line, then the body (dechunked when
 * Transfer-Encoding is chunked). Connection facts are fixed loopback values.
 */
#include <string.h>
#include <stdlib.h>
#include "cli.h"


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

/* Dechunk a chunked body; returns 0, or -1 on a malformed chunk size. */
static int dechunk(apr_pool_t *p, bw_str_t in, bw_str_t *out)
{
    const char *s = in.data, *end = in.data + in.len;
    char *o = apr_palloc(p, in.len + 1), *w = o;
    for (;;) {
        bw_str_t line;
        char *ep;
        unsigned long n;
        if (s >= end)
            return -1;
        s = next_line(s, end, &line);
        n = strtoul(apr_pstrndup(p, line.data, line.len), &ep, 16);
        if (ep == apr_pstrndup(p, line.data, line.len))
            return -1;
        if (n == 0)
            break;
        if ((size_t)(end - s) < n)
            return -1;
        memcpy(w, s, n);
        w += n;
        s += n;
        if (s < end && *s == '\r')
            s++;
        if (s < end && *s == '\n')
            s++;
    }
    *w = '\0';
    out->data = o;
    out->len = (size_t)(w - o);
    return 0;
}

const char *bw_cli_parse_request(apr_pool_t *p, bw_str_t raw, bw_cli_request_t *out)
{
    const char *s = raw.data, *end = raw.data + raw.len;
    bw_str_t line;
    const char *sp1, *sp2, *te = NULL;
    memset(out, 0, sizeof(*out));
    out->req.headers = apr_array_make(p, 16, sizeof(bw_kv_t));
    s = next_line(s, end, &line);
    if (!line.len)
        return "empty request";
    out->req.request_line = line;
    sp1 = memchr(line.data, ' ', line.len);
    sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line.data + line.len - sp1 - 1)) : NULL;
    if (!sp1 || !sp2)
        return "malformed request line (expected METHOD TARGET PROTOCOL)";
    out->req.method = bw_str_n(line.data, (size_t)(sp1 - line.data));
    out->req.uri = bw_str_n(sp1 + 1, (size_t)(sp2 - sp1 - 1));
    out->req.protocol = bw_str_n(sp2 + 1, (size_t)(line.data + line.len - sp2 - 1));
    while (s < end) {
        const char *colon;
        bw_kv_t *kv;
        s = next_line(s, end, &line);
        if (!line.len)
            break;
        colon = memchr(line.data, ':', line.len);
        if (!colon)
            return apr_psprintf(p, "malformed header line \"%.*s\"", (int)line.len, line.data);
        kv = apr_array_push(out->req.headers);
        kv->name = bw_str_n(line.data, (size_t)(colon - line.data));
        colon++;
        while (colon < line.data + line.len && (*colon == ' ' || *colon == '\t'))
            colon++;
        kv->value = bw_str_n(colon, (size_t)(line.data + line.len - colon));
        if (bw_str_eq_cstr_ci(kv->name, "Host"))
            out->req.server_name = kv->value;
        if (bw_str_eq_cstr_ci(kv->name, "Transfer-Encoding"))
            te = bw_str_pdup(p, kv->value);
    }
    out->body = bw_str_n(s, (size_t)(end - s));
    if (te && strstr(te, "chunked") && dechunk(p, out->body, &out->body) != 0)
        return "malformed chunked body";
    out->req.remote_addr = bw_str_make("127.0.0.1");
    out->req.remote_port = 40000;
    out->req.server_addr = bw_str_make("127.0.0.1");
    out->req.server_port = 80;
    out->req.unique_id = bw_str_make("bulwark-eval");
    return NULL;
}

