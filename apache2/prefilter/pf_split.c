/*
 * bw_prefilter_alternatives: a regex A|B|C as the regexes A, B and C, so
 * that each can be gated or triggered by its own bytes and literals.
 *
 * A subject matches A|B|C somewhere iff it matches one of A, B, C
 * somewhere: the scan only asks "may it match", and the operator, when it
 * runs, runs the regex as written (captures included). So the split may
 * only keep each alternative's meaning, which holds when nothing outside
 * an alternative acts on it:
 *  - the alternatives are the top level's, or those of one group that is
 *    the whole pattern ((?i:(?:A|B)) gives (?i:(?:A)) and (?i:(?:B)));
 *    a quantified group or one with anything beside it is not split;
 *  - option settings (?i) count only at the very start, where they apply
 *    to every alternative and are copied to each; one further on applies
 *    to the alternatives after it: not split;
 *  - nothing that refers across alternatives or that this walk does not
 *    read exactly: back-references and subroutine calls (\1 \g \k (?P=
 *    (?R) (?1) (?&), conditionals, branch resets (?|, (*VERB)s, \Q..\E,
 *    extended mode (?x). Lookarounds and atomic groups inside an
 *    alternative are its own.
 * Capturing groups keep their text; a wrapping group that captures is
 * copied as (?: (an alternative's captures are never read from the scan).
 */
#include <string.h>
#include <apr_strings.h>
#include "pf_internal.h"
#include "bw_prefilter.h"

/* The walk's findings over pattern[from, to). */
typedef struct {
    size_t bars[BW_PREFILTER_MAX_ALTS];   /* top-level '|' positions */
    int nbars;
    size_t opts_end;    /* end of the option settings at `from` ((?i)(?s)…) */
    int whole_group;    /* a group opens at opts_end and closes at to - 1 */
    size_t inner;       /* where that group's content starts */
    int capturing;      /* it captures (its opener is not copied) */
} split_t;

/* The option letters of (?letters) or (?letters: at p (after "(?"), up to
 * `)` or `:`; the byte that ends them, or 0 when they are not options
 * ((?R) is a call) or ask for extended mode. */
static unsigned char option_end(const unsigned char *p, const unsigned char *end,
                                const unsigned char **after)
{
    while (p < end && *p && strchr("imnsJU^-", *p))
        p++;
    if (p >= end || (*p != ')' && *p != ':'))
        return 0;
    *after = p + 1;
    return *p;
}

/* Walk pattern[from, to): 0 when it must not be split. */
static int walk(const unsigned char *s, size_t from, size_t to, split_t *sp)
{
    const unsigned char *p = s + from, *end = s + to;
    int depth = 0, opts = 1;   /* still in the leading option settings */
    size_t first_close = 0;    /* where the group opened at opts_end closes */
    memset(sp, 0, sizeof(*sp));
    sp->opts_end = from;
    while (p < end) {
        unsigned char c = *p;
        if (c == '\\') {
            unsigned char e = p + 1 < end ? p[1] : 0;
            /* \cX takes the next byte, whatever it is */
            if (e == 'Q' || e == 'g' || e == 'k' || e == 'c' || (e >= '1' && e <= '9') || e == 0)
                return 0;
            opts = 0;
            p += 2;
            continue;
        }
        if (c == '[') {   /* a class: ] first is a byte, [:name:] as PCRE2 reads it */
            opts = 0;
            p++;
            if (p < end && *p == '^')
                p++;
            if (p < end && *p == ']')
                p++;
            while (p < end && *p != ']') {
                if (*p == '\\') {
                    if (p + 1 < end && p[1] == 'Q')
                        return 0;
                    p += 2;
                } else if (*p == '[' && p + 1 < end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
                    const unsigned char *close = NULL;
                    p = pf_posix_syntax(p, end, &close) ? close + 2 : p + 1;
                } else {
                    p++;
                }
            }
            if (p >= end)
                return 0;
            p++;
            continue;
        }
        if (c == '(') {
            const unsigned char *after = NULL;
            unsigned char k;
            if (p + 1 < end && p[1] == '*')
                return 0;
            if (p + 1 < end && p[1] == '?') {
                const unsigned char *q = p + 2;
                if (q >= end)
                    return 0;
                if (*q == '#') {   /* a comment */
                    while (p < end && *p != ')')
                        p++;
                    if (p >= end)
                        return 0;
                    p++;
                    continue;
                }
                k = option_end(q, end, &after);
                if (k == ')') {   /* an option setting */
                    if (depth == 0 && !opts)
                        return 0;
                    if (depth == 0)
                        sp->opts_end = (size_t)(after - s);
                    p = after;
                    continue;
                }
                if (k != ':' && *q != ':' && *q != '=' && *q != '!' && *q != '>'
                    && !(*q == '<' && q + 1 < end && (q[1] == '=' || q[1] == '!'))
                    && !(*q == 'P' && q + 1 < end && q[1] == '<') && *q != '<' && *q != '\'')
                    return 0;   /* (?| (?( (?R (?1 (?& (?P= (?P> (?C …: not read */
            }
            if (depth == 0 && opts && !first_close) {
                /* the group that may be the whole pattern */
                sp->capturing = p + 3 >= end || p[1] != '?'
                                || (p[2] == '<' && p[3] != '=' && p[3] != '!')
                                || p[2] == 'P' || p[2] == '\'';
                sp->inner = (size_t)(p - s);
            }
            opts = 0;
            depth++;
            p++;
            continue;
        }
        if (c == ')') {
            if (depth == 0)
                return 0;
            depth--;
            if (depth == 0 && !first_close)
                first_close = (size_t)(p - s) + 1;
            p++;
            continue;
        }
        opts = 0;
        if (c == '|' && depth == 0) {
            if (sp->nbars == BW_PREFILTER_MAX_ALTS - 1)
                return 0;
            sp->bars[sp->nbars++] = (size_t)(p - s);
        }
        p++;
    }
    if (depth != 0)
        return 0;
    sp->whole_group = !sp->nbars && first_close == to && sp->inner == sp->opts_end
                      && to > sp->opts_end;
    return 1;
}

/* The length of the opener of the group at s[at] ("(", "(?:", "(?i:",
 * "(?<name>"…). */
static size_t opener_len(const unsigned char *s, size_t at, size_t to)
{
    size_t i = at + 1;
    if (i >= to || s[i] != '?')
        return 1;
    i++;
    if (s[i] == ':')
        return i + 1 - at;
    if (s[i] == '<' || s[i] == '\'' || (s[i] == 'P' && i + 1 < to && s[i + 1] == '<')) {
        unsigned char close = s[i] == '\'' ? '\'' : '>';
        while (i < to && s[i] != close)
            i++;
        return i + 1 - at;
    }
    while (i < to && s[i] != ':')   /* (?flags: — lookarounds are not wrappers */
        i++;
    return i + 1 - at;
}

int bw_prefilter_alternatives(apr_pool_t *pool, const char *pattern, size_t len,
                              apr_array_header_t **out)
{
    const unsigned char *s = (const unsigned char *)pattern;
    size_t from = 0, to = len;
    /* the text copied before and after every alternative */
    char *pre = apr_pstrndup(pool, "", 0), *post = apr_pstrndup(pool, "", 0);
    split_t sp;
    int i, levels;
    for (levels = 0; levels < 8; levels++) {
        size_t ol;
        unsigned char k;
        if (!walk(s, from, to, &sp))
            return 0;
        pre = apr_pstrcat(pool, pre, apr_pstrndup(pool, pattern + from, sp.opts_end - from), NULL);
        if (sp.nbars)
            break;
        if (!sp.whole_group)
            return 0;
        /* a lookaround or an atomic group is not a wrapper */
        k = sp.inner + 2 < to && s[sp.inner + 1] == '?' ? s[sp.inner + 2] : 0;
        if (k == '=' || k == '!' || k == '>'
            || (k == '<' && (s[sp.inner + 3] == '=' || s[sp.inner + 3] == '!')))
            return 0;
        ol = opener_len(s, sp.inner, to);
        pre = apr_pstrcat(pool, pre, sp.capturing ? "(?:"
                          : apr_pstrndup(pool, pattern + sp.inner, ol), NULL);
        post = apr_pstrcat(pool, ")", post, NULL);
        from = sp.inner + ol;
        to = to - 1;
    }
    if (!sp.nbars)
        return 0;
    *out = apr_array_make(pool, sp.nbars + 1, sizeof(bw_str_t));
    for (i = 0; i <= sp.nbars; i++) {
        size_t a = i ? sp.bars[i - 1] + 1 : sp.opts_end, b = i < sp.nbars ? sp.bars[i] : to;
        char *alt = apr_pstrcat(pool, pre, apr_pstrndup(pool, pattern + a, b - a), post, NULL);
        *(bw_str_t *)apr_array_push(*out) = bw_str_n(alt, strlen(alt));
    }
    return 1;
}
