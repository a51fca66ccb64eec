/*
 * The @rx literal prefilter's entry points (contract in bw_prefilter.h):
 * run the regex walk in a scratch pool, check the resulting required set
 * against the caller's minimum length, copy it out; and the reference
 * "maybe" check the tests and automaton-less callers use.
 */
#include <string.h>
#include "bw_prefilter.h"
#include "pf_parse.h"

/* The required set of the whole regex, or none. */
static pf_set_t extract_set(pf_env_t *env, const char *pattern, size_t len, int fold,
                            const char **why)
{
    pf_parser_t ps;
    pf_info_t info;
    pf_set_t req;
    int i;

    memset(&ps, 0, sizeof(ps));
    ps.env = env;
    ps.p = (const unsigned char *)pattern;
    ps.end = ps.p + len;
    ps.fold = fold;
    if (pf_parse(&ps, &info) < 0) {
        *why = ps.why ? ps.why : "regex not understood";
        return pf_set_none();
    }
    req = pf_info_req(env, &info);
    if (req.n <= 0) {
        *why = "no literal every match must contain";
        return pf_set_none();
    }
    for (i = 0; i < req.n; i++) {
        if (req.v[i].len < env->min_len) {
            *why = "a required literal is shorter than the minimum";
            return pf_set_none();
        }
    }
    return req;
}

int bw_prefilter_extract_ex(apr_pool_t *pool, const char *pattern, size_t len, int caseless,
                            size_t min_len, apr_array_header_t **out, int *nocase,
                            const char **why)
{
    apr_pool_t *tmp;
    pf_env_t env;
    pf_set_t req;
    const char *reason = NULL;
    int fold, i;

    if (why)
        *why = NULL;
    if (pattern == NULL || apr_pool_create(&tmp, pool) != APR_SUCCESS) {
        if (why)
            *why = "no pattern or no memory";
        return 0;
    }
    memset(&env, 0, sizeof(env));
    env.pool = tmp;
    env.cap = BW_PREFILTER_MAX_SET;
    env.prod_max = 4 * BW_PREFILTER_MAX_SET;
    env.gate = min_len == BW_PREFILTER_GATE;
    env.min_len = env.gate || !min_len ? 1 : min_len;
    fold = caseless || pf_maybe_caseless(pattern, len);
    env.fold = fold;
    req = extract_set(&env, pattern, len, fold, &reason);
    if (req.n <= 0) {
        apr_pool_destroy(tmp);
        if (why)
            *why = reason;
        return 0;
    }
    *out = apr_array_make(pool, req.n, sizeof(bw_str_t));
    for (i = 0; i < req.n; i++) {
        bw_str_t *lit = apr_array_push(*out);
        lit->data = apr_pmemdup(pool, req.v[i].data, req.v[i].len);
        lit->len = req.v[i].len;
    }
    *nocase = fold;
    apr_pool_destroy(tmp);
    return 1;
}

int bw_prefilter_extract(apr_pool_t *pool, const char *pattern, size_t len, int caseless,
                         size_t min_len, apr_array_header_t **out, int *nocase)
{
    return bw_prefilter_extract_ex(pool, pattern, len, caseless, min_len, out, nocase, NULL);
}

static void gate_add(uint64_t gate[4], unsigned char c)
{
    gate[c / 64] |= (uint64_t)1 << (c % 64);
}

int bw_prefilter_gate(apr_pool_t *pool, const char *pattern, size_t len, int caseless,
                      uint64_t gate[4], unsigned *weight)
{
    apr_array_header_t *lits;
    int nocase = 0, i;
    memset(gate, 0, sizeof(uint64_t) * 4);
    *weight = 0;
    if (!bw_prefilter_extract_ex(pool, pattern, len, caseless, BW_PREFILTER_GATE, &lits, &nocase,
                                 NULL))
        return 0;
    for (i = 0; i < lits->nelts; i++) {
        bw_str_t l = APR_ARRAY_IDX(lits, i, bw_str_t);
        unsigned char best = 0;
        unsigned bw = 100000;
        size_t k;
        for (k = 0; k < l.len; k++) {
            unsigned char c = (unsigned char)l.data[k];
            if (pf_byte_weight(c, nocase) < bw) {
                bw = pf_byte_weight(c, nocase);
                best = c;
            }
        }
        if (gate[best / 64] & ((uint64_t)1 << (best % 64)))
            continue;
        gate_add(gate, best);
        if (nocase && best >= 'a' && best <= 'z')
            gate_add(gate, (unsigned char)(best - 32));
        *weight += bw;
    }
    return 1;
}

/* Estimated frequency of a literal set (bw_prefilter_trigger). */
static double trigger_weight(const apr_array_header_t *lits, int nocase)
{
    double sum = 0.0;
    int i;
    for (i = 0; i < lits->nelts; i++) {
        bw_str_t l = APR_ARRAY_IDX(lits, i, bw_str_t);
        double w = 100000.0;
        size_t k;
        for (k = 0; k < l.len; k++)
            if (pf_byte_weight((unsigned char)l.data[k], nocase) < w)
                w = pf_byte_weight((unsigned char)l.data[k], nocase);
        for (k = 1; k < l.len && w > 0.01; k++)
            w /= 8.0;
        sum += w;
    }
    return sum;
}

int bw_prefilter_trigger(apr_pool_t *pool, const char *pattern, size_t len,
                         apr_array_header_t **out, int *nocase, unsigned *weight)
{
    /* longer floors give rarer literals when the regex has them, shorter
     * ones a set at all when it does not */
    static const size_t floors[] = { 3, 2, 1 };
    double best = -1.0;
    size_t f;
    for (f = 0; f < sizeof(floors) / sizeof(floors[0]); f++) {
        apr_array_header_t *lits;
        int nc = 0;
        double w;
        if (!bw_prefilter_extract_ex(pool, pattern, len, 0, floors[f], &lits, &nc, NULL))
            continue;
        w = trigger_weight(lits, nc);
        if (best < 0 || w < best) {
            best = w;
            *out = lits;
            *nocase = nc;
        }
    }
    if (best < 0)
        return 0;
    *weight = best > 4e9 ? 4000000000u : (unsigned)(best + 0.999);
    return 1;
}

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* Whether lit occurs in s, comparing ASCII-lowered bytes when nocase. */
static int contains(bw_str_t s, bw_str_t lit, int nocase)
{
    size_t i, j;
    if (!nocase)
        return bw_memmem(s.data, s.len, lit.data, lit.len) != NULL;
    if (lit.len > s.len)
        return 0;
    for (i = 0; i + lit.len <= s.len; i++) {
        for (j = 0; j < lit.len; j++)
            if (lower((unsigned char)s.data[i + j]) != (unsigned char)lit.data[j])
                break;
        if (j == lit.len)
            return 1;
    }
    return 0;
}

int bw_prefilter_maybe(const apr_array_header_t *lits, int nocase, bw_str_t subject)
{
    int i;
    if (subject.data == NULL)
        subject = bw_str_n("", 0);
    for (i = 0; i < lits->nelts; i++)
        if (contains(subject, APR_ARRAY_IDX(lits, i, bw_str_t), nocase))
            return 1;
    return 0;
}
