/*
 * The prefilter's differential check: for each distinct regex and each
 * subject, PCRE2 (compiled as the engine compiles @rx) decides whether it
 * matches; a match the literal set would have ruled out is a failure, the
 * one thing the prefilter must never do. Shared by the standalone runner
 * (diff.c) and the Check test (tests/unit/test_prefilter.c).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <stdio.h>
#include <string.h>
#include <pcre2.h>
#include "corpus.h"
#include "prefilter/bw_prefilter.h"

#define DIFF_MATCH_LIMIT 5000000
#define DIFF_REPORT_MAX  20

static apr_status_t free_code(void *data)
{
    pcre2_code_free((pcre2_code *)data);
    return APR_SUCCESS;
}

apr_array_header_t *pf_alts_compile(apr_pool_t *pool, const apr_array_header_t *alts,
                                    uint32_t flags)
{
    apr_array_header_t *codes = apr_array_make(pool, alts->nelts, sizeof(pcre2_code *));
    int i, ec;
    PCRE2_SIZE off;
    for (i = 0; i < alts->nelts; i++) {
        bw_str_t a = APR_ARRAY_IDX(alts, i, bw_str_t);
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)a.data, a.len,
                                       PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY | flags, &ec, &off, NULL);
        if (!re)
            return NULL;
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
        apr_pool_cleanup_register(pool, re, free_code, apr_pool_cleanup_null);
        APR_ARRAY_PUSH(codes, pcre2_code *) = re;
    }
    return codes;
}

int pf_alts_match(const apr_array_header_t *codes, bw_str_t s, void *md, void *mctx)
{
    int i;
    for (i = 0; i < codes->nelts; i++) {
        int rc = pcre2_match(APR_ARRAY_IDX(codes, i, pcre2_code *),
                             (PCRE2_SPTR)(s.data ? s.data : ""), s.len, 0, 0, md, mctx);
        if (rc >= 0)
            return 1;
        if (rc != PCRE2_ERROR_NOMATCH)
            return -1;
    }
    return 0;
}

/* The regex's alternatives, compiled as it is; one PCRE2 rejects is a
 * failure of the split. */
static void prepare_alts(pf_diff_t *d, pf_dpat_t *pt)
{
    apr_array_header_t *alts;
    if (!pt->re || !bw_prefilter_alternatives(d->pool, pt->pattern.data, pt->pattern.len, &alts))
        return;
    pt->alts = pf_alts_compile(d->pool, alts, 0);
    if (!pt->alts) {
        printf("DISAGREE rule %s: an alternative does not compile: %.*s\n", pt->rule->id,
               (int)pt->pattern.len, pt->pattern.data);
        pt->split_failures++;
    }
}

static void prepare(pf_diff_t *d, pf_dpat_t *pt)
{
    int ec;
    PCRE2_SIZE off;
    const char *why = NULL;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pt->pattern.data, pt->pattern.len,
                                   PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY, &ec, &off, NULL);
    if (re) {
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
        apr_pool_cleanup_register(d->pool, re, free_code, apr_pool_cleanup_null);
    }
    pt->re = re;
    if (!bw_prefilter_extract_ex(d->pool, pt->pattern.data, pt->pattern.len, 0, d->min_len,
                                 &pt->lits, &pt->nocase, &why)) {
        pt->lits = NULL;
        pt->why = why;
    }
    pt->gen = pf_gen_compile(d->pool, pt->pattern.data, pt->pattern.len, 0);
    prepare_alts(d, pt);
}

void pf_diff_init(pf_diff_t *d, apr_pool_t *p, const apr_array_header_t *rxs, size_t min_len)
{
    apr_hash_t *seen = apr_hash_make(p);
    pcre2_match_context *mctx;
    int i;

    memset(d, 0, sizeof(*d));
    apr_pool_create(&d->pool, p);       /* owns the PCRE2 codes: pf_diff_free */
    d->min_len = min_len;
    d->pats = apr_array_make(p, rxs->nelts, sizeof(pf_dpat_t));
    for (i = 0; i < rxs->nelts; i++) {
        const pf_rx_t *rx = &APR_ARRAY_IDX(rxs, i, pf_rx_t);
        pf_dpat_t *pt = apr_hash_get(seen, rx->pattern.data, (apr_ssize_t)rx->pattern.len);
        if (pt) {
            pt->nrules++;
            continue;
        }
        pt = apr_array_push(d->pats);
        memset(pt, 0, sizeof(*pt));
        pt->pattern = rx->pattern;
        pt->rule = rx;
        pt->nrules = 1;
        apr_hash_set(seen, rx->pattern.data, (apr_ssize_t)rx->pattern.len, pt);
    }
    /* Pointers into d->pats are stable only once it stops growing. */
    for (i = 0; i < d->pats->nelts; i++)
        prepare(d, &APR_ARRAY_IDX(d->pats, i, pf_dpat_t));
    d->md = pcre2_match_data_create(1, NULL);
    mctx = pcre2_match_context_create(NULL);
    pcre2_set_match_limit(mctx, DIFF_MATCH_LIMIT);
    d->mctx = mctx;
}

void pf_diff_free(pf_diff_t *d)
{
    pcre2_match_data_free(d->md);
    pcre2_match_context_free(d->mctx);
    apr_pool_destroy(d->pool);
    d->pool = NULL;
}

apr_array_header_t *pf_diff_lower_all(apr_pool_t *p, const apr_array_header_t *subjects)
{
    apr_array_header_t *out = apr_array_make(p, subjects->nelts, sizeof(bw_str_t));
    int i;
    for (i = 0; i < subjects->nelts; i++) {
        bw_str_t s = APR_ARRAY_IDX(subjects, i, bw_str_t);
        APR_ARRAY_PUSH(out, bw_str_t) = bw_str_lower(p, s);
    }
    return out;
}

/* The literal test as an automaton would do it: literals of a nocase set
 * against the lowered subject, others against the subject itself. */
static int maybe(const pf_dpat_t *pt, bw_str_t s, bw_str_t low)
{
    bw_str_t hay = pt->nocase ? low : s;
    int i;
    for (i = 0; i < pt->lits->nelts; i++) {
        bw_str_t l = APR_ARRAY_IDX(pt->lits, i, bw_str_t);
        if (bw_memmem(hay.data ? hay.data : "", hay.len, l.data, l.len))
            return 1;
    }
    return 0;
}

static void print_escaped(const char *label, bw_str_t s, size_t max)
{
    size_t i;
    printf("  %s (%lu bytes): ", label, (unsigned long)s.len);
    for (i = 0; i < s.len && i < max; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (c < 0x20 || c >= 0x7f || c == '\\')
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    printf("%s\n", s.len > max ? " ..." : "");
}

static void report(pf_diff_t *d, const pf_dpat_t *pt, bw_str_t s, const char *origin)
{
    int i;
    if (!d->verbose && d->reported >= DIFF_REPORT_MAX)
        return;
    d->reported++;
    printf("DISAGREE rule %s (%s:%d), %s subject: PCRE2 matches, prefilter said no\n",
           pt->rule->id, pt->rule->file, pt->rule->line, origin);
    print_escaped("regex", pt->pattern, 300);
    print_escaped("subject", s, 300);
    printf("  literals%s:", pt->nocase ? " (nocase)" : "");
    for (i = 0; i < pt->lits->nelts; i++) {
        bw_str_t l = APR_ARRAY_IDX(pt->lits, i, bw_str_t);
        printf(" \"%.*s\"", (int)l.len, l.data);
    }
    printf("\n");
}

/* PCRE2 says: 1 match, 0 no match, -1 limit or error. */
static int pcre_says(pf_diff_t *d, const pf_dpat_t *pt, bw_str_t s)
{
    int rc = pcre2_match(pt->re, (PCRE2_SPTR)(s.data ? s.data : ""), s.len, 0, 0,
                         d->md, d->mctx);
    return rc >= 0 ? 1 : (rc == PCRE2_ERROR_NOMATCH ? 0 : -1);
}

/* Does one of the alternatives match as the whole does (r: PCRE2's
 * answer for the whole)? A limit on either side proves nothing. */
static void check_split(pf_diff_t *d, pf_dpat_t *pt, bw_str_t s, int r, const char *origin)
{
    int any;
    if (!pt->alts || r < 0 || (any = pf_alts_match(pt->alts, s, d->md, d->mctx)) < 0)
        return;
    pt->split_pairs++;
    if (any == r)
        return;
    pt->split_failures++;
    if (!d->verbose && d->reported >= DIFF_REPORT_MAX)
        return;
    d->reported++;
    printf("DISAGREE rule %s (%s:%d), %s subject: the regex %s, its alternatives %s\n",
           pt->rule->id, pt->rule->file, pt->rule->line, origin, r ? "matches" : "does not",
           any ? "match" : "do not");
    print_escaped("regex", pt->pattern, 300);
    print_escaped("subject", s, 300);
}

static void check_pair(pf_diff_t *d, pf_dpat_t *pt, bw_str_t s, bw_str_t low, const char *origin)
{
    int r = pcre_says(d, pt, s), m;
    check_split(d, pt, s, r, origin);
    if (!pt->lits)
        return;
    m = maybe(pt, s, low);
    pt->pairs++;
    pt->ruled_out += !m;
    pt->matched += r == 1;
    pt->limit_hits += r < 0;
    if (r == 1 && !m) {
        pt->failures++;
        report(d, pt, s, origin);
    }
}

void pf_diff_subjects(pf_diff_t *d, const apr_array_header_t *subjects,
                      const apr_array_header_t *lower)
{
    int i, j;
    for (i = 0; i < d->pats->nelts; i++) {
        pf_dpat_t *pt = &APR_ARRAY_IDX(d->pats, i, pf_dpat_t);
        if (!pt->re || (!pt->lits && !pt->alts))
            continue;
        for (j = 0; j < subjects->nelts; j++)
            check_pair(d, pt, APR_ARRAY_IDX(subjects, j, bw_str_t),
                       APR_ARRAY_IDX(lower, j, bw_str_t), "corpus");
    }
}

/* s with every ASCII letter's case flipped at random. */
static bw_str_t recase(apr_pool_t *p, bw_str_t s, uint32_t *rng)
{
    char *o = apr_palloc(p, s.len + 1);
    size_t i;
    if (s.len)
        memcpy(o, s.data, s.len);
    for (i = 0; i < s.len; i++) {
        char c = o[i];
        if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && (pf_rand(rng) & 1))
            o[i] = (char)(c ^ 0x20);
    }
    return bw_str_n(o, s.len);
}

static void generated_one(pf_diff_t *d, pf_dpat_t *pt, apr_pool_t *tmp, uint32_t *rng)
{
    bw_str_t s = pf_gen_sample(pt->gen, tmp, rng), v[3];
    char *wrap = apr_palloc(tmp, s.len + 10);
    int k;

    /* The sample alone, inside other text, and with its letters re-cased. */
    memcpy(wrap, "x=1&q=", 6);
    memcpy(wrap + 6, s.data, s.len);
    memcpy(wrap + 6 + s.len, "&z=2", 4);
    v[0] = s;
    v[1] = bw_str_n(wrap, s.len + 10);
    v[2] = recase(tmp, s, rng);
    for (k = 0; k < 3; k++) {
        int r = pcre_says(d, pt, v[k]);
        check_split(d, pt, v[k], r, "generated");
        if (r != 1 || !pt->lits)
            continue;
        pt->gen_matched++;
        if (!maybe(pt, v[k], bw_str_lower(tmp, v[k]))) {
            pt->failures++;
            report(d, pt, v[k], "generated");
        }
    }
}

void pf_diff_generated(pf_diff_t *d, int n, uint32_t seed)
{
    apr_pool_t *tmp;
    uint32_t rng = seed ? seed : 1;
    int i, k;

    apr_pool_create(&tmp, d->pool);
    for (i = 0; i < d->pats->nelts; i++) {
        pf_dpat_t *pt = &APR_ARRAY_IDX(d->pats, i, pf_dpat_t);
        if (!pt->re || (!pt->lits && !pt->alts) || !pt->gen)
            continue;
        for (k = 0; k < n; k++) {
            generated_one(d, pt, tmp, &rng);
            if ((k & 63) == 63)
                apr_pool_clear(tmp);
        }
        apr_pool_clear(tmp);
    }
    apr_pool_destroy(tmp);
}
