/*
 * The differential test of the detectors' fast paths: bw_sqli_detect() and
 * bw_xss_detect() (fast path first) must answer exactly as
 * bw_sqli_detect_full() and bw_xss_detect_full() (no fast path) for every
 * value: the verdict and everything reported on a match (fingerprint,
 * context, evidence / construct, context, reason). A fast path that says
 * "clean" for a value the full detector matches is the failure this looks
 * for.
 *
 * Values: every line of the .txt files of tests/detect/benign, sqli-variants.txt and
 * xss-variants.txt and every scalar of the CRS regression tests (read at
 * run time from ../shared/crs, never stored here), each also URL-decoded
 * once and twice, lower- and upper-cased, and cut at "&" and "="; then
 * random values from a fixed seed (detect_gen.c). Each value sits in a
 * heap buffer of exactly its length, so a sanitizer build sees any read
 * past it.
 *
 *   detect_diff [-n RANDOM] [-s SEED] [--crs DIR]... [-v]
 *   detect_diff --bench [-r ROUNDS]        (detect_bench.c)
 * Closing line: "detect-diff: N passed, M failed", one check per detector
 * and source (corpus, CRS, random). Before it, a digest of every answer
 * (verdict and result of the full detectors) per source: two builds that
 * print the same digests with the same seed and data answered alike for
 * every value, which is how a change inside the tokenizers is shown to
 * change no answer (the check itself compares fast path on and off).
 * Exit status 1 on any disagreement or when the in-tree corpus is
 * missing. Without CRS data its checks are reported as skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <apr_general.h>
#include "corpus.h"
#include "detect_diff.h"
#include "detect/bw_sqli.h"
#include "detect/bw_xss.h"

#ifndef BW_SRCDIR
#define BW_SRCDIR "."
#endif

#define GEN_CAP 512

static int sqli_on(bw_str_t v, void *res)
{
    return bw_sqli_detect(v, res);
}

static int sqli_off(bw_str_t v, void *res)
{
    return bw_sqli_detect_full(v, res);
}

static int xss_on(bw_str_t v, void *res)
{
    return bw_xss_detect(v, res);
}

static int xss_off(bw_str_t v, void *res)
{
    return bw_xss_detect_full(v, res);
}

const dd_detector_t dd_detectors[DD_NDETECTORS] = {
    { "sqli", bw_sqli_fast_clean, sqli_on, sqli_off, sizeof(bw_sqli_result_t) },
    { "xss", bw_xss_fast_clean, xss_on, xss_off, sizeof(bw_xss_result_t) },
};

/* DD_RES_MAX must hold every result (a negative array size otherwise). */
typedef char dd_res_fits[sizeof(bw_sqli_result_t) <= DD_RES_MAX
                         && sizeof(bw_xss_result_t) <= DD_RES_MAX ? 1 : -1];

typedef struct {
    long values, fast, matches, disagree;
} dd_count_t;

typedef struct {
    dd_count_t n[DD_NDETECTORS];
    int verbose;
    long reported;
    uint64_t digest;            /* of every answer, in order (FNV-1a) */
} dd_stats_t;

static void digest_add(uint64_t *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t i;
    for (i = 0; i < n; i++)
        *h = (*h ^ p[i]) * 0x100000001b3ULL;
}

static void report(dd_stats_t *st, const char *what, bw_str_t v, int fast, int m1, int m2)
{
    size_t i;

    if (!st->verbose && st->reported >= 20)
        return;
    st->reported++;
    printf("  DISAGREE %s: fast path %d, detect %d, full %d: \"", what, fast, m1, m2);
    for (i = 0; i < v.len && i < 300; i++) {
        unsigned char c = (unsigned char)v.data[i];
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    printf("\"%s\n", v.len > 300 ? "..." : "");
}

/* Detector k with and without its fast path: same verdict, same result
 * bytes (both results start from the same filler). */
static void check_one(dd_stats_t *st, int k, bw_str_t v)
{
    const dd_detector_t *d = &dd_detectors[k];
    unsigned char a[DD_RES_MAX], b[DD_RES_MAX];
    int fast = d->fast(v), m1, m2;

    memset(a, 0x5a, sizeof(a));
    memset(b, 0x5a, sizeof(b));
    m1 = d->on(v, a);
    m2 = d->off(v, b);
    st->n[k].values++;
    st->n[k].fast += fast;
    st->n[k].matches += m2;
    digest_add(&st->digest, &m2, sizeof(m2));
    if (m2)
        digest_add(&st->digest, b, d->res_size);
    if (m1 != m2 || (fast && m2) || memcmp(a, b, d->res_size) != 0) {
        st->n[k].disagree++;
        report(st, d->name, v, fast, m1, m2);
    }
}

/* Both detectors on a copy of data[0..n) in a buffer of exactly n bytes. */
static void check(dd_stats_t *st, const void *data, size_t n)
{
    char *d = malloc(n ? n : 1);
    int k;

    if (d == NULL) {
        perror("detect-diff");
        exit(2);
    }
    if (n)
        memcpy(d, data, n);
    for (k = 0; k < DD_NDETECTORS; k++)
        check_one(st, k, bw_str_n(d, n));
    free(d);
}

/* Adds the pieces of s cut at "&" and "=" (the arguments of a query
 * string or form body), URL-decoded too. */
static void add_pieces(pf_payloads_t *pl, bw_str_t s)
{
    size_t i, start = 0;

    for (i = 0; i <= s.len; i++) {
        if (i < s.len && s.data[i] != '&' && s.data[i] != '=')
            continue;
        if (start > 0 || i < s.len)
            pf_payloads_add_variants(pl, bw_str_n(s.data + start, i - start));
        start = i + 1;
    }
}

static void add_all_pieces(pf_payloads_t *pl)
{
    int i, n = pl->items->nelts;

    for (i = 0; i < n; i++) {
        bw_str_t s = APR_ARRAY_IDX(pl->items, i, bw_str_t);
        if (memchr(s.data, '&', s.len) != NULL || memchr(s.data, '=', s.len) != NULL)
            add_pieces(pl, s);
    }
}

int dd_load_benign(apr_pool_t *p, const char *srcdir, apr_array_header_t *out)
{
    const char *dir = apr_pstrcat(p, srcdir, "/tests/detect/benign", NULL);
    DIR *d = opendir(dir);
    struct dirent *de;
    int files = 0;

    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        bw_str_t text;
        const char *s, *end;

        if (len < 5 || strcmp(de->d_name + len - 4, ".txt") != 0
            || pf_corpus_read_file(p, apr_pstrcat(p, dir, "/", de->d_name, NULL), &text) != 0)
            continue;
        files++;
        for (s = text.data, end = s + text.len; s < end;) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            const char *le = nl ? nl : end;
            APR_ARRAY_PUSH(out, bw_str_t) = bw_str_n(s, (size_t)(le - s));
            s = nl ? nl + 1 : end;
        }
    }
    closedir(d);
    return files;
}

/* The in-tree corpus with variants; -1 when a file is missing. */
static int load_tree(apr_pool_t *p, pf_payloads_t *pl)
{
    apr_array_header_t *benign = apr_array_make(p, 8192, sizeof(bw_str_t));
    int i;

    if (dd_load_benign(p, BW_SRCDIR, benign) == 0
        || pf_corpus_load_lines(pl, BW_SRCDIR "/tests/detect/sqli-variants.txt") <= 0
        || pf_corpus_load_lines(pl, BW_SRCDIR "/tests/detect/xss-variants.txt") <= 0)
        return -1;
    for (i = 0; i < benign->nelts; i++)
        pf_payloads_add_variants(pl, APR_ARRAY_IDX(benign, i, bw_str_t));
    add_all_pieces(pl);
    return 0;
}

static void check_set(dd_stats_t *st, const apr_array_header_t *items)
{
    int i;
    for (i = 0; i < items->nelts; i++) {
        const bw_str_t *v = &APR_ARRAY_IDX(items, i, bw_str_t);
        check(st, v->data, v->len);
    }
}

static void check_random(dd_stats_t *st, const apr_array_header_t *corpus, long n, uint64_t seed)
{
    unsigned char buf[GEN_CAP];
    dd_rng_t r;
    long i;

    r.s = seed;
    for (i = 0; i < n; i++)
        check(st, buf, dd_gen(&r, corpus, buf, sizeof(buf)));
}

/* Prints one source's figures; returns the failed checks (0 to 2). */
static int summary(const char *source, const dd_stats_t *st, int *passed)
{
    int k, failed = 0;

    for (k = 0; k < DD_NDETECTORS; k++) {
        const dd_count_t *c = &st->n[k];
        printf("  %-7s %-4s %9ld values, fast path %5.1f%%, matches %7ld, disagreements %ld\n",
               source, dd_detectors[k].name, c->values,
               c->values ? 100.0 * (double)c->fast / (double)c->values : 0.0,
               c->matches, c->disagree);
        if (c->disagree)
            failed++;
        else
            (*passed)++;
    }
    return failed;
}

typedef struct {
    long random;
    uint64_t seed;
    int verbose, bench, rounds;
    apr_array_header_t *crs;
} dd_opts_t;

static int parse_args(apr_pool_t *p, int argc, char **argv, dd_opts_t *o)
{
    const char *root = getenv("BW_CRS_ROOT");
    int i;

    memset(o, 0, sizeof(*o));
    o->random = 2000000;
    o->seed = 20240611;
    o->rounds = 5;
    o->crs = apr_array_make(p, 2, sizeof(const char *));
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v") || !strcmp(a, "--bench")) {
            *(a[1] == 'v' ? &o->verbose : &o->bench) = 1;
            continue;
        }
        if (v == NULL)
            return -1;
        i++;
        if (!strcmp(a, "-n"))
            o->random = atol(v);
        else if (!strcmp(a, "-s"))
            o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-r"))
            o->rounds = atoi(v);
        else if (!strcmp(a, "--crs"))
            APR_ARRAY_PUSH(o->crs, const char *) = v;
        else
            return -1;
    }
    if (o->crs->nelts == 0) {
        root = root ? root : BW_SRCDIR "/../shared/crs";
        APR_ARRAY_PUSH(o->crs, const char *) = apr_pstrcat(p, root, "/v3.3.4/tests-v2", NULL);
        APR_ARRAY_PUSH(o->crs, const char *) =
            apr_pstrcat(p, root, "/v4.28.0/tests/regression/tests", NULL);
    }
    return 0;
}

static int run(apr_pool_t *p, const dd_opts_t *o)
{
    pf_payloads_t tree, crs;
    dd_stats_t st[3];
    int i, files = 0, failed = 0, passed = 0;

    memset(st, 0, sizeof(st));
    for (i = 0; i < 3; i++) {
        st[i].verbose = o->verbose;
        st[i].digest = 0xcbf29ce484222325ULL;
    }
    pf_payloads_init(p, &tree);
    if (load_tree(p, &tree) != 0) {
        printf("detect-diff: 0 passed, 1 failed (tests/detect corpus missing under %s)\n",
               BW_SRCDIR);
        return 1;
    }
    pf_payloads_init(p, &crs);
    for (i = 0; i < o->crs->nelts; i++)
        files += pf_corpus_load_yaml_dir(&crs, APR_ARRAY_IDX(o->crs, i, const char *));
    add_all_pieces(&crs);
    printf("detect-diff: %d corpus values, %d CRS values (%d YAML files), %ld random (seed %llu)\n",
           tree.items->nelts, crs.items->nelts, files, o->random, (unsigned long long)o->seed);
    check_set(&st[0], tree.items);
    failed += summary("corpus", &st[0], &passed);
    if (files > 0) {
        check_set(&st[1], crs.items);
        failed += summary("CRS", &st[1], &passed);
    } else {
        printf("  CRS: skipped, no YAML test files under the --crs directories\n");
    }
    check_random(&st[2], tree.items, o->random, o->seed);
    failed += summary("random", &st[2], &passed);
    printf("answers digest: corpus %016llx, CRS %016llx, random %016llx\n",
           (unsigned long long)st[0].digest, (unsigned long long)st[1].digest,
           (unsigned long long)st[2].digest);
    printf("detect-diff: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    apr_pool_t *p;
    dd_opts_t o;
    int rc;

    apr_initialize();
    apr_pool_create(&p, NULL);
    if (parse_args(p, argc, argv, &o) != 0) {
        fprintf(stderr, "usage: detect_diff [-n RANDOM] [-s SEED] [--crs DIR]... [-v]\n"
                        "       detect_diff --bench [-r ROUNDS]\n");
        rc = 2;
    } else {
        rc = o.bench ? dd_bench(p, BW_SRCDIR, o.rounds) : run(p, &o);
    }
    apr_pool_destroy(p);
    apr_terminate();
    return rc;
}
