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
#include "base/bw_regex.h"

/* A key with its hash. Names known at start-up (setvar names, TX:name
 * targets, %{tx.name} macros, folded changes) are hashed once when they
 * are compiled, so that an access neither hashes nor lower-cases. */
typedef struct bw_keysel_s bw_keysel_t;
typedef struct bw_key_s {
    bw_str_t name;
    uint32_t hash;              /* bw_key_hash(name) */
    const bw_keysel_t *sel;     /* which regex selectors match it (bw_coll_image_key), or NULL */
} bw_key_t;

/* The ASCII case-insensitive hash every collection uses. */
uint32_t bw_key_hash(bw_str_t name);
bw_key_t bw_key_make(bw_str_t name);

/* A collection's content frozen at start-up (bw_coll_image). */
typedef struct bw_coll_image_s bw_coll_image_t;

/* The entries of a collection whose names a regex selector matches
 * (TX:/^header_name_/), kept up to date as the collection grows: the
 * order only ever grows at its end (an unset entry stays, as a tombstone),
 * so each name is matched once, and the names of an image once at
 * start-up. */
typedef struct bw_coll_sel_s {
    const pcre2_code *re;
    const bw_relit_t *lit;      /* re's literal form, or NULL */
    int bit;                    /* its place among the image's selections, or -1 */
    int upto;                   /* entries of the order looked at */
    int n, cap;
    int *idx;                   /* the matching ones: indices into the order */
} bw_coll_sel_t;

/* A keyed collection (TX, IP, SESSION…): case-insensitive keys. */
typedef struct bw_coll_s {
    const char *name;        /* "TX" */
    uint32_t *slots;         /* open addressing (bw_coll.c): 1 + index into order, 0 empty */
    size_t cap, used;
    apr_array_header_t *order; /* bw_kv_t* in insertion order; an unset entry
                                  has name.data == NULL */
    const bw_coll_image_t *image; /* the image the order started from, or NULL */
    apr_array_header_t *sels;  /* bw_coll_sel_t*, made by bw_coll_select */
    /* a persistent collection's state in its store (run/bw_store.h); NULL
     * for the others */
    struct bw_pcoll_s *persist;
} bw_coll_t;

/* An empty collection with room for about n keys before it grows. */
bw_coll_t *bw_coll_create_n(apr_pool_t *p, const char *name, size_t n);
bw_coll_t *bw_coll_create(apr_pool_t *p, const char *name);

const bw_kv_t *bw_coll_get(const bw_coll_t *c, bw_str_t key);
const bw_kv_t *bw_coll_find(const bw_coll_t *c, const bw_key_t *k);

/* Set k to value, copying the name (when new) and the value into p unless
 * keep says the string outlives the collection and is never written. */
#define BW_COLL_KEEP_NAME  0x1
#define BW_COLL_KEEP_VALUE 0x2
const bw_kv_t *bw_coll_put(apr_pool_t *p, bw_coll_t *c, const bw_key_t *k, bw_str_t value,
                           unsigned keep);
/* The entry of k, made with an empty value (*made 1) when there is none,
 * the name copied as bw_coll_put would: one probe for a read and a write
 * of the same key. Its value may be replaced (not written in place) by a
 * string that follows bw_coll_put's rule. */
bw_kv_t *bw_coll_entry(apr_pool_t *p, bw_coll_t *c, const bw_key_t *k, unsigned keep, int *made);
void bw_coll_set(apr_pool_t *p, bw_coll_t *c, bw_str_t key, bw_str_t value);
void bw_coll_remove(bw_coll_t *c, const bw_key_t *k);
void bw_coll_unset(bw_coll_t *c, bw_str_t key);
void bw_coll_clear(apr_pool_t *p, bw_coll_t *c);

/* A collection's content frozen (start-up), and loaded into another
 * collection many times over (replacing what it held): the entries are
 * copied, the strings they point to shared (they are never written in
 * place), so loading is three short copies, no hashing. more: keys the
 * loaded collection is expected to gain (its table is sized for them). */
bw_coll_image_t *bw_coll_image(apr_pool_t *p, const bw_coll_t *c, size_t more);
void bw_coll_load_image(apr_pool_t *p, bw_coll_t *c, const bw_coll_image_t *im);
/* Match re against the image's names now, for every later bw_coll_select. */
void bw_coll_image_select(apr_pool_t *p, bw_coll_image_t *im, const pcre2_code *re,
                          const bw_relit_t *lit, pcre2_match_data *md);
int bw_coll_image_size(const bw_coll_image_t *im);
/* Match every selection of im against k's name now (after the last
 * bw_coll_image_select): in a collection loaded from im, an entry set
 * with k answers them without PCRE2. */
void bw_coll_image_key(apr_pool_t *p, const bw_coll_image_t *im, bw_key_t *k,
                       pcre2_match_data *md);

/* The selection of re (lit: its literal form, or NULL) in c, brought up
 * to date (md: scratch for PCRE2).
 * Valid until the next call on c; entries unset since it was made keep
 * their index (name.data == NULL): skip them. */
const bw_coll_sel_t *bw_coll_select(apr_pool_t *p, bw_coll_t *c, const pcre2_code *re,
                                    const bw_relit_t *lit, pcre2_match_data *md);

/* ModSecurity's numbers: leading space, sign, digits; anything else 0. */
long bw_str_to_num(bw_str_t s);
/* v in decimal, NUL-terminated, in p (0-9: constants; never written). */
bw_str_t bw_num_str(apr_pool_t *p, long v);

#endif /* BW_COLL_H */
