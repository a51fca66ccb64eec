/*
 * bulwark tfn NAME and bulwark op '@NAME PARAM': one transformation or one
 * operator of the engine on raw bytes from stdin, for testing rules and for
 * scripts (the detection benchmarks drive the operators this way).
 */
#include <string.h>
#include <ctype.h>
#include <stdlib.h>
#include <apr_time.h>
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
    fprintf(o, "Usage: bulwark op [--capture] [--batch | --repeat N] '[!]@NAME [PARAM]' < VALUE\n"
               "Run one operator on the raw bytes of standard input.\n"
               "Exit status: 0 match, 1 no match, 2 error (unknown operator, bad parameter).\n"
               "The match message goes to standard output; --capture also prints TX.0-9.\n"
               "  --batch     one value per input line (\\\\ is a backslash, \\xHH a byte);\n"
               "              prints 1 (match) or 0 (no match) per line; exit 0\n"
               "  --repeat N  run the operator N times on the value and print the seconds taken\n");
}

typedef struct {
    bw_op_t op;
    int negated;
    int capture;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    bw_spawn_ctx_t spawn;       /* @inspectFile: the default time limit */
    const char *env[2];         /* and only PATH: there is no request */
} op_ctx_t;

static const char *const *cli_env(void *baton)
{
    return ((op_ctx_t *)baton)->env;
}

static apr_status_t op_ctx_free(void *data)
{
    op_ctx_t *c = data;
    pcre2_match_data_free(c->md);
    pcre2_match_context_free(c->mctx);
    return APR_SUCCESS;
}

/* Parse and compile "[!]@NAME PARAM"; 0, or 2 with a message printed. */
static int op_prepare(apr_pool_t *pool, const char *spec, op_ctx_t *c)
{
    const char *s = spec, *name_start;
    const bw_op_def_t *def;
    bw_op_cenv_t env;
    char *err = NULL;

    while (isspace((unsigned char)*s))
        s++;
    if (*s == '!') {
        c->negated = 1;
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
    c->op.def = def;
    c->op.param = s;
    c->op.param_len = strlen(s);
    if ((def->flags & BW_OP_PARAM_REQUIRED) && !*s) {
        fprintf(stderr, "bulwark op: @%s needs a parameter\n", def->name);
        return 2;
    }
    memset(&env, 0, sizeof(env));
    env.pool = pool;
    env.temp_pool = pool;
    env.file = "./cli";
    if (def->compile && def->compile(&c->op, &env, &err) != 0) {
        fprintf(stderr, "bulwark op: %s\n", err ? err : "invalid parameter");
        return 2;
    }
    c->md = pcre2_match_data_create(32, NULL);
    c->mctx = pcre2_match_context_create(NULL);
    c->env[0] = apr_pstrcat(pool, "PATH=", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin", NULL);
    c->env[1] = NULL;
    c->spawn.lim.timeout = apr_time_from_sec(BW_SPAWN_DEFAULT_TIMEOUT);
    c->spawn.env = cli_env;
    c->spawn.baton = c;
    apr_pool_cleanup_register(pool, c, op_ctx_free, apr_pool_cleanup_null);
    return 0;
}

/* 1 match, 0 no match, -1 error; the run is left in *run. */
static int op_run(apr_pool_t *pool, op_ctx_t *c, bw_str_t value, bw_op_run_t *run)
{
    int rc;
    memset(run, 0, sizeof(*run));
    run->pool = pool;
    run->var_name = "STDIN";
    run->capture = c->capture;
    run->ncaptures = -1;
    run->md = c->md;
    run->mctx = c->mctx;
    run->spawn = &c->spawn;
    rc = c->op.def->execute(&c->op, run, value);
    if (rc < 0)
        return -1;
    return c->negated ? !rc : rc;
}

/* Decode one --batch line (\\ and \xHH escapes) in place. */
static bw_str_t batch_line(char *s, size_t n)
{
    size_t i, k = 0;
    for (i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\\') {
            s[k++] = '\\';
            i++;
        } else if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' && bw_hexval(s[i + 2]) >= 0 && bw_hexval(s[i + 3]) >= 0) {
            s[k++] = (char)(bw_hexval(s[i + 2]) * 16 + bw_hexval(s[i + 3]));
            i += 3;
        } else {
            s[k++] = s[i];
        }
    }
    return bw_str_n(s, k);
}

static int op_batch(apr_pool_t *pool, op_ctx_t *c, bw_str_t *in)
{
    char *s = (char *)in->data, *end = s + in->len;
    apr_pool_t *scratch;
    apr_pool_create(&scratch, pool);
    while (s < end) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        bw_op_run_t run;
        int rc;
        if (n && s[n - 1] == '\r')
            n--;
        rc = op_run(scratch, c, batch_line(s, n), &run);
        if (rc < 0) {
            fprintf(stderr, "bulwark op: @%s: %s\n", c->op.def->name, run.error ? run.error : "error");
            return 2;
        }
        fputs(rc ? "1\n" : "0\n", stdout);
        apr_pool_clear(scratch);
        s = nl ? nl + 1 : end;
    }
    return 0;
}

int bw_cli_op(apr_pool_t *pool, int argc, const char *const *argv)
{
    op_ctx_t *cp = apr_pcalloc(pool, sizeof(*cp)), c;
    bw_op_run_t run;
    bw_str_t *in;
    char *err = NULL;
    const char *spec = NULL;
    int rc, i, batch = 0;
    long repeat = 0;

    memset(&c, 0, sizeof(c));
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            op_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--capture")) {
            c.capture = 1;
        } else if (!strcmp(argv[i], "--batch")) {
            batch = 1;
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atol(argv[++i]);
        } else if (!spec) {
            spec = argv[i];
        } else {
            op_usage(stderr);
            return 2;
        }
    }
    if (!spec || (batch && repeat) || repeat < 0) {
        op_usage(stderr);
        return 2;
    }
    cp->capture = c.capture;
    if ((rc = op_prepare(pool, spec, cp)) != 0)   /* pool-owned: freed by a cleanup */
        return rc;
    c = *cp;
    in = bw_cli_read_all(pool, NULL, &err);
    if (!in) {
        fprintf(stderr, "bulwark op: %s\n", err);
        return 2;
    }
    if (batch)
        return op_batch(pool, &c, in);
    if (repeat) {
        apr_time_t t0 = apr_time_now();
        long k;
        rc = 0;
        for (k = 0; k < repeat; k++)
            rc = op_run(pool, &c, *in, &run);
        printf("%.6f\n", (double)(apr_time_now() - t0) / 1e6);
        return rc < 0 ? 2 : rc ? 0 : 1;
    }
    rc = op_run(pool, &c, *in, &run);
    if (rc < 0) {
        fprintf(stderr, "bulwark op: @%s: %s\n", c.op.def->name, run.error ? run.error : "error");
        return 2;
    }
    if (rc && run.msg && !c.negated)
        printf("%s\n", run.msg);
    for (i = 0; rc && c.capture && i < run.ncaptures; i++) {
        printf("TX.%d=", i);
        bw_cli_json_str(stdout, run.captures[i]);
        printf("\n");
    }
    return rc ? 0 : 1;
}
