/*
 * bulwark check FILE… — load rule files as Apache would (Includes
 * followed), compile every rule, print a summary; every error is printed as
 * file:line: reason and the exit status is 0 only when the set is clean.
 * Each use of something Bulwark does differently from mod_security2
 * (docs/compatibility.md) is a warning, file:line: warning: …; warnings
 * never change the exit status.
 */
#include <string.h>
#include <stdlib.h>
#include "cli.h"
#include "bw_engine.h"
#include "openapi/bw_openapi.h"

typedef struct {
    const char *name;
    int count;
} named_count_t;

static int by_count(const void *a, const void *b)
{
    const named_count_t *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    return strcmp(x->name, y->name);
}

static void print_counts(apr_pool_t *p, const char *title, apr_hash_t *h)
{
    apr_hash_index_t *hi;
    int n = apr_hash_count(h), i = 0;
    named_count_t *arr = apr_pcalloc(p, sizeof(*arr) * (size_t)(n ? n : 1));
    for (hi = apr_hash_first(p, h); hi; hi = apr_hash_next(hi)) {
        arr[i].name = apr_hash_this_key(hi);
        arr[i].count = *(int *)apr_hash_this_val(hi);
        i++;
    }
    qsort(arr, (size_t)n, sizeof(*arr), by_count);
    printf("%s (%d):", title, n);
    for (i = 0; i < n; i++)
        printf("%s %s=%d", i ? "," : "", arr[i].name, arr[i].count);
    printf("\n");
}

static void check_usage(FILE *out)
{
    fprintf(out, "Usage: bulwark check [--quiet] FILE...\n"
                 "Load and compile rule files (Include/IncludeOptional followed) and print a summary:\n"
                 "rules per phase and the operators, variables, transformations and actions used.\n"
                 "Errors are printed as FILE:LINE: REASON, and each use of a directive, variable,\n"
                 "operator or action Bulwark supports differently from mod_security2 as\n"
                 "FILE:LINE: warning: ... (docs/compatibility.md; warnings do not change the status).\n"
                 "Exit status: 0 clean, 1 errors, 2 usage.\n");
}

int bw_cli_check(apr_pool_t *pool, int argc, const char *const *argv)
{
    bw_config_t *cfg = bw_config_create(pool);
    bw_program_t *prog;
    bw_program_stats_t st;
    char *err = NULL;
    int i, nfiles = 0, quiet = 0, ph;
    const apr_array_header_t *warn;
    const char *errs = NULL;

    bw_config_note_compat(cfg);
    for (i = 1; i < argc; i++) {
        const char *e;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            check_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = 1;
            continue;
        }
        nfiles++;
        e = bw_config_load_file(cfg, argv[i]);
        if (e)
            errs = e;    /* cumulative: every error so far */
    }
    if (!nfiles) {
        check_usage(stderr);
        return 2;
    }
    warn = bw_config_compat_notes(cfg);
    for (i = 0; i < warn->nelts; i++)
        fprintf(stderr, "%s\n", ((const char **)warn->elts)[i]);
    if (errs) {
        fprintf(stderr, "%s\n", errs);
        return 1;
    }
    prog = bw_program_build(pool, NULL, cfg, &err);
    if (!prog) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    warn = bw_config_warnings(cfg);
    for (i = 0; i < warn->nelts; i++)
        fprintf(stderr, "warning: %s\n", ((const char **)warn->elts)[i]);
    if (quiet)
        return 0;
    bw_program_stats(prog, pool, &st);
    printf("OK: %d rules (%d chained links), %d markers\n", st.total_rules, st.chained_rules, st.markers);
    printf("rules per phase:");
    for (ph = 1; ph <= BW_PHASES; ph++)
        printf(" %d=%d", ph, st.rules_per_phase[ph]);
    printf("\n");
    print_counts(pool, "operators", st.operators);
    print_counts(pool, "variables", st.variables);
    print_counts(pool, "transformations", st.tfns);
    print_counts(pool, "actions", st.actions);
    if (bw_program_settings(prog)->openapi) {
        const bw_oas_t *oas = bw_program_settings(prog)->openapi;
        printf("OpenAPI: %s, %d operations\n", bw_oas_file(oas), bw_oas_operation_count(oas));
    }
    return 0;
}
