/*
 * bw_byteset_of: the set of bytes a value contains, built once per value so
 * that each transformation of every chain can be skipped in O(1) when the
 * value holds none of its trigger bytes (bw_tfn_may_change).
 *
 * Two loops, picked by length:
 *  - tiny values keep the set in registers: one branch for bytes >= 0x80
 *    (rare in such values), masks for the two ASCII words;
 *  - longer ones only store a flag per byte value (no dependency between
 *    bytes at all, eight bytes per loop turn) and pack the 256 flags into
 *    bits at the end, sixteen at a time with tfn_simd.h's block mask: a
 *    fixed cost of about 60 instructions with SSE2 (zeroing included),
 *    which the cheaper bytes repay from 8 bytes on. The bit-per-byte loop in
 *    memory that used to sit between the two (about six instructions a
 *    byte) lost to it everywhere: callgrind, CRS 3.3.4 PL1, per
 *    transaction, GET 57.5K -> 38.9K instructions, json-27k 1.78M -> 1.57M.
 */
#include "tfn_internal.h"

/* From this length on, the flag table beats the register loop. */
#define FLAG_TABLE_MIN 8

static void bits_tiny(const unsigned char *p, size_t n, bw_byteset_t *out)
{
    uint64_t w0 = 0, w1 = 0, high[2] = { 0, 0 }, bit, in_w1;
    size_t i;

    for (i = 0; i < n; i++) {
        bit = (uint64_t)1 << (p[i] & 63);
        if (p[i] >= 0x80) {
            high[(p[i] >> 6) & 1] |= bit;
            continue;
        }
        in_w1 = (uint64_t)0 - (uint64_t)(p[i] >> 6); /* all ones: 64..127 */
        w0 |= bit & ~in_w1;
        w1 |= bit & in_w1;
    }
    out->w[0] = w0;
    out->w[1] = w1;
    out->w[2] = high[0];
    out->w[3] = high[1];
}

TFN_PRED(flag_set)
{
    return tfn_v_eq(v, 1);
}

/* Bits 16j..16j+15 of word k: flags 64k + 16j .. 64k + 16j + 15. */
#define PACK16(k, j)                                                         \
    ((uint64_t)tfn_v_mask(flag_set(tfn_v_load((const char *)seen + 64 * (k) + 16 * (j)))) \
     << (16 * (j)))

static void bits_long(const unsigned char *p, size_t n, bw_byteset_t *out)
{
    unsigned char seen[256];
    tfn_v_t zero = tfn_v_zero();
    size_t i;
    int k;

    /* spelt out: memset of 256 bytes is a call or a rep store here */
    for (k = 0; k < 256; k += 4 * TFN_BLOCK) {
        tfn_v_store((char *)seen + k, zero);
        tfn_v_store((char *)seen + k + TFN_BLOCK, zero);
        tfn_v_store((char *)seen + k + 2 * TFN_BLOCK, zero);
        tfn_v_store((char *)seen + k + 3 * TFN_BLOCK, zero);
    }
    for (i = 0; i + 8 <= n; i += 8) {
        seen[p[i]] = 1;
        seen[p[i + 1]] = 1;
        seen[p[i + 2]] = 1;
        seen[p[i + 3]] = 1;
        seen[p[i + 4]] = 1;
        seen[p[i + 5]] = 1;
        seen[p[i + 6]] = 1;
        seen[p[i + 7]] = 1;
    }
    for (; i < n; i++)
        seen[p[i]] = 1;
    for (k = 0; k < 4; k++)
        out->w[k] = PACK16(k, 0) | PACK16(k, 1) | PACK16(k, 2) | PACK16(k, 3);
}

void bw_byteset_of(bw_str_t s, bw_byteset_t *out)
{
    const unsigned char *p = (const unsigned char *)s.data;

    if (s.len < FLAG_TABLE_MIN)
        bits_tiny(p, s.len, out);
    else
        bits_long(p, s.len, out);
}
