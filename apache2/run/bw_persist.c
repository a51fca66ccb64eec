/*
 * Persistent collections in a transaction: initcol loads a record from the
 * store (run/bw_store.h), setvar, expirevar and deprecatevar change it,
 * the end of the transaction finishes it. What every store shares is here:
 * the fields of a new record, and what happens when the store cannot be
 * reached (SecCollectionFailAction).
 *
 * Failure policy. Open: the rules see an empty collection, its changes stay
 * in the transaction, and the error log gets one warning per interval and
 * process, not one per request. Closed: the transaction is denied with the
 * configured status (engine On; DetectionOnly only warns). Either way the
 * store itself decides how long it may be waited for (Redis: the command
 * timeout) and when to try again, so service resumes by itself.
 */
#include <string.h>
#include <pthread.h>
#include "run/bw_store.h"

#define WARN_INTERVAL apr_time_from_sec(10)

/* The names of a record's own fields, hashed once per process. */
enum { F_KEY, F_TIMEOUT, F_CREATE_TIME, F_UPDATE_COUNTER, F_IS_NEW, F__N };
static bw_key_t fields[F__N];
static pthread_once_t fields_once = PTHREAD_ONCE_INIT;

static void make_fields(void)
{
    static const char *const names[F__N] = { "KEY", "TIMEOUT", "CREATE_TIME", "UPDATE_COUNTER",
                                             "IS_NEW" };
    int i;
    for (i = 0; i < F__N; i++)
        fields[i] = bw_key_make(bw_str_make(names[i]));
}

/* Field f's key. */
static const bw_key_t *field(int f)
{
    pthread_once(&fields_once, make_fields);
    return &fields[f];
}

/* Field f set to v (the constants 0 and 1 without formatting them), once
 * field() made the keys. */
static void put_num(apr_pool_t *p, bw_coll_t *c, int f, long v)
{
    bw_str_t s = v == 0 ? bw_str_n("0", 1) : v == 1 ? bw_str_n("1", 1) : bw_num_str(p, v);
    bw_coll_put(p, c, &fields[f], s, BW_COLL_KEEP_NAME | BW_COLL_KEEP_VALUE);
}

int bw_persist_fresh(bw_tx_t *tx, bw_coll_t *c, long now)
{
    if (bw_coll_find(c, field(F_CREATE_TIME))) {
        put_num(tx->pool, c, F_IS_NEW, 0);
        return 0;
    }
    /* a new record's own names are constants: nothing to copy */
    bw_coll_put(tx->pool, c, &fields[F_KEY], c->persist->key, BW_COLL_KEEP_NAME);
    put_num(tx->pool, c, F_TIMEOUT, (long)tx->cfg->collection_timeout);
    put_num(tx->pool, c, F_CREATE_TIME, now);
    put_num(tx->pool, c, F_UPDATE_COUNTER, 0);
    put_num(tx->pool, c, F_IS_NEW, 1);
    return 1;
}

long bw_persist_timeout(const bw_coll_t *c)
{
    const bw_kv_t *kv = bw_coll_find(c, field(F_TIMEOUT));
    return kv ? bw_str_to_num(kv->value) : 0;
}

static const bw_store_ops_t *ops_of(const bw_pcoll_t *pc)
{
    return pc->store ? pc->store->ops : &bw_store_file_ops;
}

int bw_store_throttle(bw_store_t *st, apr_time_t *last, apr_interval_time_t interval)
{
    apr_time_t now = apr_time_now();
    int say = 0;
    apr_thread_mutex_lock(st->mu);
    if (!*last || now - *last >= interval) {
        *last = now;
        say = 1;
    }
    apr_thread_mutex_unlock(st->mu);
    return say;
}

/* Once per interval and process: the store is unavailable, and what the
 * transactions do about it. */
static void warn_unavailable(bw_tx_t *tx, bw_store_t *st, const char *why)
{
    if (bw_store_throttle(st, &st->warned, WARN_INTERVAL))
        bw_tx_log_message(tx, 1, "collection store %s unavailable: %s; %s (SecCollectionFailAction "
                          "%s; said once per %d s)", st->describe, why,
                          st->conf->fail_closed ? "requests are denied" : "rules see empty collections",
                          st->conf->fail_closed ? "Closed" : "Open",
                          (int)apr_time_sec(WARN_INTERVAL));
}

static void unavailable(bw_tx_t *tx, const bw_rule_t *rule, bw_pcoll_t *pc, const char *why)
{
    pc->off = 1;
    warn_unavailable(tx, pc->store, why ? why : "unknown error");
    if (!pc->store->conf->fail_closed || tx->engine_mode != BW_ENGINE_ON || tx->intercepted)
        return;
    /* as a deny of the rule whose action needed the store */
    tx->intercepted = 1;
    memset(&tx->iv, 0, sizeof(tx->iv));
    tx->iv.disposition = BW_DISP_DENY;
    tx->iv.status = pc->store->conf->fail_status;
    tx->iv.rule = rule;
    tx->iv.phase = tx->cur_phase;
}

bw_coll_t *bw_persist_load(bw_tx_t *tx, const bw_rule_t *rule, const char *name, bw_str_t key,
                           const char *key_sha1)
{
    bw_coll_t *c = bw_coll_create(tx->pool, name);
    bw_pcoll_t *pc = apr_pcalloc(tx->pool, sizeof(*pc));
    const char *why = NULL;

    c->persist = pc;
    pc->store = tx->store;
    pc->key = key;
    pc->key_sha1 = key_sha1;
    apr_hash_set(tx->colls, name, APR_HASH_KEY_STRING, c);
    if (ops_of(pc)->load(pc->store, tx, c, &why) != 0) {
        bw_coll_clear(tx->pool, c);
        unavailable(tx, rule, pc, why);
    }
    return c;
}

/* The file backend's bookkeeping: what the merge at the end needs. */
static void mark(bw_tx_t *tx, bw_pcoll_t *pc, int op, bw_str_t name)
{
    pc->dirty = 1;
    if (op == BW_PCH_ADD || !pc->path)    /* a delta; or no file to write */
        return;
    if (!pc->abs_set)
        pc->abs_set = apr_hash_make(tx->pool);
    apr_hash_set(pc->abs_set, bw_str_lower(tx->pool, name).data, APR_HASH_KEY_STRING, "1");
}

int bw_persist_change(bw_tx_t *tx, const bw_rule_t *rule, bw_coll_t *c, int op, bw_str_t name,
                      bw_str_t value, long delta, bw_str_t *out)
{
    bw_pcoll_t *pc = c->persist;
    const bw_store_ops_t *ops = ops_of(pc);
    bw_change_t ch;
    const char *why = NULL;

    if (pc->off)
        return 0;
    if (!ops->change) {
        mark(tx, pc, op, name);
        return 0;
    }
    ch.op = op;
    ch.name = name;
    ch.value = value;
    ch.delta = delta;
    out->data = NULL;
    out->len = 0;
    if (ops->change(pc->store, tx, c, &ch, out, &why) != 0) {
        unavailable(tx, rule, pc, why);
        return 0;
    }
    pc->written = 1;
    return out->data != NULL;
}

void bw_persist_store_all(bw_tx_t *tx)
{
    apr_hash_index_t *hi;
    for (hi = apr_hash_first(tx->pool, tx->colls); hi; hi = apr_hash_next(hi)) {
        bw_coll_t *c = apr_hash_this_val(hi);
        if (c->persist && !c->persist->off && ops_of(c->persist)->finish)
            ops_of(c->persist)->finish(c->persist->store, tx, c);
    }
}
