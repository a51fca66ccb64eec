/*
 * Block scanning for the transformations: the few 16-byte vector operations
 * their fast paths need, so that finding the first byte that needs work (or
 * lower-casing a run) costs a handful of instructions per 16 bytes instead
 * of a branch per byte.
 *
 * The build picks one whole implementation file, never an #ifdef inside a
 * function: SSE2 where the compiler targets it (every x86-64), else a
 * portable word-at-a-time version (arm64, anything else; also forced with
 * -DBW_TFN_PORTABLE, which is how the unit tests check it on x86-64). Both
 * provide the same operations with the same meaning:
 *
 *   tfn_v_t            16 bytes
 *   tfn_v_zero()       16 NUL bytes
 *   tfn_v_load(p)      the 16 bytes at p (any alignment)
 *   tfn_v_store(p, v)  write them back
 *   tfn_v_range(v, lo, hi)  a flag set: the bytes b with lo <= b <= hi;
 *                      lo and hi are both below 0x80 or both above 0x7F
 *   tfn_v_eq(v, c)     the flags of the bytes equal to c
 *   tfn_v_or(a, b)     either flag set
 *   tfn_v_mask(f)      the flags as bits: bit j for byte j (16 bits)
 *   tfn_v_xor_where(v, f, bits)  v with bits XORed into each flagged byte
 *
 * Flag sets are exact for every byte value (no false positives, whatever
 * the neighbours), which tests/unit/test_tfn_diff.c checks against plain
 * loops for every byte at every position.
 */
#ifndef BW_TFN_SIMD_H
#define BW_TFN_SIMD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TFN_BLOCK 16

#if defined(__SSE2__) && !defined(BW_TFN_PORTABLE)
#include "tfn_simd_sse2.h"
#else
#include "tfn_simd_swar.h"
#endif

/* A block predicate: the flags of the bytes a scan stops at. Defined with
 * TFN_PRED(name) { ... }, which makes the compiler inline it into the scan
 * loops (through the constant function pointer) even where it is used
 * twice and its size would make GCC call it. */
typedef tfn_v_t (*tfn_pred_fn)(tfn_v_t v);
#define TFN_PRED(name) static inline __attribute__((always_inline)) tfn_v_t name(tfn_v_t v)

/* The index of the first byte in [i, n) of p that pred flags, or n. Reads
 * no byte outside [0, n): a tail shorter than a block is read as the last
 * full block of p when there is one (its first bytes, already seen, are
 * shifted out), else from a zero-padded copy (pad bytes are masked off, so
 * a predicate may flag NUL). Meant to be inlined with a constant pred,
 * which then costs no call. */
static inline __attribute__((always_inline)) size_t
tfn_find(const char *p, size_t i, size_t n, tfn_pred_fn pred)
{
    unsigned m;

    while (i + TFN_BLOCK <= n) {
        m = tfn_v_mask(pred(tfn_v_load(p + i)));
        if (m)
            return i + (size_t)__builtin_ctz(m);
        i += TFN_BLOCK;
    }
    if (i >= n)
        return n;
    if (n >= TFN_BLOCK) {
        m = tfn_v_mask(pred(tfn_v_load(p + n - TFN_BLOCK))) >> (TFN_BLOCK - (n - i));
    } else {
        char pad[TFN_BLOCK];
        memset(pad, 0, sizeof(pad));
        memcpy(pad, p + i, n - i);
        m = tfn_v_mask(pred(tfn_v_load(pad))) & ((1u << (n - i)) - 1);
    }
    return m ? i + (size_t)__builtin_ctz(m) : n;
}

/* Flags of A-Z and of a-z, for the case changes. */
TFN_PRED(tfn_v_upper)
{
    return tfn_v_range(v, 'A', 'Z');
}

TFN_PRED(tfn_v_lower)
{
    return tfn_v_range(v, 'a', 'z');
}

/* dst[0..n) = src[0..n) with 0x20 flipped in every byte flip flags
 * (tfn_v_upper: A-Z to a-z; tfn_v_lower: a-z to A-Z); other bytes copied.
 * dst and src do not overlap. */
static inline __attribute__((always_inline)) void
tfn_flip_case_copy(char *dst, const char *src, size_t n, tfn_pred_fn flip)
{
    size_t i = 0;
    tfn_v_t v;

    while (i + TFN_BLOCK <= n) {
        v = tfn_v_load(src + i);
        tfn_v_store(dst + i, tfn_v_xor_where(v, flip(v), 0x20));
        i += TFN_BLOCK;
    }
    if (i >= n)
        return;
    if (n >= TFN_BLOCK) {
        /* redo the last 16 bytes: the overlap gets the same bytes again */
        v = tfn_v_load(src + n - TFN_BLOCK);
        tfn_v_store(dst + n - TFN_BLOCK, tfn_v_xor_where(v, flip(v), 0x20));
    } else {
        char pad[TFN_BLOCK];
        memset(pad, 0, sizeof(pad));
        memcpy(pad, src + i, n - i);
        v = tfn_v_load(pad);
        tfn_v_store(pad, tfn_v_xor_where(v, flip(v), 0x20));
        memcpy(dst + i, pad, n - i);
    }
}

#endif /* BW_TFN_SIMD_H */
