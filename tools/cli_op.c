/*
 * bulwark tfn NAME and bulwark op '@NAME PARAM': one transformation or one
 * operator of the engine on raw bytes from stdin, for testing rules and for
 * scripts (the detection benchmarks drive the operators this way).
 */
#include <string.h>
#include <ctype.h>
#include "cli.h"
#include "transformations/bw_tfn.h"
#include "operators/bw_op.h"

int bw_cli_tfn(apr_pool_t *pool, int argc, const char *const *argv)
{
    const bw_tfn_def_t *def;
    bw_str_t *in, out;
    char *err = NULL;
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *o = argc == 2 ? stdout : stderr;
        int i;
        fprintf(o, "Usage: bulwark tfn NAME < INPUT > OUTPUT\n"
                   "Apply one transformation (named as in SecRule's t: action) to the raw bytes of\n"
                   "standard input and write the result to standard output.\nTransformations:");
        for (i = 0; bw_tfn_registry[i]; i++)
            fprintf(o, " %s", bw_tfn_registry[i]->name);
        fprintf(o, "\n");
        return argc == 2 ? 0 : 2;
    }
    def = bw_tfn_lookup(argv[1]);
    if (!def) {
        fprintf(stderr, "bulwark tfn: unknown transformation \"%s\"\n", argv[1]);
        return 2;
    }
    in = bw_cli_read_all(pool, NULL, &err);
    if (!in) {
        fprintf(stderr, "bulwark tfn: %s\n", err);
        return 2;
    }
    def->fn(NULL, pool, *in, &out);
    fwrite(out.data, 1, out.len, stdout);
    return 0;
}

static void op_usage(FILE *o)
{
    fprintf(o, "Usage: bulwark op '[!]@NAME [PARAM]' < VALUE\n"
               "Run one operator on the raw bytes of standard input.\n"
               "Exit status: 0 match, 1 no match, 2 error (unknown operator, bad parameter).\n"
               "The match message goes to standard output; captures with --capture.\n");
}

int bw_cli_op(apr_pool_t *pool, int argc, const char *const *argv)
{
    const char *spec, *s, *name_start;
    const bw_op_def_t *def;
    bw_op_t op;
    bw_op_cenv_t env;
    bw_op_run_t run;
    bw_str_t *in;
    char *err = NULL;
    int negated = 0, rc, capture = 0, i;

    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        op_usage(stdout);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[2], "--capture"))
        capture = 1;
    else if (argc != 2) {
        op_usage(stderr);
        return 2;
    }
    spec = argv[1];
    s = spec;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '!') {
        negated = 1;
        s++;
    }
    if (*s != '@') {
        fprintf(stderr, "bulwark op: expected '@NAME PARAM', got \"%s\"\n", spec);
        return 2;
    }
    name_start = ++s;
    while (*s && !isspace((unsigned char)*s))
        s++;
    def = bw_op_lookup(apr_pstrndup(pool, name_start, (apr_size_t)(s - name_start)));
    if (!def) {
        fprintf(stderr, "bulwark op: unknown operator \"@%.*s\"\n", (int)(s - name_start), name_start);
        return 2;
    }
    while (isspace((unsigned char)*s))
        s++;
    memset(&op, 0, sizeof(op));
    op.def = def;
    op.param = s;
    op.param_len = strlen(s);
    if ((def->flags & BW_OP_PARAM_REQUIRED) && !*s) {
        fprintf(stderr, "bulwark op: @%s needs a parameter\n", def->name);
        return 2;
    }
    memset(&env, 0, sizeof(env));
    env.pool = pool;
    env.temp_pool = pool;
    env.file = "./cli";
    if (def->compile && def->compile(&op, &env, &err) != 0) {
        fprintf(stderr, "bulwark op: %s\n", err ? err : "invalid parameter");
        return 2;
    }
    in = bw_cli_read_all(pool, NULL, &err);
    if (!in) {
        fprintf(stderr, "bulwark op: %s\n", err);
        return 2;
    }
    memset(&run, 0, sizeof(run));
    run.pool = pool;
    run.var_name = "STDIN";
    run.capture = capture;
    run.ncaptures = -1;
    run.md = pcre2_match_data_create(32, NULL);
    run.mctx = pcre2_match_context_create(NULL);
    rc = def->execute(&op, &run, *in);
    pcre2_match_data_free(run.md);
    pcre2_match_context_free(run.mctx);
    if (rc < 0) {
        fprintf(stderr, "bulwark op: @%s: %s\n", def->name, run.error ? run.error : "error");
        return 2;
    }
    if (negated)
        rc = !rc;
    if (rc && run.msg && !negated)
        printf("%s\n", run.msg);
    for (i = 0; rc && capture && i < run.ncaptures; i++) {
        printf("TX.%d=", i);
        bw_cli_json_str(stdout, run.captures[i]);
        printf("\n");
    }
    return rc ? 0 : 1;
}
