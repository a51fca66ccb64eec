/*
 * Unit tests for the body processors' hard limits and worst cases: part
 * counts, header line length, deep and wide JSON, name amplification,
 * entity expansion, upload files that must not be left behind, every split
 * point of a real body, and bodies built to make a careless parser
 * quadratic (each must finish in well under a second per MB, even under
 * ASan). Case-by-case semantics live in the data files (test_body.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include "test_body.h"

/* Generous: the real figures are milliseconds; this only catches a parser
 * gone quadratic, even on a loaded machine with sanitizers. */
#define SLOW_SECONDS 5.0

/* prefix + n copies of unit (with %d replaced by the index when numbered)
 * + suffix, in one pool allocation. */
static bw_str_t build(apr_pool_t *pool, const char *prefix, const char *unit, long n,
                      int numbered, const char *suffix)
{
    size_t cap = strlen(prefix) + strlen(suffix) + (size_t)n * (strlen(unit) + 12) + 1, len;
    char *d = apr_palloc(pool, cap);
    long i;
    len = (size_t)sprintf(d, "%s", prefix);
    for (i = 0; i < n; i++)
        len += (size_t)(numbered ? sprintf(d + len, unit, (int)i) : sprintf(d + len, "%s", unit));
    len += (size_t)sprintf(d + len, "%s", suffix);
    return bw_str_n(d, len);
}

static const char *last_line(apr_pool_t *pool, const char *t)
{
    size_t n = strlen(t);
    const char *p;
    if (n && t[n - 1] == '\n')
        n--;
    for (p = t + n; p > t && p[-1] != '\n'; p--)
        ;
    return apr_pstrndup(pool, p, (size_t)(t + n - p));
}

static tb_case_t mp_case(bw_str_t body)
{
    tb_case_t c;
    tb_case_init(&c, TB_MULTIPART);
    c.content_type = "multipart/form-data; boundary=XyZ";
    c.body = body;
    return c;
}

START_TEST(test_mp_part_count)
{
    apr_pool_t *pool;
    tb_outcome_t out;
    tb_case_t c;
    apr_pool_create(&pool, NULL);
    c = mp_case(build(pool, "", "--XyZ\r\nContent-Disposition: form-data; name=\"p%d\"\r\n\r\nv\r\n",
                      1000, 1, "--XyZ--\r\n"));
    c.quiet = 1;
    tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_int_eq(out.res.error, 0);
    ck_assert_int_eq(out.nargs, 1000);
    c.body = build(pool, "", "--XyZ\r\nContent-Disposition: form-data; name=\"p%d\"\r\n\r\nv\r\n",
                   10000, 1, "--XyZ--\r\n");
    tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_int_eq(out.res.error, 1);
    ck_assert_str_eq(out.res.error_msg, "Multipart: too many parts (limit 1000)");
    ck_assert_int_eq(out.nargs, 1000);
    ck_assert(out.res.mp_strict_error);
    apr_pool_destroy(pool);
}
END_TEST

START_TEST(test_mp_header_line_limit)
{
    apr_pool_t *pool;
    tb_outcome_t out;
    tb_case_t c;
    const char *cd = "Content-Disposition: form-data; name=\"a\"\r\nX-Long: ";
    char *pad;
    apr_pool_create(&pool, NULL);
    pad = apr_palloc(pool, 8193);
    memset(pad, 'x', 8192 - strlen("X-Long: "));
    pad[8192 - strlen("X-Long: ")] = '\0';
    c = mp_case(bw_str_make(apr_pstrcat(pool, "--XyZ\r\n", cd, pad, "\r\n\r\n1\r\n--XyZ--\r\n", NULL)));
    tb_run_all_splits(pool, &c, 3, &out);
    ck_assert_int_eq(out.res.error, 0);
    ck_assert_int_eq(out.nheaders, 2);
    c.body = bw_str_make(apr_pstrcat(pool, "--XyZ\r\n", cd, pad, "y\r\n\r\n1\r\n--XyZ--\r\n", NULL));
    tb_run_all_splits(pool, &c, 3, &out);
    ck_assert_str_eq(out.res.error_msg, "Multipart: part header line longer than 8192 bytes");
    apr_pool_destroy(pool);
}
END_TEST

/* Every way of cutting a real body in two gives the same transcript. */
START_TEST(test_mp_every_split_point)
{
    apr_pool_t *pool;
    tb_case_t c;
    bw_str_t body;
    const char *whole, *t;
    tb_outcome_t out;
    size_t cut;
    apr_pool_create(&pool, NULL);
    body = tb_read_file(pool, tb_data_path(pool, "samples/firefox.multipart"));
    c = mp_case(body);
    c.content_type = "multipart/form-data; boundary=---------------------------735323031399963166993862150";
    whole = tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_int_eq(out.res.error, 0);
    ck_assert_int_eq(out.nfiles, 2);
    for (cut = 1; cut < body.len; cut++) {
        bw_body_result_t res;
        bw_body_parser_t *bp;
        apr_pool_t *sub;
        apr_pool_create(&sub, pool);
        memset(&res, 0, sizeof(res));
        bp = bw_body_multipart_create(sub, c.content_type, &c.limits, NULL, &res);
        bw_body_feed(bp, body.data, cut);
        bw_body_feed(bp, body.data + cut, body.len - cut);
        ck_assert_int_eq(bw_body_finish(bp), 0);
        ck_assert_int_eq(res.mp.unmatched_boundary, 1);
        apr_pool_destroy(sub);
    }
    t = tb_run(pool, &c, TB_BYTES, &out);
    ck_assert_str_eq(t, whole);
    apr_pool_destroy(pool);
}
END_TEST

/* An upload that ends in an error, or whose pool goes before the body
 * ends, leaves no file behind. */
START_TEST(test_mp_upload_cleanup)
{
    apr_pool_t *pool, *sub;
    tb_outcome_t out;
    tb_case_t c;
    bw_body_limits_t lim;
    bw_body_result_t res;
    bw_body_parser_t *bp;
    char dir[] = "/tmp/bw-test-body-XXXXXX";
    const char *part = "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\nabc";
    apr_pool_create(&pool, NULL);
    c = mp_case(bw_str_make(part));
    c.store_uploads = 1;
    tb_run_all_splits(pool, &c, 3, &out); /* tb_run fails if a file is left */
    ck_assert_str_eq(out.res.error_msg, "Multipart: Final boundary missing.");

    ck_assert_ptr_nonnull(mkdtemp(dir));
    tb_case_init(&c, TB_MULTIPART);
    lim = c.limits;
    lim.upload_dir = dir;
    apr_pool_create(&sub, pool);
    memset(&res, 0, sizeof(res));
    bp = bw_body_multipart_create(sub, "multipart/form-data; boundary=XyZ", &lim, NULL, &res);
    ck_assert_int_eq(bw_body_feed(bp, part, strlen(part)), 0);
    apr_pool_destroy(sub); /* no finish: the request was aborted */
    ck_assert_int_eq(rmdir(dir), 0);

    lim.upload_dir = "/nonexistent/bulwark";
    memset(&res, 0, sizeof(res));
    bp = bw_body_multipart_create(pool, "multipart/form-data; boundary=XyZ", &lim, NULL, &res);
    ck_assert_int_eq(bw_body_feed(bp, part, strlen(part)), -1);
    ck_assert_ptr_nonnull(strstr(res.error_msg, "cannot create an upload file in /nonexistent/bulwark"));
    apr_pool_destroy(pool);
}
END_TEST

/* Bodies shaped to make line or boundary scanning quadratic. */
START_TEST(test_mp_linear)
{
    static const char *const units[] = {
        "\r\n--Xy",            /* boundary prefixes on every line */
        "\r",                  /* CRs only */
        "\n-- ",               /* unmatched "--" lines with whitespace */
        "\r\n--\"Xy",          /* quote variant (no match: boundary not quoted) */
        "\n--                                                                X",
    };
    apr_pool_t *pool;
    size_t i;
    apr_pool_create(&pool, NULL);
    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        long n = (4L << 20) / (long)strlen(units[i]);
        tb_outcome_t out;
        tb_case_t c = mp_case(build(pool, "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; "
                                          "filename=\"x\"\r\n\r\n", units[i], n, 0,
                                    "\r\n--XyZ--\r\n"));
        c.quiet = 1;
        tb_run(pool, &c, TB_RANDOM + 1, &out);
        ck_assert_msg(out.res.error == 0, "unit %zu: %s", i, out.res.error_msg);
        ck_assert_int_eq(out.nfiles, 1);
        ck_assert_msg(out.seconds < SLOW_SECONDS, "unit %zu took %.2fs", i, out.seconds);
    }
    apr_pool_destroy(pool);
}
END_TEST

START_TEST(test_json_deep)
{
    apr_pool_t *pool;
    tb_outcome_t out;
    tb_case_t c;
    apr_pool_create(&pool, NULL);
    tb_case_init(&c, TB_JSON);
    c.body = build(pool, "", "[", 10000, 0, "");
    tb_run_all_splits(pool, &c, 2, &out);
    ck_assert_str_eq(out.res.error_msg, "JSON depth limit exceeded (SecRequestBodyJsonDepthLimit 512)");
    /* Within a high limit, deep nesting parses and names stay bounded. */
    c.limits.json_depth = 20000;
    c.body = build(pool, "", "[", 10000, 0, "");
    c.body = bw_str_make(apr_pstrcat(pool, c.body.data, "1", build(pool, "", "]", 10000, 0, "").data,
                                     NULL));
    tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_str_eq(out.res.error_msg,
                     "JSON: argument names too long (over 8192 bytes each or 33554432 in all)");
    c.body = build(pool, "", "{\"a\":", 1000, 0, "1");
    c.body = bw_str_make(apr_pstrcat(pool, c.body.data, build(pool, "", "}", 1000, 0, "").data, NULL));
    tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_int_eq(out.res.error, 0);
    ck_assert_int_eq(out.nargs, 1);
    apr_pool_destroy(pool);
}
END_TEST

START_TEST(test_json_million_keys)
{
    apr_pool_t *pool;
    tb_outcome_t out;
    tb_case_t c;
    apr_pool_create(&pool, NULL);
    tb_case_init(&c, TB_JSON);
    c.quiet = 1;
    c.body = build(pool, "{\"k\":0", ",\"k%d\":0", 1000000, 1, "}");
    c.limits.args_limit = 1000;
    tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_str_eq(out.res.error_msg, "JSON: argument limit exceeded (SecArgumentsLimit 1000)");
    ck_assert_int_eq(out.nargs, 1000);
    c.limits.args_limit = 0;
    tb_run(pool, &c, TB_RANDOM, &out);
    ck_assert_int_eq(out.res.error, 0);
    ck_assert_int_eq(out.nargs, 1000001);
    ck_assert_msg(out.seconds < SLOW_SECONDS, "1M keys took %.2fs", out.seconds);
    apr_pool_destroy(pool);
}
END_TEST

/* A long prefix over many keys would build gigabytes of names. */
START_TEST(test_json_name_amplification)
{
    apr_pool_t *pool;
    tb_outcome_t out;
    tb_case_t c;
    char *key;
    apr_pool_create(&pool, NULL);
    tb_case_init(&c, TB_JSON);
    c.quiet = 1;
    key = apr_palloc(pool, 8001);
    memset(key, 'k', 8000);
    key[8000] = '\0';
    c.body = build(pool, apr_pstrcat(pool, "{\"", key, "\":{\"a\":0", NULL), ",\"%d\":0", 200000, 1,
                   "}}");
    tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_str_eq(out.res.error_msg,
                     "JSON: argument names too long (over 8192 bytes each or 33554432 in all)");
    ck_assert_int_lt(out.nargs, 5000);
    c.body = bw_str_make(apr_pstrcat(pool, "{\"", key, "x\":{\"", key, "\":1}}", NULL));
    tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_ptr_nonnull(strstr(out.res.error_msg, "argument names too long"));
    apr_pool_destroy(pool);
}
END_TEST

START_TEST(test_xml_bombs_fail_fast)
{
    static const char *const files[] = { "samples/billion-laughs.xml",
                                         "samples/quadratic-blowup.xml" };
    apr_pool_t *pool;
    size_t i;
    apr_pool_create(&pool, NULL);
    for (i = 0; i < 2; i++) {
        tb_outcome_t out;
        tb_case_t c;
        tb_case_init(&c, TB_XML);
        c.body = tb_read_file(pool, tb_data_path(pool, files[i]));
        tb_run(pool, &c, TB_WHOLE, &out);
        ck_assert_int_eq(out.res.error, 1);
        ck_assert_ptr_null(out.res.xml_doc);
        ck_assert_msg(out.seconds < 0.5, "%s took %.2fs", files[i], out.seconds);
    }
    apr_pool_destroy(pool);
}
END_TEST

/* A big document crosses xmlParseChunk's int-sized pieces; XPath over it. */
START_TEST(test_xml_large)
{
    apr_pool_t *pool;
    tb_outcome_t out;
    tb_case_t c;
    const char *t;
    apr_pool_create(&pool, NULL);
    tb_case_init(&c, TB_XML);
    c.body = build(pool, "<r>", "<i n=\"%d\">x</i>", 300000, 1, "</r>");
    c.xpaths = apr_array_make(pool, 1, sizeof(const char *));
    APR_ARRAY_PUSH(c.xpaths, const char *) = "count(//i)";
    t = tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_int_gt((long)c.body.len, 3L << 20);
    ck_assert_int_eq(out.res.error, 0);
    ck_assert_ptr_nonnull(out.res.xml_doc);
    ck_assert_str_eq(t, "");
    ck_assert_msg(out.seconds < SLOW_SECONDS, "took %.2fs", out.seconds);
    apr_pool_destroy(pool);
}
END_TEST

/* Input that makes libxml2 guess UCS-4 and then fail to convert: libxml2
 * reports that without a parser context, which would print to stderr (the
 * Apache error log) for every such request unless silenced. */
START_TEST(test_xml_silent)
{
    static const char doc[] = "\0\0\0< [<\";] ;[&a";
    apr_pool_t *pool;
    tb_outcome_t out;
    tb_case_t c;
    char path[] = "/tmp/bw-test-body-stderr-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    struct stat st;
    apr_pool_create(&pool, NULL);
    tb_case_init(&c, TB_XML);
    c.body = bw_str_n(doc, sizeof(doc) - 1);
    fflush(stderr);
    dup2(fd, 2);
    tb_run(pool, &c, TB_WHOLE, &out);
    tb_run(pool, &c, TB_BYTES, &out);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ck_assert_int_eq(fstat(fd, &st), 0);
    close(fd);
    unlink(path);
    ck_assert_int_eq(out.res.error, 1);
    ck_assert_msg(st.st_size == 0, "libxml2 wrote %ld bytes to stderr", (long)st.st_size);
    apr_pool_destroy(pool);
}
END_TEST

START_TEST(test_api_contract)
{
    apr_pool_t *pool;
    bw_body_result_t res;
    bw_body_parser_t *bp;
    apr_array_header_t *vals;
    char *err = NULL;
    tb_case_t c;
    apr_pool_create(&pool, NULL);
    ck_assert_int_eq(bw_body_feed(NULL, "x", 1), -1);
    ck_assert_int_eq(bw_body_finish(NULL), -1);
    tb_case_init(&c, TB_JSON);
    memset(&res, 0, sizeof(res));
    bp = bw_body_json_create(pool, &c.limits, NULL, &res);
    ck_assert_int_eq(bw_body_feed(bp, "[1]", 3), 0);
    ck_assert_int_eq(bw_body_feed(bp, "", 0), 0);
    ck_assert_int_eq(bw_body_finish(bp), 0);
    ck_assert_int_eq(bw_body_finish(bp), 0);
    ck_assert_int_eq(bw_body_feed(bp, "1", 1), -1);
    ck_assert_str_eq(res.error_msg, "JSON: data fed after the end of the body");
    ck_assert_int_eq(bw_body_finish(bp), -1);
    /* After an error, feeding is refused and the first message stays. */
    memset(&res, 0, sizeof(res));
    bp = bw_body_json_create(pool, &c.limits, NULL, &res);
    ck_assert_int_eq(bw_body_feed(bp, "]", 1), -1);
    ck_assert_int_eq(bw_body_feed(bp, "[", 1), -1);
    ck_assert_int_eq(bw_body_finish(bp), -1);
    ck_assert_ptr_nonnull(strstr(res.error_msg, "unallowed token"));
    vals = apr_array_make(pool, 1, sizeof(bw_kv_t));
    ck_assert_int_eq(bw_body_xml_xpath(pool, NULL, "/*", vals, &err), 0);
    ck_assert_int_eq(vals->nelts, 0);
    apr_pool_destroy(pool);
}
END_TEST

START_TEST(test_urlencoded_large)
{
    apr_pool_t *pool;
    tb_outcome_t out;
    tb_case_t c;
    apr_pool_create(&pool, NULL);
    tb_case_init(&c, TB_URLENCODED);
    c.quiet = 1;
    c.body = build(pool, "", "k%d=v+%%41&", 1000000, 1, "%");
    tb_run(pool, &c, TB_WHOLE, &out);
    ck_assert_int_eq(out.nargs, 1000001);
    ck_assert_int_eq(out.res.urlencoded_error, 1);
    ck_assert_msg(out.seconds < SLOW_SECONDS, "took %.2fs", out.seconds);
    ck_assert_str_eq(last_line(pool, tb_run(pool, &c, TB_WHOLE, &out)), "urlencoded_error");
    apr_pool_destroy(pool);
}
END_TEST

Suite *tb_limits_suite(void)
{
    Suite *s = suite_create("body limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_mp_part_count);
    tcase_add_test(tc, test_mp_header_line_limit);
    tcase_add_test(tc, test_mp_every_split_point);
    tcase_add_test(tc, test_mp_upload_cleanup);
    tcase_add_test(tc, test_mp_linear);
    tcase_add_test(tc, test_json_deep);
    tcase_add_test(tc, test_json_million_keys);
    tcase_add_test(tc, test_json_name_amplification);
    tcase_add_test(tc, test_xml_bombs_fail_fast);
    tcase_add_test(tc, test_xml_large);
    tcase_add_test(tc, test_xml_silent);
    tcase_add_test(tc, test_api_contract);
    tcase_add_test(tc, test_urlencoded_large);
    suite_add_tcase(s, tc);
    return s;
}
