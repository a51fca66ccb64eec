/*
 * Unit tests for the @rx literal prefilter (apache2/prefilter/): hand-checked
 * literal sets and "always run" cases, the output contract on every CRS
 * regex, and a sampled run of the differential test of tests/prefilter/
 * (every CRS regex against part of the CRS payloads, the benign corpus,
 * generated samples and random regexes; the full run is tests/prefilter/diff).
 * CRS data is read at test time where tools/crs/crsdata.py found it
 * (BW_CRS_RULES, BW_CRS_V4_DIR, BW_CRS_V3_TESTS; see corpus.h): CRS 3.3.4's
 * tests add payloads when they are there.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prefilter/bw_prefilter.h"
#include "corpus.h"

#ifndef BW_SRCDIR
#define BW_SRCDIR "."
#endif

static apr_pool_t *g_pool;

typedef struct {
    const char *pattern;
    int caseless;
    size_t min_len;
    int nocase;
    const char *lits[6];    /* expected set (any order); { NULL }: always run */
} case_t;

static const case_t CASES[] = {
    { "select", 0, 1, 0, { "select" } },
    { "(?i)SeLect", 0, 1, 1, { "select" } },
    { "SELECT", 1, 1, 1, { "select" } },
    { "abc|def", 0, 1, 0, { "abc", "def" } },
    { "a(b|c)d", 0, 1, 0, { "abd", "acd" } },
    { "colou?r", 0, 1, 0, { "color", "colour" } },
    { "(?:foo)?bar", 0, 1, 0, { "bar" } },
    { "x(?i:AB)y", 0, 1, 1, { "xaby" } },
    { "(?-i)abc", 0, 1, 1, { "abc" } },
    { "\\x41BC", 0, 1, 0, { "ABC" } },
    { "[ab]cd", 0, 1, 0, { "acd", "bcd" } },
    { "[^a]bc", 0, 1, 0, { "bc" } },
    { "\\bunion[\\s\\x0b]+select\\b", 0, 1, 0,
      { "\tselect", "\nselect", "\x0bselect", "\x0cselect", "\rselect", " select" } },
    /* \s and \d are their bytes (PCRE2's built-in tables): six blanks, ten digits */
    { "or\\s+x", 0, 1, 0, { "or\t", "or\n", "or\x0b", "or\x0c", "or\r", "or " } },
    { "(?i)OR\\s", 0, 1, 1, { "or\t", "or\n", "or\x0b", "or\x0c", "or\r", "or " } },
    { "(foo)\\1barx", 0, 1, 0, { "barx" } },
    { "(?<=x)yz", 0, 1, 0, { "yz" } },
    { "on(?:load|error)\\s*=", 0, 1, 0, { "onload", "onerror" } },
    { "a\\Q+*\\E+b", 0, 1, 0, { "a+*" } },
    { "ab{0}c", 0, 1, 0, { "ac" } },
    { "(?i)caf\\xe9", 0, 1, 1, { "caf" } },
    { "caf\\xe9", 0, 1, 0, { "caf\xe9" } },
    { "ab[[:alpha:]]cde", 0, 1, 0, { "cde" } },
    { "x[[=]y", 0, 1, 0, { "x[y", "x=y" } },
    /* "[=" with a ']' before any "=]": '[' and '=' are bytes (942380's [=<>]) */
    { "x[[=<]y", 0, 1, 0, { "x[y", "x=y", "x<y" } },
    { "x[a[:<\\]]y", 0, 1, 0, { "xay", "x[y", "x:y", "x<y", "x]y" } },
    { "x[[=a=]]y", 0, 1, 0, { NULL } },   /* a collating element: PCRE2 refuses it */
    { "xy[[=]", 0, 1, 0, { "xy[", "xy=" } },   /* no closer before the end: bytes */
    { "(?:abc){2,}", 0, 1, 0, { "abcabc" } },
    { "(?:ab|cd){2}", 0, 1, 0, { "abab", "abcd", "cdab", "cdcd" } },
    { "\\0141", 0, 1, 0, { "\x0c" "1" } },
    { "ab|cdef", 0, 2, 0, { "ab", "cdef" } },
    { "ab|cdef", 0, 3, 0, { NULL } },
    { "\\w+", 0, 1, 0, { NULL } },
    { "\\S\\D\\h\\v", 0, 1, 0, { NULL } },
    { "[\\d-x]", 0, 1, 0, { NULL } },
    { ".*", 0, 1, 0, { NULL } },
    { "abc|", 0, 1, 0, { NULL } },
    { "(?:abc)*", 0, 1, 0, { NULL } },
    { "(?x)foo", 0, 1, 0, { NULL } },
    { "(*UTF)abc", 0, 1, 0, { NULL } },
    { "abc{,3}", 0, 1, 0, { NULL } },
    { "x(?(1)a|b)", 0, 1, 0, { NULL } },
    { "abc\\12", 0, 1, 0, { NULL } },
    { "(?C1)abc", 0, 1, 0, { NULL } },
    { "\\p{L}+", 0, 1, 0, { NULL } },
};

static int set_has(const apr_array_header_t *a, const char *lit)
{
    int i;
    for (i = 0; i < a->nelts; i++) {
        bw_str_t s = APR_ARRAY_IDX(a, i, bw_str_t);
        if (s.len == strlen(lit) && memcmp(s.data, lit, s.len) == 0)
            return 1;
    }
    return 0;
}

START_TEST(test_hand_cases)
{
    const case_t *c = &CASES[_i];
    apr_array_header_t *out = NULL;
    int nocase = -1, n = 0, ok;

    ok = bw_prefilter_extract(g_pool, c->pattern, strlen(c->pattern), c->caseless, c->min_len,
                              &out, &nocase);
    if (c->lits[0] == NULL) {
        ck_assert_msg(!ok, "%s: expected always-run, got %d literals", c->pattern,
                      ok ? out->nelts : 0);
        return;
    }
    ck_assert_msg(ok, "%s: expected a literal set", c->pattern);
    ck_assert_int_eq(nocase, c->nocase);
    while (n < 6 && c->lits[n]) {
        ck_assert_msg(set_has(out, c->lits[n]), "%s: missing \"%s\"", c->pattern, c->lits[n]);
        n++;
    }
    ck_assert_msg(out->nelts == n, "%s: %d literals, expected %d", c->pattern, out->nelts, n);
}
END_TEST

/* The pattern is (pointer, length): bytes after it are not read, NULs in
 * it are literal bytes. */
START_TEST(test_length_and_nul)
{
    static const char pat[] = "selectXYZ";
    static const char nul[] = { 'a', '\\', 'x', '0', '0', 'b', '\0', 'c' };
    apr_array_header_t *out;
    int nocase;
    bw_str_t lit;

    ck_assert(bw_prefilter_extract(g_pool, pat, 6, 0, 1, &out, &nocase));
    ck_assert(out->nelts == 1 && set_has(out, "select"));
    ck_assert(bw_prefilter_extract(g_pool, nul, sizeof nul, 0, 1, &out, &nocase));
    ck_assert_int_eq(out->nelts, 1);
    lit = APR_ARRAY_IDX(out, 0, bw_str_t);
    ck_assert(lit.len == 5 && memcmp(lit.data, "a\0b\0c", 5) == 0);
    ck_assert(bw_prefilter_maybe(out, 0, bw_str_n("xxa\0b\0cyy", 9)));
    ck_assert(!bw_prefilter_maybe(out, 0, bw_str_n("xxa\0b", 5)));
}
END_TEST

/* Past the cap, literals are cut shorter, never dropped: each word of a
 * 100-way alternation still contains one of them. */
START_TEST(test_cap)
{
    char pat[1024];
    size_t n = 0;
    apr_array_header_t *out;
    int i, nocase;

    for (i = 0; i < 100; i++)
        n += (size_t)snprintf(pat + n, sizeof pat - n, "%sw%03dx", i ? "|" : "", i);
    ck_assert(bw_prefilter_extract(g_pool, pat, n, 0, 1, &out, &nocase));
    ck_assert_int_le(out->nelts, BW_PREFILTER_MAX_SET);
    for (i = 0; i < 100; i++) {
        char w[16];
        snprintf(w, sizeof w, "w%03dx", i);
        ck_assert_msg(bw_prefilter_maybe(out, nocase, bw_str_make(w)), "%s hidden", w);
    }
}
END_TEST

static apr_array_header_t *crs_rx(void)
{
    apr_array_header_t *rxs = apr_array_make(g_pool, 1024, sizeof(pf_rx_t));
    const char *v4 = pf_crs_v4_dir(g_pool, BW_SRCDIR);
    int macros = 0, f3, f4;
    f3 = pf_corpus_load_rx(g_pool, pf_crs_v3_rules(), rxs, &macros);
    f4 = pf_corpus_load_rx(g_pool, apr_pstrcat(g_pool, v4, "/rules", NULL), rxs, &macros);
    ck_assert_msg(f3 > 10 && f4 > 10, "CRS rules not found in %s and %s/rules "
                  "(tools/crs/crsdata.py; BULWARK_CRS_DIR)", pf_crs_v3_rules(), v4);
    ck_assert_int_gt(rxs->nelts, 400);
    return rxs;
}

/* What the header promises of every set, on every CRS regex. */
static void check_contract(const apr_array_header_t *lits, int nocase, size_t min_len,
                           bw_str_t pat)
{
    int i, j;
    size_t k;
    ck_assert_int_le(lits->nelts, BW_PREFILTER_MAX_SET);
    for (i = 0; i < lits->nelts; i++) {
        bw_str_t a = APR_ARRAY_IDX(lits, i, bw_str_t);
        ck_assert_msg(a.len >= min_len, "%.*s: short literal", (int)pat.len, pat.data);
        for (k = 0; nocase && k < a.len; k++)
            ck_assert_msg((unsigned char)a.data[k] < 0x80
                          && !(a.data[k] >= 'A' && a.data[k] <= 'Z'),
                          "%.*s: nocase literal not lower-case ASCII", (int)pat.len, pat.data);
        for (j = 0; j < lits->nelts; j++) {
            bw_str_t b = APR_ARRAY_IDX(lits, j, bw_str_t);
            ck_assert_msg(i == j || !bw_memmem(b.data, b.len, a.data, a.len),
                          "%.*s: a literal contains another", (int)pat.len, pat.data);
        }
    }
}

START_TEST(test_crs_contract)
{
    apr_array_header_t *rxs = crs_rx(), *lits;
    size_t min_len;
    int i, nocase, with;

    for (min_len = 1; min_len <= 4; min_len += 3) {
        for (i = 0, with = 0; i < rxs->nelts; i++) {
            bw_str_t pat = APR_ARRAY_IDX(rxs, i, pf_rx_t).pattern;
            if (!bw_prefilter_extract(g_pool, pat.data, pat.len, 0, min_len, &lits, &nocase))
                continue;
            with++;
            check_contract(lits, nocase, min_len, pat);
        }
        /* Most CRS regexes have a set: guards against a walk that gives up. */
        ck_assert_int_gt(with, rxs->nelts * (min_len == 1 ? 8 : 4) / 10);
    }
}
END_TEST

/* Every step-th subject: keeps the test to seconds. */
static apr_array_header_t *sample(const apr_array_header_t *all, int step)
{
    apr_array_header_t *out = apr_array_make(g_pool, all->nelts / step + 1, sizeof(bw_str_t));
    int i;
    for (i = 0; i < all->nelts; i += step)
        APR_ARRAY_PUSH(out, bw_str_t) = APR_ARRAY_IDX(all, i, bw_str_t);
    return out;
}

START_TEST(test_crs_differential_sample)
{
    apr_array_header_t *rxs = crs_rx(), *subj;
    const char *v3tests = pf_crs_v3_tests(g_pool, BW_SRCDIR);
    pf_payloads_t pl;
    pf_diff_t d;
    long failures = 0, matched = 0, gen = 0;
    int i, files;

    pf_payloads_init(g_pool, &pl);
    files = pf_corpus_load_yaml_dir(&pl, apr_pstrcat(g_pool, pf_crs_v4_dir(g_pool, BW_SRCDIR),
                                                     "/tests/regression/tests", NULL));
    /* CRS v4 alone has over 300 test files; 3.3.4's add payloads when there. */
    ck_assert_int_gt(files, 250);
    if (v3tests)
        ck_assert_int_gt(pf_corpus_load_yaml_dir(&pl, v3tests), 100);
    ck_assert_int_gt(pf_corpus_load_lines(&pl, BW_SRCDIR "/tests/prefilter/benign.txt"), 50);
    subj = sample(pl.items, 13);
    pf_diff_init(&d, g_pool, rxs, 1);
    pf_diff_subjects(&d, subj, pf_diff_lower_all(g_pool, subj));
    pf_diff_generated(&d, 10, 99);
    for (i = 0; i < d.pats->nelts; i++) {
        const pf_dpat_t *pt = &APR_ARRAY_IDX(d.pats, i, pf_dpat_t);
        failures += pt->failures;
        matched += pt->matched;
        gen += pt->gen_matched;
    }
    pf_diff_free(&d);
    ck_assert_int_eq(failures, 0);
    /* The sample must exercise matches, or the check proves nothing. */
    ck_assert_int_gt(matched, 1000);
    ck_assert_int_gt(gen, 1000);
}
END_TEST

START_TEST(test_random_regexes)
{
    pf_fuzz_stats_t st;
    memset(&st, 0, sizeof(st));
    pf_fuzz_run(g_pool, 3000, 2024, 100, &st);
    ck_assert_int_eq(st.failures, 0);
    ck_assert_int_gt(st.with_set, 500);
    ck_assert_int_gt(st.matched, 10000);
    ck_assert_int_eq(st.split_failures, 0);
    ck_assert_int_gt(st.split, 100);
}
END_TEST

/* A regex taken apart into its alternatives: each with the option settings
 * and wrapping groups it is under; or not at all (NULL). */
static const struct {
    const char *re;
    const char *alts[4];
} SPLITS[] = {
    { "a|b", { "a", "b" } },
    { "^a|b$|", { "^a", "b$", "" } },
    { "(?i)a|b", { "(?i)a", "(?i)b" } },
    { "(?i)(?s)a|b", { "(?i)(?s)a", "(?i)(?s)b" } },
    { "(?i:(?:a|b))", { "(?i:(?:a))", "(?i:(?:b))" } },
    { "(a|b)", { "(?:a)", "(?:b)" } },
    { "(?<n>a|b)", { "(?:a)", "(?:b)" } },
    { "(?i)(?:a|(b|c))", { "(?i)(?:a)", "(?i)(?:(b|c))" } },
    { "[|]|x", { "[|]", "x" } },
    { "a|[[=]", { "a", "[[=]" } },
    { "[[:alpha:]|]|[[=|]", { "[[:alpha:]|]", "[[=|]" } },
    { "[]|]|[^]|]|[[:alpha:]|]", { "[]|]", "[^]|]", "[[:alpha:]|]" } },
    { "\\||\\x{7c}|(?#|)y", { "\\|", "\\x{7c}", "(?#|)y" } },
    { "(?:a)(?:b|c)", { NULL } },         /* no top-level alternative */
    { "(a|b)+", { NULL } },               /* a quantified group */
    { "(?:a|b)c", { NULL } },
    { "a(?i)b|c", { NULL } },             /* (?i) also applies to c */
    { "(a)\\\\1|b", { "(a)\\\\1", "b" } },   /* an escaped backslash, then 1 */
    { "(a)|\\\\1", { "(a)", "\\\\1" } },
    { "(a)\\1|b", { NULL } },             /* a back-reference */
    { "(a)|\\g1", { NULL } },
    { "(?R)|a", { NULL } },
    { "(?1)|(a)", { NULL } },
    { "(?|a|b)", { NULL } },
    { "(?(1)a|b)", { NULL } },
    { "(?x)a|b", { NULL } },
    { "(*UTF)a|b", { NULL } },
    { "\\\\Qa|b\\\\E", { "\\\\Qa", "b\\\\E" } },   /* an escaped backslash, then Q */
    { "\\Qa|b\\E", { NULL } },
    { "(?=a|b)", { NULL } },              /* a lookahead is not a wrapper */
    { "(?>a|b)", { NULL } },
    { "a", { NULL } },
};

START_TEST(test_split)
{
    apr_array_header_t *alts = NULL;
    int i, n = bw_prefilter_alternatives(g_pool, SPLITS[_i].re, strlen(SPLITS[_i].re), &alts);
    if (!SPLITS[_i].alts[0]) {
        ck_assert_msg(!n, "%s: split", SPLITS[_i].re);
        return;
    }
    ck_assert_msg(n, "%s: not split", SPLITS[_i].re);
    for (i = 0; i < 4 && SPLITS[_i].alts[i]; i++) {
        bw_str_t a;
        ck_assert_int_lt(i, alts->nelts);
        a = APR_ARRAY_IDX(alts, i, bw_str_t);
        ck_assert_msg(a.len == strlen(SPLITS[_i].alts[i]) && !memcmp(a.data, SPLITS[_i].alts[i], a.len),
                      "%s: alternative %d is %.*s", SPLITS[_i].re, i, (int)a.len, a.data);
    }
    ck_assert_int_eq(i, alts->nelts);
}
END_TEST

static Suite *prefilter_suite(void)
{
    Suite *s = suite_create("prefilter");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_hand_cases, 0, (int)(sizeof(CASES) / sizeof(CASES[0])));
    tcase_add_test(tc, test_length_and_nul);
    tcase_add_test(tc, test_cap);
    tcase_add_test(tc, test_crs_contract);
    tcase_add_test(tc, test_crs_differential_sample);
    tcase_add_test(tc, test_random_regexes);
    tcase_add_loop_test(tc, test_split, 0, (int)(sizeof(SPLITS) / sizeof(SPLITS[0])));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    apr_initialize();
    apr_pool_create(&g_pool, NULL);
    sr = srunner_create(prefilter_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(g_pool);
    apr_terminate();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
