/*
 * Body-layer tests of the JSON parser (apache2/body/body_json_parse.c)
 * against yajl 2.1 itself (tests/unit/json_oracle.h): the same events and
 * the same outcome, message included, for
 *   - documents written to hit each rule and each of yajl's quirks, fed
 *     whole, byte by byte and cut in two at every point;
 *   - 40,000 documents made at random from JSON's pieces and from bytes
 *     JSON refuses, fed whole and in random pieces;
 * and the cost of long tokens cut into many chunks stays linear.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "json_oracle.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

/* The transcripts with these pieces; a failure shows both. */
static void same(const char *what, const unsigned char *in, size_t n, const size_t *pieces,
                 size_t npieces)
{
    jo_text_t a = { 0 }, b = { 0 };
    apr_pool_t *p;
    int eq;
    apr_pool_create(&p, pool);
    eq = jo_compare(p, in, n, pieces, npieces, &a, &b);
    if (!eq)
        ck_abort_msg("%s (%zu bytes, first piece %zu): yajl\n%s\nbulwark\n%s", what, n,
                     npieces ? pieces[0] : n, a.data, b.data);
    apr_pool_destroy(p);
    free(a.data);
    free(b.data);
}

/* whole, byte by byte, and in two at every point */
static void every_split(const char *in, size_t n)
{
    size_t one = 1, two[2] = { 0, 0 }, i;
    same(in, (const unsigned char *)in, n, NULL, 0);
    same(in, (const unsigned char *)in, n, &one, 1);
    for (i = 1; i < n; i++) {
        two[0] = i;
        same(in, (const unsigned char *)in, n, two, 2);
    }
}

#define S(lit) { lit, sizeof(lit) - 1 }
static const struct {
    const char *text;
    size_t len;
} cases[] = {
    /* valid documents */
    S("{}"), S("[]"), S("{\"a\":1}"), S("{\"a\":{\"b\":[1,2,{\"c\":null}]}}"),
    S(" \t\r\n\v\f[true , false,null ]\v"), S("\"top\""), S("12"), S("-0"), S("0.5e+10"),
    S("-12.25E-3"), S("1e5"), S("[0,-1,2.0,3e0,4E+1,5e-1]"), S("{\"\":\"\"}"),
    S("[\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\"]"), S("[\"\\u0041\\u00e9\\u20AC\"]"),
    S("[\"\\ud83d\\ude00\"]"), S("[\"\\uD83D\\uDE00x\"]"), S("[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"]"),
    S("{\"k\\u0000\":\"v\\u0000w\"}"), S("[\"\x7f\"]"),
    /* yajl's quirks */
    S("[\"\\ud83dx\"]"), S("[\"\\ud83d\"]"), S("[\"\\ud83d\\n\"]"), S("[\"\\ud83d\\u0041\"]"),
    S("[\"\\ude00\"]"), S("[\"\xc0\xaf\"]"), S("[\"\xed\xa0\x80\"]"), S("[\"\xf7\xbf\xbf\xbf\"]"),
    S("{} \"unterminated"), S("1 2"), S("{} x"), S("{} tr"), S("{}{}"), S("01"), S("[01]"),
    S("{\"a\":1}   "), S(""), S("   "),
    /* errors */
    S("tru"), S("nul"), S("fals"), S("trUe"), S("-"), S("-a"), S("1."), S("1.e"), S("1e"),
    S("1e+"), S("[1.]"), S("[-]"), S(".5"), S("+1"), S("{"), S("["), S("{\"a\""),
    S("{\"a\":"), S("{\"a\":1"), S("{\"a\":1,"), S("[1,"), S("[1,]"), S("{\"a\":1,}"),
    S("{1:2}"), S("{\"a\" 1}"), S("{\"a\":1 \"b\":2}"), S("[1 2]"), S("[1:2]"), S("]"),
    S("}"), S(","), S(":"), S("{,}"), S("[,]"), S("x"), S("/* c */ 1"), S("// c\n1"),
    S("\"a\x01\""), S("\"a\\x\""), S("\"\\u12g4\""), S("\"\\u12\""), S("\"\xff\""),
    S("\"\x80\""), S("\"\xc3\""), S("\"\xc3(\""), S("\"\xe2\x82\""), S("\"\xf0\x9f\x98\""),
    S("\"\xf8\x88\x80\x80\x80\""), S("\"abc"), S("\"abc\\"), S("[\"a\"\"b\"]"),
    S("{\"a\":[}"), S("[{]"), S("{\"a\"::1}"), S("[true false]"), S("nan"), S("[Infinity]"),
    S("\xef\xbb\xbf{}"), S("{\"a\":1}\x00"), S("[\"a\",\n\x01]"),
};
#undef S

START_TEST(test_written_cases)
{
    size_t i;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        every_split(cases[i].text, cases[i].len);
}
END_TEST

/* xorshift: the same documents on every run */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (uint32_t)(rnd_state % n);
}

/* A document of random pieces: mostly JSON's, some that break it. */
static size_t make_doc(unsigned char *out, size_t cap)
{
    static const char *const bits[] = {
        "{", "}", "[", "]", ",", ":", "\"", "\"k\":", "\"v\"", "\\", "\\u", "\\ud83d",
        "\\ude00", "\\u0000", "\\n", "\\\"", "0", "1", "-", ".", "e", "E", "+", "12.5",
        "-3e-2", "true", "false", "null", "tr", " ", "\n", "\v", "\t", "x", "/",
        "\xc3\xa9", "\xc3", "\xa9", "\xe2\x82\xac", "\xe2\x82", "\xf0\x9f\x98\x80", "\xff",
        "\x01", "\"\xc3\xa9\"", "{\"a\":[1,{\"b\":null}]}", "[\"s\",2,true]", "\"\\u00e9\""
    };
    size_t n = 0, k = 1 + rnd(24), i;
    for (i = 0; i < k; i++) {
        const char *b = bits[rnd(sizeof(bits) / sizeof(bits[0]))];
        size_t len = strlen(b);
        if (n + len > cap)
            break;
        memcpy(out + n, b, len);
        n += len;
    }
    /* now and then one byte changed */
    if (n && rnd(4) == 0)
        out[rnd((uint32_t)n)] = (unsigned char)rnd(256);
    return n;
}

START_TEST(test_random_documents)
{
    unsigned char doc[512];
    int i;
    for (i = 0; i < 40000; i++) {
        size_t n = make_doc(doc, sizeof(doc));
        size_t pieces[3] = { 1 + rnd(7), 1 + rnd(3), 1 + rnd(40) };
        same("random", doc, n, NULL, 0);
        same("random", doc, n, pieces, 3);
    }
}
END_TEST

static int count_string(void *ctx, const char *s, size_t n)
{
    (void)s;
    *(size_t *)ctx += n;
    return 1;
}
static int none(void *ctx) { (void)ctx; return 1; }
static int none_b(void *ctx, int b) { (void)ctx; (void)b; return 1; }
static int count_number(void *ctx, const char *s, size_t n) { return count_string(ctx, s, n); }

/* A 4 MB string and a 4 MB number, each cut into 4,000 chunks: read once
 * (a parser that reads a cut token again from its start for every chunk
 * reads 8 GB here and runs past the test's timeout). */
START_TEST(test_long_tokens_in_chunks)
{
    static const bw_jp_events_t ev = {
        none, none_b, count_number, count_string, none, count_string, none, none, none
    };
    size_t n = 4u << 20, chunk = 1024, seen = 0, off, i;
    char *doc = malloc(n + 4);
    int kind;
    ck_assert_ptr_nonnull(doc);
    for (kind = 0; kind < 2; kind++) {
        bw_jp_t *jp = bw_jp_create(pool, &ev, &seen);
        doc[0] = kind ? '1' : '"';
        for (i = 1; i < n - 1; i++)
            doc[i] = kind ? '7' : (char)('a' + i % 26);
        doc[n - 1] = kind ? '8' : '"';
        seen = 0;
        for (off = 0; off < n; off += chunk)
            ck_assert_int_eq(bw_jp_feed(jp, doc + off, n - off < chunk ? n - off : chunk), 0);
        ck_assert_int_eq(bw_jp_finish(jp), 0);
        ck_assert_uint_eq(seen, kind ? n : n - 2);
    }
    free(doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("json parse");
    TCase *tc = tcase_create("against yajl");
    SRunner *sr;
    int failed;
    apr_initialize();
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_written_cases);
    tcase_add_test(tc, test_random_documents);
    tcase_add_test(tc, test_long_tokens_in_chunks);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_terminate();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
