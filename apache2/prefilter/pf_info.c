/*
 * How the facts known about regex parts combine (the classic required-literal
 * analysis): a concatenation joins exact strings and the suffix of one part
 * to the prefix of the next, and keeps the most selective required set of
 * any part; an alternation unions its branches and needs every branch to
 * require something; a repetition that may occur zero times requires
 * nothing. Every result claims at most what the regex guarantees; when a
 * set would grow past the cap it is weakened (pf_set.c), never guessed.
 */
#include "pf_internal.h"

pf_info_t pf_info_exact(pf_set_t s)
{
    pf_info_t r;
    r.exact = s;
    r.pre = pf_set_none();
    r.suf = pf_set_none();
    r.req = pf_set_none();
    return r;
}

/* Matches anything (any length, or one byte of a large class): no facts. */
pf_info_t pf_info_any(const pf_env_t *env)
{
    pf_info_t r;
    r.exact = pf_set_none();
    r.pre = pf_set_empty_string(env);
    r.suf = pf_set_empty_string(env);
    r.req = pf_set_none();
    return r;
}

/* Matches only the empty string (anchors, assertions, empty groups). */
pf_info_t pf_info_empty(const pf_env_t *env)
{
    return pf_info_exact(pf_set_empty_string(env));
}

pf_set_t pf_info_pre(const pf_env_t *env, const pf_info_t *a)
{
    return a->exact.n >= 0 ? pf_set_fit_pre(env, a->exact) : a->pre;
}

pf_set_t pf_info_suf(const pf_env_t *env, const pf_info_t *a)
{
    return a->exact.n >= 0 ? pf_set_fit_suf(env, a->exact) : a->suf;
}

pf_set_t pf_info_req(const pf_env_t *env, const pf_info_t *a)
{
    return a->exact.n >= 0 ? pf_set_fit_req(env, a->exact) : a->req;
}

/* Forget the exact strings, keeping what they imply. */
static pf_info_t inexact(const pf_env_t *env, const pf_info_t *a)
{
    pf_info_t r;
    if (a->exact.n < 0)
        return *a;
    r.exact = pf_set_none();
    r.pre = pf_info_pre(env, a);
    r.suf = pf_info_suf(env, a);
    r.req = pf_info_req(env, a);
    return r;
}

static pf_set_t cheaper(const pf_env_t *env, pf_set_t x, pf_set_t y)
{
    return pf_set_cost(env, y) < pf_set_cost(env, x) ? y : x;
}

/* a then b. Any match is x·y with x matched by a and y by b, so it starts
 * with a's prefix, ends with b's suffix, contains what either requires, and
 * contains suffix(a)·prefix(b) across the seam. */
pf_info_t pf_info_cat(const pf_env_t *env, const pf_info_t *a, const pf_info_t *b)
{
    pf_info_t r;
    pf_set_t t;

    if (a->exact.n >= 0 && b->exact.n >= 0) {
        t = pf_set_cross(env, a->exact, b->exact, env->cap);
        if (t.n >= 0)
            return pf_info_exact(t);
    }
    r.exact = pf_set_none();
    if (a->exact.n >= 0) {
        t = pf_set_cross(env, a->exact, pf_info_pre(env, b), env->prod_max);
        r.pre = pf_set_fit_pre(env, t.n >= 0 ? t : a->exact);
    } else {
        r.pre = a->pre;
    }
    if (b->exact.n >= 0) {
        t = pf_set_cross(env, pf_info_suf(env, a), b->exact, env->prod_max);
        r.suf = pf_set_fit_suf(env, t.n >= 0 ? t : b->exact);
    } else {
        r.suf = b->suf;
    }
    t = pf_set_cross(env, pf_info_suf(env, a), pf_info_pre(env, b), env->prod_max);
    r.req = cheaper(env, pf_info_req(env, a), pf_info_req(env, b));
    r.req = cheaper(env, r.req, pf_set_fit_req(env, t));
    return r;
}

/* Union of one kind of set over all branches (none if a branch has none):
 * kind 0 prefixes, 1 suffixes, 2 required sets, 3 exact sets. Built in
 * place, as alternations of a thousand words are common in rule sets. */
static pf_set_t union_all(const pf_env_t *env, const pf_info_t *br, int n, int kind)
{
    pf_setb_t u;
    int i, j;
    pf_setb_init(env, &u);
    for (i = 0; i < n; i++) {
        pf_set_t s = kind == 0 ? pf_info_pre(env, &br[i])
                   : kind == 1 ? pf_info_suf(env, &br[i])
                   : kind == 2 ? pf_info_req(env, &br[i]) : br[i].exact;
        if (s.n < 0)
            return pf_set_none();
        for (j = 0; j < s.n; j++)
            pf_setb_add(env, &u, s.v[j]);
    }
    return u.set;
}

pf_info_t pf_info_alt(const pf_env_t *env, const pf_info_t *br, int n)
{
    pf_info_t r;
    int i, all_exact = 1;

    if (n == 1)
        return br[0];
    for (i = 0; i < n && all_exact; i++)
        all_exact = br[i].exact.n >= 0;
    if (all_exact) {
        r = pf_info_exact(union_all(env, br, n, 3));
        return r.exact.n <= env->cap ? r : inexact(env, &r);
    }
    r.exact = pf_set_none();
    r.pre = pf_set_fit_pre(env, union_all(env, br, n, 0));
    r.suf = pf_set_fit_suf(env, union_all(env, br, n, 1));
    r.req = pf_set_fit_req(env, union_all(env, br, n, 2));
    return r;
}

/* a{min,max} with a small max and exact a: the union of the powers. */
static int repeat_exact(const pf_env_t *env, const pf_info_t *a, int min, int max,
                        pf_info_t *out)
{
    pf_set_t acc = min == 0 ? pf_set_empty_string(env) : pf_set_none();
    pf_set_t pow = pf_set_empty_string(env);
    int k;

    for (k = 1; k <= max; k++) {
        pow = pf_set_cross(env, pow, a->exact, env->cap);
        if (pow.n < 0)
            return 0;
        if (k >= min)
            acc = acc.n < 0 ? pow : pf_set_union(env, acc, pow);
    }
    if (acc.n < 0 || acc.n > env->cap)
        return 0;
    *out = pf_info_exact(acc);
    return 1;
}

/* a{min,max}, max < 0 meaning unbounded. Any match of it with min >= 1
 * starts with, ends with and contains a match of a{m} for m = min capped at
 * 3, so those facts carry over; with min 0 nothing is required. */
pf_info_t pf_info_repeat(const pf_env_t *env, const pf_info_t *a, int min, int max)
{
    pf_info_t r, out;
    int m, i;

    if (max == 0)
        return pf_info_empty(env);
    if (a->exact.n >= 0 && max > 0 && max <= 4 && repeat_exact(env, a, min, max, &out))
        return out;
    if (min == 0)
        return pf_info_any(env);
    m = min < 3 ? min : 3;
    r = *a;
    for (i = 1; i < m; i++)
        r = pf_info_cat(env, &r, a);
    if (max != m)
        r = inexact(env, &r);
    return r;
}
