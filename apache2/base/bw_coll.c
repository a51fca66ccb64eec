/*
 * Keyed collections (see bw_coll.h).
 *
 * CRS reads and writes TX variables hundreds of times per request, so the
 * table is our own: open addressing with an ASCII case-insensitive hash and
 * compare, so a lookup neither lowercases nor allocates.
 */
#include <string.h>
#include <ctype.h>
#include "base/bw_coll.h"

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

bw_coll_image_t *bw_coll_image(apr_pool_t *p, const bw_coll_t *c)
{
    bw_coll_image_t *im = apr_pcalloc(p, sizeof(*im));
    int n = c->order->nelts, i;
    size_t k;
    im->cap = c->cap;
    im->used = c->used;
    im->n = n;
    im->kv = apr_palloc(p, sizeof(bw_kv_t) * (size_t)(n + 1));
    im->slot = apr_palloc(p, sizeof(int) * c->cap);
    for (i = 0; i < n; i++)
        im->kv[i] = *((bw_kv_t **)c->order->elts)[i];
    for (k = 0; k < c->cap; k++) {
        im->slot[k] = -1;
        for (i = 0; c->slots[k] && i < n; i++)
            if (((bw_kv_t **)c->order->elts)[i] == c->slots[k])
                im->slot[k] = i;
    }
    return im;
}

void bw_coll_load_image(apr_pool_t *p, bw_coll_t *c, const bw_coll_image_t *im)
{
    bw_kv_t *kv = apr_pmemdup(p, im->kv, sizeof(bw_kv_t) * (size_t)(im->n + 1));
    int i;
    size_t k;
    c->cap = im->cap;
    c->used = im->used;
    c->slots = apr_palloc(p, sizeof(bw_kv_t *) * im->cap);
    for (k = 0; k < im->cap; k++)
        c->slots[k] = im->slot[k] >= 0 ? &kv[im->slot[k]] : NULL;
    c->order = apr_array_make(p, im->n > 16 ? im->n : 16, sizeof(bw_kv_t *));
    for (i = 0; i < im->n; i++)
        *(bw_kv_t **)apr_array_push(c->order) = &kv[i];
}

long bw_str_to_num(bw_str_t s)
{
    size_t i = 0;
    long v = 0;
    int neg = 0;
    while (i < s.len && isspace((unsigned char)s.data[i]))
        i++;
    if (i < s.len && (s.data[i] == '-' || s.data[i] == '+'))
        neg = s.data[i++] == '-';
    while (i < s.len && s.data[i] >= '0' && s.data[i] <= '9' && v < 100000000000L)
        v = v * 10 + (s.data[i++] - '0');
    return neg ? -v : v;
}
