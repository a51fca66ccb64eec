/*
 * Where an SQL injection can start in a value: the contexts of @detectSQLi
 * (the grammar that reads the SQL from there is bw_sqli.c, the tokenizer
 * bw_sqli_lex.c).
 *
 * An application pastes a value into SQL in one of a few places; the value
 * is read as the continuation of each:
 *   as-is      WHERE id = <value>          (numbers, identifiers, ORDER BY)
 *   '          WHERE name = '<value>'      the literal ends at the first '
 *   "          WHERE name = "<value>"      (MySQL strings, other dialects' names)
 *   `          ORDER BY `<value>`          (MySQL identifiers)
 * In a quoted context the bytes up to the first unescaped closing quote are
 * the rest of the application's literal; that is the breakout point, and
 * everything after it is read as SQL. A context whose quote never closes
 * cannot break out and is skipped.
 *
 * Comment-glued. A closed block comment is SQL (and C) syntax that prose,
 * names, paths and URLs do not contain; attackers use it to glue SQL onto
 * text the application adds or that their payload has to pass through.
 * The classic is a path whose segments are routed into a query: in
 * "/post/%2A/%2A/2+union+all/bar" the two "*" segments and the slashes
 * around them decode to slash-star-slash-star-slash, one comment that
 * swallows the separators, and "2 union all" follows it. So the value is also read,
 * in the as-is context, from the token right after a closed block comment
 * and from a number glued to the front of one ("/item/5/" + "**" + "/union
 * ..."). From such a restart point one more piece of evidence counts: a
 * number followed by UNION and ALL, DISTINCT or SELECT, the head of a set
 * operation, even when what follows is cut off (the path's next segment).
 * Prose writes "2 union all-stars", but never behind a comment. Only the
 * first GLUE_MAX comments are tried, so the cost stays linear.
 *
 * Sandwich. In a quoted context, when the grammar finds no evidence, a
 * loose pass looks for an expression spliced into the literal: the literal
 * closes, an operator, an expression of several terms or a call, an
 * operator, and the quote opens again near the end ("' + sleep(1) + '",
 * "\" | type x | \"").
 */
#include <string.h>
#include "bw_sqli.h"
#include "bw_sqli_int.h"
#include "bw_sqli_lex.h"

#define SANDWICH_TAIL 64          /* longest literal re-opened at the end */
#define GLUE_MAX 8                /* block comments tried as restart points */

typedef struct {
    char fp[BW_SQLI_FP_MAX + 1];
    unsigned n;
} fp_buf_t;

static void fp_add(fp_buf_t *f, unsigned char cls)
{
    if (f->n < BW_SQLI_FP_MAX)
        f->fp[f->n++] = (char)cls;
}

static unsigned char quote_of(int ctx)
{
    return ctx == BW_SQLI_CTX_SQUOTE ? '\'' : ctx == BW_SQLI_CTX_DQUOTE ? '"' : '`';
}

/* The loose pass of the sandwich rule over the bytes between the breakout
 * and the last quote, ignoring what SQL would reject. "." counts as an
 * operator (PHP/Perl concatenation: '.sleep(5).'); the outer operators may
 * be blanks (a "+" decoded by t:urlDecodeUni) when the middle holds a call
 * or a sensitive name (user, @@version). */
static int sandwich(const unsigned char *s, size_t len, size_t start, int ctx,
                    bw_sqli_result_t *res)
{
    unsigned char q = quote_of(ctx);
    size_t end = len;
    unsigned ops = 0, operands = 0, calls = 0, n = 0;
    int first_op = 0, last_op = 0, hit;
    fp_buf_t f;
    sq_lex_t lx;
    sq_tok_t t;

    while (end > start && s[end - 1] != q)
        end--;
    if (end <= start || len - end > SANDWICH_TAIL)
        return 0;
    f.n = 0;
    fp_add(&f, ctx == BW_SQLI_CTX_BACKTICK ? SQ_QIDENT : SQ_STR);
    sq_lex_init(&lx, s, end - 1, start);
    while (sq_lex_next(&lx, &t)) {
        int is_op = t.cls == SQ_OP || t.cls == SQ_LOGIC || t.cls == SQ_CMP || t.cls == SQ_DOT;
        fp_add(&f, t.cls);
        if (t.cls == SQ_CMT || t.cls == SQ_STR)
            return 0;
        if (n++ == 0)
            first_op = is_op;
        else if (is_op)
            ops++;
        if (strchr("nwivtf", t.cls) != NULL)
            operands++;
        calls += t.cls == SQ_FUNC || (t.flags & SQF_SENSITIVE) != 0;
        if (t.cls != SQ_BAD)
            last_op = is_op;
    }
    if (n == 0)
        return 0;
    if (first_op && last_op)
        hit = calls > 0 || (ops >= 2 && operands >= 2);
    else
        hit = calls > 0 && (first_op || s[start] == ' ') && (last_op || s[end - 2] == ' ');
    if (hit && res != NULL) {
        fp_add(&f, SQ_STR);
        memcpy(res->fingerprint, f.fp, f.n);
        res->fingerprint[f.n] = '\0';
        res->context = ctx;
        res->evidence = BW_SQLI_EV_SANDWICH;
    }
    return hit;
}

static int run_quoted(const unsigned char *s, size_t len, int ctx, bw_sqli_result_t *res)
{
    size_t start = sq_lex_skip_quoted(s, len, 0, quote_of(ctx));

    if (start >= len)
        return 0;                 /* never closed, or nothing after it */
    return sq_walk(s, len, start, ctx, res) || sandwich(s, len, start, ctx, res);
}

/* A byte that continues an identifier (as the tokenizer reads them). */
static int word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '_' || c == '$' || c >= 0x80;
}

/* The start of a decimal number that ends right at pos ("5" in "/item/5"
 * before a comment), or pos when the bytes before pos are not one. */
static size_t number_before(const unsigned char *s, size_t pos)
{
    size_t p = pos;
    while (p > 0 && s[p - 1] >= '0' && s[p - 1] <= '9')
        p--;
    if (p == pos || (p > 0 && word_byte(s[p - 1])))
        return pos;               /* no digits, or the tail of a word (v5, x2) */
    return p;
}

/* The offset of the first "ab" at or after p, or len. It looks for the
 * second byte: memchr is much faster than memmem for a two-byte needle,
 * and "*" is rarer than "/" in text and paths. */
static size_t find_pair(const unsigned char *s, size_t len, size_t p, unsigned char a,
                        unsigned char b)
{
    p++;
    while (p < len) {
        const unsigned char *q = memchr(s + p, b, len - p);
        if (q == NULL)
            return len;
        p = (size_t)(q - s);
        if (s[p - 1] == a)
            return p - 1;
        p++;
    }
    return len;
}

/* The comment-glued context: restarts around the first GLUE_MAX closed
 * block comments (MySQL's versioned comments are SQL, not comments). */
static int run_glued(const unsigned char *s, size_t len, bw_sqli_result_t *res)
{
    size_t p = 0;
    unsigned tried = 0;

    while (tried < GLUE_MAX) {
        size_t cs = find_pair(s, len, p, '/', '*'), ce, num;

        if (cs + 2 >= len)
            return 0;             /* none, or nothing after the opener */
        if (s[cs + 2] == '!') {
            p = cs + 3;
            continue;
        }
        ce = find_pair(s, len, cs + 2, '*', '/') + 2;
        if (ce > len)
            return 0;             /* unclosed: it runs to the end */
        tried++;
        num = number_before(s, cs);
        if (num > 0 && num < cs && sq_walk(s, len, num, BW_SQLI_CTX_GLUED, res))
            return 1;             /* (at 0 the as-is context has read it) */
        if (ce < len && sq_walk(s, len, ce, BW_SQLI_CTX_GLUED, res))
            return 1;
        p = ce;
    }
    return 0;
}

int bw_sqli_detect(bw_str_t value, bw_sqli_result_t *res)
{
    return !bw_sqli_fast_clean(value) && bw_sqli_detect_full(value, res);
}

int bw_sqli_detect_full(bw_str_t value, bw_sqli_result_t *res)
{
    const unsigned char *s = (const unsigned char *)value.data;
    size_t n = value.len;

    if (n == 0)
        return 0;
    if (sq_walk(s, n, 0, BW_SQLI_CTX_ASIS, res))
        return 1;
    if (memchr(s, '\'', n) != NULL && run_quoted(s, n, BW_SQLI_CTX_SQUOTE, res))
        return 1;
    if (memchr(s, '"', n) != NULL && run_quoted(s, n, BW_SQLI_CTX_DQUOTE, res))
        return 1;
    if (memchr(s, '`', n) != NULL && run_quoted(s, n, BW_SQLI_CTX_BACKTICK, res))
        return 1;
    return run_glued(s, n, res);
}

const char *bw_sqli_evidence_name(unsigned evidence)
{
    static const char *const names[] = {
        "union", "stack", "subquery", "call", "cond", "clause", "comment", "sandwich"
    };
    unsigned i;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (evidence == (1u << i))
            return names[i];
    return "none";
}

const char *bw_sqli_context_name(int context)
{
    switch (context) {
    case BW_SQLI_CTX_ASIS: return "as-is";
    case BW_SQLI_CTX_SQUOTE: return "single-quote";
    case BW_SQLI_CTX_DQUOTE: return "double-quote";
    case BW_SQLI_CTX_BACKTICK: return "backtick";
    case BW_SQLI_CTX_GLUED: return "comment-glued";
    default: return "none";
    }
}
