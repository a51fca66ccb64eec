/*
 * tfn_triggers: what the transformations' trigger sets save. For benign
 * values it runs CRS's transformation chains two ways and prints ns per
 * value for each:
 *   old  every transformation of the chain is called, as today;
 *   new  a transformation is called only when bw_tfn_may_change() says the
 *        value holds one of its trigger bytes; once a call has changed the
 *        value, the chain computes the new value's presence set before its
 *        next check (none after the last transformation).
 * The presence set of the original value is computed once per value and
 * shared by all chains (as the engine would), so it is timed on its own and
 * added once to the all-chains total. Chains are timed independently (no
 * prefix sharing between chains). Before timing, both ways are checked to
 * give the same bytes for every value and chain.
 *
 * Values: every non-empty line of the .txt files in tests/detect/benign
 * ("lines"), and the keys and scalars of tests/detect/benign/json.txt split
 * at JSON punctuation ("json": short values such as a body parser yields).
 *
 *   build/out/tests/bench/tfn_triggers [--rounds N] [BENIGN_DIR]
 *
 * Not a test: nothing is asserted about time, and make check only builds it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <apr_general.h>
#include <apr_file_info.h>
#include "transformations/bw_tfn.h"

#ifndef BW_SRCDIR
#define BW_SRCDIR "."
#endif

#define MAX_CHAIN 8
#define MAX_FILES 64
#define CLEAR_EVERY 256 /* values between pool clears, in both ways */

/* The distinct chains of CRS v4 REQUEST-9xx rules (t:none left out), from
 * the most used on; names as the rules spell them. */
static const char *const chain_specs[] = {
    "urlDecodeUni",
    "lowercase",
    "utf8toUnicode,urlDecodeUni,htmlEntityDecode,jsDecode,cssDecode,removeNulls",
    "cmdLine",
    "urlDecodeUni,replaceComments",
    "escapeSeqDecode",
    "utf8toUnicode,urlDecodeUni,normalizePathWin",
    "lowercase,urlDecodeUni",
    "cmdLine,normalizePath",
    "urlDecodeUni,jsDecode,htmlEntityDecode",
    "lowercase,removeWhitespace",
    "htmlEntityDecode,lowercase",
    "utf8toUnicode,urlDecodeUni,removeNulls,cmdLine",
    "utf8toUnicode,urlDecodeUni,removeNulls",
    "utf8toUnicode,urlDecodeUni,htmlEntityDecode,jsDecode,cssDecode,lowercase,"
    "removeNulls",
    "urlDecodeUni,replaceComments,removeWhitespace",
    "urlDecodeUni,lowercase",
    "urlDecodeUni,compressWhitespace",
    "normalizePath,urlDecodeUni",
    "htmlEntityDecode,compressWhitespace",
    "utf8toUnicode,urlDecodeUni,htmlEntityDecode,jsDecode,cssDecode,removeNulls,"
    "removeWhitespace",
    "urlDecodeUni,removeCommentsChar",
    "urlDecodeUni,jsDecode,base64Decode,urlDecodeUni,jsDecode",
};
#define N_CHAINS (sizeof(chain_specs) / sizeof(chain_specs[0]))

typedef struct {
    const bw_tfn_def_t *t[MAX_CHAIN];
    int n;
} chain_t;

typedef struct {
    const char *name;
    bw_str_t *v;
    bw_byteset_t *present; /* presence set of each value */
    int n;
    double mean_len;
} corpus_t;

static const bw_tfn_env_t no_env = { NULL };
static volatile size_t sink; /* keeps the results from being optimised away */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static chain_t parse_chain(apr_pool_t *p, const char *spec)
{
    chain_t c;
    char *copy = apr_pstrdup(p, spec), *last, *name;

    c.n = 0;
    for (name = apr_strtok(copy, ",", &last); name != NULL;
         name = apr_strtok(NULL, ",", &last)) {
        c.t[c.n] = bw_tfn_lookup(name);
        if (c.t[c.n] == NULL || c.n + 1 >= MAX_CHAIN) {
            fprintf(stderr, "tfn_triggers: bad chain %s\n", spec);
            exit(2);
        }
        c.n++;
    }
    return c;
}

/* Both ways are inline: an engine runs a chain inside its executor loop,
 * and a call per value (about 5 ns here) would cost more than a chain
 * whose transformations are all skipped. */

/* Today's way: every transformation runs. Returns the calls made. */
static inline int run_old(const chain_t *c, apr_pool_t *pool, bw_str_t in,
                          bw_str_t *out)
{
    int i;
    for (i = 0; i < c->n; i++)
        c->t[i]->fn(&no_env, pool, in, &in);
    *out = in;
    return c->n;
}

/* With trigger sets: present is the presence set of in. A value changed
 * along the chain gets its own set, computed only when a transformation is
 * left to check (never after the last one). */
static inline int run_new(const chain_t *c, apr_pool_t *pool, bw_str_t in,
                          const bw_byteset_t *present, bw_str_t *out)
{
    bw_byteset_t own;
    int i, calls = 0, stale = 0;

    for (i = 0; i < c->n; i++) {
        if (stale) {
            bw_byteset_of(in, &own);
            present = &own;
            stale = 0;
        }
        if (!bw_tfn_may_change(c->t[i], present))
            continue;
        calls++;
        stale = c->t[i]->fn(&no_env, pool, in, &in);
    }
    *out = in;
    return calls;
}

/* ------------------------------------------------------------------------ */
/* the corpora                                                              */

static bw_str_t read_all(apr_pool_t *p, const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long size;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) {
        fprintf(stderr, "tfn_triggers: cannot read %s\n", path);
        exit(2);
    }
    rewind(f);
    buf = apr_palloc(p, (apr_size_t)size + 1);
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "tfn_triggers: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    return bw_str_n(buf, (size_t)size);
}

static void add_lines(apr_array_header_t *vals, bw_str_t text)
{
    size_t i, start = 0;
    for (i = 0; i <= text.len; i++)
        if (i == text.len || text.data[i] == '\n') {
            if (i > start)
                *(bw_str_t *)apr_array_push(vals) =
                    bw_str_n(text.data + start, i - start);
            start = i + 1;
        }
}

/* The keys and scalars of JSON text: strings without their quotes (escapes
 * left as they are), and bare words and numbers. */
static void add_json_leaves(apr_array_header_t *vals, bw_str_t text)
{
    size_t i = 0, start;

    while (i < text.len) {
        char c = text.data[i];
        if (strchr(" \t\r\n{}[],:", c) != NULL) {
            i++;
            continue;
        }
        if (c == '"') {
            for (start = ++i; i < text.len && text.data[i] != '"'; i++)
                if (text.data[i] == '\\')
                    i++;
        } else {
            for (start = i; i < text.len
                            && strchr(" \t\r\n{}[],:\"", text.data[i]) == NULL;
                 i++)
                ;
        }
        if (i > text.len)
            i = text.len;
        *(bw_str_t *)apr_array_push(vals) = bw_str_n(text.data + start,
                                                     i - start);
        if (c == '"')
            i++;
    }
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every line of the .txt files in dir, the files taken in name order. */
static void add_dir_lines(apr_pool_t *p, const char *dir,
                          apr_array_header_t *vals)
{
    const char *names[MAX_FILES];
    apr_finfo_t fi;
    apr_dir_t *d;
    int n = 0, i;

    if (apr_dir_open(&d, dir, p) != APR_SUCCESS) {
        fprintf(stderr, "tfn_triggers: cannot open %s\n", dir);
        exit(2);
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS)
        if (n < MAX_FILES && strlen(fi.name) > 4
            && strcmp(fi.name + strlen(fi.name) - 4, ".txt") == 0)
            names[n++] = apr_pstrdup(p, fi.name);
    apr_dir_close(d);
    qsort(names, (size_t)n, sizeof(names[0]), cmp_names);
    for (i = 0; i < n; i++)
        add_lines(vals, read_all(p, apr_pstrcat(p, dir, "/", names[i], NULL)));
}

static corpus_t make_corpus(apr_pool_t *p, const char *name,
                            apr_array_header_t *vals)
{
    corpus_t c;
    size_t total = 0;
    int i;

    c.name = name;
    c.v = (bw_str_t *)vals->elts;
    c.n = vals->nelts;
    c.present = apr_palloc(p, sizeof(bw_byteset_t) * (size_t)(c.n + 1));
    for (i = 0; i < c.n; i++) {
        bw_byteset_of(c.v[i], &c.present[i]);
        total += c.v[i].len;
    }
    c.mean_len = c.n ? (double)total / c.n : 0;
    return c;
}

/* ------------------------------------------------------------------------ */
/* timing                                                                   */

/* Both ways give the same bytes for every value of cs. */
static void verify(const chain_t *c, const char *spec, const corpus_t *cs,
                   apr_pool_t *pool)
{
    bw_str_t a, b;
    int i;

    for (i = 0; i < cs->n; i++) {
        apr_pool_clear(pool);
        run_old(c, pool, cs->v[i], &a);
        run_new(c, pool, cs->v[i], &cs->present[i], &b);
        if (!bw_str_eq(a, b)) {
            fprintf(stderr, "tfn_triggers: %s differs on %s value %d\n", spec,
                    cs->name, i);
            exit(1);
        }
    }
}

/* One pass of a way (0 byteset_of alone, 1 old, 2 new) over cs, reps
 * times; returns the transformation calls made. */
static long pass(int way, const chain_t *c, const corpus_t *cs,
                 apr_pool_t *pool, int reps)
{
    bw_byteset_t set;
    bw_str_t out;
    size_t keep = 0;
    long calls = 0;
    int r, i;

    for (r = 0; r < reps; r++)
        for (i = 0; i < cs->n; i++) {
            if (i % CLEAR_EVERY == 0)
                apr_pool_clear(pool);
            if (way == 0) {
                bw_byteset_of(cs->v[i], &set);
                keep += (size_t)set.w[1];
                continue;
            }
            calls += way == 1 ? run_old(c, pool, cs->v[i], &out)
                              : run_new(c, pool, cs->v[i], &cs->present[i],
                                        &out);
            keep += out.len;
        }
    sink += keep;
    return calls;
}

/* ns per value of one pass of a way; *calls_per_value set when asked. */
static double time_pass(int way, const chain_t *c, const corpus_t *cs,
                        apr_pool_t *pool, double *calls_per_value)
{
    int reps = cs->n ? (100000 + cs->n - 1) / cs->n : 1;
    double t0 = now_ns(), t;
    long calls = pass(way, c, cs, pool, reps);

    t = (now_ns() - t0) / ((double)reps * cs->n);
    if (calls_per_value)
        *calls_per_value = (double)calls / ((double)reps * cs->n);
    return t;
}

/* Times one chain both ways on each corpus, the ways interleaved round by
 * round (other load on the machine hits both alike), best round kept;
 * prints its line and adds to totals (old, new per corpus). */
static void bench_chain(const char *spec, const corpus_t *cs, int ncs,
                        apr_pool_t *pool, int rounds, double *totals)
{
    chain_t c = parse_chain(pool, spec);
    double old_ns, new_ns, calls, t;
    int k, r;

    for (k = 0; k < ncs; k++) {
        verify(&c, spec, &cs[k], pool);
        old_ns = new_ns = 1e300;
        for (r = 0; r < rounds; r++) {
            if ((t = time_pass(1, &c, &cs[k], pool, NULL)) < old_ns)
                old_ns = t;
            if ((t = time_pass(2, &c, &cs[k], pool, &calls)) < new_ns)
                new_ns = t;
        }
        totals[2 * k] += old_ns;
        totals[2 * k + 1] += new_ns;
        printf("%7.1f %7.1f %5.0f%% |", old_ns, new_ns,
               100.0 * (1.0 - calls / c.n));
    }
    printf(" %s\n", spec);
}

/* The best of rounds passes of a way that needs no chain: 0 (bw_byteset_of
 * alone) or 1 with the empty chain (the harness itself). */
static double time_fixed(int way, const corpus_t *cs, apr_pool_t *pool,
                         int rounds)
{
    chain_t none;
    double best = 1e300, t;
    int r;

    none.n = 0;
    for (r = 0; r < rounds; r++)
        if ((t = time_pass(way, &none, cs, pool, NULL)) < best)
            best = t;
    return best;
}

int main(int argc, char **argv)
{
    const char *dir = BW_SRCDIR "/tests/detect/benign";
    double totals[4] = { 0, 0, 0, 0 }, set_ns[2];
    apr_array_header_t *lines, *json;
    corpus_t cs[2];
    apr_pool_t *root, *pool;
    int rounds = 21, i, k;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else
            dir = argv[i];
    }
    apr_initialize();
    apr_pool_create(&root, NULL);
    apr_pool_create(&pool, root);
    lines = apr_array_make(root, 8192, sizeof(bw_str_t));
    json = apr_array_make(root, 1024, sizeof(bw_str_t));
    add_dir_lines(root, dir, lines);
    add_json_leaves(json, read_all(root, apr_pstrcat(root, dir, "/json.txt",
                                                     NULL)));
    cs[0] = make_corpus(root, "lines", lines);
    cs[1] = make_corpus(root, "json", json);
    for (k = 0; k < 2; k++) {
        set_ns[k] = time_fixed(0, &cs[k], pool, rounds);
        printf("%-5s %5d values, mean %5.1f bytes; bw_byteset_of %5.1f "
               "ns/value; harness alone (empty chain) %4.1f ns/value\n",
               cs[k].name, cs[k].n, cs[k].mean_len, set_ns[k],
               time_fixed(1, &cs[k], pool, rounds));
    }
    printf("\nns per value, best of %d rounds; skipped: share of the "
           "transformation calls the trigger check avoids\n", rounds);
    printf("lines:  old     new  skipped| json:  old     new skipped| chain\n");
    for (i = 0; i < (int)N_CHAINS; i++)
        bench_chain(chain_specs[i], cs, 2, pool, rounds, totals);
    for (k = 0; k < 2; k++)
        printf("%s, all %d chains: old %.0f ns/value, new %.0f + %.1f "
               "(one bw_byteset_of) = %.0f ns/value, %.1fx\n", cs[k].name,
               (int)N_CHAINS, totals[2 * k], totals[2 * k + 1], set_ns[k],
               totals[2 * k + 1] + set_ns[k],
               totals[2 * k] / (totals[2 * k + 1] + set_ns[k]));
    apr_pool_destroy(root);
    apr_terminate();
    return 0;
}
