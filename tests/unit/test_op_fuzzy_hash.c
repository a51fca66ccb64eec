/*
 * Unit tests for @fuzzyHash (apache2/operators/op_fuzzy_hash.c). The hash
 * lists are made here with libfuzzy itself, in both forms the operator
 * reads (the ssdeep tool's CSV with its header, and bare hashes), so no
 * third-party hash file is needed. The vectors in data/op/misc.vec cover
 * the parameter and file errors.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fuzzy.h>
#include "operators/op_internal.h"
#include "test_files.h"

static apr_pool_t *g_pool;
static char g_dir[64];
static char *g_text;       /* ~8 KB of varied text */
static size_t g_len;
static char g_hash[FUZZY_MAX_RESULT];

/* Deterministic text that ssdeep can tell apart from its edits. */
static void make_text(void)
{
    static const char *const words[] = { "order", "invoice", "tea", "milk", "bread", "station",
        "window", "garden", "river", "lamp", "copper", "violet", "signal", "harbour" };
    unsigned x = 12345;
    size_t cap = 8192, n = 0;
    g_text = apr_palloc(g_pool, cap + 16);
    while (n < cap) {
        const char *w;
        x = x * 1103515245u + 12345u;
        w = words[(x >> 16) % (sizeof(words) / sizeof(words[0]))];
        n += (size_t)sprintf(g_text + n, "%s ", w);
    }
    g_len = n;
}

static bw_op_t *compile(const char *param, char **err)
{
    bw_op_t *op = apr_pcalloc(g_pool, sizeof(*op));
    bw_op_cenv_t env;
    memset(&env, 0, sizeof(env));
    op->def = bw_op_lookup("fuzzyHash");
    op->param = param;
    op->param_len = strlen(param);
    env.pool = g_pool;
    env.temp_pool = g_pool;
    env.file = apr_pstrcat(g_pool, g_dir, "/rules.conf", NULL);
    *err = NULL;
    return op->def->compile(op, &env, err) == 0 ? op : NULL;
}

static int run(const bw_op_t *op, bw_str_t value, const char **msg)
{
    bw_op_run_t r;
    int rc;
    memset(&r, 0, sizeof(r));
    r.pool = g_pool;
    r.var_name = "REQUEST_BODY";
    r.ncaptures = -1;
    rc = op->def->execute(op, &r, value);
    if (msg)
        *msg = r.msg;
    return rc;
}

/* g_text with 200 bytes in its middle overwritten: similar, not equal. */
static bw_str_t edited(void)
{
    char *t = apr_pmemdup(g_pool, g_text, g_len + 1);
    memset(t + g_len / 2, 'x', 200);
    return bw_str_n(t, g_len);
}

static void setup(void)
{
    strcpy(g_dir, "/tmp/bw-test-fuzzy-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
    make_text();
    ck_assert_int_eq(fuzzy_hash_buf((const unsigned char *)g_text, (uint32_t)g_len, g_hash), 0);
    tu_write_file(g_pool, g_dir, "tool.txt", apr_psprintf(g_pool, "ssdeep,1.1--blocksize:hash:hash,filename\r\n"
                                        "%s,\"/srv/known/shell.php\"\r\n", g_hash));
    tu_write_file(g_pool, g_dir, "bare.txt", apr_psprintf(g_pool, "# known bodies\n\n"
                                        "3:aXGHm:aXGHm\n  %s  \n", g_hash));
}

static void teardown(void)
{
    unlink(apr_pstrcat(g_pool, g_dir, "/tool.txt", NULL));
    unlink(apr_pstrcat(g_pool, g_dir, "/bare.txt", NULL));
    rmdir(g_dir);
}

START_TEST(test_same_similar_other)
{
    const char *files[] = { "tool.txt", "bare.txt" }, *msg;
    char *err;
    int i, score;
    char sig[FUZZY_MAX_RESULT];
    bw_str_t e = edited();
    ck_assert_int_eq(fuzzy_hash_buf((const unsigned char *)e.data, (uint32_t)e.len, sig), 0);
    score = fuzzy_compare(sig, g_hash);
    ck_assert_msg(score > 0 && score < 100, "edited text scores %d", score);
    for (i = 0; i < 2; i++) {
        bw_op_t *exact = compile(apr_psprintf(g_pool, "%s 100", files[i]), &err);
        bw_op_t *at = compile(apr_psprintf(g_pool, "%s %d", files[i], score), &err);
        bw_op_t *above = compile(apr_psprintf(g_pool, "%s %d", files[i], score + 1), &err);
        ck_assert_msg(exact && at && above, "%s: %s", files[i], err ? err : "?");
        ck_assert_int_eq(run(exact, bw_str_n(g_text, g_len), &msg), 1);
        ck_assert_str_eq(msg, apr_psprintf(g_pool, "Fuzzy hash of REQUEST_BODY matched with %s "
                                           "(from: %s/%s). Score: 100.", g_hash, g_dir, files[i]));
        ck_assert_int_eq(run(exact, e, NULL), 0);
        ck_assert_int_eq(run(at, e, NULL), 1);       /* the threshold is reached */
        ck_assert_int_eq(run(above, e, NULL), 0);
        ck_assert_int_eq(run(at, bw_str_make("hello"), NULL), 0);
        ck_assert_int_eq(run(at, bw_str_n("", 0), NULL), 0);
    }
}
END_TEST

/* NUL bytes are data: the value is hashed by its length. */
START_TEST(test_nul_bytes)
{
    char *err, *t = apr_pmemdup(g_pool, g_text, g_len);
    bw_op_t *op = compile("tool.txt 100", &err);
    ck_assert_ptr_nonnull(op);
    t[g_len / 2] = '\0';
    ck_assert_int_eq(run(op, bw_str_n(t, g_len), NULL), 0);
    ck_assert_int_eq(run(op, bw_str_n(g_text, g_len), NULL), 1);
}
END_TEST

/* A threshold of 0 matches every value, as mod_security2 (score >= 0). */
START_TEST(test_threshold_zero)
{
    char *err;
    bw_op_t *op = compile("bare.txt 0", &err);
    ck_assert_ptr_nonnull(op);
    ck_assert_int_eq(run(op, bw_str_make("unrelated"), NULL), 1);
}
END_TEST

START_TEST(test_bad_lines)
{
    static const char *const bad[] = {
        "96:abc",                  /* one part */
        "abc:def:ghi",             /* no block size */
        "96:ab c:def",             /* space inside */
        ":abc:def",
        "96:abc:def:ghi",
        "96:abc:d*f",
        NULL
    };
    char *err;
    int i;
    for (i = 0; bad[i]; i++) {
        tu_write_file(g_pool, g_dir, "bad.txt", apr_psprintf(g_pool, "%s\n%s\n", g_hash, bad[i]));
        ck_assert_ptr_null(compile("bad.txt 50", &err));
        ck_assert_msg(strstr(err, "bad.txt\" line 2") != NULL, "%s: %s", bad[i], err);
    }
    tu_write_file(g_pool, g_dir, "bad.txt", "96:abc:def,\"a, b.txt\"\n");
    ck_assert_ptr_nonnull(compile("bad.txt 50", &err));
    unlink(apr_pstrcat(g_pool, g_dir, "/bad.txt", NULL));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("op_fuzzy_hash");
    TCase *tc = tcase_create("fuzzyHash");
    SRunner *sr;
    int failed;

    apr_initialize();
    apr_pool_create(&g_pool, NULL);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_same_similar_other);
    tcase_add_test(tc, test_nul_bytes);
    tcase_add_test(tc, test_threshold_zero);
    tcase_add_test(tc, test_bad_lines);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(g_pool);
    apr_terminate();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
