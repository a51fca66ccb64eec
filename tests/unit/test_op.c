/*
 * Unit tests for the operators (apache2/operators/). Most cases are data:
 * every line of the .vec files in tests/unit/data/op/ is one Check test (format in
 * tests/unit/data/op/README.md). Each vector compiles its operator as the
 * engine would, runs it on an exact-size heap copy of the input (so ASan
 * catches reads past the value or reliance on a NUL terminator), checks
 * result, message, error and captures, and checks that a no-match result
 * allocated nothing from the run pool. The C tests below cover what data
 * lines cannot: the registry, flags, helpers, PCRE2 limits and runtime
 * (per-transaction) compiles.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "operators/op_internal.h"

#define EXPECT_COMPILE_ERROR (-2)
#define MAX_FIELDS 24

typedef struct {
    const char *where;          /* file:line */
    const char *op;
    bw_str_t param;
    bw_str_t input;
    int expect;                 /* 1, 0, -1 (execute error), EXPECT_COMPILE_ERROR */
    const char *msg;            /* exact message, or NULL */
    const char *err;            /* substring of the error, or NULL */
    const char *var;
    bw_str_t caps[10];
    int ncaps_listed;
    int ncap;                   /* expected ncaptures, -1 = not checked */
    int capture;
    int limit;                  /* expected limit_hit, -1 = not checked */
    uint32_t match_limit;       /* 0 = PCRE2 default */
    int stream;                 /* the value is a stream variable (@rsub) */
    int has_out;                /* out= given: the stream after the run */
    bw_str_t out;
} vec_t;

static const char *const vec_files[] = {
    "rx.vec", "pm.vec", "strings.vec", "numeric.vec", "ip.vec", "validate.vec",
    "verify.vec", "misc.vec", "rsub.vec", NULL
};

static apr_pool_t *g_pool;
static apr_array_header_t *g_vecs;     /* vec_t */
static apr_array_header_t *g_problems; /* const char *: vector file errors */
static const char *g_data_dir;         /* $BW_TEST_DATA */
static const char *g_rules_file;       /* fictional rule file in data/op/ */

/* --- loading vectors ------------------------------------------------------ */

static int hexdig(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* \xHH \t \n \r \\ are escapes; any other backslash is literal, so regexes
 * (\d, \s) read naturally. "$DATA" becomes the data directory. */
static bw_str_t unescape(const char *s)
{
    size_t n = strlen(s), i, o = 0;
    char *d;

    while (strstr(s, "$DATA")) {
        const char *at = strstr(s, "$DATA");
        s = apr_pstrcat(g_pool, apr_pstrmemdup(g_pool, s, (apr_size_t)(at - s)), g_data_dir,
                        at + 5, NULL);
        n = strlen(s);
    }
    d = apr_palloc(g_pool, n + 1);
    for (i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' && hexdig(s[i + 2]) >= 0
            && hexdig(s[i + 3]) >= 0) {
            d[o++] = (char)(hexdig(s[i + 2]) * 16 + hexdig(s[i + 3]));
            i += 3;
        } else if (s[i] == '\\' && i + 1 < n && strchr("tnr\\", s[i + 1])) {
            char c = s[++i];
            d[o++] = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : '\\';
        } else {
            d[o++] = s[i];
        }
    }
    d[o] = '\0';
    return bw_str_n(d, o);
}

static void problem(const char *where, const char *what)
{
    *(const char **)apr_array_push(g_problems) = apr_psprintf(g_pool, "%s: %s", where, what);
}

/* Apply one key=value field; 0 when the key is unknown. */
static int vec_option(vec_t *v, const char *f)
{
    if (strncmp(f, "msg=", 4) == 0)
        v->msg = f + 4;
    else if (strncmp(f, "err=", 4) == 0)
        v->err = f + 4;
    else if (strncmp(f, "var=", 4) == 0)
        v->var = f + 4;
    else if (strncmp(f, "cap=", 4) == 0 && v->ncaps_listed < 10) {
        v->caps[v->ncaps_listed++] = unescape(f + 4);
        v->capture = 1;
    } else if (strncmp(f, "ncap=", 5) == 0) {
        v->ncap = atoi(f + 5);
        v->capture = 1;
    } else if (strncmp(f, "limit=", 6) == 0)
        v->limit = atoi(f + 6);
    else if (strncmp(f, "stream=", 7) == 0)
        v->stream = atoi(f + 7);
    else if (strncmp(f, "out=", 4) == 0) {
        v->out = unescape(f + 4);
        v->has_out = v->stream = 1;
    } else if (strncmp(f, "mlimit=", 7) == 0)
        v->match_limit = (uint32_t)strtoul(f + 7, NULL, 10);
    else
        return 0;
    return 1;
}

static void parse_vector(char *line, const char *where)
{
    char *fields[MAX_FIELDS], *p = line;
    int nf = 0, i;
    vec_t *v;

    while (nf < MAX_FIELDS) {
        fields[nf++] = p;
        p = strchr(p, '\t');
        if (p == NULL)
            break;
        *p++ = '\0';
    }
    if (nf < 4) {
        problem(where, "fewer than 4 tab-separated fields");
        return;
    }
    v = apr_array_push(g_vecs);
    memset(v, 0, sizeof(*v));
    v->where = where;
    v->op = fields[0];
    v->param = unescape(fields[1]);
    v->input = unescape(fields[2]);
    v->var = "ARGS:x";
    v->ncap = -1;
    v->limit = -1;
    if (strcmp(fields[3], "1") == 0 || strcmp(fields[3], "0") == 0)
        v->expect = fields[3][0] - '0';
    else if (strcmp(fields[3], "error") == 0)
        v->expect = -1;
    else if (strcmp(fields[3], "compile-error") == 0)
        v->expect = EXPECT_COMPILE_ERROR;
    else
        problem(where, "expect must be 1, 0, error or compile-error");
    for (i = 4; i < nf; i++)
        if (!vec_option(v, fields[i]))
            problem(where, apr_psprintf(g_pool, "unknown field \"%s\"", fields[i]));
    if (v->ncaps_listed && v->ncap < 0)
        v->ncap = v->ncaps_listed;
}

static void load_file(const char *name)
{
    const char *path = apr_pstrcat(g_pool, g_data_dir, "/op/", name, NULL);
    FILE *f = fopen(path, "r");
    char buf[8192];
    int lineno = 0;

    if (f == NULL) {
        problem(path, "cannot open vector file");
        return;
    }
    while (fgets(buf, sizeof(buf), f)) {
        size_t n = strlen(buf);
        lineno++;
        if (n && buf[n - 1] == '\n')
            buf[--n] = '\0';
        else if (!feof(f))
            problem(apr_psprintf(g_pool, "%s:%d", name, lineno), "line too long");
        if (n == 0 || buf[0] == '#')
            continue;
        parse_vector(apr_pstrdup(g_pool, buf), apr_psprintf(g_pool, "%s:%d", name, lineno));
    }
    fclose(f);
}

/* --- running one vector ---------------------------------------------------- */

typedef struct {
    apr_pool_t *pool, *run_pool;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    bw_op_t op;
    bw_op_run_t run;
} fixture_t;

static void fixture_init(fixture_t *fx, int md_pairs)
{
    memset(fx, 0, sizeof(*fx));
    apr_pool_create(&fx->pool, g_pool);
    apr_pool_create(&fx->run_pool, fx->pool);
    fx->md = pcre2_match_data_create((uint32_t)md_pairs, NULL);
    fx->mctx = pcre2_match_context_create(NULL);
    fx->run.pool = fx->run_pool;
    fx->run.var_name = "ARGS:x";
    fx->run.md = fx->md;
    fx->run.mctx = fx->mctx;
}

static void fixture_done(fixture_t *fx)
{
    pcre2_match_data_free(fx->md);
    pcre2_match_context_free(fx->mctx);
    apr_pool_destroy(fx->pool);
}

/* Compile name/param the way the engine does at start-up; returns rc. */
static int fixture_compile(fixture_t *fx, const char *name, bw_str_t param, char **err)
{
    bw_op_cenv_t env;
    apr_pool_t *tmp;
    int rc = 0;

    fx->op.def = bw_op_lookup(name);
    ck_assert_msg(fx->op.def != NULL, "unknown operator \"%s\"", name);
    fx->op.param = bw_str_pdup(fx->pool, param);
    fx->op.param_len = param.len;
    apr_pool_create(&tmp, fx->pool);
    env.pool = fx->pool;
    env.temp_pool = tmp;
    env.file = g_rules_file;
    env.line = 1;
    env.runtime = 0;
    *err = NULL;
    if (fx->op.def->compile)
        rc = fx->op.def->compile(&fx->op, &env, err);
    apr_pool_destroy(tmp);      /* compiled data must not live in scratch */
    return rc;
}

/* Execute on an exact-size heap copy; *grew is set when the run pool was
 * used (the address of a 1-byte allocation moved by more than one slot). */
static int fixture_exec(fixture_t *fx, bw_str_t input, int *grew)
{
    char *copy = malloc(input.len ? input.len : 1), *a, *b;
    int rc;

    if (input.len)
        memcpy(copy, input.data, input.len);
    a = apr_palloc(fx->run_pool, 1);
    rc = fx->op.def->execute(&fx->op, &fx->run, bw_str_n(copy, input.len));
    b = apr_palloc(fx->run_pool, 1);
    *grew = b != a + APR_ALIGN_DEFAULT(1);
    free(copy);
    return rc;
}

static void check_captures(const vec_t *v, const bw_op_run_t *run)
{
    int i;

    if (v->ncap >= 0)
        ck_assert_msg(run->ncaptures == v->ncap, "%s: %d captures, expected %d", v->where,
                      run->ncaptures, v->ncap);
    for (i = 0; i < v->ncaps_listed && i < run->ncaptures; i++)
        ck_assert_msg(bw_str_eq(run->captures[i], v->caps[i]),
                      "%s: capture %d is \"%s\", expected \"%s\"", v->where, i,
                      bw_op_log_escape(g_pool, run->captures[i], 0),
                      bw_op_log_escape(g_pool, v->caps[i], 0));
}

START_TEST(test_vector)
{
    const vec_t *v = &((const vec_t *)g_vecs->elts)[_i];
    fixture_t fx;
    char *err;
    int rc, grew;

    fixture_init(&fx, 16);
    rc = fixture_compile(&fx, v->op, v->param, &err);
    if (v->expect == EXPECT_COMPILE_ERROR) {
        ck_assert_msg(rc == -1, "%s: compile succeeded, expected an error", v->where);
        ck_assert_msg(err != NULL, "%s: compile failed without a message", v->where);
        ck_assert_msg(v->err == NULL || strstr(err, v->err), "%s: error \"%s\" lacks \"%s\"",
                      v->where, err, v->err);
        fixture_done(&fx);
        return;
    }
    ck_assert_msg(rc == 0, "%s: compile failed: %s", v->where, err ? err : "(no message)");
    if (v->match_limit)
        pcre2_set_match_limit(fx.mctx, v->match_limit);
    fx.run.var_name = v->var;
    fx.run.capture = v->capture;
    fx.run.stream = v->stream;
    rc = fixture_exec(&fx, v->input, &grew);
    if (v->has_out) {
        bw_str_t got = fx.run.rewritten ? fx.run.rewrite : v->input;
        ck_assert_msg(bw_str_eq(got, v->out), "%s: stream became \"%s\", expected \"%s\"",
                      v->where, bw_op_log_escape(g_pool, got, 0), bw_op_log_escape(g_pool, v->out, 0));
    }
    ck_assert_msg(rc == v->expect, "%s: returned %d, expected %d%s%s", v->where, rc, v->expect,
                  fx.run.error ? "; error: " : "", fx.run.error ? fx.run.error : "");
    if (rc == 0)
        ck_assert_msg(!grew, "%s: allocated on the no-match path", v->where);
    if (rc == 1) {
        ck_assert_msg(fx.run.msg != NULL, "%s: match without a message", v->where);
        ck_assert_msg(v->msg == NULL || strcmp(fx.run.msg, v->msg) == 0,
                      "%s: message\n  got:      %s\n  expected: %s", v->where, fx.run.msg, v->msg);
        check_captures(v, &fx.run);
    }
    if (rc == -1) {
        ck_assert_msg(fx.run.error != NULL, "%s: error without a message", v->where);
        ck_assert_msg(v->err == NULL || strstr(fx.run.error, v->err),
                      "%s: error \"%s\" lacks \"%s\"", v->where, fx.run.error, v->err);
    }
    if (v->limit >= 0)
        ck_assert_msg(fx.run.limit_hit == v->limit, "%s: limit_hit %d, expected %d", v->where,
                      fx.run.limit_hit, v->limit);
    fixture_done(&fx);
}
END_TEST

START_TEST(test_vector_files_parse)
{
    int i;
    for (i = 0; i < g_problems->nelts; i++)
        fprintf(stderr, "vector problem: %s\n", ((const char **)g_problems->elts)[i]);
    ck_assert_int_eq(g_problems->nelts, 0);
    ck_assert_msg(g_vecs->nelts >= 200, "only %d vectors loaded", g_vecs->nelts);
}
END_TEST

/* Every operator of the registry except the detect* pair (tested with
 * their own code) has vectors, aliases included. */
START_TEST(test_every_operator_has_vectors)
{
    const bw_op_def_t *const *d;
    int i;

    for (d = bw_op_registry; *d; d++) {
        int found = 0;
        if (strncmp((*d)->name, "detect", 6) == 0)
            continue;
        for (i = 0; i < g_vecs->nelts && !found; i++)
            found = strcmp(((const vec_t *)g_vecs->elts)[i].op, (*d)->name) == 0;
        ck_assert_msg(found, "no vector for @%s", (*d)->name);
    }
}
END_TEST

/* --- registry and flags ---------------------------------------------------- */

START_TEST(test_registry_lookup)
{
    const bw_op_def_t *const *d, *const *e;

    ck_assert_ptr_nonnull(bw_op_lookup("rx"));
    ck_assert_ptr_eq(bw_op_lookup("RX"), bw_op_lookup("rx"));
    ck_assert_ptr_eq(bw_op_lookup("pmfromFILE"), bw_op_lookup("pmFromFile"));
    ck_assert_str_eq(bw_op_lookup("ipmatchf")->name, "ipMatchF");
    ck_assert_str_eq(bw_op_lookup("PMF")->name, "pmf");
    ck_assert_str_eq(bw_op_lookup("detectsqli")->name, "detectSQLi");
    ck_assert_str_eq(bw_op_lookup("detectxss")->name, "detectXSS");
    ck_assert_ptr_null(bw_op_lookup("@rx"));
    ck_assert_ptr_null(bw_op_lookup("rxx"));
    ck_assert_ptr_null(bw_op_lookup(""));
    ck_assert_ptr_null(bw_op_lookup(NULL));
    for (d = bw_op_registry; *d; d++) {
        ck_assert_ptr_nonnull((*d)->execute);
        ck_assert_ptr_eq(bw_op_lookup((*d)->name), *d);
        for (e = d + 1; *e; e++)
            ck_assert_msg(strcasecmp((*d)->name, (*e)->name) != 0, "duplicate %s", (*d)->name);
    }
    ck_assert_int_eq((int)(d - bw_op_registry), 39);
}
END_TEST

START_TEST(test_macro_flags)
{
    static const char *const with_macros[] = {
        "streq", "contains", "containsWord", "beginsWith", "endsWith", "within", "eq", "ne",
        "gt", "ge", "lt", "le", "rx", "pm", "strmatch", NULL
    };
    const bw_op_def_t *const *d;
    int i;

    for (d = bw_op_registry; *d; d++) {
        int want = 0;
        for (i = 0; with_macros[i]; i++)
            want |= strcmp(with_macros[i], (*d)->name) == 0;
        ck_assert_msg(!!((*d)->flags & BW_OP_MACROS) == want, "@%s: BW_OP_MACROS should be %s",
                      (*d)->name, want ? "set" : "clear");
        ck_assert_msg(((*d)->flags & (BW_OP_PARAM_NONE | BW_OP_PARAM_REQUIRED
                                      | BW_OP_PARAM_OPTIONAL)) != 0,
                      "@%s: no parameter rule", (*d)->name);
    }
}
END_TEST

/* --- helpers ----------------------------------------------------------------- */

START_TEST(test_log_escape)
{
    apr_pool_t *p = g_pool;

    ck_assert_str_eq(bw_op_log_escape(p, bw_str_n("abc", 3), 0), "abc");
    ck_assert_str_eq(bw_op_log_escape(p, bw_str_n("a\"b\\c", 5), 0), "a\\\"b\\\\c");
    ck_assert_str_eq(bw_op_log_escape(p, bw_str_n("a\0b\n\x7f\xff", 6), 0),
                     "a\\x00b\\x0a\\x7f\\xff");
    ck_assert_str_eq(bw_op_log_escape(p, bw_str_n("abcdef", 6), 3), "abc");
    ck_assert_str_eq(bw_op_log_escape(p, bw_str_n("", 0), 0), "");
    ck_assert_str_eq(bw_op_log_escape(p, bw_str_n(" ~", 2), 0), " ~");
}
END_TEST

START_TEST(test_data_path)
{
    apr_pool_t *p = g_pool;

    ck_assert_str_eq(bw_op_data_path(p, "/etc/crs/rules/R.conf", "x.data"), "/etc/crs/rules/x.data");
    ck_assert_str_eq(bw_op_data_path(p, "/etc/crs/rules/R.conf", "sub/x.data"),
                     "/etc/crs/rules/sub/x.data");
    ck_assert_str_eq(bw_op_data_path(p, "/etc/crs/rules/R.conf", "/abs/x.data"), "/abs/x.data");
    ck_assert_str_eq(bw_op_data_path(p, "R.conf", "x.data"), "x.data");
    ck_assert_str_eq(bw_op_data_path(p, NULL, "x.data"), "x.data");
    ck_assert_str_eq(bw_op_data_path(p, "/R.conf", "x.data"), "/x.data");
}
END_TEST

START_TEST(test_atoi)
{
    ck_assert_int_eq(bw_op_atoi(bw_str_make("42")), 42);
    ck_assert_int_eq(bw_op_atoi(bw_str_make(" \t\n\v\f\r-17x")), -17);
    ck_assert_int_eq(bw_op_atoi(bw_str_make("+8")), 8);
    ck_assert_int_eq(bw_op_atoi(bw_str_make("- 8")), 0);
    ck_assert_int_eq(bw_op_atoi(bw_str_make("")), 0);
    ck_assert_int_eq(bw_op_atoi(bw_str_make("x1")), 0);
    ck_assert_int_eq(bw_op_atoi(bw_str_n("12\0003", 4)), 12);
    ck_assert_int_eq(bw_op_atoi(bw_str_n("12", 1)), 1);   /* length, not NUL, ends it */
    ck_assert_int_eq(bw_op_atoi(bw_str_make("2147483647")), 2147483647);
    ck_assert_int_eq(bw_op_atoi(bw_str_make("2147483648")), 2147483647);
    ck_assert_int_eq(bw_op_atoi(bw_str_make("-2147483648")), -2147483647 - 1);
    ck_assert_int_eq(bw_op_atoi(bw_str_make("-99999999999999999999999")), -2147483647 - 1);
}
END_TEST

/* --- @rx beyond the data files ---------------------------------------------- */

/* The default 32 KB JIT stack cannot hold deep recursion: the error must
 * name the limit, not pass as "no match". */
START_TEST(test_rx_jit_stack_limit)
{
    enum { DEPTH = 20000 };
    char *s = malloc(2 * DEPTH);
    fixture_t fx;
    char *err;
    int i, rc;

    for (i = 0; i < DEPTH; i++) {
        s[i] = '(';
        s[2 * DEPTH - 1 - i] = ')';
    }
    fixture_init(&fx, 16);
    ck_assert_int_eq(fixture_compile(&fx, "rx", bw_str_make("^(\\((?1)*\\))$"), &err), 0);
    rc = fx.op.def->execute(&fx.op, &fx.run, bw_str_n(s, 2 * DEPTH));
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(fx.run.limit_hit, 1);
    ck_assert_str_eq(fx.run.error, "@rx: PCRE2 JIT stack limit exceeded");
    fixture_done(&fx);
    free(s);
}
END_TEST

/* Match data smaller than the regex's groups: captures stop at its size. */
START_TEST(test_rx_small_match_data)
{
    fixture_t fx;
    char *err;
    int grew;

    fixture_init(&fx, 2);
    ck_assert_int_eq(fixture_compile(&fx, "rx", bw_str_make("(a)(b)(c)"), &err), 0);
    fx.run.capture = 1;
    ck_assert_int_eq(fixture_exec(&fx, bw_str_make("xabc"), &grew), 1);
    ck_assert_int_eq(fx.run.ncaptures, 2);
    ck_assert(bw_str_eq(fx.run.captures[0], bw_str_make("abc")));
    ck_assert(bw_str_eq(fx.run.captures[1], bw_str_make("a")));
    fixture_done(&fx);
}
END_TEST

/* Macro operators are compiled per transaction from the transaction pool;
 * destroying that pool must release everything (LeakSanitizer watches). */
START_TEST(test_runtime_compile)
{
    static const char *const ops[] = { "rx", "pm", "streq", "within", "ge", "strmatch", NULL };
    int i, round;

    for (round = 0; round < 50; round++) {
        for (i = 0; ops[i]; i++) {
            apr_pool_t *tx;
            bw_op_t op;
            bw_op_cenv_t env = { NULL, NULL, NULL, 0, 1 };
            char *err = NULL;

            apr_pool_create(&tx, g_pool);
            env.pool = tx;
            env.temp_pool = tx;
            op.def = bw_op_lookup(ops[i]);
            op.param = apr_psprintf(tx, "GET HEAD %d", round);
            op.param_len = strlen(op.param);
            op.data = NULL;
            ck_assert_int_eq(op.def->compile ? op.def->compile(&op, &env, &err) : 0, 0);
            apr_pool_destroy(tx);
        }
    }
}
END_TEST

/* An empty @pm expansion at run time is no phrase, not an error. */
START_TEST(test_pm_runtime_empty)
{
    apr_pool_t *tx;
    bw_op_t op = { NULL, "   ", 3, NULL };
    bw_op_cenv_t env = { NULL, NULL, NULL, 0, 1 };
    bw_op_run_t run;
    char *err = NULL;

    apr_pool_create(&tx, g_pool);
    env.pool = tx;
    op.def = bw_op_lookup("pm");
    ck_assert_int_eq(op.def->compile(&op, &env, &err), 0);
    memset(&run, 0, sizeof(run));
    run.pool = tx;
    run.var_name = "ARGS:x";
    ck_assert_int_eq(op.def->execute(&op, &run, bw_str_make("anything")), 0);
    apr_pool_destroy(tx);
}
END_TEST

/* @strmatch (Boyer-Moore-Horspool) against memmem on random data. */
/* The string comparisons' scan_regex (what the multi-pattern matcher takes
 * instead of the operator) matches exactly the values the operator does,
 * compiled as @rx compiles: parameters and values with regex
 * metacharacters, NUL, newlines and high bytes. */
START_TEST(test_scan_regex_equivalence)
{
    static const char *const ops[] = { "contains", "beginsWith", "endsWith", "streq" };
    static const bw_str_t params[] = {
        { "GET", 3 }, { "a.b*c", 5 }, { "x\n", 3 }, { "\x00z", 5 }, { "$^", 2 },
        { "\xff\n", 6 }, { "a", 1 },
    };
    static const bw_str_t inputs[] = {
        { "", 0 }, { "GET", 3 }, { "xGETx", 5 }, { "GET\n", 4 }, { "a.b*c", 5 }, { "aXb*c", 5 },
        { "x\n", 3 }, { "x\n\n", 4 }, { "\x00z", 5 }, { "q\x00zq", 7 }, { "$^", 2 }, { "a$^", 3 },
        { "\xff\n", 6 }, { "a", 1 }, { "ba", 2 }, { "ab", 2 }, { "A", 1 },
    };
    size_t o, pi, ii;
    for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
        for (pi = 0; pi < sizeof(params) / sizeof(params[0]); pi++) {
            fixture_t fx;
            char *err = NULL;
            const char *re;
            pcre2_code *code;
            int ec;
            PCRE2_SIZE eo;
            bw_str_t param = unescape(params[pi].data);
            fixture_init(&fx, 4);
            ck_assert_int_eq(fixture_compile(&fx, ops[o], param, &err), 0);
            ck_assert_ptr_nonnull(fx.op.def->scan_regex);
            re = fx.op.def->scan_regex(&fx.op, fx.pool);
            code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED,
                                 PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY, &ec, &eo, NULL);
            ck_assert_msg(code != NULL, "@%s %s: regex %s does not compile", ops[o], params[pi].data, re);
            for (ii = 0; ii < sizeof(inputs) / sizeof(inputs[0]); ii++) {
                bw_str_t in = unescape(inputs[ii].data);
                int grew, want = fixture_exec(&fx, in, &grew);
                int got = pcre2_match(code, (PCRE2_SPTR)in.data, in.len, 0, 0, fx.md, NULL) >= 0;
                ck_assert_msg(want == got, "@%s \"%s\" on \"%s\": operator %d, regex %s %d",
                              ops[o], params[pi].data, inputs[ii].data, want, re, got);
            }
            pcre2_code_free(code);
            fixture_done(&fx);
        }
}
END_TEST

START_TEST(test_strmatch_differential)
{
    unsigned seed = 12345;
    int iter;

    for (iter = 0; iter < 3000; iter++) {
        char pat[8], val[64];
        size_t pl, vl, i;
        fixture_t fx;
        char *err;
        int grew, want, got;

        seed = seed * 1103515245u + 12345u;
        pl = 1 + (seed >> 16) % 6;
        vl = (seed >> 8) % 60;
        for (i = 0; i < pl; i++) {
            seed = seed * 1103515245u + 12345u;
            pat[i] = "ab\0"[(seed >> 16) % 3];
        }
        for (i = 0; i < vl; i++) {
            seed = seed * 1103515245u + 12345u;
            val[i] = "ab\0"[(seed >> 16) % 3];
        }
        fixture_init(&fx, 2);
        ck_assert_int_eq(fixture_compile(&fx, "strmatch", bw_str_n(pat, pl), &err), 0);
        got = fixture_exec(&fx, bw_str_n(val, vl), &grew);
        want = bw_memmem(val, vl, pat, pl) != NULL;
        ck_assert_msg(got == want, "iteration %d: strmatch %d, memmem %d", iter, got, want);
        fixture_done(&fx);
    }
}
END_TEST

/* An environment for programs the operators run: empty. */
static const char *const *no_env(void *baton)
{
    static const char *const none[] = { NULL };
    return none;
}

/* @inspectFile runs its program per value: the first line decides. (Not a
 * vector: running a program allocates from the run pool on every path.) */
START_TEST(test_inspect_file_runs)
{
    bw_spawn_ctx_t ctx;
    fixture_t fx;
    char *err;
    const char *path = apr_pstrcat(g_pool, g_data_dir, "/op/approver.sh", NULL);

    memset(&ctx, 0, sizeof(ctx));
    ctx.lim.timeout = apr_time_from_sec(5);
    ctx.env = no_env;
    fixture_init(&fx, 4);
    ck_assert_int_eq(fixture_compile(&fx, "inspectFile", bw_str_make("approver.sh"), &err), 0);
    ck_assert_str_eq(bw_op_program(&fx.op), path);
    fx.run.spawn = &ctx;
    ck_assert_int_eq(fx.op.def->execute(&fx.op, &fx.run, bw_str_make("/tmp/clean file")), 0);
    ck_assert_int_eq(fx.op.def->execute(&fx.op, &fx.run, bw_str_make("/tmp/x-MARKER")), 1);
    ck_assert_str_eq(fx.run.msg, apr_psprintf(g_pool, "File \"/tmp/x-MARKER\" rejected by the "
                                               "approver script \"%s\": 0 marker found", path));
    ck_assert_int_eq(fx.op.def->execute(&fx.op, &fx.run, bw_str_make("crlf")), 1);
    ck_assert_ptr_nonnull(strstr(fx.run.msg, ": 0 with CR"));
    ck_assert_ptr_null(strstr(fx.run.msg, "\\x0d"));
    /* no output is no verdict: an error, not a match */
    fx.run.error = NULL;
    ck_assert_int_eq(fx.op.def->execute(&fx.op, &fx.run, bw_str_make("silent")), -1);
    ck_assert_ptr_nonnull(strstr(fx.run.error, "wrote nothing"));
    fx.run.error = NULL;
    ck_assert_int_eq(fx.op.def->execute(&fx.op, &fx.run, bw_str_n("a\0b", 3)), -1);
    ck_assert_ptr_nonnull(strstr(fx.run.error, "NUL"));
    /* nolog rules skip the message */
    fx.run.msg = NULL;
    fx.run.no_msg = 1;
    ck_assert_int_eq(fx.op.def->execute(&fx.op, &fx.run, bw_str_make("MARKER")), 1);
    ck_assert_ptr_null(fx.run.msg);
    fixture_done(&fx);
    /* other operators run no program */
    fixture_init(&fx, 4);
    ck_assert_int_eq(fixture_compile(&fx, "rx", bw_str_make("x"), &err), 0);
    ck_assert_ptr_null(bw_op_program(&fx.op));
    fixture_done(&fx);
}
END_TEST

static Suite *op_suite(void)
{
    Suite *s = suite_create("operators");
    TCase *tc = tcase_create("vectors"), *tc2 = tcase_create("api");

    tcase_add_test(tc, test_vector_files_parse);
    tcase_add_test(tc, test_every_operator_has_vectors);
    tcase_add_loop_test(tc, test_vector, 0, g_vecs->nelts);
    suite_add_tcase(s, tc);
    tcase_add_test(tc2, test_registry_lookup);
    tcase_add_test(tc2, test_macro_flags);
    tcase_add_test(tc2, test_log_escape);
    tcase_add_test(tc2, test_data_path);
    tcase_add_test(tc2, test_atoi);
    tcase_add_test(tc2, test_rx_jit_stack_limit);
    tcase_add_test(tc2, test_rx_small_match_data);
    tcase_add_test(tc2, test_runtime_compile);
    tcase_add_test(tc2, test_pm_runtime_empty);
    tcase_add_test(tc2, test_strmatch_differential);
    tcase_add_test(tc2, test_inspect_file_runs);
    tcase_add_test(tc2, test_scan_regex_equivalence);
    tcase_set_timeout(tc2, 60);
    suite_add_tcase(s, tc2);
    return s;
}

int main(void)
{
    SRunner *sr;
    int i, failed;

    apr_initialize();
    apr_pool_create(&g_pool, NULL);
    g_data_dir = getenv("BW_TEST_DATA");
    if (g_data_dir == NULL || *g_data_dir == '\0') {
        fprintf(stderr, "test_op: set BW_TEST_DATA to tests/unit/data\n");
        return 2;
    }
    g_rules_file = apr_pstrcat(g_pool, g_data_dir, "/op/rules.conf", NULL);
    g_vecs = apr_array_make(g_pool, 512, sizeof(vec_t));
    g_problems = apr_array_make(g_pool, 8, sizeof(const char *));
    for (i = 0; vec_files[i]; i++)
        load_file(vec_files[i]);

    sr = srunner_create(op_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(g_pool);
    apr_terminate();
    return failed ? 1 : 0;
}
