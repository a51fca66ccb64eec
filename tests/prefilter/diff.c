/*
 * The prefilter's full differential test (the invariant "the literal
 * prefilter never hides a match"): every @rx of CRS 3.3.4 (Debian's rules)
 * and CRS v4, against every value of both CRS regression suites (raw,
 * URL-decoded, lower/upper-cased), the benign corpus beside this file, and
 * random strings generated from each regex. A regex the scan splits into
 * its alternatives (bw_prefilter_alternatives) must match a subject
 * exactly when one of its alternatives does. Prints the statistics and a
 * closing line "prefilter-diff: N passed, M failed" counting regexes with a
 * literal set and split regexes (passed: no disagreement), CRS ones and
 * random ones (fuzz.c). Exit status 1 on any failure or when the data is
 * missing.
 *
 *   diff [-m MIN_LEN] [-n SAMPLES] [-f RANDOM_REGEXES] [-s SEED] [-v]
 *        [--rules DIR]... [--tests DIR]... [--benign FILE] [--fuzz-only]
 * Defaults: where tools/crs/crsdata.py found CRS (see corpus.h): rules
 * BW_CRS_RULES (3.3.4) and $BW_CRS_V4_DIR/rules, tests
 * $BW_CRS_V4_DIR/tests/regression/tests and BW_CRS_V3_TESTS when there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

#ifndef BW_SRCDIR
#define BW_SRCDIR "."
#endif

typedef struct {
    apr_array_header_t *rules, *tests;
    const char *benign;
    size_t min_len;
    int samples, fuzz, fuzz_only, verbose;
    uint32_t seed;
} opts_t;

static void defaults(apr_pool_t *p, opts_t *o)
{
    const char *v4 = pf_crs_v4_dir(p, BW_SRCDIR), *v3tests = pf_crs_v3_tests(p, BW_SRCDIR);
    if (o->rules->nelts == 0) {
        APR_ARRAY_PUSH(o->rules, const char *) = pf_crs_v3_rules();
        APR_ARRAY_PUSH(o->rules, const char *) = apr_pstrcat(p, v4, "/rules", NULL);
    }
    if (o->tests->nelts == 0) {
        if (v3tests)
            APR_ARRAY_PUSH(o->tests, const char *) = v3tests;
        APR_ARRAY_PUSH(o->tests, const char *) =
            apr_pstrcat(p, v4, "/tests/regression/tests", NULL);
    }
    if (!o->benign)
        o->benign = BW_SRCDIR "/tests/prefilter/benign.txt";
}

static int parse_args(apr_pool_t *p, int argc, char **argv, opts_t *o)
{
    int i;
    memset(o, 0, sizeof(*o));
    o->rules = apr_array_make(p, 4, sizeof(const char *));
    o->tests = apr_array_make(p, 4, sizeof(const char *));
    o->min_len = 1;
    o->samples = 300;
    o->fuzz = 20000;
    o->seed = 12345;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v") || !strcmp(a, "--fuzz-only")) {
            *(a[1] == 'v' ? &o->verbose : &o->fuzz_only) = 1;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (!strcmp(a, "-m"))
            o->min_len = (size_t)atoi(v);
        else if (!strcmp(a, "-n"))
            o->samples = atoi(v);
        else if (!strcmp(a, "-f"))
            o->fuzz = atoi(v);
        else if (!strcmp(a, "-s"))
            o->seed = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--rules"))
            APR_ARRAY_PUSH(o->rules, const char *) = v;
        else if (!strcmp(a, "--tests"))
            APR_ARRAY_PUSH(o->tests, const char *) = v;
        else if (!strcmp(a, "--benign"))
            o->benign = v;
        else
            return -1;
    }
    defaults(p, o);
    return 0;
}

/* Per-regex statistics of the literal sets. */
static void print_sets(const pf_diff_t *d, int nrx, int macros)
{
    int i, j, with = 0, bad = 0, nocase = 0, total = 0, gen = 0;
    size_t minlit = (size_t)-1, sum_short = 0;

    for (i = 0; i < d->pats->nelts; i++) {
        const pf_dpat_t *pt = &APR_ARRAY_IDX(d->pats, i, pf_dpat_t);
        size_t shortest = (size_t)-1;
        bad += pt->re == NULL;
        gen += pt->gen != NULL;
        if (!pt->re || !pt->lits)
            continue;
        with++;
        nocase += pt->nocase;
        total += pt->lits->nelts;
        for (j = 0; j < pt->lits->nelts; j++) {
            size_t l = APR_ARRAY_IDX(pt->lits, j, bw_str_t).len;
            shortest = l < shortest ? l : shortest;
        }
        minlit = shortest < minlit ? shortest : minlit;
        sum_short += shortest;
    }
    printf("regexes: %d @rx operators (%d with %%{macros} left out), %d distinct, "
           "%d rejected by PCRE2\n", nrx, macros, d->pats->nelts, bad);
    printf("literal sets (min_len %lu): %d of %d distinct regexes (%.1f%%), always-run %d; "
           "%d nocase\n", (unsigned long)d->min_len, with, d->pats->nelts - bad,
           100.0 * with / (d->pats->nelts - bad ? d->pats->nelts - bad : 1),
           d->pats->nelts - bad - with, nocase);
    printf("set size: average %.2f literals; shortest literal %lu bytes, "
           "average shortest per set %.2f\n", with ? (double)total / with : 0.0,
           (unsigned long)(with ? minlit : 0), with ? (double)sum_short / with : 0.0);
    printf("generator reads %d of %d distinct regexes\n", gen, d->pats->nelts);
}

/* Share of PCRE2 runs the prefilter skips for the subjects checked since
 * the last call: over regexes with a set, and over all compiled regexes. */
static void print_ruleout(const pf_diff_t *d, const char *what, int nsubjects, long mark[2])
{
    long pairs = 0, out = 0;
    int i, compiled = 0;
    for (i = 0; i < d->pats->nelts; i++) {
        const pf_dpat_t *pt = &APR_ARRAY_IDX(d->pats, i, pf_dpat_t);
        compiled += pt->re != NULL;
        pairs += pt->pairs;
        out += pt->ruled_out;
    }
    printf("rule-out, %s (%d subjects): %.2f%% of pairs of regexes with a set, "
           "%.2f%% of all PCRE2 runs skipped\n", what, nsubjects,
           pairs > mark[0] ? 100.0 * (double)(out - mark[1]) / (double)(pairs - mark[0]) : 0.0,
           nsubjects ? 100.0 * (double)(out - mark[1]) / ((double)compiled * nsubjects) : 0.0);
    mark[0] = pairs;
    mark[1] = out;
}

/* The closing line: CRS regexes passed and failed (none when only random
 * ones ran), plus the random ones with a set or split; the exit status. */
static int closing_line(long passed, long failed, const pf_fuzz_stats_t *fz)
{
    printf("prefilter-diff: %ld passed, %ld failed\n",
           passed + fz->with_set - fz->failures + fz->split - fz->split_failures,
           failed + fz->failures + fz->split_failures);
    return failed || fz->failures || fz->split_failures ? 1 : 0;
}

/* The closing line counts regexes: CRS ones with a literal set and split
 * ones, plus the random ones with a set (all must agree with PCRE2 on
 * every subject). */
static int print_results(const pf_diff_t *d, const pf_fuzz_stats_t *fz)
{
    long pairs = 0, out = 0, matched = 0, limits = 0, gen = 0, bad = 0, passed = 0, failed = 0;
    long split = 0, split_pairs = 0, split_bad = 0;
    int i;
    for (i = 0; i < d->pats->nelts; i++) {
        const pf_dpat_t *pt = &APR_ARRAY_IDX(d->pats, i, pf_dpat_t);
        if (pt->alts || pt->split_failures) {   /* a regex split: one more check */
            split++;
            split_pairs += pt->split_pairs;
            split_bad += pt->split_failures;
            if (pt->split_failures)
                failed++;
            else
                passed++;
        }
        if (!pt->re || !pt->lits)
            continue;
        pairs += pt->pairs;
        out += pt->ruled_out;
        matched += pt->matched;
        limits += pt->limit_hits;
        gen += pt->gen_matched;
        bad += pt->failures;
        if (pt->failures)
            failed++;
        else
            passed++;
    }
    printf("corpus pairs (regex with a set x subject): %ld; PCRE2 matched %ld, "
           "limit hit %ld; prefilter ruled out %ld (%.2f%%)\n", pairs, matched, limits,
           out, pairs ? 100.0 * (double)out / (double)pairs : 0.0);

    printf("generated subjects matching their regex: %ld\n", gen);
    printf("disagreements (PCRE2 matched, prefilter said no): %ld\n", bad);
    printf("regexes split into alternatives: %ld, subjects checked %ld, "
           "disagreements (the regex and its alternatives): %ld\n", split, split_pairs, split_bad);
    return closing_line(passed, failed, fz);
}

static void print_fuzz(const pf_fuzz_stats_t *fz)
{
    printf("random regexes: %ld built, %ld compiled, %ld with a literal set; %ld subjects, "
           "%ld matched; regexes disagreeing: %ld\n", fz->regexes, fz->compiled, fz->with_set,
           fz->checks, fz->matched, fz->failures);
    printf("random regexes split into alternatives: %ld, subjects %ld; disagreeing: %ld\n",
           fz->split, fz->split_checks, fz->split_failures);
}

/* --fuzz-only: random regexes alone, for long runs with many seeds. */
static int fuzz_only(apr_pool_t *p, const opts_t *o)
{
    pf_fuzz_stats_t fz;
    memset(&fz, 0, sizeof(fz));
    pf_fuzz_run(p, o->fuzz, o->seed, 200, &fz);
    print_fuzz(&fz);
    return closing_line(0, 0, &fz);
}

int main(int argc, char **argv)
{
    apr_pool_t *p;
    opts_t o;
    apr_array_header_t *rxs;
    pf_payloads_t pl, benign;
    pf_diff_t d;
    pf_fuzz_stats_t fz;
    long mark[2] = { 0, 0 };
    int i, macros = 0, files = 0, rc, yfiles = 0, lines;

    apr_initialize();
    apr_pool_create(&p, NULL);
    if (parse_args(p, argc, argv, &o) != 0) {
        fprintf(stderr, "usage: %s [-m MIN_LEN] [-n SAMPLES] [-f RANDOM_REGEXES] [-s SEED] [-v]"
                " [--rules DIR]... [--tests DIR]... [--benign FILE] [--fuzz-only]\n", argv[0]);
        return 2;
    }
    if (o.fuzz_only)
        return fuzz_only(p, &o);
    rxs = apr_array_make(p, 1024, sizeof(pf_rx_t));
    for (i = 0; i < o.rules->nelts; i++) {
        int n = pf_corpus_load_rx(p, APR_ARRAY_IDX(o.rules, i, const char *), rxs, &macros);
        if (n <= 0)
            fprintf(stderr, "prefilter-diff: no rule files in %s\n",
                    APR_ARRAY_IDX(o.rules, i, const char *));
        files += n > 0 ? n : 0;
    }
    pf_payloads_init(p, &pl);
    for (i = 0; i < o.tests->nelts; i++)
        yfiles += pf_corpus_load_yaml_dir(&pl, APR_ARRAY_IDX(o.tests, i, const char *));
    lines = pf_corpus_load_lines(&pl, o.benign);
    printf("data: %d rule files, %d YAML test files, %d benign lines -> %d distinct subjects\n",
           files, yfiles, lines, pl.items->nelts);
    if (files == 0 || yfiles == 0 || lines <= 0) {
        printf("prefilter-diff: 0 passed, 1 failed (test data missing)\n");
        return 1;
    }
    pf_diff_init(&d, p, rxs, o.min_len);
    d.verbose = o.verbose;
    print_sets(&d, rxs->nelts, macros);
    pf_diff_subjects(&d, pl.items, pf_diff_lower_all(p, pl.items));
    print_ruleout(&d, "CRS test payloads + benign", pl.items->nelts, mark);
    pf_payloads_init(p, &benign);
    pf_corpus_load_lines(&benign, o.benign);
    pf_diff_subjects(&d, benign.items, pf_diff_lower_all(p, benign.items));
    print_ruleout(&d, "benign corpus alone (checked twice)", benign.items->nelts, mark);
    pf_diff_generated(&d, o.samples, o.seed);
    memset(&fz, 0, sizeof(fz));
    pf_fuzz_run(p, o.fuzz, o.seed, 200, &fz);
    print_fuzz(&fz);
    rc = print_results(&d, &fz);
    pf_diff_free(&d);
    apr_pool_destroy(p);
    apr_terminate();
    return rc;
}
