/*
 * Inside apache2/matcher/ only: the patterns a matcher collects and the two
 * functions each implementation (matcher_hs.c, matcher_ac.c) provides.
 */
#ifndef BW_MATCHER_INT_H
#define BW_MATCHER_INT_H

#include "matcher/bw_matcher.h"

enum { MX_REGEX, MX_PHRASE };
enum { MX_EXACT = 0, MX_MAYBE = 1, MX_ALWAYS = 2 };   /* what a bit's hit means */

typedef struct {
    int kind;           /* MX_REGEX or MX_PHRASE */
    int bit;
    bw_str_t text;      /* regex source, or the phrase's bytes */
    int nocase;         /* phrases: ASCII case-insensitive */
} mx_pat_t;

struct bw_matcher_s {
    apr_pool_t *pool;
    apr_array_header_t *pats;       /* mx_pat_t, in bit order (phrases share a bit) */
    int nbits, nwords;
    unsigned char *kind;            /* per bit: MX_EXACT, MX_MAYBE or MX_ALWAYS */
    uint64_t *exact, *always;
    int compiled;
    bw_matcher_info_t info;
    void *impl;                     /* the implementation's compiled form */
};

/* Fill m->kind (every bit, after compiling) and m->impl; warnings to *warning. */
void bw_mx_compile(bw_matcher_t *m, const char *cache_dir, const char **warning);
/* Set the bits of the patterns that may match value (not the always set).
 * Returns 1, or 0 when the value could not be scanned. */
int bw_mx_scan(const bw_matcher_t *m, bw_str_t value, uint64_t *hits);

#endif /* BW_MATCHER_INT_H */
