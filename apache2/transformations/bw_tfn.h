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

typedef struct bw_tfn_def_s {
    const char *name;   /* as spelt in rules, e.g. "urlDecodeUni" */
    bw_tfn_fn_t fn;
} bw_tfn_def_t;

/* Case-insensitive lookup ("base64decode" finds base64Decode, as
 * ModSecurity does). "none" is not a transformation: the rule parser handles
 * it. Returns NULL for an unknown name. */
const bw_tfn_def_t *bw_tfn_lookup(const char *name);

/* The registry, for listing (bulwark --help, tests). Ends with {NULL, NULL}. */
extern const bw_tfn_def_t *const bw_tfn_registry[];

/* Load a ModSecurity unicode.mapping file and select code page `codepage`
 * (e.g. 20127). Returns the 65536-entry table from pool, or NULL with *err
 * set ("cannot open …", "code page 20127 not found in …"). */
const int *bw_tfn_unicode_map_load(apr_pool_t *pool, const char *path,
                                   unsigned codepage, char **err);

#endif /* BW_TFN_H */
