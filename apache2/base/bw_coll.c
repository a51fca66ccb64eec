/*
 * Keyed collections (see bw_coll.h).
 *
 * CRS reads and writes TX variables hundreds of times per request, so the
 * table is our own: open addressing over 32-bit slots (1 + the entry's
 * place in the insertion order), every entry keeping the hash of its name,
 * an ASCII case-insensitive hash and compare. A lookup neither lowercases
 * nor allocates; names known at start-up bring their hash along, and a
 * probe compares the bytes of a name only when the hashes agree.
 */
#include <string.h>
#include <ctype.h>
#include "base/bw_coll.h"

/* One entry: the pair the order lists (first, so the two are one pointer)
 * and the hash of its name. */
typedef struct {
    bw_kv_t kv;
    uint32_t hash;
    const bw_keysel_t *sel;     /* the key's, when it was set */
} entry_t;

struct bw_coll_image_s {
    size_t cap, used;
    int n;
    entry_t *ent;               /* the set entries, in insertion order */
    uint32_t *slots;            /* as a collection's, over ent */
    apr_hash_t *sels;           /* const pcre2_code* -> bw_coll_sel_t* over ent */
    int nsels;
};

/* A key's answers to an image's selections: bit i for the selection
 * whose bit is i. */
struct bw_keysel_s {
    const bw_coll_image_t *im;
    uint32_t *bits;
};

#define MIN_CAP 32

uint32_t bw_key_hash(bw_str_t k)
{
    const uint64_t mul = 0xff51afd7ed558ccdULL;
    uint64_t a = 0x9e3779b97f4a7c15ULL ^ (uint64_t)k.len, b = 0xc2b2ae3d27d4eb4fULL;
    size_t i = 0, n = k.len;
    /* eight bytes at a time, lowered together, in two independent chains
     * (a multiply's latency each): names are hashed at run time only when
     * a macro builds them (tx.paramcounter_%{MATCHED_VAR_NAME}) */
    for (; i + 16 <= n; i += 16) {
        uint64_t w0, w1;
        memcpy(&w0, k.data + i, 8);
        memcpy(&w1, k.data + i + 8, 8);
        a = (a ^ bw_lower8(w0)) * mul;
        b = (b ^ bw_lower8(w1)) * mul;
        a ^= a >> 29;
        b ^= b >> 29;
    }
    if (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, k.data + i, 8);
        a = (a ^ bw_lower8(w)) * mul;
        a ^= a >> 29;
        i += 8;
    }
    if (i < n) {
        uint64_t w = 0;
        if (n >= 8) {
            /* the last eight bytes, the ones already hashed shifted out
             * (on a big-endian machine others are: the same for the same
             * name, which is all a hash needs) */
            memcpy(&w, k.data + n - 8, 8);
            w >>= 8 * (8 - (n - i));
        } else {
            size_t j;
            for (j = 0; i + j < n; j++)
                w |= (uint64_t)(unsigned char)k.data[i + j] << (8 * j);
        }
        b = (b ^ bw_lower8(w)) * mul;
    }
    a ^= b ^ (b >> 31);
    a ^= a >> 32;
    a *= 0xc4ceb9fe1a85ec53ULL;
    a ^= a >> 29;
    return (uint32_t)a;
}

bw_key_t bw_key_make(bw_str_t name)
{
    bw_key_t k;
    k.name = name;
    k.hash = bw_key_hash(name);
    k.sel = NULL;
    return k;
}

/* Equal but for ASCII case (bw_mem_eq_ci). Names of the program's own
 * strings are often the very same bytes. */
static int same_name(bw_str_t a, bw_str_t b)
{
    if (a.len != b.len)
        return 0;
    return a.data == b.data || bw_mem_eq_ci(a.data, b.data, a.len);
}

static size_t cap_for(size_t n)
{
    size_t cap = MIN_CAP;
    while (cap < 2 * n)
        cap *= 2;
    return cap;
}

static void table_init(apr_pool_t *p, bw_coll_t *c, size_t cap)
{
    c->cap = cap;
    c->used = 0;
    c->slots = apr_pcalloc(p, sizeof(uint32_t) * cap);
}

bw_coll_t *bw_coll_create_n(apr_pool_t *p, const char *name, size_t n)
{
    bw_coll_t *c = apr_pcalloc(p, sizeof(*c));
    c->name = name;
    c->order = apr_array_make(p, n > 16 ? (int)n : 16, sizeof(bw_kv_t *));
    table_init(p, c, cap_for(n));
    return c;
}

bw_coll_t *bw_coll_create(apr_pool_t *p, const char *name)
{
    return bw_coll_create_n(p, name, 16);
}

static inline entry_t *entry_at(const bw_coll_t *c, uint32_t s)
{
    return (entry_t *)((bw_kv_t **)c->order->elts)[s - 1];
}

/* The slot holding name, or the empty slot that ends its probe chain.
 * Unset entries stay in the table (name.data == NULL) so that chains hold;
 * *tomb: the first of them on the way, or c->cap. */
static size_t probe(const bw_coll_t *c, bw_str_t name, uint32_t h, size_t *tomb)
{
    size_t mask = c->cap - 1, i = h & mask;
    *tomb = c->cap;
    for (;; i = (i + 1) & mask) {
        uint32_t s = c->slots[i];
        const entry_t *e;
        if (!s)
            return i;
        e = entry_at(c, s);
        if (!e->kv.name.data) {
            if (*tomb == c->cap)
                *tomb = i;
        } else if (e->hash == h && same_name(e->kv.name, name)) {
            return i;
        }
    }
}

const bw_kv_t *bw_coll_find(const bw_coll_t *c, const bw_key_t *k)
{
    size_t tomb, i = probe(c, k->name, k->hash, &tomb);
    return c->slots[i] ? &entry_at(c, c->slots[i])->kv : NULL;
}

const bw_kv_t *bw_coll_get(const bw_coll_t *c, bw_str_t key)
{
    bw_key_t k = bw_key_make(key);
    return bw_coll_find(c, &k);
}

/* The table rebuilt twice as large from the entries still set. */
static void grow(apr_pool_t *p, bw_coll_t *c)
{
    bw_kv_t **ord = (bw_kv_t **)c->order->elts;
    int j;
    table_init(p, c, c->cap * 2);
    for (j = 0; j < c->order->nelts; j++) {
        const entry_t *e = (const entry_t *)ord[j];
        size_t i;
        if (!e->kv.name.data)
            continue;
        for (i = e->hash & (c->cap - 1); c->slots[i]; i = (i + 1) & (c->cap - 1))
            ;
        c->slots[i] = (uint32_t)j + 1;
        c->used++;
    }
}

static bw_str_t keep_or_copy(apr_pool_t *p, bw_str_t s, int keep)
{
    return keep ? s : bw_str_n(bw_str_pdup(p, s), s.len);
}

bw_kv_t *bw_coll_entry(apr_pool_t *p, bw_coll_t *c, const bw_key_t *k, unsigned keep, int *made)
{
    size_t tomb, i = probe(c, k->name, k->hash, &tomb);
    entry_t *e;
    *made = 0;
    if (c->slots[i])
        return &entry_at(c, c->slots[i])->kv;
    *made = 1;
    if ((c->used + 1) * 4 > c->cap * 3) {
        grow(p, c);
        i = probe(c, k->name, k->hash, &tomb);
    }
    if (tomb != c->cap)
        i = tomb;
    else
        c->used++;
    e = apr_palloc(p, sizeof(*e));
    e->kv.name = keep_or_copy(p, k->name, keep & BW_COLL_KEEP_NAME);
    e->kv.value = bw_str_n("", 0);
    e->hash = k->hash;
    e->sel = k->sel;
    *(bw_kv_t **)bw_array_push(c->order) = &e->kv;
    c->slots[i] = (uint32_t)c->order->nelts;
    return &e->kv;
}

const bw_kv_t *bw_coll_put(apr_pool_t *p, bw_coll_t *c, const bw_key_t *k, bw_str_t value,
                           unsigned keep)
{
    int made;
    bw_kv_t *kv = bw_coll_entry(p, c, k, keep, &made);
    kv->value = keep_or_copy(p, value, keep & BW_COLL_KEEP_VALUE);
    return kv;
}

void bw_coll_set(apr_pool_t *p, bw_coll_t *c, bw_str_t key, bw_str_t value)
{
    bw_key_t k = bw_key_make(key);
    bw_coll_put(p, c, &k, value, 0);
}

void bw_coll_remove(bw_coll_t *c, const bw_key_t *k)
{
    size_t tomb, i = probe(c, k->name, k->hash, &tomb);
    if (c->slots[i])
        entry_at(c, c->slots[i])->kv.name.data = NULL;   /* the order list skips it */
}

void bw_coll_unset(bw_coll_t *c, bw_str_t key)
{
    bw_key_t k = bw_key_make(key);
    bw_coll_remove(c, &k);
}

void bw_coll_clear(apr_pool_t *p, bw_coll_t *c)
{
    c->order = apr_array_make(p, 16, sizeof(bw_kv_t *));
    c->image = NULL;
    c->sels = NULL;
    table_init(p, c, MIN_CAP);
}

/* ---- images ------------------------------------------------------------- */

bw_coll_image_t *bw_coll_image(apr_pool_t *p, const bw_coll_t *c, size_t more)
{
    bw_coll_image_t *im = apr_pcalloc(p, sizeof(*im));
    bw_coll_t t;
    int i, n = 0;
    im->ent = apr_palloc(p, sizeof(entry_t) * (size_t)(c->order->nelts + 1));
    for (i = 0; i < c->order->nelts; i++) {
        const entry_t *e = (const entry_t *)((bw_kv_t **)c->order->elts)[i];
        if (e->kv.name.data)
            im->ent[n++] = *e;
    }
    im->n = n;
    /* the table of a collection holding just these, sized for more */
    memset(&t, 0, sizeof(t));
    t.order = apr_array_make(p, n + 1, sizeof(bw_kv_t *));
    for (i = 0; i < n; i++)
        *(bw_kv_t **)apr_array_push(t.order) = &im->ent[i].kv;
    t.cap = cap_for((size_t)n + more) / 2;
    grow(p, &t);
    im->cap = t.cap;
    im->used = t.used;
    im->slots = t.slots;
    return im;
}

void bw_coll_load_image(apr_pool_t *p, bw_coll_t *c, const bw_coll_image_t *im)
{
    entry_t *e = apr_palloc(p, sizeof(entry_t) * (size_t)(im->n + 1));
    bw_kv_t **ord;
    int i;
    memcpy(e, im->ent, sizeof(entry_t) * (size_t)im->n);
    c->cap = im->cap;
    c->used = im->used;
    c->slots = apr_palloc(p, sizeof(uint32_t) * im->cap);
    memcpy(c->slots, im->slots, sizeof(uint32_t) * im->cap);
    c->order = apr_array_make(p, im->n + 16 + (int)(im->cap / 4), sizeof(bw_kv_t *));
    ord = (bw_kv_t **)c->order->elts;
    for (i = 0; i < im->n; i++)
        ord[i] = &e[i].kv;
    c->order->nelts = im->n;
    c->image = im;
    c->sels = NULL;
}

int bw_coll_image_size(const bw_coll_image_t *im)
{
    return im->n;
}

static void sel_push(apr_pool_t *p, bw_coll_sel_t *s, int idx)
{
    if (s->n == s->cap) {
        int *n = apr_palloc(p, sizeof(int) * (size_t)(s->cap * 2 + 8));
        if (s->n)
            memcpy(n, s->idx, sizeof(int) * (size_t)s->n);
        s->idx = n;
        s->cap = s->cap * 2 + 8;
    }
    s->idx[s->n++] = idx;
}

/* Does s's regex match name? */
static int sel_match(const bw_coll_sel_t *s, bw_str_t name, pcre2_match_data *md)
{
    return s->lit ? bw_relit_match(s->lit, name) : bw_regex_match(s->re, name, md) > 0;
}

void bw_coll_image_select(apr_pool_t *p, bw_coll_image_t *im, const pcre2_code *re,
                          const bw_relit_t *lit, pcre2_match_data *md)
{
    bw_coll_sel_t *s;
    if (!im->sels)
        im->sels = apr_hash_make(p);
    if (apr_hash_get(im->sels, &re, sizeof(re)))
        return;
    s = apr_pcalloc(p, sizeof(*s));
    s->re = re;
    s->lit = lit;
    s->bit = im->nsels++;
    for (; s->upto < im->n; s->upto++)
        if (sel_match(s, im->ent[s->upto].kv.name, md))
            sel_push(p, s, s->upto);
    apr_hash_set(im->sels, &s->re, sizeof(s->re), s);
}

void bw_coll_image_key(apr_pool_t *p, const bw_coll_image_t *im, bw_key_t *k,
                       pcre2_match_data *md)
{
    bw_keysel_t *ks;
    apr_hash_index_t *hi;
    if (!im->sels)
        return;
    ks = apr_palloc(p, sizeof(*ks));
    ks->im = im;
    ks->bits = apr_pcalloc(p, sizeof(uint32_t) * (size_t)(im->nsels / 32 + 1));
    for (hi = apr_hash_first(p, im->sels); hi; hi = apr_hash_next(hi)) {
        const bw_coll_sel_t *s = apr_hash_this_val(hi);
        if (sel_match(s, k->name, md))
            ks->bits[s->bit / 32] |= (uint32_t)1 << (s->bit % 32);
    }
    k->sel = ks;
}

/* Does the entry at i of c's order belong in s? Its key may know. */
static int sel_matches(const bw_coll_t *c, const bw_coll_sel_t *s, int i, pcre2_match_data *md)
{
    const entry_t *e = (const entry_t *)((bw_kv_t **)c->order->elts)[i];
    if (!e->kv.name.data)
        return 0;
    if (e->sel && s->bit >= 0 && e->sel->im == c->image)
        return (e->sel->bits[s->bit / 32] >> (s->bit % 32)) & 1;
    return sel_match(s, e->kv.name, md);
}

/* A new selection of re in c: what the image c started from knows, or
 * nothing yet. */
static bw_coll_sel_t *sel_new(apr_pool_t *p, bw_coll_t *c, const pcre2_code *re,
                              const bw_relit_t *lit)
{
    bw_coll_sel_t *s = apr_pcalloc(p, sizeof(*s));
    const bw_coll_sel_t *base = c->image && c->image->sels
                              ? apr_hash_get(c->image->sels, &re, sizeof(re)) : NULL;
    s->re = re;
    s->lit = lit;
    s->bit = -1;
    if (base) {
        s->bit = base->bit;
        s->upto = base->upto;
        s->n = base->n;
        s->cap = base->n + 8;
        s->idx = apr_palloc(p, sizeof(int) * (size_t)s->cap);
        if (base->n)
            memcpy(s->idx, base->idx, sizeof(int) * (size_t)base->n);
    }
    if (!c->sels)
        c->sels = apr_array_make(p, 8, sizeof(bw_coll_sel_t *));
    *(bw_coll_sel_t **)apr_array_push(c->sels) = s;
    return s;
}

const bw_coll_sel_t *bw_coll_select(apr_pool_t *p, bw_coll_t *c, const pcre2_code *re,
                                    const bw_relit_t *lit, pcre2_match_data *md)
{
    bw_coll_sel_t *s = NULL;
    int i;
    for (i = 0; c->sels && i < c->sels->nelts; i++)
        if (((bw_coll_sel_t **)c->sels->elts)[i]->re == re) {
            s = ((bw_coll_sel_t **)c->sels->elts)[i];
            break;
        }
    if (!s)
        s = sel_new(p, c, re, lit);
    /* a name is matched when first seen; one unset before that is never
     * listed again, whatever it matched */
    for (; s->upto < c->order->nelts; s->upto++)
        if (sel_matches(c, s, s->upto, md))
            sel_push(p, s, s->upto);
    return s;
}

/* ---- numbers ------------------------------------------------------------- */

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

bw_str_t bw_num_str(apr_pool_t *p, long v)
{
    static const char *const digit[10] = { "0", "1", "2", "3", "4", "5", "6", "7", "8", "9" };
    char buf[24], *e = buf + sizeof(buf), *q = e, *out;
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    if (v >= 0 && v < 10)   /* most counts and scores: a constant */
        return bw_str_n(digit[v], 1);
    do {
        *--q = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--q = '-';
    out = apr_palloc(p, (size_t)(e - q) + 1);
    memcpy(out, q, (size_t)(e - q));
    out[e - q] = '\0';
    return bw_str_n(out, (size_t)(e - q));
}
