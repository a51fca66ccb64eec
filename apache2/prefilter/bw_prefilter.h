/*
 * The @rx literal prefilter: from a regular expression, a set of literals at
 * least one of which every matching subject contains. Rules whose literals
 * are all absent from a value cannot match it, so their PCRE2 run is
 * skipped; the literals of many rules go into one Aho-Corasick automaton
 * (operators/bw_acmatch.h) per (variable, transformation chain).
 *
 * The invariant, checked differentially by tests/prefilter/diff.c over every
 * CRS 3.3.4 and v4 regex: the prefilter may only ever say "maybe". When the
 * analysis is unsure it gives up on that part of the regex (no literal), and
 * when no safe set remains for the whole regex it reports "always run".
 *
 * Engine code: APR only, no httpd headers.
 */
#ifndef BW_PREFILTER_H
#define BW_PREFILTER_H

#include "base/bw_types.h"

/* Extract the literal set of one regex.
 *
 * pattern, len  the final regex (no %{macros} left), PCRE2 syntax, as the
 *               engine compiles it: 8-bit, no PCRE2_UTF/UCP, PCRE2's built-in
 *               character tables, PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY, plus
 *               PCRE2_CASELESS when caseless is non-zero. A pattern PCRE2
 *               would reject may get any answer; compile it first.
 * min_len       shortest literal accepted (0 is taken as 1): a set that
 *               needs a shorter literal is not returned.
 *
 * Returns 1 with *out a fresh array (in pool) of bw_str_t literals, each at
 * least min_len bytes, none a substring of another, at most
 * BW_PREFILTER_MAX_SET of them, such that every subject the regex matches
 * contains one of them. *nocase is 1 when the literals are lower-case ASCII
 * and must be looked for in the ASCII-lower-cased subject (some part of the
 * regex is caseless: the caseless option or an (?i) anywhere); then no
 * literal holds a byte >= 0x80. Returns 0 when no safe set exists (the rule
 * must always run); *out and *nocase are then untouched.
 *
 * Understood: literals, escapes (\xHH \x{..} \o{..} \0oo \n \t…, \Q..\E),
 * classes ([..] with ranges, \d \w \s and POSIX names taken as "any byte"),
 * . ^ $ \b \B \A \z \Z \G \K, groups (capturing, (?:), named, (?|), (?>)),
 * inline flags ((?i) (?-i) (?i:..); x gives up), quantifiers ? * + {m,n} lazy
 * or possessive, lookarounds (taken as matching the empty string),
 * backreferences and subroutine calls (taken as matching anything), (?#..).
 * Gives up on the whole regex: (*VERB)s, conditionals, callouts, (?x), a
 * brace whose meaning differs between PCRE2 versions, anything unknown. */
int bw_prefilter_extract(apr_pool_t *pool, const char *pattern, size_t len, int caseless,
                         size_t min_len, apr_array_header_t **out, int *nocase);

/* As bw_prefilter_extract; when it returns 0 and why is not NULL, *why names
 * the reason (a static string) for diagnostics. */
int bw_prefilter_extract_ex(apr_pool_t *pool, const char *pattern, size_t len, int caseless,
                            size_t min_len, apr_array_header_t **out, int *nocase,
                            const char **why);

/* Reference check, for tests and for callers without an automaton: 1 when
 * subject contains one of lits (ASCII case-insensitively when nocase). */
int bw_prefilter_maybe(const apr_array_header_t *lits, int nocase, bw_str_t subject);

/* Most literals one set holds. */
#define BW_PREFILTER_MAX_SET 64

/* A byte gate of one regex: a set of bytes at least one of which every
 * subject the regex matches contains (gate, 256 bits), chosen among the
 * regex's literal sets to be as rare as possible in benign requests (one
 * byte per literal: its rarest; with case folding a letter in both cases).
 * *weight: how common the gate's bytes are, in 1/10000 of benign bytes
 * summed (a gate of '(' weighs about 19, one of a space over 1000). Same
 * regex syntax and invariant as bw_prefilter_extract: 0 when no gate is
 * safe. */
int bw_prefilter_gate(apr_pool_t *pool, const char *pattern, size_t len, int caseless,
                      uint64_t gate[4], unsigned *weight);

/* A trigger of one regex: a literal set (as bw_prefilter_extract's) chosen
 * to be as rare as possible in benign requests, for a literal matcher
 * that decides whether the regex is worth scanning at all. *weight is the
 * set's estimated frequency in the units of bw_prefilter_gate (per
 * literal: its rarest byte's weight, divided by 8 for every further
 * byte; summed). 0 when no literal set is safe. */
int bw_prefilter_trigger(apr_pool_t *pool, const char *pattern, size_t len,
                         apr_array_header_t **out, int *nocase, unsigned *weight);
/* Most alternatives bw_prefilter_alternatives gives. */
#define BW_PREFILTER_MAX_ALTS 32

/* The top-level alternatives of a regex (those of a group that is the
 * whole pattern included), each a regex of its own with the option
 * settings and wrapping groups it is under: a subject matches the regex iff
 * it matches one of them. 1 with *out (bw_str_t, at least two), or 0 when
 * the regex has no such alternatives or they cannot be taken apart exactly
 * (back-references, conditionals, an option setting after the start, (?x),
 * more than BW_PREFILTER_MAX_ALTS; pf_split.c). */
int bw_prefilter_alternatives(apr_pool_t *pool, const char *pattern, size_t len,
                              apr_array_header_t **out);

/* min_len value that asks bw_prefilter_extract_ex for gate-choosing sets. */
#define BW_PREFILTER_GATE ((size_t)-1)

#endif /* BW_PREFILTER_H */
