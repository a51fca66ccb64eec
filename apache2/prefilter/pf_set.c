/*
 * String sets for the @rx literal prefilter: union, cross product, and the
 * "fit" operations that bring a set back under the size cap by weakening it
 * (cutting every string to a shorter prefix or suffix, then dropping strings
 * another string already implies). Weakening keeps each claim true: a string
 * that starts with "abc" starts with "ab"; one that contains "abc" contains
 * "ab". Memory comes from the extraction's scratch pool.
 */
#include <stdlib.h>
#include <string.h>
#include "pf_internal.h"

#define PF_PENALTY_SHORT 1000.0
#define PF_COST_NONE     1e9

pf_set_t pf_set_none(void)
{
    pf_set_t s;
    s.n = -1;
    s.room = 0;
    s.v = NULL;
    return s;
}

/* Room for up to n strings; sets grow by reallocation in the pool. */
static pf_set_t set_alloc(const pf_env_t *env, int n)
{
    pf_set_t s;
    s.n = 0;
    s.room = n > 0 ? n : 1;
    s.v = apr_palloc(env->pool, sizeof(bw_str_t) * (size_t)s.room);
    return s;
}

pf_set_t pf_set_empty_string(const pf_env_t *env)
{
    pf_set_t s = set_alloc(env, 1);
    s.v[0] = bw_str_n("", 0);
    s.n = 1;
    return s;
}

pf_set_t pf_set_byte(const pf_env_t *env, unsigned char c)
{
    pf_set_t s = set_alloc(env, 1);
    char *b = apr_palloc(env->pool, 1);
    b[0] = (char)c;
    s.v[0] = bw_str_n(b, 1);
    s.n = 1;
    return s;
}

static int str_eq(bw_str_t a, bw_str_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

static int set_contains(pf_set_t s, bw_str_t str)
{
    int i;
    for (i = 0; i < s.n; i++)
        if (str_eq(s.v[i], str))
            return 1;
    return 0;
}

static void append(const pf_env_t *env, pf_set_t *s, bw_str_t str)
{
    if (s->n >= s->room) {
        int room = s->room > 0 ? s->room * 2 : 4;
        bw_str_t *nv = apr_palloc(env->pool, sizeof(bw_str_t) * (size_t)room);
        if (s->n > 0)
            memcpy(nv, s->v, sizeof(bw_str_t) * (size_t)s->n);
        s->v = nv;
        s->room = room;
    }
    s->v[s->n++] = str;
}

/* Append str unless already present (a "not known" set stays so). */
void pf_set_add(const pf_env_t *env, pf_set_t *s, bw_str_t str)
{
    if (s->n < 0 || set_contains(*s, str))
        return;
    append(env, s, str);
}

/* Sets of hundreds of strings (word lists) are deduplicated by hash. */
void pf_setb_init(const pf_env_t *env, pf_setb_t *b)
{
    b->set = set_alloc(env, 16);
    b->seen = apr_hash_make(env->pool);
}

void pf_setb_add(const pf_env_t *env, pf_setb_t *b, bw_str_t str)
{
    const char *key = str.len ? str.data : "";
    if (apr_hash_get(b->seen, key, (apr_ssize_t)str.len))
        return;
    apr_hash_set(b->seen, key, (apr_ssize_t)str.len, key);
    append(env, &b->set, str);
}

int pf_set_has_empty(pf_set_t s)
{
    int i;
    for (i = 0; i < s.n; i++)
        if (s.v[i].len == 0)
            return 1;
    return 0;
}

pf_set_t pf_set_union(const pf_env_t *env, pf_set_t a, pf_set_t b)
{
    pf_set_t r;
    int i;
    if (a.n < 0 || b.n < 0)
        return pf_set_none();
    r = set_alloc(env, 4);
    for (i = 0; i < a.n; i++)
        pf_set_add(env, &r, a.v[i]);
    for (i = 0; i < b.n; i++)
        pf_set_add(env, &r, b.v[i]);
    return r;
}

/* Every a·b; "not known" when either side is, or when the product would
 * exceed limit strings. */
pf_set_t pf_set_cross(const pf_env_t *env, pf_set_t a, pf_set_t b, int limit)
{
    pf_set_t r;
    int i, j;
    if (a.n < 0 || b.n < 0 || (long)a.n * (long)b.n > (long)limit)
        return pf_set_none();
    r = set_alloc(env, 4);
    for (i = 0; i < a.n; i++) {
        for (j = 0; j < b.n; j++) {
            size_t len = a.v[i].len + b.v[j].len;
            char *buf = apr_palloc(env->pool, len ? len : 1);
            if (a.v[i].len)
                memcpy(buf, a.v[i].data, a.v[i].len);
            if (b.v[j].len)
                memcpy(buf + a.v[i].len, b.v[j].data, b.v[j].len);
            pf_set_add(env, &r, bw_str_n(buf, len));
        }
    }
    return r;
}

/* Whether t occurs in s. Both are short literals here, for which a plain
 * scan beats memmem's set-up; minimize() calls this for many pairs. */
static int contains(bw_str_t s, bw_str_t t)
{
    const char *p = s.data, *last = s.data + (s.len - t.len);
    for (; p <= last; p++) {
        p = memchr(p, t.data[0], (size_t)(last - p) + 1);
        if (!p)
            return 0;
        if (memcmp(p + 1, t.data + 1, t.len - 1) == 0)
            return 1;
    }
    return 0;
}

/* How t sits inside s: 0 prefix, 1 suffix, 2 anywhere. */
static int implies(bw_str_t t, bw_str_t s, int where)
{
    if (t.len > s.len)
        return 0;
    if (t.len == 0)
        return 1;
    if (where == 0)
        return memcmp(s.data, t.data, t.len) == 0;
    if (where == 1)
        return memcmp(s.data + s.len - t.len, t.data, t.len) == 0;
    return contains(s, t);
}

/* Orders for minimize(): bytes from the head, bytes from the tail, length. */
static int cmp_head(const void *x, const void *y)
{
    const bw_str_t *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static int cmp_tail(const void *x, const void *y)
{
    const bw_str_t *a = x, *b = y;
    size_t i;
    for (i = 1; i <= a->len && i <= b->len; i++) {
        unsigned char ca = (unsigned char)a->data[a->len - i];
        unsigned char cb = (unsigned char)b->data[b->len - i];
        if (ca != cb)
            return ca < cb ? -1 : 1;
    }
    return (a->len > b->len) - (a->len < b->len);
}

static int cmp_len(const void *x, const void *y)
{
    const bw_str_t *a = x, *b = y;
    return (a->len > b->len) - (a->len < b->len);
}

/* Drop every string another string already implies (for prefixes: one
 * that starts with another; suffixes: ends with; required: contains): the
 * set then accepts exactly the same inputs with fewer strings. Strings are
 * distinct. Sorted from the head (or tail), a string implied by a prefix
 * (suffix) comes right after the kept one that implies it; for substrings,
 * each string is compared with the shorter strings kept so far. */
static pf_set_t minimize(const pf_env_t *env, pf_set_t s, int where)
{
    pf_set_t r;
    int i, j, drop;
    if (s.n <= 1)
        return s;
    r = set_alloc(env, s.n);
    memcpy(r.v, s.v, sizeof(bw_str_t) * (size_t)s.n);
    qsort(r.v, (size_t)s.n, sizeof(bw_str_t),
          where == 0 ? cmp_head : where == 1 ? cmp_tail : cmp_len);
    for (i = 0; i < s.n; i++) {
        bw_str_t x = r.v[i];
        if (where != 2) {
            drop = r.n > 0 && implies(r.v[r.n - 1], x, where);
        } else {
            for (j = 0, drop = 0; j < r.n && !drop; j++)
                drop = implies(r.v[j], x, 2);
        }
        if (!drop)
            r.v[r.n++] = x;
    }
    return r;
}

/* Cut every string to at most k bytes (its head, or its tail when tail). */
static pf_set_t truncate_set(const pf_env_t *env, pf_set_t s, size_t k, int tail)
{
    pf_setb_t b;
    int i;
    pf_setb_init(env, &b);
    for (i = 0; i < s.n; i++) {
        bw_str_t x = s.v[i];
        if (x.len > k)
            x = tail ? bw_str_n(x.data + x.len - k, k) : bw_str_n(x.data, k);
        pf_setb_add(env, &b, x);
    }
    return b.set;
}

static size_t max_len(pf_set_t s)
{
    size_t m = 0;
    int i;
    for (i = 0; i < s.n; i++)
        if (s.v[i].len > m)
            m = s.v[i].len;
    return m;
}

/* Shorten strings until the minimized set fits the cap; "none" (n < 0)
 * when even strings of floor bytes do not fit. Minimizing costs a pass over
 * all pairs, so it only runs on sets that could then fit. */
static pf_set_t fit(const pf_env_t *env, pf_set_t s, int where, size_t floor)
{
    size_t k;
    pf_set_t m = s;
    if (s.n <= env->prod_max) {
        m = minimize(env, s, where);
        if (m.n <= env->cap)
            return m;
    }
    for (k = max_len(m); k > floor; k--) {
        pf_set_t t = truncate_set(env, m, k - 1, where == 1);
        if (t.n > env->prod_max)
            continue;
        t = minimize(env, t, where);
        if (t.n <= env->cap)
            return t;
    }
    return pf_set_none();
}

/* A prefix set: {""} (nothing known) when it holds "", is empty or cannot
 * fit. */
pf_set_t pf_set_fit_pre(const pf_env_t *env, pf_set_t s)
{
    pf_set_t r;
    if (s.n <= 0 || pf_set_has_empty(s))
        return pf_set_empty_string(env);
    r = fit(env, s, 0, 1);
    return r.n < 0 ? pf_set_empty_string(env) : r;
}

pf_set_t pf_set_fit_suf(const pf_env_t *env, pf_set_t s)
{
    pf_set_t r;
    if (s.n <= 0 || pf_set_has_empty(s))
        return pf_set_empty_string(env);
    r = fit(env, s, 1, 1);
    return r.n < 0 ? pf_set_empty_string(env) : r;
}

/* A required set: none when it holds "" (always satisfied), is empty (a
 * claim that nothing matches is never made), or cannot fit with literals of
 * at least min_len bytes. */
pf_set_t pf_set_fit_req(const pf_env_t *env, pf_set_t s)
{
    if (s.n <= 0 || pf_set_has_empty(s))
        return pf_set_none();
    return fit(env, s, 2, env->min_len);
}

/* Lower is better: roughly the chance that a random value contains one of
 * the literals (each byte divides it by 8). A set with a literal shorter
 * than min_len is still true but unusable, so it ranks after usable ones. */
/* For a gate: the weight of the rarest byte of each string, summed. */
static double gate_cost(const pf_env_t *env, pf_set_t s)
{
    double c = 0.0;
    int i;
    for (i = 0; i < s.n; i++) {
        unsigned best = 100000;
        size_t k;
        for (k = 0; k < s.v[i].len; k++) {
            unsigned w = pf_byte_weight((unsigned char)s.v[i].data[k], env->fold);
            if (w < best)
                best = w;
        }
        c += best;
    }
    return c;
}

double pf_set_cost(const pf_env_t *env, pf_set_t s)
{
    double c = 0.0;
    int i;
    if (s.n <= 0)
        return PF_COST_NONE;
    if (env->gate)
        return gate_cost(env, s);
    for (i = 0; i < s.n; i++) {
        size_t l = s.v[i].len < 64 ? s.v[i].len : 64, k;
        double p = 1.0;
        for (k = 0; k < l; k++)
            p /= 8.0;
        c += p;
        if (s.v[i].len < env->min_len)
            c += PF_PENALTY_SHORT;
    }
    return c;
}
