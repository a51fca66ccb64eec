/*
 * bw_byteset_of: the set of bytes a value contains, built once per value so
 * that each transformation of every chain can be skipped in O(1) when the
 * value holds none of its trigger bytes (bw_tfn_may_change).
 *
 * Three loops, picked by length, because none is fastest everywhere
 * (measured on the benign corpus; numbers in the commit that added them):
 *  - tiny values keep the set in registers: one branch for bytes >= 0x80
 *    (rare in such values), masks for the two ASCII words;
 *  - short values OR one bit per byte into the set in memory, two copies of
 *    it, one per byte parity, so that two neighbours landing in the same
 *    word do not wait on each other's read-modify-write;
 *  - long values only store a flag per byte value (no dependency between
 *    bytes at all) and pack the 256 flags into bits at the end, a fixed
 *    cost that pays off from about 64 bytes on.
 */
#include "tfn_internal.h"

/* From these lengths on, the memory bit loop beats the register one, and
 * the flag table beats both. */
#define BIT_LOOP_MIN 16
#define FLAG_TABLE_MIN 64

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

static void bits_short(const unsigned char *p, size_t n, bw_byteset_t *out)
{
    uint64_t a[4] = { 0, 0, 0, 0 }, b[4] = { 0, 0, 0, 0 };
    size_t i, k;

    for (i = 0; i + 2 <= n; i += 2) {
        a[p[i] >> 6] |= (uint64_t)1 << (p[i] & 63);
        b[p[i + 1] >> 6] |= (uint64_t)1 << (p[i + 1] & 63);
    }
    if (i < n)
        a[p[i] >> 6] |= (uint64_t)1 << (p[i] & 63);
    for (k = 0; k < 4; k++)
        out->w[k] = a[k] | b[k];
}

/* The eight 0/1 flags at f as the low eight bits, flag j as bit j. The
 * multiplication moves byte j's low bit to bit 56 + j without carries (the
 * partial products are distinct powers of two); the bytes are assembled
 * explicitly so that this holds whatever the machine's byte order. */
static uint64_t pack_flags8(const unsigned char *f)
{
    /* Spelt out: GCC and Clang turn this into one load on little-endian
     * machines (a loop is not merged at -O2). */
    uint64_t x = (uint64_t)f[0] | (uint64_t)f[1] << 8 | (uint64_t)f[2] << 16
                 | (uint64_t)f[3] << 24 | (uint64_t)f[4] << 32
                 | (uint64_t)f[5] << 40 | (uint64_t)f[6] << 48
                 | (uint64_t)f[7] << 56;
    return (x * UINT64_C(0x0102040810204080)) >> 56;
}

static void bits_long(const unsigned char *p, size_t n, bw_byteset_t *out)
{
    unsigned char seen[256];
    size_t i;
    int k, j;

    memset(seen, 0, sizeof(seen));
    for (i = 0; i < n; i++)
        seen[p[i]] = 1;
    for (k = 0; k < 4; k++) {
        uint64_t w = 0;
        for (j = 0; j < 8; j++)
            w |= pack_flags8(seen + 64 * k + 8 * j) << (8 * j);
        out->w[k] = w;
    }
}

void bw_byteset_of(bw_str_t s, bw_byteset_t *out)
{
    const unsigned char *p = (const unsigned char *)s.data;

    if (s.len < BIT_LOOP_MIN)
        bits_tiny(p, s.len, out);
    else if (s.len < FLAG_TABLE_MIN)
        bits_short(p, s.len, out);
    else
        bits_long(p, s.len, out);
}
