/*
 * base64Decode, base64DecodeExt
 *
 * Description: base64Decode decodes the leading run of Base64 alphabet
 *   characters (A-Z a-z 0-9 + /) and stops at the first byte outside it
 *   ('=' padding, white space, NUL…), as ModSecurity's APR-based decoder
 *   does. base64DecodeExt is the forgiving variant: it skips every byte
 *   outside the alphabet (padding included) and decodes the rest as one
 *   stream, which defeats evasions such as "SGVs.bG8" that PHP would accept.
 *   In both, 6 or 12 trailing bits that do not make a whole byte are dropped.
 * Example: base64Decode "SGVsbG8=x" -> "Hello";
 *          base64DecodeExt "SG.Vs bG8=" -> "Hello"
 */
#include "tfn_internal.h"

/* Value of each byte in the Base64 alphabet (A-Z a-z 0-9 + /), or -1. */
static const signed char b64_value[256] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 62, -1, -1, -1, 63,
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, -1, -1, -1, -1, -1, -1,
    -1,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, -1, -1, -1, -1, -1,
    -1, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
    41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

/* Shared decoder: skip_invalid selects the Ext behaviour. Whole groups of
 * four alphabet bytes go three bytes at a time; the rest (a byte outside
 * the alphabet, the tail) one bit group at a time. A non-empty input
 * always comes out shorter, so it always changes. */
static int b64_decode(apr_pool_t *pool, bw_str_t in, bw_str_t *out,
                      int skip_invalid)
{
    const unsigned char *s = (const unsigned char *)in.data;
    unsigned long bits = 0;
    int nbits = 0;
    size_t i = 0;
    char *buf, *o;

    if (in.len == 0) {
        *out = in;
        return 0;
    }
    buf = o = apr_palloc(pool, in.len / 4 * 3 + 3);
    for (; i + 4 <= in.len; i += 4) {
        int a = b64_value[s[i]], b = b64_value[s[i + 1]], c = b64_value[s[i + 2]],
            d = b64_value[s[i + 3]];
        unsigned long v;
        if ((a | b | c | d) < 0)
            break;
        v = (unsigned long)a << 18 | (unsigned long)b << 12 | (unsigned long)c << 6
            | (unsigned long)d;
        o[0] = (char)(v >> 16);
        o[1] = (char)(v >> 8);
        o[2] = (char)v;
        o += 3;
    }
    for (; i < in.len; i++) {
        int v = b64_value[s[i]];
        if (v < 0) {
            if (skip_invalid)
                continue;
            break;
        }
        bits = ((bits << 6) | (unsigned long)v) & 0xFFFFFF;
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            *o++ = (char)(bits >> nbits);
        }
    }
    *o = '\0';
    *out = bw_str_n(buf, (size_t)(o - buf));
    return 1;
}

static int base64_decode(const bw_tfn_env_t *env, apr_pool_t *pool,
                         bw_str_t in, bw_str_t *out)
{
    return b64_decode(pool, in, out, 0);
}

static int base64_decode_ext(const bw_tfn_env_t *env, apr_pool_t *pool,
                             bw_str_t in, bw_str_t *out)
{
    return b64_decode(pool, in, out, 1);
}

/* No trigger set: any non-empty input changes (its length at least). */
const bw_tfn_def_t bw_tfn_base64_decode = TFN_DEF_ALWAYS("base64Decode",
                                                         base64_decode);
const bw_tfn_def_t bw_tfn_base64_decode_ext =
    TFN_DEF_ALWAYS("base64DecodeExt", base64_decode_ext);
