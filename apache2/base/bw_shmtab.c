/*
 * The shared record table (bw_shmtab.h).
 *
 * Layout of the block, all offsets from its start:
 *
 *   head     128 bytes: magic, geometry, the hash seed
 *   stripes  128 bytes each: a robust process-shared mutex, counters, the
 *            free list and the LRU list of that stripe
 *   regions  one per stripe: its index (open addressing, linear probing,
 *            uint32 entries = slot + 1, 0 empty, at most half full), then
 *            its slots of record_size bytes
 *
 * A record lives in one stripe, chosen by its key's hash, so one lock
 * covers its slot, its index entry and the lists. A slot is a 32-byte
 * header (hash, expiry, LRU links, key and content lengths), the key, the
 * content. Nothing in the block is a pointer: every process maps it at its
 * own address.
 *
 * Why robust mutexes: a worker killed while it holds a stripe's lock must
 * not stop every other worker. The next locker is told the owner died
 * (EOWNERDEAD); the stripe's records may be half written, so it clears
 * that stripe (its records are lost, the rest of the table is not) and
 * marks the lock consistent again.
 */
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <apr_general.h>
#include "base/bw_shmtab.h"

#define MAGIC      "BWSHMT01"
#define HEAD_SIZE  128
#define STRIPE_HDR 128
#define SLOT_HDR   32
#define NIL        0xffffffffu
#define FREE       0xffffffffu   /* klen of a free slot */
#define MAX_STRIPES 64

typedef struct {
    char magic[8];
    uint64_t size;
    uint64_t seed;
    uint32_t record_size;
    uint32_t nstripes;
    uint32_t sps;                /* slots per stripe */
    uint32_t isize;              /* index entries per stripe (a power of two) */
    uint64_t region;             /* bytes per stripe region */
} head_t;

typedef struct {
    pthread_mutex_t mu;
    uint32_t used, free_head, lru_head, lru_tail;
    uint32_t unused;             /* slots [unused, sps) were never used: not on the free list */
    uint64_t evicted, refused, recovered;
} stripe_t;

typedef struct {
    uint64_t hash;
    int64_t expires;             /* seconds; 0 never */
    uint32_t prev, next;         /* LRU links (next: free list too) */
    uint32_t klen, len;          /* klen FREE: a free slot */
} slot_t;

struct bw_shmtab_s {
    char *base;
    head_t *h;
    int refuse_full;
};

/* The geometry a block of size bytes gets. */
typedef struct {
    uint32_t record_size, nstripes, sps, isize;
    uint64_t region;
} geom_t;

typedef char check_stripe_size[sizeof(stripe_t) <= STRIPE_HDR ? 1 : -1];
typedef char check_slot_size[sizeof(slot_t) == SLOT_HDR ? 1 : -1];
typedef char check_head_size[sizeof(head_t) <= HEAD_SIZE ? 1 : -1];

static size_t up64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t p = 8;
    while (p < n)
        p <<= 1;
    return p;
}

/* The most slots a stripe region of `avail` bytes holds. */
static uint32_t fit_slots(size_t avail, uint32_t rsize, uint32_t *isize)
{
    uint32_t sps = (uint32_t)(avail / rsize);
    while (sps > 0) {
        uint32_t is = pow2_at_least(sps * 2);
        if (up64((size_t)is * 4) + (size_t)sps * rsize <= avail) {
            *isize = is;
            return sps;
        }
        sps--;
    }
    return 0;
}

static int geometry(size_t size, unsigned record_size, geom_t *g)
{
    uint32_t ns = MAX_STRIPES;
    g->record_size = (uint32_t)up64(record_size < 128 ? 128 : record_size);
    for (; ns >= 1; ns /= 2) {
        size_t avail;
        if (size < HEAD_SIZE + (size_t)ns * STRIPE_HDR)
            continue;
        avail = (size - HEAD_SIZE - (size_t)ns * STRIPE_HDR) / ns;
        avail &= ~(size_t)63;
        g->sps = fit_slots(avail, g->record_size, &g->isize);
        /* a stripe of a handful of slots would evict too eagerly: fewer stripes */
        if (g->sps >= 8 || (ns == 1 && g->sps > 0)) {
            g->nstripes = ns;
            g->region = avail;
            return 0;
        }
    }
    return -1;
}

unsigned bw_shmtab_capacity(size_t size, unsigned record_size)
{
    geom_t g;
    return geometry(size, record_size, &g) ? 0 : g.sps * g.nstripes;
}

/* A hash of the key under the table's seed: keys come from requests, so
 * a seed nobody outside knows keeps them from piling into one stripe. */
static uint64_t fmix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t key_hash(uint64_t seed, const char *k, size_t n)
{
    uint64_t h = fmix(seed ^ (n * 0x9e3779b97f4a7c15ULL));
    size_t i;
    for (i = 0; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, k + i, 8);
        h = fmix(h ^ w) + 0x9e3779b97f4a7c15ULL;
    }
    if (i < n) {
        uint64_t w = 0;
        memcpy(&w, k + i, n - i);
        h = fmix(h ^ w ^ ((uint64_t)(n - i) << 56));
    }
    return h ? h : 1;
}

static stripe_t *stripe_at(const bw_shmtab_t *t, uint32_t s)
{
    return (stripe_t *)(t->base + HEAD_SIZE + (size_t)s * STRIPE_HDR);
}

static uint32_t *index_of(const bw_shmtab_t *t, uint32_t s)
{
    const head_t *h = t->h;
    return (uint32_t *)(t->base + HEAD_SIZE + (size_t)h->nstripes * STRIPE_HDR + (size_t)s * h->region);
}

static slot_t *slot_at(const bw_shmtab_t *t, uint32_t s, uint32_t i)
{
    const head_t *h = t->h;
    return (slot_t *)((char *)index_of(t, s) + up64((size_t)h->isize * 4) + (size_t)i * h->record_size);
}

static char *slot_key(slot_t *sl)
{
    return (char *)sl + SLOT_HDR;
}

/* Empty stripe s: index and lists empty, every slot unused. The slots
 * themselves are not touched, so a block's pages are used only as records
 * fill them (a large SecCollectionShmSize costs what is stored). */
static void clear_stripe(bw_shmtab_t *t, uint32_t s)
{
    stripe_t *st = stripe_at(t, s);
    memset(index_of(t, s), 0, (size_t)t->h->isize * 4);
    st->free_head = NIL;
    st->unused = 0;
    st->lru_head = st->lru_tail = NIL;
    st->used = 0;
}

static int init_stripe(bw_shmtab_t *t, uint32_t s)
{
    stripe_t *st = stripe_at(t, s);
    pthread_mutexattr_t a;
    int rc;
    memset(st, 0, sizeof(*st));
    if (pthread_mutexattr_init(&a))
        return -1;
    rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED)
         || pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST)
         || pthread_mutex_init(&st->mu, &a);
    pthread_mutexattr_destroy(&a);
    if (rc)
        return -1;
    clear_stripe(t, s);
    return 0;
}

static int adoptable(const head_t *h, size_t size, const geom_t *g)
{
    return !memcmp(h->magic, MAGIC, 8) && h->size == size && h->record_size == g->record_size
           && h->nstripes == g->nstripes && h->sps == g->sps && h->isize == g->isize
           && h->region == g->region;
}

bw_shmtab_t *bw_shmtab_attach(apr_pool_t *p, void *base, size_t size, unsigned record_size,
                              int refuse_full, int *adopted, const char **err)
{
    bw_shmtab_t *t = apr_pcalloc(p, sizeof(*t));
    head_t *h = base;
    geom_t g;
    uint32_t s;

    *adopted = 0;
    if (geometry(size, record_size, &g)) {
        *err = apr_psprintf(p, "%lu bytes cannot hold a table of %u-byte records",
                            (unsigned long)size, record_size);
        return NULL;
    }
    t->base = base;
    t->h = h;
    t->refuse_full = refuse_full;
    if (adoptable(h, size, &g)) {
        *adopted = 1;
        return t;
    }
    memset(h, 0, HEAD_SIZE);
    h->size = size;
    h->record_size = g.record_size;
    h->nstripes = g.nstripes;
    h->sps = g.sps;
    h->isize = g.isize;
    h->region = g.region;
    if (apr_generate_random_bytes((unsigned char *)&h->seed, sizeof(h->seed)) != APR_SUCCESS)
        h->seed = (uint64_t)apr_time_now() ^ (uint64_t)(uintptr_t)base;
    for (s = 0; s < g.nstripes; s++)
        if (init_stripe(t, s)) {
            *err = "cannot make a process-shared robust mutex";
            return NULL;
        }
    /* the magic last: a block is adopted only once it is whole */
    memcpy(h->magic, MAGIC, 8);
    return t;
}

size_t bw_shmtab_room(const bw_shmtab_t *t, size_t klen)
{
    size_t cap = t->h->record_size - SLOT_HDR;
    return klen >= cap ? 0 : cap - klen;
}

/* ---- one stripe, under its lock --------------------------------------------- */

static int lock_stripe(bw_shmtab_t *t, uint32_t s)
{
    stripe_t *st = stripe_at(t, s);
    int rc = pthread_mutex_lock(&st->mu);
    if (rc == EOWNERDEAD) {
        clear_stripe(t, s);
        st->recovered++;
        pthread_mutex_consistent(&st->mu);
        return 0;
    }
    return rc;
}

static void lru_unlink(bw_shmtab_t *t, uint32_t s, uint32_t i)
{
    stripe_t *st = stripe_at(t, s);
    slot_t *sl = slot_at(t, s, i);
    if (sl->prev != NIL)
        slot_at(t, s, sl->prev)->next = sl->next;
    else
        st->lru_head = sl->next;
    if (sl->next != NIL)
        slot_at(t, s, sl->next)->prev = sl->prev;
    else
        st->lru_tail = sl->prev;
    sl->prev = sl->next = NIL;
}

static void lru_push(bw_shmtab_t *t, uint32_t s, uint32_t i)
{
    stripe_t *st = stripe_at(t, s);
    slot_t *sl = slot_at(t, s, i);
    sl->prev = NIL;
    sl->next = st->lru_head;
    if (st->lru_head != NIL)
        slot_at(t, s, st->lru_head)->prev = i;
    st->lru_head = i;
    if (st->lru_tail == NIL)
        st->lru_tail = i;
}

/* The index position holding slot i's entry. */
static uint32_t index_pos(bw_shmtab_t *t, uint32_t s, uint32_t i)
{
    uint32_t *ix = index_of(t, s), mask = t->h->isize - 1;
    uint32_t pos = (uint32_t)slot_at(t, s, i)->hash & mask;
    while (ix[pos] != i + 1)
        pos = (pos + 1) & mask;
    return pos;
}

/* Drop index position pos, shifting back the entries that probed past it
 * (linear probing without tombstones). */
static void index_remove(bw_shmtab_t *t, uint32_t s, uint32_t pos)
{
    uint32_t *ix = index_of(t, s), mask = t->h->isize - 1, j = pos;
    for (;;) {
        uint32_t home;
        j = (j + 1) & mask;
        if (!ix[j])
            break;
        home = (uint32_t)slot_at(t, s, ix[j] - 1)->hash & mask;
        /* can the entry at j move to pos? only if its home is not in (pos, j] */
        if (pos <= j ? (home <= pos || home > j) : (home <= pos && home > j)) {
            ix[pos] = ix[j];
            pos = j;
        }
    }
    ix[pos] = 0;
}

static void free_slot(bw_shmtab_t *t, uint32_t s, uint32_t i)
{
    stripe_t *st = stripe_at(t, s);
    slot_t *sl = slot_at(t, s, i);
    index_remove(t, s, index_pos(t, s, i));
    lru_unlink(t, s, i);
    sl->klen = FREE;
    sl->len = 0;
    sl->next = st->free_head;
    st->free_head = i;
    st->used--;
}

static uint32_t find(bw_shmtab_t *t, uint32_t s, uint64_t hash, const char *key, size_t klen)
{
    uint32_t *ix = index_of(t, s), mask = t->h->isize - 1, pos = (uint32_t)hash & mask;
    for (; ix[pos]; pos = (pos + 1) & mask) {
        slot_t *sl = slot_at(t, s, ix[pos] - 1);
        if (sl->hash == hash && sl->klen == klen && !memcmp(slot_key(sl), key, klen))
            return ix[pos] - 1;
    }
    return NIL;
}

/* A slot for a new record: a free one, else (evicting) the least recently
 * used, else (refusing) one whose record expired. */
static uint32_t take_slot(bw_shmtab_t *t, uint32_t s, int64_t now)
{
    stripe_t *st = stripe_at(t, s);
    uint32_t i;
    if (st->free_head == NIL && st->unused < t->h->sps) {
        st->used++;
        return st->unused++;
    }
    if (st->free_head == NIL) {
        if (!t->refuse_full && st->lru_tail != NIL) {
            free_slot(t, s, st->lru_tail);
            st->evicted++;
        } else {
            for (i = 0; i < st->unused; i++) {
                slot_t *sl = slot_at(t, s, i);
                if (sl->klen != FREE && sl->expires && sl->expires <= now) {
                    free_slot(t, s, i);
                    break;
                }
            }
        }
    }
    i = st->free_head;
    if (i != NIL) {
        st->free_head = slot_at(t, s, i)->next;
        st->used++;
    }
    return i;
}

static int write_record(bw_shmtab_t *t, uint32_t s, uint32_t i, uint64_t hash, const char *key,
                        size_t klen, const bw_shmtab_op_t *op)
{
    stripe_t *st = stripe_at(t, s);
    slot_t *sl;
    if (SLOT_HDR + klen + op->len > t->h->record_size) {
        st->refused++;
        return BW_SHMTAB_TOOBIG;
    }
    if (i == NIL) {
        uint32_t *ix = index_of(t, s), mask = t->h->isize - 1, pos = (uint32_t)hash & mask;
        i = take_slot(t, s, op->now);
        if (i == NIL) {
            st->refused++;
            return BW_SHMTAB_FULL;
        }
        sl = slot_at(t, s, i);
        sl->hash = hash;
        sl->klen = (uint32_t)klen;
        memcpy(slot_key(sl), key, klen);
        while (ix[pos])
            pos = (pos + 1) & mask;
        ix[pos] = i + 1;
    } else {
        sl = slot_at(t, s, i);
        lru_unlink(t, s, i);
    }
    /* the content may be the slot's own bytes, moved */
    memmove(slot_key(sl) + klen, op->data, op->len);
    sl->len = (uint32_t)op->len;
    sl->expires = op->expires;
    lru_push(t, s, i);
    return BW_SHMTAB_OK;
}

int bw_shmtab_access(bw_shmtab_t *t, const char *key, size_t klen, int64_t now,
                     bw_shmtab_fn fn, void *baton)
{
    uint64_t hash = key_hash(t->h->seed, key, klen);
    uint32_t s = (uint32_t)(hash >> 40) & (t->h->nstripes - 1), i;
    bw_shmtab_op_t op;
    int rc = BW_SHMTAB_OK;

    if (lock_stripe(t, s))
        return BW_SHMTAB_BROKEN;
    i = find(t, s, hash, key, klen);
    if (i != NIL && slot_at(t, s, i)->expires && slot_at(t, s, i)->expires <= now) {
        free_slot(t, s, i);
        i = NIL;
    }
    memset(&op, 0, sizeof(op));
    op.now = now;
    if (i != NIL) {
        slot_t *sl = slot_at(t, s, i);
        op.cur = slot_key(sl) + sl->klen;
        op.cur_len = sl->len;
        op.expires = sl->expires;
    }
    fn(baton, &op);
    if (op.action == BW_SHMTAB_WRITE) {
        rc = write_record(t, s, i, hash, key, klen, &op);
    } else if (i != NIL) {
        if (op.action == BW_SHMTAB_DELETE) {
            free_slot(t, s, i);
        } else {
            lru_unlink(t, s, i);
            lru_push(t, s, i);
        }
    }
    pthread_mutex_unlock(&stripe_at(t, s)->mu);
    return rc;
}

void bw_shmtab_stats(bw_shmtab_t *t, bw_shmtab_stats_t *out)
{
    uint32_t s;
    memset(out, 0, sizeof(*out));
    out->size = (size_t)t->h->size;
    out->record_size = t->h->record_size;
    out->stripes = t->h->nstripes;
    out->capacity = (uint64_t)t->h->sps * t->h->nstripes;
    for (s = 0; s < t->h->nstripes; s++) {
        stripe_t *st = stripe_at(t, s);
        if (lock_stripe(t, s))
            continue;
        out->records += st->used;
        out->evicted += st->evicted;
        out->refused += st->refused;
        out->recovered += st->recovered;
        pthread_mutex_unlock(&st->mu);
    }
}
