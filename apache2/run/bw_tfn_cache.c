/*
 * Transformation results, computed once per transaction.
 *
 * CRS applies the same chains (t:urlDecodeUni,t:htmlEntityDecode,…) to the
 * same values in dozens of rules. At start-up every chain of a context is
 * interned into a trie (bw_tfn_intern): a rule holds one node per prefix of
 * its chain, and equal prefixes are the same node. A result is kept under
 * (value's address, length, node): values come from collections built once
 * per transaction, so the address identifies the value, and a chain that
 * shares a prefix with an earlier one resumes from that prefix's result.
 * Open addressing over an append-only entry array; nothing is evicted (the
 * pool is the transaction's). Rules without nodes (none at start-up; a copy
 * made by SecRuleUpdateActionById) are transformed without the cache.
 */
#include <string.h>
#include "run/bw_run.h"


typedef struct {
    const char *ptr;
    size_t len;
    const bw_tfn_node_t *node;
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

/* ---- run time ----------------------------------------------------------------- */

static size_t slot_of(const bw_tfn_cache_t *c, const char *ptr, size_t len, const bw_tfn_node_t *node)
{
    uint64_t k = mix(mix(node->hash, (uint64_t)(uintptr_t)ptr), (uint64_t)len);
    return (size_t)(k ^ (k >> 29)) & (c->cap - 1);
}

/* The index position of the entry, or of the empty place it would take. */
static uint32_t *find(bw_tfn_cache_t *c, const char *ptr, size_t len, const bw_tfn_node_t *node)
{
    size_t i = slot_of(c, ptr, len, node);
    for (;;) {
        uint32_t *at = &c->index[i];
        const slot_t *s;
        if (!*at)
            return at;
        s = &c->entries[*at - 1];
        if (s->node == node && s->ptr == ptr && s->len == len)
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
        *find(c, s->ptr, s->len, s->node) = (uint32_t)(i + 1);
    }
}

static void insert(apr_pool_t *p, bw_tfn_cache_t *c, uint32_t *at, const char *ptr, size_t len,
                   const bw_tfn_node_t *node, bw_str_t out)
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
    s->node = node;
    s->out = out;
    *at = (uint32_t)c->used;
    if (c->used * 10 > c->cap * 7)
        rehash(p, c, c->cap * 2);
}

bw_str_t bw_tfn_apply_cached(bw_tx_t *tx, const bw_tfn_node_t *const *nodes,
                             const bw_tfn_def_t *const *tfns, int n, bw_str_t in)
{
    bw_tfn_cache_t *c = tx->tfn_cache;
    bw_str_t cur = in;
    int i, start = 0;

    if (n <= 0)
        return in;
    if (!nodes) {
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
    /* longest cached prefix first: usually the whole chain */
    for (i = n - 1; i >= 0; i--) {
        uint32_t *at = find(c, in.data, in.len, nodes[i]);
        if (*at) {
            cur = c->entries[*at - 1].out;
            start = i + 1;
            break;
        }
    }
    for (i = start; i < n; i++) {
        tfns[i]->fn(&tx->tfn_env, tx->pool, cur, &cur);
        insert(tx->pool, c, find(c, in.data, in.len, nodes[i]), in.data, in.len, nodes[i], cur);
    }
    return cur;
}
