/*
 * jsDecode
 *
 * Description: decodes JavaScript escapes: \uHHHH (one byte: full-width
 *   ASCII U+FF01..U+FF5E becomes ASCII, else the low byte), \xHH, octal
 *   \O, \OO and \OOO (three digits only while the value fits a byte, so
 *   "\400" is "\40" then "0"), \a \b \f \n \r \t \v, and any other escaped
 *   byte stands for itself (\\ \' \" \? \z -> \ ' " ? z). Only lower-case
 *   u and x introduce escapes, as in JavaScript. A lone trailing backslash
 *   is kept.
 * Example: "\u0041\uff1c\x42\101\n\q" -> "A<BA\nq"
 */
#include "tfn_internal.h"

/* Octal escape at in.data[i] (the first digit): sets *end, returns byte. */
static unsigned char octal_escape(bw_str_t in, size_t i, size_t *end)
{
    unsigned v = 0;
    size_t j = i;
    while (j < in.len && j - i < 3 && tfn_is_odigit((unsigned char)in.data[j]))
        j++;
    if (j - i == 3 && in.data[i] > '3')
        j--; /* \400 and above would not fit a byte */
    for (*end = j; i < j; i++)
        v = v * 8 + (unsigned)(in.data[i] - '0');
    return (unsigned char)v;
}

/* \a … \v are control bytes; any other escaped byte stands for itself. */
static unsigned char control_escape(unsigned char c)
{
    int ctl = tfn_control_escape(c);
    return ctl >= 0 ? (unsigned char)ctl : c;
}

/* Decode the escape whose backslash is at in.data[i] (not the last byte);
 * sets *end past it. */
static unsigned char js_escape(bw_str_t in, size_t i, size_t *end)
{
    unsigned char c = (unsigned char)in.data[i + 1];
    size_t left = in.len - i;

    if (c == 'u' && left >= 6 && tfn_all_hex(in.data + i + 2, 4)) {
        *end = i + 6;
        return tfn_unicode_byte(tfn_hex_n(in.data + i + 2, 4));
    }
    if (c == 'x' && left >= 4 && tfn_all_hex(in.data + i + 2, 2)) {
        *end = i + 4;
        return (unsigned char)tfn_hex_n(in.data + i + 2, 2);
    }
    if (tfn_is_odigit(c))
        return octal_escape(in, i + 1, end);
    *end = i + 2;
    return control_escape(c);
}

static int js_decode(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                     bw_str_t *out)
{
    return tfn_backslash_decode(pool, in, out, js_escape);
}

/* Triggers: every escape starts with a backslash; other bytes are copied. */
#define JS_TRIGGERS(k) BW_BS_BYTE(k, '\\')

const bw_tfn_def_t bw_tfn_js_decode = TFN_DEF("jsDecode", js_decode,
                                              JS_TRIGGERS);
