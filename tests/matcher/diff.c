/*
 * The matcher's differential test: every @rx of CRS 3.3.4 and v4 in one
 * multi-pattern matcher (apache2/matcher), scanned over every CRS test
 * payload (with its decoded and case-changed forms), the benign corpus and
 * strings generated from each regex; each verdict compared with PCRE2
 * compiled as @rx compiles:
 *   - a PCRE2 match whose bit the scan left clear is a missed match (the
 *     one thing a matcher must never do);
 *   - a set bit the matcher calls exact where PCRE2 finds no match is a
 *     false exact (it would turn into a match without PCRE2 confirming).
 * Last line: matcher-diff: N passed, M failed (patterns without / with a
 * missed match or false exact).
 *
 * Data is read at run time where tools/crs/crsdata.py found it (see
 * tests/prefilter/corpus.h): BW_CRS_RULES (3.3.4 rules), BW_CRS_V4_DIR
 * (v4 rules and tests), BW_CRS_V3_TESTS (when there).
 * Options: -g N generated strings per regex (default 8), -v verbose.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"
#include "base/bw_regex.h"
#include "matcher/bw_matcher.h"

#ifndef BW_SRCDIR
#define BW_SRCDIR "."
#endif

typedef struct {
    const pf_rx_t *rx;
    pcre2_code *re;
    int bit;
    pf_gen_t *gen;
    long missed, false_exact, matched;
    bw_str_t example;
} dpat_t;

static pcre2_code *compile_rx(bw_str_t p)
{
    int ec;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)p.data, p.len, PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY,
                                   &ec, &off, NULL);
    if (re)
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    return re;
}

/* One subject through the matcher and through PCRE2, for every pattern. */
static void check(apr_pool_t *p, const bw_matcher_t *m, dpat_t *pats, int n, bw_str_t s,
                  pcre2_match_data *md, pcre2_match_context *mc, uint64_t *hits)
{
    const uint64_t *exact = bw_matcher_exact(m);
    int w, i, ok;
    for (w = 0; w < bw_matcher_words(m); w++)
        hits[w] = 0;
    ok = bw_matcher_scan(m, s, hits);
    for (i = 0; i < n; i++) {
        dpat_t *d = &pats[i];
        uint64_t bit = (uint64_t)1 << (d->bit % 64);
        int rc = pcre2_match(d->re, (PCRE2_SPTR)(s.data ? s.data : ""), s.len, 0, 0, md, mc);
        int set = (hits[d->bit / 64] & bit) != 0;
        if (rc >= 0) {
            d->matched++;
            if (!set && !d->missed++)
                d->example = bw_str_n(apr_pmemdup(p, s.data, s.len), s.len);
        } else if (rc == PCRE2_ERROR_NOMATCH && set && ok && (exact[d->bit / 64] & bit)) {
            if (!d->false_exact++ && !d->missed)
                d->example = bw_str_n(apr_pmemdup(p, s.data, s.len), s.len);
        }
    }
}

static void print_str(bw_str_t s)
{
    size_t i;
    for (i = 0; i < s.len && i < 160; i++) {
        unsigned char c = (unsigned char)s.data[i];
        printf(c < 0x20 || c >= 0x7f || c == '\\' ? "\\x%02x" : "%c", c);
    }
}

int main(int argc, char **argv)
{
    apr_pool_t *p;
    apr_array_header_t *rxs, *subj;
    pf_payloads_t pl;
    bw_matcher_t *m;
    dpat_t *pats;
    const char *v4, *v3tests, *warning = NULL;
    int macros = 0, n = 0, i, k, gens = 8, verbose = 0, failed = 0;
    pcre2_match_data *md;
    pcre2_match_context *mc;
    uint64_t *hits;
    uint32_t seed = 12345;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-g") && i + 1 < argc)
            gens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
    }
    apr_initialize();
    apr_pool_create(&p, NULL);
    v4 = pf_crs_v4_dir(p, BW_SRCDIR);
    v3tests = pf_crs_v3_tests(p, BW_SRCDIR);
    rxs = apr_array_make(p, 1024, sizeof(pf_rx_t));
    if (pf_corpus_load_rx(p, pf_crs_v3_rules(), rxs, &macros) <= 0
        || pf_corpus_load_rx(p, apr_pstrcat(p, v4, "/rules", NULL), rxs, &macros) <= 0) {
        printf("matcher-diff: CRS rules not found (tools/crs/crsdata.py; BULWARK_CRS_DIR)\n");
        return 2;
    }
    pf_payloads_init(p, &pl);
    pf_corpus_load_yaml_dir(&pl, apr_pstrcat(p, v4, "/tests/regression/tests", NULL));
    if (v3tests)
        pf_corpus_load_yaml_dir(&pl, v3tests);
    pf_corpus_load_lines(&pl, BW_SRCDIR "/tests/prefilter/benign.txt");

    m = bw_matcher_create(p);
    pats = apr_pcalloc(p, sizeof(dpat_t) * (size_t)rxs->nelts);
    for (i = 0; i < rxs->nelts; i++) {
        const pf_rx_t *rx = &APR_ARRAY_IDX(rxs, i, pf_rx_t);
        pcre2_code *re = compile_rx(rx->pattern);
        if (!re)
            continue;
        pats[n].rx = rx;
        pats[n].re = re;
        pats[n].bit = bw_matcher_add_regex(m, rx->pattern.data, rx->pattern.len);
        pats[n].gen = pf_gen_compile(p, rx->pattern.data, rx->pattern.len, 0);
        n++;
    }
    bw_matcher_compile(m, getenv("BW_SCAN_CACHE"), &warning);
    if (warning)
        printf("matcher-diff: %s\n", warning);
    {
        bw_matcher_info_t info;
        bw_matcher_info(m, &info);
        printf("matcher-diff: %s, %d patterns: %d exact, %d maybe, %d always (%d with macros "
               "left out), %d subjects\n", bw_matcher_engine(), n, info.exact, info.maybe,
               info.always, macros, pl.items->nelts);
    }
    md = pcre2_match_data_create(32, NULL);
    mc = pcre2_match_context_create(NULL);
    pcre2_set_match_limit(mc, 1000000);
    hits = apr_pcalloc(p, sizeof(uint64_t) * (size_t)bw_matcher_words(m));
    subj = pl.items;
    for (k = 0; k < subj->nelts; k++)
        check(p, m, pats, n, APR_ARRAY_IDX(subj, k, bw_str_t), md, mc, hits);
    for (i = 0; i < n; i++)
        for (k = 0; pats[i].gen && k < gens; k++) {
            apr_pool_t *tmp;
            apr_pool_create(&tmp, p);
            check(p, m, pats, n, pf_gen_sample(pats[i].gen, tmp, &seed), md, mc, hits);
            apr_pool_destroy(tmp);
        }
    for (i = 0; i < n; i++) {
        dpat_t *d = &pats[i];
        if (!d->missed && !d->false_exact) {
            if (verbose)
                printf("ok   %s:%d id %s: %ld matches\n", d->rx->file, d->rx->line, d->rx->id, d->matched);
            continue;
        }
        failed++;
        printf("FAIL %s:%d id %s: %ld missed, %ld false exact of %ld matches; e.g. \"",
               d->rx->file, d->rx->line, d->rx->id, d->missed, d->false_exact, d->matched);
        print_str(d->example);
        printf("\"\n");
    }
    printf("matcher-diff: %d passed, %d failed\n", n - failed, failed);
    for (i = 0; i < n; i++)
        pcre2_code_free(pats[i].re);
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    apr_pool_destroy(p);
    apr_terminate();
    return failed ? 1 : 0;
}
