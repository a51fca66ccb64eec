/*
 * Regexes a value's bytes decide, without a database scan (MX_T_BYTES,
 * MX_T_COUNT, MX_T_RUN), for both matcher implementations:
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
    int i, k, n = 0, nd = 0;
    for (i = 0; i < m->pats->nelts; i++)
        nd += (pats[i].traits & MX_T_BY_BYTES) != 0;
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
    m->nbyte = nd;
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
    return any;
}
