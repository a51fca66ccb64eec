/*
 * parityEven7bit, parityOdd7bit, parityZero7bit
 *
 * Description: treat each byte as 7-bit data and replace its 8th bit with
 *   an even-parity bit (the byte then has an even number of 1 bits), an
 *   odd-parity bit, or zero. parityZero7bit lets 7-bit data sent with either
 *   parity be inspected as plain ASCII.
 * Example: parityEven7bit "C" (0x43, three 1 bits) -> "\xC3";
 *          parityOdd7bit "C" -> "C"; parityZero7bit "\xC3" -> "C"
 */
#include "tfn_internal.h"

enum parity { PARITY_EVEN, PARITY_ODD, PARITY_ZERO };

static unsigned char with_parity(unsigned char c, enum parity kind)
{
    unsigned char low = c & 0x7F, ones = 0, b;
    if (kind == PARITY_ZERO)
        return low;
    for (b = low; b != 0; b &= (unsigned char)(b - 1))
        ones++;
    /* Even: set the bit when the 7 data bits hold an odd count. */
    if ((kind == PARITY_EVEN) == ((ones & 1) != 0))
        return low | 0x80;
    return low;
}

static int apply(apr_pool_t *pool, bw_str_t in, bw_str_t *out,
                 enum parity kind)
{
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, in.len);
    for (i = 0; i < in.len; i++)
        tfn_out_byte(&o, with_parity((unsigned char)in.data[i], kind));
    return tfn_out_finish(&o, out);
}

static int parity_even(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                       bw_str_t *out)
{
    return apply(pool, in, out, PARITY_EVEN);
}

static int parity_odd(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                      bw_str_t *out)
{
    return apply(pool, in, out, PARITY_ODD);
}

static int parity_zero(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                       bw_str_t *out)
{
    return apply(pool, in, out, PARITY_ZERO);
}

/* Triggers: exactly the bytes each variant rewrites, since every byte is
 * handled alone. Even parity rewrites the bytes with an odd number of 1
 * bits, odd parity those with an even number, zero parity those >= 0x80.
 * ODD_ONES(k): bit c of word k set when 64k + c has an odd number of 1
 * bits; 0x6996966996696996 is that pattern for 0..63, and the words for
 * 64..127 and 128..191 (one more high bit) are its complement. */
#define ODD_ONES(k) ((k) == 0 || (k) == 3 ? UINT64_C(0x6996966996696996)      \
                                          : ~UINT64_C(0x6996966996696996))
#define EVEN_ONES(k) (~ODD_ONES(k))
#define HIGH_BIT(k) BW_BS_RANGE(k, 0x80, 0xFF)

const bw_tfn_def_t bw_tfn_parity_even_7bit = TFN_DEF("parityEven7bit", parity_even, ODD_ONES);
const bw_tfn_def_t bw_tfn_parity_odd_7bit = TFN_DEF("parityOdd7bit", parity_odd, EVEN_ONES);
const bw_tfn_def_t bw_tfn_parity_zero_7bit = TFN_DEF("parityZero7bit", parity_zero, HIGH_BIT);
