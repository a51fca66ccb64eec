/*
 * Test data for the prefilter's differential test, read at run time (never
 * copied into the repository): the @rx patterns of CRS rule files, the
 * payloads of CRS regression YAML files, a benign corpus, and random
 * subjects generated from each regex (gen.c).
 */
#ifndef PF_CORPUS_H
#define PF_CORPUS_H

#include "base/bw_types.h"

/* One @rx of a rule file. */
typedef struct {
    const char *file;       /* base name of the .conf file */
    int line;               /* line the SecRule starts on */
    const char *id;         /* id of the rule or of its chain's head */
    bw_str_t pattern;
    int negated;            /* "!@rx": the invariant is about the match itself */
} pf_rx_t;

/* Every @rx of the *.conf files directly in dir, appended to rxs (pf_rx_t).
 * Patterns with %{macros} are counted in *macros and left out. Returns the
 * number of files read, -1 if dir cannot be opened. */
int pf_corpus_load_rx(apr_pool_t *p, const char *dir, apr_array_header_t *rxs, int *macros);

/* A set of distinct subjects. */
typedef struct {
    apr_pool_t *pool;
    apr_hash_t *seen;
    apr_array_header_t *items;  /* bw_str_t */
} pf_payloads_t;

void pf_payloads_init(apr_pool_t *p, pf_payloads_t *pl);
void pf_payloads_add(pf_payloads_t *pl, bw_str_t s);
/* s, its URL decoding (once and twice), and lower/upper-cased forms. */
void pf_payloads_add_variants(pf_payloads_t *pl, bw_str_t s);

/* Every scalar of every *.yaml below dir (recursively), with variants;
 * encoded_request values are base64-decoded too. Returns files read. */
int pf_corpus_load_yaml_dir(pf_payloads_t *pl, const char *dir);

/* Each line of a text file (with variants), and the whole file as one
 * subject. Returns the number of lines, -1 if the file cannot be read. */
int pf_corpus_load_lines(pf_payloads_t *pl, const char *path);

/* Where the CRS data is, as tools/crs/crsdata.py exported it (tests/run-all
 * and make check do): BW_CRS_RULES (CRS 3.3.4 rules, default Debian's),
 * BW_CRS_V4_DIR (a v4.X.Y directory with rules/ and tests/regression/tests/)
 * and BW_CRS_V3_TESTS (CRS 3.3.4 tests-v2; set but empty when there are
 * none, and then NULL here). Unset, they default to ../shared/crs beside the
 * source tree (src_dir), with v4.28.0 and v3.3.4/tests-v2. */
const char *pf_crs_v3_rules(void);
const char *pf_crs_v4_dir(apr_pool_t *p, const char *src_dir);
const char *pf_crs_v3_tests(apr_pool_t *p, const char *src_dir);

/* Whole file into pool memory; 0 on success. */
int pf_corpus_read_file(apr_pool_t *p, const char *path, bw_str_t *out);

/* Base64 (standard alphabet, padding and whitespace ignored). */
bw_str_t pf_base64_decode(apr_pool_t *p, bw_str_t in);

/* --- random subjects from a regex (gen.c) --- */
typedef struct pf_gen_s pf_gen_t;

/* NULL when the regex uses syntax the generator does not know. */
pf_gen_t *pf_gen_compile(apr_pool_t *p, const char *pattern, size_t len, int caseless);

/* One random string the regex is likely (not certain) to match; memory in p.
 * *state is the random generator's state (any non-zero start). */
bw_str_t pf_gen_sample(const pf_gen_t *g, apr_pool_t *p, uint32_t *state);

uint32_t pf_rand(uint32_t *state);

/* --- the differential check (diffcore.c) --- */

/* One distinct regex under test. */
typedef struct {
    bw_str_t pattern;
    const pf_rx_t *rule;        /* first rule using it */
    int nrules;                 /* rules using it */
    void *re;                   /* pcre2_code, NULL if PCRE2 rejects it */
    apr_array_header_t *lits;   /* the literal set, NULL: always run */
    int nocase;
    const char *why;            /* why there is no set */
    pf_gen_t *gen;              /* NULL: the generator cannot read it */
    long pairs, ruled_out, matched, limit_hits, failures, gen_matched;
    /* its alternatives (bw_prefilter_alternatives), each compiled: a
     * subject matches the regex iff it matches one of them */
    apr_array_header_t *alts;   /* pcre2_code *, NULL: not split */
    long split_pairs, split_failures;
} pf_dpat_t;

typedef struct {
    apr_pool_t *pool;           /* a subpool, destroyed by pf_diff_free */
    apr_array_header_t *pats;   /* pf_dpat_t */
    size_t min_len;
    int verbose;                /* print every disagreement (else the first 20) */
    long reported;
    void *md, *mctx;            /* PCRE2 match data and context */
} pf_diff_t;

/* Distinct patterns of rxs, compiled and with their literal sets. The
 * results live until pf_diff_free. */
void pf_diff_init(pf_diff_t *d, apr_pool_t *p, const apr_array_header_t *rxs, size_t min_len);
/* Every pattern against every subject (lower: the ASCII-lowered subjects). */
void pf_diff_subjects(pf_diff_t *d, const apr_array_header_t *subjects,
                      const apr_array_header_t *lower);
/* Per pattern, n generated samples (each also wrapped in text and re-cased). */
void pf_diff_generated(pf_diff_t *d, int n, uint32_t seed);
/* ASCII-lowered copies of subjects. */
apr_array_header_t *pf_diff_lower_all(apr_pool_t *p, const apr_array_header_t *subjects);
void pf_diff_free(pf_diff_t *d);

/* A split regex's alternatives compiled as @rx compiles (flags: PCRE2
 * options besides DOTALL and DOLLAR_ENDONLY), freed with pool: an array of
 * pcre2_code *, or NULL when PCRE2 rejects one (diffcore.c). */
apr_array_header_t *pf_alts_compile(apr_pool_t *pool, const apr_array_header_t *alts,
                                    uint32_t flags);
/* Does one of them match s? 1, 0, or -1 on a limit or error (md, mctx:
 * pcre2_match_data *, pcre2_match_context * or NULL). */
int pf_alts_match(const apr_array_header_t *codes, bw_str_t s, void *md, void *mctx);

/* --- random regexes (fuzz.c) --- */
typedef struct {
    long regexes, compiled, with_set, checks, matched;
    long failures;              /* regexes with at least one disagreement */
    long split, split_checks;   /* regexes split into alternatives, subjects */
    long split_failures;        /* of them, regexes the alternatives disagree with */
} pf_fuzz_stats_t;

/* n random regexes (PCRE2 compiles only some), each with a literal set
 * checked against `subjects` random and generated subjects. */
void pf_fuzz_run(apr_pool_t *p, int n, uint32_t seed, int subjects, pf_fuzz_stats_t *st);

#endif /* PF_CORPUS_H */
