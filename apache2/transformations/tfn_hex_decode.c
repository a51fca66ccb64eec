/*
 * hexDecode
 *
 * Description: the inverse of hexEncode: each pair of bytes becomes one
 *   byte, hex digits of either case giving their value. Input that is not
 *   all hex is decoded as mod_security2 2.9.7 decodes it, so a rule means
 *   the same under both engines (tests/regression/transforms/
 *   hexdecode-invalid checks it against mod_security2): every pair is
 *   decoded by the same arithmetic, and an odd last byte is dropped.
 * Arguments: none.
 * Returns: the decoded bytes, half the input's length rounded down.
 * Example: "78797A" -> "xyz"; "41zz42" -> "ASB"; "414" -> "A"
 */
#include "tfn_internal.h"

/* The value mod_security2 gives one byte of a pair: a byte above '@'
 * counts from 'A' = 10 with its case folded (so 'G' is 16, 'z' is 35), any
 * other from '0' = 0 (so ':' is 10, ' ' is -16); all modulo 256. For hex
 * digits that is their value. */
static unsigned char nibble(unsigned char c)
{
    if (c >= 'A')
        return (unsigned char)((c & 0xdf) - 'A' + 10);
    return (unsigned char)(c - '0');
}

static int hex_decode(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                      bw_str_t *out)
{
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, in.len);
    for (i = 0; i + 1 < in.len; i += 2) {
        unsigned hi = nibble((unsigned char)in.data[i]);
        unsigned lo = nibble((unsigned char)in.data[i + 1]);
        tfn_out_byte(&o, (unsigned char)((hi * 16 + lo) & 0xff));
    }
    return tfn_out_finish(&o, out);
}

/* No trigger set: any input but the empty one changes (even one byte is
 * dropped), so callers always run it. */
const bw_tfn_def_t bw_tfn_hex_decode = TFN_DEF_ALWAYS("hexDecode", hex_decode);
