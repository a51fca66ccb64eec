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
 * Both are checked for each subject scanned alone and for subjects scanned
 * joined, many at once (bw_matcher_scan_many), in runs of several lengths.
 * Where PCRE2 hits its match limit it says nothing, so neither answer of
 * the scan is counted, alone or joined (CRS v4.25's 941140 on a PHP
 * serialized payload: the scan rules it out exactly, without backtracking).
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
#include "prefilter/bw_prefilter.h"

#ifndef BW_SRCDIR
#define BW_SRCDIR "."
#endif

typedef struct {
    const pf_rx_t *rx;
    pcre2_code *re;
    int bit;
    pf_gen_t *gen;
    long missed, false_exact, matched;
    long joined_missed, joined_false_exact;
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

/* Is a set bit of pattern d a match, as the matcher says, for subject s?
 * (an anchored regex's hit is exact only without a newline or the
 * separator byte in the subject: bw_matcher_line) */
static int said_exact(const bw_matcher_t *m, const dpat_t *d, bw_str_t s)
{
    uint64_t bit = (uint64_t)1 << (d->bit % 64);
    if (!(bw_matcher_exact(m)[d->bit / 64] & bit))
        return 0;
    return !(bw_matcher_line(m)[d->bit / 64] & bit)
           || (!memchr(s.data, '\n', s.len) && !memchr(s.data, BW_MATCHER_SEP, s.len));
}

/* One subject through PCRE2 (truth: a bit per pattern) and through the
 * matcher alone. */
static void check(apr_pool_t *p, const bw_matcher_t *m, dpat_t *pats, int n, bw_str_t s,
                  pcre2_match_data *md, pcre2_match_context *mc, uint64_t *hits, uint64_t *truth,
                  uint64_t *unsure)
{
    int w, i, ok;
    for (w = 0; w < bw_matcher_words(m); w++)
        hits[w] = truth[w] = unsure[w] = 0;
    ok = bw_matcher_scan(m, s, hits);
    for (i = 0; i < n; i++) {
        dpat_t *d = &pats[i];
        uint64_t bit = (uint64_t)1 << (d->bit % 64);
        int rc = pcre2_match(d->re, (PCRE2_SPTR)(s.data ? s.data : ""), s.len, 0, 0, md, mc);
        int set = (hits[d->bit / 64] & bit) != 0;
        if (rc >= 0) {
            truth[d->bit / 64] |= bit;
            d->matched++;
            if (!set && !d->missed++)
                d->example = bw_str_n(apr_pmemdup(p, s.data, s.len), s.len);
        } else if (rc == PCRE2_ERROR_NOMATCH && set && ok && said_exact(m, d, s)) {
            if (!d->false_exact++ && !d->missed)
                d->example = bw_str_n(apr_pmemdup(p, s.data, s.len), s.len);
        } else if (rc != PCRE2_ERROR_NOMATCH) {
            /* a limit: PCRE2 cannot say, either answer of the scan is one */
            unsure[d->bit / 64] |= bit;
        }
    }
}

/* The joined scan of many subjects: hits per subject, from the callback. */
typedef struct {
    uint64_t *hits;     /* n * words */
    int words;
} many_t;

static void on_many(void *ctx, int i, const uint64_t *bits)
{
    many_t *mt = ctx;
    int w;
    for (w = 0; w < mt->words; w++)
        mt->hits[(size_t)i * (size_t)mt->words + (size_t)w] |= bits[w];
}

/* Subjects [0, n) scanned joined (scratch from p), compared with their
 * truth where PCRE2 could decide (unsure: it hit its limit, which check()
 * does not count either); a failure's example is kept in keep. */
static void check_many(apr_pool_t *p, apr_pool_t *keep, const bw_matcher_t *m, dpat_t *pats,
                       int np, const bw_str_t *s, const uint64_t *truth, const uint64_t *unsure,
                       int n, bw_matcher_buf_t *buf)
{
    int words = bw_matcher_words(m), i, k, w, ok;
    many_t mt;
    /* each subject's bytes, as the executor hands them over: the regexes
     * of one byte-class atom are decided from them */
    uint64_t *bytes = apr_pcalloc(p, sizeof(uint64_t) * 4 * (size_t)n);
    const uint64_t **present = apr_palloc(p, sizeof(uint64_t *) * (size_t)n);
    for (i = 0; i < n; i++) {
        size_t j;
        for (j = 0; j < s[i].len; j++) {
            unsigned char c = (unsigned char)s[i].data[j];
            bytes[4 * (size_t)i + c / 64] |= (uint64_t)1 << (c % 64);
        }
        present[i] = &bytes[4 * (size_t)i];
    }
    mt.words = words;
    mt.hits = apr_pcalloc(p, sizeof(uint64_t) * (size_t)words * (size_t)n);
    ok = bw_matcher_scan_many(m, s, present, n, p, buf, on_many, &mt);
    for (i = 0; i < n; i++) {
        uint64_t *h = &mt.hits[(size_t)i * (size_t)words];
        for (w = 0; w < words; w++)
            h[w] |= bw_matcher_always(m)[w] | bw_matcher_universal(m)[w];
        for (k = 0; k < np; k++) {
            dpat_t *d = &pats[k];
            uint64_t bit = (uint64_t)1 << (d->bit % 64);
            int set = (h[d->bit / 64] & bit) != 0;
            int match = (truth[(size_t)i * (size_t)words + (size_t)(d->bit / 64)] & bit) != 0;
            if (unsure[(size_t)i * (size_t)words + (size_t)(d->bit / 64)] & bit)
                continue;
            if (match && !set) {
                if (!d->joined_missed++ && !d->missed && !d->false_exact)
                    d->example = bw_str_n(apr_pmemdup(keep, s[i].data, s[i].len), s[i].len);
            } else if (!match && set && ok && said_exact(m, d, s[i])) {
                if (!d->joined_false_exact++ && !d->missed && !d->false_exact)
                    d->example = bw_str_n(apr_pmemdup(keep, s[i].data, s[i].len), s[i].len);
            }
        }
    }
}

/* ---- phrases: the literal sets of the regexes, as triggers are made ---- */

typedef struct {
    apr_array_header_t *lits;   /* bw_str_t */
    int nocase, bit;
    long missed, false_hit, joined_missed, joined_false_hit;
} dphrase_t;

static int has_lit(bw_str_t s, bw_str_t lit, int nocase)
{
    size_t i, j;
    if (lit.len > s.len)
        return 0;
    for (i = 0; i + lit.len <= s.len; i++) {
        for (j = 0; j < lit.len; j++) {
            unsigned char a = (unsigned char)s.data[i + j], b = (unsigned char)lit.data[j];
            if (nocase && a >= 'A' && a <= 'Z')
                a = (unsigned char)(a + 32);
            if (nocase && b >= 'A' && b <= 'Z')
                b = (unsigned char)(b + 32);
            if (a != b)
                break;
        }
        if (j == lit.len)
            return 1;
    }
    return 0;
}

static int phrase_truth(const dphrase_t *d, bw_str_t s)
{
    int i;
    for (i = 0; i < d->lits->nelts; i++)
        if (has_lit(s, APR_ARRAY_IDX(d->lits, i, bw_str_t), d->nocase))
            return 1;
    return 0;
}

/* Phrases are exact: a set bit is an occurrence, a clear one none. truth
 * holds the answers for s, computed when null (a bit per set). */
static void judge_phrases(dphrase_t *ph, int n, const uint64_t *hits, bw_str_t s, uint64_t *truth,
                          int known, int joined)
{
    int i;
    for (i = 0; i < n; i++) {
        dphrase_t *d = &ph[i];
        int set = (hits[d->bit / 64] >> (d->bit % 64)) & 1, t;
        if (!known && phrase_truth(d, s))
            truth[d->bit / 64] |= (uint64_t)1 << (d->bit % 64);
        t = (truth[d->bit / 64] >> (d->bit % 64)) & 1;
        if (t && !set)
            joined ? d->joined_missed++ : d->missed++;
        else if (!t && set)
            joined ? d->joined_false_hit++ : d->false_hit++;
    }
}

/* Every regex's literal set as one phrase bit, the subjects alone and
 * joined; returns the number of failed sets. */
static int check_phrases(apr_pool_t *p, const dpat_t *pats, int n, const bw_str_t *subj, int ns)
{
    bw_matcher_t *m = bw_matcher_create(p);
    dphrase_t *ph = apr_pcalloc(p, sizeof(dphrase_t) * (size_t)(n + 1));
    const char *warning = NULL;
    uint64_t *hits, *truth;
    int np = 0, i, k, words, failed = 0;
    bw_matcher_buf_t buf;
    for (i = 0; i < n; i++) {
        apr_array_header_t *lits = NULL;
        int nocase = 0, j;
        if (!bw_prefilter_extract(p, pats[i].rx->pattern.data, pats[i].rx->pattern.len, 0, 2,
                                  &lits, &nocase))
            continue;
        ph[np].lits = lits;
        ph[np].nocase = nocase;
        ph[np].bit = np;
        for (j = 0; j < lits->nelts; j++)
            bw_matcher_add_literal_as(m, APR_ARRAY_IDX(lits, j, bw_str_t), nocase, np);
        np++;
    }
    bw_matcher_compile(m, getenv("BW_SCAN_CACHE"), &warning);
    words = bw_matcher_words(m);
    hits = apr_pcalloc(p, sizeof(uint64_t) * (size_t)words);
    truth = apr_pcalloc(p, sizeof(uint64_t) * (size_t)words * (size_t)(ns + 1));
    for (k = 0; k < ns; k++) {
        memset(hits, 0, sizeof(uint64_t) * (size_t)words);
        bw_matcher_scan(m, subj[k], hits);
        judge_phrases(ph, np, hits, subj[k], &truth[(size_t)k * (size_t)words], 0, 0);
    }
    memset(&buf, 0, sizeof(buf));
    for (k = 0; k < ns; k += 50) {
        int len = ns - k < 50 ? ns - k : 50;
        apr_pool_t *tmp;
        many_t mt;
        apr_pool_create(&tmp, p);
        mt.words = words;
        mt.hits = apr_pcalloc(tmp, sizeof(uint64_t) * (size_t)words * (size_t)len);
        bw_matcher_scan_many(m, subj + k, NULL, len, tmp, &buf, on_many, &mt);
        for (i = 0; i < len; i++)
            judge_phrases(ph, np, &mt.hits[(size_t)i * (size_t)words], subj[k + i],
                          &truth[(size_t)(k + i) * (size_t)words], 1, 1);
        apr_pool_destroy(tmp);
        memset(&buf, 0, sizeof(buf));
    }
    for (i = 0; i < np; i++) {
        const dphrase_t *d = &ph[i];
        if (d->missed || d->false_hit || d->joined_missed || d->joined_false_hit) {
            failed++;
            printf("FAIL phrases of %s: %ld missed, %ld false; joined: %ld missed, %ld false\n",
                   APR_ARRAY_IDX(d->lits, 0, bw_str_t).data, d->missed, d->false_hit,
                   d->joined_missed, d->joined_false_hit);
        }
    }
    printf("matcher-diff: %d literal sets as phrases, %d failed\n", np, failed);
    return failed;
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
    int macros = 0, n = 0, i, k, gens = 8, verbose = 0, failed = 0, phrases_failed = 0;
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
    /* the small sets of whole values compared, as for a source of one
     * value (program/bw_scan.c): held to PCRE2 with the rest */
    bw_matcher_compare_sets(m);
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
    {
        /* every subject: its truth; then the same subjects joined, in runs
         * of 1, 2, 7, 64 and 300 (one joined scan, a split, value by value) */
        static const int runs[] = { 1, 2, 7, 64, 300 };
        int words = bw_matcher_words(m), ns = 0, cap = pl.items->nelts + n * gens + 1, r = 0;
        bw_str_t *all = apr_palloc(p, sizeof(bw_str_t) * (size_t)cap);
        uint64_t *truth = apr_pcalloc(p, sizeof(uint64_t) * (size_t)words * (size_t)cap);
        uint64_t *unsure = apr_pcalloc(p, sizeof(uint64_t) * (size_t)words * (size_t)cap);
        bw_matcher_buf_t buf;
        subj = pl.items;
        for (k = 0; k < subj->nelts; k++) {
            all[ns] = APR_ARRAY_IDX(subj, k, bw_str_t);
            check(p, m, pats, n, all[ns], md, mc, hits, &truth[(size_t)ns * (size_t)words],
                  &unsure[(size_t)ns * (size_t)words]);
            ns++;
        }
        for (i = 0; i < n; i++)
            for (k = 0; pats[i].gen && k < gens; k++) {
                all[ns] = pf_gen_sample(pats[i].gen, p, &seed);
                check(p, m, pats, n, all[ns], md, mc, hits, &truth[(size_t)ns * (size_t)words],
                      &unsure[(size_t)ns * (size_t)words]);
                ns++;
            }
        memset(&buf, 0, sizeof(buf));
        for (k = 0; k < ns; r++) {
            int len = runs[r % (sizeof(runs) / sizeof(runs[0]))];
            apr_pool_t *tmp;
            if (len > ns - k)
                len = ns - k;
            apr_pool_create(&tmp, p);
            check_many(tmp, p, m, pats, n, all + k, &truth[(size_t)k * (size_t)words],
                       &unsure[(size_t)k * (size_t)words], len, &buf);
            apr_pool_destroy(tmp);
            memset(&buf, 0, sizeof(buf));
            k += len;
        }
        phrases_failed = check_phrases(p, pats, n, all, ns);
    }
    for (i = 0; i < n; i++) {
        dpat_t *d = &pats[i];
        if (!d->missed && !d->false_exact && !d->joined_missed && !d->joined_false_exact) {
            if (verbose)
                printf("ok   %s:%d id %s: %ld matches\n", d->rx->file, d->rx->line, d->rx->id, d->matched);
            continue;
        }
        failed++;
        printf("FAIL %s:%d id %s: %ld missed, %ld false exact of %ld matches; joined: %ld missed, "
               "%ld false exact; e.g. \"", d->rx->file, d->rx->line, d->rx->id, d->missed,
               d->false_exact, d->matched, d->joined_missed, d->joined_false_exact);
        print_str(d->example);
        printf("\"\n");
    }
    printf("matcher-diff: %d passed, %d failed\n", n + 1 - failed - (phrases_failed > 0),
           failed + (phrases_failed > 0));
    for (i = 0; i < n; i++)
        pcre2_code_free(pats[i].re);
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    apr_pool_destroy(p);
    apr_terminate();
    return failed || phrases_failed ? 1 : 0;
}
