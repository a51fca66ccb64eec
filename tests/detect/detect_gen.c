/*
 * Random values for the fast-path differential test (detect_diff.c).
 *
 * A wrong proof in a fast path shows on values that it accepts, or nearly
 * does: so most values are built from what the fast paths accept (words,
 * every SQL keyword of the tokenizer's table in any case, HTML and CSS
 * words, numbers in each form the SQL tokenizer reads, separators, glued
 * pieces such as "1or" or "0xfor") with one or two of the bytes they stop
 * at slipped in at random places. The rest are mutations of corpus values
 * and plain random bytes.
 */
#include <string.h>
#include "detect_diff.h"
#include "detect/bw_sqli_lex.h"

/* Words the XSS detector reads, and SQL function names. */
static const char *const other_words[] = {
    "script", "iframe", "svg", "img", "form", "meta", "link", "style", "base",
    "onload", "onerror", "onclick", "onfoo", "online", "javascript", "vbscript",
    "data", "text/html", "image/svg+xml", "image/png", "expression", "url",
    "behavior", "-moz-binding", "@import", "srcdoc", "formaction", "action",
    "href", "src", "http-equiv", "attributename", "sleep", "version", "user",
    "benchmark", "load_file", "pg_sleep", "database", "concat", "char",
    "xp_cmdshell", "master", "information_schema", "all", "distinct",
};

static const char *const numbers[] = {
    "0", "1", "42", "203.26", ".5", "1.", "1e5", "1e+5", "2E-3", "1.e5", "0x1f",
    "0xf", "0XaB", "0x", "0b101", "0b2", "007", "1.2.3", "9", "3.14e",
};

/* Bytes both fast paths accept (a doubled "-", "/", "@" or "|" is not). */
static const char safe_bytes[] = " ._-+@$,/|!>*%?~^[]{}\t\n\r\v\f";

/* What the fast paths stop at, and a few constructs around them. */
static const char *const stoppers[] = {
    "'", "\"", "`", "(", ")", ";", "#", "--", "/*", "*/", "/*!", "@@", "&&",
    "||", "\\N", "\\", "<", "=", ":", "&", ">", "&colon;", "&#58;", "\\3a ",
    "<script>", "<a ", "=1", " or 1=1", "'--", "(1)", "@@version",
};

/* Skeletons of matches, token by token ("|" separates the tokens): joined
 * with blanks they match; joined with nothing, a dot, a comment or another
 * byte they may or may not, which is the edge a fast path must get right. */
static const char *const skeletons[] = {
    "1|or|1|=|1", "1|or|x|is|null", "1|or|true", "1|xor|1|like|1", "1|||1|=|1",
    "1|&&|true", "1|or|1|between|0|and|2", "1|or|1|in|1", "1|union|select|1",
    "a|union|select|b|from|c", "1|union|all|select|null", "1|order|by|1", "1|group|by|1",
    "1|limit|1", "1|offset|1", "1|having|1", "1|drop|table|x", "1|;|drop|table|x",
    "1|waitfor|delay|'0:0:5'", "1|and|sleep|(|1|)", "version|(|)", "@@version",
    "\\N|or|1|=|1", "0xf|or|1|=|1", "0b1|or|1|=|1", "1e5|or|1|=|1", ".5|or|1|=|1",
    "1.|or|.1|is|.5", "x|'|or|'1", "x|\"|or|1|--", "1|/*|x|*/|union|select|1",
    "/x/|/**/|2|union|all", "1|#|x", "1|--|x", "1|or|1|notnull",
    "x|;|drop|table|y", "x|;|select|1", "x|;|insert|into|t", "x|;|update|t|set",
    "x|;|shutdown", "x|or|1|=|1", "null|or|1|=|1", "x|'|or|true", "x|'|or|x|is|null",
    "x|'|order|by|1", "x|'|limit|1", "x|'|union|select|1", "x|'|drop|table|y",
    "x|into|outfile|'/tmp/x", "1|into|dumpfile|'a", "x|'|or|1|=|1|#", "x|'|;|select|1",
    "<script>", "<svg|onload=alert(1)>", "x|onclick=alert(1)", "javascript:alert(1)",
    "data:text/html,x", "x|\\3a|expression(1)", "x:expression(1)", "x&#58;expression(1)",
    "javascript&colon;alert(1)", "url(javascript:x)", "-moz-binding:url(x)",
    "behavior:url(x)", "<a|href=javascript:x>", "x|style=expression(1)", "-moz-binding:x",
    "x|-moz-binding:|y", "|javascript:alert(1)", "mocha:[1]", "mocha:x(1)", "livescript:[1]",
    "vbscript:{x}", "data:image/svg+xml,x", "a:b|-|moz|-binding:",
};

#define J(s) { s, sizeof(s) - 1 }
static const struct {
    const char *s;
    size_t n;
} joiners[] = {
    J(" "), J(" "), J(" "), J(""), J(""), J("."), J("\t"), J("\n"), J("/**/"), J("+"),
    J("-"), J("@"), J("_"), J("\v"), J("\0"), J("  "),
};
#undef J

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

uint64_t dd_rand(dd_rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static size_t pick(dd_rng_t *r, size_t n)
{
    return (size_t)(dd_rand(r) % n);
}

/* Insert s[0..n) at offset at of buf[0..len), within cap; the new length. */
static size_t put(unsigned char *buf, size_t len, size_t cap, size_t at,
                  const void *s, size_t n)
{
    if (at > len)
        at = len;
    if (n > cap - len)
        n = cap - len;
    memmove(buf + at + n, buf + at, len - at);
    memcpy(buf + at, s, n);
    return len + n;
}

/* A keyword of the SQL tokenizer's table, lower, upper or mixed case. */
static size_t sql_keyword(dd_rng_t *r, unsigned char *out, size_t cap)
{
    unsigned char cls, kw;
    size_t count = 0, i, n;
    const char *w;
    unsigned mode = (unsigned)pick(r, 3);

    while (sq_lex_keyword(count, &cls, &kw) != NULL)
        count++;
    w = sq_lex_keyword(pick(r, count), &cls, &kw);
    n = strlen(w) < cap ? strlen(w) : cap;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)w[i];
        if (c >= 'a' && c <= 'z' && (mode == 1 || (mode == 2 && (dd_rand(r) & 1))))
            c = (unsigned char)(c - 32);
        out[i] = c;
    }
    return n;
}

/* A made-up identifier: letters, "_", "$", digits, sometimes UTF-8. */
static size_t random_word(dd_rng_t *r, unsigned char *out, size_t cap)
{
    static const char alpha[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$0123456789";
    size_t n = 1 + pick(r, 10), i;

    if (n > cap)
        n = cap;
    for (i = 0; i < n; i++)
        out[i] = (unsigned char)(pick(r, 20) == 0 ? 0x80 + pick(r, 128)
                                 : (unsigned char)alpha[pick(r, sizeof(alpha) - 1)]);
    return n;
}

static size_t piece(dd_rng_t *r, unsigned char *out, size_t cap)
{
    const char *s;
    size_t k = pick(r, 20), n;

    if (k < 8)
        return sql_keyword(r, out, cap);
    if (k < 12)
        return random_word(r, out, cap);
    s = k < 16 ? numbers[pick(r, NELEM(numbers))] : other_words[pick(r, NELEM(other_words))];
    n = strlen(s) < cap ? strlen(s) : cap;
    memcpy(out, s, n);
    return n;
}

static size_t add_stoppers(dd_rng_t *r, unsigned char *buf, size_t len, size_t cap)
{
    size_t k, count = pick(r, 4) == 0 ? 0 : 1 + (pick(r, 3) == 0);

    for (k = 0; k < count; k++) {
        const char *s = stoppers[pick(r, NELEM(stoppers))];
        len = put(buf, len, cap, pick(r, len + 1), s, strlen(s));
    }
    return len;
}

/* Pieces glued directly or with one or two separators, then stoppers. */
static size_t gen_pieces(dd_rng_t *r, unsigned char *buf, size_t cap)
{
    size_t len = 0, k, count = 1 + pick(r, 8);

    for (k = 0; k < count && len < cap; k++) {
        len += piece(r, buf + len, cap - len);
        while (len < cap && pick(r, 4) != 0) {
            size_t b = pick(r, sizeof(safe_bytes) - 1);
            buf[len++] = (unsigned char)(pick(r, 30) == 0 ? 0 : safe_bytes[b]);
            if (pick(r, 3) != 0)
                break;
        }
    }
    return add_stoppers(r, buf, len, cap);
}

/* One edit: insert a piece, a stopper or a byte; delete or re-case a range. */
static size_t mutate(dd_rng_t *r, unsigned char *buf, size_t len, size_t cap)
{
    unsigned char tmp[32];
    size_t at = pick(r, len + 1), n, i;
    const char *s;

    switch (pick(r, 5)) {
    case 0:
        n = piece(r, tmp, sizeof(tmp));
        return put(buf, len, cap, at, tmp, n);
    case 1:
        s = stoppers[pick(r, NELEM(stoppers))];
        return put(buf, len, cap, at, s, strlen(s));
    case 2:
        tmp[0] = (unsigned char)pick(r, 256);
        return put(buf, len, cap, at, tmp, 1);
    case 3:
        n = at < len ? 1 + pick(r, len - at < 8 ? len - at : 8) : 0;
        memmove(buf + at, buf + at + n, len - at - n);
        return len - n;
    default:
        for (i = at; i < len && i < at + 8; i++)
            if ((buf[i] | 0x20) >= 'a' && (buf[i] | 0x20) <= 'z')
                buf[i] ^= 0x20;
        return len;
    }
}

/* A window of a corpus value, edited one to four times. */
static size_t gen_mutation(dd_rng_t *r, const apr_array_header_t *corpus,
                           unsigned char *buf, size_t cap)
{
    const bw_str_t *v = &APR_ARRAY_IDX(corpus, pick(r, (size_t)corpus->nelts), bw_str_t);
    size_t off = 0, len = v->len, k, edits = 1 + pick(r, 4);

    if (len > cap / 2) {
        off = pick(r, len - cap / 2 + 1);
        len = cap / 2;
    }
    memcpy(buf, v->data + off, len);
    for (k = 0; k < edits; k++)
        len = mutate(r, buf, len, cap);
    return len;
}

static size_t gen_bytes(dd_rng_t *r, unsigned char *buf, size_t cap)
{
    static const char some[] = "aorN1x0e.-/*@&|\\'\"`();#<=:> \t";
    size_t n = pick(r, 17), i;

    if (n > cap)
        n = cap;
    for (i = 0; i < n; i++)
        buf[i] = pick(r, 2) ? (unsigned char)some[pick(r, sizeof(some) - 1)]
                            : (unsigned char)pick(r, 256);
    return n;
}

/* A skeleton with random joiners and case, sometimes wrapped in pieces
 * and edited once. */
static size_t gen_skeleton(dd_rng_t *r, unsigned char *buf, size_t cap)
{
    const char *sk = skeletons[pick(r, NELEM(skeletons))];
    size_t len = 0, i;
    int upper = pick(r, 3) == 0;

    if (pick(r, 4) == 0)
        len += piece(r, buf, cap);
    for (; *sk != '\0' && len < cap; sk++) {
        if (*sk == '|') {
            size_t j = pick(r, NELEM(joiners));
            len = put(buf, len, cap, len, joiners[j].s, joiners[j].n);
        } else {
            buf[len++] = (unsigned char)*sk;
        }
    }
    if (pick(r, 4) == 0)
        len += piece(r, buf + len, cap - len);
    for (i = 0; i < len && upper; i++)
        if ((buf[i] | 0x20) >= 'a' && (buf[i] | 0x20) <= 'z' && pick(r, 2) == 0)
            buf[i] ^= 0x20;
    return pick(r, 3) == 0 ? mutate(r, buf, len, cap) : len;
}

size_t dd_gen(dd_rng_t *r, const apr_array_header_t *corpus, unsigned char *buf, size_t cap)
{
    size_t k = pick(r, 20);

    if (k < 5)
        return gen_skeleton(r, buf, cap);
    if (k < 10)
        return gen_pieces(r, buf, cap);
    if (k < 17 && corpus->nelts > 0)
        return gen_mutation(r, corpus, buf, cap);
    return gen_bytes(r, buf, cap);
}
