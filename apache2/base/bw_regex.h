/*
 * PCRE2 for the engine's own regexes (regex selectors, SecRuleRemoveByTag,
 * SecAuditLogRelevantStatus…), compiled as @rx compiles: 8-bit, DOTALL,
 * DOLLAR_ENDONLY, JIT. Operators compile their own (operators/op_regex.c).
 */
#ifndef BW_REGEX_H
#define BW_REGEX_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include "base/bw_types.h"

/* Compile pattern (caseless when asked); the code lives as long as p.
 * NULL with *err ("… at offset N of …") when PCRE2 refuses it. */
pcre2_code *bw_regex_compile(apr_pool_t *p, const char *pattern, int caseless, char **err);

/* 1 match, 0 no match, -1 error. md may be NULL (one is made and freed). */
int bw_regex_match(const pcre2_code *re, bw_str_t s, pcre2_match_data *md);

/* A regex that only says "contains this text" (abc, .*abc.*), "starts
 * with" (^abc) or "ends with" (abc$), as most selectors do
 * (TX:/^header_name_/): matched without PCRE2, with the same answers as
 * the code bw_regex_compile makes of it (DOTALL, DOLLAR_ENDONLY, ASCII
 * case folding). */
typedef struct bw_relit_s {
    bw_str_t lit;               /* lower case when caseless */
    int head, tail;             /* anchored at the start / at the end */
    int caseless;
    int key;                    /* unanchored: a byte of lit that only matches
                                   itself (no letter when caseless), found by
                                   memchr; -1: none */
} bw_relit_t;

/* The literal form of pattern, or NULL when it has none. */
const bw_relit_t *bw_relit_compile(apr_pool_t *p, const char *pattern, int caseless);
int bw_relit_match(const bw_relit_t *l, bw_str_t s);

#endif /* BW_REGEX_H */
