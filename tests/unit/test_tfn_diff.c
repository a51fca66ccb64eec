/*
 * Differential tests of the transformations' fast paths (block scans,
 * copy-on-write runs, the case-change blocks, bw_byteset_of's flag table)
 * against straightforward references written here: one byte at a time, an
 * output buffer always written, the return value from comparing it with
 * the input. A fast path that changes one output byte, the return value,
 * or hands back a copy (or allocates) where nothing changed, fails here.
 *
 * Inputs: random strings over alphabets biased to the bytes each
 * transformation reacts to (lengths 0..300, across the 16-byte blocks and
 * their tails), and adversarial ones: every special fragment at every
 * offset of a filler, long runs of one special, truncated escapes at the
 * very end, all 256 byte values. Each input sits in a malloc'd buffer of
 * exactly its length, so ASan sees a read past it.
 *
 * Also the block operations of tfn_simd.h themselves, for every byte value
 * at every position. Built twice by make check: as the build picks
 * (SSE2 on x86-64) and with -DBW_TFN_PORTABLE (the word-at-a-time version
 * arm64 and others use), each linked with transformations compiled the
 * same way.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "transformations/bw_tfn.h"
#include "transformations/tfn_simd.h"

static apr_pool_t *root_pool;

/* ------------------------------------------------------------------------ */
/* reference implementations                                                */

typedef struct {
    unsigned char *b;
    size_t n;
} ref_out_t;

/* A reference: writes the result of in into o (room: 6 * len + 8). */
typedef void (*ref_fn)(const unsigned char *in, size_t len, const int *map, ref_out_t *o);

static void put(ref_out_t *o, unsigned char c)
{
    o->b[o->n++] = c;
}

static int hexv(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int hex_run(const unsigned char *p, size_t avail, size_t n)
{
    size_t k;
    if (avail < n)
        return 0;
    for (k = 0; k < n; k++)
        if (hexv(p[k]) < 0)
            return 0;
    return 1;
}

static unsigned long hex_value(const unsigned char *p, size_t n)
{
    unsigned long v = 0;
    while (n--)
        v = v * 16 + (unsigned long)hexv(*p++);
    return v;
}

static unsigned char wide_byte(unsigned long cp)
{
    return (cp >= 0xFF01 && cp <= 0xFF5E) ? (unsigned char)(cp - 0xFF01 + 0x21)
                                          : (unsigned char)(cp & 0xFF);
}

static int ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void ref_url(const unsigned char *in, size_t len, const int *map, ref_out_t *o, int uni)
{
    size_t i = 0;
    while (i < len) {
        if (uni && in[i] == '%' && i + 1 < len && (in[i + 1] == 'u' || in[i + 1] == 'U')
            && hex_run(in + i + 2, len - i - 2, 4)) {
            unsigned long cp = hex_value(in + i + 2, 4);
            put(o, map && map[cp] >= 0 ? (unsigned char)map[cp] : wide_byte(cp));
            i += 6;
        } else if (in[i] == '%' && hex_run(in + i + 1, len - i - 1, 2)) {
            put(o, (unsigned char)hex_value(in + i + 1, 2));
            i += 3;
        } else {
            put(o, in[i] == '+' ? ' ' : in[i]);
            i++;
        }
    }
}

static void ref_url_decode(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    ref_url(in, len, NULL, o, 0);
}

static void ref_url_decode_uni(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    ref_url(in, len, map, o, 1);
}

static void ref_cmd_line(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    int pending = 0;
    size_t i;
    for (i = 0; i < len; i++) {
        unsigned char c = in[i];
        if (c == '\\' || c == '"' || c == '\'' || c == '^')
            continue;
        if (c == ' ' || c == ',' || c == ';' || c == '\t' || c == '\r' || c == '\n') {
            if (!pending)
                put(o, ' ');
            pending = 1;
            continue;
        }
        if ((c == '/' || c == '(') && pending)
            o->n--;
        pending = 0;
        put(o, (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c);
    }
}

static int named_entity(const unsigned char *p, size_t n)
{
    static const char *const names[] = { "quot", "amp", "lt", "gt", "nbsp", "apos" };
    static const unsigned char bytes[] = { '"', '&', '<', '>', 0xA0, '\'' };
    size_t k, j;
    for (k = 0; k < 6; k++) {
        if (strlen(names[k]) != n)
            continue;
        for (j = 0; j < n; j++)
            if ((p[j] | 0x20) != (unsigned char)names[k][j])
                break;
        if (j == n)
            return bytes[k];
    }
    return -1;
}

static void ref_html(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i + 1, start;
        int byte = -1;
        if (in[i] != '&') {
            put(o, in[i++]);
            continue;
        }
        if (j < len && in[j] == '#') {
            int hex = 0, big = 0;
            unsigned long long v = 0;
            j++;
            if (j < len && (in[j] == 'x' || in[j] == 'X')) {
                hex = 1;
                j++;
            }
            start = j;
            while (j < len && (hex ? hexv(in[j]) >= 0 : (in[j] >= '0' && in[j] <= '9'))) {
                int d = hex ? hexv(in[j]) : in[j] - '0';
                if (big || v > (0x7FFFFFFFFFFFFFFFULL - (unsigned long long)d) / (hex ? 16 : 10))
                    big = 1;
                else
                    v = v * (hex ? 16 : 10) + (unsigned long long)d;
                j++;
            }
            if (j > start)
                byte = big ? 0xFF : (int)(v & 0xFF);
        } else {
            start = j;
            while (j < len && ((in[j] >= '0' && in[j] <= '9') || ((in[j] | 0x20) >= 'a'
                                                                   && (in[j] | 0x20) <= 'z')))
                j++;
            if (j > start)
                byte = named_entity(in + start, j - start);
        }
        if (byte < 0) {
            put(o, '&');
            i++;
            continue;
        }
        if (j < len && in[j] == ';')
            j++;
        put(o, (unsigned char)byte);
        i = j;
    }
}

static void ref_utf8(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0, n, k;
    while (i < len) {
        unsigned char c = in[i];
        unsigned long cp = 0, min = 0;
        int ok = 1, digits;
        n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (n == 0 || len - i < n) {
            put(o, in[i++]);
            continue;
        }
        cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
        min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
        for (k = 1; k < n; k++) {
            if ((in[i + k] & 0xC0) != 0x80)
                ok = 0;
            cp = cp << 6 | (in[i + k] & 0x3F);
        }
        if (!ok || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            put(o, in[i++]);
            continue;
        }
        put(o, '%');
        put(o, 'u');
        for (digits = cp > 0xFFFFF ? 6 : cp > 0xFFFF ? 5 : 4; digits > 0; digits--)
            put(o, (unsigned char)hex[(cp >> (4 * (digits - 1))) & 0xF]);
        i += n;
    }
}

static void ref_remove_nulls(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    size_t i;
    for (i = 0; i < len; i++)
        if (in[i] != 0)
            put(o, in[i]);
}

static void ref_lowercase(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    size_t i;
    for (i = 0; i < len; i++)
        put(o, (in[i] >= 'A' && in[i] <= 'Z') ? (unsigned char)(in[i] + 32) : in[i]);
}

static void ref_uppercase(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    size_t i;
    for (i = 0; i < len; i++)
        put(o, (in[i] >= 'a' && in[i] <= 'z') ? (unsigned char)(in[i] - 32) : in[i]);
}

static void ref_compress_ws(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    size_t i;
    int run = 0;
    for (i = 0; i < len; i++) {
        if (ws(in[i]) || in[i] == 0xA0) {
            if (!run)
                put(o, ' ');
            run = 1;
        } else {
            run = 0;
            put(o, in[i]);
        }
    }
}

static void ref_remove_ws(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    size_t i;
    for (i = 0; i < len; i++)
        if (!ws(in[i]) && in[i] != 0xA0)
            put(o, in[i]);
}

static size_t css_newline(const unsigned char *in, size_t len, size_t i)
{
    if (i >= len)
        return 0;
    if (in[i] == '\r')
        return i + 1 < len && in[i + 1] == '\n' ? 2 : 1;
    return in[i] == '\n' || in[i] == '\f';
}

static void ref_css(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    size_t i = 0, n, nl;
    while (i < len) {
        if (in[i] != '\\') {
            put(o, in[i++]);
            continue;
        }
        i++;
        if (i == len)
            break;
        for (n = 0; n < 6 && i + n < len && hexv(in[i + n]) >= 0; n++)
            ;
        if (n == 0) {
            nl = css_newline(in, len, i);
            if (nl)
                i += nl;
            else
                put(o, in[i++]);
            continue;
        }
        put(o, wide_byte(hex_value(in + i, n)));
        i += n;
        nl = css_newline(in, len, i);
        if (nl)
            i += nl;
        else if (i < len && (in[i] == ' ' || in[i] == '\t'))
            i++;
    }
}

static int control(unsigned char c)
{
    const char *k = strchr("a\ab\bf\fn\nr\rt\tv\v", c);
    return c && k && (k - "a\ab\bf\fn\nr\rt\tv\v") % 2 == 0 ? k[1] : -1;
}

static void ref_js(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    size_t i = 0, n;
    while (i < len) {
        unsigned char c;
        unsigned v = 0;
        if (in[i] != '\\' || i + 1 == len) {
            put(o, in[i++]);
            continue;
        }
        c = in[i + 1];
        if (c == 'u' && hex_run(in + i + 2, len - i - 2, 4)) {
            put(o, wide_byte(hex_value(in + i + 2, 4)));
            i += 6;
        } else if (c == 'x' && hex_run(in + i + 2, len - i - 2, 2)) {
            put(o, (unsigned char)hex_value(in + i + 2, 2));
            i += 4;
        } else if (c >= '0' && c <= '7') {
            for (n = 0; n < 3 && i + 1 + n < len && in[i + 1 + n] >= '0' && in[i + 1 + n] <= '7'; n++)
                ;
            if (n == 3 && c > '3')
                n = 2;
            for (v = 0; n > 0; n--, i++)
                v = v * 8 + (unsigned)(in[i + 1] - '0');
            put(o, (unsigned char)v);
            i++;
        } else {
            put(o, control(c) >= 0 ? (unsigned char)control(c) : c);
            i += 2;
        }
    }
}

static void ref_escape_seq(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    size_t i = 0, n;
    while (i < len) {
        unsigned char c;
        unsigned v;
        if (in[i] != '\\' || i + 1 == len) {
            put(o, in[i++]);
            continue;
        }
        c = in[i + 1];
        if (c == '\\' || c == '?' || c == '\'' || c == '"' || control(c) >= 0) {
            put(o, control(c) >= 0 ? (unsigned char)control(c) : c);
            i += 2;
        } else if ((c == 'x' || c == 'X') && hex_run(in + i + 2, len - i - 2, 2)) {
            put(o, (unsigned char)hex_value(in + i + 2, 2));
            i += 4;
        } else if (c >= '0' && c <= '7') {
            for (n = 0, v = 0; n < 3 && i + 1 + n < len && in[i + 1 + n] >= '0' && in[i + 1 + n] <= '7'; n++)
                v = v * 8 + (unsigned)(in[i + 1 + n] - '0');
            put(o, (unsigned char)v);
            i += 1 + n;
        } else {
            put(o, c);
            i += 2;
        }
    }
}

static int b64v(unsigned char c)
{
    const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *k = c ? strchr(a, c) : NULL;
    return k ? (int)(k - a) : -1;
}

static void ref_b64(const unsigned char *in, size_t len, ref_out_t *o, int skip)
{
    unsigned long bits = 0;
    int nbits = 0;
    size_t i;
    for (i = 0; i < len; i++) {
        int v = b64v(in[i]);
        if (v < 0) {
            if (skip)
                continue;
            break;
        }
        bits = (bits << 6 | (unsigned long)v) & 0xFFFFFF;
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            put(o, (unsigned char)(bits >> nbits));
        }
    }
}

static void ref_base64(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    ref_b64(in, len, o, 0);
}

static void ref_base64_ext(const unsigned char *in, size_t len, const int *map, ref_out_t *o)
{
    ref_b64(in, len, o, 1);
}

/* ------------------------------------------------------------------------ */
/* the cases                                                                */

typedef struct {
    const char *name;
    ref_fn ref;
    const char *const *frags; /* fragments its inputs are made of */
} tfn_case_t;

static const char *const url_frags[] = {
    "%", "%u", "%U", "%4", "%41", "%zz", "%u004", "%uFF1C", "%uff41", "+", "++", "a", "Z", "0",
    "f", "%%", "%2", "%u12345", "\xC3", NULL };
static const char *const cmd_frags[] = {
    "\\", "\"", "'", "^", " ", ",", ";", "\t", "\r", "\n", "/", "(", "A", "Z", "a", "z", "@",
    "C^MD", " /c", "  (", "x", "\x80", "\xC1", "[", "`", NULL };
static const char *const html_frags[] = {
    "&", "&#", "&#x", "&#X", "&#;", "&#x;", "&lt", "&LT;", "&amp;", "&quot", "&nbsp;", "&apos;",
    "&foo;", "&#65", "&#x41;", "&#99999999999999999999;", ";", "a", "1", "f", "#", NULL };
static const char *const utf8_frags[] = {
    "\xC2", "\xC3\xA9", "\xDF\xBF", "\xE0\xA0\x80", "\xE2\x82\xAC", "\xED\xA0\x80",
    "\xEF\xBF\xBF", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5",
    "\xC0\xAF", "\xC1", "\x80", "\xBF", "\xFF", "a", "%u", NULL };
static const char *const ws_frags[] = {
    " ", "  ", "\t", "\n", "\v", "\f", "\r", "\xA0", "\x08", "\x0E", "\x1F", "a", "!", "\x9F",
    "\xA1", "\x20\xA0", NULL };
static const char *const case_frags[] = {
    "A", "Z", "a", "z", "@", "[", "`", "{", "\xC1", "\xE1", "\x41\x61", "MiXeD", "\x00", NULL };
static const char *const nul_frags[] = { "", "a", "\x01", "\xFF", "0", NULL }; /* "" = NUL */
static const char *const bs_frags[] = {
    "\\", "\\\\", "\\u", "\\u0041", "\\uff1c", "\\uFF1C", "\\x", "\\x4", "\\x41", "\\X41",
    "\\0", "\\7", "\\101", "\\400", "\\777", "\\3", "\\a", "\\n", "\\q", "\\?", "\\'",
    "\\\"", "\\3c ", "\\3C\t", "\\41\r\n", "\\\n", "\\\r", "\\\f", "\\ffffff", "\\1234567",
    "a", "f", "0", " ", "\r", NULL };
static const char *const b64_frags[] = {
    "QUJD", "YQ==", "Zm9v", "+", "/", "=", " ", "*", "\n", "A", "z", "9", NULL };

static const tfn_case_t cases[] = {
    { "urlDecode", ref_url_decode, url_frags },
    { "urlDecodeUni", ref_url_decode_uni, url_frags },
    { "cmdLine", ref_cmd_line, cmd_frags },
    { "htmlEntityDecode", ref_html, html_frags },
    { "utf8toUnicode", ref_utf8, utf8_frags },
    { "removeNulls", ref_remove_nulls, nul_frags },
    { "lowercase", ref_lowercase, case_frags },
    { "uppercase", ref_uppercase, case_frags },
    { "compressWhitespace", ref_compress_ws, ws_frags },
    { "removeWhitespace", ref_remove_ws, ws_frags },
    { "cssDecode", ref_css, bs_frags },
    { "jsDecode", ref_js, bs_frags },
    { "escapeSeqDecode", ref_escape_seq, bs_frags },
    { "base64Decode", ref_base64, b64_frags },
    { "base64DecodeExt", ref_base64_ext, b64_frags },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static unsigned long lcg(unsigned long *s)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return *s >> 33;
}

static size_t frag_len(const char *f)
{
    return f[0] ? strlen(f) : 1;
}

/* A small unicode map: a few entries, so urlDecodeUni's lookups are seen. */
static const int *test_map(void)
{
    static int map[65536];
    int i;
    for (i = 0; i < 65536; i++)
        map[i] = -1;
    map[0xFF1C] = '[';
    map[0x0041] = 'q';
    map[0x12345 & 0xFFFF] = ' ';
    map[0x00E9] = 'e';
    return map;
}

/* Run the case on in (copied to a malloc'd buffer of exactly in_len bytes)
 * and compare with the reference. */
static void check_one(const tfn_case_t *c, const unsigned char *in, size_t len, const int *map,
                      apr_pool_t *pool)
{
    const bw_tfn_def_t *def = bw_tfn_lookup(c->name);
    bw_tfn_env_t env;
    ref_out_t want;
    char *copy = malloc(len ? len : 1);
    bw_str_t out;
    void *mark, *after;
    int ret, same;

    ck_assert_ptr_nonnull(def);
    memcpy(copy, in, len);
    want.b = malloc(len * 6 + 8);
    want.n = 0;
    c->ref(in, len, map, &want);
    env.unicode_map = map;
    apr_pool_clear(pool);
    mark = apr_palloc(pool, 1);
    apr_pool_clear(pool);
    ret = def->fn(&env, pool, bw_str_n(copy, len), &out);
    after = apr_palloc(pool, 1);
    same = want.n == len && memcmp(want.b, in, len) == 0;
    if (out.len != want.n || memcmp(out.data, want.b, want.n) != 0 || ret != !same) {
        size_t k;
        fprintf(stderr, "%s on %zu bytes:", c->name, len);
        for (k = 0; k < len; k++)
            fprintf(stderr, " %02x", in[k]);
        fprintf(stderr, "\n  got (ret %d):", ret);
        for (k = 0; k < out.len; k++)
            fprintf(stderr, " %02x", (unsigned char)out.data[k]);
        fprintf(stderr, "\n  want:");
        for (k = 0; k < want.n; k++)
            fprintf(stderr, " %02x", want.b[k]);
        fprintf(stderr, "\n");
        ck_abort_msg("%s differs from the reference (see stderr)", c->name);
    }
    if (same) {
        ck_assert_msg(out.data == copy && out.len == len, "%s: unchanged but not the input",
                      c->name);
        ck_assert_msg(after == mark, "%s: unchanged but allocated", c->name);
    }
    free(want.b);
    free(copy);
}

/* Random concatenations of the case's fragments and filler bytes. */
START_TEST(test_random)
{
    const tfn_case_t *c = &cases[_i];
    unsigned long s = 0xd1ff0000UL + (unsigned long)_i;
    const int *map = test_map();
    unsigned char buf[400];
    size_t nfrag = 0, len, target;
    apr_pool_t *pool;
    int k;

    while (c->frags[nfrag])
        nfrag++;
    apr_pool_create(&pool, root_pool);
    for (k = 0; k < 20000; k++) {
        target = lcg(&s) % (k % 4 == 0 ? 301 : 40);
        len = 0;
        while (len < target) {
            unsigned long pick = lcg(&s) % (nfrag + 3);
            if (pick >= nfrag) { /* filler: plain text, sometimes any byte */
                buf[len++] = pick == nfrag ? (unsigned char)lcg(&s) : (unsigned char)('a' + lcg(&s) % 26);
                continue;
            }
            if (len + frag_len(c->frags[pick]) > 300)
                break;
            memcpy(buf + len, c->frags[pick][0] ? c->frags[pick] : "\0", frag_len(c->frags[pick]));
            len += frag_len(c->frags[pick]);
        }
        check_one(c, buf, len, (k & 1) ? map : NULL, pool);
    }
    apr_pool_destroy(pool);
}
END_TEST

/* Every fragment at every offset 0..40 of a plain filler of every length up
 * to 50, so each special byte meets each block position and tail length;
 * then long runs of each fragment, and each fragment cut short at the end. */
START_TEST(test_adversarial)
{
    const tfn_case_t *c = &cases[_i];
    unsigned char buf[4200];
    const int *map = test_map();
    apr_pool_t *pool;
    size_t f, off, len, flen, k;

    apr_pool_create(&pool, root_pool);
    for (f = 0; c->frags[f]; f++) {
        const char *frag = c->frags[f][0] ? c->frags[f] : "\0";
        flen = frag_len(c->frags[f]);
        for (len = 0; len <= 50; len++) {
            for (off = 0; off <= len && off <= 40; off++) {
                memset(buf, 'k', len + flen);
                memcpy(buf + off, frag, flen);
                check_one(c, buf, len + flen, map, pool);
                check_one(c, buf, off + flen - (flen > 1), NULL, pool); /* cut at the end */
            }
        }
        for (k = 0; k + flen <= 4096; k += flen)
            memcpy(buf + k, frag, flen);
        check_one(c, buf, k, NULL, pool);
        check_one(c, buf, k, map, pool);
        check_one(c, buf + 1, k - 1, NULL, pool);
    }
    for (k = 0; k < 256; k++)
        buf[k] = (unsigned char)k;
    for (len = 0; len <= 256; len++)
        check_one(c, buf + 256 - len, len, map, pool);
    apr_pool_destroy(pool);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* tfn_simd.h                                                               */

static const unsigned char ranges[][2] = {
    { 0, 0 }, { 0, 0x7F }, { 'A', 'Z' }, { '\t', '\r' }, { 0x7F, 0x7F }, { 0x80, 0x80 },
    { 0xC2, 0xF4 }, { 0x80, 0xFF }, { 0xFF, 0xFF }, { 'a', 'z' }, { 1, 1 },
};

/* Every byte value at every position of a block whose other bytes are all
 * of one other value: flags, mask and xor_where against plain loops. */
START_TEST(test_simd_ops)
{
    unsigned lo = ranges[_i][0], hi = ranges[_i][1];
    char block[TFN_BLOCK], got[TFN_BLOCK];
    unsigned c, other, pos, want, j;

    for (c = 0; c < 256; c++) {
        for (other = 0; other < 256; other += 17) {
            for (pos = 0; pos < TFN_BLOCK; pos++) {
                tfn_v_t v, f;
                memset(block, (int)other, sizeof(block));
                block[pos] = (char)c;
                v = tfn_v_load(block);
                f = tfn_v_range(v, (unsigned char)lo, (unsigned char)hi);
                want = 0;
                for (j = 0; j < TFN_BLOCK; j++)
                    if ((unsigned char)block[j] >= lo && (unsigned char)block[j] <= hi)
                        want |= 1u << j;
                ck_assert_msg(tfn_v_mask(f) == want, "range %02x-%02x, byte %02x at %u in %02x",
                              lo, hi, c, pos, other);
                ck_assert_uint_eq(tfn_v_mask(tfn_v_eq(v, (unsigned char)c)) & (1u << pos),
                                  1u << pos);
                ck_assert_uint_eq(tfn_v_mask(tfn_v_or(f, tfn_v_eq(v, (unsigned char)other))),
                                  want | (c == other ? 0xFFFFu : (0xFFFFu & ~(1u << pos))));
                tfn_v_store(got, tfn_v_xor_where(v, f, 0x5A));
                for (j = 0; j < TFN_BLOCK; j++)
                    ck_assert_int_eq((unsigned char)got[j],
                                     (unsigned char)block[j] ^ ((want >> j) & 1 ? 0x5A : 0));
            }
        }
    }
    tfn_v_store(got, tfn_v_zero());
    for (j = 0; j < TFN_BLOCK; j++)
        ck_assert_int_eq(got[j], 0);
}
END_TEST

TFN_PRED(pred_nul)
{
    return tfn_v_eq(v, 0);
}

/* tfn_find and tfn_flip_case_copy at every start and length up to 70, on
 * buffers of exactly that length. */
START_TEST(test_simd_scans)
{
    unsigned long s = 0x5ca11UL;
    size_t n, i, k, want;
    int round;

    for (round = 0; round < 200; round++) {
        for (n = 0; n <= 70; n++) {
            char *p = malloc(n ? n : 1), *d = malloc(n ? n : 1);
            for (k = 0; k < n; k++)
                p[k] = (char)(lcg(&s) % 5 == 0 ? 0 : "aZ@[`{Az"[lcg(&s) % 8]);
            for (i = 0; i <= n; i++) {
                for (want = i; want < n && p[want] != 0; want++)
                    ;
                ck_assert_uint_eq(tfn_find(p, i, n, pred_nul), want);
                for (want = i; want < n && !(p[want] >= 'A' && p[want] <= 'Z'); want++)
                    ;
                ck_assert_uint_eq(tfn_find(p, i, n, tfn_v_upper), want);
            }
            tfn_flip_case_copy(d, p, n, tfn_v_upper);
            for (k = 0; k < n; k++)
                ck_assert_int_eq(d[k], p[k] >= 'A' && p[k] <= 'Z' ? p[k] + 32 : p[k]);
            tfn_flip_case_copy(d, p, n, tfn_v_lower);
            for (k = 0; k < n; k++)
                ck_assert_int_eq(d[k], p[k] >= 'a' && p[k] <= 'z' ? p[k] - 32 : p[k]);
            free(p);
            free(d);
        }
    }
}
END_TEST

/* bw_byteset_of on long and adversarial values: single bytes repeated,
 * every byte value once, lengths around the loops' switch points. */
START_TEST(test_byteset_long)
{
    unsigned char buf[600];
    bw_byteset_t got, want;
    size_t len, i;
    unsigned c;

    for (c = 0; c < 256; c += 5) {
        for (len = 0; len < 70; len++) {
            memset(buf, (int)c, len);
            memset(&want, 0, sizeof(want));
            if (len)
                want.w[c / 64] = (uint64_t)1 << (c % 64);
            bw_byteset_of(bw_str_n((const char *)buf, len), &got);
            ck_assert(memcmp(&got, &want, sizeof(got)) == 0);
        }
    }
    for (len = 0; len <= 600; len++) {
        memset(&want, 0, sizeof(want));
        for (i = 0; i < len; i++) {
            buf[i] = (unsigned char)(i * 7 + len);
            want.w[buf[i] / 64] |= (uint64_t)1 << (buf[i] % 64);
        }
        bw_byteset_of(bw_str_n((const char *)buf, len), &got);
        ck_assert_msg(memcmp(&got, &want, sizeof(got)) == 0, "length %zu", len);
    }
}
END_TEST

static Suite *diff_suite(void)
{
    Suite *s = suite_create("transformations, fast paths against references");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_random, 0, (int)N_CASES);
    tcase_add_loop_test(tc, test_adversarial, 0, (int)N_CASES);
    tcase_add_loop_test(tc, test_simd_ops, 0, (int)(sizeof(ranges) / sizeof(ranges[0])));
    tcase_add_test(tc, test_simd_scans);
    tcase_add_test(tc, test_byteset_long);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    apr_initialize();
    apr_pool_create(&root_pool, NULL);
    sr = srunner_create(diff_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(root_pool);
    apr_terminate();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
