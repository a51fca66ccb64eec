/*
 * cssDecode
 *
 * Description: decodes CSS 2.1 escapes. A backslash followed by 1 to 6 hex
 *   digits is one code point, written as one byte (full-width ASCII
 *   U+FF01..U+FF5E becomes ASCII, else the low byte); one white-space
 *   character after it (space, \t, \n, \r, \f, or the pair \r\n) belongs to
 *   the escape and is dropped. A backslash before a newline (\n, \r\n, \r,
 *   \f) is a line continuation: both go. A backslash before any other byte
 *   just removes its special meaning (ja\vascript is javascript), and a lone
 *   trailing backslash is dropped.
 * Example: "\3c script\3E ja\vascript:\ff41 lert(1)" ->
 *          "<script>javascript:alert(1)"
 */
#include "tfn_internal.h"

/* Length of the newline at in.data[i] (CSS: \n, \r\n, \r, \f), or 0. */
static size_t newline_len(bw_str_t in, size_t i)
{
    if (i >= in.len)
        return 0;
    if (in.data[i] == '\r')
        return (i + 1 < in.len && in.data[i + 1] == '\n') ? 2 : 1;
    return (in.data[i] == '\n' || in.data[i] == '\f') ? 1 : 0;
}

/* Decode the escape whose backslash is at in.data[i]: returns the byte, or
 * -1 when the escape produces nothing; sets *end past it. */
static int css_escape(bw_str_t in, size_t i, size_t *end)
{
    size_t j = i + 1, n = 0, nl;
    unsigned long cp;

    if (j >= in.len) {
        *end = j;
        return -1;
    }
    while (n < 6 && j + n < in.len
           && bw_hexval(in.data[j + n]) >= 0)
        n++;
    if (n == 0) {
        nl = newline_len(in, j);
        *end = j + (nl ? nl : 1);
        return nl ? -1 : (unsigned char)in.data[j];
    }
    cp = tfn_hex_n(in.data + j, n);
    j += n;
    nl = newline_len(in, j);
    if (nl)
        j += nl;
    else if (j < in.len && (in.data[j] == ' ' || in.data[j] == '\t'))
        j++;
    *end = j;
    return tfn_unicode_byte(cp);
}

/* Runs between backslashes are copied whole; nothing is written before
 * the first backslash. */
static int css_decode(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                      bw_str_t *out)
{
    tfn_out_t o;
    size_t i = tfn_find(in.data, 0, in.len, tfn_v_backslash), end;
    int byte;

    if (i == in.len) {
        *out = in;
        return 0;
    }
    tfn_out_init_at(&o, pool, in, in.len, i);
    while (i < in.len) {
        if (in.data[i] != '\\') {
            i = tfn_out_run_until(&o, i, tfn_v_backslash);
            continue;
        }
        byte = css_escape(in, i, &end);
        if (byte >= 0)
            tfn_out_byte(&o, (unsigned char)byte);
        i = end;
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: every escape starts with a backslash; other bytes are copied. */
#define CSS_TRIGGERS(k) BW_BS_BYTE(k, '\\')

const bw_tfn_def_t bw_tfn_css_decode = TFN_DEF("cssDecode", css_decode,
                                               CSS_TRIGGERS);
