/*
 * Unit tests for what a body is by its content (body_sniff.c) and for the
 * UTF-16/UTF-32 decoder (body_charset.c): sniffing on tables of bodies that
 * must and must not be taken for JSON, XML or a form; the text test on
 * uploads (text, images, declared types); decoding checked against
 * Python-made encodings, fed whole and one byte at a time, and its errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_body.h"

/* a literal with its NULs: SI in initializers, S in expressions */
#define SI(lit) { (lit), sizeof(lit) - 1 }
#define S(lit) bw_str_n(lit, sizeof(lit) - 1)

START_TEST(test_sniff_table)
{
    static const struct { bw_str_t body; const char *want; } cases[] = {
        { SI("{\"q\":\"x\"}"), "JSON" },
        { SI("  \r\n{ \"a\" : 1 }"), "JSON" },
        { SI("\xEF\xBB\xBF{\"a\":1}"), "JSON" },
        { SI("{}"), "JSON" },
        { SI("[1,2]"), "JSON" },
        { SI("[ {\"a\":1} ]"), "JSON" },
        { SI("[\"x\"]"), "JSON" },
        { SI("[]"), "JSON" },
        { SI("{"), "JSON" },                      /* a prefix may stop there */
        { SI("[citation needed] says who"), NULL },
        { SI("{draft} notes"), NULL },
        { SI("<?xml version=\"1.0\"?><a/>"), "XML" },
        { SI("<a><b>1</b></a>"), "XML" },
        { SI("<!DOCTYPE a><a/>"), "XML" },
        { SI("< not a tag"), NULL },
        { SI("a=1&b=2"), "URLENCODED" },
        { SI("q=1'+union+select+2--"), "URLENCODED" },
        { SI("a%5B%5D=1"), "URLENCODED" },
        { SI("items[]=1&items[]=2"), "URLENCODED" },
        { SI("a=1;b=2"), "URLENCODED" },
        { SI("Remember to buy milk = eggs"), NULL },
        { SI("Remember to buy milk. Meeting at 10."), NULL },
        { SI("=value"), NULL },
        { SI("a=1\x01"), NULL },
        { SI("a=1\0"), NULL },
        { SI("\x89PNG\r\n\x1a\n"), NULL },
        { SI(""), NULL },
        { SI("   \n"), NULL },
    };
    size_t i;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = bw_body_sniff(cases[i].body);
        ck_assert_msg((got == NULL) == (cases[i].want == NULL)
                      && (!got || !strcmp(got, cases[i].want)),
                      "case %u: got %s, want %s", (unsigned)i, got ? got : "none",
                      cases[i].want ? cases[i].want : "none");
    }
    ck_assert(bw_body_sniff(bw_str_n(NULL, 0)) == NULL);
}
END_TEST

START_TEST(test_text_like_table)
{
    static const struct { const char *ct; bw_str_t body; int want; } cases[] = {
        { "text/plain", SI("hello <script>"), 1 },
        { "text/plain; charset=utf-8", SI("caf\xC3\xA9"), 1 },
        { "application/octet-stream", SI("1' union select 2 --"), 1 },
        { "", SI("line one\r\nline two\tend"), 1 },
        { "application/json", SI("{\"a\":1}"), 1 },
        { "image/svg+xml", SI("<svg onload=alert(1)>"), 1 },
        { "application/octet-stream", SI("caf\xC3"), 1 },        /* cut inside a character */
        { "image/png", SI("\x89PNG\r\n\x1a\n<script>"), 0 },
        { "text/plain", SI("\x89PNG\r\n\x1a\n"), 0 },             /* the signature wins */
        { "application/octet-stream", SI("GIF89a<script>"), 0 },
        { "application/octet-stream", SI("\xFF\xD8\xFF\xE0"), 0 },
        { "application/pdf", SI("%PDF-1.7\n"), 0 },
        { "application/zip", SI("PK\x03\x04"), 0 },
        { "application/octet-stream", SI("abc\0def"), 0 },
        { "application/octet-stream", SI("abc\x01" "def"), 0 },
        { "application/octet-stream", SI("\xC0\xAF"), 0 },       /* overlong: not UTF-8 */
        { "application/octet-stream", SI("\xFF\xFE<\0s\0"), 0 }, /* UTF-16 is not decoded */
        { "text/plain", SI("a\0b"), 0 },
    };
    size_t i;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(bw_body_text_like(bw_str_make(cases[i].ct), cases[i].body) == cases[i].want,
                      "case %u (%s)", (unsigned)i, cases[i].ct);
    ck_assert(!bw_body_text_like(bw_str_make("text/plain"), bw_str_n(NULL, 0)));
}
END_TEST

/* Decodes in one feed and one byte at a time; both must give want (or
 * both fail when want is NULL). */
static void check_decode(apr_pool_t *p, const char *charset, bw_str_t in, const char *want,
                         const char *name)
{
    int split;
    for (split = 0; split < 2; split++) {
        bw_charset_dec_t *dc = bw_charset_dec_create(p, charset);
        char *acc = apr_palloc(p, in.len * 2 + 8);
        size_t alen = 0, i, step = split ? 1 : (in.len ? in.len : 1), n;
        const char *o, *err = NULL;
        int rc = 0;
        ck_assert_msg(dc != NULL, "%s: no decoder for %s", name, charset ? charset : "(none)");
        for (i = 0; i < in.len && rc == 0; i += step) {
            size_t k = in.len - i < step ? in.len - i : step;
            rc = bw_charset_dec_feed(dc, in.data + i, k, &o, &n, &err);
            if (rc == 0) {
                memcpy(acc + alen, o, n);
                alen += n;
            }
        }
        if (rc == 0 && (rc = bw_charset_dec_finish(dc, &o, &n, &err)) == 0) {
            memcpy(acc + alen, o, n);
            alen += n;
        }
        if (!want) {
            ck_assert_msg(rc < 0 && err, "%s (split %d): decoded, should have failed", name, split);
            continue;
        }
        ck_assert_msg(rc == 0, "%s (split %d): %s", name, split, err ? err : "?");
        ck_assert_msg(alen == strlen(want) && !memcmp(acc, want, alen),
                      "%s (split %d): got %s", name, split, tb_quote(p, bw_str_n(acc, alen)));
    }
}

START_TEST(test_charset_decode)
{
    apr_pool_t *p;
    apr_pool_create(&p, NULL);
    /* '{"q":"é😀"}' as Python's str.encode writes it */
    check_decode(p, "utf-16le",
                 S("{\0\"\0q\0\"\0:\0\"\0\xe9\0=\xd8\x00\xde\"\0}\0"),
                 "{\"q\":\"\xC3\xA9\xF0\x9F\x98\x80\"}", "utf-16le");
    check_decode(p, "utf-16be", S("\0{\0a\0}"), "{a}", "utf-16be");
    check_decode(p, "utf-16", S("\xff\xfe{\0a\0}\0"), "{a}", "utf-16 with LE mark");
    check_decode(p, "utf-16", S("\xfe\xff\0{\0a\0}"), "{a}", "utf-16 with BE mark");
    check_decode(p, "utf-16", S("\0{\0a\0}"), "{a}", "utf-16 without mark: BE");
    check_decode(p, "utf-32le", S("{\0\0\0a\0\0\0"), "{a", "utf-32le");
    check_decode(p, "utf-32", S("\xff\xfe\0\0{\0\0\0"), "{", "utf-32 with LE mark");
    check_decode(p, "utf-32be", S("\0\x01\xF6\x00"), "\xF0\x9F\x98\x80", "utf-32be");
    /* no charset: a mark decides, anything else passes through untouched */
    check_decode(p, NULL, S("\xff\xfe" "a\0=\0" "1\0"), "a=1", "mark only, LE");
    check_decode(p, NULL, S("\xfe\xff\0a"), "a", "mark only, BE");
    check_decode(p, NULL, S("a=1&b=\xC3\xA9"), "a=1&b=\xC3\xA9", "no mark");
    check_decode(p, NULL, S("ab"), "ab", "shorter than a mark");
    check_decode(p, NULL, S(""), "", "empty");
    check_decode(p, "utf-16le", S("a\0\xFF\xFE" "b\0"), "a\xEF\xBB\xBF" "b", "U+FEFF inside stays");
    /* errors */
    check_decode(p, "utf-16le", S("a\0b"), NULL, "odd length");
    check_decode(p, "utf-16le", S("\x00\xdc" "a\0"), NULL, "lone low surrogate");
    check_decode(p, "utf-16le", S("\x00\xd8" "a\0"), NULL, "high surrogate then a letter");
    check_decode(p, "utf-16le", S("\x00\xd8"), NULL, "high surrogate at the end");
    check_decode(p, "utf-32le", S("\0\0\x11\0"), NULL, "past U+10FFFF");
    check_decode(p, "utf-32be", S("\0\0\xd8\0"), NULL, "surrogate in UTF-32");
    /* ASCII-compatible and unknown charsets need no decoder */
    ck_assert(bw_charset_dec_create(p, "utf-8") == NULL);
    ck_assert(bw_charset_dec_create(p, "iso-8859-1") == NULL);
    ck_assert(bw_charset_dec_create(p, "x-unknown") == NULL);
    apr_pool_destroy(p);
}
END_TEST

START_TEST(test_charset_param)
{
    apr_pool_t *p;
    apr_pool_create(&p, NULL);
    ck_assert_str_eq(bw_body_charset_param(p, "application/json; charset=UTF-16LE"), "utf-16le");
    ck_assert_str_eq(bw_body_charset_param(p, "application/json;charset=\"utf-16\""), "utf-16");
    ck_assert_str_eq(bw_body_charset_param(p, "text/plain; format=flowed; Charset = utf-8"), "utf-8");
    ck_assert(bw_body_charset_param(p, "application/json") == NULL);
    ck_assert(bw_body_charset_param(p, "application/json; charsetx=utf-16") == NULL);
    ck_assert(bw_body_charset_param(p, NULL) == NULL);
    apr_pool_destroy(p);
}
END_TEST

Suite *tb_sniff_suite(void)
{
    Suite *s = suite_create("body content");
    TCase *tc = tcase_create("sniff and charsets");
    tcase_add_test(tc, test_sniff_table);
    tcase_add_test(tc, test_text_like_table);
    tcase_add_test(tc, test_charset_decode);
    tcase_add_test(tc, test_charset_param);
    suite_add_tcase(s, tc);
    return s;
}
