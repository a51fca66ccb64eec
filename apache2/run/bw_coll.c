/*
 * Keyed collections (TX, IP, SESSION…): case-insensitive keys that keep the
 * spelling they were first set with, insertion order for listing.
 *
 * CRS reads and writes TX variables hundreds of times per request, so the
 * table is our own: open addressing with an ASCII case-insensitive hash and
 * compare, so a lookup neither lowercases nor allocates.
 */
#include <string.h>
#include "run/bw_run.h"

static inline unsigned char lc(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

static uint32_t hash_ci(bw_str_t k)
{
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < k.len; i++)
        h = (h ^ lc((unsigned char)k.data[i])) * 16777619u;
    return h;
}

static void table_init(apr_pool_t *p, bw_coll_t *c, size_t cap)
{
    c->cap = cap;
    c->used = 0;
    c->slots = apr_pcalloc(p, sizeof(bw_kv_t *) * cap);
}

bw_coll_t *bw_coll_create(apr_pool_t *p, const char *name)
{
    bw_coll_t *c = apr_pcalloc(p, sizeof(*c));
    c->name = name;
    c->order = apr_array_make(p, 16, sizeof(bw_kv_t *));
    table_init(p, c, 32);
    return c;
}

/* Slot holding key, or the empty slot where it would go. Deleted entries
 * stay as tombstones (kv->name.data == NULL) so probe chains hold. */
static bw_kv_t **slot_for(const bw_coll_t *c, bw_str_t key, int for_insert)
{
    size_t i = hash_ci(key) & (c->cap - 1);
    bw_kv_t **tomb = NULL;
    for (;;) {
        bw_kv_t **s = &c->slots[i];
        if (!*s)
            return (for_insert && tomb) ? tomb : s;
        if (!(*s)->name.data) {
            if (!tomb)
                tomb = s;
        } else if (bw_str_eq_ci((*s)->name, key)) {
            return s;
        }
        i = (i + 1) & (c->cap - 1);
    }
}

const bw_kv_t *bw_coll_get(const bw_coll_t *c, bw_str_t key)
{
    bw_kv_t *kv = *slot_for(c, key, 0);
    return (kv && kv->name.data) ? kv : NULL;
}

static void grow(apr_pool_t *p, bw_coll_t *c)
{
    bw_kv_t **old = c->slots;
    size_t i, oldcap = c->cap;
    table_init(p, c, oldcap * 2);
    for (i = 0; i < oldcap; i++)
        if (old[i] && old[i]->name.data) {
            *slot_for(c, old[i]->name, 1) = old[i];
            c->used++;
        }
}

void bw_coll_set(apr_pool_t *p, bw_coll_t *c, bw_str_t key, bw_str_t value)
{
    bw_kv_t **s = slot_for(c, key, 0), *kv = *s;
    if (kv && kv->name.data) {
        kv->value = bw_str_n(bw_str_pdup(p, value), value.len);
        return;
    }
    if ((c->used + 1) * 4 > c->cap * 3) {
        grow(p, c);
    }
    s = slot_for(c, key, 1);
    kv = apr_palloc(p, sizeof(*kv));
    kv->name = bw_str_n(bw_str_pdup(p, key), key.len);
    kv->value = bw_str_n(bw_str_pdup(p, value), value.len);
    if (!*s)
        c->used++;
    *s = kv;
    *(bw_kv_t **)apr_array_push(c->order) = kv;
}

void bw_coll_unset(bw_coll_t *c, bw_str_t key)
{
    bw_kv_t *kv = *slot_for(c, key, 0);
    if (kv && kv->name.data)
        kv->name.data = NULL;   /* tombstone; the order list skips it */
}

void bw_coll_clear(apr_pool_t *p, bw_coll_t *c)
{
    c->order = apr_array_make(p, 16, sizeof(bw_kv_t *));
    table_init(p, c, 32);
}
