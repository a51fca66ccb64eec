/*
 * urlDecode
 *
 * Description: decodes %HH escapes and turns '+' into a space. Invalid
 *   escapes (a non-hex digit, or fewer than two bytes left) are kept as they
 *   are and no error is raised; use @validateUrlEncoding to detect them.
 * Example: "a%20b+c%zz%4" -> "a b c%zz%4"
 */
#include "tfn_internal.h"

TFN_PRED(special)
{
    return tfn_v_or(tfn_v_eq(v, '%'), tfn_v_eq(v, '+'));
}

/* Bytes between '%' and '+' are copied a run at a time; nothing is written
 * before the first escape that decodes or the first '+'. */
static int url_decode(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                      bw_str_t *out)
{
    tfn_out_t o;
    size_t i = tfn_find(in.data, 0, in.len, special);

    if (i == in.len) {
        *out = in;
        return 0;
    }
    tfn_out_init_at(&o, pool, in, in.len, i);
    while (i < in.len) {
        unsigned char c = (unsigned char)in.data[i];
        if (c != '%' && c != '+') {
            i = tfn_out_run_until(&o, i, special);
            continue;
        }
        if (c == '%' && in.len - i >= 3 && tfn_all_hex(in.data + i + 1, 2)) {
            tfn_out_byte(&o, (unsigned char)tfn_hex_n(in.data + i + 1, 2));
            i += 3;
        } else {
            tfn_out_byte(&o, c == '+' ? ' ' : c);
            i++;
        }
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: escapes start with '%', and '+' becomes a space. */
#define URL_DECODE_TRIGGERS(k) (BW_BS_BYTE(k, '%') | BW_BS_BYTE(k, '+'))

const bw_tfn_def_t bw_tfn_url_decode = TFN_DEF("urlDecode", url_decode,
                                               URL_DECODE_TRIGGERS);
