/*
 * bulwark: the command-line face of the engine Apache runs.
 *   bulwark check FILE…                  load and compile a rule set
 *   bulwark tfn NAME                     one transformation, stdin -> stdout
 *   bulwark op '@NAME PARAM'             one operator on stdin (exit 0 match, 1 no)
 *   bulwark eval --rules FILE [--request FILE]   a raw HTTP request through phases 1-2
 * Each subcommand lives in its own file (cli_*.c); this one dispatches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "cli.h"
#include "cli_log.h"
#include "bw_engine.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: bulwark COMMAND [ARGS]\n"
            "ModSecurity-language rule engine of Bulwark, for the command line.\n\n"
            "Commands:\n"
            "  check FILE...                      load and compile rule files, print a summary\n"
            "  tfn NAME                           apply one transformation to stdin\n"
            "  op '@NAME PARAM'                   run one operator on stdin (exit 0 match, 1 no match)\n"
            "  eval --rules FILE [--request FILE] run a raw HTTP request through phases 1 and 2\n"
            "  bench --rules FILE REQUEST...      time the engine alone on recorded requests\n"
            "  diff --rules FILE --no-fold|--no-scan REQUEST...\n"
            "                                     optimised vs plain program on requests\n"
            "  log [OPTION]... FILE...            read audit logs: table or JSON, filtered\n"
            "  explain [--unique-id ID] FILE...   matched rules of audit records and the\n"
            "                                     narrowest exclusion of each\n"
            "  version                            print the version\n\n"
            "Run 'bulwark COMMAND --help' for a command's options.\n");
}

int main(int argc, const char *const *argv)
{
    apr_pool_t *pool;
    int rc;

    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS) {
        fprintf(stderr, "bulwark: cannot initialise APR\n");
        return 2;
    }
    atexit(apr_terminate);
    apr_pool_create(&pool, NULL);
    bw_engine_init(pool);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("bulwark %s\n", BW_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "check"))
        rc = bw_cli_check(pool, argc - 1, argv + 1);
    else if (!strcmp(argv[1], "tfn"))
        rc = bw_cli_tfn(pool, argc - 1, argv + 1);
    else if (!strcmp(argv[1], "op"))
        rc = bw_cli_op(pool, argc - 1, argv + 1);
    else if (!strcmp(argv[1], "eval"))
        rc = bw_cli_eval(pool, argc - 1, argv + 1);
    else if (!strcmp(argv[1], "bench"))
        rc = bw_cli_bench(pool, argc - 1, argv + 1);
    else if (!strcmp(argv[1], "diff"))
        rc = bw_cli_diff(pool, argc - 1, argv + 1);
    else if (!strcmp(argv[1], "log"))
        rc = bw_cli_log(pool, argc - 1, argv + 1);
    else if (!strcmp(argv[1], "explain"))
        rc = bw_cli_explain(pool, argc - 1, argv + 1);
    else {
        fprintf(stderr, "bulwark: unknown command '%s'\n", argv[1]);
        usage(stderr);
        rc = 2;
    }
    apr_pool_destroy(pool);
    return rc;
}
