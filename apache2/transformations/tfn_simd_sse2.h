/*
 * tfn_simd.h's operations with SSE2 (part of every x86-64). A flag set has
 * all bits of each flagged byte set. Included by tfn_simd.h only.
 */
#ifndef BW_TFN_SIMD_SSE2_H
#define BW_TFN_SIMD_SSE2_H

#include <emmintrin.h>

typedef __m128i tfn_v_t;

static inline tfn_v_t tfn_v_zero(void)
{
    return _mm_setzero_si128();
}

static inline tfn_v_t tfn_v_load(const char *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

static inline void tfn_v_store(char *p, tfn_v_t v)
{
    _mm_storeu_si128((__m128i *)(void *)p, v);
}

/* lo <= b <= hi as (b - lo) <= (hi - lo) unsigned, i.e. min(d, k) == d. */
static inline tfn_v_t tfn_v_range(tfn_v_t v, unsigned char lo, unsigned char hi)
{
    __m128i d = _mm_sub_epi8(v, _mm_set1_epi8((char)lo));
    return _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8((char)(hi - lo))), d);
}

static inline tfn_v_t tfn_v_eq(tfn_v_t v, unsigned char c)
{
    return _mm_cmpeq_epi8(v, _mm_set1_epi8((char)c));
}

static inline tfn_v_t tfn_v_or(tfn_v_t a, tfn_v_t b)
{
    return _mm_or_si128(a, b);
}

static inline unsigned tfn_v_mask(tfn_v_t f)
{
    return (unsigned)_mm_movemask_epi8(f);
}

static inline tfn_v_t tfn_v_xor_where(tfn_v_t v, tfn_v_t f, unsigned char bits)
{
    return _mm_xor_si128(v, _mm_and_si128(f, _mm_set1_epi8((char)bits)));
}

#endif /* BW_TFN_SIMD_SSE2_H */
