/*
 * utf8toUnicode
 *
 * Description: rewrites each valid multi-byte UTF-8 sequence as %uHHHH
 *   (lower-case hex, at least four digits, five or six above U+FFFF) so
 *   that urlDecodeUni and the rules can see the code point. Valid means
 *   RFC 3629: the shortest form, no surrogate (U+D800..U+DFFF), nothing
 *   above U+10FFFF. ASCII and every byte that does not start a valid
 *   sequence (stray continuation bytes, C0/C1, F5..FF, truncated or
 *   overlong sequences) are kept as they are, one byte at a time.
 * Example: "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xC0\xAF" ->
 *          "a%u00e9%u20ac%u1f600\xC0\xAF"
 */
#include "tfn_internal.h"

/* Code point of the valid sequence at in.data[i], or -1; *n = its length. */
static long utf8_sequence(bw_str_t in, size_t i, size_t *n)
{
    unsigned char c = (unsigned char)in.data[i];
    unsigned long cp, min;
    size_t k;

    if (c >= 0xC2 && c <= 0xDF) {
        *n = 2, cp = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        *n = 3, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        *n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return -1;
    }
    if (in.len - i < *n)
        return -1;
    for (k = 1; k < *n; k++) {
        unsigned char cont = (unsigned char)in.data[i + k];
        if ((cont & 0xC0) != 0x80)
            return -1;
        cp = (cp << 6) | (cont & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return -1;
    return (long)cp;
}

static void put_code_point(tfn_out_t *o, unsigned long cp)
{
    static const char hex[] = "0123456789abcdef";
    int digits = cp > 0xFFFFF ? 6 : cp > 0xFFFF ? 5 : 4;

    tfn_out_byte(o, '%');
    tfn_out_byte(o, 'u');
    while (digits-- > 0)
        tfn_out_byte(o, (unsigned char)hex[(cp >> (4 * digits)) & 0xF]);
}

TFN_PRED(lead_bytes)
{
    return tfn_v_range(v, 0xC2, 0xF4);
}

/* Runs without a lead byte are copied whole; nothing is written before the
 * first valid sequence. */
static int utf8_to_unicode(const bw_tfn_env_t *env, apr_pool_t *pool,
                           bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i = tfn_find(in.data, 0, in.len, lead_bytes), n;
    long cp;

    if (i == in.len) {
        *out = in;
        return 0;
    }
    /* Worst case: a 2-byte sequence becomes 6 bytes. */
    tfn_out_init_at(&o, pool, in, in.len * 3, i);
    while (i < in.len) {
        unsigned char c = (unsigned char)in.data[i];
        if (c < 0xC2 || c > 0xF4) {
            i = tfn_out_run_until(&o, i, lead_bytes);
        } else if ((cp = utf8_sequence(in, i, &n)) >= 0) {
            put_code_point(&o, (unsigned long)cp);
            i += n;
        } else {
            tfn_out_byte(&o, c);
            i++;
        }
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: a valid sequence needs a lead byte 0xC2..0xF4 (and a
 * continuation byte 0x80..0xBF, the larger set, so the lead bytes are the
 * ones that trigger). C0, C1 and F5..FF never start a valid sequence and
 * stay as they are, like stray continuation bytes. */
#define UTF8_TRIGGERS(k) BW_BS_RANGE(k, 0xC2, 0xF4)

const bw_tfn_def_t bw_tfn_utf8_to_unicode =
    TFN_DEF("utf8toUnicode", utf8_to_unicode, UTF8_TRIGGERS);
