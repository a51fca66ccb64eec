/*
 * Base-layer tests of the hash engine's signatures (apache2/base/bw_hmac.c):
 * HMAC-SHA1 against RFC 2202's vectors, the transaction key of each
 * SecHashKey mode, link selection by SecHashMethodRx/Pm, and the check of a
 * request target against signatures that Debian's mod_security2 2.9.7
 * wrote into a page (key "secretkey", measured with the regression harness).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "base/bw_hmac.h"
#include "base/bw_regex.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

static const char *hmac(bw_str_t key, const char *msg)
{
    char *out = apr_palloc(pool, BW_HMAC_HEX_LEN + 1);
    bw_hmac_sha1_hex(key, bw_str_make(msg), out);
    return out;
}

START_TEST(test_rfc2202)
{
    char k1[20], k6[80];
    memset(k1, 0x0b, sizeof(k1));
    memset(k6, 0xaa, sizeof(k6));
    ck_assert_str_eq(hmac(bw_str_n(k1, sizeof(k1)), "Hi There"),
                     "b617318655057264e28bc0b6fb378c8ef146be00");
    ck_assert_str_eq(hmac(bw_str_make("Jefe"), "what do ya want for nothing?"),
                     "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
    /* a key longer than SHA-1's block is hashed first */
    ck_assert_str_eq(hmac(bw_str_n(k6, sizeof(k6)),
                          "Test Using Larger Than Block-Size Key - Hash Key First"),
                     "aa4ae5e15272d00e95705637ce8a3b55ed402112");
    /* what mod_security2 2.9.7 wrote for href="/prot/f" under "secretkey" */
    ck_assert_str_eq(hmac(bw_str_make("secretkey"), "prot/f"),
                     "fc98e7a76660d4759d472c784989ebe3cd3c3975");
}
END_TEST

START_TEST(test_tx_key)
{
    bw_hash_conf_t hc;
    bw_str_t ip = bw_str_make("127.0.0.1"), none = bw_str_n("", 0);
    memset(&hc, 0, sizeof(hc));
    hc.key = bw_str_make("secretkey");
    hc.mode = BW_HASH_KEY_ONLY;
    ck_assert(bw_str_eq(bw_hash_tx_key(pool, &hc, ip, bw_str_make("abc")), hc.key));
    hc.mode = BW_HASH_REMOTE_IP;
    ck_assert_str_eq(bw_hash_tx_key(pool, &hc, ip, none).data, "secretkey127.0.0.1");
    /* measured: mod_security2 signed href="/a" so for a client at 127.0.0.1 */
    ck_assert_str_eq(hmac(bw_hash_tx_key(pool, &hc, ip, none), "a"),
                     "9ec3d4531713533e911edac6d624e7c20625ae14");
    hc.mode = BW_HASH_SESSION_ID;
    ck_assert_str_eq(bw_hash_tx_key(pool, &hc, ip, bw_str_make("abc")).data, "secretkeyabc");
    ck_assert_str_eq(hmac(bw_hash_tx_key(pool, &hc, ip, bw_str_make("abc")), "a"),
                     "2256c2226d7c88d55821968f4ba72222c9b58b3e");
    /* no session yet: the client's address, as mod_security2 */
    ck_assert_str_eq(bw_hash_tx_key(pool, &hc, ip, none).data, "secretkey127.0.0.1");
}
END_TEST

static int check(const bw_hash_conf_t *hc, const char *uri, const char **given)
{
    char want[BW_HMAC_HEX_LEN + 1];
    bw_str_t g;
    int rc = bw_hash_check_uri(hc, hc->key, bw_str_make(uri), &g, want);
    if (given)
        *given = bw_str_pdup(pool, g);
    return rc;
}

START_TEST(test_check_uri)
{
    bw_hash_conf_t hc;
    const char *g = NULL;
    memset(&hc, 0, sizeof(hc));
    hc.key = bw_str_make("secretkey");
    hc.param = bw_str_make("hmac");
    ck_assert_int_eq(check(&hc, "/prot/f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975", NULL),
                     BW_HASH_VALID);
    ck_assert_int_eq(check(&hc, "/prot/a.php?x=1&hmac=a161a411b1197df64c7affc4cdd12a9b6eb6d569",
                           NULL), BW_HASH_VALID);
    ck_assert_int_eq(check(&hc, "http://example.com/prot/f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975",
                           NULL), BW_HASH_VALID);
    ck_assert_int_eq(check(&hc, "/prot/a.php?x=1", NULL), BW_HASH_MISSING);
    ck_assert_int_eq(check(&hc, "/prot/f?xhmac=fc98e7a76660d4759d472c784989ebe3cd3c3975", NULL),
                     BW_HASH_MISSING);
    ck_assert_int_eq(check(&hc, "/prot/f?hmac", NULL), BW_HASH_MISSING);
    /* wrong: upper case, empty, one digit off, another parameter after it */
    ck_assert_int_eq(check(&hc, "/prot/f?hmac=FC98E7A76660D4759D472C784989EBE3CD3C3975", NULL),
                     BW_HASH_WRONG);
    ck_assert_int_eq(check(&hc, "/prot/f?hmac=", &g), BW_HASH_WRONG);
    ck_assert_str_eq(g, "");
    ck_assert_int_eq(check(&hc, "/prot/f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975&y=2", &g),
                     BW_HASH_WRONG);
    ck_assert_str_eq(g, "fc98e7a76660d4759d472c784989ebe3cd3c3975&y=2");
    ck_assert_int_eq(check(&hc, "/x/prot/f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975", NULL),
                     BW_HASH_WRONG);
    /* a NUL byte is data: it changes what is signed */
    {
        char want[BW_HMAC_HEX_LEN + 1];
        bw_str_t given;
        static const char u[] = "/prot/f\0?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975";
        ck_assert_int_eq(bw_hash_check_uri(&hc, hc.key, bw_str_n(u, sizeof(u) - 1), &given, want),
                         BW_HASH_WRONG);
    }
    /* no SecHashParam: never valid */
    hc.param = bw_str_n(NULL, 0);
    ck_assert_int_eq(check(&hc, "/prot/f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975", NULL),
                     BW_HASH_MISSING);
}
END_TEST

START_TEST(test_selects)
{
    bw_hash_conf_t hc;
    apr_array_header_t *ms = apr_array_make(pool, 2, sizeof(bw_hash_method_t));
    bw_hash_method_t *m;
    static const bw_str_t phrases[] = { BW_STR_LIT("admin"), BW_STR_LIT(".php") };
    char *err = NULL;
    memset(&hc, 0, sizeof(hc));
    ck_assert_int_eq(bw_hash_selects(&hc, BW_HASH_HREF, bw_str_make("/a"), NULL), 0);
    m = apr_array_push(ms);
    memset(m, 0, sizeof(*m));
    m->kind = BW_HASH_HREF;
    m->re = bw_regex_compile(pool, "^/prot/", 0, &err);
    ck_assert_ptr_nonnull(m->re);
    m = apr_array_push(ms);
    memset(m, 0, sizeof(*m));
    m->kind = BW_HASH_FORM_ACTION;
    m->phrases = phrases;
    m->nphrases = 2;
    hc.methods = ms;
    ck_assert_int_eq(bw_hash_selects(&hc, BW_HASH_HREF, bw_str_make("/prot/a"), NULL), 1);
    ck_assert_int_eq(bw_hash_selects(&hc, BW_HASH_HREF, bw_str_make("/x/prot/a"), NULL), 0);
    ck_assert_int_eq(bw_hash_selects(&hc, BW_HASH_IFRAME_SRC, bw_str_make("/prot/a"), NULL), 0);
    ck_assert_int_eq(bw_hash_selects(&hc, BW_HASH_FORM_ACTION, bw_str_make("/x/ADMIN/"), NULL), 1);
    ck_assert_int_eq(bw_hash_selects(&hc, BW_HASH_FORM_ACTION, bw_str_make("/x/a.PHP"), NULL), 1);
    ck_assert_int_eq(bw_hash_selects(&hc, BW_HASH_FORM_ACTION, bw_str_make("/x/a.html"), NULL), 0);
    ck_assert_int_eq(bw_hash_kind("hashiframesrc"), BW_HASH_IFRAME_SRC);
    ck_assert_int_eq(bw_hash_kind("HashScript"), -1);
    ck_assert(bw_hash_equal(bw_str_make("ab"), bw_str_make("ab")));
    ck_assert(!bw_hash_equal(bw_str_make("ab"), bw_str_make("abc")));
    ck_assert(!bw_hash_equal(bw_str_make("ab"), bw_str_make("aB")));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hmac");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;
    apr_initialize();
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_rfc2202);
    tcase_add_test(tc, test_tx_key);
    tcase_add_test(tc, test_check_uri);
    tcase_add_test(tc, test_selects);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_terminate();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
