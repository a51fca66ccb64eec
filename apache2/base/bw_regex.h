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

#endif /* BW_REGEX_H */
