/*
 * bulwark bench — the engine alone, no Apache, no network: recorded raw
 * requests run through the five phases of a rule set again and again:
 * 1 and 2 with the request, 3 and 4 with the small page the perf
 * harness's backend answers (bw_cli_respond), 5.
 * For each request it prints the median time per transaction over several
 * rounds and what the executor did in one transaction (rules evaluated,
 * rules the scan ruled out, operator runs, scan hits confirmed, values and
 * bytes scanned). The pool is reused across iterations (cleared, not
 * destroyed), as httpd reuses request pools.
 *
 * --no-scan (alias --no-prefilter) and --no-fold build the program without
 * the multi-pattern scan or without folding, to measure what each buys.
 *
 * Besides wall time it prints the process CPU time per transaction (the
 * machines we measure on are shared: CPU time is what a request costs the
 * server). --budget MS marks every request whose median CPU time per
 * transaction exceeds MS milliseconds and makes the exit status 3: the
 * worst-case goal for the hostile shapes of tools/perf/requests/hostile-*
 * (50 ms at the recommended body limits, 500 ms at ten times them) is
 * checked with it, as a benchmark, never as a timed test.
 *
 * --cold MB runs every transaction with cold caches: before each one the
 * bench writes and reads MB megabytes of its own, so the rules, the scan
 * databases and the transaction's memory come from main memory, as in a
 * server where the network stack, the proxy and other requests ran in
 * between. Only the transactions are timed (clocks read around each one).
 * In Apache a GET executes about the instructions the bench executes
 * (callgrind, apache2 -X) but takes two to three times its CPU time in the
 * hot loop: the difference is the caches, and --cold shows it.
 *
 * --metrics-ab PAIRS measures what the live counters cost, in one process
 * and one program: PAIRS pairs of batches of N transactions, one batch
 * counting and one not (bw_tx_set_metrics with and without the counters,
 * which is all SecMetricsEngine Off changes in a transaction), their order
 * swapped every pair, and prints the median and quartiles of the per-pair
 * ratios of CPU and wall time. Whatever slows the machine for a while
 * slows both batches of a pair, so the ratio resolves a percent where
 * medians of separate runs (or two binaries) move by ten. With --cold each
 * transaction runs after an eviction, as in a busy server.
 *
 * --latency also times each transaction alone (a monotonic clock read
 * around it) and prints the median and the 99th percentile in µs: what one
 * request pays, e.g. for a collection store's initcol and increment
 * (tools/perf/shared-bench compares the backends with it).
 */
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include "cli.h"
#include "base/bw_metrics.h"

#define ROUNDS 5

static size_t cold_bytes;     /* --cold: bytes written and read between transactions */
static int latency;           /* --latency: percentiles of single transactions */
static unsigned char *cold_buf;

/* Evicts the caches: every line of a buffer larger than them written,
 * then read back (the sum keeps the reads). */
static unsigned evict(void)
{
    size_t i;
    unsigned sum = 0;
    for (i = 0; i < cold_bytes; i += 64)
        cold_buf[i]++;
    for (i = 0; i < cold_bytes; i += 64)
        sum += cold_buf[i];
    return sum;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* CPU time of the whole process, in ns. */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The collection store every transaction of the bench uses (as a worker
 * of one Apache: the shm backend by default, in this process's memory). */
static bw_store_t *bench_store;
/* The live counters every transaction adds to (as in Apache: on unless the
 * rules say SecMetricsEngine Off, or --no-metrics), in this process's memory. */
static bw_metrics_t *bench_metrics;
static int bench_sample;
static int ab_pairs;          /* --metrics-ab: pairs of batches, counting and not */
static int top_rules;         /* --top: the rules that took most of a transaction */

static int run_one(apr_pool_t *p, const bw_program_t *prog, const bw_cli_request_t *rq,
                   bw_tx_stats_t *st, int count)
{
    bw_intervention_t iv;
    bw_tx_t *tx = bw_tx_create(p, prog, &rq->req, NULL);
    int rc;
    bw_tx_set_store(tx, bench_store);
    if (count)
        bw_tx_set_metrics(tx, bench_metrics, bench_sample);
    rc = bw_tx_run_phase(tx, BW_PHASE_REQUEST_HEADERS, &iv);
    if (!rc) {
        if (rq->body.len && bw_tx_request_body_access(tx))
            bw_tx_request_body_append(tx, rq->body.data, rq->body.len);
        bw_tx_request_body_end(tx);
        rc = bw_tx_run_phase(tx, BW_PHASE_REQUEST_BODY, &iv);
    }
    if (!rc) {
        bw_cli_respond(p, tx);
        rc = bw_tx_run_phase(tx, BW_PHASE_RESPONSE_HEADERS, &iv);
        if (!rc)
            rc = bw_tx_run_phase(tx, BW_PHASE_RESPONSE_BODY, &iv);
    }
    bw_tx_run_phase(tx, BW_PHASE_LOGGING, &iv);
    if (st)
        *st = *bw_tx_stats(tx);
    return rc;
}

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* --latency: iters transactions, each timed alone. */
static void bench_latency(apr_pool_t *txp, const bw_program_t *prog, const char *name,
                          const bw_cli_request_t *rq, int iters)
{
    double *t = malloc(sizeof(double) * (size_t)iters);
    int i;
    if (!t)
        return;
    for (i = 0; i < iters; i++) {
        double t0 = mono_ns();
        run_one(txp, prog, rq, NULL, 1);
        apr_pool_clear(txp);
        t[i] = mono_ns() - t0;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    printf("%-28s latency median %.2f us, p99 %.2f us, max %.2f us (%d transactions)\n", "",
           t[iters / 2] / 1e3, t[(size_t)((double)iters * 0.99)] / 1e3, t[iters - 1] / 1e3, iters);
    free(t);
}

/* n transactions, counted in the live counters or not (count); their CPU
 * and wall ns, timed as one span or, with --cold, each transaction alone
 * after an untimed eviction. Returns the last one's disruption. */
static int batch(apr_pool_t *txp, const bw_program_t *prog, const bw_cli_request_t *rq,
                 int n, int count, double *cpu, double *wall)
{
    volatile unsigned sink = 0;      /* keeps the eviction's reads */
    double c0 = 0, w0 = 0;
    int i, disrupted = 0;
    *cpu = *wall = 0;
    for (i = 0; i < n; i++) {
        if (cold_bytes || i == 0) {
            if (cold_bytes)
                sink += evict();
            c0 = cpu_ns();
            w0 = mono_ns();
        }
        disrupted = run_one(txp, prog, rq, NULL, count);
        apr_pool_clear(txp);
        if (cold_bytes || i == n - 1) {
            *cpu += cpu_ns() - c0;
            *wall += mono_ns() - w0;
        }
    }
    return disrupted;
}

/* --metrics-ab: the counters' cost as paired ratios (see the top). */
static void bench_metrics_ab(apr_pool_t *txp, const bw_program_t *prog,
                             const bw_cli_request_t *rq, int iters)
{
    double *rc = malloc(sizeof(double) * (size_t)ab_pairs * 2), *rw = rc + ab_pairs;
    double on_cpu = 0, off_cpu = 0;
    int r;
    if (!rc)
        return;
    for (r = 0; r < ab_pairs; r++) {
        double c[2], w[2];
        int first = r & 1;       /* counting first in odd pairs */
        batch(txp, prog, rq, iters, first, &c[first], &w[first]);
        batch(txp, prog, rq, iters, !first, &c[!first], &w[!first]);
        rc[r] = c[1] / c[0];
        rw[r] = w[1] / w[0];
        on_cpu += c[1];
        off_cpu += c[0];
    }
    qsort(rc, (size_t)ab_pairs, sizeof(double), cmp_double);
    qsort(rw, (size_t)ab_pairs, sizeof(double), cmp_double);
    printf("%-28s metrics on/off: cpu %+.2f%% (quartiles %+.2f%% %+.2f%%), wall %+.2f%%, "
           "%d pairs of %d transactions, %.2f vs %.2f us cpu/tx\n", "",
           (rc[ab_pairs / 2] - 1) * 100, (rc[ab_pairs / 4] - 1) * 100,
           (rc[ab_pairs * 3 / 4] - 1) * 100, (rw[ab_pairs / 2] - 1) * 100, ab_pairs, iters,
           on_cpu / ab_pairs / iters / 1e3, off_cpu / ab_pairs / iters / 1e3);
    free(rc);
}

/* --top N: iters more transactions with every rule timed (as
 * SecMetricsTimingSample 1), and the N rules that took the most of them,
 * from the live counters' sampled time. A rule's time is its chain's: its
 * operator runs, transformations of values the scan did not make, and
 * actions. The multi-pattern scan of a value source runs before the first
 * rule that reads it and is nobody's, as are the phases, the body and a
 * rule the scan rules out: the line above the list gives the rules' sum
 * against the transaction's time (each timed evaluation also pays two clock
 * reads). */
typedef struct {
    long id;
    uint64_t ns, evals;
} top_t;

static int cmp_top(const void *a, const void *b)
{
    const top_t *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : (x->id > y->id) - (x->id < y->id);
}

static void bench_top(apr_pool_t *txp, const bw_program_t *prog, const bw_cli_request_t *rq,
                      int iters)
{
    bw_metrics_snap_t a, b;
    apr_pool_t *sp;
    top_t *t;
    uint64_t sum = 0;
    double cpu, wall;
    int k, n, saved = bench_sample;
    if (apr_pool_create(&sp, NULL) != APR_SUCCESS)
        return;
    bw_metrics_read(bench_metrics, sp, 0, &a);
    bench_sample = 1;
    batch(txp, prog, rq, iters, 1, &cpu, &wall);
    bench_sample = saved;
    bw_metrics_read(bench_metrics, sp, 0, &b);
    n = a.nrules < b.nrules ? a.nrules : b.nrules;
    t = apr_pcalloc(sp, sizeof(*t) * (size_t)(n + 1));
    for (k = 0; k < n; k++) {
        t[k].id = b.rules[k].id;
        t[k].ns = a.rules[k].id == b.rules[k].id ? b.rules[k].ns - a.rules[k].ns : 0;
        t[k].evals = a.rules[k].id == b.rules[k].id ? b.rules[k].timed - a.rules[k].timed : 0;
        sum += t[k].ns;
    }
    qsort(t, (size_t)n, sizeof(*t), cmp_top);
    printf("%-28s top rules, every rule timed: rules %.1f us/tx of %.1f us/tx cpu (with the "
           "clocks)\n", "", (double)sum / iters / 1e3, cpu / iters / 1e3);
    for (k = 0; k < n && k < top_rules && t[k].ns; k++)
        printf("%-28s   %-10ld %9.2f us/tx %5.1f%%  %6.1f evaluations/tx\n", "", t[k].id,
               (double)t[k].ns / iters / 1e3, sum ? 100.0 * (double)t[k].ns / (double)sum : 0.0,
               (double)t[k].evals / iters);
    apr_pool_destroy(sp);
}

/* Returns 1 when the median CPU time per transaction is over budget_ms
 * (0: no budget). */
static int bench_request(apr_pool_t *pool, const bw_program_t *prog, const char *name,
                         const bw_cli_request_t *rq, int iters, double budget_ms)
{
    apr_pool_t *txp;
    double per[ROUNDS], cpu[ROUNDS];
    int r, disrupted = 0, over;
    bw_tx_stats_t st;

    apr_pool_create(&txp, pool);
    run_one(txp, prog, rq, &st, 1);     /* warm up: JIT stacks, page faults; and the counts */
    apr_pool_clear(txp);
    for (r = 0; r < ROUNDS; r++) {
        double c, w;
        disrupted = batch(txp, prog, rq, iters, 1, &c, &w);
        per[r] = w / iters;
        cpu[r] = c / iters;
    }
    qsort(per, ROUNDS, sizeof(double), cmp_double);
    qsort(cpu, ROUNDS, sizeof(double), cmp_double);
    over = budget_ms > 0 && cpu[ROUNDS / 2] > budget_ms * 1e6;
    printf("%-28s %10.0f ns/tx  (min %.0f, max %.0f)  %s\n", name, per[ROUNDS / 2],
           per[0], per[ROUNDS - 1], disrupted ? "DISRUPTED" : "pass");
    printf("%-28s cpu %.3f ms/tx, body %lu bytes%s\n", "", cpu[ROUNDS / 2] / 1e6,
           (unsigned long)rq->body.len,
           budget_ms <= 0 ? "" : over ? "  OVER BUDGET" : "  within budget");
    printf("%-28s rules %lu, skipped by scan %lu, operator runs %lu (confirming a hit %lu), "
           "scanned %lu values / %lu bytes in %lu calls\n", "", st.rules, st.rules_skipped,
           st.op_runs, st.confirms, st.scans, st.bytes_scanned, st.scan_calls);
    if (latency)
        bench_latency(txp, prog, name, rq, iters);
    if (ab_pairs)
        bench_metrics_ab(txp, prog, rq, iters);
    if (top_rules)
        bench_top(txp, prog, rq, iters);
    apr_pool_destroy(txp);
    return over;
}

static void bench_usage(FILE *o)
{
    fprintf(o, "Usage: bulwark bench --rules FILE [--rules FILE...] [--iterations N] [--no-scan] [--latency]\n"
               "                     [--no-fold] [--budget MS] [--cold MB] [--metrics-ab PAIRS]\n"
               "                     [--top N]\n"
               "                     REQUEST...\n"
               "Run each raw HTTP request file N times (default 200) in %d rounds through the\n"
               "five phases of the rule set (3 and 4 with the perf backend's small 200 text/html\n"
               "page); print the median wall and CPU time per transaction and what the executor\n"
               "did in one transaction. SecRuleEngine is On unless the rules set it.\n"
               "  --no-scan    no multi-pattern scan: every operator runs on every value\n"
               "               (--no-prefilter is the same)\n"
               "  --no-fold    keep the rules the configuration decides as rules\n"
               "  --no-metrics count nothing (SecMetricsEngine Off): the live counters' cost\n"
               "  --budget MS  mark requests whose median CPU time per transaction is over MS\n"
               "               milliseconds; exit status 3 if any (e.g. the hostile shapes of\n"
               "               tools/perf/requests/hostile-*.http with --budget 50)\n"
               "  --cold MB    before each transaction write and read MB megabytes of other\n"
               "               memory (caches cold, as in a busy server); only the\n"
               "               transactions are timed\n"
               "  --latency    also time each transaction alone: median and 99th percentile\n"
               "  --metrics-ab PAIRS  the counters' cost in one process: PAIRS pairs of N\n"
               "               transactions counting and N not, order swapped each pair;\n"
               "               median and quartiles of the per-pair CPU and wall ratios\n"
               "  --top N      --iterations more transactions, every rule timed: the N\n"
               "               rules that took the most, in us per transaction (operators,\n"
               "               transformations, actions; not the scans, which run before\n"
               "               the rules)\n", ROUNDS);
}

/* Options first; returns the index of the first request or -1 (usage). */
static int parse_args(bw_config_t *cfg, int argc, const char *const *argv, int *iters,
                      unsigned *flags, double *budget_ms)
{
    int i, nrules = 0;
    for (i = 1; i < argc; i++) {
        const char *e;
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) {
            e = bw_config_load_file(cfg, argv[++i]);
            if (e) {
                fprintf(stderr, "%s\n", e);
                return -2;
            }
            nrules++;
        } else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
            *iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--no-prefilter") || !strcmp(argv[i], "--no-scan")) {
            *flags |= BW_PROG_NO_SCAN;
        } else if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
            *budget_ms = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--cold") && i + 1 < argc) {
            long mb = atol(argv[++i]);
            if (mb <= 0 || mb > 4096) {
                fprintf(stderr, "bulwark bench: --cold takes megabytes, 1 to 4096\n");
                return -2;
            }
            cold_bytes = (size_t)mb << 20;
        } else if (!strcmp(argv[i], "--latency")) {
            latency = 1;
        } else if (!strcmp(argv[i], "--no-fold")) {
            *flags |= BW_PROG_NO_FOLD;
        } else if (!strcmp(argv[i], "--metrics-ab") && i + 1 < argc) {
            ab_pairs = atoi(argv[++i]);
            if (ab_pairs < 1 || ab_pairs > 1000000) {
                fprintf(stderr, "bulwark bench: --metrics-ab takes a number of pairs, 1 to 1000000\n");
                return -2;
            }
        } else if (!strcmp(argv[i], "--top") && i + 1 < argc) {
            top_rules = atoi(argv[++i]);
            if (top_rules < 1 || top_rules > 10000) {
                fprintf(stderr, "bulwark bench: --top takes a number of rules, 1 to 10000\n");
                return -2;
            }
        } else if (!strcmp(argv[i], "--no-metrics")) {
            bw_config_directive(cfg, "SecMetricsEngine", "Off", "(bulwark bench)", 0);
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            fprintf(stderr, "bulwark bench: unknown option %s\n", argv[i]);
            return -1;
        } else {
            break;
        }
    }
    return nrules && *iters > 0 && i < argc ? i : -1;
}

int bw_cli_bench(apr_pool_t *pool, int argc, const char *const *argv)
{
    bw_config_t *cfg = bw_config_create(pool);
    bw_program_t *prog;
    char *err = NULL;
    int i, iters = 200, first, over = 0;
    unsigned flags = 0;
    double budget_ms = 0;

    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        bench_usage(stdout);
        return 0;
    }
    bw_config_directive(cfg, "SecRuleEngine", "On", "(bulwark bench)", 0);
    first = parse_args(cfg, argc, argv, &iters, &flags, &budget_ms);
    if (first < 0) {
        if (first == -1)
            bench_usage(stderr);
        return 2;
    }
    if (cold_bytes && !(cold_buf = apr_pcalloc(pool, cold_bytes))) {
        fprintf(stderr, "bulwark bench: no memory for --cold\n");
        return 2;
    }
    prog = bw_program_build_ex(pool, NULL, cfg, flags, &err);
    if (!prog) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    bench_store = bw_store_open(pool, bw_program_settings(prog), NULL, 0, NULL, &err);
    if (!bench_store) {
        fprintf(stderr, "bulwark bench: %s\n", err);
        return 2;
    }
    if (bw_program_settings(prog)->metrics_engine) {
        const char *merr = NULL;
        int adopted;
        bench_metrics = bw_metrics_attach(pool, NULL, 0, &adopted, &merr);
        if (!bench_metrics) {
            fprintf(stderr, "bulwark bench: %s\n", merr);
            return 2;
        }
        bench_sample = bw_program_settings(prog)->metrics_sample;
        bw_metrics_register_program(bench_metrics, prog);
    }
    if ((ab_pairs || top_rules) && !bench_metrics) {
        fprintf(stderr, "bulwark bench: %s needs the counters on (no --no-metrics, "
                        "no SecMetricsEngine Off)\n", ab_pairs ? "--metrics-ab" : "--top");
        return 2;
    }
    for (i = first; i < argc; i++) {
        bw_str_t *raw = bw_cli_read_all(pool, argv[i], &err);
        bw_cli_request_t rq;
        const char *e;
        if (!raw) {
            fprintf(stderr, "bulwark bench: %s\n", err);
            return 2;
        }
        e = bw_cli_parse_request(pool, *raw, &rq);
        if (e) {
            fprintf(stderr, "bulwark bench: %s: %s\n", argv[i], e);
            return 2;
        }
        over += bench_request(pool, prog, argv[i], &rq, iters, budget_ms);
    }
    if (over)
        printf("%d request(s) over the budget of %g ms CPU per transaction\n", over, budget_ms);
    return over ? 3 : 0;
}
