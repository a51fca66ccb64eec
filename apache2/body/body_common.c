/*
 * The part every body processor shares: bw_body_feed/bw_body_finish
 * dispatch through the parser's vtable, first-error-wins reporting, the
 * argument hand-off with its limit, and a pool-backed growable buffer.
 */
#include <stdarg.h>
#include <string.h>
#include "body_internal.h"

bw_body_parser_t *bw_body_parser_new(apr_pool_t *pool, const bw_body_ops_t *ops,
                                     const bw_body_limits_t *limits,
                                     const bw_body_sink_t *sink,
                                     bw_body_result_t *res, void *impl)
{
    bw_body_parser_t *bp = apr_pcalloc(pool, sizeof(*bp));
    bp->ops = ops;
    bp->pool = pool;
    bp->limits = limits;
    bp->sink = sink;
    bp->res = res;
    bp->impl = impl;
    return bp;
}

int bw_body_fail(bw_body_result_t *res, apr_pool_t *pool, const char *fmt, ...)
{
    va_list ap;
    if (res->error)
        return -1;
    va_start(ap, fmt);
    res->error_msg = apr_pvsprintf(pool, fmt, ap);
    va_end(ap);
    res->error = 1;
    return -1;
}

/* One argument counted in the sink's arg_count, seen already: the
 * sink's earlier ones. */
static int count_one(const bw_body_sink_t *sink, long seen)
{
    if (seen >= sink->arg_room)
        return -1;
    (*sink->arg_count)++;
    return 0;
}

int bw_body_emit_arg(bw_body_parser_t *bp, const char *who, bw_str_t name, bw_str_t value)
{
    int limit = bp->limits ? bp->limits->args_limit : 0;
    if (limit > 0 && bp->nargs >= limit)
        return bw_body_fail(bp->res, bp->pool,
                            "%s: argument limit exceeded (SecArgumentsLimit %d)", who, limit);
    bp->nargs++;
    if (bp->sink && (bp->sink->add_arg ? bp->sink->add_arg(bp->sink->ctx, name, value)
                     : bp->sink->arg_count ? count_one(bp->sink, bp->nargs - 1) : 0) < 0)
        return bw_body_fail(bp->res, bp->pool,
                            "%s: argument refused after %ld arguments (argument limit)",
                            who, bp->nargs - 1);
    return 0;
}

/* Once an error is recorded the parser is dead: feeding more is a no-op
 * that keeps reporting the failure, so callers need no extra state. */
int bw_body_feed(bw_body_parser_t *bp, const char *data, size_t len)
{
    if (bp == NULL)
        return -1;
    if (bp->res->error)
        return -1;
    if (bp->finished)
        return bw_body_fail(bp->res, bp->pool, "%s: data fed after the end of the body",
                            bp->ops->name);
    if (len == 0)
        return 0;
    return bp->ops->feed(bp, data, len);
}

int bw_body_finish(bw_body_parser_t *bp)
{
    if (bp == NULL)
        return -1;
    if (bp->finished)
        return bp->res->error ? -1 : 0;
    bp->finished = 1;
    /* finish runs even after an error: it is where processors release
     * what their libraries hold and settle the flags they derive. */
    return bp->ops->finish(bp) < 0 || bp->res->error ? -1 : 0;
}

size_t bw_body_utf8_put(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

bw_str_t bw_body_buf_take(apr_pool_t *pool, const bw_body_buf_t *b)
{
    return bw_str_n(bw_str_pdup(pool, bw_str_n(b->data, b->len)), b->len);
}

const char *bw_body_escape(apr_pool_t *pool, bw_str_t s, size_t max)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = s.len < max ? s.len : max, i, o = 0;
    char *d = apr_palloc(pool, n * 4 + 4);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            d[o++] = '\\';
            d[o++] = 'x';
            d[o++] = hex[c >> 4];
            d[o++] = hex[c & 15];
        } else {
            d[o++] = (char)c;
        }
    }
    if (n < s.len) {
        memcpy(d + o, "...", 3);
        o += 3;
    }
    d[o] = '\0';
    return d;
}
