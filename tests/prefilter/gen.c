/*
 * Random subjects from a regex, for the prefilter's differential test. CRS
 * test payloads exercise the branches the CRS authors thought of; strings
 * built from the regex itself reach every alternative, every class member
 * and, for caseless parts, every mix of letter case. The reader here is
 * independent of the prefilter's own (apache2/prefilter/pf_parse.c) on
 * purpose, so that one's misreading is not repeated by the other. It need
 * not be exact: PCRE2 decides whether a sample matches, and only matching
 * samples test the invariant.
 */
#include <string.h>
#include "corpus.h"

#define GEN_MAX_OUT   4096
#define GEN_MAX_DEPTH 200
#define GEN_MAX_GROUPS 64

enum { G_SET, G_CAT, G_ALT, G_REP, G_EMPTY, G_GROUP, G_BACKREF };

typedef struct gnode gnode_t;
struct gnode {
    int type;
    uint32_t bits[8];       /* G_SET: the bytes */
    int min, max;           /* G_REP (max -1: unbounded) */
    int num;                /* G_GROUP capture number (0: none), G_BACKREF number */
    int n, room;
    gnode_t **kids;
};

struct pf_gen_s {
    gnode_t *root;
};

typedef struct {
    apr_pool_t *pool;
    const unsigned char *p, *end;
    int caseless;
    int groups;
    int depth;
    int bad;
} gparse_t;

static gnode_t *g_alt(gparse_t *g);

uint32_t pf_rand(uint32_t *state)
{
    uint32_t x = *state ? *state : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

static gnode_t *node(gparse_t *g, int type)
{
    gnode_t *n = apr_pcalloc(g->pool, sizeof(*n));
    n->type = type;
    return n;
}

static void kid(gparse_t *g, gnode_t *n, gnode_t *k)
{
    if (n->n == n->room) {
        int room = n->room ? n->room * 2 : 4;
        gnode_t **nk = apr_palloc(g->pool, sizeof(*nk) * (size_t)room);
        if (n->n)
            memcpy(nk, n->kids, sizeof(*nk) * (size_t)n->n);
        n->kids = nk;
        n->room = room;
    }
    n->kids[n->n++] = k;
}

static void set_add(gnode_t *s, int c)
{
    s->bits[c >> 5] |= (uint32_t)1 << (c & 31);
}

static void set_range(gnode_t *s, int lo, int hi)
{
    for (; lo <= hi; lo++)
        set_add(s, lo);
}

/* Both cases of ASCII letters (PCRE2's built-in tables fold nothing else). */
static void set_fold(gnode_t *s)
{
    int c;
    for (c = 'a'; c <= 'z'; c++) {
        int has = (s->bits[c >> 5] >> (c & 31)) & 1;
        int up = (s->bits[(c - 32) >> 5] >> ((c - 32) & 31)) & 1;
        if (has || up) {
            set_add(s, c);
            set_add(s, c - 32);
        }
    }
}

/* \d \w \s \h \v and \N as PCRE2 reads them without UTF/UCP. */
static int class_escape(gnode_t *s, int c, int *negate)
{
    *negate = c >= 'A' && c <= 'Z';
    switch (c | 0x20) {
    case 'd': set_range(s, '0', '9'); return 1;
    case 'w': set_range(s, '0', '9'); set_range(s, 'a', 'z'); set_range(s, 'A', 'Z');
              set_add(s, '_'); return 1;
    case 's': set_range(s, 9, 13); set_add(s, ' '); return 1;
    case 'h': set_add(s, 9); set_add(s, ' '); set_add(s, 0xa0); return 1;
    case 'v': set_range(s, 10, 13); set_add(s, 0x85); return 1;
    default: return 0;
    }
}

static int ghex(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

/* Escapes that are one byte; -1 when c is not one. */
static int char_escape(gparse_t *g, int c)
{
    int v = 0, n = 0, d;
    switch (c) {
    case 'n': return 10;
    case 'r': return 13;
    case 't': return 9;
    case 'f': return 12;
    case 'e': return 27;
    case 'a': return 7;
    case '0':
        while (n++ < 2 && g->p < g->end && *g->p >= '0' && *g->p <= '7')
            v = v * 8 + (*g->p++ - '0');
        return v;
    case 'x':
        if (g->p < g->end && *g->p == '{') {
            for (g->p++; g->p < g->end && (d = ghex(*g->p)) >= 0; g->p++)
                v = v * 16 + d;
            if (g->p < g->end && *g->p == '}')
                g->p++;
            return v & 0xff;
        }
        while (n++ < 2 && g->p < g->end && (d = ghex(*g->p)) >= 0) {
            v = v * 16 + d;
            g->p++;
        }
        return v;
    default:
        if ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
            return -1;
        return c;
    }
}

static gnode_t *g_class(gparse_t *g)
{
    gnode_t *s = node(g, G_SET), tmp;
    int neg = 0, first = 1, lo, hi, i, cneg;

    if (g->p < g->end && *g->p == '^') {
        neg = 1;
        g->p++;
    }
    while (g->p < g->end && (*g->p != ']' || first)) {
        first = 0;
        if (*g->p == '[' && g->p + 1 < g->end && g->p[1] == ':') {
            g->bad = 1;     /* POSIX names: rare in rules, not worth modelling */
            return s;
        }
        lo = *g->p++;
        if (lo == '\\' && g->p < g->end) {
            int c = *g->p++;
            memset(&tmp, 0, sizeof(tmp));
            if (class_escape(&tmp, c, &cneg)) {
                for (i = 0; i < 8; i++)
                    s->bits[i] |= cneg ? ~tmp.bits[i] : tmp.bits[i];
                continue;
            }
            lo = c == 'b' ? 8 : char_escape(g, c);
            if (lo < 0) {
                g->bad = 1;
                return s;
            }
        }
        hi = lo;
        if (g->p + 1 < g->end && *g->p == '-' && g->p[1] != ']') {
            g->p++;
            hi = *g->p++;
            if (hi == '\\' && g->p < g->end)
                hi = char_escape(g, *g->p++);
            if (hi < lo) {
                g->bad = 1;
                return s;
            }
        }
        set_range(s, lo, hi);
    }
    if (g->p >= g->end)
        g->bad = 1;
    else
        g->p++;
    if (g->caseless)
        set_fold(s);
    if (neg)
        for (i = 0; i < 8; i++)
            s->bits[i] = ~s->bits[i];
    return s;
}

static gnode_t *g_char(gparse_t *g, int c)
{
    gnode_t *s = node(g, G_SET);
    set_add(s, c);
    if (g->caseless)
        set_fold(s);
    return s;
}

/* Option letters after "(?"; returns 1 for ")" (set for the rest of the
 * group), 2 for ":" (a scoped group), 0 when not options. */
static int g_flags(gparse_t *g, int *caseless)
{
    const unsigned char *q = g->p;
    int on = 1, ci = *caseless;
    for (; q < g->end && *q && strchr("imnsxUJ-^", *q); q++) {
        if (*q == '-')
            on = 0;
        else if (*q == '^')
            ci = 0;
        else if (*q == 'i')
            ci = on;
    }
    if (q >= g->end || (*q != ')' && *q != ':'))
        return 0;
    g->p = q + 1;
    *caseless = ci;
    return *q == ')' ? 1 : 2;
}

static gnode_t *g_group(gparse_t *g)
{
    gnode_t *grp = node(g, G_GROUP), *inner;
    int saved = g->caseless, look = 0, f;

    if (g->p < g->end && *g->p == '?') {
        g->p++;
        if (g->p < g->end && (*g->p == ':' || *g->p == '|' || *g->p == '>')) {
            g->p++;
        } else if (g->p < g->end && (*g->p == '=' || *g->p == '!')) {
            g->p++;
            look = 1;
        } else if (g->p + 1 < g->end && *g->p == '<' && (g->p[1] == '=' || g->p[1] == '!')) {
            g->p += 2;
            look = 1;
        } else if (g->p < g->end && *g->p == '#') {
            while (g->p < g->end && *g->p != ')')
                g->p++;
            g->p += g->p < g->end;
            return node(g, G_EMPTY);
        } else if ((f = g_flags(g, &g->caseless)) == 1) {
            return node(g, G_EMPTY);    /* (?i): applies until the group ends */
        } else if (f == 0) {
            g->bad = 1;                 /* names, calls, conditionals */
            return grp;
        }
    } else if (g->p < g->end && *g->p == '*') {
        g->bad = 1;
        return grp;
    } else {
        grp->num = ++g->groups;
    }
    if (++g->depth > GEN_MAX_DEPTH) {
        g->bad = 1;
        return grp;
    }
    inner = g_alt(g);
    g->depth--;
    g->caseless = saved;
    if (g->p >= g->end || *g->p != ')')
        g->bad = 1;
    else
        g->p++;
    if (look)
        return node(g, G_EMPTY);
    kid(g, grp, inner);
    return grp;
}

static gnode_t *g_escape(gparse_t *g)
{
    gnode_t *s = node(g, G_SET);
    int c, neg, i, v;

    if (g->p >= g->end) {
        g->bad = 1;
        return s;
    }
    c = *g->p++;
    if (class_escape(s, c, &neg)) {
        if (neg)
            for (i = 0; i < 8; i++)
                s->bits[i] = ~s->bits[i];
        return s;
    }
    if (strchr("bBAzZGKE", c))
        return node(g, G_EMPTY);
    if (c >= '1' && c <= '9') {
        gnode_t *b = node(g, G_BACKREF);
        b->num = c - '0';
        return b;
    }
    if (c == 'Q') {
        gnode_t *cat = node(g, G_CAT);
        while (g->p < g->end && !(*g->p == '\\' && g->p + 1 < g->end && g->p[1] == 'E'))
            kid(g, cat, g_char(g, *g->p++));
        g->p += g->p < g->end ? 2 : 0;
        return cat;
    }
    v = char_escape(g, c);
    if (v < 0) {
        g->bad = 1;
        return s;
    }
    return g_char(g, v);
}

/* A quantifier after an item, if any. */
static gnode_t *g_quant(gparse_t *g, gnode_t *item)
{
    int min, max;
    gnode_t *r;
    if (g->p >= g->end)
        return item;
    if (*g->p == '?' || *g->p == '*' || *g->p == '+') {
        min = *g->p == '+';
        max = *g->p == '?' ? 1 : -1;
        g->p++;
    } else if (*g->p == '{' && g->p + 1 < g->end && g->p[1] >= '0' && g->p[1] <= '9') {
        const unsigned char *q = g->p + 1;
        for (min = 0; q < g->end && *q >= '0' && *q <= '9'; q++)
            min = min * 10 + (*q - '0');
        max = min;
        if (q < g->end && *q == ',') {
            for (q++, max = (q < g->end && *q == '}') ? -1 : 0; q < g->end && *q >= '0' && *q <= '9'; q++)
                max = max * 10 + (*q - '0');
        }
        if (q >= g->end || *q != '}')
            return item;        /* a literal brace */
        g->p = q + 1;
    } else {
        return item;
    }
    if (g->p < g->end && (*g->p == '?' || *g->p == '+'))
        g->p++;
    r = node(g, G_REP);
    r->min = min;
    r->max = max;
    kid(g, r, item);
    return r;
}

static gnode_t *g_seq(gparse_t *g)
{
    gnode_t *cat = node(g, G_CAT), *item;
    while (g->p < g->end && *g->p != '|' && *g->p != ')' && !g->bad) {
        int c = *g->p++;
        if (c == '(')
            item = g_group(g);
        else if (c == '[')
            item = g_class(g);
        else if (c == '\\')
            item = g_escape(g);
        else if (c == '^' || c == '$')
            item = node(g, G_EMPTY);
        else if (c == '.') {
            item = node(g, G_SET);
            memset(item->bits, 0xff, sizeof(item->bits));
        } else
            item = g_char(g, c);
        kid(g, cat, g_quant(g, item));
    }
    return cat;
}

static gnode_t *g_alt(gparse_t *g)
{
    gnode_t *alt = node(g, G_ALT);
    for (;;) {
        kid(g, alt, g_seq(g));
        if (g->bad || g->p >= g->end || *g->p != '|')
            break;
        g->p++;
    }
    return alt;
}

pf_gen_t *pf_gen_compile(apr_pool_t *p, const char *pattern, size_t len, int caseless)
{
    gparse_t g;
    pf_gen_t *gen;
    memset(&g, 0, sizeof(g));
    g.pool = p;
    g.p = (const unsigned char *)pattern;
    g.end = g.p + len;
    g.caseless = caseless;
    gen = apr_pcalloc(p, sizeof(*gen));
    gen->root = g_alt(&g);
    if (g.bad || g.p != g.end)
        return NULL;
    return gen;
}

typedef struct {
    char *buf;
    size_t len;
    bw_str_t caps[GEN_MAX_GROUPS];
    uint32_t *rng;
} gout_t;

static void emit_set(gout_t *o, const gnode_t *n)
{
    int c, count = 0, pick;
    for (c = 0; c < 256; c++)
        count += (n->bits[c >> 5] >> (c & 31)) & 1;
    if (count == 0 || o->len >= GEN_MAX_OUT)
        return;
    pick = (int)(pf_rand(o->rng) % (uint32_t)count);
    for (c = 0; c < 256; c++)
        if (((n->bits[c >> 5] >> (c & 31)) & 1) && pick-- == 0)
            break;
    o->buf[o->len++] = (char)c;
}

static void emit(gout_t *o, const gnode_t *n)
{
    int i, times, span;
    size_t start;
    switch (n->type) {
    case G_SET:
        emit_set(o, n);
        break;
    case G_CAT:
        for (i = 0; i < n->n; i++)
            emit(o, n->kids[i]);
        break;
    case G_ALT:
        emit(o, n->kids[pf_rand(o->rng) % (uint32_t)n->n]);
        break;
    case G_REP:
        span = n->max < 0 ? 3 : (n->max - n->min < 3 ? n->max - n->min : 3);
        times = n->min + (pf_rand(o->rng) & 1 ? 0 : (int)(pf_rand(o->rng) % (uint32_t)(span + 1)));
        for (i = 0; i < times && o->len < GEN_MAX_OUT; i++)
            emit(o, n->kids[0]);
        break;
    case G_GROUP:
        start = o->len;
        emit(o, n->kids[0]);
        if (n->num > 0 && n->num < GEN_MAX_GROUPS)
            o->caps[n->num] = bw_str_n(o->buf + start, o->len - start);
        break;
    case G_BACKREF:
        if (n->num < GEN_MAX_GROUPS && o->caps[n->num].len
            && o->len + o->caps[n->num].len <= GEN_MAX_OUT) {
            memmove(o->buf + o->len, o->caps[n->num].data, o->caps[n->num].len);
            o->len += o->caps[n->num].len;
        }
        break;
    default:
        break;
    }
}

bw_str_t pf_gen_sample(const pf_gen_t *g, apr_pool_t *p, uint32_t *state)
{
    gout_t o;
    memset(&o, 0, sizeof(o));
    o.buf = apr_palloc(p, GEN_MAX_OUT + 1);
    o.rng = state;
    emit(&o, g->root);
    return bw_str_n(o.buf, o.len);
}
