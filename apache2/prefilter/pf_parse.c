/*
 * The PCRE2 syntax walk of the @rx literal prefilter: a recursive-descent
 * reader of the regex subset rule sets use, computing for every part the
 * facts of pf_info.c on the way. It reads PCRE2 as the engine compiles it
 * (8-bit, no UTF, built-in tables, DOTALL): one class or literal is one byte.
 *
 * Safety comes from three habits: a part whose meaning is certain but
 * opaque (backreference, \p, \w, lookaround) is replaced by something that
 * matches *more* (anything, any byte, the empty string for zero-width
 * parts; \s and \d are their bytes under the built-in tables); a
 * construct not understood, or whose meaning differs between PCRE2
 * versions, stops the walk (pf_parse returns -1 and the regex always
 * runs); in fold mode (some part is caseless) every byte is ASCII-lowered,
 * as the caller lowers the subject, and bytes >= 0x80 become "any byte":
 * PCRE2's built-in tables fold none of them, but other tables could.
 */
#include <string.h>
#include "pf_parse.h"

#define PF_MAX_DEPTH 200
#define PF_CLASS_MAX 10     /* largest class expanded into one-byte strings */

enum { ATOM_FAIL = -1, ATOM_FIXED = 0, ATOM_REPEATABLE = 1 };

typedef struct {
    uint32_t bits[8];
    int wild;               /* the set is not known exactly: any byte */
} pf_bytes_t;

static int parse_alt(pf_parser_t *ps, pf_info_t *out);

static int fail(pf_parser_t *ps, const char *why)
{
    if (!ps->why)
        ps->why = why;
    return ATOM_FAIL;
}

static int more(const pf_parser_t *ps, size_t n)
{
    return (size_t)(ps->end - ps->p) >= n;
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_word(unsigned char c)
{
    return bw_is_alnum(c) || c == '_';
}

static void bytes_add(pf_bytes_t *b, int c)
{
    b->bits[c >> 5] |= (uint32_t)1 << (c & 31);
}

static int bytes_has(const pf_bytes_t *b, int c)
{
    return (b->bits[c >> 5] >> (c & 31)) & 1;
}

/* --- from bytes to facts --- */

/* One position matching any byte of b. In fold mode the set is lowered; a
 * byte >= 0x80 there could fold under other tables, so the set is unknown. */
static pf_info_t info_from_bytes(const pf_parser_t *ps, const pf_bytes_t *b)
{
    pf_bytes_t low;
    pf_set_t s = pf_set_none();
    int c, n = 0;

    if (b->wild)
        return pf_info_any(ps->env);
    if (ps->fold) {
        memset(&low, 0, sizeof(low));
        for (c = 0; c < 256; c++) {
            if (!bytes_has(b, c))
                continue;
            if (c >= 0x80)
                return pf_info_any(ps->env);
            bytes_add(&low, (c >= 'A' && c <= 'Z') ? c + 32 : c);
        }
        b = &low;
    }
    for (c = 0; c < 256; c++)
        n += bytes_has(b, c);
    if (n == 0 || n > PF_CLASS_MAX)
        return pf_info_any(ps->env);
    for (c = 0; c < 256; c++) {
        if (!bytes_has(b, c))
            continue;
        if (s.n < 0)
            s = pf_set_byte(ps->env, (unsigned char)c);
        else
            pf_set_add(ps->env, &s, pf_set_byte(ps->env, (unsigned char)c).v[0]);
    }
    return pf_info_exact(s);
}

/* One literal byte: the common case, without building a set. */
static pf_info_t info_byte(const pf_parser_t *ps, int c)
{
    if (ps->fold && c >= 0x80)
        return pf_info_any(ps->env);
    if (ps->fold && c >= 'A' && c <= 'Z')
        c += 32;
    return pf_info_exact(pf_set_byte(ps->env, (unsigned char)c));
}

/* --- escapes --- */

/* The bytes of \s and \d as PCRE2 reads them with its built-in tables
 * (no UTF, no UCP): the six blanks 9-13 and 32, the ten ASCII digits. 1
 * when c is one of them, its bytes added to b. (\h and \v also match
 * 0xa0 or 0x85, \w and the negated ones are too large: any byte.) */
static int type_bytes(unsigned char c, pf_bytes_t *b)
{
    int k;
    if (c == 's') {
        for (k = 9; k <= 13; k++)
            bytes_add(b, k);
        bytes_add(b, ' ');
        return 1;
    }
    if (c == 'd') {
        for (k = '0'; k <= '9'; k++)
            bytes_add(b, k);
        return 1;
    }
    return 0;
}

/* Digits in base 8 or 16 up to a closing brace; the value must fit a byte. */
static int braced_number(pf_parser_t *ps, int base, int *v)
{
    int val = 0, nd = 0, d;
    if (!more(ps, 1) || *ps->p != '{')
        return fail(ps, "\\x or \\o without a valid number");
    ps->p++;
    while (more(ps, 1) && *ps->p != '}') {
        d = bw_hexval((char)*ps->p);
        if (d < 0 || d >= base)
            return fail(ps, "bad digit in \\x{} or \\o{}");
        val = val * base + d;
        if (val > 0xff)
            return fail(ps, "code point above 0xff");
        ps->p++;
        nd++;
    }
    if (!more(ps, 1) || nd == 0)
        return fail(ps, "unterminated \\x{} or \\o{}");
    ps->p++;
    *v = val;
    return 1;
}

/* Escapes that stand for one known byte: 1 with *v, 2 for "some byte not
 * worth pinning down", 0 when c is not such an escape, -1 on error. */
static int char_escape(pf_parser_t *ps, unsigned char c, int *v)
{
    int d, n;
    switch (c) {
    case 'a': *v = 0x07; return 1;
    case 'e': *v = 0x1b; return 1;
    case 'f': *v = 0x0c; return 1;
    case 'n': *v = 0x0a; return 1;
    case 'r': *v = 0x0d; return 1;
    case 't': *v = 0x09; return 1;
    case 'o': return braced_number(ps, 8, v);
    case '0':
        for (*v = 0, n = 0; n < 2 && more(ps, 1) && *ps->p >= '0' && *ps->p <= '7'; n++)
            *v = *v * 8 + (*ps->p++ - '0');
        return 1;
    case 'x':
        if (more(ps, 1) && *ps->p == '{')
            return braced_number(ps, 16, v);
        for (*v = 0, n = 0; n < 2 && more(ps, 1) && (d = bw_hexval((char)*ps->p)) >= 0; n++, ps->p++)
            *v = *v * 16 + d;
        return n > 0 ? 1 : 2;
    default:
        return 0;
    }
}

/* Skip the name of \p{..} / \pL. */
static int skip_property(pf_parser_t *ps)
{
    if (!more(ps, 1))
        return fail(ps, "\\p without a property");
    if (*ps->p != '{') {
        ps->p++;
        return 1;
    }
    while (more(ps, 1) && *ps->p != '}')
        ps->p++;
    if (!more(ps, 1))
        return fail(ps, "unterminated \\p{}");
    ps->p++;
    return 1;
}

/* Skip a name (word characters, signs) up to the closing delimiter. */
static int skip_name(pf_parser_t *ps, unsigned char close)
{
    const unsigned char *start = ps->p;
    while (more(ps, 1) && (is_word(*ps->p) || *ps->p == '+' || *ps->p == '-'))
        ps->p++;
    if (!more(ps, 1) || *ps->p != close || ps->p == start)
        return fail(ps, "malformed group name or reference");
    ps->p++;
    return 1;
}

/* The rest of \g.. or \k..: a reference or call, by number or name. */
static int skip_reference(pf_parser_t *ps, int numeric_ok)
{
    if (!more(ps, 1))
        return fail(ps, "\\g or \\k without a reference");
    switch (*ps->p++) {
    case '{': return skip_name(ps, '}');
    case '<': return skip_name(ps, '>');
    case '\'': return skip_name(ps, '\'');
    default: break;
    }
    ps->p--;
    if (!numeric_ok)
        return fail(ps, "malformed \\k");
    if (*ps->p == '+' || *ps->p == '-')
        ps->p++;
    if (!more(ps, 1) || !is_digit(*ps->p))
        return fail(ps, "malformed \\g");
    while (more(ps, 1) && is_digit(*ps->p))
        ps->p++;
    return 1;
}

/* An escape outside a class (the backslash is consumed). */
static int parse_escape(pf_parser_t *ps, pf_info_t *out)
{
    unsigned char c;
    int v, r;

    if (!more(ps, 1))
        return fail(ps, "trailing backslash");
    c = *ps->p++;
    *out = pf_info_any(ps->env);
    if (c == 's' || c == 'd') {
        pf_bytes_t b;
        memset(&b, 0, sizeof(b));
        type_bytes(c, &b);
        *out = info_from_bytes(ps, &b);
        return ATOM_REPEATABLE;
    }
    switch (c) {
    case 'D': case 'w': case 'W': case 'S':
    case 'h': case 'H': case 'v': case 'V': case 'C': case 'R': case 'X':
        return ATOM_REPEATABLE;
    case 'N':
        return more(ps, 1) && *ps->p == '{' ? fail(ps, "\\N{}") : ATOM_REPEATABLE;
    case 'p': case 'P':
        return skip_property(ps) < 0 ? ATOM_FAIL : ATOM_REPEATABLE;
    case 'c':
        if (!more(ps, 1))
            return fail(ps, "\\c at the end");
        ps->p++;
        return ATOM_REPEATABLE;
    case 'g': case 'k':
        return skip_reference(ps, c == 'g') < 0 ? ATOM_FAIL : ATOM_REPEATABLE;
    case 'b': case 'B': case 'A': case 'Z': case 'z': case 'G': case 'K': case 'E':
        *out = pf_info_empty(ps->env);
        return ATOM_FIXED;
    case 'Q':
        ps->in_quote = 1;
        *out = pf_info_empty(ps->env);
        return ATOM_FIXED;
    default:
        break;
    }
    if (c >= '1' && c <= '9') {
        /* \1..\9 alone is always a backreference (matches anything here);
         * more digits may be a backreference or an octal byte plus literal
         * digits, and a quantifier then applies to different things. */
        if (more(ps, 1) && is_digit(*ps->p))
            return fail(ps, "multi-digit backreference or octal escape");
        return ATOM_REPEATABLE;
    }
    r = char_escape(ps, c, &v);
    if (r < 0)
        return ATOM_FAIL;
    if (r == 2)
        return ATOM_REPEATABLE;
    if (r == 0) {
        if (bw_is_alnum(c) || c >= 0x80)
            return fail(ps, "unknown escape");
        v = c;
    }
    *out = info_byte(ps, v);
    return ATOM_REPEATABLE;
}

/* --- classes --- */

/* PCRE2 reads POSIX syntax where the closing ":]" (".]", "=]") comes
 * before any ']' and before another "[:" ("[.", "[="), stepping over "\]"
 * and "\\" (its check_posix_syntax); otherwise the '[' is a byte ([=<>] in
 * 942380 is '[', '=', '<' and '>'). */
int pf_posix_syntax(const unsigned char *p, const unsigned char *end,
                    const unsigned char **close)
{
    const unsigned char *q;
    unsigned char term = p[1];
    for (q = p + 2; q + 1 < end; q++) {
        if (q[0] == '\\' && (q[1] == ']' || q[1] == '\\'))
            q++;
        else if ((q[0] == '[' && q[1] == term) || q[0] == ']')
            return 0;
        else if (q[0] == term && q[1] == ']') {
            *close = q;
            return 1;
        }
    }
    return 0;   /* no closer before the end: PCRE2 too takes the '[' as a byte */
}

/* At "[:", "[." or "[=" inside a class: 1 when it is a POSIX name (taken
 * as any byte) and consumed, 0 when the '[' is a plain member, -1 when
 * unsure. A POSIX name's letters are read, a collating element ([.a.]
 * [=a=]) is not: PCRE2 refuses it. */
static int class_posix(pf_parser_t *ps)
{
    const unsigned char *close = NULL, *name;
    if (!pf_posix_syntax(ps->p, ps->end, &close))
        return 0;
    if (ps->p[1] != ':')
        return fail(ps, "collating element");
    for (name = ps->p + 2; name < close; name++)
        if (!(*name >= 'a' && *name <= 'z') && *name != '^')
            return fail(ps, "odd text in a POSIX class name");
    ps->p = close + 2;
    return 1;
}

/* One class member: 1 with a byte in *v, 2 for a class escape or an
 * unpinned byte, -1 on error. */
static int class_member(pf_parser_t *ps, int *v)
{
    unsigned char c = *ps->p++;
    int r;
    if (c != '\\') {
        *v = c;
        return 1;
    }
    if (!more(ps, 1))
        return fail(ps, "trailing backslash in class");
    c = *ps->p++;
    switch (c) {
    case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
    case 'h': case 'H': case 'v': case 'V':
        return 2;
    case 'p': case 'P':
        return skip_property(ps) < 0 ? -1 : 2;
    case 'b':
        *v = 0x08;
        return 1;
    case 'c':
        if (!more(ps, 1))
            return fail(ps, "\\c at the end");
        ps->p++;
        return 2;
    default:
        break;
    }
    r = char_escape(ps, c, v);
    if (r != 0)
        return r;
    if (bw_is_alnum(c) || c >= 0x80)
        return fail(ps, "unknown escape in class");
    *v = c;
    return 1;
}

/* After a first member lo: a range lo-hi, when a '-' is not the last char. */
static int class_range(pf_parser_t *ps, pf_bytes_t *b, int lo, int kind)
{
    int hi, c;
    if (!more(ps, 2) || ps->p[0] != '-' || ps->p[1] == ']') {
        if (kind == 1)
            bytes_add(b, lo);
        else
            b->wild = 1;
        return 1;
    }
    if (kind != 1)
        return fail(ps, "range from a class escape");
    ps->p++;
    if (more(ps, 2) && ps->p[0] == '[' && (ps->p[1] == ':' || ps->p[1] == '.' || ps->p[1] == '='))
        return fail(ps, "range to a POSIX class");
    if (class_member(ps, &hi) != 1 || hi < lo)
        return fail(ps, "bad range in class");
    for (c = lo; c <= hi; c++)
        bytes_add(b, c);
    return 1;
}

/* [...] (the '[' is consumed) into a byte set. */
static int parse_class(pf_parser_t *ps, pf_bytes_t *b)
{
    int neg = 0, first = 1, i, v, kind;

    memset(b, 0, sizeof(*b));
    if (more(ps, 1) && *ps->p == '^') {
        neg = 1;
        ps->p++;
    }
    for (;;) {
        if (!more(ps, 1))
            return fail(ps, "unterminated class");
        if (*ps->p == ']' && !first) {
            ps->p++;
            break;
        }
        first = 0;
        if (more(ps, 2) && ps->p[0] == '[' && (ps->p[1] == ':' || ps->p[1] == '.' || ps->p[1] == '=')) {
            int k = class_posix(ps);
            if (k < 0)
                return -1;
            if (k > 0) {
                b->wild = 1;
                continue;
            }
        }
        if (more(ps, 2) && ps->p[0] == '\\' && (ps->p[1] == 'Q' || ps->p[1] == 'E'))
            return fail(ps, "\\Q or \\E in a class");
        if (more(ps, 2) && ps->p[0] == '\\' && type_bytes(ps->p[1], b)) {
            ps->p += 2;
            /* "[\d-x]" is \d, '-' and 'x' to PCRE2; not worth reading */
            if (more(ps, 2) && ps->p[0] == '-' && ps->p[1] != ']')
                return fail(ps, "range from a class escape");
            continue;
        }
        kind = class_member(ps, &v);
        if (kind < 0 || class_range(ps, b, v, kind) < 0)
            return -1;
    }
    if (neg)
        for (i = 0; i < 8; i++)
            b->bits[i] = ~b->bits[i];
    return 1;
}

/* --- groups --- */

enum { HEAD_GROUP, HEAD_LOOK, HEAD_CALL, HEAD_SKIP };

/* Option letters: i (fold mode was chosen by the pre-scan), m n s U J have
 * no effect on literals; x changes how the pattern reads, so it gives up. */
static int group_flags(pf_parser_t *ps)
{
    while (more(ps, 1) && *ps->p && strchr("imnsUJ-^", *ps->p))
        ps->p++;
    if (!more(ps, 1) || (*ps->p != ')' && *ps->p != ':'))
        return fail(ps, "unsupported group or option");
    return *ps->p++ == ')' ? HEAD_SKIP : HEAD_GROUP;
}

/* What follows "(?": moves past the head and says what kind of group. */
static int group_head(pf_parser_t *ps)
{
    unsigned char c, d;
    if (!more(ps, 1))
        return fail(ps, "unterminated group");
    c = *ps->p;
    d = more(ps, 2) ? ps->p[1] : 0;
    switch (c) {
    case '#':
        while (more(ps, 1) && *ps->p != ')')
            ps->p++;
        if (!more(ps, 1))
            return fail(ps, "unterminated comment");
        ps->p++;
        return HEAD_SKIP;
    case ':': case '|': case '>':
        ps->p++;
        return HEAD_GROUP;
    case '=': case '!':
        ps->p++;
        return HEAD_LOOK;
    case '<':
        ps->p += (d == '=' || d == '!') ? 2 : 1;
        if (d == '=' || d == '!')
            return HEAD_LOOK;
        return skip_name(ps, '>') < 0 ? ATOM_FAIL : HEAD_GROUP;
    case '\'':
        ps->p++;
        return skip_name(ps, '\'') < 0 ? ATOM_FAIL : HEAD_GROUP;
    case 'P':
        if (d != '<' && d != '=' && d != '>')
            return fail(ps, "unknown (?P");
        ps->p += 2;
        if (d == '<')
            return skip_name(ps, '>') < 0 ? ATOM_FAIL : HEAD_GROUP;
        return skip_name(ps, ')') < 0 ? ATOM_FAIL : HEAD_CALL;
    case '&':
        ps->p++;
        return skip_name(ps, ')') < 0 ? ATOM_FAIL : HEAD_CALL;
    case 'R': case '+': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return skip_name(ps, ')') < 0 ? ATOM_FAIL : HEAD_CALL;
    case '-':
        if (is_digit(d))
            return skip_name(ps, ')') < 0 ? ATOM_FAIL : HEAD_CALL;
        break;
    case '(':
        return fail(ps, "conditional group");
    default:
        break;
    }
    return group_flags(ps);
}

/* (...) of any kind (p at the '('). */
static int parse_group(pf_parser_t *ps, pf_info_t *out)
{
    int head = HEAD_GROUP;
    pf_info_t inner;

    ps->p++;
    if (more(ps, 1) && *ps->p == '*')
        return fail(ps, "(*VERB) or (*lookaround:)");
    if (more(ps, 1) && *ps->p == '?') {
        ps->p++;
        head = group_head(ps);
        if (head < 0)
            return ATOM_FAIL;
        if (head == HEAD_SKIP) {
            *out = pf_info_empty(ps->env);
            return ATOM_FIXED;
        }
        if (head == HEAD_CALL) {
            *out = pf_info_any(ps->env);
            return ATOM_REPEATABLE;
        }
    }
    if (++ps->depth > PF_MAX_DEPTH)
        return fail(ps, "groups nested too deep");
    if (parse_alt(ps, &inner) < 0)
        return ATOM_FAIL;
    ps->depth--;
    if (!more(ps, 1) || *ps->p != ')')
        return fail(ps, "missing )");
    ps->p++;
    *out = head == HEAD_LOOK ? pf_info_empty(ps->env) : inner;
    return ATOM_REPEATABLE;
}

/* --- quantifiers, sequences, alternations --- */

/* At a '{': 1 for a quantifier PCRE2 10.42 reads ({n} {n,} {n,m}), with the
 * bounds; 2 when newer PCRE2 releases could read it as one ({,m}, spaces);
 * 0 for a literal brace. */
static int brace_kind(const pf_parser_t *ps, int *min, int *max)
{
    const unsigned char *q = ps->p + 1;
    long a = -1, b = -1;
    int comma = 0;

    for (; q < ps->end && *q != '}'; q++) {
        if (is_digit(*q)) {
            long *x = comma ? &b : &a;
            *x = (*x < 0 ? 0 : *x) * 10 + (*q - '0');
            if (*x > 65535)
                return 2;
        } else if (*q == ',' && !comma) {
            comma = 1;
        } else if (*q == ',' || *q == ' ' || *q == '\t') {
            return 2;           /* odd, but only digits, commas and blanks */
        } else {
            return 0;
        }
    }
    if (q >= ps->end)
        return 0;
    if (a < 0)
        return 2;               /* {} {,} {,m} */
    *min = (int)a;
    *max = comma ? (int)b : (int)a;
    return 1;
}

/* A quantifier after an item: 1 with bounds (max -1: none), 0 if none. */
static int parse_quant(pf_parser_t *ps, int *min, int *max)
{
    int k;
    if (!more(ps, 1))
        return 0;
    switch (*ps->p) {
    case '?': *min = 0; *max = 1; ps->p++; break;
    case '*': *min = 0; *max = -1; ps->p++; break;
    case '+': *min = 1; *max = -1; ps->p++; break;
    case '{':
        k = brace_kind(ps, min, max);
        if (k == 0)
            return 0;
        if (k == 2 || (*max >= 0 && *max < *min))
            return fail(ps, "brace quantifier read differently across PCRE2 versions");
        while (*ps->p != '}')
            ps->p++;
        ps->p++;
        break;
    default:
        return 0;
    }
    if (more(ps, 1) && (*ps->p == '?' || *ps->p == '+'))
        ps->p++;                /* lazy or possessive: same strings */
    if (more(ps, 1) && (*ps->p == '?' || *ps->p == '*' || *ps->p == '+'
                        || (*ps->p == '{' && brace_kind(ps, &k, &k) != 0)))
        return fail(ps, "quantifier after a quantifier");
    return 1;
}

static int parse_atom(pf_parser_t *ps, pf_info_t *out)
{
    unsigned char c = *ps->p;
    pf_bytes_t b;
    int m;

    if (ps->in_quote) {
        if (more(ps, 2) && c == '\\' && ps->p[1] == 'E') {
            ps->p += 2;
            ps->in_quote = 0;
            *out = pf_info_empty(ps->env);
            return ATOM_FIXED;
        }
        ps->p++;
        if (more(ps, 2) && ps->p[0] == '\\' && ps->p[1] == 'E') {
            ps->p += 2;
            ps->in_quote = 0;
        }
        *out = info_byte(ps, c);
        return ATOM_REPEATABLE;
    }
    switch (c) {
    case '(':
        return parse_group(ps, out);
    case '[':
        ps->p++;
        if (parse_class(ps, &b) < 0)
            return ATOM_FAIL;
        *out = info_from_bytes(ps, &b);
        return ATOM_REPEATABLE;
    case '.':
        ps->p++;
        *out = pf_info_any(ps->env);
        return ATOM_REPEATABLE;
    case '^': case '$':
        ps->p++;
        *out = pf_info_empty(ps->env);
        return ATOM_FIXED;
    case '\\':
        ps->p++;
        return parse_escape(ps, out);
    case '*': case '+': case '?':
        return fail(ps, "quantifier without an item");
    case '{':
        if (brace_kind(ps, &m, &m) != 0)
            return fail(ps, "quantifier without an item");
        break;
    default:
        break;
    }
    ps->p++;
    *out = info_byte(ps, c);
    return ATOM_REPEATABLE;
}

/* Items up to '|', ')' or the end, concatenated. */
static int parse_seq(pf_parser_t *ps, pf_info_t *out)
{
    pf_info_t acc = pf_info_empty(ps->env), atom;
    int kind, q, min = 0, max = 0;

    while (more(ps, 1)) {
        if (!ps->in_quote && (*ps->p == '|' || *ps->p == ')'))
            break;
        kind = parse_atom(ps, &atom);
        if (kind == ATOM_FAIL)
            return -1;
        if (!ps->in_quote) {
            q = parse_quant(ps, &min, &max);
            if (q < 0)
                return -1;
            if (q > 0 && kind != ATOM_REPEATABLE)
                return fail(ps, "quantifier after an item that cannot repeat");
            if (q > 0)
                atom = pf_info_repeat(ps->env, &atom, min, max);
        }
        acc = pf_info_cat(ps->env, &acc, &atom);
    }
    *out = acc;
    return 0;
}

static int parse_alt(pf_parser_t *ps, pf_info_t *out)
{
    int n = 0, room = 4;
    pf_info_t *br = apr_palloc(ps->env->pool, sizeof(*br) * (size_t)room);

    for (;;) {
        if (n == room) {
            pf_info_t *nb = apr_palloc(ps->env->pool, sizeof(*br) * (size_t)room * 2);
            memcpy(nb, br, sizeof(*br) * (size_t)n);
            br = nb;
            room *= 2;
        }
        if (parse_seq(ps, &br[n]) < 0)
            return -1;
        n++;
        if (!more(ps, 1) || *ps->p != '|')
            break;
        ps->p++;
    }
    *out = pf_info_alt(ps->env, br, n);
    return 0;
}

/* Whole pattern. 0 with the facts in *out, -1 (ps->why says why) if the
 * walk gave up. */
int pf_parse(pf_parser_t *ps, pf_info_t *out)
{
    if (more(ps, 2) && ps->p[0] == '(' && ps->p[1] == '*')
        return fail(ps, "leading (*VERB) (UTF, UCP, limits…)");
    if (parse_alt(ps, out) < 0)
        return -1;
    if (more(ps, 1))
        return fail(ps, "unbalanced )");
    return 0;
}

/* Whether an option group may set i anywhere: "(?" then option letters
 * holding an i. Looking at raw text may see one inside a class or \Q..\E;
 * that only costs precision (fold mode is always safe). */
int pf_maybe_caseless(const char *pattern, size_t len)
{
    size_t i, j;
    for (i = 0; i + 2 < len; i++) {
        if (pattern[i] != '(' || pattern[i + 1] != '?')
            continue;
        for (j = i + 2; j < len && (is_word((unsigned char)pattern[j]) || pattern[j] == '-'
                                    || pattern[j] == '^'); j++)
            if (pattern[j] == 'i')
                return 1;
    }
    return 0;
}
