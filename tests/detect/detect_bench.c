/*
 * detect_diff --bench: what the detectors cost per value with and without
 * their fast paths, on
 *   - the benign corpus (the .txt files of tests/detect/benign, a value a line);
 *   - the argument names and values of the 27 KB JSON request body of
 *     tools/perf/requests/json-27k.http, as the JSON body processor hands
 *     them to rules 942100 / 941100 (ARGS_NAMES and ARGS);
 * and the share of values each fast path settles. Information only: no
 * figure here is a pass or a fail. Each figure is the best of ROUNDS
 * rounds, each round at least ~20 ms of work.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "corpus.h"
#include "detect_diff.h"
#include "body/bw_body.h"

enum { RUN_FAST, RUN_ON, RUN_OFF };   /* fast path alone, with it, without */

static int call(const dd_detector_t *d, int how, bw_str_t v)
{
    unsigned char res[DD_RES_MAX];
    return how == RUN_FAST ? d->fast(v) : how == RUN_ON ? d->on(v, res) : d->off(v, res);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds for reps passes of detector d (how: RUN_*) over vals. */
static double timed(const dd_detector_t *d, int how, const apr_array_header_t *vals, long reps)
{
    static volatile long sink;
    double t0 = now();
    long k, n = 0;
    int i;

    for (k = 0; k < reps; k++)
        for (i = 0; i < vals->nelts; i++)
            n += call(d, how, APR_ARRAY_IDX(vals, i, bw_str_t));
    sink += n;                    /* keeps the calls */
    return now() - t0;
}

/* One figure to measure: d over vals, best ns per value so far. */
typedef struct {
    const dd_detector_t *d;
    int how;
    const apr_array_header_t *vals;
    long reps;
    double best;
} dd_run_t;

/* The runs interleaved, round after round, each keeping its best: a
 * machine that is busy now and then slows every run alike. */
static void measure(dd_run_t *runs, int n, int rounds)
{
    int k, r;

    for (k = 0; k < n; k++) {
        runs[k].best = 1e30;
        runs[k].reps = 1;
        if (runs[k].vals->nelts == 0)
            continue;
        while (timed(runs[k].d, runs[k].how, runs[k].vals, runs[k].reps) < 0.02
               && runs[k].reps < (1L << 24))
            runs[k].reps *= 2;   /* ~20 ms a round */
    }
    for (r = 0; r < rounds; r++)
        for (k = 0; k < n; k++) {
            double ns;
            if (runs[k].vals->nelts == 0)
                continue;
            ns = timed(runs[k].d, runs[k].how, runs[k].vals, runs[k].reps) * 1e9
                / ((double)runs[k].reps * (double)runs[k].vals->nelts);
            if (ns < runs[k].best)
                runs[k].best = ns;
        }
}

/* The values of vals that fast() does not settle. */
static apr_array_header_t *unsettled(apr_pool_t *p, const apr_array_header_t *vals,
                                     int (*fast)(bw_str_t))
{
    apr_array_header_t *out = apr_array_make(p, vals->nelts + 1, sizeof(bw_str_t));
    int i;
    for (i = 0; i < vals->nelts; i++)
        if (!fast(APR_ARRAY_IDX(vals, i, bw_str_t)))
            APR_ARRAY_PUSH(out, bw_str_t) = APR_ARRAY_IDX(vals, i, bw_str_t);
    return out;
}

static void bench_set(apr_pool_t *p, const char *title, const apr_array_header_t *vals, int rounds)
{
    dd_run_t runs[4 * DD_NDETECTORS];
    const apr_array_header_t *rest[DD_NDETECTORS];
    int k;

    memset(runs, 0, sizeof(runs));
    for (k = 0; k < DD_NDETECTORS; k++) {
        dd_run_t *r = &runs[4 * k];
        rest[k] = unsettled(p, vals, dd_detectors[k].fast);
        r[0].how = RUN_OFF, r[1].how = RUN_ON, r[2].how = RUN_FAST, r[3].how = RUN_OFF;
        r[0].vals = r[1].vals = r[2].vals = vals;
        r[3].vals = rest[k];
        r[0].d = r[1].d = r[2].d = r[3].d = &dd_detectors[k];
    }
    measure(runs, 4 * DD_NDETECTORS, rounds);
    printf("%s: %d values\n", title, vals->nelts);
    for (k = 0; k < DD_NDETECTORS; k++) {
        const dd_run_t *r = &runs[4 * k];
        printf("  %-4s %6.1f ns/value without the fast path, %6.1f with it (%.1fx);"
               " fast path alone %5.1f,\n"
               "       it settles %5.1f%% of the values; the full detector on the rest"
               " %6.1f ns/value\n",
               dd_detectors[k].name, r[0].best, r[1].best, r[0].best / r[1].best, r[2].best,
               100.0 * (double)(vals->nelts - rest[k]->nelts) / (double)vals->nelts,
               rest[k]->nelts ? r[3].best : 0.0);
    }
}

typedef struct {
    apr_pool_t *pool;
    apr_array_header_t *vals;
} dd_args_t;

static int on_arg(void *ctx, bw_str_t name, bw_str_t value)
{
    dd_args_t *a = ctx;
    APR_ARRAY_PUSH(a->vals, bw_str_t) =
        bw_str_n(apr_pstrmemdup(a->pool, name.data, name.len), name.len);
    APR_ARRAY_PUSH(a->vals, bw_str_t) =
        bw_str_n(apr_pstrmemdup(a->pool, value.data, value.len), value.len);
    return 0;
}

/* ARGS_NAMES and ARGS of the JSON body of a raw HTTP request file. */
static int json_args(apr_pool_t *p, const char *path, apr_array_header_t *vals)
{
    bw_body_limits_t lim = { 512, 100000, 0, NULL, 0, '&' };
    dd_args_t args = { p, vals };
    bw_body_sink_t sink = { &args, on_arg, NULL, NULL };
    bw_body_result_t res;
    bw_body_parser_t *bp;
    bw_str_t req;
    const char *body;

    if (pf_corpus_read_file(p, path, &req) != 0)
        return -1;
    body = strstr(req.data, "\r\n\r\n");
    if (body == NULL)
        return -1;
    body += 4;
    memset(&res, 0, sizeof(res));
    bp = bw_body_json_create(p, &lim, &sink, &res);
    if (bw_body_feed(bp, body, req.len - (size_t)(body - req.data)) != 0
        || bw_body_finish(bp) != 0)
        return -1;
    return 0;
}

int dd_bench(apr_pool_t *p, const char *srcdir, int rounds)
{
    static const char *const shapes[] = {
        "red_clock", "json.records.rec_0001.description_short", "203.26", "EUR", "false",
        "paper_chair_jar_bracelet",
    };
    apr_array_header_t *benign = apr_array_make(p, 8192, sizeof(bw_str_t));
    apr_array_header_t *json = apr_array_make(p, 8192, sizeof(bw_str_t));
    apr_array_header_t *few = apr_array_make(p, 8, sizeof(bw_str_t));
    const char *req = apr_pstrcat(p, srcdir, "/tools/perf/requests/json-27k.http", NULL);
    size_t i;

    if (dd_load_benign(p, srcdir, benign) == 0 || json_args(p, req, json) != 0) {
        printf("detect-bench: corpus or %s missing\n", req);
        return 1;
    }
    for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        APR_ARRAY_PUSH(few, bw_str_t) = bw_str_make(shapes[i]);
    bench_set(p, "benign corpus (tests/detect/benign)", benign, rounds);
    bench_set(p, "JSON body of json-27k.http (ARGS_NAMES + ARGS)", json, rounds);
    bench_set(p, "the six JSON-ish values of the task", few, rounds);
    return 0;
}
