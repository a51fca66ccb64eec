/*
 * Transformation results, computed once per transaction.
 *
 * CRS applies the same chains (t:urlDecodeUni,t:htmlEntityDecode,…) to the
 * same values in dozens of rules. A result is kept under (value's address,
 * length, chain prefix): values come from collections built once per
 * transaction, so the address identifies the value, and every prefix of a
 * chain is remembered, so "urlDecodeUni,lowercase" reuses the work done for
 * "urlDecodeUni". Addresses of values allocated on the fly simply miss.
 * Open addressing, grown at 70% load; nothing is ever evicted (the pool is
 * the transaction's).
 */
#include <string.h>
#include "bw_internal.h"

typedef struct {
    const char *ptr;
    size_t len;
    uint64_t h;                       /* hash of the chain prefix */
    const bw_tfn_def_t *const *tfns;  /* the prefix: tfns[0..n-1] */
    int n;
    bw_str_t out;
} slot_t;

struct bw_tfn_cache_s {
    uint32_t *index;   /* open addressing: 0 = empty, else entry number + 1 */
    size_t cap;
    slot_t *entries;   /* in insertion order; only this grows by copying */
    size_t used, room;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static size_t slot_of(const bw_tfn_cache_t *c, const char *ptr, size_t len, uint64_t h)
{
    uint64_t k = mix(mix(h, (uint64_t)(uintptr_t)ptr), (uint64_t)len);
    return (size_t)(k ^ (k >> 29)) & (c->cap - 1);
}

static int same_chain(const slot_t *s, const bw_tfn_def_t *const *tfns, int n)
{
    int i;
    if (s->n != n)
        return 0;
    for (i = 0; i < n; i++)
        if (s->tfns[i] != tfns[i])
            return 0;
    return 1;
}

/* The index position of the entry, or of the empty place it would take. */
static uint32_t *find(bw_tfn_cache_t *c, const char *ptr, size_t len, uint64_t h,
                      const bw_tfn_def_t *const *tfns, int n)
{
    size_t i = slot_of(c, ptr, len, h);
    for (;;) {
        uint32_t *at = &c->index[i];
        const slot_t *s;
        if (!*at)
            return at;
        s = &c->entries[*at - 1];
        if (s->ptr == ptr && s->len == len && s->h == h && same_chain(s, tfns, n))
            return at;
        i = (i + 1) & (c->cap - 1);
    }
}

static void rehash(apr_pool_t *p, bw_tfn_cache_t *c, size_t cap)
{
    size_t i;
    c->cap = cap;
    c->index = apr_pcalloc(p, sizeof(uint32_t) * cap);
    for (i = 0; i < c->used; i++) {
        const slot_t *s = &c->entries[i];
        *find(c, s->ptr, s->len, s->h, s->tfns, s->n) = (uint32_t)(i + 1);
    }
}

static void insert(apr_pool_t *p, bw_tfn_cache_t *c, uint32_t *at, const char *ptr, size_t len,
                   uint64_t h, const bw_tfn_def_t *const *tfns, int n, bw_str_t out)
{
    slot_t *s;
    if (c->used == c->room) {
        slot_t *e = apr_palloc(p, sizeof(slot_t) * c->room * 2);
        memcpy(e, c->entries, sizeof(slot_t) * c->used);
        c->entries = e;
        c->room *= 2;
    }
    s = &c->entries[c->used++];
    s->ptr = ptr;
    s->len = len;
    s->h = h;
    s->tfns = tfns;
    s->n = n;
    s->out = out;
    *at = (uint32_t)c->used;
    if (c->used * 10 > c->cap * 7)
        rehash(p, c, c->cap * 2);
}

bw_str_t bw_tfn_apply_cached(bw_tx_t *tx, const bw_tfn_def_t *const *tfns, int n, bw_str_t in)
{
    bw_tfn_cache_t *c = tx->tfn_cache;
    uint64_t h[64];
    bw_str_t cur = in;
    int i, start = 0;

    if (n <= 0)
        return in;
    if (n > 64) {                     /* absurdly long chain: no caching */
        for (i = 0; i < n; i++)
            tfns[i]->fn(&tx->tfn_env, tx->pool, cur, &cur);
        return cur;
    }
    if (!c) {
        c = tx->tfn_cache = apr_pcalloc(tx->pool, sizeof(*c));
        c->room = 256;
        c->entries = apr_palloc(tx->pool, sizeof(slot_t) * c->room);
        rehash(tx->pool, c, 512);
    }
    h[0] = mix(0, (uint64_t)(uintptr_t)tfns[0]);
    for (i = 1; i < n; i++)
        h[i] = mix(h[i - 1], (uint64_t)(uintptr_t)tfns[i]);
    /* longest cached prefix first */
    for (i = n - 1; i >= 0; i--) {
        uint32_t *at = find(c, in.data, in.len, h[i], tfns, i + 1);
        if (*at) {
            cur = c->entries[*at - 1].out;
            start = i + 1;
            break;
        }
    }
    for (i = start; i < n; i++) {
        tfns[i]->fn(&tx->tfn_env, tx->pool, cur, &cur);
        insert(tx->pool, c, find(c, in.data, in.len, h[i], tfns, i + 1), in.data, in.len, h[i],
               tfns, i + 1, cur);
    }
    return cur;
}
