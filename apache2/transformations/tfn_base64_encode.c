/*
 * base64Encode
 *
 * Description: encodes the input in Base64 (RFC 4648 alphabet, '='
 *   padding, no line breaks).
 * Example: "Hello" -> "SGVsbG8="
 */
#include "tfn_internal.h"

static int base64_encode(const bw_tfn_env_t *env, apr_pool_t *pool,
                         bw_str_t in, bw_str_t *out)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = (const unsigned char *)in.data;
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, (in.len + 2) / 3 * 4);
    for (i = 0; i < in.len; i += 3) {
        size_t n = in.len - i < 3 ? in.len - i : 3;
        unsigned long group = (unsigned long)p[i] << 16;
        if (n > 1)
            group |= (unsigned long)p[i + 1] << 8;
        if (n > 2)
            group |= p[i + 2];
        tfn_out_byte(&o, (unsigned char)alphabet[(group >> 18) & 63]);
        tfn_out_byte(&o, (unsigned char)alphabet[(group >> 12) & 63]);
        tfn_out_byte(&o, n > 1 ? (unsigned char)alphabet[(group >> 6) & 63]
                               : '=');
        tfn_out_byte(&o, n > 2 ? (unsigned char)alphabet[group & 63] : '=');
    }
    return tfn_out_finish(&o, out);
}

/* No trigger set: every non-empty input grows. */
const bw_tfn_def_t bw_tfn_base64_encode = TFN_DEF_ALWAYS("base64Encode",
                                                         base64_encode);
