/*
 * sqlHexDecode
 *
 * Description: decodes SQL hex literals: "0x" (or "0X") followed by at
 *   least two hex digits becomes the bytes of its digit pairs; an odd last
 *   digit and whatever follows are kept. "0x" without two hex digits is
 *   left alone. Unlike ModSecurity (which stops at a NUL byte and does not
 *   look at the byte right after a literal), every byte is examined.
 * Example: "SELECT 0x414243, 0x4" -> "SELECT ABC, 0x4"; "0x414" -> "A4"
 */
#include "tfn_internal.h"

static int sql_hex_decode(const bw_tfn_env_t *env, apr_pool_t *pool,
                          bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i = 0;

    tfn_out_init(&o, pool, in, in.len);
    while (i < in.len) {
        if (in.data[i] == '0' && in.len - i >= 4
            && (in.data[i + 1] | 0x20) == 'x'
            && tfn_all_hex(in.data + i + 2, 2)) {
            for (i += 2; in.len - i >= 2 && tfn_all_hex(in.data + i, 2); i += 2)
                tfn_out_byte(&o, (unsigned char)tfn_hex_n(in.data + i, 2));
            continue;
        }
        tfn_out_byte(&o, (unsigned char)in.data[i]);
        i++;
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: a literal needs both '0' and 'x' or 'X'; either would do, and
 * x/X is the rarer in benign values (14% of the lines of
 * tests/detect/benign against 20% with a '0'). */
#define SQL_HEX_TRIGGERS(k) (BW_BS_BYTE(k, 'x') | BW_BS_BYTE(k, 'X'))

const bw_tfn_def_t bw_tfn_sql_hex_decode =
    TFN_DEF("sqlHexDecode", sql_hex_decode, SQL_HEX_TRIGGERS);
