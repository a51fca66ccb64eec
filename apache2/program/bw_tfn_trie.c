/*
 * Transformation chains interned into a trie at start-up: one node per
 * prefix, equal prefixes share nodes, so the executor computes each prefix
 * of a chain once per value, whichever rule asks (run/bw_tfn_cache.c).
 */
#include <string.h>
#include "program/bw_prog.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

typedef struct {
    const bw_tfn_node_t *parent;
    const bw_tfn_def_t *tfn;
} node_key_t;

const bw_tfn_node_t *const *bw_tfn_intern(apr_pool_t *p, apr_hash_t *trie,
                                           const bw_tfn_def_t *const *tfns, int n)
{
    const bw_tfn_node_t **nodes;
    const bw_tfn_node_t *parent = NULL;
    int i;
    if (n <= 0)
        return NULL;
    nodes = apr_palloc(p, sizeof(*nodes) * (size_t)n);
    for (i = 0; i < n; i++) {
        node_key_t key;
        bw_tfn_node_t *node;
        memset(&key, 0, sizeof(key));
        key.parent = parent;
        key.tfn = tfns[i];
        node = apr_hash_get(trie, &key, sizeof(key));
        if (!node) {
            node = apr_palloc(p, sizeof(*node));
            node->parent = parent;
            node->tfn = tfns[i];
            node->hash = mix(parent ? parent->hash : 0, (uint64_t)(uintptr_t)tfns[i]);
            apr_hash_set(trie, apr_pmemdup(p, &key, sizeof(key)), sizeof(key), node);
        }
        nodes[i] = parent = node;
    }
    return nodes;
}

