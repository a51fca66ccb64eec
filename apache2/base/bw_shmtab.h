/*
 * A table of keyed records in one block of memory that several processes
 * share (the shm collection store, run/bw_store_shm.c): fixed-size record
 * slots, so the table never grows and never fragments; lock striping, so
 * workers touching different records rarely wait for each other; robust
 * process-shared mutexes, so a worker that dies holding a lock costs the
 * records of one stripe, never a deadlock.
 *
 * The table knows keys and opaque contents only; what a record means
 * (variables, lifetimes) is the caller's, through a callback run under the
 * record's lock.
 */
#ifndef BW_SHMTAB_H
#define BW_SHMTAB_H

#include "base/bw_types.h"

typedef struct bw_shmtab_s bw_shmtab_t;

/* What a callback is shown and what it decides, under the record's lock. */
typedef struct bw_shmtab_op_s {
    /* in: the record's content, or NULL (len 0) when there is none, or
     * when it expired */
    const char *cur;
    size_t cur_len;
    int64_t now;
    /* out: BW_SHMTAB_KEEP (nothing changes; the default), BW_SHMTAB_WRITE
     * (data/len become the content, expires its end: seconds, 0 never),
     * BW_SHMTAB_DELETE */
    int action;
    const char *data;
    size_t len;
    int64_t expires;
} bw_shmtab_op_t;

enum { BW_SHMTAB_KEEP = 0, BW_SHMTAB_WRITE, BW_SHMTAB_DELETE };

/* What an access returns. */
enum {
    BW_SHMTAB_OK = 0,
    BW_SHMTAB_FULL = -1,     /* a new record found no room (SecCollectionShmFull Refuse) */
    BW_SHMTAB_TOOBIG = -2,   /* key and content do not fit a slot */
    BW_SHMTAB_BROKEN = -3    /* the stripe's lock cannot be had (never expected) */
};

typedef void (*bw_shmtab_fn)(void *baton, bw_shmtab_op_t *op);

/* The slots a block of `size` bytes holds with records of record_size
 * bytes (rounded up to 64), 0 when it is too small for one per stripe. */
unsigned bw_shmtab_capacity(size_t size, unsigned record_size);

/* Lay out a table in base[0..size) (base 64-byte aligned, memory every
 * user maps), or adopt the table already there when its magic and
 * geometry match (the block survived a graceful restart): *adopted says
 * which. refuse_full: a new record finds no room rather than evicting the
 * least recently used one. NULL and *err when the block is too small. */
bw_shmtab_t *bw_shmtab_attach(apr_pool_t *p, void *base, size_t size, unsigned record_size,
                              int refuse_full, int *adopted, const char **err);

/* Find the record of key (any bytes), lock it, show it to fn and do what
 * fn decides. An expired record is shown as none (and freed). */
int bw_shmtab_access(bw_shmtab_t *t, const char *key, size_t klen, int64_t now,
                     bw_shmtab_fn fn, void *baton);

/* The largest content a record of klen key bytes can hold. */
size_t bw_shmtab_room(const bw_shmtab_t *t, size_t klen);

typedef struct bw_shmtab_stats_s {
    uint64_t records;        /* in use now */
    uint64_t capacity;       /* slots */
    uint64_t evicted;        /* least recently used records dropped for new ones */
    uint64_t refused;        /* new records refused (full, or too big) */
    uint64_t recovered;      /* stripes cleared after their lock's holder died */
    size_t size;             /* bytes of the block */
    unsigned record_size;
    unsigned stripes;
} bw_shmtab_stats_t;
void bw_shmtab_stats(bw_shmtab_t *t, bw_shmtab_stats_t *st);

#endif /* BW_SHMTAB_H */
