/*
 * Random regexes for the prefilter's differential test. CRS uses a narrow
 * slice of PCRE2; these mix every construct the prefilter claims to read
 * (scoped and inline flags, \Q..\E, octal and hex escapes, odd classes,
 * lookarounds, backreferences, brace forms PCRE2 versions disagree on…)
 * over a tiny alphabet, so that random subjects and generated samples hit
 * matches often. PCRE2 rejects some of them; those are skipped.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <stdio.h>
#include <string.h>
#include <pcre2.h>
#include "corpus.h"
#include "prefilter/bw_prefilter.h"

typedef struct {
    char buf[512];
    size_t len;
    uint32_t *rng;
    int groups;
} rbuild_t;

static const char *const LITS[] = {
    "a", "b", "c", "A", "B", "ab", "ba", "\xe9", "\xc9", "-", "_", " ", "0", "1", "\\.", "\\*",
    "\\\\", "\\x41", "\\x61", "\\x{62}", "\\101", "\\0141", "\\n", "\\t", "\\Qa+b\\E",
    "\\Q(a\\E", "\\Q\\E", "\\e", "\\cA", "{", "}", "]", "\\-", "\\_", "\\xe9", "\\xC9", "\\x00",
};
static const char *const CLASSES[] = {
    "[abc]", "[^a]", "[a-c]", "[A-Z]", "[\\x41-\\x43]", "[\\d]", "[^\\W]", "[]a]", "[a-]",
    "[[:alpha:]]", "[[=]", "[\\]a]", "[^\\x00-\\x60]", "[aA]", "[\\xe9\\xc9]", "[^b-z]",
    "[\\w-]", "[%--]", "[\\ba]", ".", "\\d", "\\w", "\\s", "\\W", "\\S", "\\h", "\\N", "\\pL",
};
static const char *const ZERO[] = {
    "^", "$", "\\b", "\\B", "\\A", "\\z", "\\Z", "\\G", "\\K", "(?i)", "(?-i)", "(?#x)",
};
static const char *const QUANTS[] = {
    "?", "*", "+", "{2}", "{1,3}", "{0,2}", "{2,}", "??", "*?", "+?", "*+", "{1,2}?", "{,2}",
    "{0}", "{3}",
};

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void put(rbuild_t *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n < sizeof(b->buf))
        memcpy(b->buf + b->len, s, n), b->len += n;
}

static uint32_t pick(rbuild_t *b, uint32_t n)
{
    return pf_rand(b->rng) % n;
}

static void r_alt(rbuild_t *b, int depth);

static void r_group(rbuild_t *b, int depth)
{
    static const char *const OPEN[] = {
        "(", "(?:", "(?i:", "(?-i:", "(?=", "(?!", "(?<=a", "(?<!b", "(?>", "(?|", "(?<n", "(?i)(",
    };
    int k = (int)pick(b, NELEM(OPEN));
    if (k == 10) {
        char name[32];
        snprintf(name, sizeof name, "(?<n%d>", b->groups);
        put(b, name);
    } else {
        put(b, OPEN[k]);
        if (k == 6 || k == 7)
            put(b, ")");        /* lookbehinds are fixed-length: keep them trivial */
    }
    if (k == 0 || k == 10 || k == 11)
        b->groups++;
    if (k == 6 || k == 7)
        return;
    r_alt(b, depth + 1);
    put(b, ")");
}

static void r_atom(rbuild_t *b, int depth)
{
    uint32_t r = pick(b, 100);
    if (r < 45)
        put(b, LITS[pick(b, NELEM(LITS))]);
    else if (r < 65)
        put(b, CLASSES[pick(b, NELEM(CLASSES))]);
    else if (r < 75)
        put(b, ZERO[pick(b, NELEM(ZERO))]);
    else if (r < 80 && b->groups > 0)
        put(b, pick(b, 2) ? "\\1" : "\\g{-1}");
    else if (depth < 3)
        r_group(b, depth);
    else
        put(b, "c");
    if (pick(b, 4) == 0)
        put(b, QUANTS[pick(b, NELEM(QUANTS))]);
}

static void r_alt(rbuild_t *b, int depth)
{
    int branches = 1 + (pick(b, 3) == 0 ? (int)pick(b, 3) : 0), i, j, n;
    for (i = 0; i < branches; i++) {
        if (i)
            put(b, "|");
        n = (int)pick(b, 5);
        for (j = 0; j < n; j++)
            r_atom(b, depth);
    }
}

static bw_str_t pf_fuzz_regex(apr_pool_t *p, uint32_t *rng)
{
    rbuild_t b;
    memset(&b, 0, sizeof(b));
    b.rng = rng;
    if (pf_rand(rng) % 6 == 0)
        put(&b, "(?i)");
    r_alt(&b, 0);
    return bw_str_n(apr_pstrmemdup(p, b.buf, b.len), b.len);
}

/* A random subject over the alphabet the regexes use. */
static bw_str_t fuzz_subject(apr_pool_t *p, uint32_t *rng)
{
    static const char ALPHA[] = "aAbBcC01 _-.*+{}()]\n\t\xe9\xc9\\\x00";
    size_t n = pf_rand(rng) % 12, i;
    char *s = apr_palloc(p, n + 1);
    for (i = 0; i < n; i++)
        s[i] = ALPHA[pf_rand(rng) % (sizeof(ALPHA) - 1)];
    return bw_str_n(s, n);
}

static void fuzz_report(bw_str_t re, int caseless, bw_str_t s, const apr_array_header_t *lits,
                        int nocase)
{
    size_t i;
    int k;
    printf("DISAGREE fuzz regex%s: ", caseless ? " (caseless)" : "");
    for (i = 0; i < re.len; i++)
        printf((unsigned char)re.data[i] < 0x20 || (unsigned char)re.data[i] >= 0x7f
               ? "\\x%02x" : "%c", (unsigned char)re.data[i]);
    printf("\n  subject: ");
    for (i = 0; i < s.len; i++)
        printf("\\x%02x", (unsigned char)s.data[i]);
    printf("\n  literals%s:", nocase ? " (nocase)" : "");
    for (k = 0; k < lits->nelts; k++) {
        bw_str_t l = APR_ARRAY_IDX(lits, k, bw_str_t);
        printf(" \"%.*s\"", (int)l.len, l.data);
    }
    printf("\n");
}

/* A regex with alternatives (bw_prefilter_alternatives): each subject
 * matches it iff it matches one of them. */
static void fuzz_split(apr_pool_t *p, pf_fuzz_stats_t *st, uint32_t *rng, int subjects,
                       pcre2_match_data *md, bw_str_t re, int caseless, pcre2_code *code)
{
    apr_array_header_t *alts, *codes;
    pf_gen_t *gen;
    int i, k, bad = 0;
    if (!bw_prefilter_alternatives(p, re.data, re.len, &alts))
        return;
    st->split++;
    codes = pf_alts_compile(p, alts, caseless ? PCRE2_CASELESS : 0);
    bad = !codes;
    gen = pf_gen_compile(p, re.data, re.len, caseless);
    for (k = 0; k < subjects && !bad; k++) {
        bw_str_t s = (gen && (k & 1)) ? pf_gen_sample(gen, p, rng) : fuzz_subject(p, rng);
        int whole = pcre2_match(code, (PCRE2_SPTR)s.data, s.len, 0, 0, md, NULL), any;
        if (whole < 0 && whole != PCRE2_ERROR_NOMATCH)
            continue;
        if ((any = pf_alts_match(codes, s, md, NULL)) < 0)
            continue;
        st->split_checks++;
        if (any != (whole >= 0))
            bad++;
    }
    if (bad) {
        st->split_failures++;
        if (st->split_failures <= 20) {
            printf("DISAGREE fuzz regex split into %d alternatives%s: %.*s\n", alts->nelts,
                   caseless ? " (caseless)" : "", (int)re.len, re.data);
            for (i = 0; i < alts->nelts; i++)
                printf("  alternative: %.*s\n", (int)APR_ARRAY_IDX(alts, i, bw_str_t).len,
                       APR_ARRAY_IDX(alts, i, bw_str_t).data);
        }
    }
}

/* One regex against random and generated subjects. */
static void fuzz_one(apr_pool_t *p, pf_fuzz_stats_t *st, uint32_t *rng, int subjects,
                     pcre2_match_data *md)
{
    bw_str_t re = pf_fuzz_regex(p, rng), s;
    int caseless = pf_rand(rng) % 5 == 0, ec, nocase = 0, k, bad = 0;
    PCRE2_SIZE off;
    apr_array_header_t *lits = NULL;
    pcre2_code *code;
    pf_gen_t *gen;

    st->regexes++;
    code = pcre2_compile((PCRE2_SPTR)re.data, re.len, PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY
                         | (caseless ? PCRE2_CASELESS : 0), &ec, &off, NULL);
    if (!code)
        return;
    st->compiled++;
    if (bw_prefilter_extract(p, re.data, re.len, caseless, 1, &lits, &nocase)) {
        st->with_set++;
        gen = pf_gen_compile(p, re.data, re.len, caseless);
        for (k = 0; k < subjects; k++) {
            s = (gen && (k & 1)) ? pf_gen_sample(gen, p, rng) : fuzz_subject(p, rng);
            st->checks++;
            if (pcre2_match(code, (PCRE2_SPTR)s.data, s.len, 0, 0, md, NULL) < 0)
                continue;
            st->matched++;
            if (!bw_prefilter_maybe(lits, nocase, s)) {
                if (++bad == 1 && st->failures < 20)
                    fuzz_report(re, caseless, s, lits, nocase);
            }
        }
        st->failures += bad > 0;
    }
    fuzz_split(p, st, rng, subjects, md, re, caseless, code);
    pcre2_code_free(code);
}

void pf_fuzz_run(apr_pool_t *p, int n, uint32_t seed, int subjects, pf_fuzz_stats_t *st)
{
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    apr_pool_t *tmp;
    int i;

    apr_pool_create(&tmp, p);
    for (i = 0; i < n; i++) {
        /* Each regex from its own stream: one seed and index reproduce it. */
        uint32_t rng = (seed ? seed : 7) * 2654435761u ^ ((uint32_t)i * 40503u + 1u);
        fuzz_one(tmp, st, &rng, subjects, md);
        apr_pool_clear(tmp);
    }
    apr_pool_destroy(tmp);
    pcre2_match_data_free(md);
}
