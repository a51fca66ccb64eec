/*
 * The fast path of @detectSQLi: one pass over the bytes that proves, for
 * most benign values (names, dotted and hyphenated keys, numbers, dates,
 * codes, e-mail addresses, URLs, plain words and phrases), that the full
 * reading (bw_sqli_ctx.c, bw_sqli.c) cannot find evidence, so it need not
 * run. It may only ever say "maybe": when it answers "clean" the detector
 * would have answered "no injection"; tests/detect/detect_diff.c and the
 * fuzz target check that against the detector without the fast path.
 *
 * Why it is sound. Evidence is only ever set through ev() in bw_sqli.c or
 * by the sandwich pass in bw_sqli_ctx.c; reading every call back to the
 * tokens that lead to it, a match needs at least one of:
 *   - a quote ' " ` : the quoted contexts, the sandwich pass, strings
 *     (INTO OUTFILE '..', WAITFOR DELAY '..', N'..' introducers); but see
 *     below for one single quote;
 *   - "(" or ")": calls, subqueries, empty argument lists (version());
 *   - a comment ("--", "#", slash-star; a closed block comment is also
 *     the comment-glued context and the versioned comment's SQL), "@@" +
 *     a name (a sensitive variable), "&&" / "||" (logical operators);
 *   - a word token that the tokenizer classes as a logical operator
 *     (AND OR XOR), SELECT, a statement keyword (the whole Q class), or one
 *     of the clause keywords whose operand is evidence (GROUP, ORDER,
 *     HAVING, LIMIT, OFFSET). UNION needs SELECT or "(" after it outside
 *     the comment-glued context; INTO needs OUTFILE and a string,
 *     PROCEDURE a call; ";" leads on only to SELECT, a statement keyword
 *     or a comment; nothing else reaches ev().
 * Without quotes and without slash-star the as-is reading from offset 0
 * is the only one (bw_sqli_detect() runs no other context), so the words
 * that matter are the word tokens of that one tokenization. The keywords
 * above are all letters, and a word token runs to the end of its run of
 * identifier bytes (the tokenizer's is_ident(): letters, digits, "_", "$",
 * bytes >= 0x80); so a keyword token is the trailing letters of a run. The
 * tokenizer starts a token inside a run only where a number ends (after a
 * digit: "1or", "1e5or", "0b1or", "0xor" read as "0" + "xor"; after the
 * hex digits of a hex number, which starts a run: "0xfor" = "0xf" + "or")
 * or after a string, a quoted name, a comment or MySQL's "\N"; the first
 * three need a byte already listed (the one single quote let through
 * below opens a string that runs to the end) and "\N" is a stop pair here
 * ("\Nor" = "\N" + "or"). So trailing letters after "_", "$" or a byte >= 0x80 are
 * the tail of a longer word, and every other stretch of trailing letters
 * is checked, as are the letters after a hex number. Looking at more than
 * the tokenizer would ("0xf" + "or" after a ".") only costs the fast path
 * a value, never a verdict.
 * One single quote (an apostrophe: "O'Brien", "don't") is let through as
 * well. The as-is reading then ends in a string token from the quote to
 * the end (no second quote closes it); a string leads to evidence only
 * with one of the keywords above or as INTO OUTFILE '..', so OUTFILE and
 * DUMPFILE count as keywords then. The single-quote context reads the
 * bytes after the quote: its word tokens start where the scan looks (the
 * quote ends a run), it holds no string, and its sandwich pass finds no
 * second quote to close the expression.
 * The keyword list below must follow the tokenizer's table and the
 * grammar; bw_sqli_fast_words_ok() checks it against the table (unit test).
 */
#include <string.h>
#include "bw_sqli.h"
#include "bw_sqli_lex.h"

/* Byte classes; the last three are the identifier bytes (the tokenizer's
 * is_ident()). */
enum {
    C_SEP = 0,    /* no token the proof cares about starts here */
    C_STOP,       /* ' " ` ( ) # : the full detector decides (but one ' may
                     pass, see the header) */
    C_PAIR,       /* - / @ & | \ : a stop when followed by pair_of() */
    C_LETTER,     /* A-Z a-z */
    C_DIGIT,      /* 0-9 */
    C_IDENT       /* _ $ and bytes >= 0x80 (UTF-8 names) */
};

#define _ C_SEP
#define X C_STOP
#define P C_PAIR
#define L C_LETTER
#define D C_DIGIT
#define I C_IDENT
static const unsigned char byte_class[256] = {
    _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _,    /* 0x00 control, blanks */
    _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _,    /* 0x10 */
    _, _, X, X, I, _, P, X, X, X, _, _, _, P, _, P,    /*  !"#$%&'()*+,-./ */
    D, D, D, D, D, D, D, D, D, D, _, _, _, _, _, _,    /* 0-9 :;<=>? */
    P, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L,    /* @A-O */
    L, L, L, L, L, L, L, L, L, L, L, _, P, _, _, I,    /* P-Z [\]^_ */
    X, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L,    /* `a-o */
    L, L, L, L, L, L, L, L, L, L, L, _, P, _, _, _,    /* p-z {|}~ DEL */
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,    /* 0x80-0xff */
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,
};
#undef _
#undef X
#undef P
#undef L
#undef D
#undef I

#define WORD_MIN 2
#define WORD_MAX 8

/* The keywords that can lead to evidence (see the header), by length;
 * OUTFILE and DUMPFILE only in a value with a quote. */
static const char *const words[WORD_MAX + 1][10] = {
    [2] = {"or"},
    [3] = {"and", "set", "use", "xor"},
    [4] = {"call", "copy", "drop", "exec", "kill", "load", "show"},
    [5] = {"alter", "grant", "group", "limit", "order"},
    [6] = {"create", "delete", "having", "insert", "offset", "rename", "revoke", "select",
           "update"},
    [7] = {"declare", "execute", "handler", "outfile", "replace", "waitfor"},
    [8] = {"dumpfile", "shutdown", "truncate"},
};

/* Their first letters, by length: one test turns most words away.
 * bw_sqli_fast_words_ok() checks that it covers every word above. */
#define F(c) (1u << ((c) - 'a'))
static const unsigned long first_letters[WORD_MAX + 1] = {
    [2] = F('o'),
    [3] = F('a') | F('s') | F('u') | F('x'),
    [4] = F('c') | F('d') | F('e') | F('k') | F('l') | F('s'),
    [5] = F('a') | F('g') | F('l') | F('o'),
    [6] = F('c') | F('d') | F('h') | F('i') | F('o') | F('r') | F('s') | F('u'),
    [7] = F('d') | F('e') | F('h') | F('o') | F('r') | F('w'),
    [8] = F('d') | F('s') | F('t'),
};
#undef F

/* The second byte that makes a C_PAIR byte a stop: -- slash-star @@ && ||
 * and MySQL's \N (a NULL literal that ends a token inside a run). */
static unsigned char pair_of(unsigned char c)
{
    return c == '/' ? '*' : c == '\\' ? 'N' : c;
}

static int is_hex(unsigned char c)
{
    return byte_class[c] == C_DIGIT || (unsigned char)((c | 0x20) - 'a') <= 'f' - 'a';
}

/* What a keyword found means: nothing, a possible match, a possible
 * match if the value has a quote (OUTFILE, DUMPFILE). */
enum { F_NONE = 0, F_KEYWORD, F_QUOTED };

/* Is p[0..n) one of the keywords, in any case? F_NONE, F_KEYWORD or
 * F_QUOTED. ("| 0x20" lower-cases a letter and never turns another byte
 * into one.) */
static int keyword(const unsigned char *p, size_t n)
{
    const char *const *w;
    unsigned first;
    size_t j;

    if (n < WORD_MIN || n > WORD_MAX)
        return F_NONE;
    first = (unsigned char)((p[0] | 0x20) - 'a');
    if (first > 'z' - 'a' || !((first_letters[n] >> first) & 1))
        return F_NONE;
    for (w = words[n]; *w != NULL; w++) {
        for (j = 0; j < n && (unsigned char)(p[j] | 0x20) == (unsigned char)(*w)[j]; j++)
            ;
        if (j == n)
            return strcmp(*w, "outfile") == 0 || strcmp(*w, "dumpfile") == 0
                ? F_QUOTED : F_KEYWORD;
    }
    return F_NONE;
}

/* The letters s[t..e) with e = len or s[e] not an identifier byte: the
 * trailing letters of a run of identifier bytes. Can the tokenizer read a
 * keyword there? Only when its word token starts at t (a keyword is all
 * letters and a word runs to the end of its run), and it does only at the
 * run's start or right after a digit, i.e. unless s[t - 1] is "_", "$" or
 * a byte >= 0x80 (see the header). */
static int trailing_keyword(const unsigned char *s, size_t t, size_t e)
{
    return (t == 0 || byte_class[s[t - 1]] != C_IDENT) ? keyword(s + t, e - t) : F_NONE;
}

/* A hex number at the start of a run ("0x1f" + "or"): is there a keyword
 * right after its hex digits, the tokenizer's next word? */
static int keyword_after_hex(const unsigned char *s, size_t i, size_t len)
{
    size_t h = i + 3, e;

    if (len - i < 5 || (s[i + 1] | 0x20) != 'x' || !is_hex(s[i + 2])
        || (i > 0 && byte_class[s[i - 1]] >= C_LETTER))
        return F_NONE;
    while (h < len && is_hex(s[h]))
        h++;
    for (e = h; e < len && byte_class[s[e]] == C_LETTER; e++)
        ;
    return (e == len || byte_class[s[e]] < C_LETTER) ? keyword(s + h, e - h) : F_NONE;
}

int bw_sqli_fast_clean(bw_str_t value)
{
    const unsigned char *s = (const unsigned char *)value.data;
    size_t i = 0, len = value.len;
    int quotes = 0, found = F_NONE, f;

    while (i < len) {
        unsigned char c = s[i], k = byte_class[c];

        if (k == C_LETTER) {
            size_t t = i;
            while (++i < len && byte_class[s[i]] == C_LETTER)
                ;
            if ((i == len || byte_class[s[i]] < C_LETTER)
                && (f = trailing_keyword(s, t, i)) != F_NONE) {
                if (f == F_KEYWORD)
                    return 0;
                found = f;
            }
            continue;
        }
        if ((k == C_STOP && (c != '\'' || quotes++ > 0))
            || (k == C_PAIR && i + 1 < len && s[i + 1] == pair_of(c)))
            return 0;
        if (c == '0' && (f = keyword_after_hex(s, i, len)) != F_NONE) {
            if (f == F_KEYWORD)
                return 0;
            found = f;
        }
        i++;
    }
    return !(found == F_QUOTED && quotes > 0);
}

/* The classes and keyword ids that reach ev() in bw_sqli.c from a word
 * (OUTFILE with a string). */
static int word_leads_to_evidence(unsigned char cls, unsigned char kw)
{
    if (cls == SQ_LOGIC || cls == SQ_SELECT || cls == SQ_STMT)
        return 1;
    return cls == SQ_KW && (kw == KW_GROUP || kw == KW_ORDER || kw == KW_HAVING
                            || kw == KW_LIMIT || kw == KW_OFFSET || kw == KW_OUTFILE);
}

int bw_sqli_fast_words_ok(void)
{
    const char *name;
    unsigned char cls, kw;
    size_t i, j, listed = 0, needed = 0;

    for (i = 0; (name = sq_lex_keyword(i, &cls, &kw)) != NULL; i++) {
        int in_list = keyword((const unsigned char *)name, strlen(name)) != F_NONE;
        if (in_list != word_leads_to_evidence(cls, kw))
            return 0;
        needed += (size_t)in_list;
    }
    for (i = WORD_MIN; i <= WORD_MAX; i++)
        for (j = 0; words[i][j] != NULL; j++)
            listed += strlen(words[i][j]) == i;
    return listed == needed;     /* and nothing listed that is not a keyword */
}
