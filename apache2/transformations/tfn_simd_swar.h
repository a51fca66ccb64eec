/*
 * tfn_simd.h's operations in portable C, two 64-bit words at a time (SWAR:
 * SIMD within a register). A flag set has bit 7 of each flagged byte set
 * and nothing else. Bytes are packed little-endian whatever the machine's
 * order (spelt out byte by byte: compilers turn that into one load or
 * store on little-endian machines), so byte j of a block is bits 8j..8j+7
 * of its word. Included by tfn_simd.h only.
 */
#ifndef BW_TFN_SIMD_SWAR_H
#define BW_TFN_SIMD_SWAR_H

typedef struct {
    uint64_t w[2];
} tfn_v_t;

#define TFN_SWAR_ONES UINT64_C(0x0101010101010101)
#define TFN_SWAR_LOW7 UINT64_C(0x7F7F7F7F7F7F7F7F)
#define TFN_SWAR_HIGH UINT64_C(0x8080808080808080)

static inline uint64_t tfn_swar_get(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16
           | (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40
           | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static inline void tfn_swar_put(unsigned char *p, uint64_t x)
{
    p[0] = (unsigned char)x;
    p[1] = (unsigned char)(x >> 8);
    p[2] = (unsigned char)(x >> 16);
    p[3] = (unsigned char)(x >> 24);
    p[4] = (unsigned char)(x >> 32);
    p[5] = (unsigned char)(x >> 40);
    p[6] = (unsigned char)(x >> 48);
    p[7] = (unsigned char)(x >> 56);
}

static inline tfn_v_t tfn_v_zero(void)
{
    tfn_v_t v;
    v.w[0] = v.w[1] = 0;
    return v;
}

static inline tfn_v_t tfn_v_load(const char *p)
{
    tfn_v_t v;
    v.w[0] = tfn_swar_get((const unsigned char *)p);
    v.w[1] = tfn_swar_get((const unsigned char *)p + 8);
    return v;
}

static inline void tfn_v_store(char *p, tfn_v_t v)
{
    tfn_swar_put((unsigned char *)p, v.w[0]);
    tfn_swar_put((unsigned char *)p + 8, v.w[1]);
}

/* On the low seven bits x7 of each byte: x7 + (0x80 - lo7) has bit 7 set
 * iff x7 >= lo7, and x7 + (0x7F - hi7) iff x7 > hi7; neither sum passes
 * 0xFF, so no carry reaches the next byte. Bit 7 of the byte itself must
 * then match the half lo and hi are in. */
static inline uint64_t tfn_swar_range(uint64_t x, unsigned char lo, unsigned char hi)
{
    uint64_t x7 = x & TFN_SWAR_LOW7;
    uint64_t ge = x7 + TFN_SWAR_ONES * (uint64_t)(0x80 - (lo & 0x7F));
    uint64_t gt = x7 + TFN_SWAR_ONES * (uint64_t)(0x7F - (hi & 0x7F));
    uint64_t half = (lo & 0x80) ? x : ~x;
    return ge & ~gt & half & TFN_SWAR_HIGH;
}

static inline tfn_v_t tfn_v_range(tfn_v_t v, unsigned char lo, unsigned char hi)
{
    tfn_v_t f;
    f.w[0] = tfn_swar_range(v.w[0], lo, hi);
    f.w[1] = tfn_swar_range(v.w[1], lo, hi);
    return f;
}

static inline tfn_v_t tfn_v_eq(tfn_v_t v, unsigned char c)
{
    return tfn_v_range(v, c, c);
}

static inline tfn_v_t tfn_v_or(tfn_v_t a, tfn_v_t b)
{
    a.w[0] |= b.w[0];
    a.w[1] |= b.w[1];
    return a;
}

/* Bit 8j+7 -> bit 56 + j by one multiplication: the partial products are
 * distinct powers of two, so nothing carries. */
static inline unsigned tfn_swar_mask8(uint64_t f)
{
    return (unsigned)(((f >> 7) * UINT64_C(0x0102040810204080)) >> 56);
}

static inline unsigned tfn_v_mask(tfn_v_t f)
{
    return tfn_swar_mask8(f.w[0]) | tfn_swar_mask8(f.w[1]) << 8;
}

static inline tfn_v_t tfn_v_xor_where(tfn_v_t v, tfn_v_t f, unsigned char bits)
{
    v.w[0] ^= (f.w[0] >> 7) * bits;
    v.w[1] ^= (f.w[1] >> 7) * bits;
    return v;
}

#endif /* BW_TFN_SIMD_SWAR_H */
