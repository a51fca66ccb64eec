/*
 * Regexes a value's bytes decide, without a database scan (MX_T_BYTES,
 * MX_T_COUNT, MX_T_RUN), and small sets of whole values a comparison
 * decides (MX_T_SET, below), for both matcher implementations:
 *   byte   one atom matching one byte (".", "\w", "[^;]"): the value has
 *          one of its bytes (921170's "." on every argument name, CRS PL3);
 *   count  at least n bytes of a class, anything else between them:
 *          (?:C[^C]*?){n} (CRS 942420-942432, "restricted SQL character
 *          anomaly", PL2-4);
 *   run    n bytes of a class in a row: C{n}, C{n,}, C{n,m}, C+ (942460's
 *          \W{4}, PL3).
 * In a database the bounded repeats of the last two were the costliest
 * patterns of CRS's open ones (their classes hold '-', ':' and blanks, so
 * no byte gate spares them): at PL4 the four counts made the open scan of
 * a 27.7 KB JSON body 2.4 times what it was without them. A value's bytes
 * are known before any scan (run/bw_values.c): a value with no byte of a
 * class matches none of its patterns, and for one that has, a count and a
 * run are one pass over it.
 *
 * The shape is read from the regex's text, but the claim rests on PCRE2,
 * compiled as @rx compiles: the class is what the regex matches of the 256
 * strings of one byte repeated n times; a count's two atoms must match,
 * alone, that class and its complement; and the claim is checked on every
 * string of up to two bytes (a byte pattern) or, for a count or a run,
 * every string of up to n + 2 bytes (12 at most) over a byte of the class
 * and one outside it (a few such pairs) and a few thousand pseudo-random
 * ones mixing bytes in and out of the class, a newline and the separator
 * byte. Any disagreement and the regex is scanned as before.
 */
#include <string.h>
#include "matcher/matcher_int.h"
#include "base/bw_regex.h"

#define MX_DECIDED_MAX_N 64     /* largest n of a count or a run */
#define MX_EXHAUSTIVE_MAX 12    /* longest string tried exhaustively over two bytes */
#define MX_RANDOM_TRIES 3000    /* pseudo-random strings tried per count or run */

/* Past the inline option settings "(?i)", "(?s-i)"… at the start of s (not
 * x, under which blanks and comments are not what they look like). */
static size_t skip_options(const char *s, size_t n)
{
    size_t at = 0, i;
    while (n - at >= 3 && s[at] == '(' && s[at + 1] == '?') {
        for (i = at + 2; i < n && (((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') || s[i] == '-'
                                   || s[i] == '^'); i++)
            if ((s[i] | 0x20) == 'x')
                return at;
        if (i == at + 2 || i >= n || s[i] != ')')
            return at;
        at = i + 1;
    }
    return at;
}

/* The length of the atom at s that always matches exactly one byte (no
 * UTF-8 mode: a character is a byte), 0 when there is none: a dot, an
 * escape of a character type, or one bracket class (POSIX classes inside
 * it included). */
static size_t atom_len(const char *s, size_t n)
{
    size_t i;
    if (n >= 1 && s[0] == '.')
        return 1;
    if (n >= 2 && s[0] == '\\')
        return s[1] && strchr("dDsSwWhHvVN", s[1]) ? 2 : 0;
    if (n < 3 || s[0] != '[')
        return 0;
    i = 1;
    if (s[i] == '^')
        i++;
    if (i < n && s[i] == ']')   /* first, a ] is a member */
        i++;
    for (; i < n; i++) {
        if (s[i] == '\\') {
            if (i + 1 >= n || s[i + 1] == 'Q' || s[i + 1] == 'E')   /* not worth following */
                return 0;
            i++;
        } else if (s[i] == '[' && i + 1 < n && s[i + 1] == ':') {
            const char *e = i + 2 < n ? memmem(s + i + 2, n - (i + 2), ":]", 2) : NULL;
            if (!e)
                return 0;
            i = (size_t)(e - s) + 1;
        } else if (s[i] == ']') {
            return i + 1;
        }
    }
    return 0;
}

/* A repeat count {n}, {n,} or {n,m} (m >= n) at s[0, len) exactly: n, or
 * -1. "+" is {1,}. */
static int repeat_min(const char *s, size_t len)
{
    size_t i = 1;
    long lo = 0, hi = 0;
    if (len == 1 && s[0] == '+')
        return 1;
    if (len < 3 || s[0] != '{' || s[len - 1] != '}')
        return -1;
    for (; i < len && s[i] >= '0' && s[i] <= '9' && lo <= MX_DECIDED_MAX_N; i++)
        lo = lo * 10 + (s[i] - '0');
    if (i == 1 || lo < 1 || lo > MX_DECIDED_MAX_N)
        return -1;
    if (s[i] == '}')
        return i == len - 1 ? (int)lo : -1;
    if (s[i++] != ',')
        return -1;
    if (s[i] == '}')
        return i == len - 1 ? (int)lo : -1;
    for (; i < len && s[i] >= '0' && s[i] <= '9' && hi <= 100000; i++)
        hi = hi * 10 + (s[i] - '0');
    return i == len - 1 && hi >= lo ? (int)lo : -1;
}

/* Where the two atoms of a count are in the regex's text, and how long
 * its leading options are. */
typedef struct {
    size_t opts, a1, n1, a2, n2;
} atoms_t;

/* The shape the text of a regex has, if any of the three: its trait and
 * its n (1 for a byte pattern). Options first, a group around the whole
 * (capturing or not) ignored. */
static unsigned shape_of(const char *s, size_t n, int *min, atoms_t *at2)
{
    const char *s0 = s;
    size_t at = skip_options(s, n), a, b;
    at2->opts = at;
    s += at;
    n -= at;
    if (atom_len(s, n) == n && n) {
        *min = 1;
        return MX_T_BYTES;
    }
    if (n >= 2 && s[0] == '(' && s[n - 1] == ')') {   /* ( X ) or (?: X ) */
        size_t skip = n >= 4 && s[1] == '?' && s[2] == ':' ? 3 : s[1] == '?' ? 0 : 1;
        if (!skip)
            return 0;
        s += skip;
        n -= skip + 1;
    }
    /* a run: C followed by its repeat */
    a = atom_len(s, n);
    if (a && a < n && (*min = repeat_min(s + a, n - a)) > 0)
        return MX_T_RUN;
    /* a count: (?:C[^C]*?) or (?:C[^C]*) followed by its repeat */
    if (n < 4 || memcmp(s, "(?:", 3))
        return 0;
    a = atom_len(s + 3, n - 3);
    if (!a)
        return 0;
    b = atom_len(s + 3 + a, n - 3 - a);
    if (!b)
        return 0;
    at2->a1 = (size_t)(s + 3 - s0);
    at2->n1 = a;
    at2->a2 = at2->a1 + a;
    at2->n2 = b;
    at = 3 + a + b;
    if (at < n && s[at] == '*')
        at++;
    else
        return 0;
    if (at < n && s[at] == '?')
        at++;
    if (at >= n || s[at] != ')')
        return 0;
    at++;
    *min = at < n ? repeat_min(s + at, n - at) : -1;
    return *min > 0 ? MX_T_COUNT : 0;
}

/* A class as a table: 1 for its bytes. */
static void table_of(const uint64_t set[4], unsigned char tab[256])
{
    int c;
    for (c = 0; c < 256; c++)
        tab[c] = (unsigned char)((set[c / 64] >> (c % 64)) & 1);
}

/* How many bytes of class tab v has, and its longest run of them
 * (branch-free: the run is reset by multiplying). */
static void measure(const unsigned char tab[256], const unsigned char *v, size_t len, int *count,
                    int *run)
{
    unsigned c = 0, r = 0, best = 0;
    size_t i;
    for (i = 0; i < len; i++) {
        unsigned in = tab[v[i]];
        c += in;
        r = (r + 1) * in;
        best = r > best ? r : best;
    }
    *count = (int)c;
    *run = (int)best;
}

typedef struct {
    const pcre2_code *code;
    pcre2_match_data *md;
    unsigned t;
    int n;
    unsigned char tab[256];   /* the class (table_of), once it is known */
    int ok;
} verify_t;

/* What shape t with n and the class says of v. */
static int claims(const verify_t *vf, const unsigned char *v, size_t len)
{
    int count, run;
    measure(vf->tab, v, len, &count, &run);
    return vf->t == MX_T_RUN ? run >= vf->n : count >= vf->n;
}

static void check(verify_t *vf, const unsigned char *v, size_t len)
{
    int rc;
    if (!vf->ok)
        return;
    rc = bw_regex_match(vf->code, bw_str_n((const char *)v, len), vf->md);
    if (rc < 0 || rc != claims(vf, v, len))
        vf->ok = 0;
}

static int in_set(const uint64_t set[4], int c)
{
    return (int)((set[c / 64] >> (c % 64)) & 1);
}

/* Every string up to MX_EXHAUSTIVE_MAX (or n + 2) bytes over {x, y}. */
static void exhaustive(verify_t *vf, unsigned char x, unsigned char y)
{
    unsigned char buf[MX_EXHAUSTIVE_MAX];
    size_t len, max = (size_t)vf->n + 2 < MX_EXHAUSTIVE_MAX ? (size_t)vf->n + 2 : MX_EXHAUSTIVE_MAX;
    unsigned long k, i;
    for (len = 0; len <= max && vf->ok; len++)
        for (k = 0; k < (1ul << len) && vf->ok; k++) {
            for (i = 0; i < len; i++)
                buf[i] = (k >> i) & 1 ? x : y;
            check(vf, buf, len);
        }
}

/* The bytes PCRE2 matches with the regex's options and one atom of it. */
static int atom_bytes(apr_pool_t *pool, const char *re, size_t opts, size_t at, size_t len,
                      uint64_t set[4])
{
    char *err = NULL, one;
    const char *text = apr_pstrcat(pool, apr_pstrmemdup(pool, re, opts),
                                   apr_pstrmemdup(pool, re + at, len), NULL);
    pcre2_code *code = bw_regex_compile(pool, text, 0, &err);
    pcre2_match_data *md;
    int c, rc = 0;
    if (!code || !(md = pcre2_match_data_create_from_pattern(code, NULL)))
        return 0;
    memset(set, 0, sizeof(uint64_t) * 4);
    for (c = 0; c < 256 && rc >= 0; c++) {
        one = (char)c;
        rc = bw_regex_match(code, bw_str_n(&one, 1), md);
        if (rc > 0)
            set[c / 64] |= (uint64_t)1 << (c % 64);
    }
    pcre2_match_data_free(md);
    return rc >= 0;
}

/* Are the atoms of a count a class and its complement, the class being
 * bytes? */
static int complements(apr_pool_t *pool, const char *re, const atoms_t *at, const uint64_t bytes[4])
{
    uint64_t s1[4], s2[4];
    int w;
    if (!atom_bytes(pool, re, at->opts, at->a1, at->n1, s1)
        || !atom_bytes(pool, re, at->opts, at->a2, at->n2, s2))
        return 0;
    for (w = 0; w < 4; w++)
        if (s1[w] != bytes[w] || s2[w] != ~bytes[w])
            return 0;
    return 1;
}

/* Does the regex match as shape t with n says, the class being what PCRE2
 * matches n times? The class to bytes. */
static int verified(apr_pool_t *pool, const char *re, unsigned t, int n, uint64_t bytes[4])
{
    unsigned char buf[4 * MX_DECIDED_MAX_N + 8], in[4], out[4];
    char *err = NULL;
    int a, b, i, nin = 0, nout = 0;
    uint32_t seed = 2463534242u;
    verify_t vf;
    pcre2_code *code = bw_regex_compile(pool, re, 0, &err);
    if (!code)
        return 0;
    memset(&vf, 0, sizeof(vf));
    vf.code = code;
    vf.md = pcre2_match_data_create_from_pattern(code, NULL);
    if (!vf.md)
        return 0;
    vf.t = t;
    vf.n = n;
    vf.ok = 1;
    memset(bytes, 0, sizeof(uint64_t) * 4);
    for (a = 0; a < 256 && vf.ok; a++) {
        int rc;
        memset(buf, a, (size_t)n);
        rc = bw_regex_match(code, bw_str_n((const char *)buf, (size_t)n), vf.md);
        if (rc < 0)
            vf.ok = 0;
        else if (rc)
            bytes[a / 64] |= (uint64_t)1 << (a % 64);
    }
    table_of(bytes, vf.tab);
    if (t == MX_T_BYTES) {   /* every string of up to two bytes */
        for (a = 0; a < 256 && vf.ok; a++)
            for (b = 0; b < 256 && vf.ok; b++) {
                buf[0] = (unsigned char)a;
                buf[1] = (unsigned char)b;
                check(&vf, buf, 2);
            }
        pcre2_match_data_free(vf.md);
        return vf.ok;
    }
    /* the lowest and highest byte in and out of the class, a newline and
     * the separator of joined values as they fall */
    for (a = 0; a < 256; a++) {
        unsigned char c = (unsigned char)(a % 2 ? 255 - a / 2 : a / 2);
        if (in_set(bytes, c) && nin < 2)
            in[nin++] = c;
        else if (!in_set(bytes, c) && nout < 2)
            out[nout++] = c;
    }
    if (!nin || !nout) {   /* a class of every byte or none: not worth it */
        pcre2_match_data_free(vf.md);
        return 0;
    }
    if (in_set(bytes, '\n'))
        in[nin++] = '\n';
    else
        out[nout++] = '\n';
    if (in_set(bytes, MX_SEP))
        in[nin++] = MX_SEP;
    else
        out[nout++] = MX_SEP;
    for (a = 0; a < nin && a < nout && vf.ok; a++)
        exhaustive(&vf, in[a], out[a]);
    for (i = 0; i < MX_RANDOM_TRIES && vf.ok; i++) {
        size_t len, k;
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        len = seed % (size_t)(4 * n + 8);
        for (k = 0; k < len; k++) {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            /* mostly the class, so counts and runs reach n */
            buf[k] = seed % 3 ? in[(seed >> 8) % (unsigned)nin] : out[(seed >> 8) % (unsigned)nout];
        }
        check(&vf, buf, len);
    }
    pcre2_match_data_free(vf.md);
    return vf.ok;
}

unsigned mx_decided_shape(apr_pool_t *pool, bw_str_t re, uint64_t bytes[4], int *min)
{
    int n = 0;
    atoms_t at = { 0, 0, 0, 0, 0 };
    unsigned t = shape_of(re.data, re.len, &n, &at);
    /* PCRE2 reads the text up to its terminator */
    const char *text = t ? apr_pstrmemdup(pool, re.data, re.len) : NULL;
    if (!t || !verified(pool, text, t, n, bytes)
        || (t == MX_T_COUNT && !complements(pool, text, &at, bytes)))
        return 0;
    *min = n;
    return t;
}

/* ---- finite sets ------------------------------------------------------------ */

/* Anchored at both ends, with nothing but literal bytes, small classes,
 * groups, alternatives and "?" between ("^(?:GET|HEAD)$", 905110's
 * "^(?:GET /|OPTIONS \*) HTTP/[12]\.[01]$", @streq's "^\x47\x45\x54\z"),
 * a regex matches the strings of a finite set, the whole value: a
 * comparison decides it. $ is the end only (bw_regex_compile's
 * DOLLAR_ENDONLY, as mod_security2 compiles @rx). The set is read from
 * the text; PCRE2 then has to agree on every string of it and on strings
 * next to each (a byte dropped, added, changed or its case flipped), or
 * the regex is scanned as before. */

#define MX_SET_MAX 32        /* most strings a set pattern stands for */
#define MX_SET_MAX_LEN 64    /* longest of them */
#define MX_SET_MAX_CLASS 16  /* most bytes of a class in one */

#define MX_SET_MAX_DEPTH 16  /* most groups open at once */

typedef struct {
    apr_pool_t *pool;
    const char *s;
    size_t n, at;
    int depth;
} sp_t;

typedef struct {
    int n;
    bw_str_t v[MX_SET_MAX];
} lang_t;

/* One escape at sp->at (its backslash): the byte into *c, a class (\d)
 * into set. 0 for anything else (\w, \s, \b, back references, \Q…). */
static int escape_byte(sp_t *sp, int *c, uint64_t set[4])
{
    int d, k;
    *c = -1;
    if (++sp->at >= sp->n)
        return 0;
    d = (unsigned char)sp->s[sp->at];
    if (!bw_is_alnum((unsigned char)d)) {   /* an escaped punctuation byte is that byte */
        *c = d;
        sp->at++;
        return 1;
    }
    switch (d) {
    case 'x':   /* two hex digits (\x{…} is not taken) */
        if (sp->at + 2 >= sp->n || bw_hexval(sp->s[sp->at + 1]) < 0
            || bw_hexval(sp->s[sp->at + 2]) < 0)
            return 0;
        *c = bw_hexval(sp->s[sp->at + 1]) * 16 + bw_hexval(sp->s[sp->at + 2]);
        sp->at += 3;
        return 1;
    case 't': *c = '\t'; break;
    case 'n': *c = '\n'; break;
    case 'r': *c = '\r'; break;
    case 'f': *c = '\f'; break;
    case 'd':
        for (k = '0'; k <= '9'; k++)
            set[k / 64] |= (uint64_t)1 << (k % 64);
        break;
    default:
        return 0;
    }
    sp->at++;
    return 1;
}

static int lang_add(lang_t *l, bw_str_t v)
{
    int i;
    for (i = 0; i < l->n; i++)
        if (l->v[i].len == v.len && !memcmp(l->v[i].data, v.data, v.len))
            return 1;
    if (l->n == MX_SET_MAX || v.len > MX_SET_MAX_LEN)
        return 0;
    l->v[l->n++] = v;
    return 1;
}

/* a := a followed by b */
static int lang_cat(sp_t *sp, lang_t *a, const lang_t *b)
{
    lang_t r;
    int i, j;
    if (a->n * b->n > MX_SET_MAX)
        return 0;
    r.n = 0;
    for (i = 0; i < a->n; i++)
        for (j = 0; j < b->n; j++) {
            size_t len = a->v[i].len + b->v[j].len;
            char *c;
            if (len > MX_SET_MAX_LEN)
                return 0;
            c = apr_palloc(sp->pool, len + 1);
            memcpy(c, a->v[i].data, a->v[i].len);
            memcpy(c + a->v[i].len, b->v[j].data, b->v[j].len);
            if (!lang_add(&r, bw_str_n(c, len)))
                return 0;
        }
    *a = r;
    return 1;
}

static int set_alt(sp_t *sp, lang_t *out);

/* The bytes of set as strings of one byte into l (one to
 * MX_SET_MAX_CLASS of them). */
static int lang_of_bytes(sp_t *sp, const uint64_t set[4], lang_t *l)
{
    int k;
    l->n = 0;
    for (k = 0; k < 256; k++)
        if ((set[k / 64] >> (k % 64)) & 1) {
            char *b = apr_palloc(sp->pool, 1);
            *b = (char)k;
            if (l->n == MX_SET_MAX_CLASS || !lang_add(l, bw_str_n(b, 1)))
                return 0;
        }
    return l->n > 0;
}

/* A class "[…]" at sp->at (past the '['): its bytes into l. */
static int set_class(sp_t *sp, lang_t *l)
{
    uint64_t set[4] = { 0, 0, 0, 0 };
    int first = 1, prev = -1, c, k;
    if (sp->at < sp->n && sp->s[sp->at] == '^')
        return 0;
    for (;;) {
        if (sp->at >= sp->n)
            return 0;
        c = (unsigned char)sp->s[sp->at];
        if (c == ']' && !first) {
            sp->at++;
            break;
        }
        first = 0;
        if (c == '[')   /* a POSIX class, or a bracket PCRE2 reads as one */
            return 0;
        if (c == '-' && prev >= 0 && sp->at + 1 < sp->n && sp->s[sp->at + 1] != ']') {
            int hi;
            sp->at++;
            hi = (unsigned char)sp->s[sp->at];
            if (hi == '[')
                return 0;
            if (hi == '\\') {
                if (!escape_byte(sp, &hi, set) || hi < 0)
                    return 0;
            } else {
                sp->at++;
            }
            if (hi < prev)
                return 0;
            for (k = prev; k <= hi; k++)
                set[k / 64] |= (uint64_t)1 << (k % 64);
            prev = -1;
            continue;
        }
        if (c == '\\') {
            if (!escape_byte(sp, &c, set))
                return 0;
        } else {
            sp->at++;
        }
        if (c >= 0)
            set[c / 64] |= (uint64_t)1 << (c % 64);
        prev = c;
    }
    return lang_of_bytes(sp, set, l);
}

/* One atom at sp->at into l. */
static int set_atom(sp_t *sp, lang_t *l)
{
    int c = (unsigned char)sp->s[sp->at];
    uint64_t set[4] = { 0, 0, 0, 0 };
    switch (c) {
    case '(':
        sp->at++;
        if (sp->at < sp->n && sp->s[sp->at] == '?') {
            if (sp->at + 1 >= sp->n || sp->s[sp->at + 1] != ':')
                return 0;   /* options, look-arounds, atomic groups, names */
            sp->at += 2;
        }
        if (++sp->depth > MX_SET_MAX_DEPTH || !set_alt(sp, l) || sp->at >= sp->n
            || sp->s[sp->at] != ')')
            return 0;
        sp->depth--;
        sp->at++;
        return 1;
    case '[':
        sp->at++;
        return set_class(sp, l);
    case '\\':
        if (!escape_byte(sp, &c, set))
            return 0;
        break;
    case '.': case '^': case '$': case '*': case '+': case '?': case '{': case '|': case ')':
        return 0;
    default:
        sp->at++;
        break;
    }
    if (c >= 0)   /* a byte; else the class of an escape (\d) is in set */
        set[c / 64] |= (uint64_t)1 << (c % 64);
    return lang_of_bytes(sp, set, l);
}

/* A sequence of atoms, each maybe followed by "?". */
static int set_seq(sp_t *sp, lang_t *out)
{
    out->n = 1;
    out->v[0] = bw_str_n("", 0);
    while (sp->at < sp->n && sp->s[sp->at] != '|' && sp->s[sp->at] != ')') {
        lang_t a;
        if (!set_atom(sp, &a))
            return 0;
        if (sp->at < sp->n && sp->s[sp->at] == '?') {
            sp->at++;
            /* lazy and possessive forms: not a plain union */
            if (sp->at < sp->n && (sp->s[sp->at] == '?' || sp->s[sp->at] == '+'))
                return 0;
            if (!lang_add(&a, bw_str_n("", 0)))
                return 0;
        } else if (sp->at < sp->n && (sp->s[sp->at] == '*' || sp->s[sp->at] == '+'
                                      || sp->s[sp->at] == '{')) {
            return 0;
        }
        if (!lang_cat(sp, out, &a))
            return 0;
    }
    return 1;
}

static int set_alt(sp_t *sp, lang_t *out)
{
    int i;
    if (!set_seq(sp, out))
        return 0;
    while (sp->at < sp->n && sp->s[sp->at] == '|') {
        lang_t b;
        sp->at++;
        if (!set_seq(sp, &b))
            return 0;
        for (i = 0; i < b.n; i++)
            if (!lang_add(out, b.v[i]))
                return 0;
    }
    return 1;
}

/* Is the byte at i escaped (an odd run of backslashes before it)? */
static int escaped(const char *s, size_t i)
{
    size_t k = 0;
    while (k < i && s[i - 1 - k] == '\\')
        k++;
    return k % 2;
}

/* The ASCII letters of v with their case flipped, into buf. */
static int flip_case(bw_str_t v, char *buf)
{
    size_t i;
    int any = 0;
    for (i = 0; i < v.len; i++) {
        int c = (unsigned char)v.data[i];
        if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
            c ^= 0x20;
            any = 1;
        }
        buf[i] = (char)c;
    }
    return any;
}

static int set_has(const mx_set_t *st, const char *d, size_t len);

/* Does PCRE2, compiling re as @rx does, match exactly what st claims on
 * the strings of st and strings next to them? */
static int set_verified(apr_pool_t *pool, const char *re, const mx_set_t *st)
{
    static const char extra[] = { 'a', 'Z', '0', ' ', '\n', (char)MX_SEP, '\0' };
    char *err = NULL, buf[MX_SET_MAX_LEN + 2];
    pcre2_code *code = bw_regex_compile(pool, re, 0, &err);
    pcre2_match_data *md;
    int i, ok = 1;
    size_t k, e, j;
    if (!code || !(md = pcre2_match_data_create_from_pattern(code, NULL)))
        return 0;
#define SET_CHECK(d, len)                                                            \
    do {                                                                             \
        int rc_ = bw_regex_match(code, bw_str_n((d), (len)), md);                   \
        if (rc_ < 0 || (rc_ > 0) != set_has(st, (d), (len)))                         \
            ok = 0;                                                                  \
    } while (0)
    for (i = 0; i < st->n && ok; i++) {
        bw_str_t v = st->v[i];
        SET_CHECK(v.data, v.len);
        if (flip_case(v, buf))
            SET_CHECK(buf, v.len);
        for (k = 0; k < v.len && ok; k++) {   /* a byte dropped, or changed */
            memcpy(buf, v.data, k);
            memcpy(buf + k, v.data + k + 1, v.len - k - 1);
            SET_CHECK(buf, v.len - 1);
            for (e = 0; e < sizeof(extra) && ok; e++) {
                memcpy(buf, v.data, v.len);
                buf[k] = extra[e];
                SET_CHECK(buf, v.len);
            }
        }
        for (k = 0; k <= v.len && ok; k++)   /* a byte added */
            for (e = 0; e < sizeof(extra) && ok; e++) {
                memcpy(buf, v.data, k);
                buf[k] = extra[e];
                for (j = k; j < v.len; j++)
                    buf[j + 1] = v.data[j];
                SET_CHECK(buf, v.len + 1);
            }
    }
    SET_CHECK("", 0);
#undef SET_CHECK
    pcre2_match_data_free(md);
    return ok;
}

const mx_set_t *mx_set_shape(apr_pool_t *pool, bw_str_t re)
{
    const char *s = re.data;
    size_t n = re.len, at = 0, end;
    int nocase = 0, grouped = 0, i;
    lang_t l;
    sp_t sp;
    mx_set_t *st;
    bw_str_t *v;
    /* options first: i, and s (there is no dot to change) */
    while (n - at >= 3 && s[at] == '(' && s[at + 1] == '?') {
        size_t k = at + 2;
        for (; k < n && (s[k] == 'i' || s[k] == 's'); k++)
            nocase |= s[k] == 'i';
        if (k == at + 2 || k >= n || s[k] != ')')
            break;
        at = k + 1;
    }
    if (at < n && s[at] == '^')
        at++;
    else if (n - at >= 2 && s[at] == '\\' && s[at + 1] == 'A')
        at += 2;
    else
        return NULL;
    if (n > at && s[n - 1] == '$' && !escaped(s, n - 1))
        end = n - 1;
    else if (n - at >= 2 && s[n - 2] == '\\' && s[n - 1] == 'z' && !escaped(s, n - 2))
        end = n - 2;
    else
        return NULL;
    /* "(?i:…)" around all of it */
    if (end - at >= 5 && !memcmp(s + at, "(?i:", 4) && s[end - 1] == ')' && !escaped(s, end - 1)) {
        size_t k;
        int depth = 0, whole = 1;
        for (k = at; k < end; k++) {
            if (s[k] == '\\') {
                k++;
                continue;
            }
            if (s[k] == '[') {   /* a class's brackets and parentheses are bytes */
                for (k++; k < end && (s[k] != ']' || s[k - 1] == '['); k++)
                    if (s[k] == '\\')
                        k++;
                continue;
            }
            if (s[k] == '(')
                depth++;
            else if (s[k] == ')' && --depth == 0 && k != end - 1)
                whole = 0;
        }
        if (whole && depth == 0) {
            nocase = 1;
            grouped = 1;
            at += 4;
            end -= 1;
        }
    }
    memset(&sp, 0, sizeof(sp));
    sp.pool = pool;
    sp.s = s;
    sp.n = end;
    sp.at = at;
    /* a sequence: "^a|b$" is ^a or b$, not a set (inside "(?i:…)" a
     * group's alternatives) */
    if (!(grouped ? set_alt(&sp, &l) : set_seq(&sp, &l)) || sp.at != end)
        return NULL;
    st = apr_pcalloc(pool, sizeof(*st));
    v = apr_palloc(pool, sizeof(*v) * (size_t)l.n);
    st->n = l.n;
    st->nocase = nocase;
    st->minlen = (size_t)-1;
    for (i = 0; i < l.n; i++) {
        if (!l.v[i].len)   /* the empty value has no byte to be read for */
            return NULL;
        v[i] = l.v[i];
        if (v[i].len < st->minlen)
            st->minlen = v[i].len;
        if (v[i].len > st->maxlen)
            st->maxlen = v[i].len;
    }
    st->v = v;
    /* PCRE2 reads the text up to its terminator */
    if (!set_verified(pool, apr_pstrmemdup(pool, re.data, re.len), st))
        return NULL;
    return st;
}

static int set_has(const mx_set_t *st, const char *d, size_t len)
{
    int i;
    if (len < st->minlen || len > st->maxlen)
        return 0;
    for (i = 0; i < st->n; i++)
        if (st->v[i].len == len
            && (st->nocase ? bw_mem_eq_ci(st->v[i].data, d, len) : !memcmp(st->v[i].data, d, len)))
            return 1;
    return 0;
}

/* ---- deciding ---------------------------------------------------------------- */

/* The class of pattern p among the first n of cls, or a new one. */
static int class_of(mx_class_t *cls, int *n, const mx_pat_t *p)
{
    int k;
    for (k = 0; k < *n; k++)
        if (!memcmp(cls[k].set, p->bytes, sizeof(cls[k].set)))
            return k;
    memset(&cls[k], 0, sizeof(cls[k]));
    memcpy(cls[k].set, p->bytes, sizeof(cls[k].set));
    table_of(cls[k].set, cls[k].tab);
    (*n)++;
    return k;
}

void mx_decided_gather(bw_matcher_t *m)
{
    const mx_pat_t *pats = (const mx_pat_t *)m->pats->elts;
    mx_decided_t *d;
    mx_class_t *cls;
    int i, k, n = 0, nd = 0, ns = 0;
    const mx_pat_t **sets;
    for (i = 0; i < m->pats->nelts; i++) {
        nd += (pats[i].traits & MX_T_BY_BYTES) != 0;
        ns += (pats[i].traits & MX_T_SET) != 0;
    }
    if (ns) {
        sets = apr_palloc(m->pool, sizeof(*sets) * (size_t)ns);
        for (i = 0, ns = 0; i < m->pats->nelts; i++)
            if (pats[i].traits & MX_T_SET)
                sets[ns++] = &pats[i];
        m->sets = sets;
        m->nset = ns;
        m->nbyte = ns;
    }
    if (!nd)
        return;
    cls = apr_palloc(m->pool, sizeof(*cls) * (size_t)nd);
    for (i = 0; i < m->pats->nelts; i++)
        if (pats[i].traits & MX_T_BY_BYTES) {
            k = class_of(cls, &n, &pats[i]);
            cls[k].npats++;
            cls[k].measured |= (pats[i].traits & (MX_T_COUNT | MX_T_RUN)) != 0;
        }
    /* each class's patterns together, in the order of the classes */
    d = apr_palloc(m->pool, sizeof(*d) * (size_t)nd);
    for (k = 0, nd = 0; k < n; k++) {
        cls[k].first = nd;
        for (i = 0; i < m->pats->nelts; i++)
            if ((pats[i].traits & MX_T_BY_BYTES) && class_of(cls, &n, &pats[i]) == k) {
                d[nd].bit = pats[i].bit;
                d[nd].shape = pats[i].traits & MX_T_BY_BYTES;
                d[nd++].min = pats[i].min;
            }
    }
    m->nbyte = nd + ns;
    m->decided = d;
    m->nclass = n;
    m->classes = cls;
}

static int wanted(const uint64_t *want, int bit)
{
    return !want || ((want[bit / 64] >> (bit % 64)) & 1);
}

int mx_decided_hits(const bw_matcher_t *m, bw_str_t v, const uint64_t *present,
                    const uint64_t *want, uint64_t *bits)
{
    int k, i, any = 0;
    for (k = 0; k < m->nclass; k++) {
        const mx_class_t *c = &m->classes[k];
        const uint64_t *b = c->set;
        int count = 1, run = 1;
        if (!((present[0] & b[0]) | (present[1] & b[1]) | (present[2] & b[2]) | (present[3] & b[3])))
            continue;
        if (c->measured) {   /* one pass for the counts and runs of the class, if wanted */
            for (i = c->first; i < c->first + c->npats && !wanted(want, m->decided[i].bit); i++)
                ;
            if (i == c->first + c->npats)
                continue;
            measure(c->tab, (const unsigned char *)v.data, v.len, &count, &run);
        }
        for (i = c->first; i < c->first + c->npats; i++) {
            const mx_decided_t *d = &m->decided[i];
            if ((d->shape == MX_T_RUN ? run : count) >= d->min) {
                bits[d->bit / 64] |= (uint64_t)1 << (d->bit % 64);
                any = 1;
            }
        }
    }
    for (k = 0; k < m->nset; k++) {
        const mx_pat_t *p = m->sets[k];
        if (wanted(want, p->bit) && set_has(p->set, v.data, v.len)) {
            bits[p->bit / 64] |= (uint64_t)1 << (p->bit % 64);
            any = 1;
        }
    }
    return any;
}
