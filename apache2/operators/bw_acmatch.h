/*
 * Aho-Corasick multi-pattern matcher: one pass over a value finds every
 * occurrence of any of a set of byte strings. Used by @pm / @pmFromFile and
 * by the @rx literal prefilter (all literals of the rules that look at the
 * same value go into one automaton).
 *
 * Life: bw_ac_create(), bw_ac_add() for each pattern, bw_ac_compile() once,
 * then any number of searches, from any number of threads: searching reads
 * the automaton only and allocates nothing. Patterns are byte strings (NUL
 * is data); with nocase, ASCII letters match either case.
 */
#ifndef BW_ACMATCH_H
#define BW_ACMATCH_H

#include "base/bw_types.h"

typedef struct bw_ac_s bw_ac_t;

/* One occurrence of a pattern in the searched text. */
typedef struct {
    int id;             /* the id given to bw_ac_add() */
    size_t offset;      /* where the occurrence starts in the text */
    size_t len;         /* its length (the pattern's length) */
    bw_str_t pattern;   /* the pattern as added (original case, pool copy) */
} bw_ac_match_t;

/* Iteration state for bw_ac_next(); plain data, lives on the caller's stack. */
typedef struct {
    const bw_ac_t *ac;
    bw_str_t text;
    size_t pos;         /* next text byte to consume */
    int32_t state;      /* automaton state after text[0..pos) */
    int32_t out_state;  /* state whose outputs are being reported, or -1 */
    int32_t out_pat;    /* next pattern of out_state to report, or -1 */
} bw_ac_iter_t;

/* A new, empty automaton whose memory comes from pool. */
bw_ac_t *bw_ac_create(apr_pool_t *pool, int nocase);

/* Add a pattern (copied). The same bytes may be added under several ids;
 * each is reported. Returns -1 for an empty pattern or after compile. */
int bw_ac_add(bw_ac_t *ac, bw_str_t pattern, int id);

/* Build the failure links. Returns 0, or -1 if already compiled. */
int bw_ac_compile(bw_ac_t *ac);

/* Number of patterns added; the i-th as added (i < count); case folding. */
size_t bw_ac_count(const bw_ac_t *ac);
bw_str_t bw_ac_pattern(const bw_ac_t *ac, size_t i);
int bw_ac_nocase(const bw_ac_t *ac);

/* The first occurrence in text: the one that ends first, and of those the
 * longest. Returns 1 and fills *m, or 0. */
int bw_ac_search(const bw_ac_t *ac, bw_str_t text, bw_ac_match_t *m);

/* Every occurrence, ordered by end position (longest first at one end). */
void bw_ac_iter_init(bw_ac_iter_t *it, const bw_ac_t *ac, bw_str_t text);
int bw_ac_next(bw_ac_iter_t *it, bw_ac_match_t *m);

#endif /* BW_ACMATCH_H */
