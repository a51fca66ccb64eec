/*
 * Keyed collections (TX, IP, SESSION…): case-insensitive keys that keep
 * the spelling they were first set with, insertion order for listing. A
 * data structure only: the executor owns the transaction's collections
 * (run/), the program builder builds TX as the configuration leaves it
 * before the first request data is read (program/bw_fold.c).
 */
#ifndef BW_COLL_H
#define BW_COLL_H

#include "base/bw_types.h"

/* A keyed collection (TX, IP, SESSION…): case-insensitive keys. */
typedef struct bw_coll_s {
    const char *name;        /* "TX" */
    bw_kv_t **slots;         /* open addressing, case-insensitive (bw_coll.c) */
    size_t cap, used;
    apr_array_header_t *order; /* bw_kv_t* in insertion order; an unset entry
                                  has name.data == NULL */
    /* persistent collections (bw_persist.c); NULL otherwise */
    const char *path;        /* record file under SecDataDir */
    apr_hash_t *orig;        /* lowercase name -> bw_kv_t* as loaded */
    apr_hash_t *abs_set;     /* lowercase name -> "1": set outright, not only += / -= */
    int dirty;               /* changed by this transaction: store it */
} bw_coll_t;

bw_coll_t *bw_coll_create(apr_pool_t *p, const char *name);
const bw_kv_t *bw_coll_get(const bw_coll_t *c, bw_str_t key);
void bw_coll_set(apr_pool_t *p, bw_coll_t *c, bw_str_t key, bw_str_t value);
void bw_coll_unset(bw_coll_t *c, bw_str_t key);
void bw_coll_clear(apr_pool_t *p, bw_coll_t *c);
/* A collection's content frozen (start-up), and loaded into another
 * collection many times over (replacing what it held): the entries are
 * copied, the strings they point to shared (they are never written in
 * place), so loading is two short copies, no hashing. */
typedef struct bw_coll_image_s {
    size_t cap, used;
    int n;
    bw_kv_t *kv;        /* the entries in insertion order (tombstones included) */
    int *slot;          /* per table slot: index into kv, or -1 */
} bw_coll_image_t;
bw_coll_image_t *bw_coll_image(apr_pool_t *p, const bw_coll_t *c);
void bw_coll_load_image(apr_pool_t *p, bw_coll_t *c, const bw_coll_image_t *im);

/* ModSecurity's numbers: leading space, sign, digits; anything else 0. */
long bw_str_to_num(bw_str_t s);

#endif /* BW_COLL_H */
