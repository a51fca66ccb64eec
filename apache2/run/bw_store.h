/*
 * Collection stores: where persistent collections (IP, SESSION, USER,
 * GLOBAL, RESOURCE) are read at initcol and written. One interface, three
 * backends (SecCollectionBackend):
 *
 *   shm    one block of shared memory for every worker of one Apache
 *          (bw_store_shm.c over base/bw_shmtab.c): the default;
 *   file   one file per record under SecDataDir (bw_store_file.c): what
 *          mod_security2 users had, and what a transaction without a store
 *          uses;
 *   redis  one Redis server for several Apache nodes (bw_store_redis.c).
 *
 * Why changes are written at once (shm, redis) rather than at the end of
 * the transaction as mod_security2 does: a rate limit counts with
 * setvar:ip.n=+1 and compares in the next rule. Applied at once, on the
 * store, the increment comes back as the count every node has made so far,
 * so the rule compares the true count and a limit of N lets exactly N
 * through. Merged at the end, every request in flight would compare a
 * stale count. The file backend keeps mod_security2's end-of-transaction
 * merge (a file write per setvar would cost too much).
 */
#ifndef BW_STORE_H
#define BW_STORE_H

#include "run/bw_run.h"

/* One change to a persistent collection. */
enum { BW_PCH_SET, BW_PCH_DEL, BW_PCH_ADD };
typedef struct bw_change_s {
    int op;
    bw_str_t name;
    bw_str_t value;        /* BW_PCH_SET */
    long delta;            /* BW_PCH_ADD */
} bw_change_t;

typedef struct bw_store_ops_s {
    const char *name;
    /* initcol: fill c with its record, lifetimes applied and the fields of
     * a new record set (bw_persist_fresh). Returns 0, or -1 when the store
     * cannot be reached (*why says why). */
    int (*load)(bw_store_t *st, bw_tx_t *tx, bw_coll_t *c, const char **why);
    /* Apply ch to the record at once; *out: the variable's value on the
     * store afterwards (for BW_PCH_ADD). 0, or -1 (*why). NULL: the store
     * merges at the end instead (finish). */
    int (*change)(bw_store_t *st, bw_tx_t *tx, bw_coll_t *c, const bw_change_t *ch,
                  bw_str_t *out, const char **why);
    /* The transaction is over. NULL: nothing left to do. */
    void (*finish)(bw_store_t *st, bw_tx_t *tx, bw_coll_t *c);
} bw_store_ops_t;

/* An open store: its settings, the backend's own state and the warning
 * throttle. Lives as long as the configuration (or, for the glue, as long
 * as the server generation); shared by every thread of a process. */
struct bw_store_s {
    const bw_store_ops_t *ops;
    const bw_store_conf_t *conf;
    void *impl;
    apr_thread_mutex_t *mu;       /* the throttles (bw_store_throttle) */
    apr_time_t warned;            /* last "unavailable" warning of this process */
    const char *describe;         /* for the start-up line */
};

/* A persistent collection's state in one transaction (bw_coll_t.persist). */
struct bw_pcoll_s {
    bw_store_t *store;            /* NULL: the file backend without a store */
    bw_str_t key;
    const char *key_sha1;         /* the file's name when known at start-up */
    int off;                      /* the store failed: changes stay in this transaction */
    int written;                  /* a change reached the store (UPDATE_COUNTER counted) */
    /* file backend: the merge at the end */
    const char *path;
    apr_hash_t *orig;             /* lowercase name -> bw_kv_t* as loaded (NULL: none) */
    apr_hash_t *abs_set;          /* lowercase name -> "1": set outright, not only += / -= */
    const bw_str_t *fresh;        /* a new record: the names it started with, set outright */
    int nfresh;
    int dirty;
    /* redis backend: variables found expired at load, deleted with the first change */
    apr_array_header_t *expired;  /* bw_str_t */
};

extern const bw_store_ops_t bw_store_file_ops;
extern const bw_store_ops_t bw_store_shm_ops;
extern const bw_store_ops_t bw_store_redis_ops;

/* The backends' own opening (impl, describe). */
const char *bw_store_shm_open(bw_store_t *st, apr_pool_t *pool, void *base, apr_size_t size,
                              int *adopted);
const char *bw_store_redis_open(bw_store_t *st, apr_pool_t *pool);

/* initcol (bw_persist.c): the record of (name, key) from the transaction's
 * store, registered in the transaction; key_sha1: the key's digest in hex
 * when known at start-up (the file's name), or NULL. rule: the rule whose
 * action it is (a fail-closed denial names it). */
bw_coll_t *bw_persist_load(bw_tx_t *tx, const bw_rule_t *rule, const char *name, bw_str_t key,
                           const char *key_sha1);
/* A change rule made to persistent collection c (c->persist set), already
 * made in c: op BW_PCH_SET (name = value), BW_PCH_DEL, BW_PCH_ADD (name +=
 * delta). Returns 1 when the store applied it and *out is the variable's
 * value there now (the count of every worker and node: c must take it). */
int bw_persist_change(bw_tx_t *tx, const bw_rule_t *rule, bw_coll_t *c, int op, bw_str_t name,
                      bw_str_t value, long delta, bw_str_t *out);

/* Shared by the backends (bw_persist.c). */
#define BW_EXPIRE_PREFIX "__expire_"
/* A record's own fields when c holds none yet (KEY, TIMEOUT, CREATE_TIME,
 * UPDATE_COUNTER, IS_NEW 1), else IS_NEW 0. Returns 1 for a new record. */
int bw_persist_fresh(bw_tx_t *tx, bw_coll_t *c, long now);
/* Should a warning be said now? Yes once per interval per *last (under
 * the store's mutex: threads of one process share it). */
int bw_store_throttle(bw_store_t *st, apr_time_t *last, apr_interval_time_t interval);
/* The record's TIMEOUT as c holds it. */
long bw_persist_timeout(const bw_coll_t *c);

#endif /* BW_STORE_H */
