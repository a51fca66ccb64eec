/*
 * URLENCODED body processor (also what parses QUERY_STRING). Follows what
 * ModSecurity 2.9 does, checked against mod_security2 2.9.7:
 *   - the input splits on the separator; a trailing empty piece (input
 *     ending with the separator, or empty input) is dropped, every other
 *     piece is an argument, even an empty one ("a&&b" gives a, "", b);
 *   - a piece splits at its first '=': "a==b" is a = "=b"; a piece without
 *     '=' is a name with an empty value; empty names are kept;
 *   - names and values are decoded the same way: '+' is a space, %HH is a
 *     byte (NUL included), and an invalid escape ("%", "%4", "%zz", "%u41")
 *     stays as written and sets URLENCODED_ERROR.
 * Duplicates are all kept, in order. One pass, no quadratic work.
 */
#include <string.h>
#include "body_internal.h"

/* Decoded copy of s in pool; *invalid is set when an escape was bad. The
 * decoded form is never longer than the input, so one allocation does. */
static bw_str_t url_decode(apr_pool_t *pool, const char *s, size_t len, int *invalid)
{
    char *d = apr_palloc(pool, len + 1);
    size_t i = 0, o = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (c == '+') {
            d[o++] = ' ';
            i++;
        } else if (c == '%' && i + 2 < len
                   && bw_hexval(s[i + 1]) >= 0
                   && bw_hexval(s[i + 2]) >= 0) {
            d[o++] = (char)(bw_hexval(s[i + 1]) * 16 + bw_hexval(s[i + 2]));
            i += 3;
        } else {
            if (c == '%')
                *invalid = 1;
            d[o++] = (char)c;
            i++;
        }
    }
    d[o] = '\0';
    return bw_str_n(d, o);
}

/* One piece between separators: name up to the first '=', value after. */
static int add_piece(apr_pool_t *pool, const char *p, size_t len,
                     const bw_body_sink_t *sink, bw_body_result_t *res)
{
    const char *eq = memchr(p, '=', len);
    size_t nlen = eq ? (size_t)(eq - p) : len;
    int invalid = 0;
    bw_str_t name = url_decode(pool, p, nlen, &invalid);
    bw_str_t value = eq ? url_decode(pool, eq + 1, len - nlen - 1, &invalid)
                        : bw_str_n("", 0);
    if (invalid)
        res->urlencoded_error = 1;
    if (sink && sink->add_arg && sink->add_arg(sink->ctx, name, value) < 0)
        return bw_body_fail(res, pool, "URLENCODED: argument refused (argument limit)");
    return 0;
}

int bw_body_urlencoded(apr_pool_t *pool, bw_str_t body, char sep,
                       const bw_body_sink_t *sink, bw_body_result_t *res)
{
    const char *p = body.data, *end = body.data + body.len;
    if (sep == '\0')
        sep = '&';
    while (p < end) {
        const char *s = memchr(p, sep, (size_t)(end - p));
        size_t len = s ? (size_t)(s - p) : (size_t)(end - p);
        if (add_piece(pool, p, len, sink, res) < 0)
            return -1;
        /* After the last separator p == end: that empty tail is dropped. */
        p = s ? s + 1 : end;
    }
    return 0;
}
