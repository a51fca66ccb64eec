/*
 * Unit tests for the matcher (apache2/matcher/): byte patterns, counts, runs and
 * the absolute anchors of joined scans.
 *
 * Byte patterns:
 * a regex that is one atom matching one byte (".", "\w", "[^;]"...) is
 * decided from a value's bytes, without a database scan. Each regex below
 * is held to PCRE2 (compiled as @rx compiles) on every subject of up to two
 * bytes over an alphabet of the bytes such classes tell apart, scanned
 * alone and many at once (with and without the values' bytes handed over);
 * the ones that are one such atom must take no scan call at all, and the
 * look-alikes that are not (a quantifier, a second atom, an anchor, a class
 * closed early, x mode) must still be scanned. The CRS regexes go through
 * the same path in tests/matcher/diff.
 *
 * Counts and runs: "at least n bytes of a class" ((?:C[^C]*?){n}, CRS
 * 942420-942432) and "n bytes of a class in a row" (C{n}, 942460's \W{4})
 * are decided from a value's bytes too (apache2/matcher/matcher_decided.c).
 * Each regex below is held to PCRE2 on every subject of up to six bytes
 * over an alphabet of six (in and out of the classes, a newline, the
 * separator), alone and many at once; the decided ones take no scan call,
 * the look-alikes (the second atom not the complement, "+?" for "*?", an
 * anchor, a trailing atom, an alternative, a repeat from zero) are scanned.
 *
 * Sets: a regex anchored at both ends with nothing but bytes, small
 * classes, groups, alternatives and "?" between ("^(?:GET|HEAD)$", @streq)
 * is compared with the value, not scanned. Each regex below is held to
 * PCRE2 on strings next to likely members (a byte dropped, changed, added,
 * its case flipped) and every subject of up to two bytes over the alphabet
 * above; the sets take no scan call and are exact, the look-alikes (an
 * alternative outside the anchors, a repeat, a lazy or possessive "?", a
 * dot or a negated class, \Z, a look-ahead, an atomic group, a back
 * reference, m or x mode, the empty value, case-insensitive in part,
 * groups nested too deep) are scanned.
 *
 * Anchors: joined, \A, \z and \Z also match at the separator between two
 * values (as ^ and $ do), so regexes with them are joined instead of
 * scanned value by value; the same subjects, many at once, hold them to
 * PCRE2 (a subject with a newline or the separator byte may only make the
 * bit a maybe).
 *
 * A lone regex: a matcher that looks for one regex runs it by PCRE2 on a
 * single value of up to 256 bytes, without a database call; a longer
 * value, several values, or a run past PCRE2's step limit (a backtracking
 * regex) go to the database. The verdicts are held to PCRE2's and the
 * database calls counted.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "base/bw_regex.h"
#include "matcher/bw_matcher.h"

static apr_pool_t *g_pool;

typedef struct {
    const char *re;
    int bytes;      /* 1: decided by the value's bytes, no scan call; 0: scanned;
                     * -1: no claim */
} rx_case_t;

static const rx_case_t CASES[] = {
    { ".", 1 },
    { "(?s).", 1 },
    { "(?-s).", 1 },
    { "(?i)(?s)[a-c]", 1 },
    { "\\w", 1 },
    { "\\W", 1 },
    { "\\d", 1 },
    { "\\s", 1 },
    { "\\S", 1 },
    { "\\h", 1 },
    { "\\v", 1 },
    { "\\N", 1 },
    { "[;]", 1 },
    { "[^;\\s]", 1 },
    { "[]a]", 1 },
    { "[^]a]", 1 },
    { "[a\\]]", 1 },
    { "[[:alpha:]_]", 1 },
    { "[^[:^digit:]x]", 1 },
    { "(?i)[k-m]", 1 },
    { "[\\x00-\\x1f\\x7f]", 1 },
    { "[\\\\]", 1 },
    { "[-a]", 1 },
    { "[a-]", 1 },
    /* look-alikes: scanned as any regex */
    { "a", 0 },
    { "\\b", 0 },
    { "\\R", 0 },
    { "..", 0 },
    { ".+", 0 },
    { "[a]]", 0 },
    { "[a]b", 0 },
    { "[a][b]", 0 },
    { "^.", 0 },
    { ".$", 0 },
    { "(?x)[ a]", 0 },
    { "(?i:[a])", 0 },
    { "[\\Q]\\E]", 0 },
    { "(.)", 0 },
    { "[a]{2}", 1 },   /* a run (SHAPES) */
    /* absolute anchors */
    { "a\\z", -1 },
    { "\\Aa", -1 },
    { "a\\Z", -1 },
    { "\\A\\z", -1 },
    { "\\A[ak]\\Z", -1 },
    { "(?i)\\Ak|a\\z", -1 },
    { "\\A.", -1 },
    { ".\\z", -1 },
    { "[;:]\\s*\\z", -1 },
    { "(?:a|\\n)?\\z", -1 },
    { "^a$|\\Zk", -1 },
};

/* Bytes classes tell apart, and the separator of joined scans. */
static const unsigned char ALPHABET[] = {
    0x00, '\t', '\n', 0x0b, '\r', ' ', '!', '-', '0', '9', ':', ';', 'A', 'K', 'Z', '[',
    '\\', ']', '_', 'a', 'c', 'k', 'z', 0x7f, 0x80, 0xa0, 0xff,
};
#define NA ((int)sizeof(ALPHABET))
#define NSUBJ (1 + NA + NA * NA)

/* Subject k: the empty string, then one byte, then two. */
static bw_str_t subject(int k, char *buf)
{
    if (k == 0)
        return bw_str_n(buf, 0);
    if (k <= NA) {
        buf[0] = (char)ALPHABET[k - 1];
        return bw_str_n(buf, 1);
    }
    k -= NA + 1;
    buf[0] = (char)ALPHABET[k / NA];
    buf[1] = (char)ALPHABET[k % NA];
    return bw_str_n(buf, 2);
}

typedef struct {
    uint64_t *hit;      /* per subject: bit 0 */
} many_t;

static void on_many(void *ctx, int i, const uint64_t *bits)
{
    many_t *mt = ctx;
    mt->hit[i] |= bits[0] & 1;
}

/* One value's bits, all of word 0. */
static void on_bits(void *ctx, int i, const uint64_t *bits)
{
    *(uint64_t *)ctx |= bits[0];
}

/* The verdict of a scan for bit 0: set only where PCRE2 matches when the
 * bit is exact, set wherever it matches in any case. */
static void check_verdict(const rx_case_t *c, const bw_matcher_t *m, bw_str_t s, int set,
                          int truth, const char *how)
{
    /* an anchored bit is exact only in a value without a newline or the
     * separator (bw_matcher_line) */
    int exact = (bw_matcher_exact(m)[0] & 1)
                && !((bw_matcher_line(m)[0] & 1)
                     && (memchr(s.data, '\n', s.len) || memchr(s.data, BW_MATCHER_SEP, s.len)));
    if ((truth && !set) || (exact && set != truth))
        ck_abort_msg("%s on \"%s\" (%zu bytes, first 0x%02x): scan %d, PCRE2 %d (%s)", c->re,
                     how, s.len, s.len ? (unsigned char)s.data[0] : 0, set, truth,
                     exact ? "exact" : "maybe");
}

/* The subjects scanned many at once, each verdict held to PCRE2's (truth);
 * returns the scan calls made. */
static unsigned long check_many(const rx_case_t *c, const bw_matcher_t *m, apr_pool_t *p,
                                const bw_str_t *subj, const int *truth, int n)
{
    bw_matcher_buf_t buf;
    many_t mt;
    int k;
    memset(&buf, 0, sizeof(buf));
    mt.hit = apr_pcalloc(p, sizeof(uint64_t) * (size_t)n);
    bw_matcher_scan_many(m, subj, NULL, n, p, &buf, on_many, &mt);
    for (k = 0; k < n; k++)
        check_verdict(c, m, subj[k],
                      (int)((mt.hit[k] | bw_matcher_always(m)[0] | bw_matcher_universal(m)[0]) & 1),
                      truth[k], "many");
    return buf.calls;
}

/* A pool for case c, its regex compiled by PCRE2 and alone in a matcher
 * (one that compares sets with sets set). */
static apr_pool_t *case_setup_as(const rx_case_t *c, pcre2_code **re, pcre2_match_data **md,
                                 bw_matcher_t **m, int sets)
{
    apr_pool_t *p;
    char *err = NULL;
    const char *warning = NULL;
    apr_pool_create(&p, g_pool);
    *re = bw_regex_compile(p, c->re, 0, &err);
    ck_assert_msg(*re != NULL, "%s: %s", c->re, err ? err : "?");
    *md = pcre2_match_data_create_from_pattern(*re, NULL);
    *m = bw_matcher_create(p);
    if (sets)
        bw_matcher_compare_sets(*m);
    ck_assert_int_eq(bw_matcher_add_regex_as(*m, c->re, strlen(c->re), 0), 0);
    bw_matcher_compile(*m, NULL, &warning);
    return p;
}

static apr_pool_t *case_setup(const rx_case_t *c, pcre2_code **re, pcre2_match_data **md,
                              bw_matcher_t **m)
{
    return case_setup_as(c, re, md, m, 0);
}

static const rx_case_t SHAPES[] = {
    { "((?:[~!@#$%^&*()\\-+={}\\[\\]|:;\"'`<>][^~!@#$%^&*()\\-+={}\\[\\]|:;\"'`<>]*?){3})", 1 },
    { "(?:[;'][^;']*){2}", 1 },
    { "(?:[;'][^;']*?){2,}", 1 },
    { "(?:[;'][^;']*?){2,4}", 1 },
    { "(?i)(?:[a][^a]*?){2}", 1 },
    { "(?:\\W\\w*?){3}", 1 },
    { "\\W{4}", 1 },
    { "\\W{2,}", 1 },
    { "[;\\n-]{2,3}", 1 },
    { "(?:\\s+)", 1 },
    { "(\\d{3})", 1 },
    { "[^a]{5}", 1 },
    /* look-alikes */
    { "(?:[;][^,]*?){3}", 0 },
    { "(?:[;][^;]*?){3}a", 0 },
    { "(?:[;][^;]+?){2}", 0 },
    { "^\\W{4}", 0 },
    { "\\W{4}$", 0 },
    { "(?:[;][^;]*?){3}|a", 0 },
    { "\\W{3}|a", 0 },
    { "[a]{0,3}", 0 },
    { "(\\W{2})(a)", 0 },
    { "(?:[;][^;]*?)(?:[;][^;]*?)", 0 },
};

/* Bytes in and out of the classes above, a newline and the separator. */
static const unsigned char SHAPE_ALPHABET[] = { ';', '\'', 'a', '-', '\n', 0xff };
#define NSA ((int)sizeof(SHAPE_ALPHABET))
#define SHAPE_LEN 6

START_TEST(test_shapes_against_pcre2)
{
    const rx_case_t *c = &SHAPES[_i];
    apr_pool_t *p;
    bw_matcher_t *m;
    pcre2_code *re;
    pcre2_match_data *md;
    char *bufs;
    bw_str_t *subj;
    uint64_t hits[1], gate[4];
    int nsubj = 0, len, k, j, *truth;
    unsigned long calls;

    p = case_setup(c, &re, &md, &m);
    ck_assert_int_eq(bw_matcher_regex_decided(p, c->re, strlen(c->re), gate), c->bytes);

    for (len = 0, k = 1; len <= SHAPE_LEN; len++, k *= NSA)
        nsubj += k;
    bufs = apr_palloc(p, (size_t)nsubj * SHAPE_LEN);
    subj = apr_palloc(p, sizeof(*subj) * (size_t)nsubj);
    truth = apr_palloc(p, sizeof(int) * (size_t)nsubj);
    nsubj = 0;
    for (len = 0, k = 1; len <= SHAPE_LEN; len++, k *= NSA) {
        int x;
        for (x = 0; x < k; x++) {
            char *s = bufs + (size_t)nsubj * SHAPE_LEN;
            int v = x;
            for (j = 0; j < len; j++, v /= NSA)
                s[j] = (char)SHAPE_ALPHABET[v % NSA];
            subj[nsubj] = bw_str_n(s, (size_t)len);
            truth[nsubj] = bw_regex_match(re, subj[nsubj], md);
            ck_assert_int_ge(truth[nsubj], 0);
            /* a decided regex's gate: every subject it matches has a byte of it */
            for (j = 0; c->bytes && truth[nsubj] && j < len; j++)
                if ((gate[(unsigned char)s[j] / 64] >> ((unsigned char)s[j] % 64)) & 1)
                    break;
            ck_assert_msg(!c->bytes || !truth[nsubj] || j < len, "%s: a match without a gate byte",
                          c->re);
            hits[0] = 0;
            bw_matcher_scan(m, subj[nsubj], hits);
            check_verdict(c, m, subj[nsubj], (int)(hits[0] & 1), truth[nsubj], "alone");
            nsubj++;
        }
    }
    calls = check_many(c, m, p, subj, truth, nsubj);
    if (c->bytes)
        ck_assert_msg(calls == 0, "%s: a count or a run, yet %lu scan calls", c->re, calls);
    else
        ck_assert_msg(calls > 0 || (bw_matcher_always(m)[0] & 1),
                      "%s: not a count or a run, yet never scanned", c->re);
    pcre2_match_data_free(md);
    apr_pool_destroy(p);
}
END_TEST

/* Small sets of whole values ("^(?:GET|HEAD)$", @streq's "^\x47\x45\x54\z")
 * are compared, not scanned (apache2/matcher/matcher_decided.c). */
static const rx_case_t SETS[] = {
    { "^(?:GET|HEAD)$", 1 },
    { "^OPTIONS$", 1 },
    { "^(?:GET /|OPTIONS \\*) HTTP/[12]\\.[01]$", 1 },
    { "^\\x47\\x45\\x54\\z", 1 },
    { "\\A(?:a|bc?)d\\z", 1 },
    { "(?i)^(?:get|head)$", 1 },
    { "^(?i:get|post)$", 1 },
    { "^[a-c][]x]$", 1 },
    { "^a\\d$", 1 },
    { "^(a)(?:b|c)?$", 1 },
    { "^\\t\\.\\-$", 1 },
    /* look-alikes: scanned as any regex */
    { "^a|b$", 0 },
    { "^a+$", 0 },
    { "^a*$", 0 },
    { "^a{2}$", 0 },
    { "^a??$", 0 },
    { "^a?+a$", 0 },
    { "^.$", 0 },
    { "^[^a]$", 0 },
    { "^\\w$", 0 },
    { "^a$\\n", 0 },
    { "^a\\Z", 0 },
    { "^(?=a)a$", 0 },
    { "^(?>a|ab)c$", 0 },
    { "^(a)\\1$", 0 },
    { "(?m)^a$", 0 },
    { "(?x)^a b$", 0 },
    { "^(?:a|)$", 0 },   /* the empty value: nothing to gate on */
    { "^a", 0 },
    { "a$", 0 },
    { "^a(?i)b$", 0 },
    { "^[[:alpha:]]$", 0 },
    { "^(?i:a)b$", 0 },
    { "^((((((((((((((((((a))))))))))))))))))$", 0 },   /* deeper than a set is read */
};

/* Strings next to s: itself, each byte dropped, changed (to a byte of
 * ALPHABET) or its case flipped, a byte of ALPHABET added anywhere. */
static int near(const char *s, size_t n, char *out, size_t cap, bw_str_t *subj, int k)
{
    size_t i, used = 0;
    int a;
#define PUT(len) do { subj[k++] = bw_str_n(out + used, (len)); used += (len); } while (0)
    if (used + n > cap)
        return k;
    memcpy(out + used, s, n);
    PUT(n);
    for (i = 0; i < n && used + 2 * n + 2 <= cap; i++) {
        memcpy(out + used, s, i);
        memcpy(out + used + i, s + i + 1, n - i - 1);
        PUT(n - 1);
        memcpy(out + used, s, n);
        out[used + i] = (char)(s[i] ^ 0x20);
        PUT(n);
    }
    for (a = 0; a < NA; a++)
        for (i = 0; i <= n && used + n + 1 <= cap; i++) {
            memcpy(out + used, s, i);
            out[used + i] = (char)ALPHABET[a];
            memcpy(out + used + i + 1, s + i, n - i);
            PUT(n + 1);
            if (i < n && used + n <= cap) {
                memcpy(out + used, s, n);
                out[used + i] = (char)ALPHABET[a];
                PUT(n);
            }
        }
#undef PUT
    return k;
}

START_TEST(test_sets_against_pcre2)
{
    static const char *const seeds[] = {
        "GET", "HEAD", "get", "Head", "POST", "OPTIONS", "GET / HTTP/1.1", "OPTIONS * HTTP/2.0",
        "GET / HTTP/3.1", "ad", "bd", "bcd", "a]", "cx", "a7", "a", "ab", "ac", "\t.-", "\t.-\n", "GET\n",
    };
    const rx_case_t *c = &SETS[_i];
    apr_pool_t *p;
    bw_matcher_t *m;
    pcre2_code *re;
    pcre2_match_data *md;
    size_t cap = 1 << 20;
    char *out, buf[4];
    bw_str_t *subj;
    uint64_t hits[1], gate[4];
    int n = 0, k, j, *truth;
    unsigned long calls;

    p = case_setup_as(c, &re, &md, &m, 1);
    ck_assert_msg(bw_matcher_regex_set(p, c->re, strlen(c->re), gate) == c->bytes, "%s: set %d",
                  c->re, !c->bytes);
    out = apr_palloc(p, cap);
    subj = apr_palloc(p, sizeof(*subj) * 200000);
    for (k = 0; k < (int)(sizeof(seeds) / sizeof(seeds[0])); k++)
        n = near(seeds[k], strlen(seeds[k]), out + (size_t)k * (cap / 32), cap / 32, subj, n);
    for (k = 0; k < NSUBJ; k++) {
        char *s = apr_palloc(p, 2);
        bw_str_t v = subject(k, buf);
        memcpy(s, v.data, v.len);
        subj[n++] = bw_str_n(s, v.len);
    }
    truth = apr_palloc(p, sizeof(int) * (size_t)n);
    for (k = 0; k < n; k++) {
        truth[k] = bw_regex_match(re, subj[k], md);
        ck_assert_int_ge(truth[k], 0);
        /* a set's gate: every value it matches starts with a byte of it */
        ck_assert_msg(!c->bytes || !truth[k]
                      || ((gate[(unsigned char)subj[k].data[0] / 64]
                           >> ((unsigned char)subj[k].data[0] % 64)) & 1),
                      "%s: a match without a gate byte", c->re);
        hits[0] = 0;
        bw_matcher_scan(m, subj[k], hits);
        check_verdict(c, m, subj[k], (int)(hits[0] & 1), truth[k], "alone");
    }
    calls = check_many(c, m, p, subj, truth, n);
    if (c->bytes) {
        ck_assert_msg(calls == 0, "%s: a set, yet %lu scan calls", c->re, calls);
        ck_assert_msg(bw_matcher_exact(m)[0] & 1, "%s: a set, yet not exact", c->re);
        for (j = 0, k = 0; k < n; k++)
            j += truth[k] > 0;
        ck_assert_msg(j > 0, "%s: no subject matched", c->re);
    }
    pcre2_match_data_free(md);
    apr_pool_destroy(p);
}
END_TEST

START_TEST(test_against_pcre2)
{
    const rx_case_t *c = &CASES[_i];
    apr_pool_t *p;
    bw_matcher_t *m;
    pcre2_code *re;
    pcre2_match_data *md;
    char (*bufs)[2];
    bw_str_t *subj;
    uint64_t (*bytes)[4], hits[1];
    const uint64_t **present;
    int k, round, truth[NSUBJ];

    p = case_setup(c, &re, &md, &m);

    bufs = apr_palloc(p, sizeof(*bufs) * NSUBJ);
    subj = apr_palloc(p, sizeof(*subj) * NSUBJ);
    bytes = apr_pcalloc(p, sizeof(*bytes) * NSUBJ);
    present = apr_palloc(p, sizeof(*present) * NSUBJ);
    for (k = 0; k < NSUBJ; k++) {
        size_t j;
        subj[k] = subject(k, bufs[k]);
        for (j = 0; j < subj[k].len; j++) {
            unsigned char b = (unsigned char)subj[k].data[j];
            bytes[k][b / 64] |= (uint64_t)1 << (b % 64);
        }
        present[k] = bytes[k];
        truth[k] = bw_regex_match(re, subj[k], md);
        ck_assert_int_ge(truth[k], 0);
        hits[0] = 0;
        bw_matcher_scan(m, subj[k], hits);
        check_verdict(c, m, subj[k], (int)(hits[0] & 1), truth[k], "alone");
    }
    /* many at once, with the values' bytes and without */
    for (round = 0; round < 2; round++) {
        bw_matcher_buf_t buf;
        many_t mt;
        memset(&buf, 0, sizeof(buf));
        mt.hit = apr_pcalloc(p, sizeof(uint64_t) * NSUBJ);
        bw_matcher_scan_many(m, subj, round ? NULL : present, NSUBJ, p, &buf, on_many, &mt);
        for (k = 0; k < NSUBJ; k++)
            check_verdict(c, m, subj[k],
                          (int)((mt.hit[k] | bw_matcher_always(m)[0] | bw_matcher_universal(m)[0])
                                & 1), truth[k], round ? "many, bytes unknown" : "many");
        if (c->bytes > 0)
            ck_assert_msg(buf.calls == 0, "%s: one atom, yet %lu scan calls", c->re, buf.calls);
        else if (c->bytes == 0)   /* or it has no database to be scanned with: always set */
            ck_assert_msg(buf.calls > 0 || (bw_matcher_always(m)[0] & 1),
                          "%s: not one atom, yet never scanned", c->re);
    }
    pcre2_match_data_free(md);
    apr_pool_destroy(p);
}
END_TEST

/* A lone regex: a matcher that looks for one regex runs it by PCRE2 on one
 * value of up to 256 bytes (no database call), with a step limit past
 * which the database decides; on more values, or a longer one, the
 * database scans as before. Each verdict is held to PCRE2's. */
typedef struct {
    const char *re;
    const char *subject;
    int repeat;         /* the subject this many times */
    int truth;          /* PCRE2's verdict without a limit */
    int calls;          /* database calls expected: 0 PCRE2 decided, 1 the database */
} lone_case_t;

static const lone_case_t LONE[] = {
    { "^(?:GET|POST) /[^ ]* HTTP/1\\.[01]$", "GET /a/b?c=d HTTP/1.1", 1, 1, 0 },
    { "^(?:GET|POST) /[^ ]* HTTP/1\\.[01]$", "GET /a b HTTP/1.1", 1, 0, 0 },
    { "(?i)<script", "x<ScRiPt>", 1, 1, 0 },
    { "(?i)<script", "", 1, 0, 0 },
    /* 256 bytes: still PCRE2's; 257: the database's */
    { "b", "a", 256, 0, 0 },
    { "b", "a", 257, 0, 1 },
    { "a$", "a", 257, 1, 1 },
    /* backtracking past the step limit: the database decides */
    { "^(?:a+)+$", "aaaaaaaaaaaaaaaaaaaab", 1, 0, 1 },
};

/* subject, repeat times over, in p. */
static bw_str_t repeated(apr_pool_t *p, const char *subject, int repeat)
{
    size_t n = strlen(subject), j;
    char *text = apr_palloc(p, n * (size_t)repeat + 1);
    for (j = 0; j < (size_t)repeat; j++)
        memcpy(text + j * n, subject, n);
    text[n * (size_t)repeat] = '\0';
    return bw_str_n(text, n * (size_t)repeat);
}

START_TEST(test_lone_regex)
{
    const lone_case_t *c = &LONE[_i];
    apr_pool_t *p;
    bw_matcher_t *m;
    const char *warning = NULL;
    bw_matcher_buf_t buf;
    many_t mt;
    size_t j;
    bw_str_t subj;
    int set, exact, always;

    apr_pool_create(&p, g_pool);
    subj = repeated(p, c->subject, c->repeat);
    m = bw_matcher_create(p);
    ck_assert_int_eq(bw_matcher_add_regex_as(m, c->re, strlen(c->re), 0), 0);
    bw_matcher_compile(m, NULL, &warning);
    memset(&buf, 0, sizeof(buf));
    mt.hit = apr_pcalloc(p, sizeof(uint64_t));
    bw_matcher_scan_many(m, &subj, NULL, 1, p, &buf, on_many, &mt);
    /* the literal prefilter's build has no literal in "b" or "a+": such a
     * bit is always set and nothing is scanned for it */
    always = (int)(bw_matcher_always(m)[0] & 1);
    set = (int)(mt.hit[0] & 1) | always;
    exact = (int)(bw_matcher_exact(m)[0] & 1);
    ck_assert_msg(set == c->truth || (set && !exact), "%s on %d x \"%s\": scan %d, PCRE2 %d",
                  c->re, c->repeat, c->subject, set, c->truth);
    ck_assert_msg(buf.calls == (unsigned long)(always ? 0 : c->calls),
                  "%s on %d x \"%s\": %lu database calls, not %d", c->re, c->repeat, c->subject,
                  buf.calls, always ? 0 : c->calls);
    /* the same value twice, many at once: the database, as before */
    {
        bw_str_t two[2] = { subj, subj };
        memset(&buf, 0, sizeof(buf));
        mt.hit = apr_pcalloc(p, sizeof(uint64_t) * 2);
        bw_matcher_scan_many(m, two, NULL, 2, p, &buf, on_many, &mt);
        ck_assert_msg(buf.calls > 0 || always, "%s: two values, no database call", c->re);
        for (j = 0; j < 2; j++) {
            set = (int)(mt.hit[j] & 1) | always;
            ck_assert_msg(set == c->truth || (set && !exact), "%s, many: scan %d, PCRE2 %d", c->re,
                          set, c->truth);
        }
    }
    apr_pool_destroy(p);
}
END_TEST

/* A few phrases (up to eight, nothing else to scan for) are searched for
 * in one value of up to 256 bytes, without a database call; nine phrases,
 * or a longer value, go to the database. Bit k is phrase k's; the truth is
 * a plain search (ASCII case folded for the case-insensitive ones). */
typedef struct {
    int nphrases;       /* PHRASES[0..n) */
    const char *subject;
    int repeat;
    int calls;
} few_case_t;

static const struct { const char *text; int nocase; } PHRASES[] = {
    { "select", 1 }, { "UNION", 0 }, { "/etc/passwd", 0 }, { "<Script", 1 },
    { "a", 0 }, { "zz", 1 }, { "\xff\xfe", 0 }, { "ab\nc", 0 }, { "sleep(", 1 },
};

static const few_case_t FEW[] = {
    { 8, "SeLeCt * from x UNION y", 1, 0 },
    { 8, "union <script>", 1, 0 },
    { 8, "GET /etc/passwd HTTP/1.1", 1, 0 },
    { 8, "ZZ and ab\nc and \xff\xfe", 1, 0 },
    { 8, "", 1, 0 },
    { 8, "bbbbbbbb", 32, 0 },
    { 8, "bbbbbbbb", 33, 1 },
    { 8, "SELECT", 43, 1 },
    { 9, "SLEEP(1) select", 1, 1 },
};

START_TEST(test_few_phrases)
{
    const few_case_t *c = &FEW[_i];
    uint64_t got = 0, truth = 0;    /* bit k: phrase k, scanned and searched */
    bw_matcher_buf_t buf;
    bw_matcher_t *m;
    apr_pool_t *p;
    const char *warning = NULL;
    size_t i;
    char *low;
    bw_str_t subj;
    int k;

    apr_pool_create(&p, g_pool);
    subj = repeated(p, c->subject, c->repeat);
    low = apr_pmemdup(p, subj.data, subj.len + 1);
    for (i = 0; i < subj.len; i++)
        if (low[i] >= 'A' && low[i] <= 'Z')
            low[i] = (char)(low[i] + 32);
    m = bw_matcher_create(p);
    for (k = 0; k < c->nphrases; k++) {
        bw_str_t ph = bw_str_n(PHRASES[k].text, strlen(PHRASES[k].text));
        char *lp = apr_pstrdup(p, PHRASES[k].text);
        for (i = 0; i < ph.len; i++)
            if (lp[i] >= 'A' && lp[i] <= 'Z')
                lp[i] = (char)(lp[i] + 32);
        ck_assert_int_eq(bw_matcher_add_literal_as(m, ph, PHRASES[k].nocase, k), k);
        if (PHRASES[k].nocase ? bw_memmem(low, subj.len, lp, ph.len) != NULL
                              : bw_memmem(subj.data, subj.len, ph.data, ph.len) != NULL)
            truth |= (uint64_t)1 << k;
    }
    bw_matcher_compile(m, NULL, &warning);
    memset(&buf, 0, sizeof(buf));
    bw_matcher_scan_many(m, &subj, NULL, 1, p, &buf, on_bits, &got);
    got |= bw_matcher_always(m)[0];
    /* a phrase's bit is exact: the scan says what the search says */
    ck_assert_msg(got == truth, "%d phrases on %d x \"%s\": scan %llx, search %llx", c->nphrases,
                  c->repeat, c->subject, (unsigned long long)got, (unsigned long long)truth);
    ck_assert_msg(buf.calls == (unsigned long)c->calls, "%d phrases on %d x \"%s\": %lu database calls, not %d",
                  c->nphrases, c->repeat, c->subject, buf.calls, c->calls);
    apr_pool_destroy(p);
}
END_TEST

static Suite *matcher_suite(void)
{
    Suite *s = suite_create("matcher");
    TCase *tc = tcase_create("patterns");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_against_pcre2, 0, (int)(sizeof(CASES) / sizeof(CASES[0])));
    tcase_add_loop_test(tc, test_shapes_against_pcre2, 0, (int)(sizeof(SHAPES) / sizeof(SHAPES[0])));
    tcase_add_loop_test(tc, test_sets_against_pcre2, 0, (int)(sizeof(SETS) / sizeof(SETS[0])));
    tcase_add_loop_test(tc, test_lone_regex, 0, (int)(sizeof(LONE) / sizeof(LONE[0])));
    tcase_add_loop_test(tc, test_few_phrases, 0, (int)(sizeof(FEW) / sizeof(FEW[0])));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    apr_initialize();
    apr_pool_create(&g_pool, NULL);
    sr = srunner_create(matcher_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(g_pool);
    apr_terminate();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
