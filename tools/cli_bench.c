/*
 * bulwark bench — the engine alone, no Apache, no network: recorded raw
 * requests run through phases 1 and 2 of a rule set again and again. For
 * each request it prints the median time per transaction over several
 * rounds. The pool is reused across iterations (cleared, not destroyed), as
 * httpd reuses request pools.
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

static int run_one(apr_pool_t *p, const bw_program_t *prog, const bw_cli_request_t *rq)
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
    return rc;
}

static void bench_request(apr_pool_t *pool, const bw_program_t *prog, const char *name,
                          const bw_cli_request_t *rq, int iters)
{
    apr_pool_t *txp;
    double per[ROUNDS];
    int r, i, disrupted = 0;

    apr_pool_create(&txp, pool);
    run_one(txp, prog, rq);     /* warm up: JIT stacks, page faults */
    apr_pool_clear(txp);
    for (r = 0; r < ROUNDS; r++) {
        apr_time_t t0 = apr_time_now();
        for (i = 0; i < iters; i++) {
            disrupted = run_one(txp, prog, rq);
            apr_pool_clear(txp);
        }
        per[r] = (double)(apr_time_now() - t0) * 1000.0 / iters;
    }
    qsort(per, ROUNDS, sizeof(double), cmp_double);
    printf("%-28s %10.0f ns/tx  (min %.0f, max %.0f)  %s\n", name, per[ROUNDS / 2],
           per[0], per[ROUNDS - 1], disrupted ? "DISRUPTED" : "pass");
    apr_pool_destroy(txp);
}

static void bench_usage(FILE *o)
{
    fprintf(o, "Usage: bulwark bench --rules FILE [--rules FILE...] [--iterations N] [--no-prefilter] REQUEST...\n"
               "Run each raw HTTP request file through phases 1, 2 and 5 of the rule set N times\n"
               "(default 200) in %d rounds, and print the median ns per transaction.\n"
               "SecRuleEngine is On unless the rules set it.\n", ROUNDS);
}

int bw_cli_bench(apr_pool_t *pool, int argc, const char *const *argv)
{
    bw_config_t *cfg = bw_config_create(pool);
    bw_program_t *prog;
    char *err = NULL;
    int i, nrules = 0, iters = 200, nreq = 0, prefilter = 1;
    const char *e;

    bw_config_directive(cfg, "SecRuleEngine", "On", "(bulwark bench)", 0);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            bench_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) {
            e = bw_config_load_file(cfg, argv[++i]);
            if (e) {
                fprintf(stderr, "%s\n", e);
                return 2;
            }
            nrules++;
        } else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--no-prefilter")) {
            prefilter = 0;
        }
    }
    if (!nrules || iters <= 0) {
        bench_usage(stderr);
        return 2;
    }
    prog = bw_program_build(pool, NULL, cfg, &err);
    if (!prog) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    bw_program_set_prefilter(prog, prefilter);
    for (i = 1; i < argc; i++) {
        bw_str_t *raw;
        bw_cli_request_t rq;
        if (!strcmp(argv[i], "--rules") || !strcmp(argv[i], "--iterations")) {
            i++;
            continue;
        }
        if (!strcmp(argv[i], "--no-prefilter"))
            continue;
        raw = bw_cli_read_all(pool, argv[i], &err);
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
        nreq++;
    }
    if (!nreq) {
        bench_usage(stderr);
        return 2;
    }
    return 0;
}
