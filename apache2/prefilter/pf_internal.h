/*
 * Internals of the @rx literal prefilter (bw_prefilter.c): string sets and
 * the per-node "info" the regex walk computes. Shared by pf_set.c (set
 * algebra), pf_info.c (how concatenation, alternation and repetition combine
 * infos) and bw_prefilter.c (the PCRE2 syntax walk). Not for other parts of
 * the engine.
 *
 * Every set here is a *claim about all strings a regex node can match*; each
 * operation only ever weakens a claim (keeps it true for a superset of
 * strings), never strengthens it beyond what the regex guarantees.
 */
#ifndef PF_INTERNAL_H
#define PF_INTERNAL_H

#include "base/bw_types.h"

/* A set of byte strings. n < 0 means "not known" (for exact sets) or "no
 * requirement" (for required sets). */
typedef struct {
    int n;
    int room;       /* slots allocated in v */
    bw_str_t *v;
} pf_set_t;

/* What is known about the strings a regex node matches:
 *  exact  every match is one of these strings ("" allowed), or n < 0;
 *  pre    every match starts with one of these ({""} when nothing known);
 *  suf    every match ends with one of these ({""} when nothing known);
 *  req    every match contains one of these as a substring, or n < 0.
 * When exact is known, pre/suf/req are derived from it on demand. */
typedef struct {
    pf_set_t exact;
    pf_set_t pre;
    pf_set_t suf;
    pf_set_t req;
} pf_info_t;

/* Limits and scratch memory of one extraction. */
typedef struct {
    apr_pool_t *pool;   /* scratch: destroyed when the extraction ends */
    int cap;            /* most strings a set may keep */
    int prod_max;       /* most strings a cross product may build before fitting */
    size_t min_len;     /* shortest literal the caller accepts (>= 1) */
    int gate;           /* choosing for a byte gate: a literal costs as much
                           as its rarest byte (pf_weights.c), not its length */
    int fold;           /* literals are ASCII-lowered (the gate takes both cases) */
} pf_env_t;

/* How common byte c is in benign requests, in 1/10000 of all bytes
 * (pf_weights.c); with fold, a letter counts both of its cases. */
unsigned pf_byte_weight(unsigned char c, int fold);

/* At "[:", "[." or "[=" inside a class (p at the '['), as PCRE2 reads it:
 * 1 when it is POSIX syntax, *close at the closing ":]" (".]", "=]"); 0
 * when the '[' is a plain byte (pf_parse.c; the splitter, pf_split.c,
 * reads classes the same way). */
int pf_posix_syntax(const unsigned char *p, const unsigned char *end,
                    const unsigned char **close);

/* A set under construction, deduplicated by hash (for long word lists). */
typedef struct {
    pf_set_t set;
    apr_hash_t *seen;
} pf_setb_t;

/* --- sets (pf_set.c) --- */
pf_set_t pf_set_none(void);
pf_set_t pf_set_empty_string(const pf_env_t *env);
pf_set_t pf_set_byte(const pf_env_t *env, unsigned char c);
void pf_set_add(const pf_env_t *env, pf_set_t *s, bw_str_t str);
void pf_setb_init(const pf_env_t *env, pf_setb_t *b);
void pf_setb_add(const pf_env_t *env, pf_setb_t *b, bw_str_t str);
int pf_set_has_empty(pf_set_t s);
pf_set_t pf_set_union(const pf_env_t *env, pf_set_t a, pf_set_t b);
pf_set_t pf_set_cross(const pf_env_t *env, pf_set_t a, pf_set_t b, int limit);
pf_set_t pf_set_fit_pre(const pf_env_t *env, pf_set_t s);
pf_set_t pf_set_fit_suf(const pf_env_t *env, pf_set_t s);
pf_set_t pf_set_fit_req(const pf_env_t *env, pf_set_t s);
double pf_set_cost(const pf_env_t *env, pf_set_t s);

/* --- infos (pf_info.c) --- */
pf_info_t pf_info_exact(pf_set_t s);
pf_info_t pf_info_any(const pf_env_t *env);
pf_info_t pf_info_empty(const pf_env_t *env);
pf_set_t pf_info_pre(const pf_env_t *env, const pf_info_t *a);
pf_set_t pf_info_suf(const pf_env_t *env, const pf_info_t *a);
pf_set_t pf_info_req(const pf_env_t *env, const pf_info_t *a);
pf_info_t pf_info_cat(const pf_env_t *env, const pf_info_t *a, const pf_info_t *b);
pf_info_t pf_info_alt(const pf_env_t *env, const pf_info_t *branches, int n);
pf_info_t pf_info_repeat(const pf_env_t *env, const pf_info_t *a, int min, int max);

#endif /* PF_INTERNAL_H */
