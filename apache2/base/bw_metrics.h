/*
 * Live counters in one block of memory that every worker process and
 * thread shares (the status page and Prometheus endpoint read it): per
 * rule id evaluations, matches, blocks and sampled time; per phase and
 * per transaction totals.
 *
 * Writers never lock and never contend: each worker thread claims a shard
 * of the block for itself (kept for the thread's life, given back when it
 * exits, taken over when its process died) and adds to it with plain
 * loads and stores; a reader sums the shards. Only when every shard is
 * taken does a thread add to the one shared shard, with atomic adds. So
 * the counts are exact at any quiet moment, whatever the concurrency.
 *
 * The block is bounded by construction (BW_METRICS_RULES rule ids,
 * BW_METRICS_SHARDS shards, a fixed record each); its pages are touched
 * only as shards and rules are used. Offsets, never pointers: every
 * process maps it at its own address. A block laid out by an earlier
 * generation (a graceful restart keeps it) is adopted with its counts.
 *
 * The block knows rule ids and numbers only; what a transaction counts is
 * run/bw_tx_metrics.c's business, how they are shown bw_metrics_fmt.c's.
 */
#ifndef BW_METRICS_H
#define BW_METRICS_H

#include "base/bw_types.h"

#define BW_METRICS_RULES  4096   /* rule ids counted (index 0: rules without one, or past it) */
#define BW_METRICS_SHARDS 128    /* thread-owned shards; one more is shared */
#define BW_METRICS_PHASES 6      /* 1..5 used */
#define BW_METRICS_MINUTES 60    /* blocks per minute, the last hour */
#define BW_METRICS_PATHS 256     /* path records per shard (bw_metrics_path) */
#define BW_METRICS_PATH_WORDS 6144   /* their bitmaps, 64-bit words per shard */
#define BW_METRICS_LAYOUT_WORDS (1 << 20) /* the programs' slot maps, 16-bit words */

/* Per-transaction totals. */
enum {
    BW_MT_TX,                /* transactions */
    BW_MT_INTERCEPTED,       /* ... a rule intercepted (deny, drop, redirect, proxy) */
    BW_MT_DROP,              /* ... of those, connections dropped */
    BW_MT_REDIRECT,          /* ... redirected */
    BW_MT_PROXY,             /* ... proxied elsewhere */
    BW_MT_REQBODY_ERROR,     /* request bodies their processor failed on (REQBODY_ERROR) */
    BW_MT_REQBODY_LIMIT,     /* request bodies past a limit (refused or partly inspected) */
    BW_MT_RESBODY_LIMIT,     /* response bodies past SecResponseBodyLimit */
    BW_MT_LINKS,             /* rule links the executor evaluated */
    BW_MT_LINKS_SKIPPED,     /* ... of those, ruled out by the scan without a value read */
    BW_MT_OP_RUNS,           /* operator runs */
    BW_MT_CONFIRMS,          /* ... of those, confirming a scan hit */
    BW_MT_SCAN_VALUES,       /* values scanned by the multi-pattern matcher */
    BW_MT_SCAN_BYTES,
    BW_MT_SCAN_CALLS,        /* matcher calls (values are joined: fewer than values) */
    BW_MT_TIMED_TX,          /* transactions whose rules were timed (the sample) */
    BW_MT__N
};

typedef struct bw_metrics_s bw_metrics_t;
typedef struct bw_metrics_shard_s bw_metrics_shard_t;

/* Bytes of a block. */
size_t bw_metrics_size(void);

/* Lay out a block in base[0..size) (zeroed memory every user maps, 64-byte
 * aligned), or adopt the one already there: *adopted says which. base
 * NULL: memory of this process (the CLI, tests), from anonymous shared
 * memory so that untouched pages cost nothing. NULL and *err when size is
 * too small or the memory cannot be had. */
bw_metrics_t *bw_metrics_attach(apr_pool_t *p, void *base, size_t size, int *adopted,
                                const char **err);

/* The index of rule id (>0), registered if new; 0 when the block is full.
 * Indices are handed out in order of registration, so the rules of a
 * program registered in its order sit side by side. Lock-free. */
unsigned bw_metrics_rule_index(bw_metrics_t *m, long id);

/* The calling thread's state (made at its first call, with its shard),
 * or NULL when there is no memory for it. */
typedef struct bw_metrics_thread_s bw_metrics_thread_t;
bw_metrics_thread_t *bw_metrics_thread(bw_metrics_t *m);

/* The calling thread's shard (claimed at its first call; the shared one
 * when none is free). */
bw_metrics_shard_t *bw_metrics_shard(bw_metrics_t *m);
bw_metrics_shard_t *bw_metrics_thread_shard(bw_metrics_thread_t *t);

/* How many times the thread asked before (its transactions, for
 * sampling). */
unsigned long bw_metrics_thread_tick(bw_metrics_thread_t *t);

/* Per-thread cache (rule maps of run/bw_tx_metrics.c): the slot for key,
 * created empty (NULL) at the first call; memory for what it holds from
 * the thread's own pool (*pool). Entries are never evicted: keys must be
 * a bounded set. */
void **bw_metrics_thread_slot(bw_metrics_thread_t *t, const void *key, apr_pool_t **pool);

/* Adding to a shard. An owned shard takes plain increments; the shared one
 * atomic adds. A rule's matches and blocks sit at fixed distances from its
 * evaluations (BW_METRICS_MATCHES, BW_METRICS_BLOCKS), so one pointer
 * per rule reaches all three. */
typedef struct bw_metrics_ctr_s {
    uint64_t *evals, *matches, *blocks;   /* per rule index */
    uint64_t *timed, *ns, *max_ns;        /* per rule index: sampled evaluations, their time */
    uint64_t *total;                      /* BW_MT__N */
    uint64_t *phase_runs, *phase_evals;   /* per phase */
    uint64_t *phase_timed, *phase_ns;     /* per phase: sampled runs, their time */
    bw_metrics_shard_t *sh;
    int shared;
} bw_metrics_ctr_t;
void bw_metrics_counters(bw_metrics_shard_t *sh, bw_metrics_ctr_t *c);

#define BW_METRICS_MATCHES(ev) ((ev) + BW_METRICS_RULES)
#define BW_METRICS_BLOCKS(ev)  ((ev) + 2 * BW_METRICS_RULES)

/* *at += 1, in a shard shared (atomic add) or owned (one writer: on
 * x86-64 one add to memory, never torn, which a reader's relaxed load sees
 * before or after; elsewhere a relaxed load and store). For the counting
 * loop, where an owned increment is otherwise three instructions. */
static inline __attribute__((always_inline)) void bw_metrics_inc(uint64_t *at, int shared)
{
    if (shared)
        __atomic_fetch_add(at, 1, __ATOMIC_RELAXED);
    else {
#if defined(__x86_64__)
        __asm__ volatile("addq $1, %0" : "+m"(*at));
#else
        __atomic_store_n(at, __atomic_load_n(at, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
#endif
    }
}

static inline void bw_metrics_add(const bw_metrics_ctr_t *c, uint64_t *at, uint64_t v)
{
    if (c->shared)
        __atomic_fetch_add(at, v, __ATOMIC_RELAXED);
    else
        __atomic_store_n(at, __atomic_load_n(at, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static inline void bw_metrics_max(const bw_metrics_ctr_t *c, uint64_t *at, uint64_t v)
{
    uint64_t cur = __atomic_load_n(at, __ATOMIC_RELAXED);
    if (!c->shared) {
        if (v > cur)
            __atomic_store_n(at, v, __ATOMIC_RELAXED);
        return;
    }
    while (v > cur && !__atomic_compare_exchange_n(at, &cur, v, 1, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
        ;
}

/* Path records. A phase of a transaction adds one to each rule it
 * reached (and matched, and blocked at); most transactions of a site take
 * one of a few paths through a phase, so the counting loop only notes
 * what decided its path (where it stopped, which rules matched, which a
 * ctl: removed) in a few words on its stack, and the phase ends with one
 * count of that path in the thread's shard: a few lines of shared memory
 * instead of one per rule (which a busy server finds cold at every
 * request). The first time a shard sees a path, the caller spells it out
 * (the steps reached and matched), and the record keeps both; the reader
 * expands each record into the rules' counts through the map of the
 * program's steps to rule indices (its layout), stored in the block once.
 *
 * bw_metrics_layout: the layout of `part` of `owner` (a program's phase),
 * ix[0..n) the rule index of each step; stored at the first call for the
 * pair (under the handle's lock; the same map again is found, not stored
 * again), 0 when the block has no room left (count rule by rule then). */
uint32_t bw_metrics_layout(bw_metrics_t *m, const void *owner, int part, const uint16_t *ix,
                           int n);
/* Count, in c's shard (an owned one), the path of layout `layout` decided
 * by key[0..nk) that blocked at step `blocked` (-1: none), if the shard
 * has its record: 1, and the steps it reached added to *reached; 0 when
 * it has none (then bw_metrics_path). */
int bw_metrics_path_seen(const bw_metrics_ctr_t *c, uint32_t layout, const uint64_t *key,
                         int nk, int blocked, uint64_t *reached);
/* Count the path bw_metrics_path_seen did not find: its reached and
 * matched steps are the bits of vis and mat (nw words each; steps past
 * the layout's end are never set). Once, in a new record under key, or
 * rule by rule through ix (the map the layout was made from) when the
 * shard's table or word space is full. Returns the steps it reached. */
uint64_t bw_metrics_path(const bw_metrics_ctr_t *c, uint32_t layout, const uint16_t *ix,
                         const uint64_t *key, int nk, const uint64_t *vis, const uint64_t *mat,
                         int nw, int blocked);

/* A transaction ended intercepted with HTTP status `status` (0: dropped)
 * at time now (seconds): counted by status and in the minute's bucket. */
void bw_metrics_blocked(bw_metrics_t *m, bw_metrics_shard_t *sh, int status, int64_t now);

/* What the block holds, summed over its shards. */
typedef struct bw_metrics_rule_s {
    long id;
    uint64_t evals, matches, blocks, timed, ns, max_ns;
} bw_metrics_rule_t;

typedef struct bw_metrics_snap_s {
    int nrules;                           /* rules[0..nrules): every id registered */
    bw_metrics_rule_t *rules;
    uint64_t uncounted_evals;             /* evaluations of rules without a place (index 0) */
    uint64_t total[BW_MT__N];
    uint64_t phase_runs[BW_METRICS_PHASES], phase_evals[BW_METRICS_PHASES],
             phase_timed[BW_METRICS_PHASES], phase_ns[BW_METRICS_PHASES];
    uint64_t status[600];                 /* intercepted transactions by status (0: dropped) */
    int64_t minute0;                      /* the minute (epoch seconds / 60) of minutes[0] */
    uint64_t minutes[BW_METRICS_MINUTES]; /* blocks in minute0, minute0 - 1, ... */
    int64_t created;                      /* when the block was laid out (epoch seconds) */
    uint64_t attached;                    /* generations that attached to it (1 + restarts) */
    int shards_used;                      /* shards ever claimed */
} bw_metrics_snap_t;

/* Sum the block at time now (seconds) into *s (arrays from p). */
void bw_metrics_read(bw_metrics_t *m, apr_pool_t *p, int64_t now, bw_metrics_snap_t *s);

#endif /* BW_METRICS_H */
