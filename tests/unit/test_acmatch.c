/*
 * Unit tests for the Aho-Corasick matcher (apache2/operators/bw_acmatch.c):
 * hand-checked cases for the API and match order, then differential tests
 * against a naive matcher on random patterns (small alphabets, NUL bytes,
 * both case modes) and on the CRS phrase files, read at test time from
 * $BW_CRS_RULES (default /usr/share/modsecurity-crs/rules).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include "operators/bw_acmatch.h"

static apr_pool_t *g_pool;

typedef struct {
    size_t end;
    size_t len;
    int order;      /* index in the add order */
    int id;
} hit_t;

static unsigned char fold(unsigned char c, int nocase)
{
    return (nocase && c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

static int eq_fold(const char *a, const char *b, size_t n, int nocase)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (fold((unsigned char)a[i], nocase) != fold((unsigned char)b[i], nocase))
            return 0;
    return 1;
}

/* Naive reference: every (end, pattern) pair, ordered by end, then longest,
 * then add order: the order bw_ac_next() promises. */
static int naive_hits(const bw_str_t *pats, const int *ids, int np, bw_str_t text,
                      int nocase, hit_t *out, int max)
{
    size_t end;
    int n = 0, k;

    for (end = 1; end <= text.len; end++) {
        int start_n = n, a, b;
        for (k = 0; k < np; k++) {
            if (pats[k].len > end
                || !eq_fold(text.data + end - pats[k].len, pats[k].data, pats[k].len, nocase))
                continue;
            ck_assert_int_lt(n, max);
            out[n].end = end;
            out[n].len = pats[k].len;
            out[n].order = k;
            out[n].id = ids[k];
            n++;
        }
        /* insertion sort of this end's hits: longer first, then add order */
        for (a = start_n + 1; a < n; a++) {
            hit_t h = out[a];
            b = a;
            while (b > start_n && (out[b - 1].len < h.len
                                   || (out[b - 1].len == h.len && out[b - 1].order > h.order))) {
                out[b] = out[b - 1];
                b--;
            }
            out[b] = h;
        }
    }
    return n;
}

/* Compare bw_ac_next() with the naive list; returns the number of hits. */
static int compare_all(const bw_ac_t *ac, const bw_str_t *pats, const int *ids, int np,
                       bw_str_t text, int nocase)
{
    enum { MAXH = 200000 };
    hit_t *want = malloc(sizeof(hit_t) * MAXH);
    int nw = naive_hits(pats, ids, np, text, nocase, want, MAXH), i = 0;
    bw_ac_iter_t it;
    bw_ac_match_t m;

    bw_ac_iter_init(&it, ac, text);
    while (bw_ac_next(&it, &m)) {
        ck_assert_msg(i < nw, "extra match id %d at %zu", m.id, m.offset);
        ck_assert_msg(m.offset + m.len == want[i].end && m.len == want[i].len
                      && m.id == want[i].id,
                      "match %d: got id %d [%zu,+%zu), want id %d ending at %zu len %zu", i, m.id,
                      m.offset, m.len, want[i].id, want[i].end, want[i].len);
        ck_assert(bw_str_eq(m.pattern, pats[want[i].order]));
        i++;
    }
    ck_assert_msg(i == nw, "%d matches, naive found %d", i, nw);
    if (nw > 0) {
        ck_assert_int_eq(bw_ac_search(ac, text, &m), 1);
        ck_assert_int_eq(m.id, want[0].id);
    } else {
        ck_assert_int_eq(bw_ac_search(ac, text, &m), 0);
    }
    free(want);
    return nw;
}

static bw_ac_t *build(const char *const *pats, int nocase)
{
    bw_ac_t *ac = bw_ac_create(g_pool, nocase);
    int i;
    for (i = 0; pats[i]; i++)
        ck_assert_int_eq(bw_ac_add(ac, bw_str_make(pats[i]), 100 + i), 0);
    ck_assert_int_eq(bw_ac_compile(ac), 0);
    return ac;
}

START_TEST(test_classic_example)
{
    static const char *const pats[] = { "he", "she", "his", "hers", NULL };
    static const struct { int id; size_t off, len; } want[] = {
        { 101, 1, 3 }, { 100, 2, 2 }, { 103, 2, 4 }
    };
    bw_ac_t *ac = build(pats, 0);
    bw_ac_iter_t it;
    bw_ac_match_t m;
    int i = 0;

    bw_ac_iter_init(&it, ac, bw_str_make("ushers"));
    while (bw_ac_next(&it, &m)) {
        ck_assert_int_lt(i, 3);
        ck_assert_int_eq(m.id, want[i].id);
        ck_assert_uint_eq(m.offset, want[i].off);
        ck_assert_uint_eq(m.len, want[i].len);
        i++;
    }
    ck_assert_int_eq(i, 3);
    ck_assert_uint_eq(bw_ac_count(ac), 4);
    ck_assert_int_eq(bw_ac_search(ac, bw_str_make("xhisx"), &m), 1);
    ck_assert_int_eq(m.id, 102);
    ck_assert_str_eq(m.pattern.data, "his");
    ck_assert_int_eq(bw_ac_search(ac, bw_str_make("hxe"), &m), 0);
}
END_TEST

START_TEST(test_case_modes)
{
    static const char *const pats[] = { "SeLeCt", "union", NULL };
    bw_ac_t *ci = build(pats, 1), *cs = build(pats, 0);
    bw_ac_match_t m;

    ck_assert_int_eq(bw_ac_search(ci, bw_str_make("x SELECT y"), &m), 1);
    ck_assert_str_eq(m.pattern.data, "SeLeCt");          /* spelt as added */
    ck_assert_int_eq(bw_ac_search(ci, bw_str_make("UNION"), &m), 1);
    ck_assert_int_eq(bw_ac_search(cs, bw_str_make("x SELECT y"), &m), 0);
    ck_assert_int_eq(bw_ac_search(cs, bw_str_make("x SeLeCt y"), &m), 1);
    ck_assert_int_eq(bw_ac_search(cs, bw_str_make("UNION"), &m), 0);
    /* only ASCII letters fold */
    ck_assert_int_eq(bw_ac_search(ci, bw_str_make("\xc9"), &m), 0);
}
END_TEST

START_TEST(test_duplicates_and_ids)
{
    bw_ac_t *ac = bw_ac_create(g_pool, 1);
    bw_ac_iter_t it;
    bw_ac_match_t m;

    ck_assert_int_eq(bw_ac_add(ac, bw_str_make("abc"), 7), 0);
    ck_assert_int_eq(bw_ac_add(ac, bw_str_make("ABC"), 9), 0);
    ck_assert_int_eq(bw_ac_add(ac, bw_str_make("bc"), 7), 0);
    ck_assert_int_eq(bw_ac_compile(ac), 0);
    bw_ac_iter_init(&it, ac, bw_str_make("abc"));
    ck_assert(bw_ac_next(&it, &m) && m.id == 7 && m.len == 3);
    ck_assert(bw_ac_next(&it, &m) && m.id == 9 && m.len == 3);
    ck_assert_str_eq(m.pattern.data, "ABC");
    ck_assert(bw_ac_next(&it, &m) && m.id == 7 && m.len == 2 && m.offset == 1);
    ck_assert(!bw_ac_next(&it, &m));
    ck_assert(!bw_ac_next(&it, &m));    /* stays finished */
}
END_TEST

START_TEST(test_api_misuse)
{
    bw_ac_t *ac = bw_ac_create(g_pool, 0);
    bw_ac_match_t m;

    ck_assert_int_eq(bw_ac_add(ac, bw_str_n("", 0), 1), -1);
    ck_assert_int_eq(bw_ac_add(ac, bw_str_make("x"), 1), 0);
    ck_assert_int_eq(bw_ac_search(ac, bw_str_make("x"), &m), 0);   /* not compiled */
    ck_assert_int_eq(bw_ac_compile(ac), 0);
    ck_assert_int_eq(bw_ac_compile(ac), -1);
    ck_assert_int_eq(bw_ac_add(ac, bw_str_make("y"), 2), -1);
    ck_assert_int_eq(bw_ac_search(ac, bw_str_make("axb"), &m), 1);
    ck_assert_int_eq(bw_ac_search(ac, bw_str_n("", 0), &m), 0);

    ac = bw_ac_create(g_pool, 1);                /* no pattern at all */
    ck_assert_int_eq(bw_ac_compile(ac), 0);
    ck_assert_int_eq(bw_ac_search(ac, bw_str_make("anything"), &m), 0);
    ck_assert_uint_eq(bw_ac_count(ac), 0);
}
END_TEST

/* Every byte value, NUL included, as a one-byte pattern and inside longer ones. */
START_TEST(test_all_bytes)
{
    bw_ac_t *ac = bw_ac_create(g_pool, 0);
    char one[1], text[256];
    bw_ac_match_t m;
    int c;

    for (c = 0; c < 256; c++) {
        one[0] = (char)c;
        text[c] = (char)c;
        ck_assert_int_eq(bw_ac_add(ac, bw_str_n(one, 1), c), 0);
    }
    ck_assert_int_eq(bw_ac_add(ac, bw_str_n("\0\xff\0", 3), 1000), 0);
    ck_assert_int_eq(bw_ac_compile(ac), 0);
    for (c = 0; c < 256; c++) {
        ck_assert_int_eq(bw_ac_search(ac, bw_str_n(text + c, 1), &m), 1);
        ck_assert_int_eq(m.id, c);
    }
    ck_assert_int_eq(bw_ac_search(ac, bw_str_n("\0\xff\0", 3), &m), 1);
    ck_assert_int_eq(m.id, 0);
    {
        bw_str_t p[1] = { { "\0\xff\0", 3 } };
        int id[1] = { 1 };
        bw_ac_t *ac2 = bw_ac_create(g_pool, 1);
        bw_ac_add(ac2, p[0], 1);
        bw_ac_compile(ac2);
        ck_assert_int_eq(compare_all(ac2, p, id, 1, bw_str_n("a\0\xff\0\xff\0\xff", 7), 1), 2);
    }
}
END_TEST

static unsigned g_seed;

static unsigned rnd(unsigned n)
{
    g_seed = g_seed * 1103515245u + 12345u;
    return (g_seed >> 8) % n;
}

START_TEST(test_random_differential)
{
    static const char alpha[] = { 'a', 'b', 'A', 'B', '\0', 'c' };
    int round, total = 0;

    g_seed = 4242u + (unsigned)_i;
    for (round = 0; round < 200; round++) {
        int np = 1 + (int)rnd(30), k, nocase = (int)rnd(2), ids[30];
        unsigned abits = 2 + rnd(5);
        bw_str_t pats[30];
        char *text;
        size_t tl = rnd(300), i;
        bw_ac_t *ac = bw_ac_create(g_pool, nocase);

        for (k = 0; k < np; k++) {
            size_t pl = 1 + rnd(6);
            char *p = apr_palloc(g_pool, pl);
            for (i = 0; i < pl; i++)
                p[i] = alpha[rnd(abits)];
            pats[k] = bw_str_n(p, pl);
            ids[k] = (int)rnd(5);     /* ids need not be unique */
            ck_assert_int_eq(bw_ac_add(ac, pats[k], ids[k]), 0);
        }
        ck_assert_int_eq(bw_ac_compile(ac), 0);
        text = apr_palloc(g_pool, tl + 1);
        for (i = 0; i < tl; i++)
            text[i] = alpha[rnd(abits)];
        total += compare_all(ac, pats, ids, np, bw_str_n(text, tl), nocase);
    }
    ck_assert_int_gt(total, 1000);      /* the inputs really produced matches */
}
END_TEST

/* Read every *.data file of the CRS rules directory as phrases. */
static int load_crs_phrases(const char *dir, bw_str_t *pats, int max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        char line[4096];
        FILE *f;
        if (l < 6 || strcmp(e->d_name + l - 5, ".data") != 0)
            continue;
        f = fopen(apr_pstrcat(g_pool, dir, "/", e->d_name, NULL), "r");
        if (f == NULL)
            continue;
        while (n < max && fgets(line, sizeof(line), f)) {
            size_t ll = strcspn(line, "\r\n");
            if (ll == 0 || line[0] == '#')
                continue;
            pats[n++] = bw_str_n(apr_pstrmemdup(g_pool, line, ll), ll);
        }
        fclose(f);
    }
    closedir(d);
    return n;
}

START_TEST(test_crs_phrases_differential)
{
    enum { MAXP = 20000 };
    const char *dir = getenv("BW_CRS_RULES");
    bw_str_t *pats = apr_palloc(g_pool, sizeof(bw_str_t) * MAXP);
    int *ids = apr_palloc(g_pool, sizeof(int) * MAXP), np, k, round, total = 0;
    bw_ac_t *ac;

    if (dir == NULL)
        dir = "/usr/share/modsecurity-crs/rules";
    np = load_crs_phrases(dir, pats, MAXP);
    ck_assert_msg(np > 100, "CRS phrase files not found in %s (set BW_CRS_RULES)", dir);
    ac = bw_ac_create(g_pool, 1);
    for (k = 0; k < np; k++) {
        ids[k] = k;
        ck_assert_int_eq(bw_ac_add(ac, pats[k], k), 0);
    }
    ck_assert_int_eq(bw_ac_compile(ac), 0);
    g_seed = 99;
    for (round = 0; round < 12; round++) {
        /* phrases, pieces of phrases and noise glued together */
        char *text = apr_palloc(g_pool, 4096);
        size_t tl = 0;
        while (tl < 3800) {
            const bw_str_t *p = &pats[rnd((unsigned)np)];
            size_t take = rnd(3) ? p->len : rnd((unsigned)p->len + 1);
            if (take > 200)
                take = 200;
            memcpy(text + tl, p->data, take);
            tl += take;
            text[tl++] = "/. xA\0"[rnd(6)];
        }
        total += compare_all(ac, pats, ids, np, bw_str_n(text, tl), 1);
    }
    ck_assert_int_gt(total, 100);
}
END_TEST

static Suite *ac_suite(void)
{
    Suite *s = suite_create("acmatch");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_classic_example);
    tcase_add_test(tc, test_case_modes);
    tcase_add_test(tc, test_duplicates_and_ids);
    tcase_add_test(tc, test_api_misuse);
    tcase_add_test(tc, test_all_bytes);
    tcase_add_loop_test(tc, test_random_differential, 0, 4);
    tcase_add_test(tc, test_crs_phrases_differential);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    apr_initialize();
    apr_pool_create(&g_pool, NULL);
    sr = srunner_create(ac_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(g_pool);
    apr_terminate();
    return failed ? 1 : 0;
}
