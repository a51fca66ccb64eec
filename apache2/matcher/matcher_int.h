/*
 * Inside apache2/matcher/ only: the patterns a matcher collects and the two
 * functions each implementation (matcher_hs.c, matcher_ac.c) provides.
 */
#ifndef BW_MATCHER_INT_H
#define BW_MATCHER_INT_H

#include "matcher/bw_matcher.h"
#include "base/bw_regex.h"

enum { MX_REGEX, MX_PHRASE };
enum { MX_EXACT = 0, MX_MAYBE = 1, MX_ALWAYS = 2 };   /* what a bit's hit means */

/* What a regex's text says (matcher.c, mx_regex_traits). */
/* What a pattern's text says (matcher.c, mx_traits). */
#define MX_T_LINE      0x01   /* a ^, $, \A, \z or \Z anchor: a newline or MX_SEP in the
                               * value makes its hit maybe */
#define MX_T_WHOLE     0x02   /* scanned value by value, never joined: a regex with \G or an
                               * inline m option, one that matches across the
                               * newline between joined values where no value has a match
                               * (matcher.c, joins_badly), an empty phrase or one with a newline */
#define MX_T_UNIVERSAL 0x04   /* matches every value (^.*$, .*): not scanned for */
#define MX_T_BYTES     0x08   /* one atom matching one byte (., \w, [^;]…): matches a value
                               * that has a byte of mx_pat_t.bytes; not scanned for */
#define MX_T_COUNT     0x10   /* (?:C[^C]*?){n}: a value with mx_pat_t.min bytes of the class */
#define MX_T_RUN       0x20   /* C{n}: a value with mx_pat_t.min bytes of the class in a row */
#define MX_T_BY_BYTES  (MX_T_BYTES | MX_T_COUNT | MX_T_RUN)   /* matcher_decided.c */
#define MX_T_SET       0x40   /* ^(?:GET|HEAD)$, @streq: matches the strings of a small
                               * finite set, the whole value (matcher_decided.c) */
#define MX_T_DECIDED   (MX_T_UNIVERSAL | MX_T_BY_BYTES | MX_T_SET)   /* in no database */

/* The byte between joined values (bw_matcher_scan_many): one no rule set
 * writes and no UTF-8 text has, neither space nor word. */
#define MX_SEP BW_MATCHER_SEP

/* The strings an MX_T_SET regex matches, whole (matcher_decided.c). */
typedef struct {
    int n;
    int nocase;         /* ASCII letters compared without case */
    size_t minlen, maxlen;
    const bw_str_t *v;
} mx_set_t;

typedef struct {
    int kind;           /* MX_REGEX or MX_PHRASE */
    int bit;
    bw_str_t text;      /* regex source, or the phrase's bytes */
    bw_str_t jtext;     /* a regex as joined values are scanned for it: each ^
                         * and $ also matches MX_SEP (matcher.c) */
    int nocase;         /* phrases: ASCII case-insensitive */
    unsigned traits;    /* MX_T_* */
    uint64_t bytes[4];  /* MX_T_BY_BYTES: the bytes of its class */
    int min;            /* MX_T_BY_BYTES: how many (1 for MX_T_BYTES) */
    const mx_set_t *set; /* MX_T_SET */
} mx_pat_t;

/* A pattern the bytes of a value decide, for deciding (matcher_decided.c);
 * a value without a byte of its class matches none. */
typedef struct {
    int bit;
    unsigned shape;     /* MX_T_BYTES (n = 1: a byte of the class), MX_T_COUNT or MX_T_RUN */
    int min;
} mx_decided_t;
typedef struct {
    uint64_t set[4];
    unsigned char tab[256];   /* the same, 1 per byte of the class */
    int measured;             /* a count or a run: the value is read */
    int first, npats;         /* its patterns in bw_matcher_s.decided */
} mx_class_t;

struct bw_matcher_s {
    apr_pool_t *pool;
    apr_array_header_t *pats;       /* mx_pat_t, in bit order (phrases share a bit) */
    int nbits, nwords;
    unsigned char *kind;            /* per bit: MX_EXACT, MX_MAYBE or MX_ALWAYS */
    uint64_t *exact, *always;
    uint64_t *line, *univ;          /* bw_matcher_line, bw_matcher_universal */
    int scans;                      /* a pattern a database scan may set the bit of; the
                                     * others' bits are fixed (always, universal) or
                                     * read from a value's bytes (byte patterns) */
    int literal;                    /* every pattern that can be joined is a phrase:
                                     * joined scans report every occurrence */
    int compiled;
    int nbyte;                      /* decided patterns (MX_T_BY_BYTES and MX_T_SET) */
    const mx_decided_t *decided;    /* the MX_T_BY_BYTES ones, by class */
    int nclass;
    const mx_class_t *classes;
    int compare_sets;               /* bw_matcher_compare_sets */
    int nset;                       /* the MX_T_SET ones */
    const mx_pat_t *const *sets;
    bw_matcher_info_t info;
    void *impl;                     /* the implementation's compiled form */
    const pcre2_code *lone;         /* the one regex a scan looks for, when it is
                                     * alone: run by PCRE2 on one short value
                                     * (bw_matcher_scan_many), its bit lone_bit */
    int lone_bit;
    pcre2_match_context *lone_mc;   /* its step limit */
    int nfew;                       /* or the few phrases a scan looks for, */
    const mx_pat_t *few;            /* searched for in one short value (nocase
                                     * ones lowercase) */
};

/* The shape of regex re when its bytes decide it (matcher_decided.c):
 * MX_T_BYTES, MX_T_COUNT or MX_T_RUN, with the class's bytes and n; 0 when
 * it is none of them (or PCRE2 disagrees). */
unsigned mx_decided_shape(apr_pool_t *pool, bw_str_t re, uint64_t bytes[4], int *min);
/* The strings regex re matches when it is a small finite set of whole
 * values (matcher_decided.c), or NULL (or PCRE2 disagrees). */
const mx_set_t *mx_set_shape(apr_pool_t *pool, bw_str_t re);
/* After compiling: the decided patterns, gathered for deciding. */
void mx_decided_gather(bw_matcher_t *m);
/* Set in bits the bits of the decided patterns that value v, with bytes
 * `present`, matches (only those of bits in want, when not NULL); nonzero
 * when one did. */
int mx_decided_hits(const bw_matcher_t *m, bw_str_t v, const uint64_t *present,
                    const uint64_t *want, uint64_t *bits);

/* Fill m->kind (every bit, after compiling; universal patterns are left
 * out: their bits are MX_EXACT and in m->univ) and m->impl; warnings to
 * *warning. */
void bw_mx_compile(bw_matcher_t *m, const char *cache_dir, const char **warning);
/* Does regex p (not universal) match across the newline between joined
 * values where no value alone has a match, on common values? Then it
 * would call for a rescan at every such value: it is scanned value by
 * value instead (MX_T_WHOLE). Only speed depends on the answer. */
int bw_mx_joins_badly(const mx_pat_t *p);
/* Which patterns a scan of one value runs. */
enum { MX_SCAN_ALL, MX_SCAN_JOINED, MX_SCAN_WHOLE };
/* Set the bits of the patterns of `which` that may match value (not the
 * always or universal sets): all of them, those that can be joined (not
 * MX_T_WHOLE), or only the MX_T_WHOLE ones. Returns 1, or 0 when the value
 * could not be scanned. */
int bw_mx_scan(const bw_matcher_t *m, bw_str_t value, uint64_t *hits, int which);
/* Does the implementation scan joined values (bw_mx_scan_joined), and
 * does it have MX_T_WHOLE patterns? */
int bw_mx_joins(const bw_matcher_t *m);
int bw_mx_has_whole(const bw_matcher_t *m);
/* A match of pattern bit `bit` in joined values, ending at `to`
 * (exclusive); nonzero stops the scan. */
typedef int (*mx_joined_fn)(void *ctx, int bit, size_t to);
/* The patterns that can be joined, over data: 0 the scan ended, 1 f
 * stopped it, -1 an error. In a literal matcher (m->literal) every
 * occurrence of every phrase is reported; otherwise each pattern is
 * reported once at most. */
int bw_mx_scan_joined(const bw_matcher_t *m, const char *data, size_t len, mx_joined_fn f,
                      void *ctx);

#endif /* BW_MATCHER_INT_H */
