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

/* Value of a Base64 alphabet byte, or -1. */
static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Shared decoder: skip_invalid selects the Ext behaviour. */
static int b64_decode(apr_pool_t *pool, bw_str_t in, bw_str_t *out,
                      int skip_invalid)
{
    tfn_out_t o;
    unsigned long bits = 0;
    int nbits = 0;
    size_t i;

    tfn_out_init(&o, pool, in, in.len / 4 * 3 + 2);
    for (i = 0; i < in.len; i++) {
        int v = b64_value((unsigned char)in.data[i]);
        if (v < 0) {
            if (skip_invalid)
                continue;
            break;
        }
        bits = ((bits << 6) | (unsigned long)v) & 0xFFFFFF;
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            tfn_out_byte(&o, (unsigned char)(bits >> nbits));
        }
    }
    return tfn_out_finish(&o, out);
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
