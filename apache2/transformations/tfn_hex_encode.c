/*
 * hexEncode
 *
 * Description: replaces each byte with two lower-case hex digits.
 * Example: "xyz\x00" -> "78797a00"
 */
#include "tfn_internal.h"

static int hex_encode(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                      bw_str_t *out)
{
    static const char hex[] = "0123456789abcdef";
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, in.len * 2);
    for (i = 0; i < in.len; i++) {
        unsigned char c = (unsigned char)in.data[i];
        tfn_out_byte(&o, (unsigned char)hex[c >> 4]);
        tfn_out_byte(&o, (unsigned char)hex[c & 0x0F]);
    }
    return tfn_out_finish(&o, out);
}

/* No trigger set: every non-empty input doubles in length. */
const bw_tfn_def_t bw_tfn_hex_encode = TFN_DEF_ALWAYS("hexEncode", hex_encode);
