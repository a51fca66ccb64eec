/*
 * Unit tests for the SQL-injection and XSS detectors (apache2/detect/) and
 * their operators (apache2/operators/op_detect_sqli.c, op_detect_xss.c):
 *  - the tokenizers' lookup tables are sorted (binary searches);
 *  - small vectors per rule: each SQLi evidence kind and context, each XSS
 *    construct and context, and ordinary text that must pass;
 *  - robustness: every prefix of every vector, values with NUL bytes,
 *    nesting beyond the fixed bounds, and megabyte-sized pathological
 *    inputs (each value sits in a malloc'd buffer of exactly its length,
 *    so ASan catches any read past value.len);
 *  - the operators: message text, TX.0 capture, nothing on no match;
 *  - the fast paths (bw_sqli_fast.c, bw_xss_fast_clean()): the common
 *    benign shapes take them, the near misses next to them do not and
 *    still match, and the SQL keyword list follows the tokenizer's table.
 *    The differential test over corpora and millions of random values is
 *    tests/detect/detect_diff.c.
 * The corpus-level figures (detection and false-positive rates) come from
 * tests/detect/bench.py, not from here.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <apr_general.h>
#include "operators/bw_op.h"
#include "detect/bw_sqli.h"
#include "detect/bw_xss.h"

extern const bw_op_def_t bw_op_detect_sqli;
extern const bw_op_def_t bw_op_detect_xss;

static apr_pool_t *root_pool;

/* The value in a heap buffer of exactly its length (no terminator). */
static char *exact_copy(const char *s, size_t n)
{
    char *d = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(d);
    memcpy(d, s, n);
    return d;
}

static int sqli(const char *s, bw_sqli_result_t *r)
{
    size_t n = strlen(s);
    char *d = exact_copy(s, n);
    int m = bw_sqli_detect(bw_str_n(d, n), r);
    free(d);
    return m;
}

static int xss(const char *s, bw_xss_result_t *r)
{
    size_t n = strlen(s);
    char *d = exact_copy(s, n);
    int m = bw_xss_detect(bw_str_n(d, n), r);
    free(d);
    return m;
}

/* ------------------------------------------------------------------------ */

typedef struct {
    const char *in;
    const char *evidence;      /* bw_sqli_evidence_name() */
    const char *context;       /* bw_sqli_context_name() */
} sqli_vec_t;

static const sqli_vec_t sqli_pos[] = {
    {"1 or 1=1", "cond", "as-is"},
    {"1234 OR 1=1", "cond", "as-is"},
    {"-1839' or '1'='1", "cond", "single-quote"},
    {"x\" or \"a\"=\"a", "cond", "double-quote"},
    {"' or true--", "cond", "single-quote"},
    {"' or '1", "cond", "single-quote"},
    {"z' or email notnull--", "cond", "single-quote"},
    {"' or 1 in (1)--", "cond", "single-quote"},
    {"foo') UNION ALL select NULL --", "union", "single-quote"},
    {"-1 union select 1,2,3", "union", "as-is"},
    {"' union select username,password from users--", "union", "single-quote"},
    {"'/*!50000union*/ /*!50000select*/ 1,2--", "union", "single-quote"},
    {"1;drop table users", "stack", "as-is"},
    {"'; exec master..xp_cmdshell 'dir'--", "stack", "single-quote"},
    {"foo')waitfor delay'5:0:20'--", "stack", "single-quote"},
    {"1 and (select 1)=1", "subquery", "as-is"},
    {"'+(select 1)+'", "subquery", "single-quote"},
    {"sleep(20)", "call", "as-is"},
    {"version()", "call", "as-is"},
    {"@@version", "call", "as-is"},
    {"2010-01-01'+sleep(20.to_i)+'", "call", "single-quote"},
    {"x\" sleep(10) \"", "call", "double-quote"},
    {"id` and sleep(5) #", "cond", "backtick"},
    {"x` = 1 union select 1 --", "union", "backtick"},
    {"user()", "call", "as-is"},
    {"(select 1 or more)", "subquery", "as-is"},
    {"1' order by 3--", "clause", "single-quote"},
    {"' having 1=1--", "clause", "single-quote"},
    {"x into outfile '/tmp/x'", "clause", "as-is"},
    {"admin'--", "comment", "single-quote"},
    {"admin')#", "comment", "single-quote"},
    {"\" | type %SystemDrive%\\\\config.ini | \"", "sandwich", "double-quote"},
    {"'.sleep(5).'", "sandwich", "single-quote"},
    /* a block comment glues SQL onto a path (REQUEST_FILENAME, decoded) */
    {"/shop/*/*/9 union all/checkout", "union", "comment-glued"},
    {"/news/*x*/7 union distinct", "union", "comment-glued"},
    {"/x/**/1 union select password from users/y", "union", "comment-glued"},
    {"/item/5/**/union/**/select/**/1,2,3", "union", "comment-glued"},
    {"/a/**/b/**/c/**/2 union all", "union", "comment-glued"},
    {"/catalog/**/1/**/or/**/1=1", "cond", "comment-glued"},
    {"/view/3/*x*/and/*x*/sleep(5)", "cond", "comment-glued"},
};

static const char *const sqli_neg[] = {
    "O'Brien", "it's a test", "rock 'n' roll", "Don't stop me now",
    "use the '--force' option", "I said '#yolo' twice", "McDonald's #1 burger",
    "5' or 6' tall", "true or false: guess!", "Please select your size",
    "select one from the list below", "drop me a line", "union station",
    "SELECT name FROM users WHERE id = 5;", "DELETE FROM sessions WHERE x < 1",
    "x = 1 or y = 2", "cats or dogs = pets", "1 or 2", "user", "sleep well",
    "{\"name\": \"O'Brien\", \"age\": 42}", "2024-03-12", "+44 20 7946 0958",
    "jane.o'brien@example.com", "https://example.com/?a=1&b=2", "C:\\Users\\x",
    "Enter \"+\" or \"-\"", "He said: \" - hello - \"", "", "'", "\"", "`", "--",
    "#", "/*", "1", "-1", "@", "@@", "()", "Choose toppings (select 1 or more)",
    /* paths and comments that glue nothing to SQL */
    "/blog/2023/union-station/all-photos", "/docs/v2/union/all", "/2/union/all",
    "2 union all-stars", "Local 2 union all members", "/src/**/*.c", "/*/*/", "/**/",
    "/docs/patterns/*/2/*/index", "/* 2 union all */", "/* note */ 2 unions",
    "/* unclosed 2 union all", "/v5/**/union all", "x/*!50000 2 union all",
    "/* step 1 */ SELECT name FROM users WHERE id = 5",
};

START_TEST(test_tables_sorted)
{
    ck_assert_int_eq(bw_sqli_tables_sorted(), 1);
    ck_assert_int_eq(bw_xss_tables_sorted(), 1);
}
END_TEST

START_TEST(test_sqli_positive)
{
    const sqli_vec_t *v = &sqli_pos[_i];
    bw_sqli_result_t r;

    memset(&r, 0, sizeof(r));
    ck_assert_msg(sqli(v->in, &r) == 1, "not detected: %s", v->in);
    ck_assert_msg(strcmp(bw_sqli_evidence_name(r.evidence), v->evidence) == 0,
                  "%s: evidence %s, expected %s", v->in, bw_sqli_evidence_name(r.evidence), v->evidence);
    ck_assert_msg(strcmp(bw_sqli_context_name(r.context), v->context) == 0,
                  "%s: context %s, expected %s", v->in, bw_sqli_context_name(r.context), v->context);
    ck_assert_uint_gt(strlen(r.fingerprint), 0);
    ck_assert_uint_le(strlen(r.fingerprint), BW_SQLI_FP_MAX);
}
END_TEST

START_TEST(test_sqli_negative)
{
    bw_sqli_result_t r;
    ck_assert_msg(sqli(sqli_neg[_i], &r) == 0, "false positive: %s (%s, %s)", sqli_neg[_i],
                  bw_sqli_context_name(r.context), bw_sqli_evidence_name(r.evidence));
}
END_TEST

START_TEST(test_sqli_fingerprint)
{
    bw_sqli_result_t r;
    ck_assert_int_eq(sqli("' or 1=1--", &r), 1);
    ck_assert_str_eq(r.fingerprint, "sLn=n");
    ck_assert_int_eq(sqli("1 union select 1,2", &r), 1);
    ck_assert_str_eq(r.fingerprint, "nUSn");
    ck_assert_int_eq(bw_sqli_detect(bw_str_n("1 or 1=1", 8), NULL), 1);   /* res optional */
    ck_assert_int_eq(sqli("/p/*/*/2 union all/q", &r), 1);    /* from the restart point */
    ck_assert_str_eq(r.fingerprint, "nUk");
}
END_TEST

/* NUL bytes are data: not a terminator, and not a blank either. */
START_TEST(test_sqli_nul_bytes)
{
    static const char v1[] = "abc\0def' or 1=1--";
    static const char v2[] = "1 or 1=1\0";
    static const char v3[] = "1\0or 1=1";
    char *d;

    d = exact_copy(v1, sizeof(v1) - 1);
    ck_assert_int_eq(bw_sqli_detect(bw_str_n(d, sizeof(v1) - 1), NULL), 1);
    free(d);
    d = exact_copy(v2, sizeof(v2) - 1);
    ck_assert_int_eq(bw_sqli_detect(bw_str_n(d, sizeof(v2) - 1), NULL), 1);
    free(d);
    d = exact_copy(v3, sizeof(v3) - 1);
    ck_assert_int_eq(bw_sqli_detect(bw_str_n(d, sizeof(v3) - 1), NULL), 0);
    free(d);
}
END_TEST

/* Nesting deeper than the walker's stack stops the walk, never overflows. */
START_TEST(test_sqli_deep_nesting)
{
    char buf[512];
    int i, n = 0;

    for (i = 0; i < 10; i++)
        buf[n++] = '(';
    strcpy(buf + n, "select 1)");
    ck_assert_int_eq(sqli(buf, NULL), 1);
    n = 0;
    for (i = 0; i < 200; i++)
        buf[n++] = '(';
    strcpy(buf + n, "select 1)");
    ck_assert_int_eq(sqli(buf, NULL), 0);
}
END_TEST

/* ------------------------------------------------------------------------ */

typedef struct {
    const char *in;
    const char *reason;        /* bw_xss_reason_name() */
    const char *context;       /* bw_xss_context_name() */
    const char *capture;       /* the construct reported */
} xss_vec_t;

static const xss_vec_t xss_pos[] = {
    {"<script>alert(1)</script>", "tag", "data", "<script"},
    {"<x:script xmlns:x=\"http://www.w3.org/1999/xhtml\" src=\"data:,alert(1)\" />", "tag", "data", "<x:script"},
    {"<scr<script>ipt>alert(1)</script>", "tag", "data", "<scr<script"},
    {"<iframe src=x>", "tag", "data", "<iframe"},
    {"<!--[if IE]><script>alert(1)</script><![endif]-->", "tag", "data", "<script"},
    {"<xss onbeforehellfreezes=alerw(1)>", "event", "data", "onbeforehellfreezes=alerw(1)"},
    {"<svg/onload=alert(1)>", "event", "data", "onload=alert(1)"},
    {"<img src=x onerror=alert(1)", "event", "data", "onerror=alert(1)"},
    {"x onmouseover=alert(1)", "event", "unquoted", "onmouseover=alert(1)"},
    {"onfocus=alert(1) autofocus", "event", "attributes", "onfocus=alert(1)"},
    {"x\" onclick=\"alert(1)", "event", "unquoted", "onclick=\"alert(1)"},
    {"<a href=\"jav&#x09;ascript:alert(1)\">", "url", "data", "jav&#x09;ascript:alert(1)"},
    {"<a href=\" javascript:alert(1)\">", "url", "data", " javascript:alert(1)"},
    {"javascript:alert(1)", "url", "url", "javascript:alert(1)"},
    {"<a href=\"JavaScript: The Good Parts\">", "url", "data", "JavaScript: The Good Parts"},
    {"data:text/html,<b>x</b>", "url", "url", "data:text/html,<b>x</b>"},
    {"<a href=data:text/html;base64,PHNjcmlwdD4=>", "url", "data", "data:text/html;base64,PHNjcmlwdD4="},
    {"<div style=\"x:exp/**/ression(alert(1))\">", "style", "data", "style=\"x:exp/**/ression(alert(1))"},
    {"<style>@import 'x.css';</style>", "style", "data", "@import 'x.css';"},
    {"background:url(javascript:alert(1))", "style", "css", "background:url(javascript:alert(1))"},
    {"<form action=//evil.example/x>", "attribute", "data", "action=//evil.example/x"},
    {"<meta http-equiv=refresh content=0>", "attribute", "data", "http-equiv=refresh"},
    {"<img src=\"x` `<script>alert(1)</script>\"` `>", "tag", "data", "<script"},
};

static const char *const xss_neg[] = {
    "I <3 you", "a < b and c > d", "List<String> names = new ArrayList<>();",
    "<b>bold</b> and <i>italic</i>", "<a href=\"https://example.com\">link</a>",
    "<img src=\"data:image/png;base64,AAAA\" alt=\"x\">", "<form action=\"/search\">",
    "const onlineUsers = 5;", "online=yes", "JavaScript: The Good Parts",
    "an expression (x + 1) in maths", "<p title=\"a<b\">x</p>", "<!-- <script> -->",
    "email me <jane@example.com>", "x=1&y=2", "", "<", "<a", "=", "\"", "'",
    "<style>p { color: red }</style>", "style=\"color: red\"", "data: 5 GB",
};

START_TEST(test_xss_positive)
{
    const xss_vec_t *v = &xss_pos[_i];
    bw_xss_result_t r;
    size_t n = strlen(v->in);
    char *d = exact_copy(v->in, n);
    int m = bw_xss_detect(bw_str_n(d, n), &r);

    ck_assert_msg(m == 1, "not detected: %s", v->in);
    ck_assert_msg(strcmp(bw_xss_reason_name(r.reason), v->reason) == 0, "%s: reason %s, expected %s",
                  v->in, bw_xss_reason_name(r.reason), v->reason);
    ck_assert_msg(strcmp(bw_xss_context_name(r.context), v->context) == 0, "%s: context %s, expected %s",
                  v->in, bw_xss_context_name(r.context), v->context);
    ck_assert_uint_le(r.off + r.len, n);
    ck_assert_msg(r.len == strlen(v->capture) && memcmp(d + r.off, v->capture, r.len) == 0,
                  "%s: captured '%.*s', expected '%s'", v->in, (int)r.len, d + r.off, v->capture);
    free(d);
}
END_TEST

START_TEST(test_xss_negative)
{
    bw_xss_result_t r;
    ck_assert_msg(xss(xss_neg[_i], &r) == 0, "false positive: %s (%s, %s)", xss_neg[_i],
                  bw_xss_context_name(r.context), bw_xss_reason_name(r.reason));
}
END_TEST

START_TEST(test_xss_nul_bytes)
{
    static const char v1[] = "abc\0<script>";
    static const char v2[] = "<scr\0ipt>";
    char *d;

    d = exact_copy(v1, sizeof(v1) - 1);
    ck_assert_int_eq(bw_xss_detect(bw_str_n(d, sizeof(v1) - 1), NULL), 1);
    free(d);
    d = exact_copy(v2, sizeof(v2) - 1);    /* HTML5: a NUL does not vanish */
    ck_assert_int_eq(bw_xss_detect(bw_str_n(d, sizeof(v2) - 1), NULL), 0);
    free(d);
}
END_TEST

/* ------------------------------------------------------------------------ */

/* Every prefix of every vector: no crash, no read past the end. */
START_TEST(test_all_prefixes)
{
    size_t i, k;
    for (i = 0; i < sizeof(sqli_pos) / sizeof(sqli_pos[0]); i++) {
        size_t n = strlen(sqli_pos[i].in);
        for (k = 0; k <= n; k++) {
            char *d = exact_copy(sqli_pos[i].in, k);
            (void)bw_sqli_detect(bw_str_n(d, k), NULL);
            (void)bw_xss_detect(bw_str_n(d, k), NULL);
            free(d);
        }
    }
    for (i = 0; i < sizeof(xss_pos) / sizeof(xss_pos[0]); i++) {
        size_t n = strlen(xss_pos[i].in);
        for (k = 0; k <= n; k++) {
            char *d = exact_copy(xss_pos[i].in, k);
            (void)bw_sqli_detect(bw_str_n(d, k), NULL);
            (void)bw_xss_detect(bw_str_n(d, k), NULL);
            free(d);
        }
    }
}
END_TEST

/* CPU seconds to run both detectors over n bytes of one pattern repeated;
 * the best of three runs, so a busy machine does not make it look slow. */
static double detect_secs(char *d, size_t n, const char *pat)
{
    size_t pl = strlen(pat), k;
    double best = 1e9;
    int r;
    for (k = 0; k < n; k++)
        d[k] = pat[k % pl];
    for (r = 0; r < 3; r++) {
        clock_t t0 = clock();
        double secs;
        (void)bw_sqli_detect(bw_str_n(d, n), NULL);
        (void)bw_xss_detect(bw_str_n(d, n), NULL);
        secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        if (secs < best)
            best = secs;
    }
    return best;
}

/* Linear time: four times the input must cost about four times as much
 * (a quadratic detector would cost sixteen). A ratio, not a deadline, so it
 * holds on a loaded machine. Under AddressSanitizer the bound is looser:
 * its memchr/memcmp interceptors check the whole range passed even when the
 * search stops at once, so bounded scans cost O(range) there (measured:
 * 4x the input, 13-22x the time); the plain build checks the real bound. */
#if defined(__SANITIZE_ADDRESS__)
#define LINEAR_RATIO_MAX 40.0
#else
#define LINEAR_RATIO_MAX 10.0
#endif
START_TEST(test_linear_time)
{
    static const char *const pats[] = {
        "(", "'", "\"", "a ", "a/**/", "/*", "--", "#\n", "@@", "sleep (", "1,",
        "<", "<a ", "<a b=", "<!--", "<!--[if", "&#", "\\65", "on", "x=\"<a ", "/*!",
        "'||", "<style>", "a:url(", "`", "1/**/+", "/**/1+",
    };
    size_t big = 1 << 19, small = big / 4, i;
    char *d = malloc(big);

    ck_assert_ptr_nonnull(d);
    for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
        double s = detect_secs(d, small, pats[i]), b = detect_secs(d, big, pats[i]);
        /* below a few milliseconds the clock's resolution decides, not the code */
        if (b < 0.02)
            continue;
        ck_assert_msg(b / (s > 1e-6 ? s : 1e-6) < LINEAR_RATIO_MAX,
                      "pattern \"%s\": 4x the input took %.1fx the time (%.3f s vs %.3f s)",
                      pats[i], b / s, b, s);
    }
    free(d);
}
END_TEST

/* ------------------------------------------------------------------------ */

static bw_op_run_t new_run(apr_pool_t *p, int capture)
{
    bw_op_run_t run;
    memset(&run, 0, sizeof(run));
    run.pool = p;
    run.var_name = "ARGS:id";
    run.capture = capture;
    return run;
}

START_TEST(test_op_sqli)
{
    apr_pool_t *p;
    bw_op_t op;
    bw_op_run_t run;

    apr_pool_create(&p, root_pool);
    memset(&op, 0, sizeof(op));
    op.def = &bw_op_detect_sqli;
    ck_assert_str_eq(bw_op_detect_sqli.name, "detectSQLi");
    ck_assert_uint_eq(bw_op_detect_sqli.flags, BW_OP_PARAM_NONE);

    run = new_run(p, 1);
    ck_assert_int_eq(bw_op_detect_sqli.execute(&op, &run, bw_str_make("' or 1=1--")), 1);
    ck_assert_str_eq(run.msg, "detected SQLi using Bulwark's SQL tokenizer with fingerprint "
                     "'sLn=n' at ARGS:id.");
    ck_assert_int_eq(run.ncaptures, 1);
    ck_assert_uint_eq(run.captures[0].len, 5);
    ck_assert_int_eq(memcmp(run.captures[0].data, "sLn=n", 5), 0);

    run = new_run(p, 0);
    ck_assert_int_eq(bw_op_detect_sqli.execute(&op, &run, bw_str_make("1 union select 1,2")), 1);
    ck_assert_int_eq(run.ncaptures, 0);

    run = new_run(p, 1);
    ck_assert_int_eq(bw_op_detect_sqli.execute(&op, &run, bw_str_make("O'Brien")), 0);
    ck_assert_ptr_null(run.msg);
    ck_assert_int_eq(run.ncaptures, 0);
    apr_pool_destroy(p);
}
END_TEST

START_TEST(test_op_xss)
{
    apr_pool_t *p;
    bw_op_t op;
    bw_op_run_t run;

    apr_pool_create(&p, root_pool);
    memset(&op, 0, sizeof(op));
    op.def = &bw_op_detect_xss;
    ck_assert_str_eq(bw_op_detect_xss.name, "detectXSS");
    ck_assert_uint_eq(bw_op_detect_xss.flags, BW_OP_PARAM_NONE);

    run = new_run(p, 1);
    run.var_name = "ARGS:x";
    ck_assert_int_eq(bw_op_detect_xss.execute(&op, &run, bw_str_make("<img src=x onerror=alert(1)>")), 1);
    ck_assert_str_eq(run.msg, "detected XSS using Bulwark's HTML tokenizer at ARGS:x.");
    ck_assert_int_eq(run.ncaptures, 1);
    ck_assert_uint_eq(run.captures[0].len, strlen("onerror=alert(1)"));
    ck_assert_int_eq(memcmp(run.captures[0].data, "onerror=alert(1)", run.captures[0].len), 0);

    run = new_run(p, 1);
    ck_assert_int_eq(bw_op_detect_xss.execute(&op, &run, bw_str_make("a < b")), 0);
    ck_assert_ptr_null(run.msg);
    ck_assert_int_eq(run.ncaptures, 0);
    apr_pool_destroy(p);
}
END_TEST

/* ------------------------------------------------------------------------ */

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Benign values and whether each fast path settles them (1) or leaves
 * them to the full detector (0): the SQLi one stops at quotes, "(", ")",
 * "#", comments, "@@", "&&", "||" and the keywords that can lead to
 * evidence; the XSS one at "<", "=", ":", "&" and backslash. */
static const struct {
    const char *in;
    int sqli, xss;
} fast_shapes[] = {
    {"red_clock", 1, 1}, {"json.records.rec_0001.description_short", 1, 1}, {"203.26", 1, 1},
    {"EUR", 1, 1}, {"false", 1, 1}, {"paper_chair_jar_bracelet", 1, 1}, {"-17.5e3", 1, 1},
    {"2024-03-12", 1, 1}, {"x-forwarded-for", 1, 1}, {"en-GB,en;q=0.7", 1, 0},
    {"550e8400-e29b-41d4-a716-446655440000", 1, 1}, {"jane.doe+tag@example.com", 1, 1},
    {"https://shop.example.com/catalog/garden?page=1&sort=asc", 1, 0},
    {"red clock with a blue face", 1, 1}, {"Gdansk_11_aisle_01", 1, 1}, {"1st", 1, 1},
    {"color_order", 1, 1}, {"orders", 1, 1}, {"_or", 1, 1}, {"\xc3\xa9or", 1, 1},
    {"O'Brien", 1, 1}, {"don't stop me now", 1, 1}, {"a|b", 1, 1}, {"a&b", 1, 0},
    {"12:30", 1, 0}, {"https://cdn.example.com/u/1-2.png", 1, 0}, {"see: f(x)", 0, 0},
    {"n-1", 1, 1}, {"@home", 1, 1}, {"value; more", 1, 1},
    {"an expression (x + 1)", 0, 1}, {"", 1, 1},
    /* left to the full detector, which finds nothing */
    {"Please select your size", 0, 1}, {"rock and roll", 0, 1}, {"x2or", 0, 1},
    {"1 and 2", 0, 1}, {"set the table", 0, 1}, {"rock 'n' roll", 0, 1},
    {"it's an outfile", 0, 1}, {"C:\\Users\\x", 1, 0},
};

START_TEST(test_fast_shapes)
{
    bw_str_t v = bw_str_make(fast_shapes[_i].in);
    ck_assert_msg(bw_sqli_fast_clean(v) == fast_shapes[_i].sqli, "SQLi fast path on \"%s\": %d",
                  v.data, bw_sqli_fast_clean(v));
    ck_assert_msg(bw_xss_fast_clean(v) == fast_shapes[_i].xss, "XSS fast path on \"%s\": %d",
                  v.data, bw_xss_fast_clean(v));
    ck_assert_int_eq(bw_sqli_detect(v, NULL), 0);
    ck_assert_int_eq(bw_xss_detect(v, NULL), 0);
}
END_TEST

/* Near misses: values a fast path must leave to the full detector because
 * they match, each built on the edge of what it accepts. */
static const sqli_vec_t sqli_edge[] = {
    {"1.or.1is.5", "cond", "as-is"},           /* dots only, no blank */
    {"0xfor 1=1", "cond", "as-is"},            /* hex "0xf" + "or" */
    {"1e5or 1=1", "cond", "as-is"},            /* exponent + "or" */
    {"0b1or 1=1", "cond", "as-is"},
    {"\\Nor 1=1", "cond", "as-is"},            /* MySQL's \N + "or" */
    {"1 or x is null", "cond", "as-is"},
    {"1 || 1=1", "cond", "as-is"},
    {"1 OrDeR by 2", "clause", "as-is"},
    {"a union select 1", "union", "as-is"},
    {"1 drop table users", "stack", "as-is"},
    {"@@version", "call", "as-is"},
    {"1 or 1=1--", "cond", "as-is"},
    {"x;drop table users", "stack", "as-is"},  /* a word first, then ";" */
    {"a;select 1", "stack", "as-is"},
    {"x into outfile '/tmp/x", "clause", "as-is"},  /* one quote */
    {"x' or true", "cond", "single-quote"},
};

START_TEST(test_sqli_fast_edge)
{
    bw_sqli_result_t r;
    bw_str_t v = bw_str_make(sqli_edge[_i].in);

    ck_assert_msg(bw_sqli_fast_clean(v) == 0, "fast path settles \"%s\"", v.data);
    ck_assert_msg(sqli(v.data, &r) == 1, "not detected: %s", v.data);
    ck_assert_str_eq(bw_sqli_evidence_name(r.evidence), sqli_edge[_i].evidence);
    ck_assert_str_eq(bw_sqli_context_name(r.context), sqli_edge[_i].context);
}
END_TEST

static const char *const xss_edge[] = {
    "x\\3a expression(1)", "x:expression(1)", "javascript&colon;alert(1)", "x onclick=alert(1)",
    "<script>", "data:text/html,x", "-moz-binding:x", " javascript:alert(1)",
    "vbscript:msgbox(1)", "Mocha:[1]",
};

START_TEST(test_xss_fast_edge)
{
    bw_str_t v = bw_str_make(xss_edge[_i]);
    ck_assert_msg(bw_xss_fast_clean(v) == 0, "fast path settles \"%s\"", v.data);
    ck_assert_msg(xss(v.data, NULL) == 1, "not detected: %s", v.data);
}
END_TEST

/* The gate the engine skips values by (@detectXSS's) is exactly the fast
 * path's set of stop bytes: a byte is in it iff a value of plain letters
 * holding that byte, short or long, anywhere, is not settled clean. */
START_TEST(test_xss_fast_gate)
{
    uint64_t gate[4];
    unsigned c;
    bw_xss_fast_gate(gate);
    for (c = 0; c < 256; c++) {
        int in = (int)(gate[c / 64] >> (c % 64)) & 1;
        char buf[24];
        size_t len, at;
        for (len = 1; len < sizeof(buf); len += 6)
            for (at = 0; at < len; at++) {
                memset(buf, 'a', len);
                buf[at] = (char)c;
                ck_assert_msg(bw_xss_fast_clean(bw_str_n(buf, len)) == !in,
                              "byte 0x%02x at %zu of %zu: gate %d", c, at, len, in);
            }
    }
}
END_TEST

START_TEST(test_fast_words)
{
    ck_assert_int_eq(bw_sqli_fast_words_ok(), 1);
}
END_TEST

static Suite *detect_suite(void)
{
    Suite *s = suite_create("detect");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_tables_sorted);
    tcase_add_loop_test(tc, test_sqli_positive, 0, (int)(sizeof(sqli_pos) / sizeof(sqli_pos[0])));
    tcase_add_loop_test(tc, test_sqli_negative, 0, (int)(sizeof(sqli_neg) / sizeof(sqli_neg[0])));
    tcase_add_test(tc, test_sqli_fingerprint);
    tcase_add_test(tc, test_sqli_nul_bytes);
    tcase_add_test(tc, test_sqli_deep_nesting);
    tcase_add_loop_test(tc, test_xss_positive, 0, (int)(sizeof(xss_pos) / sizeof(xss_pos[0])));
    tcase_add_loop_test(tc, test_xss_negative, 0, (int)(sizeof(xss_neg) / sizeof(xss_neg[0])));
    tcase_add_test(tc, test_xss_nul_bytes);
    tcase_add_test(tc, test_all_prefixes);
    tcase_add_test(tc, test_linear_time);
    tcase_add_test(tc, test_op_sqli);
    tcase_add_test(tc, test_op_xss);
    tcase_add_loop_test(tc, test_fast_shapes, 0, (int)NELEM(fast_shapes));
    tcase_add_loop_test(tc, test_sqli_fast_edge, 0, (int)NELEM(sqli_edge));
    tcase_add_loop_test(tc, test_xss_fast_edge, 0, (int)NELEM(xss_edge));
    tcase_add_test(tc, test_fast_words);
    tcase_add_test(tc, test_xss_fast_gate);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    apr_initialize();
    apr_pool_create(&root_pool, NULL);
    sr = srunner_create(detect_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(root_pool);
    apr_terminate();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
