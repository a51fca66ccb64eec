/*
 * The shm collection store (SecCollectionBackend shm, the default): every
 * record in one block of shared memory that every worker process and
 * thread of one Apache maps (base/bw_shmtab.c), made by the glue before
 * the workers fork and kept across graceful restarts.
 *
 * A record's content is its variables, each as a 4-byte name length, a
 * 4-byte value length, the name, the value (IS_NEW is never stored: it
 * says what initcol found). Its key is the collection's name, a NUL, the
 * key. initcol copies the variables out under the record's lock; each
 * setvar, expirevar or deprecatevar rewrites the record under the lock at
 * once, so a += / -= is never lost and the count it returns is every
 * worker's. In the common case that is a lock taken without contention:
 * no system call.
 *
 * Lifetimes, as ModSecurity defines them: the record ends TIMEOUT seconds
 * after its last update (the table's expiry, reset at each write); a
 * variable with an __expire_NAME in the past is dropped, on the block too,
 * when the record is next read or written.
 */
#include <string.h>
#include "run/bw_store.h"
#include "base/bw_shmtab.h"

#define FULL_WARN_INTERVAL apr_time_from_sec(10)

typedef struct {
    bw_shmtab_t *tab;
    apr_time_t full_warned;      /* under the store's mutex */
} shm_t;

/* ---- records ---------------------------------------------------------------- */

/* A record's variables while it is worked on (pointing into the block, the
 * pool or constants). */
typedef struct {
    bw_kv_t *v;
    int n, cap;
} vars_t;

static uint32_t get32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void parse(apr_pool_t *p, const char *d, size_t len, vars_t *out, int extra)
{
    size_t i = 0;
    int n = 0;
    while (i + 8 <= len) {
        size_t nl = get32(d + i), vl = get32(d + i + 4);
        if (nl > len - i - 8 || vl > len - i - 8 - nl)
            break;
        i += 8 + nl + vl;
        n++;
    }
    out->cap = n + extra;
    out->v = apr_palloc(p, sizeof(bw_kv_t) * (size_t)(out->cap ? out->cap : 1));
    out->n = 0;
    for (i = 0; out->n < n; out->n++) {
        size_t nl = get32(d + i), vl = get32(d + i + 4);
        out->v[out->n].name = bw_str_n(d + i + 8, nl);
        out->v[out->n].value = bw_str_n(d + i + 8 + nl, vl);
        i += 8 + nl + vl;
    }
}

static int find(const vars_t *vs, bw_str_t name)
{
    int i;
    for (i = 0; i < vs->n; i++)
        if (bw_str_eq_ci(vs->v[i].name, name))
            return i;
    return -1;
}

static void drop(vars_t *vs, int i)
{
    memmove(vs->v + i, vs->v + i + 1, sizeof(bw_kv_t) * (size_t)(vs->n - i - 1));
    vs->n--;
}

static void put(vars_t *vs, bw_str_t name, bw_str_t value)
{
    int i = find(vs, name);
    if (i < 0) {
        i = vs->n++;
        vs->v[i].name = name;
    }
    vs->v[i].value = value;
}

static long num(const vars_t *vs, const char *name)
{
    int i = find(vs, bw_str_make(name));
    return i < 0 ? 0 : bw_str_to_num(vs->v[i].value);
}

/* Drop the variables whose __expire_ time has come. Returns how many. */
static int drop_expired(vars_t *vs, int64_t now)
{
    int i = 0, dropped = 0;
    const size_t plen = sizeof(BW_EXPIRE_PREFIX) - 1;
    while (i < vs->n) {
        bw_str_t nm = vs->v[i].name;
        int k;
        if (nm.len <= plen || !bw_str_eq_ci(bw_str_n(nm.data, plen), bw_str_make(BW_EXPIRE_PREFIX))
            || bw_str_to_num(vs->v[i].value) > now) {
            i++;
            continue;
        }
        drop(vs, i);
        k = find(vs, bw_str_n(nm.data + plen, nm.len - plen));
        if (k >= 0) {
            drop(vs, k);
            if (k < i)
                i--;
        }
        dropped++;
    }
    return dropped;
}

/* The variables as a record's content, in p; NULL when over room bytes. */
static char *serialize(apr_pool_t *p, const vars_t *vs, size_t room, size_t *len)
{
    size_t need = 0, o = 0;
    int i;
    char *buf;
    for (i = 0; i < vs->n; i++)
        if (!bw_str_eq_cstr_ci(vs->v[i].name, "IS_NEW"))
            need += 8 + vs->v[i].name.len + vs->v[i].value.len;
    if (need > room)
        return NULL;
    buf = apr_palloc(p, need ? need : 1);
    for (i = 0; i < vs->n; i++) {
        uint32_t nl = (uint32_t)vs->v[i].name.len, vl = (uint32_t)vs->v[i].value.len;
        if (bw_str_eq_cstr_ci(vs->v[i].name, "IS_NEW"))
            continue;
        memcpy(buf + o, &nl, 4);
        memcpy(buf + o + 4, &vl, 4);
        memcpy(buf + o + 8, vs->v[i].name.data, nl);
        memcpy(buf + o + 8 + nl, vs->v[i].value.data, vl);
        o += 8 + nl + vl;
    }
    *len = o;
    return buf;
}

static const char *record_key(apr_pool_t *p, const bw_coll_t *c, size_t *klen)
{
    size_t nl = strlen(c->name);
    bw_str_t key = c->persist->key;
    char *k = apr_palloc(p, nl + 1 + key.len);
    memcpy(k, c->name, nl + 1);
    memcpy(k + nl + 1, key.data, key.len);
    *klen = nl + 1 + key.len;
    return k;
}

/* ---- initcol --------------------------------------------------------------- */

typedef struct {
    bw_tx_t *tx;
    bw_coll_t *c;
    size_t room;
} load_t;

static void load_fn(void *baton, bw_shmtab_op_t *op)
{
    load_t *l = baton;
    vars_t vs;
    int i;
    if (!op->cur)
        return;
    parse(l->tx->pool, op->cur, op->cur_len, &vs, 0);
    if (drop_expired(&vs, op->now)) {
        op->data = serialize(l->tx->pool, &vs, l->room, &op->len);
        op->action = op->data ? BW_SHMTAB_WRITE : BW_SHMTAB_KEEP;
    }
    /* copied: the block changes once the lock is let go */
    for (i = 0; i < vs.n; i++)
        bw_coll_set(l->tx->pool, l->c, vs.v[i].name, vs.v[i].value);
}

static int shm_load(bw_store_t *st, bw_tx_t *tx, bw_coll_t *c, const char **why)
{
    shm_t *sh = st->impl;
    load_t l;
    size_t klen;
    const char *key = record_key(tx->pool, c, &klen);
    int64_t now = (int64_t)apr_time_sec(apr_time_now());
    l.tx = tx;
    l.c = c;
    l.room = bw_shmtab_room(sh->tab, klen);
    if (bw_shmtab_access(sh->tab, key, klen, now, load_fn, &l) == BW_SHMTAB_BROKEN) {
        *why = "a lock of the shared block cannot be taken";
        return -1;
    }
    bw_persist_fresh(tx, c, (long)now);
    return 0;
}

/* ---- changes --------------------------------------------------------------- */

typedef struct {
    bw_tx_t *tx;
    const bw_coll_t *c;
    const bw_change_t *ch;
    int first;                   /* the transaction's first write: count it */
    int toobig;                  /* the record would not fit its slot */
    size_t room;
    bw_str_t result;             /* the variable's value afterwards (ADD) */
} change_t;

/* A record that is not there yet starts with the fields initcol showed. */
static void start_record(change_t *x, vars_t *vs, int64_t now)
{
    const bw_kv_t *ct = bw_coll_get(x->c, bw_str_make("CREATE_TIME"));
    apr_pool_t *p = x->tx->pool;
    put(vs, bw_str_make("KEY"), x->c->persist->key);
    put(vs, bw_str_make("TIMEOUT"), bw_num_str(p, bw_persist_timeout(x->c)));
    put(vs, bw_str_make("CREATE_TIME"), ct ? ct->value : bw_num_str(p, (long)now));
    put(vs, bw_str_make("UPDATE_COUNTER"), bw_num_str(p, 0));
}

static void change_fn(void *baton, bw_shmtab_op_t *op)
{
    change_t *x = baton;
    apr_pool_t *p = x->tx->pool;
    const bw_change_t *ch = x->ch;
    vars_t vs;
    long timeout;
    int i;

    parse(p, op->cur ? op->cur : "", op->cur_len, &vs, 8);
    if (!op->cur)
        start_record(x, &vs, op->now);
    drop_expired(&vs, op->now);
    if (ch->op == BW_PCH_DEL) {
        if ((i = find(&vs, ch->name)) >= 0)
            drop(&vs, i);
    } else if (ch->op == BW_PCH_SET) {
        put(&vs, ch->name, ch->value);
    } else {
        i = find(&vs, ch->name);
        x->result = bw_num_str(p, (i < 0 ? 0 : bw_str_to_num(vs.v[i].value)) + ch->delta);
        put(&vs, ch->name, x->result);
    }
    put(&vs, bw_str_make("LAST_UPDATE_TIME"), bw_num_str(p, (long)op->now));
    if (x->first)
        put(&vs, bw_str_make("UPDATE_COUNTER"), bw_num_str(p, num(&vs, "UPDATE_COUNTER") + 1));
    op->data = serialize(p, &vs, x->room, &op->len);
    if (!op->data) {
        x->result.data = NULL;
        x->toobig = 1;
        return;                  /* the record stays as it was */
    }
    timeout = num(&vs, "TIMEOUT");
    op->expires = timeout > 0 ? op->now + timeout : 0;
    op->action = BW_SHMTAB_WRITE;
}

/* A change the table could not take (full, or a record over its slot):
 * it stays in this transaction, with a warning now and then. */
static void refused(bw_store_t *st, bw_tx_t *tx, const bw_coll_t *c, int rc)
{
    shm_t *sh = st->impl;
    if (bw_store_throttle(st, &sh->full_warned, FULL_WARN_INTERVAL))
        bw_tx_log_message(tx, 1, "collection store %s: %s; the change to %s stays in this "
                          "transaction (said once per %d s)", st->describe,
                          rc == BW_SHMTAB_FULL ? "full, and SecCollectionShmFull Refuse keeps "
                                                 "the records it has"
                                               : "a record does not fit SecCollectionShmRecordSize",
                          c->name, (int)apr_time_sec(FULL_WARN_INTERVAL));
}

static int shm_change(bw_store_t *st, bw_tx_t *tx, bw_coll_t *c, const bw_change_t *ch,
                      bw_str_t *out, const char **why)
{
    shm_t *sh = st->impl;
    change_t x;
    size_t klen;
    const char *key = record_key(tx->pool, c, &klen);
    int rc;
    memset(&x, 0, sizeof(x));
    x.tx = tx;
    x.c = c;
    x.ch = ch;
    x.first = !c->persist->written;
    x.room = bw_shmtab_room(sh->tab, klen);
    rc = bw_shmtab_access(sh->tab, key, klen, (int64_t)apr_time_sec(apr_time_now()), change_fn, &x);
    if (rc == BW_SHMTAB_BROKEN) {
        *why = "a lock of the shared block cannot be taken";
        return -1;
    }
    if (rc != BW_SHMTAB_OK || x.toobig) {
        refused(st, tx, c, x.toobig ? BW_SHMTAB_TOOBIG : rc);
        return 0;
    }
    *out = x.result;
    return 0;
}

/* ---- opening ------------------------------------------------------------------ */

const char *bw_store_shm_open(bw_store_t *st, apr_pool_t *pool, void *base, apr_size_t size,
                              int *adopted)
{
    const bw_store_conf_t *sc = st->conf;
    shm_t *sh = apr_pcalloc(pool, sizeof(*sh));
    const char *err = NULL;
    bw_shmtab_stats_t ss;

    if (!base) {
        /* this process alone (the CLI): memory of its own, aligned as a
         * mapping would be */
        char *raw = apr_palloc(pool, (apr_size_t)sc->shm_size + 64);
        base = (void *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
        size = (apr_size_t)sc->shm_size;
    }
    sh->tab = bw_shmtab_attach(pool, base, size, (unsigned)sc->shm_record_size, sc->shm_refuse,
                               adopted, &err);
    if (!sh->tab)
        return err;
    st->impl = sh;
    bw_shmtab_stats(sh->tab, &ss);
    st->describe = apr_psprintf(pool, "shm %lu KB, %lu records of %u bytes, %u stripes, %s when full",
                                (unsigned long)(ss.size >> 10), (unsigned long)ss.capacity,
                                ss.record_size, ss.stripes, sc->shm_refuse ? "refusing" : "evicting");
    return NULL;
}

const bw_store_ops_t bw_store_shm_ops = { "shm", shm_load, shm_change, NULL };
