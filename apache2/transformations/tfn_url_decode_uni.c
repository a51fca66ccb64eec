/*
 * urlDecodeUni
 *
 * Description: urlDecode plus IIS's %uHHHH. A %u code point becomes one
 *   byte: the SecUnicodeMapFile entry when a map is configured and has one,
 *   else U+FF01..U+FF5E (full-width ASCII) becomes ASCII 0x21..0x7E and any
 *   other code point keeps only its low byte. Invalid escapes are kept.
 * Example: "%u0041%uFF1Cscript%uff1e+%u12" -> "A<script> %u12"
 */
#include "tfn_internal.h"

/* The byte %uHHHH at p (the four hex digits) decodes to. */
static unsigned char uni_byte(const bw_tfn_env_t *env, const char *p)
{
    unsigned long cp = tfn_hex_n(p, 4);
    if (env != NULL && env->unicode_map != NULL && env->unicode_map[cp] >= 0)
        return (unsigned char)env->unicode_map[cp];
    return tfn_unicode_byte(cp);
}

TFN_PRED(special)
{
    return tfn_v_or(tfn_v_eq(v, '%'), tfn_v_eq(v, '+'));
}

/* Bytes between '%' and '+' are copied a run at a time; nothing is written
 * before the first escape that decodes or the first '+'. */
static int url_decode_uni(const bw_tfn_env_t *env, apr_pool_t *pool,
                          bw_str_t in, bw_str_t *out)
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
        size_t left = in.len - i;
        if (c != '%' && c != '+') {
            i = tfn_out_run_until(&o, i, special);
            continue;
        }
        if (c == '%' && left >= 6 && (in.data[i + 1] | 0x20) == 'u'
            && tfn_all_hex(in.data + i + 2, 4)) {
            tfn_out_byte(&o, uni_byte(env, in.data + i + 2));
            i += 6;
        } else if (c == '%' && left >= 3 && tfn_all_hex(in.data + i + 1, 2)) {
            tfn_out_byte(&o, (unsigned char)tfn_hex_n(in.data + i + 1, 2));
            i += 3;
        } else {
            tfn_out_byte(&o, c == '+' ? ' ' : c);
            i++;
        }
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: both kinds of escape start with '%' (so the unicode map plays
 * no part), and '+' becomes a space. */
#define URL_UNI_TRIGGERS(k) (BW_BS_BYTE(k, '%') | BW_BS_BYTE(k, '+'))

const bw_tfn_def_t bw_tfn_url_decode_uni =
    TFN_DEF("urlDecodeUni", url_decode_uni, URL_UNI_TRIGGERS);
