/*
 * Transformations of values that are not built once per phase (TX,
 * MATCHED_VAR, counts…), computed once per transaction and value.
 *
 * Values of a phase's sources are transformed into arrays, one per chain
 * node (bw_exec.c); everything else comes here. A result is kept under
 * (value's address, length, program chain node): such values point into
 * collections, so the address identifies the value while it is unchanged,
 * and a chain that shares a prefix with an earlier one (same node) resumes
 * from that prefix's result. Open addressing over an append-only entry
 * array; nothing is evicted (the pool is the transaction's).
 */
#include <string.h>
#include "run/bw_run.h"

typedef struct {
    const char *ptr;
    size_t len;
    int node;
    bw_str_t out;
} slot_t;

struct bw_tfn_cache_s {
    uint32_t *index;   /* open addressing: 0 = empty, else entry number + 1 */
    size_t cap;
    slot_t *entries;   /* in insertion order; only this grows by copying */
    size_t used, room;
};

static size_t slot_of(const bw_tfn_cache_t *c, const char *ptr, size_t len, int node)
{
    uint64_t k = (uint64_t)(uintptr_t)ptr * 0x9e3779b97f4a7c15ULL;
    k ^= ((uint64_t)len << 20) ^ (uint64_t)(unsigned)node;
    k *= 0xff51afd7ed558ccdULL;
    return (size_t)(k ^ (k >> 29)) & (c->cap - 1);
}

/* The index position of the entry, or of the empty place it would take. */
static uint32_t *find(bw_tfn_cache_t *c, const char *ptr, size_t len, int node)
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

static void insert(apr_pool_t *p, bw_tfn_cache_t *c, const char *ptr, size_t len, int node,
                   bw_str_t out)
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
    *find(c, ptr, len, node) = (uint32_t)c->used;
    if (c->used * 10 > c->cap * 7)
        rehash(p, c, c->cap * 2);
}

bw_str_t bw_tfn_apply_node(bw_tx_t *tx, int node, bw_str_t in)
{
    const bw_pnode_t *nodes = tx->prog->nodes;
    bw_tfn_cache_t *c = tx->tfn_cache;
    uint32_t *at;
    bw_str_t cur;
    if (node < 0)
        return in;
    if (!c) {
        c = tx->tfn_cache = apr_pcalloc(tx->pool, sizeof(*c));
        c->room = 64;
        c->entries = apr_palloc(tx->pool, sizeof(slot_t) * c->room);
        rehash(tx->pool, c, 128);
    }
    at = find(c, in.data, in.len, node);
    if (*at)
        return c->entries[*at - 1].out;
    /* the prefix first (cached in turn), then this node's transformation */
    cur = bw_tfn_apply_node(tx, nodes[node].parent, in);
    nodes[node].tfn->fn(&tx->tfn_env, tx->pool, cur, &cur);
    insert(tx->pool, c, in.data, in.len, node, cur);
    return cur;
}

bw_str_t bw_tfn_apply(bw_tx_t *tx, const bw_tfn_def_t *const *tfns, int n, bw_str_t in)
{
    int i;
    for (i = 0; i < n; i++)
        tfns[i]->fn(&tx->tfn_env, tx->pool, in, &in);
    return in;
}

void bw_tfn_cache_reset(bw_tx_t *tx)
{
    tx->tfn_cache = NULL;
}
