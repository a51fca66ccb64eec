/*
 * Keyed collections (TX, IP, SESSION…): case-insensitive keys that keep the
 * spelling they were first set with, insertion order for listing.
 */
#include <string.h>
#include "bw_internal.h"

bw_coll_t *bw_coll_create(apr_pool_t *p, const char *name)
{
    bw_coll_t *c = apr_palloc(p, sizeof(*c));
    c->name = name;
    c->h = apr_hash_make(p);
    c->order = apr_array_make(p, 16, sizeof(bw_kv_t *));
    c->path = NULL;
    c->orig = NULL;
    c->abs_set = NULL;
    c->dirty = 0;
    return c;
}

/* Keys are compared in lower case; short keys are lowered on the stack. */
#define KEYBUF 128

static const char *lower_key(bw_str_t key, char *buf, apr_pool_t *p)
{
    char *d = key.len < KEYBUF ? buf : apr_palloc(p, key.len + 1);
    size_t i;
    for (i = 0; i < key.len; i++) {
        char ch = key.data[i];
        d[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
    }
    d[key.len] = '\0';
    return d;
}

const bw_kv_t *bw_coll_get(const bw_coll_t *c, bw_str_t key)
{
    char buf[KEYBUF];
    const char *k;
    if (key.len >= KEYBUF) {
        /* rare: long keys compare without a copy */
        apr_hash_index_t *hi;
        for (hi = apr_hash_first(NULL, c->h); hi; hi = apr_hash_next(hi)) {
            const bw_kv_t *kv = apr_hash_this_val(hi);
            if (bw_str_eq_ci(kv->name, key))
                return kv;
        }
        return NULL;
    }
    k = lower_key(key, buf, NULL);
    return apr_hash_get(c->h, k, (apr_ssize_t)key.len);
}

void bw_coll_set(apr_pool_t *p, bw_coll_t *c, bw_str_t key, bw_str_t value)
{
    char buf[KEYBUF];
    const char *k = lower_key(key, buf, p);
    bw_kv_t *kv = apr_hash_get(c->h, k, (apr_ssize_t)key.len);
    if (kv) {
        kv->value = bw_str_n(bw_str_pdup(p, value), value.len);
        return;
    }
    kv = apr_palloc(p, sizeof(*kv));
    kv->name = bw_str_n(bw_str_pdup(p, key), key.len);
    kv->value = bw_str_n(bw_str_pdup(p, value), value.len);
    apr_hash_set(c->h, apr_pstrmemdup(p, k, key.len), (apr_ssize_t)key.len, kv);
    *(bw_kv_t **)apr_array_push(c->order) = kv;
}

void bw_coll_unset(bw_coll_t *c, bw_str_t key)
{
    char buf[KEYBUF];
    const char *k;
    if (key.len >= KEYBUF) {
        apr_hash_index_t *hi;
        for (hi = apr_hash_first(NULL, c->h); hi; hi = apr_hash_next(hi)) {
            const void *hk;
            apr_ssize_t hl;
            bw_kv_t *kv;
            apr_hash_this(hi, &hk, &hl, (void **)&kv);
            if (bw_str_eq_ci(kv->name, key)) {
                apr_hash_set(c->h, hk, hl, NULL);
                return;
            }
        }
        return;
    }
    k = lower_key(key, buf, NULL);
    apr_hash_set(c->h, k, (apr_ssize_t)key.len, NULL);
}
