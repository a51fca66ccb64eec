/*
 * The shared counter block (bw_metrics.h).
 *
 * Layout: a head (magic, when made, the rule directory, the minute
 * buckets), then BW_METRICS_SHARDS + 1 shards, each page aligned so that
 * a shard nobody claimed is never touched. A shard holds the counters of
 * one thread, structure of arrays: a transaction adds to a few hundred
 * consecutive words of `evals`, not to scattered records.
 *
 * The directory maps a rule id to its index: open addressing over twice
 * the capacity, an entry claimed by a compare-and-swap on its id, its
 * index taken from a counter and published after. An entry whose index is
 * not published yet (its writer is between the two steps) is waited for a
 * little, then counted as index 0: nothing ever blocks on a writer that
 * died.
 *
 * A shard's owner word is (pid << 32 | thread number). A shard is free
 * when the word is 0 or names a process that no longer exists (kill(pid,
 * 0) says ESRCH): a worker that exited or crashed leaves its counts, and
 * the next thread to claim the shard adds to them.
 */
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <apr_shm.h>
#include <apr_thread_proc.h>
#include <apr_thread_mutex.h>
#include "base/bw_metrics.h"

#define MAGIC   0x4257204d45545231ULL   /* "BW METR1" */
#define VERSION 4   /* 2: phase time is sampled (phase_timed); 3: path records;
                     * 4: a path record's key is what decided the path */
#define NHASH   (2 * BW_METRICS_RULES)
#define PAGE    4096
#define ROUND(x) (((x) + PAGE - 1) / PAGE * PAGE)

typedef struct {
    uint32_t id;        /* 0: free */
    uint32_t idx;       /* 0: being published */
} dirent_t;

typedef struct {
    uint64_t magic;
    uint64_t version;
    uint64_t size;
    int64_t created;
    uint64_t attached;
    uint32_t nidx;                         /* indices handed out (index 0 is the sink) */
    uint32_t shards_hi;                    /* shards ever claimed: [0, shards_hi) */
    uint64_t minute[BW_METRICS_MINUTES];   /* (minute << 24) | blocks */
    uint32_t id_of[BW_METRICS_RULES];
    dirent_t dir[NHASH];
    uint32_t layout_used;                  /* words of `layouts` taken */
    uint32_t pad;
    /* layouts: at word L, the step count n (two words, low first), then n
     * rule indices; its id is L + 1. Written before the id is handed out,
     * never changed. */
    uint16_t layouts[BW_METRICS_LAYOUT_WORDS];
} head_t;

/* A path record: published by its key (hash | 1) last; only the shard's
 * owner writes one, and only its count changes after. */
typedef struct {
    uint64_t key;
    uint32_t layout;        /* the layout's id */
    uint32_t off;           /* key at words[off], nk words; then the reached-step
                             * bitmap, nw words, and the matched one */
    int32_t blocked;        /* the step that intercepted, or -1 */
    uint32_t nw;
    uint32_t nk;
    uint32_t reached;       /* steps reached (bits of the first bitmap) */
    uint64_t count;
} path_t;

struct bw_metrics_shard_s {
    uint64_t owner;
    uint64_t pad[7];
    uint64_t total[BW_MT__N];
    uint64_t phase_runs[BW_METRICS_PHASES], phase_evals[BW_METRICS_PHASES],
             phase_timed[BW_METRICS_PHASES], phase_ns[BW_METRICS_PHASES];
    uint64_t status[600];
    uint64_t evals[BW_METRICS_RULES], matches[BW_METRICS_RULES], blocks[BW_METRICS_RULES];
    uint64_t timed[BW_METRICS_RULES], ns[BW_METRICS_RULES], max_ns[BW_METRICS_RULES];
    uint64_t words_used;                   /* of words */
    path_t paths[BW_METRICS_PATHS];
    uint64_t words[BW_METRICS_PATH_WORDS];
};

/* the distances BW_METRICS_MATCHES and BW_METRICS_BLOCKS rely on */
_Static_assert(offsetof(bw_metrics_shard_t, matches) ==
               offsetof(bw_metrics_shard_t, evals) + BW_METRICS_RULES * sizeof(uint64_t) &&
               offsetof(bw_metrics_shard_t, blocks) ==
               offsetof(bw_metrics_shard_t, matches) + BW_METRICS_RULES * sizeof(uint64_t),
               "a rule's counters at fixed distances");

/* One thread's state, found through the handle's thread key. */
typedef struct bw_metrics_thread_s {
    bw_metrics_t *m;
    bw_metrics_shard_t *sh;
    uint64_t me;
    apr_pool_t *pool;
    apr_hash_t *cache;        /* key -> void * slot (bw_metrics_thread_slot) */
    const void *last_key;     /* the last key asked for, and its slot */
    void **last;
    unsigned long ticks;
    struct bw_metrics_thread_s *link;   /* every thread's state, freed with the handle */
} thr_t;

struct bw_metrics_s {
    head_t *h;
    char *shards;             /* shard i at shards + i * shard_size */
    size_t shard_size;
    apr_threadkey_t *key;
    apr_thread_mutex_t *mu;   /* guards threads, nthreads and layouts */
    thr_t *threads;
    uint32_t nthreads;
    apr_pool_t *pool;
    apr_hash_t *layouts;      /* (owner, part) -> layout id + 1 stored in the block */
};

static size_t shard_size(void)
{
    return ROUND(sizeof(bw_metrics_shard_t));
}

size_t bw_metrics_size(void)
{
    return ROUND(sizeof(head_t)) + (BW_METRICS_SHARDS + 1) * shard_size();
}

static bw_metrics_shard_t *shard_at(const bw_metrics_t *m, unsigned i)
{
    return (bw_metrics_shard_t *)(void *)(m->shards + (size_t)i * m->shard_size);
}

/* The thread ends: its shard is free for another (its counts stay). */
static void thread_gone(void *data)
{
    thr_t *t = data;
    uint64_t me = t->me;
    if (t->sh && t->sh != shard_at(t->m, BW_METRICS_SHARDS))
        __atomic_compare_exchange_n(&t->sh->owner, &me, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    t->sh = NULL;
}

static apr_status_t handle_gone(void *data)
{
    bw_metrics_t *m = data;
    thr_t *t, *next;
    for (t = m->threads; t; t = next) {
        next = t->link;      /* t lives in its own pool */
        thread_gone(t);
        apr_pool_destroy(t->pool);
    }
    m->threads = NULL;
    return APR_SUCCESS;
}

static int adoptable(const head_t *h, size_t size)
{
    return h->magic == MAGIC && h->version == VERSION && h->size == size;
}

bw_metrics_t *bw_metrics_attach(apr_pool_t *p, void *base, size_t size, int *adopted,
                                const char **err)
{
    bw_metrics_t *m = apr_pcalloc(p, sizeof(*m));
    size_t need = bw_metrics_size();
    *adopted = 0;
    if (!base) {
        apr_shm_t *shm;
        if (apr_shm_create(&shm, need, NULL, p) != APR_SUCCESS) {
            *err = "cannot map memory for the counters";
            return NULL;
        }
        base = apr_shm_baseaddr_get(shm);
        size = need;
        memset(base, 0, sizeof(head_t));
    }
    if (size < need) {
        *err = apr_psprintf(p, "the counter block needs %lu bytes, got %lu",
                            (unsigned long)need, (unsigned long)size);
        return NULL;
    }
    if (apr_threadkey_private_create(&m->key, thread_gone, p) != APR_SUCCESS
        || apr_thread_mutex_create(&m->mu, APR_THREAD_MUTEX_DEFAULT, p) != APR_SUCCESS) {
        *err = "cannot create the counters' thread key";
        return NULL;
    }
    /* the layouts' keys: allocated under the lock, from a pool of their own */
    if (apr_pool_create(&m->pool, p) != APR_SUCCESS) {
        *err = "cannot create the counters' pool";
        return NULL;
    }
    m->layouts = apr_hash_make(m->pool);
    m->h = base;
    m->shards = (char *)base + ROUND(sizeof(head_t));
    m->shard_size = shard_size();
    if (adoptable(m->h, need)) {
        *adopted = 1;
    } else {
        /* fresh anonymous memory is zero and stays untouched until a
         * shard is claimed; a block of another layout is cleared whole */
        if (m->h->magic)
            memset(base, 0, need);
        m->h->size = need;
        m->h->version = VERSION;
        m->h->created = (int64_t)(apr_time_now() / APR_USEC_PER_SEC);
        m->h->nidx = 1;
        __atomic_store_n(&m->h->magic, MAGIC, __ATOMIC_RELEASE);
    }
    __atomic_fetch_add(&m->h->attached, 1, __ATOMIC_RELAXED);
    apr_pool_cleanup_register(p, m, handle_gone, apr_pool_cleanup_null);
    return m;
}

static uint32_t id_hash(uint32_t id)
{
    uint32_t x = id * 0x9e3779b1u;
    return (x ^ (x >> 15)) % NHASH;
}

/* The index an entry publishes, waited for a little. */
static unsigned published(dirent_t *e)
{
    int spins;
    for (spins = 0; spins < 100000; spins++) {
        uint32_t idx = __atomic_load_n(&e->idx, __ATOMIC_ACQUIRE);
        if (idx)
            return idx < BW_METRICS_RULES ? idx : 0;   /* UINT32_MAX: no room was left */
    }
    return 0;
}

unsigned bw_metrics_rule_index(bw_metrics_t *m, long id)
{
    head_t *h = m->h;
    uint32_t want = (uint32_t)id, pos, n;
    if (id <= 0 || id > (long)UINT32_MAX)
        return 0;
    pos = id_hash(want);
    for (n = 0; n < NHASH; n++, pos = (pos + 1) % NHASH) {
        dirent_t *e = &h->dir[pos];
        uint32_t cur = __atomic_load_n(&e->id, __ATOMIC_ACQUIRE), idx;
        if (cur == want)
            return published(e);
        if (cur)
            continue;
        if (!__atomic_compare_exchange_n(&e->id, &cur, want, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            if (cur == want)
                return published(e);
            continue;
        }
        idx = __atomic_fetch_add(&h->nidx, 1, __ATOMIC_RELAXED);
        if (idx >= BW_METRICS_RULES) {
            /* full: the id keeps its entry and counts with the sink */
            idx = 0;
            __atomic_store_n(&e->idx, UINT32_MAX, __ATOMIC_RELEASE);
            return 0;
        }
        __atomic_store_n(&h->id_of[idx], want, __ATOMIC_RELAXED);
        __atomic_store_n(&e->idx, idx, __ATOMIC_RELEASE);
        return idx;
    }
    return 0;
}

static int owner_alive(uint64_t owner)
{
    pid_t pid = (pid_t)(owner >> 32);
    if (!owner)
        return 0;
    if (pid == getpid())
        return 1;
    return kill(pid, 0) == 0 || errno != ESRCH;
}

static bw_metrics_shard_t *claim(bw_metrics_t *m, uint64_t me)
{
    unsigned i;
    for (i = 0; i < BW_METRICS_SHARDS; i++) {
        bw_metrics_shard_t *sh = shard_at(m, i);
        uint64_t cur = __atomic_load_n(&sh->owner, __ATOMIC_ACQUIRE);
        if (owner_alive(cur))
            continue;
        if (__atomic_compare_exchange_n(&sh->owner, &cur, me, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED)) {
            uint32_t hi = __atomic_load_n(&m->h->shards_hi, __ATOMIC_RELAXED);
            while (hi < i + 1 && !__atomic_compare_exchange_n(&m->h->shards_hi, &hi, i + 1, 1,
                                                              __ATOMIC_RELEASE, __ATOMIC_RELAXED))
                ;
            return sh;
        }
    }
    return shard_at(m, BW_METRICS_SHARDS);
}

static thr_t *thread_state(bw_metrics_t *m)
{
    void *v = NULL;
    thr_t *t;
    apr_pool_t *pool;
    apr_threadkey_private_get(&v, m->key);
    if (v)
        return v;
    if (apr_pool_create_unmanaged_ex(&pool, NULL, NULL) != APR_SUCCESS)
        return NULL;
    t = apr_pcalloc(pool, sizeof(*t));
    t->m = m;
    t->pool = pool;
    apr_thread_mutex_lock(m->mu);
    t->me = ((uint64_t)(uint32_t)getpid() << 32) | ++m->nthreads;
    t->link = m->threads;
    m->threads = t;
    apr_thread_mutex_unlock(m->mu);
    t->sh = claim(m, t->me);
    apr_threadkey_private_set(t, m->key);
    return t;
}

bw_metrics_thread_t *bw_metrics_thread(bw_metrics_t *m)
{
    return thread_state(m);
}

bw_metrics_shard_t *bw_metrics_thread_shard(bw_metrics_thread_t *t)
{
    return t->sh ? t->sh : shard_at(t->m, BW_METRICS_SHARDS);
}

bw_metrics_shard_t *bw_metrics_shard(bw_metrics_t *m)
{
    thr_t *t = thread_state(m);
    return t ? bw_metrics_thread_shard(t) : shard_at(m, BW_METRICS_SHARDS);
}

unsigned long bw_metrics_thread_tick(bw_metrics_thread_t *t)
{
    return t->ticks++;
}

void **bw_metrics_thread_slot(bw_metrics_thread_t *t, const void *key, apr_pool_t **pool)
{
    void **slot;
    *pool = t->pool;
    if (t->last_key == key)
        return t->last;
    if (!t->cache)
        t->cache = apr_hash_make(t->pool);
    slot = apr_hash_get(t->cache, &key, sizeof(key));
    if (!slot) {
        /* never evicted: the keys are the configuration's programs, a
         * bounded set for the life of the thread */
        const void **k = apr_palloc(t->pool, sizeof(*k));
        *k = key;
        slot = apr_pcalloc(t->pool, sizeof(*slot));
        apr_hash_set(t->cache, k, sizeof(*k), slot);
    }
    t->last_key = key;
    t->last = slot;
    return slot;
}

void bw_metrics_counters(bw_metrics_shard_t *sh, bw_metrics_ctr_t *c)
{
    c->evals = sh->evals;
    c->matches = sh->matches;
    c->blocks = sh->blocks;
    c->timed = sh->timed;
    c->ns = sh->ns;
    c->max_ns = sh->max_ns;
    c->total = sh->total;
    c->phase_runs = sh->phase_runs;
    c->phase_evals = sh->phase_evals;
    c->phase_timed = sh->phase_timed;
    c->phase_ns = sh->phase_ns;
    c->sh = sh;
    /* the shared shard is the one nobody owns */
    c->shared = __atomic_load_n(&sh->owner, __ATOMIC_RELAXED) == 0;
}

/* The bucket of a minute (before 1970 too: a clock can be wrong). */
static unsigned bucket(int64_t minute)
{
    int64_t b = minute % BW_METRICS_MINUTES;
    return (unsigned)(b < 0 ? b + BW_METRICS_MINUTES : b);
}

void bw_metrics_blocked(bw_metrics_t *m, bw_metrics_shard_t *sh, int status, int64_t now)
{
    bw_metrics_ctr_t c;
    int64_t minute = now / 60;
    uint64_t *b = &m->h->minute[bucket(minute)], cur, next;
    bw_metrics_counters(sh, &c);
    if (status < 0 || status >= 600)
        status = 0;
    bw_metrics_add(&c, &sh->status[status], 1);
    cur = __atomic_load_n(b, __ATOMIC_RELAXED);
    do {
        next = (int64_t)(cur >> 24) == minute ? cur + 1 : ((uint64_t)minute << 24) | 1;
    } while (!__atomic_compare_exchange_n(b, &cur, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

static uint64_t ld(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* ---- path records (bw_metrics.h) ------------------------------------------- */

typedef struct {
    const void *owner;
    int part;
} layout_key_t;

/* Is the layout of id `id` the map ix[0..n)? */
static int layout_is(const head_t *h, uint32_t id, const uint16_t *ix, int n)
{
    const uint16_t *l = &h->layouts[id - 1];
    return ((uint32_t)l[0] | (uint32_t)l[1] << 16) == (uint32_t)n
           && !memcmp(l + 2, ix, sizeof(uint16_t) * (size_t)n);
}

uint32_t bw_metrics_layout(bw_metrics_t *m, const void *owner, int part, const uint16_t *ix,
                           int n)
{
    head_t *h = m->h;
    layout_key_t key;
    uint32_t *known, at, id = 0;
    memset(&key, 0, sizeof(key));
    key.owner = owner;
    key.part = part;
    if (n <= 0)
        return 0;
    apr_thread_mutex_lock(m->mu);
    known = apr_hash_get(m->layouts, &key, sizeof(key));
    /* a program freed and another made where it was has its own map */
    if (known && *known && layout_is(h, *known, ix, n)) {
        id = *known;
        goto out;
    }
    at = __atomic_fetch_add(&h->layout_used, (uint32_t)n + 2, __ATOMIC_RELAXED);
    if (at + (uint32_t)n + 2 > BW_METRICS_LAYOUT_WORDS || at + (uint32_t)n + 2 < at)
        goto out;   /* full: counted rule by rule */
    h->layouts[at] = (uint16_t)(n & 0xffff);
    h->layouts[at + 1] = (uint16_t)((uint32_t)n >> 16);
    memcpy(&h->layouts[at + 2], ix, sizeof(uint16_t) * (size_t)n);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    id = at + 1;
    if (!known) {
        layout_key_t *k = apr_pmemdup(m->pool, &key, sizeof(key));
        known = apr_palloc(m->pool, sizeof(*known));
        apr_hash_set(m->layouts, k, sizeof(*k), known);
    }
    *known = id;
out:
    apr_thread_mutex_unlock(m->mu);
    return id;
}

static uint64_t path_hash(uint32_t layout, int blocked, const uint64_t *key, int nk)
{
    uint64_t x = ((uint64_t)layout << 32 | (uint32_t)blocked) * 0x9e3779b97f4a7c15ULL;
    int w;
    for (w = 0; w < nk; w++)
        x = (x ^ key[w] ^ (x >> 29)) * 0xff51afd7ed558ccdULL;
    return (x ^ (x >> 32)) | 1;
}

/* Where the path's record is in the shard's table, or the free place
 * for it (its key 0), or NULL when the table is full. */
static path_t *find_path(bw_metrics_shard_t *sh, uint64_t hash, uint32_t layout,
                         const uint64_t *key, int nk, int blocked)
{
    unsigned pos = (unsigned)(hash >> 8) % BW_METRICS_PATHS, n;
    for (n = 0; n < BW_METRICS_PATHS; n++, pos = (pos + 1) % BW_METRICS_PATHS) {
        path_t *p = &sh->paths[pos];
        uint64_t k = __atomic_load_n(&p->key, __ATOMIC_RELAXED);
        if (!k || (k == hash && p->layout == layout && p->blocked == blocked
                   && p->nk == (uint32_t)nk
                   && !memcmp(&sh->words[p->off], key, sizeof(uint64_t) * (size_t)nk)))
            return p;
    }
    return NULL;
}

int bw_metrics_path_seen(const bw_metrics_ctr_t *c, uint32_t layout, const uint64_t *key,
                         int nk, int blocked, uint64_t *reached)
{
    path_t *p;
    if (c->shared || !layout)
        return 0;
    p = find_path(c->sh, path_hash(layout, blocked, key, nk), layout, key, nk, blocked);
    if (!p || !p->key)
        return 0;
    bw_metrics_inc(&p->count, 0);
    *reached += p->reached;
    return 1;
}

/* A path counted rule by rule (no record for it). */
static void count_rules(const bw_metrics_ctr_t *c, const uint16_t *ix, const uint64_t *vis,
                        const uint64_t *mat, int nw, int blocked)
{
    int w, half;
    for (half = 0; half < 2; half++)
        for (w = 0; w < nw; w++) {
            uint64_t bits = half ? mat[w] : vis[w];
            while (bits) {
                uint64_t *ev = c->evals + ix[w * 64 + __builtin_ctzll(bits)];
                bits &= bits - 1;
                bw_metrics_inc(half ? BW_METRICS_MATCHES(ev) : ev, c->shared);
            }
        }
    if (blocked >= 0)
        bw_metrics_inc(BW_METRICS_BLOCKS(c->evals + ix[blocked]), c->shared);
}

uint64_t bw_metrics_path(const bw_metrics_ctr_t *c, uint32_t layout, const uint16_t *ix,
                         const uint64_t *key, int nk, const uint64_t *vis, const uint64_t *mat,
                         int nw, int blocked)
{
    bw_metrics_shard_t *sh = c->sh;
    uint64_t hash, need = (uint64_t)nk + 2 * (uint64_t)nw, reached = 0;
    path_t *p = NULL;
    int w;
    for (w = 0; w < nw; w++)
        reached += (uint64_t)__builtin_popcountll(vis[w]);
    if (!c->shared && layout && sh->words_used + need <= BW_METRICS_PATH_WORDS) {
        hash = path_hash(layout, blocked, key, nk);
        p = find_path(sh, hash, layout, key, nk, blocked);
        if (p && p->key) {   /* there after all: counted */
            bw_metrics_inc(&p->count, 0);
            return reached;
        }
    }
    if (!p) {
        count_rules(c, ix, vis, mat, nw, blocked);
        return reached;
    }
    /* a new path: its words, then the record, published by its key */
    p->off = (uint32_t)sh->words_used;
    memcpy(&sh->words[p->off], key, sizeof(uint64_t) * (size_t)nk);
    memcpy(&sh->words[p->off + (uint32_t)nk], vis, sizeof(uint64_t) * (size_t)nw);
    memcpy(&sh->words[p->off + (uint32_t)(nk + nw)], mat, sizeof(uint64_t) * (size_t)nw);
    sh->words_used += need;
    p->layout = layout;
    p->blocked = blocked;
    p->nw = (uint32_t)nw;
    p->nk = (uint32_t)nk;
    p->reached = (uint32_t)reached;
    __atomic_store_n(&p->count, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&p->key, hash, __ATOMIC_RELEASE);
    return reached;
}

/* What shard sh's path records add to s (indices from nidx on are not in
 * the snapshot yet: they count at the next read). */
static void sum_paths(const head_t *h, const bw_metrics_shard_t *sh, bw_metrics_snap_t *s,
                      uint32_t nidx)
{
    uint32_t used = __atomic_load_n(&h->layout_used, __ATOMIC_ACQUIRE);
    unsigned i;
    for (i = 0; i < BW_METRICS_PATHS; i++) {
        const path_t *p = &sh->paths[i];
        const uint16_t *l;
        uint64_t cnt;
        uint32_t n, w, k;
        int half;
        if (!__atomic_load_n(&p->key, __ATOMIC_ACQUIRE))
            continue;
        cnt = ld(&p->count);
        if (!p->layout || p->layout - 1 + 2 > used)
            continue;
        l = &h->layouts[p->layout - 1];
        n = (uint32_t)l[0] | (uint32_t)l[1] << 16;
        if (p->layout - 1 + 2 + n > used || p->nw > (n + 63) / 64 + 1
            || (uint64_t)p->off + p->nk + 2 * (uint64_t)p->nw > BW_METRICS_PATH_WORDS)
            continue;
        for (half = 0; half < 2; half++)
            for (w = 0; w < p->nw; w++) {
                uint64_t bits = sh->words[p->off + p->nk + (uint32_t)half * p->nw + w];
                while (bits) {
                    uint32_t step = w * 64 + (uint32_t)__builtin_ctzll(bits);
                    bits &= bits - 1;
                    if (step >= n)
                        continue;
                    k = l[2 + step];
                    if (k >= nidx)
                        continue;
                    if (!k) {
                        if (!half)
                            s->uncounted_evals += cnt;
                    } else if (!half) {
                        s->rules[k - 1].evals += cnt;
                    } else {
                        s->rules[k - 1].matches += cnt;
                    }
                }
            }
        if (p->blocked >= 0 && (uint32_t)p->blocked < n && (k = l[2 + p->blocked]) && k < nidx)
            s->rules[k - 1].blocks += cnt;
    }
}

static void sum_shard(const head_t *h, const bw_metrics_shard_t *sh, bw_metrics_snap_t *s,
                      uint32_t nidx)
{
    uint32_t i;
    sum_paths(h, sh, s, nidx);
    for (i = 0; i < BW_MT__N; i++)
        s->total[i] += ld(&sh->total[i]);
    for (i = 0; i < BW_METRICS_PHASES; i++) {
        s->phase_runs[i] += ld(&sh->phase_runs[i]);
        s->phase_evals[i] += ld(&sh->phase_evals[i]);
        s->phase_timed[i] += ld(&sh->phase_timed[i]);
        s->phase_ns[i] += ld(&sh->phase_ns[i]);
    }
    for (i = 0; i < 600; i++)
        s->status[i] += ld(&sh->status[i]);
    s->uncounted_evals += ld(&sh->evals[0]);
    for (i = 1; i < nidx; i++) {
        bw_metrics_rule_t *r = &s->rules[i - 1];
        uint64_t mx = ld(&sh->max_ns[i]);
        r->evals += ld(&sh->evals[i]);
        r->matches += ld(&sh->matches[i]);
        r->blocks += ld(&sh->blocks[i]);
        r->timed += ld(&sh->timed[i]);
        r->ns += ld(&sh->ns[i]);
        if (mx > r->max_ns)
            r->max_ns = mx;
    }
}

void bw_metrics_read(bw_metrics_t *m, apr_pool_t *p, int64_t now, bw_metrics_snap_t *s)
{
    head_t *h = m->h;
    uint32_t nidx = __atomic_load_n(&h->nidx, __ATOMIC_ACQUIRE), hi, i;
    int64_t minute = now / 60;
    if (nidx > BW_METRICS_RULES)
        nidx = BW_METRICS_RULES;
    memset(s, 0, sizeof(*s));
    s->nrules = (int)nidx - 1;
    s->rules = apr_pcalloc(p, sizeof(*s->rules) * (size_t)(nidx ? nidx : 1));
    for (i = 1; i < nidx; i++)
        s->rules[i - 1].id = (long)__atomic_load_n(&h->id_of[i], __ATOMIC_RELAXED);
    hi = __atomic_load_n(&h->shards_hi, __ATOMIC_ACQUIRE);
    for (i = 0; i < hi && i < BW_METRICS_SHARDS; i++)
        sum_shard(h, shard_at(m, i), s, nidx);
    sum_shard(h, shard_at(m, BW_METRICS_SHARDS), s, nidx);
    s->minute0 = minute;
    for (i = 0; i < BW_METRICS_MINUTES; i++) {
        uint64_t w = ld(&h->minute[bucket(minute - (int64_t)i)]);
        s->minutes[i] = (int64_t)(w >> 24) == minute - (int64_t)i ? (w & 0xffffff) : 0;
    }
    s->created = h->created;
    s->attached = ld(&h->attached);
    s->shards_used = (int)hi;
}
