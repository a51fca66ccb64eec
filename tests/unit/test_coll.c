/*
 * Base-layer tests: keyed collections (case-insensitive keys that keep
 * their first spelling, insertion order, unset and set again, growth,
 * images, kept strings), regex selections kept up to date against a
 * plain PCRE2 run over the order, literal regexes against PCRE2, numbers
 * and digests.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <apr_general.h>
#include "base/bw_coll.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

static const char *val(const bw_coll_t *c, const char *name)
{
    const bw_kv_t *kv = bw_coll_get(c, bw_str_make(name));
    return kv ? bw_str_pdup(pool, kv->value) : NULL;
}

/* The set names in order, joined with ','. */
static const char *names(const bw_coll_t *c)
{
    char *out = "";
    int i;
    for (i = 0; i < c->order->nelts; i++) {
        const bw_kv_t *kv = ((const bw_kv_t **)c->order->elts)[i];
        if (kv->name.data)
            out = apr_pstrcat(pool, out, *out ? "," : "", bw_str_pdup(pool, kv->name), NULL);
    }
    return out;
}

START_TEST(test_set_get)
{
    bw_coll_t *c = bw_coll_create(pool, "TX");
    bw_coll_set(pool, c, bw_str_make("Score"), bw_str_make("1"));
    bw_coll_set(pool, c, bw_str_make("other"), bw_str_make("x"));
    bw_coll_set(pool, c, bw_str_make("SCORE"), bw_str_make("2"));
    ck_assert_str_eq(val(c, "score"), "2");
    ck_assert_str_eq(names(c), "Score,other");     /* the first spelling stays */
    ck_assert_ptr_null(val(c, "scor"));
    ck_assert_ptr_null(val(c, "scoree"));
    bw_coll_unset(c, bw_str_make("sCoRe"));
    ck_assert_ptr_null(val(c, "score"));
    ck_assert_str_eq(names(c), "other");
    bw_coll_set(pool, c, bw_str_make("score"), bw_str_make("3"));
    ck_assert_str_eq(names(c), "other,score");     /* set again: at the end */
    ck_assert_str_eq(val(c, "SCORE"), "3");
    bw_coll_set(pool, c, bw_str_make(""), bw_str_make("empty"));
    ck_assert_str_eq(val(c, ""), "empty");
}
END_TEST

START_TEST(test_binary_names)
{
    bw_coll_t *c = bw_coll_create(pool, "TX");
    bw_coll_set(pool, c, bw_str_n("a\0b", 3), bw_str_make("1"));
    bw_coll_set(pool, c, bw_str_n("a\0c", 3), bw_str_make("2"));
    ck_assert_str_eq(bw_str_pdup(pool, bw_coll_get(c, bw_str_n("A\0B", 3))->value), "1");
    ck_assert_str_eq(bw_str_pdup(pool, bw_coll_get(c, bw_str_n("a\0c", 3))->value), "2");
    ck_assert_ptr_null(bw_coll_get(c, bw_str_n("a", 1)));
}
END_TEST

/* Many keys, unset and set again in turns: the table grows and keeps
 * tombstones, and still finds everything a plain list would. */
START_TEST(test_growth)
{
    bw_coll_t *c = bw_coll_create(pool, "TX");
    int i, present[3000];
    char name[32];
    memset(present, 0, sizeof(present));
    for (i = 0; i < 20000; i++) {
        int k = (int)((i * 7919u) % 3000);
        snprintf(name, sizeof name, (i & 1) ? "Key_%d" : "KEY_%d", k);
        if (i % 3 == 2) {
            bw_coll_unset(c, bw_str_make(name));
            present[k] = 0;
        } else {
            bw_coll_set(pool, c, bw_str_make(name), bw_str_make(apr_itoa(pool, i)));
            present[k] = i + 1;
        }
    }
    for (i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "key_%d", i);
        if (present[i])
            ck_assert_str_eq(val(c, name), apr_itoa(pool, present[i] - 1));
        else
            ck_assert_ptr_null(val(c, name));
    }
}
END_TEST

START_TEST(test_put_keeps)
{
    bw_coll_t *c = bw_coll_create(pool, "TX");
    static const char name[] = "kept", value[] = "constant";
    char buf[8] = "copied";
    bw_key_t k = bw_key_make(bw_str_make(name));
    const bw_kv_t *kv = bw_coll_put(pool, c, &k, bw_str_make(value),
                                    BW_COLL_KEEP_NAME | BW_COLL_KEEP_VALUE);
    ck_assert_ptr_eq(kv->name.data, name);
    ck_assert_ptr_eq(kv->value.data, value);
    kv = bw_coll_put(pool, c, &k, bw_str_make(buf), 0);
    buf[0] = 'X';
    ck_assert_str_eq(kv->value.data, "copied");
    ck_assert_uint_eq(bw_key_hash(bw_str_make("MiXeD_Case")), bw_key_hash(bw_str_make("mixed_case")));
    ck_assert_ptr_eq(bw_coll_find(c, &k), kv);
}
END_TEST

/* bw_coll_entry: the entry of a key, made empty when missing, the name
 * copied or kept as bw_coll_put would; a value written through it is what
 * a lookup then reads, in the order the keys came. */
START_TEST(test_entry)
{
    bw_coll_t *c = bw_coll_create(pool, "TX");
    static const char kept[] = "Kept_Name";
    char buf[16] = "copied_name";
    bw_key_t k1 = bw_key_make(bw_str_make(kept)), k2 = bw_key_make(bw_str_make(buf));
    bw_key_t k1u = bw_key_make(bw_str_make("KEPT_NAME"));
    int made = -1, i;
    bw_kv_t *kv = bw_coll_entry(pool, c, &k1, BW_COLL_KEEP_NAME, &made);
    ck_assert_int_eq(made, 1);
    ck_assert_ptr_eq(kv->name.data, kept);
    ck_assert_uint_eq(kv->value.len, 0);
    ck_assert_str_eq(val(c, "kept_name"), "");
    kv->value = bw_str_make("1");
    ck_assert_ptr_eq(bw_coll_entry(pool, c, &k1u, 0, &made), kv);
    ck_assert_int_eq(made, 0);
    ck_assert_str_eq(val(c, "KEPT_name"), "1");
    kv = bw_coll_entry(pool, c, &k2, 0, &made);
    ck_assert_int_eq(made, 1);
    buf[0] = 'X';
    ck_assert_str_eq(kv->name.data, "copied_name");
    ck_assert_str_eq(names(c), "Kept_Name,copied_name");
    /* through growth, and into the place of an unset key */
    for (i = 0; i < 500; i++) {
        char name[32];
        bw_key_t k;
        snprintf(name, sizeof name, "n%d", i % 250);
        k = bw_key_make(bw_str_make(apr_pstrdup(pool, name)));
        kv = bw_coll_entry(pool, c, &k, BW_COLL_KEEP_NAME, &made);
        ck_assert_int_eq(made, i < 250);
        kv->value = bw_str_make(apr_itoa(pool, i));
    }
    ck_assert_str_eq(val(c, "n7"), "257");
    bw_coll_unset(c, bw_str_make("n7"));
    ck_assert_ptr_null(val(c, "n7"));
    kv = bw_coll_entry(pool, c, &(bw_key_t){ bw_str_make("n7"), bw_key_hash(bw_str_make("n7")), NULL },
                       BW_COLL_KEEP_NAME, &made);
    ck_assert_int_eq(made, 1);
    ck_assert_str_eq(val(c, "N7"), "");
}
END_TEST

/* Names that differ in a few bytes (as macro-built ones do) spread over a
 * table's low bits as random ones would: 4096 names in 8192 places fill
 * about 8192 (1 - e^-0.5) = 3223 of them. */
START_TEST(test_hash_spread)
{
    static unsigned char seen[8192];
    int i, used = 0, fmt;
    static const char *const fmts[] = { "paramcounter_ARGS_NAMES:json.items.%d.name",
                                         "tx.header_name_%d", "k%d", "%d_ARGS:a" };
    for (fmt = 0; fmt < 4; fmt++) {
        memset(seen, 0, sizeof(seen));
        used = 0;
        for (i = 0; i < 4096; i++) {
            char name[64];
            uint32_t h;
            snprintf(name, sizeof name, fmts[fmt], i);
            h = bw_key_hash(bw_str_make(name)) & 8191;
            used += !seen[h];
            seen[h] = 1;
        }
        ck_assert_msg(used > 3100 && used < 3350, "%s: %d places used", fmts[fmt], used);
    }
}
END_TEST

/* The hash folds ASCII letters and nothing else, at every place of a
 * name of every length. */
START_TEST(test_hash_case)
{
    char a[40], b[40];
    int c, len, at;
    for (len = 1; len < 40; len++)
        for (c = 0; c < 256; c++) {
            at = (c * 7) % len;
            memset(a, 'q', (size_t)len);
            memcpy(b, a, (size_t)len);
            a[at] = (char)c;
            b[at] = (char)((c >= 'A' && c <= 'Z') ? c + 32 : c);
            ck_assert_uint_eq(bw_key_hash(bw_str_n(a, (size_t)len)), bw_key_hash(bw_str_n(b, (size_t)len)));
            if (c >= 0xc0 && c <= 0xda) {   /* no letters outside ASCII */
                b[at] = (char)(c + 32);
                ck_assert_uint_ne(bw_key_hash(bw_str_n(a, (size_t)len)),
                                  bw_key_hash(bw_str_n(b, (size_t)len)));
            }
        }
    ck_assert_uint_ne(bw_key_hash(bw_str_n("a", 1)), bw_key_hash(bw_str_n("a\0", 2)));
}
END_TEST

/* Names compared byte for byte but for ASCII case, at every place of a
 * name of every length: a key made with another name's hash lands on
 * that name's entry, and is found only when the names are equal but for
 * case (the comparison, not the hash, says so). */
START_TEST(test_name_compare)
{
    char a[40], b[40];
    int len, at, c;
    for (len = 1; len < 40; len++) {
        bw_coll_t *t = bw_coll_create(pool, "TX");
        bw_key_t ka, k;
        const bw_kv_t *kv;
        memset(a, 'q', (size_t)len);
        ka = bw_key_make(bw_str_n(a, (size_t)len));
        kv = bw_coll_put(pool, t, &ka, bw_str_make("v"), 0);
        for (at = 0; at < len; at++)
            for (c = 0; c < 256; c++) {
                memcpy(b, a, (size_t)len);
                b[at] = (char)c;
                k = bw_key_make(bw_str_n(b, (size_t)len));
                k.hash = ka.hash;
                if (c == 'q' || c == 'Q')
                    ck_assert_ptr_eq(bw_coll_find(t, &k), kv);
                else
                    ck_assert_msg(bw_coll_find(t, &k) == NULL, "len %d, byte %d at %d", len, c, at);
            }
        k = bw_key_make(bw_str_n(a, (size_t)len - 1));   /* a prefix */
        k.hash = ka.hash;
        ck_assert_ptr_null(bw_coll_find(t, &k));
    }
}
END_TEST

START_TEST(test_image)
{
    bw_coll_t *src = bw_coll_create(pool, "TX"), *a = bw_coll_create(pool, "TX");
    bw_coll_image_t *im;
    int i;
    for (i = 0; i < 40; i++)
        bw_coll_set(pool, src, bw_str_make(apr_psprintf(pool, "Name_%d", i)), bw_str_make("v"));
    bw_coll_unset(src, bw_str_make("name_3"));
    im = bw_coll_image(pool, src, 100);
    ck_assert_int_eq(bw_coll_image_size(im), 39);
    bw_coll_set(pool, a, bw_str_make("gone"), bw_str_make("1"));
    bw_coll_load_image(pool, a, im);
    ck_assert_ptr_null(val(a, "gone"));
    ck_assert_ptr_null(val(a, "name_3"));
    ck_assert_str_eq(val(a, "NAME_39"), "v");
    bw_coll_set(pool, a, bw_str_make("name_0"), bw_str_make("changed"));
    bw_coll_set(pool, a, bw_str_make("name_3"), bw_str_make("back"));
    ck_assert_str_eq(val(a, "name_0"), "changed");
    /* a second load starts from the image again: nothing was shared */
    bw_coll_load_image(pool, a, im);
    ck_assert_str_eq(val(a, "name_0"), "v");
    ck_assert_ptr_null(val(a, "name_3"));
    ck_assert_str_eq(names(a), names(src));
}
END_TEST

/* ---- selections -------------------------------------------------------- */

static const char *const sel_patterns[] = {
    "^header_name_", "^MSC_", "score", "_pl[12]$", "(?:a|b)_x", NULL
};

/* The selection of re in c against PCRE2 over the order. */
static void check_selection(bw_coll_t *c, const pcre2_code *re, const bw_relit_t *lit)
{
    const bw_coll_sel_t *s = bw_coll_select(pool, c, re, lit, NULL);
    bw_kv_t **ord = (bw_kv_t **)c->order->elts;
    int i, k = 0;
    for (i = 0; i < c->order->nelts; i++) {
        int want = ord[i]->name.data && bw_regex_match(re, ord[i]->name, NULL) > 0;
        while (k < s->n && !ord[s->idx[k]]->name.data)
            k++;
        if (want) {
            ck_assert_int_lt(k, s->n);
            ck_assert_int_eq(s->idx[k], i);
            k++;
        }
    }
    while (k < s->n && !ord[s->idx[k]]->name.data)
        k++;
    ck_assert_int_eq(k, s->n);
}

START_TEST(test_selections)
{
    static const char *const keys[] = {
        "header_name_host", "anomaly_score_pl1", "MSC_PCRE_LIMITS_EXCEEDED", "score",
        "Header_Name_Cookie", "a_x", "b_x", "c_x", "x_pl2", "msc", "inbound_score",
        "header_name_", NULL
    };
    bw_coll_t *src = bw_coll_create(pool, "TX"), *c = bw_coll_create(pool, "TX");
    const pcre2_code *re[8];
    const bw_relit_t *lit[8];
    bw_coll_image_t *im;
    bw_key_t fx = bw_key_make(bw_str_make("header_name_folded"));
    char *err = NULL;
    int n, i, r;
    for (n = 0; sel_patterns[n]; n++) {
        re[n] = bw_regex_compile(pool, sel_patterns[n], 1, &err);
        lit[n] = bw_relit_compile(pool, sel_patterns[n], 1);
    }
    ck_assert_ptr_nonnull(lit[0]);
    ck_assert_ptr_null(lit[4]);
    for (i = 0; i < 6; i++)
        bw_coll_set(pool, src, bw_str_make(keys[i]), bw_str_make("1"));
    im = bw_coll_image(pool, src, 10);
    for (r = 0; r < n - 1; r++)       /* the last one only at run time */
        bw_coll_image_select(pool, im, re[r], lit[r], NULL);
    bw_coll_image_key(pool, im, &fx, NULL);
    bw_coll_load_image(pool, c, im);
    for (r = 0; r < n; r++)
        check_selection(c, re[r], lit[r]);
    /* grow, unset, set again, a key that knows its answers: each
     * selection only looks at what is new */
    for (i = 6; keys[i]; i++) {
        bw_coll_set(pool, c, bw_str_make(keys[i]), bw_str_make("2"));
        if (i % 2)
            bw_coll_unset(c, bw_str_make(keys[i - 5]));
        if (i == 8)
            bw_coll_put(pool, c, &fx, bw_str_make("f"), BW_COLL_KEEP_NAME | BW_COLL_KEEP_VALUE);
        for (r = 0; r < n; r++)
            check_selection(c, re[r], lit[r]);
    }
    bw_coll_set(pool, c, bw_str_make(keys[1]), bw_str_make("again"));
    for (r = 0; r < n; r++)
        check_selection(c, re[r], lit[r]);
}
END_TEST

/* ---- literal regexes ------------------------------------------------------ */

/* Patterns with a literal form (1) or without (0); every one is checked
 * against PCRE2 over the subjects below, caseless and not. */
static const struct { const char *re; int literal; } relits[] = {
    { "^header_name_", 1 }, { "^MSC_", 1 }, { "LEAKAGE\\/ERRORS", 1 },
    { "AVAILABILITY\\/APP_NOT_AVAIL", 1 }, { "MULTIPART_HEADERS_CONTENT_TYPES_*", 1 },
    { "paramcounter_.*", 1 }, { ".*rfi_parameter_.*", 1 }, { "abc$", 1 }, { "^abc$", 1 },
    { "^$", 1 }, { "", 1 }, { "a\\.b", 1 }, { "a b#c", 1 }, { "x?abc", 1 }, { "abc?", 1 },
    { "a.c", 0 }, { "^a*b", 0 }, { "ab*c", 0 }, { "ab*$", 0 }, { "a+", 0 }, { "a|b", 0 },
    { "[ab]", 0 }, { "(ab)", 0 }, { "a{2}", 0 }, { "\\d", 0 }, { "\\x41", 0 }, { "a*?", 0 },
    { "a$b", 0 }, { "\\Qa\\E", 0 }, { "a^", 0 }, { "(a)\\1", 0 }, { "\\w+", 0 },
    /* unanchored, found by a byte case leaves alone: at the start, the end,
     * alone, a digit, punctuation after letters */
    { "a_b", 1 }, { "_x", 1 }, { "x_", 1 }, { "_", 1 }, { "a1b", 1 }, { "12", 1 },
    { "ab\\.b_", 1 }, { "A_b_", 1 },
    { NULL, 0 }
};

static const char *const subjects[] = {
    "", "abc", "ABC", "xabc", "abcx", "ab", "a.b", "aXb", "a b#c", "header_name_host",
    "HEADER_NAME_", "header_name", "msc_pcre", "tx_msc_", "LEAKAGE/ERRORS-SQL", "leakage/errors",
    "multipart_headers_content_types", "MULTIPART_HEADERS_CONTENT_TYPE", "x_paramcounter_1",
    "rfi_parameter_", "abc\n", "abc\nabc", "a\nc", "aaab", "\xc3\xa4" "abc", "abc\xc4",
    "available", "aa", "b", "ABc", "xXABCabc", "x_y_paramcounter_", "PARAMCOUNTER_", "paramcounter",
    "a_b_c_rfi_parameter", "__RFI_parameter__", "a_", "_a_b", "A_B", "x__x", "a1b1a1B", "112",
    "ab.b.ab.b_", "AB.B_", "a_b_", NULL
};

/* Subjects made of the bytes the patterns above are made of, every one
 * up to length 5 of a small alphabet, for the literal forms' searches. */
static void each_subject(char *buf, int len, int at, const bw_relit_t *l, const pcre2_code *re,
                        const char *pat, int caseless)
{
    static const char alpha[] = "aAb_x1.";
    int i;
    if (at == len) {
        bw_str_t s = bw_str_n(buf, (size_t)len);
        ck_assert_msg(bw_relit_match(l, s) == (bw_regex_match(re, s, NULL) > 0),
                      "/%s/ (caseless %d) on \"%.*s\"", pat, caseless, len, buf);
        return;
    }
    for (i = 0; alpha[i]; i++) {
        buf[at] = alpha[i];
        each_subject(buf, len, at + 1, l, re, pat, caseless);
    }
}

START_TEST(test_relit)
{
    int i, j, caseless;
    char *err = NULL;
    for (i = 0; relits[i].re; i++)
        for (caseless = 0; caseless <= 1; caseless++) {
            const bw_relit_t *l = bw_relit_compile(pool, relits[i].re, caseless);
            const pcre2_code *re = bw_regex_compile(pool, relits[i].re, caseless, &err);
            ck_assert_msg(re != NULL, "%s", err);
            ck_assert_msg((l != NULL) == relits[i].literal, "/%s/: literal form %s", relits[i].re,
                          l ? "found" : "missing");
            for (j = 0; l && subjects[j]; j++) {
                bw_str_t s = bw_str_make(subjects[j]);
                ck_assert_msg(bw_relit_match(l, s) == (bw_regex_match(re, s, NULL) > 0),
                              "/%s/ (caseless %d) on \"%s\"", relits[i].re, caseless, subjects[j]);
            }
            for (j = 0; l && j <= 5; j++) {
                char buf[8];
                each_subject(buf, j, 0, l, re, relits[i].re, caseless);
            }
        }
}
END_TEST

/* A literal of eight bytes and more is compared eight at a time, its tail
 * overlapping: every byte of it, at every place (inside the words, in the
 * overlap), swapped for each of the 256, is told apart as PCRE2 does. */
START_TEST(test_relit_words)
{
    static const char *const pats[] = { "paramcounter_abcdefghij", "^Header_Name_xy",
                                        "multipart_headers_content_types$", "^abcdefgh$", NULL };
    int i, caseless, at, c;
    char *err = NULL;
    for (i = 0; pats[i]; i++)
        for (caseless = 0; caseless <= 1; caseless++) {
            const bw_relit_t *l = bw_relit_compile(pool, pats[i], caseless);
            const pcre2_code *re = bw_regex_compile(pool, pats[i], caseless, &err);
            const char *lit;
            size_t n;
            char buf[64];
            ck_assert_ptr_nonnull(l);
            ck_assert_ptr_nonnull(re);
            lit = pats[i] + (pats[i][0] == '^');
            n = strlen(lit) - (lit[strlen(lit) - 1] == '$');
            for (at = 0; at < (int)n + 2; at++)
                for (c = 0; c < 256; c++) {
                    bw_str_t s;
                    /* "x" + the literal + "y", byte `at` of it replaced */
                    buf[0] = 'x';
                    memcpy(buf + 1, lit, n);
                    buf[n + 1] = 'y';
                    buf[at] = (char)c;
                    /* anchored patterns are tried on the literal alone too */
                    s = pats[i][0] == '^' || lit[n] == '$' ? bw_str_n(buf + 1, n) : bw_str_n(buf, n + 2);
                    if (at == 0 && s.data == buf + 1)
                        continue;
                    ck_assert_msg(bw_relit_match(l, s) == (bw_regex_match(re, s, NULL) > 0),
                                  "/%s/ (caseless %d), byte %d = 0x%02x", pats[i], caseless, at, c);
                }
        }
}
END_TEST

/* ---- numbers and digests ----------------------------------------------- */

START_TEST(test_numbers)
{
    static const long v[] = { 0, 1, -1, 9, 10, 99, 100, -100, 123456789, -987654321,
                              100000000000L, LONG_MAX, LONG_MIN + 1 };
    size_t i;
    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        bw_str_t s = bw_num_str(pool, v[i]);
        ck_assert_str_eq(s.data, apr_ltoa(pool, v[i]));
        ck_assert_uint_eq(s.len, strlen(s.data));
    }
    ck_assert_int_eq(bw_str_to_num(bw_str_make("  -42abc")), -42);
    ck_assert_int_eq(bw_str_to_num(bw_str_make("+7")), 7);
    ck_assert_int_eq(bw_str_to_num(bw_str_make("x7")), 0);
}
END_TEST

/* The first place needle starts in hay, found the plain way. */
static const char *naive_find(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
    size_t i;
    for (i = 0; i + nlen <= hlen; i++)
        if (!memcmp(hay + i, needle, nlen))
            return hay + i;
    return NULL;
}

/* n random haystacks of up to maxh - 1 bytes and needles of up to 12, over
 * the first na bytes of alpha; half of the needles taken from the
 * haystack. */
static void random_memmem(unsigned long *seed, int n, size_t maxh, const char *alpha, int na)
{
    char hay[600], needle[40];
    int k;
    for (k = 0; k < n; k++) {
        size_t hl, nl, j;
        *seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
        hl = (*seed >> 33) % maxh;
        nl = 1 + (*seed >> 20) % 12;
        for (j = 0; j < hl; j++) {
            *seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
            hay[j] = alpha[(*seed >> 40) % (unsigned long)na];
        }
        if (hl >= nl && (*seed >> 50) % 2) {
            size_t at = (*seed >> 13) % (hl - nl + 1);
            memcpy(needle, hay + at, nl);
        } else {
            for (j = 0; j < nl; j++) {
                *seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
                needle[j] = alpha[(*seed >> 40) % (unsigned long)na];
            }
        }
        ck_assert_ptr_eq(bw_memmem(hay, hl, needle, nl), naive_find(hay, hl, needle, nl));
    }
}

/* bw_memmem against the plain search: every haystack of up to 8 bytes and
 * needle of up to 4 over three bytes (NUL among them: binary safe), random
 * ones of up to 600 bytes, and of up to 80 around the length where
 * bw_memmem's own loop ends and its last block overlaps the one before,
 * over bytes above 0x7f too (compared unsigned). */
START_TEST(test_memmem)
{
    static const char abc[3] = { 'a', 'b', '\0' }, ab8[3] = { 'a', 'b', '\xff' };
    char hay[8], needle[4];
    size_t hl, nl, i;
    unsigned long hc, nc, hn, nn, seed = 12345;
    for (hl = 0; hl <= 8; hl++)
        for (nl = 0; nl <= 4; nl++) {
            for (hn = 1, i = 0; i < hl; i++)
                hn *= 3;
            for (nn = 1, i = 0; i < nl; i++)
                nn *= 3;
            for (hc = 0; hc < hn; hc++)
                for (nc = 0; nc < nn; nc++) {
                    unsigned long x = hc, y = nc;
                    for (i = 0; i < hl; i++, x /= 3)
                        hay[i] = abc[x % 3];
                    for (i = 0; i < nl; i++, y /= 3)
                        needle[i] = abc[y % 3];
                    ck_assert_ptr_eq(bw_memmem(hay, hl, needle, nl), naive_find(hay, hl, needle, nl));
                }
        }
    random_memmem(&seed, 20000, 600, abc, 2);
    random_memmem(&seed, 40000, 81, ab8, 3);
}
END_TEST

START_TEST(test_sha1_hex)
{
    char hex[41];
    bw_sha1_hex(bw_str_make("abc"), hex);
    ck_assert_str_eq(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    bw_sha1_hex(bw_str_n("", 0), hex);
    ck_assert_str_eq(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}
END_TEST

static Suite *coll_suite(void)
{
    Suite *s = suite_create("collections");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    /* the exhaustive name and memmem tests take seconds under ASan, past
     * Check's default of 4 */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_set_get);
    tcase_add_test(tc, test_binary_names);
    tcase_add_test(tc, test_growth);
    tcase_add_test(tc, test_put_keeps);
    tcase_add_test(tc, test_entry);
    tcase_add_test(tc, test_hash_spread);
    tcase_add_test(tc, test_hash_case);
    tcase_add_test(tc, test_name_compare);
    tcase_add_test(tc, test_image);
    tcase_add_test(tc, test_selections);
    tcase_add_test(tc, test_relit);
    tcase_add_test(tc, test_relit_words);
    tcase_add_test(tc, test_numbers);
    tcase_add_test(tc, test_memmem);
    tcase_add_test(tc, test_sha1_hex);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;
    apr_initialize();
    sr = srunner_create(coll_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_terminate();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
