/*
 * The regex walk of the @rx literal prefilter (pf_parse.c), for
 * bw_prefilter.c: the parser state and its two entry points.
 */
#ifndef PF_PARSE_H
#define PF_PARSE_H

#include "pf_internal.h"

typedef struct {
    const pf_env_t *env;
    const unsigned char *p;     /* next byte of the pattern */
    const unsigned char *end;
    int fold;                   /* lower every byte: some part is caseless */
    int depth;                  /* group nesting */
    int in_quote;               /* inside \Q...\E */
    const char *why;            /* first reason the walk gave up */
} pf_parser_t;

/* Walk the whole pattern: 0 with the facts of the regex in *out, or -1 when
 * it gave up (ps->why set). */
int pf_parse(pf_parser_t *ps, pf_info_t *out);

/* Whether the text may hold an option setting with i ((?i) (?i:..) (?-i)…):
 * a cheap over-approximation, so fold mode is chosen before the walk. */
int pf_maybe_caseless(const char *pattern, size_t len);

#endif /* PF_PARSE_H */
