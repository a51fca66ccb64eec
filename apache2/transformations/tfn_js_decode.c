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

static int is_odigit(unsigned char c)
{
    return c >= '0' && c <= '7';
}

/* Octal escape at in.data[i] (the first digit): sets *end, returns byte. */
static unsigned char octal_escape(bw_str_t in, size_t i, size_t *end)
{
    unsigned v = 0;
    size_t j = i;
    while (j < in.len && j - i < 3 && is_odigit((unsigned char)in.data[j]))
        j++;
    if (j - i == 3 && in.data[i] > '3')
        j--; /* \400 and above would not fit a byte */
    for (*end = j; i < j; i++)
        v = v * 8 + (unsigned)(in.data[i] - '0');
    return (unsigned char)v;
}

static unsigned char control_escape(unsigned char c)
{
    switch (c) {
    case 'a': return '\a';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'v': return '\v';
    default:  return c;
    }
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
    if (is_odigit(c))
        return octal_escape(in, i + 1, end);
    *end = i + 2;
    return control_escape(c);
}

static int js_decode(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                     bw_str_t *out)
{
    tfn_out_t o;
    size_t i = 0, end;

    tfn_out_init(&o, pool, in, in.len);
    while (i < in.len) {
        if (in.data[i] == '\\' && i + 1 < in.len) {
            tfn_out_byte(&o, js_escape(in, i, &end));
            i = end;
        } else {
            tfn_out_byte(&o, (unsigned char)in.data[i]);
            i++;
        }
    }
    return tfn_out_finish(&o, out);
}

const bw_tfn_def_t bw_tfn_js_decode = { "jsDecode", js_decode };
