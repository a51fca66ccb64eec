/*
 * Unit tests for signing a response's links (apache2/body/bw_hash_html.c):
 * where a link leads, which links are signed, what the page looks like
 * afterwards (byte for byte but for the inserted parameters), and pages
 * that are not quite HTML. Signatures are mod_security2 2.9.7's for the
 * same links (key "secretkey", see test_hmac.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "body/bw_hash_html.h"
#include "base/bw_regex.h"

static apr_pool_t *pool;
static bw_hash_conf_t hc;

static void add_method(int kind, const char *re)
{
    bw_hash_method_t *m = apr_array_push((apr_array_header_t *)hc.methods);
    char *err = NULL;
    memset(m, 0, sizeof(*m));
    m->kind = kind;
    m->re = bw_regex_compile(pool, re, 0, &err);
    ck_assert_ptr_nonnull(m->re);
}

static void setup(void)
{
    int k;
    apr_pool_create(&pool, NULL);
    memset(&hc, 0, sizeof(hc));
    hc.key = bw_str_make("secretkey");
    hc.param = bw_str_make("hmac");
    hc.methods = apr_array_make(pool, 4, sizeof(bw_hash_method_t));
    for (k = 0; k < BW_HASH_NKINDS; k++)
        add_method(k, ".");
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

static const char *target(const char *page, const char *link)
{
    bw_str_t t;
    if (!bw_hash_link_target(pool, bw_str_make(page), bw_str_make(link), &t))
        return NULL;
    return bw_str_pdup(pool, t);
}

static const char *sign(const char *page, const char *html, int *n)
{
    bw_str_t out;
    *n = bw_hash_sign_html(pool, &hc, hc.key, bw_str_make(page), bw_str_make(html), NULL, &out);
    return bw_str_pdup(pool, out);
}

START_TEST(test_targets)
{
    ck_assert_str_eq(target("/reflect/dir/page", "b.html"), "/reflect/dir/b.html");
    ck_assert_str_eq(target("/reflect/dir/page?q=1", "../b.html?x=1#top"), "/reflect/b.html?x=1");
    ck_assert_str_eq(target("/d/page", "./x/../y/./z"), "/d/y/z");
    ck_assert_str_eq(target("/d/page", "?x=1"), "/d/page?x=1");
    ck_assert_str_eq(target("/d/page", "http://example.com/prot/c"), "/prot/c");
    ck_assert_str_eq(target("/d/page", "HTTPS://example.com"), "/");
    ck_assert_str_eq(target("/d/page", "//cdn.example/x.js"), "/x.js");
    ck_assert_str_eq(target("/d/page", "/../../etc/x"), "/etc/x");
    ck_assert_str_eq(target("/d/page", "  /a  "), "/a");
    ck_assert_ptr_null(target("/d/page", ""));
    ck_assert_ptr_null(target("/d/page", "#top"));
    ck_assert_ptr_null(target("/d/page", "mailto:a@example.com"));
    ck_assert_ptr_null(target("/d/page", "javascript:void(0)"));
}
END_TEST

START_TEST(test_sign_page)
{
    int n;
    const char *out = sign("/reflect/dir/page",
        "<html><body><a href=\"/prot/a.php?x=1\">a</a><A HREF='b.html'>b</A>"
        "<a href=http://example.com/prot/c>c</a><form method=post action=\"/prot/f\"></form>"
        "<iframe src=\"/prot/i\"></iframe><frame src=\"/prot/fr\"><a href=\"#top\">t</a>"
        "<a name=x>x</a></body></html>", &n);
    ck_assert_int_eq(n, 6);
    ck_assert_str_eq(out,
        "<html><body><a href=\"/prot/a.php?x=1&amp;hmac=a161a411b1197df64c7affc4cdd12a9b6eb6d569\">a</a>"
        "<A HREF='b.html?hmac=b03b172eae89e5e449647511ec979c413e30e2c7'>b</A>"
        "<a href=http://example.com/prot/c?hmac=eba17481969d372191323caad9a14e9268ef4edc>c</a>"
        "<form method=post action=\"/prot/f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975\"></form>"
        "<iframe src=\"/prot/i?hmac=a8799f0d0db6b58fbe7ab959d76df02cfe156026\"></iframe>"
        "<frame src=\"/prot/fr?hmac=7e7a1638fb429dccd4a45f4612e107ffc3ffe66c\"><a href=\"#top\">t</a>"
        "<a name=x>x</a></body></html>");
}
END_TEST

START_TEST(test_what_is_not_a_link)
{
    int n;
    const char *page = "<!-- <a href=\"/c\"> --><script>var s = '<a href=\"/s\">';</script>"
                       "<STYLE>a[href=\"/t\"]{}</STYLE><img src=\"/i.png\"><link href=\"/x.css\">"
                       "<a data-href=\"/d\">d</a>";
    ck_assert_str_eq(sign("/", page, &n), page);
    ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(test_selection_and_fragment)
{
    int n;
    hc.methods = apr_array_make(pool, 2, sizeof(bw_hash_method_t));
    add_method(BW_HASH_HREF, "^/prot/");
    ck_assert_str_eq(sign("/", "<a href=\"/prot/f#part\">x</a><a href=\"/open\">y</a>"
                              "<form action=\"/prot/f\">", &n),
                     "<a href=\"/prot/f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975#part\">x</a>"
                     "<a href=\"/open\">y</a><form action=\"/prot/f\">");
    ck_assert_int_eq(n, 1);
    /* a relative link is selected by where it leads */
    ck_assert_str_eq(sign("/prot/page", "<a href=\"f\">", &n),
                     "<a href=\"f?hmac=fc98e7a76660d4759d472c784989ebe3cd3c3975\">");
    ck_assert_str_eq(sign("/open/page", "<a href=\"f\">", &n), "<a href=\"f\">");
    /* "&amp;" in the page is '&' in the link the browser follows */
    ck_assert_str_eq(sign("/", "<a href=\"/prot/a.php?x=1&amp;y=2\">", &n),
                     "<a href=\"/prot/a.php?x=1&amp;y=2&amp;hmac=98e1d0623d24ba48fa8447b84cf5b83e623b2746\">");
    ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(test_broken_pages)
{
    int n;
    static const char nul_page[] = "<a href=\"/prot/f\0\">x</a><a\0href=/prot/f>";
    bw_str_t out;
    /* cut short, stray '<', unterminated quote: nothing read past the end */
    ck_assert_str_eq(sign("/", "<a href=\"/prot/f", &n), "<a href=\"/prot/f");
    ck_assert_str_eq(sign("/", "<", &n), "<");
    ck_assert_str_eq(sign("/", "<a href", &n), "<a href");
    ck_assert_str_eq(sign("/", "<a href=", &n), "<a href=");
    ck_assert_str_eq(sign("/", "a < b <= c <!-- x", &n), "a < b <= c <!-- x");
    ck_assert_str_eq(sign("/", "<a / / href = '/a' >", &n),
                     "<a / / href = '/a?hmac=5cb53f937a50b354b896113aef1b21b9802510c5' >");
    /* NUL bytes are data */
    n = bw_hash_sign_html(pool, &hc, hc.key, bw_str_make("/"),
                          bw_str_n(nul_page, sizeof(nul_page) - 1), NULL, &out);
    ck_assert_int_eq(n, 1);
    ck_assert_uint_eq(out.len, sizeof(nul_page) - 1 + strlen("?hmac=") + 40);
}
END_TEST

START_TEST(test_location)
{
    const char *l = bw_hash_sign_location(pool, &hc, hc.key, bw_str_make("/x/y"),
                                          bw_str_make("http://example.com/prot/a.php?x=1"), NULL);
    ck_assert_str_eq(l, "http://example.com/prot/a.php?x=1&hmac=a161a411b1197df64c7affc4cdd12a9b6eb6d569");
    ck_assert_ptr_null(bw_hash_sign_location(pool, &hc, hc.key, bw_str_make("/"),
                                             bw_str_make("mailto:x@example.com"), NULL));
    hc.param = bw_str_n(NULL, 0);
    ck_assert_ptr_null(bw_hash_sign_location(pool, &hc, hc.key, bw_str_make("/"),
                                             bw_str_make("/prot/f"), NULL));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hash_html");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;
    apr_initialize();
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_targets);
    tcase_add_test(tc, test_sign_page);
    tcase_add_test(tc, test_what_is_not_a_link);
    tcase_add_test(tc, test_selection_and_fragment);
    tcase_add_test(tc, test_broken_pages);
    tcase_add_test(tc, test_location);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_terminate();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
