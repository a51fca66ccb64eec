/*
 * Transformations (t:NAME in a rule's actions). One transformation per file
 * (tfn_<name>.c), each exporting a bw_tfn_def_t listed in tfn_registry.c.
 *
 * Contract for every bw_tfn_fn_t:
 *  - reads exactly in.len bytes of in.data; NUL bytes are data;
 *  - sets *out; out->data may point into in.data when the result is unchanged
 *    or a sub-range of it, otherwise it is allocated from pool (never malloc);
 *  - returns 1 when the value changed, 0 when it did not;
 *  - never fails: malformed encodings are handled as ModSecurity 2.9 does
 *    (typically left as they are).
 */
#ifndef BW_TFN_H
#define BW_TFN_H

#include "base/bw_types.h"

/* Settings some transformations read (SecUnicodeMapFile for urlDecodeUni…). */
typedef struct bw_tfn_env_s {
    /* 65536 entries: unicode code point -> single byte, or -1 when the map
     * has no entry. NULL when no SecUnicodeMapFile is configured. */
    const int *unicode_map;
} bw_tfn_env_t;

typedef int (*bw_tfn_fn_t)(const bw_tfn_env_t *env, apr_pool_t *pool,
                           bw_str_t in, bw_str_t *out);

/* A set of byte values: byte c is in the set when bit c % 64 of w[c / 64]
 * is. Used both for "the bytes a value contains" (bw_byteset_of) and for
 * "the bytes that can make a transformation act" (bw_tfn_def_t.triggers). */
typedef struct {
    uint64_t w[4];
} bw_byteset_t;

/* Compile-time sets, for static const initialisers (no start-up code):
 * BW_BYTESET(F) is the set whose word k is F(k), F being a function-like
 * macro that ORs BW_BS_RANGE(k, lo, hi) and BW_BS_BYTE(k, c) terms:
 *     #define QUOTES(k) (BW_BS_BYTE(k, '"') | BW_BS_BYTE(k, '\''))
 *     static const bw_byteset_t quotes = BW_BYTESET(QUOTES);
 * Bytes are 0..255; char constants such as '\xA0' are taken as unsigned. */
#define BW_BS_U8(c) ((int)(unsigned char)(c))
#define BW_BS_CLAMP63(x) ((x) < 0 ? 0 : (x) > 63 ? 63 : (x))
#define BW_BS_RANGE(k, lo, hi)                                         \
    ((BW_BS_U8(lo) > 64 * (k) + 63 || BW_BS_U8(hi) < 64 * (k))         \
         ? (uint64_t)0                                                 \
         : (~(uint64_t)0 << BW_BS_CLAMP63(BW_BS_U8(lo) - 64 * (k)))    \
               & (~(uint64_t)0                                         \
                  >> (63 - BW_BS_CLAMP63(BW_BS_U8(hi) - 64 * (k)))))
#define BW_BS_BYTE(k, c) BW_BS_RANGE(k, c, c)
#define BW_BYTESET(F) { { F(0), F(1), F(2), F(3) } }

typedef struct bw_tfn_def_s {
    const char *name;   /* as spelt in rules, e.g. "urlDecodeUni" */
    bw_tfn_fn_t fn;
    /* The "cannot change" contract, which lets a caller skip fn in O(1):
     * when always is 0 and the input contains no byte of triggers, fn
     * returns 0 and sets *out to in itself (same data pointer, same
     * length), for every input and every env (unicode map or none). A
     * trigger byte being present only means "call fn": it may still leave
     * the value alone. Each set is minimal: no byte could be dropped
     * without breaking the contract (urlDecode: '%' '+'; lowercase: A-Z);
     * where there is a choice (sqlHexDecode: '0', or 'x' and 'X'), the
     * bytes rarer in benign values. tests/unit/test_tfn.c checks the
     * contract on generated inputs and, for every byte of every set, shows
     * an input whose only trigger byte it is and that fn changes. */
    bw_byteset_t triggers;
    /* 1 when no trigger set is useful because (nearly) every input changes
     * (md5, base64Encode, length…): callers always run fn. triggers is then
     * empty. */
    int always;
    /* Optional: from the set of bytes of an input fn changed, a set that
     * holds every byte fn's output can contain, without reading either
     * (lowercase: A-Z become a-z). Every reader of a value's byte set asks
     * "may it contain c?" (gates, triggers, newlines for ^ and $), so a
     * superset is always safe and an exact one loses nothing; NULL: the
     * caller reads the output (bw_byteset_of). */
    void (*bytes)(const bw_byteset_t *in, bw_byteset_t *out);
    /* Optional: 1 when fn is sure to leave an input with a trigger byte as
     * it is, told from its bytes and length without a pass over it
     * (normalizePath: no separator, and not "."); 0 when it may change. */
    int (*unchanged)(const bw_byteset_t *present, bw_str_t in);
} bw_tfn_def_t;

/* Sets *out to the set of bytes s contains. One pass over s, meant to run
 * once per value: the set stays valid along a chain for as long as each
 * transformation hands the value back unchanged (out == in), and is shared
 * by every chain the value goes through. A value a transformation changed
 * needs its own set. */
void bw_byteset_of(bw_str_t s, bw_byteset_t *out);

/* in with A-Z turned into a-z: the bytes of a lower-cased value. */
static inline void bw_byteset_lower(const bw_byteset_t *in, bw_byteset_t *out)
{
    const uint64_t upper = (uint64_t)0x3ffffff << 1;  /* 'A'..'Z' in word 1 */
    *out = *in;
    out->w[1] = (in->w[1] & ~upper) | ((in->w[1] & upper) << 32);
}
static inline int bw_byteset_has(const bw_byteset_t *set, unsigned char c)
{
    return (int)((set->w[c >> 6] >> (c & 63)) & 1);
}

/* 0 when def cannot change a value whose bytes are present (see triggers),
 * so that calling def->fn can be skipped; 1 when it may. */
static inline int bw_tfn_may_change(const bw_tfn_def_t *def,
                                    const bw_byteset_t *present)
{
    return def->always
           || ((def->triggers.w[0] & present->w[0])
               | (def->triggers.w[1] & present->w[1])
               | (def->triggers.w[2] & present->w[2])
               | (def->triggers.w[3] & present->w[3])) != 0;
}

/* bw_tfn_may_change for one input whose bytes are present, refined by
 * def->unchanged. */
static inline int bw_tfn_may_change_value(const bw_tfn_def_t *def, const bw_byteset_t *present,
                                          bw_str_t in)
{
    return bw_tfn_may_change(def, present) && !(def->unchanged && def->unchanged(present, in));
}
/* Case-insensitive lookup ("base64decode" finds base64Decode, as
 * ModSecurity does). "none" is not a transformation: the rule parser handles
 * it. Returns NULL for an unknown name. */
const bw_tfn_def_t *bw_tfn_lookup(const char *name);

/* The registry, for listing (bulwark --help, tests). Ends with NULL. */
extern const bw_tfn_def_t *const bw_tfn_registry[];

/* Load a ModSecurity unicode.mapping file and select code page `codepage`
 * (e.g. 20127). Returns the 65536-entry table from pool, or NULL with *err
 * set ("cannot open …", "code page 20127 not found in …"). */
const int *bw_tfn_unicode_map_load(apr_pool_t *pool, const char *path,
                                   unsigned codepage, char **err);

#endif /* BW_TFN_H */
