/*
 * Patterns of the usual shape matched without PCRE2: a JSON Schema
 * "pattern" such as ^SKU[0-9]{6}$ or ^[a-z][a-z0-9-]*$ is checked against
 * one value after another of a body, and PCRE2's call costs more than the
 * match (its entry, the match data, the JIT's frame: about 250
 * instructions for nine bytes).
 *
 * The shape: anchored at both ends (^ ... $), a sequence of atoms, each
 * one byte of a set of ASCII bytes (a literal, an escaped punctuation
 * character, \d, \w, or a class of those and of ranges, not negated) with
 * a quantifier or none (?, *, +, {n}, {n,}, {n,m}, greedy). Anything else
 * (alternation, groups, '.', negated classes, other escapes, non-ASCII or
 * control bytes, lazy or possessive quantifiers, a lone '{') keeps PCRE2.
 *
 * Such a sequence is matched left to right, each atom taking as many
 * bytes as it may, with no going back, and that is exact when no atom of
 * variable length shares a byte with an atom that may come right after
 * it (up to and including the next one that must take a byte): a byte the
 * atom can take then cannot start the rest, so taking it is the only way
 * on. Patterns where it could matter (^a*a$, ^[0-9]+[0-9]{2}$) keep PCRE2.
 * The end is PCRE2's $ without flags: the end of the value, or before a
 * newline that ends it. As the sets are ASCII, a byte of a multi-byte
 * UTF-8 character (or of an invalid sequence) is in none of them, where
 * PCRE2 (PCRE2_UTF | PCRE2_MATCH_INVALID_UTF) sees one character no set
 * holds: the same verdict. tests/unit/test_openapi.c holds the two to
 * agreement on every short value over each pattern's bytes.
 */
#include <string.h>
#include "openapi/oas_int.h"

#define MAX_ATOMS 64
#define MAX_REPEAT 65535u          /* PCRE2's own bound for {n,m} */
#define UNBOUNDED 0xffffffffu

typedef struct {
    uint64_t set[2];               /* ASCII bytes the atom takes */
    uint32_t min, max;             /* how many; max UNBOUNDED for * and + */
} atom_t;

/* While compiling: the atoms as read. */
typedef struct {
    int n;
    atom_t atoms[MAX_ATOMS];
} parsed_t;

/* Compiled: each atom's set as a table of the 256 byte values, so that a
 * byte costs one load and a test. */
typedef struct {
    const unsigned char *takes;
    uint32_t min, max;
} step_t;

struct oas_pat_s {
    int n;
    step_t steps[];
};

static void add(atom_t *a, unsigned c)
{
    a->set[c >> 6] |= (uint64_t)1 << (c & 63);
}

static void add_range(atom_t *a, unsigned lo, unsigned hi)
{
    unsigned c;
    for (c = lo; c <= hi; c++)
        add(a, c);
}

/* A byte that stands for itself in a pattern and in a class: printable
 * ASCII and not one of the characters that mean something somewhere. */
static int plain(unsigned char c)
{
    return c >= 0x20 && c < 0x7f && !strchr("\\^$.|?*+()[]{}", c);
}

/* \d or \w (ASCII without PCRE2_UCP) into a; punctuation escaped stands
 * for itself. 0 for any other escape. */
static int escape(atom_t *a, unsigned char e)
{
    if (e == 'd') {
        add_range(a, '0', '9');
        return 1;
    }
    if (e == 'w') {
        add_range(a, '0', '9');
        add_range(a, 'A', 'Z');
        add_range(a, 'a', 'z');
        add(a, '_');
        return 1;
    }
    if (e > 0x20 && e < 0x7f && !((e >= '0' && e <= '9') || (e >= 'A' && e <= 'Z')
                                  || (e >= 'a' && e <= 'z') || e == '_')) {
        add(a, e);
        return 1;
    }
    return 0;
}

/* A class from just after its '[': the index after its ']', or 0. */
static size_t class(atom_t *a, const char *s, size_t i, size_t end)
{
    size_t first = i;
    if (i < end && (s[i] == '^' || s[i] == ']'))
        return 0;                    /* negated, or a ']' that stands for itself */
    while (i < end && s[i] != ']') {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\') {
            if (i + 1 >= end || !escape(a, (unsigned char)s[i + 1]))
                return 0;
            i += 2;
            continue;
        }
        if (c == '-') {
            /* only first or last: elsewhere it is a range's, or PCRE2's doubt */
            if (i != first && !(i + 1 < end && s[i + 1] == ']'))
                return 0;
            add(a, c);
            i++;
            continue;
        }
        if (c == '[' || c < 0x20 || c >= 0x7f)
            return 0;
        if (i + 2 < end && s[i + 1] == '-' && s[i + 2] != ']') {
            unsigned char hi = (unsigned char)s[i + 2];
            if (hi == '\\' || hi == '[' || hi < 0x20 || hi >= 0x7f || hi < c)
                return 0;
            add_range(a, c, hi);
            i += 3;
            continue;
        }
        add(a, c);
        i++;
    }
    return i < end ? i + 1 : 0;
}

/* Digits from s[*i]: 0 when there are none or too many. */
static int number(const char *s, size_t *i, size_t end, uint32_t *n)
{
    size_t start = *i;
    *n = 0;
    while (*i < end && s[*i] >= '0' && s[*i] <= '9') {
        *n = *n * 10 + (uint32_t)(s[*i] - '0');
        if (*n > MAX_REPEAT)
            return 0;
        (*i)++;
    }
    return *i > start;
}

/* A quantifier at s[*i], if any, into a; 0 for one outside the shape. */
static int quantifier(atom_t *a, const char *s, size_t *i, size_t end)
{
    a->min = a->max = 1;
    if (*i >= end)
        return 1;
    switch (s[*i]) {
    case '?': a->min = 0; a->max = 1; (*i)++; break;
    case '*': a->min = 0; a->max = UNBOUNDED; (*i)++; break;
    case '+': a->min = 1; a->max = UNBOUNDED; (*i)++; break;
    case '{':
        (*i)++;
        if (!number(s, i, end, &a->min))
            return 0;
        a->max = a->min;
        if (*i < end && s[*i] == ',') {
            (*i)++;
            a->max = UNBOUNDED;
            if (*i < end && s[*i] != '}' && !number(s, i, end, &a->max))
                return 0;
        }
        if (*i >= end || s[*i] != '}' || a->max < a->min)
            return 0;
        (*i)++;
        break;
    default:
        return 1;
    }
    /* lazy, possessive, or a second quantifier */
    return !(*i < end && (s[*i] == '?' || s[*i] == '+' || s[*i] == '*' || s[*i] == '{'));
}

/* Whether taking greedily is exact (see the top): no atom of variable
 * length shares a byte with one that may follow it directly. */
static int deterministic(const parsed_t *p)
{
    int i, j;
    for (i = 0; i < p->n; i++) {
        const atom_t *a = &p->atoms[i];
        if (a->min == a->max)
            continue;
        for (j = i + 1; j < p->n; j++) {
            const atom_t *b = &p->atoms[j];
            if ((a->set[0] & b->set[0]) || (a->set[1] & b->set[1]))
                return 0;
            if (b->min > 0)
                break;
        }
    }
    return 1;
}

const oas_pat_t *oas_pat_compile(apr_pool_t *pool, const char *s, size_t len)
{
    parsed_t parsed, *p = &parsed;
    oas_pat_t *pat;
    size_t i = 1, end;
    int k;
    unsigned c;
    /* ^ first, an unescaped $ last */
    if (len < 2 || s[0] != '^' || s[len - 1] != '$')
        return NULL;
    end = len - 1;
    memset(p, 0, sizeof(*p));
    while (i < end) {
        atom_t *a;
        unsigned char b = (unsigned char)s[i];
        if (p->n == MAX_ATOMS)
            return NULL;
        a = &p->atoms[p->n++];
        if (b == '\\') {
            /* "\\$" ends here: its backslash would take the '$' */
            if (i + 1 >= end || !escape(a, (unsigned char)s[i + 1]))
                return NULL;
            i += 2;
        } else if (b == '[') {
            if (!(i = class(a, s, i + 1, end)))
                return NULL;
        } else if (plain(b)) {
            add(a, b);
            i++;
        } else {
            return NULL;
        }
        if (!quantifier(a, s, &i, end))
            return NULL;
    }
    if (i != end || !deterministic(p))
        return NULL;
    pat = apr_palloc(pool, sizeof(*pat) + sizeof(step_t) * (size_t)p->n);
    pat->n = p->n;
    for (k = 0; k < p->n; k++) {
        const atom_t *a = &p->atoms[k];
        unsigned char *t = apr_pcalloc(pool, 256);
        for (c = 0; c < 128; c++)
            t[c] = (unsigned char)((a->set[c >> 6] >> (c & 63)) & 1);
        pat->steps[k].takes = t;
        pat->steps[k].min = a->min;
        pat->steps[k].max = a->max;
    }
    return pat;
}

int oas_pat_match(const oas_pat_t *p, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t pos = 0;
    int i;
    for (i = 0; i < p->n; i++) {
        const step_t *a = &p->steps[i];
        const unsigned char *t = a->takes;
        if (a->min == a->max) {
            size_t end;
            if (len - pos < a->min)
                return 0;
            for (end = pos + a->min; pos < end; pos++)
                if (!t[s[pos]])
                    return 0;
        } else {
            size_t start = pos, end = len - pos > a->max ? pos + a->max : len;
            while (pos < end && t[s[pos]])
                pos++;
            if (pos - start < a->min)
                return 0;
        }
    }
    return pos == len || (pos + 1 == len && s[pos] == '\n');
}
