/*
 * hexDecode
 *
 * Description: the inverse of hexEncode: each pair of hex digits (either
 *   case) becomes one byte. ModSecurity decodes every pair blindly, turning
 *   non-hex pairs into arbitrary bytes and dropping an odd last byte; here a
 *   pair that is not two hex digits, and an odd last byte, are kept as they
 *   are (the interface's "malformed input is left alone"). No rule in CRS
 *   uses hexDecode.
 * Example: "78797A" -> "xyz"; "41zz4" -> "Azz4"
 */
#include "tfn_internal.h"

static int hex_decode(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                      bw_str_t *out)
{
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, in.len);
    for (i = 0; i + 1 < in.len; i += 2) {
        if (tfn_all_hex(in.data + i, 2))
            tfn_out_byte(&o, (unsigned char)tfn_hex_n(in.data + i, 2));
        else
            tfn_out_mem(&o, in.data + i, 2);
    }
    if (i < in.len)
        tfn_out_byte(&o, (unsigned char)in.data[i]);
    return tfn_out_finish(&o, out);
}

/* Triggers: the hex digits. Only a pair of them changes anything, and any
 * one digit doubled ("aa") is such a pair. */
#define HEX_DECODE_TRIGGERS(k)                                               \
    (BW_BS_RANGE(k, '0', '9') | BW_BS_RANGE(k, 'A', 'F')                     \
     | BW_BS_RANGE(k, 'a', 'f'))

const bw_tfn_def_t bw_tfn_hex_decode = TFN_DEF("hexDecode", hex_decode,
                                               HEX_DECODE_TRIGGERS);
