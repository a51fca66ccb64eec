/*
 * Unit tests for @validateHash (apache2/operators/op_validate_hash.c): the
 * operator with the hash engine on and off, the regex that selects the
 * targets, and its messages (as mod_security2 2.9.7 words them). The
 * signatures are the ones mod_security2 wrote (see test_hmac.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "operators/op_internal.h"
#include "base/bw_hmac.h"

static apr_pool_t *g_pool;
static bw_hash_conf_t g_hc;

static bw_op_t *compile(const char *param, char **err)
{
    bw_op_t *op = apr_pcalloc(g_pool, sizeof(*op));
    bw_op_cenv_t env;
    memset(&env, 0, sizeof(env));
    op->def = bw_op_lookup("validateHash");
    ck_assert_ptr_nonnull(op->def);
    op->param = param;
    op->param_len = strlen(param);
    env.pool = g_pool;
    env.temp_pool = g_pool;
    env.file = "rules.conf";
    *err = NULL;
    return op->def->compile(op, &env, err) == 0 ? op : NULL;
}

static bw_str_t key_of(void *host)
{
    return ((const bw_hash_conf_t *)host)->key;
}

/* Run op on uri; engine: is SecHashEngine On. */
static int run(const bw_op_t *op, const char *uri, int engine, const char **msg)
{
    bw_op_run_t r;
    pcre2_match_data *md = pcre2_match_data_create(10, NULL);
    int rc;
    memset(&r, 0, sizeof(r));
    r.pool = g_pool;
    r.var_name = "REQUEST_URI";
    r.md = md;
    r.ncaptures = -1;
    if (engine) {
        r.hash = &g_hc;
        r.hash_key = key_of;
        r.script_host = &g_hc;
    }
    rc = op->def->execute(op, &r, bw_str_make(uri));
    if (msg)
        *msg = r.msg;
    pcre2_match_data_free(md);
    return rc;
}

static void setup(void)
{
    apr_pool_create(&g_pool, NULL);
    memset(&g_hc, 0, sizeof(g_hc));
    g_hc.key = bw_str_make("secretkey");
    g_hc.param = bw_str_make("hmac");
}

static void teardown(void)
{
    apr_pool_destroy(g_pool);
}

START_TEST(test_valid_and_not)
{
    char *err;
    const char *msg = NULL;
    bw_op_t *op = compile("/prot", &err);
    ck_assert_ptr_nonnull(op);
    ck_assert_int_eq(run(op, "/prot/f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975", 1, NULL), 0);
    ck_assert_int_eq(run(op, "/prot/a.php?x=1&hmac=a161a411b1197df64c7affc4cdd12a9b6eb6d569", 1,
                         NULL), 0);
    ck_assert_int_eq(run(op, "/prot/a.php?x=1", 1, &msg), 1);
    ck_assert_str_eq(msg, "Request URI matched \"/prot\" at REQUEST_URI. No Hash parameter");
    ck_assert_int_eq(run(op, "/prot/f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3976", 1, &msg), 1);
    ck_assert_str_eq(msg, "Request URI matched \"/prot\" at REQUEST_URI. Hash parameter hash value = "
                     "[fc98e7a76660d4759d472c784989ebe3cd3c3976] Requested URI hash value = "
                     "[fc98e7a76660d4759d472c784989ebe3cd3c3975]");
    /* not selected by the regex */
    ck_assert_int_eq(run(op, "/other?x=1", 1, NULL), 0);
    /* SecHashEngine Off: nothing is checked */
    ck_assert_int_eq(run(op, "/prot/a.php?x=1", 0, NULL), 0);
}
END_TEST

START_TEST(test_compile_errors)
{
    char *err;
    ck_assert_ptr_null(compile("(", &err));
    ck_assert_ptr_nonnull(strstr(err, "@validateHash"));
    ck_assert(bw_op_lookup("validatehash")->flags & BW_OP_PARAM_REQUIRED);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("validateHash");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;
    apr_initialize();
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_valid_and_not);
    tcase_add_test(tc, test_compile_errors);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_terminate();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
