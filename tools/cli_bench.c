/*
 * bulwark bench — the engine alone, no Apache, no network: recorded raw
 * requests run through phases 1, 2 and 5 of a rule set again and again.
 * For each request it prints the median time per transaction over several
 * rounds and what the executor did in one transaction (rules evaluated,
 * rules the scan ruled out, operator runs, scan hits confirmed, values and
 * bytes scanned). The pool is reused across iterations (cleared, not
 * destroyed), as httpd reuses request pools.
 *
 * --no-scan (alias --no-prefilter) and --no-fold build the program without
 * the multi-pattern scan or without folding, to measure what each buys.
 */
#include <string.h>
#include <stdlib.h>
#include <apr_time.h>
#include "cli.h"

#define ROUNDS 5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run_one(apr_pool_t *p, const bw_program_t *prog, const bw_cli_request_t *rq,
                   bw_tx_stats_t *st)
{
    bw_intervention_t iv;
    bw_tx_t *tx = bw_tx_create(p, prog, &rq->req, NULL);
    int rc = bw_tx_run_phase(tx, BW_PHASE_REQUEST_HEADERS, &iv);
    if (!rc) {
        if (rq->body.len && bw_tx_request_body_access(tx))
            bw_tx_request_body_append(tx, rq->body.data, rq->body.len);
        bw_tx_request_body_end(tx);
        rc = bw_tx_run_phase(tx, BW_PHASE_REQUEST_BODY, &iv);
    }
    bw_tx_run_phase(tx, BW_PHASE_LOGGING, &iv);
    if (st)
        *st = *bw_tx_stats(tx);
    return rc;
}

static void bench_request(apr_pool_t *pool, const bw_program_t *prog, const char *name,
                          const bw_cli_request_t *rq, int iters)
{
    apr_pool_t *txp;
    double per[ROUNDS];
    int r, i, disrupted = 0;
    bw_tx_stats_t st;

    apr_pool_create(&txp, pool);
    run_one(txp, prog, rq, &st);     /* warm up: JIT stacks, page faults; and the counts */
    apr_pool_clear(txp);
    for (r = 0; r < ROUNDS; r++) {
        apr_time_t t0 = apr_time_now();
        for (i = 0; i < iters; i++) {
            disrupted = run_one(txp, prog, rq, NULL);
            apr_pool_clear(txp);
        }
        per[r] = (double)(apr_time_now() - t0) * 1000.0 / iters;
    }
    qsort(per, ROUNDS, sizeof(double), cmp_double);
    printf("%-28s %10.0f ns/tx  (min %.0f, max %.0f)  %s\n", name, per[ROUNDS / 2],
           per[0], per[ROUNDS - 1], disrupted ? "DISRUPTED" : "pass");
    printf("%-28s rules %lu, skipped by scan %lu, operator runs %lu (confirming a hit %lu), "
           "scanned %lu values / %lu bytes\n", "", st.rules, st.rules_skipped, st.op_runs,
           st.confirms, st.scans, st.bytes_scanned);
    apr_pool_destroy(txp);
}

static void bench_usage(FILE *o)
{
    fprintf(o, "Usage: bulwark bench --rules FILE [--rules FILE...] [--iterations N] [--no-scan]\n"
               "                     [--no-fold] REQUEST...\n"
               "Run each raw HTTP request file through phases 1, 2 and 5 of the rule set N times\n"
               "(default 200) in %d rounds; print the median ns per transaction and what the\n"
               "executor did in one transaction. SecRuleEngine is On unless the rules set it.\n"
               "  --no-scan   no multi-pattern scan: every operator runs on every value\n"
               "              (--no-prefilter is the same)\n"
               "  --no-fold   keep the rules the configuration decides as rules\n", ROUNDS);
}

/* Options first; returns the index of the first request or -1 (usage). */
static int parse_args(bw_config_t *cfg, int argc, const char *const *argv, int *iters,
                      unsigned *flags)
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
        } else if (!strcmp(argv[i], "--no-fold")) {
            *flags |= BW_PROG_NO_FOLD;
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
    int i, iters = 200, first;
    unsigned flags = 0;

    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        bench_usage(stdout);
        return 0;
    }
    bw_config_directive(cfg, "SecRuleEngine", "On", "(bulwark bench)", 0);
    first = parse_args(cfg, argc, argv, &iters, &flags);
    if (first < 0) {
        if (first == -1)
            bench_usage(stderr);
        return 2;
    }
    prog = bw_program_build_ex(pool, NULL, cfg, flags, &err);
    if (!prog) {
        fprintf(stderr, "%s\n", err);
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
        bench_request(pool, prog, argv[i], &rq, iters);
    }
    return 0;
}
