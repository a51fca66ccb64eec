/*
 * The redis collection store (SecCollectionBackend redis): every record a
 * Redis hash, PREFIX + COLLECTION + ":" + KEY, shared by every Apache node
 * that names the same server.
 *
 *   initcol       one HGETALL: one round trip.
 *   setvar & co.  one MULTI ... EXEC, pipelined: one round trip per change.
 *                 += / -= are HINCRBY, so concurrent increments from every
 *                 node add up on the server and the rule compares the
 *                 count the server returned; the record's own fields
 *                 (LAST_UPDATE_TIME, UPDATE_COUNTER once per transaction,
 *                 KEY/CREATE_TIME/TIMEOUT only if absent) ride along.
 *   lifetime      the record's TIMEOUT is the key's TTL (EXPIRE at each
 *                 change); an __expire_NAME in the past is dropped from
 *                 what initcol shows, and deleted on the server with the
 *                 transaction's first change.
 *
 * Connections: each worker process keeps up to SecCollectionRedisPool idle
 * connections (made on first use, never by the parent, so none crosses a
 * fork); a thread takes one for a command and gives it back. Every
 * connect and command has its timeout (SecCollectionRedisTimeout). After
 * a failure the process stops asking for a second (RETRY): requests in
 * that time find the store unavailable at once, without waiting, and the
 * first one after it tries again, so service resumes by itself.
 */
#include <string.h>
#include <errno.h>
#include <sys/time.h>
#include <hiredis.h>
#include "run/bw_store.h"

#define RETRY apr_time_from_sec(1)
#define MAX_ARGS 64
#define MAX_CMDS 16

typedef struct {
    const bw_store_conf_t *sc;
    apr_thread_mutex_t *mu;
    redisContext **idle;
    int nidle;
    apr_time_t down_until;
    char err[160];               /* why it is down */
} redis_t;

/* ---- connections ------------------------------------------------------------ */

static struct timeval tv_ms(int ms)
{
    struct timeval tv;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    return tv;
}

static void mark_down(redis_t *r, const char *why)
{
    apr_thread_mutex_lock(r->mu);
    r->down_until = apr_time_now() + RETRY;
    apr_cpystrn(r->err, why, sizeof(r->err));
    apr_thread_mutex_unlock(r->mu);
}

/* A reply that is an error, or none: what went wrong, else NULL. */
static const char *reply_error(apr_pool_t *p, redisContext *c, const redisReply *rep)
{
    if (!rep)
        return apr_pstrdup(p, c->errstr[0] ? c->errstr : "no reply");
    if (rep->type == REDIS_REPLY_ERROR)
        return apr_pstrndup(p, rep->str, rep->len);
    return NULL;
}

/* AUTH and SELECT on a new connection, in one round trip. */
static const char *setup(apr_pool_t *p, redis_t *r, redisContext *c)
{
    const bw_store_conf_t *sc = r->sc;
    const char *argv[3];
    size_t lens[3];
    int n = 0, i;
    char db[16];
    const char *err = NULL;
    if (sc->redis_password) {
        int k = 0;
        argv[k++] = "AUTH";
        if (sc->redis_user)
            argv[k++] = sc->redis_user;
        argv[k++] = sc->redis_password;
        for (i = 0; i < k; i++)
            lens[i] = strlen(argv[i]);
        redisAppendCommandArgv(c, k, argv, lens);
        n++;
    }
    if (sc->redis_db) {
        apr_snprintf(db, sizeof db, "%d", sc->redis_db);
        argv[0] = "SELECT";
        argv[1] = db;
        lens[0] = 6;
        lens[1] = strlen(db);
        redisAppendCommandArgv(c, 2, argv, lens);
        n++;
    }
    for (i = 0; i < n; i++) {
        redisReply *rep = NULL;
        const char *e;
        if (redisGetReply(c, (void **)&rep) != REDIS_OK)
            rep = NULL;
        e = reply_error(p, c, rep);
        if (e && !err)
            err = apr_pstrcat(p, i == 0 && sc->redis_password ? "AUTH: " : "SELECT: ", e, NULL);
        if (rep)
            freeReplyObject(rep);
        if (!rep)
            break;
    }
    return err;
}

/* A connection for one command: an idle one (*reused), or a new one. NULL
 * and *why when the server is down (or was found down less than RETRY
 * ago). */
static redisContext *get_conn(apr_pool_t *p, redis_t *r, int *reused, const char **why)
{
    redisContext *c = NULL;
    const char *e = NULL;
    apr_thread_mutex_lock(r->mu);
    if (apr_time_now() < r->down_until) {
        *why = apr_pstrdup(p, r->err);
        apr_thread_mutex_unlock(r->mu);
        return NULL;
    }
    if (r->nidle)
        c = r->idle[--r->nidle];
    apr_thread_mutex_unlock(r->mu);
    *reused = c != NULL;
    if (c)
        return c;
    c = redisConnectWithTimeout(r->sc->redis_host, r->sc->redis_port, tv_ms(r->sc->redis_connect_ms));
    if (!c || c->err) {
        *why = apr_psprintf(p, "connect: %s", c ? c->errstr : "out of memory");
        if (c)
            redisFree(c);
        mark_down(r, *why);
        return NULL;
    }
    if (redisSetTimeout(c, tv_ms(r->sc->redis_command_ms)) != REDIS_OK
        || (e = setup(p, r, c)) != NULL) {
        *why = c->err ? apr_pstrdup(p, c->errstr) : e;
        redisFree(c);
        mark_down(r, *why);
        return NULL;
    }
    return c;
}

/* Did an idle connection find the server gone (closed or reset, not a
 * timeout)? The server restarted since: every idle connection is stale,
 * and one new connection may well succeed. */
static int stale(redisContext *c)
{
    return c->err == REDIS_ERR_EOF
           || (c->err == REDIS_ERR_IO && strcmp(c->errstr, strerror(EAGAIN)) != 0);
}

static void drop_idle(redis_t *r)
{
    apr_thread_mutex_lock(r->mu);
    while (r->nidle)
        redisFree(r->idle[--r->nidle]);
    apr_thread_mutex_unlock(r->mu);
}

/* Give c back; broken (a timeout, a closed connection): close it and stop
 * asking for RETRY. */
static void put_conn(redis_t *r, redisContext *c, const char *broken)
{
    if (broken) {
        redisFree(c);
        mark_down(r, broken);
        return;
    }
    apr_thread_mutex_lock(r->mu);
    if (r->nidle < r->sc->redis_pool) {
        r->idle[r->nidle++] = c;
        c = NULL;
    }
    apr_thread_mutex_unlock(r->mu);
    if (c)
        redisFree(c);
}

/* ---- commands ------------------------------------------------------------------ */

/* Commands queued for one round trip. */
typedef struct {
    int n;
    const char *argv[MAX_ARGS];
    size_t lens[MAX_ARGS];
    int argc[MAX_CMDS];
    int ncmd;
} batch_t;

static void arg(batch_t *b, const char *s, size_t len)
{
    b->argv[b->n] = s;
    b->lens[b->n++] = len;
}

static void cmd_end(batch_t *b, int start)
{
    b->argc[b->ncmd++] = b->n - start;
}

static const char *record_key(apr_pool_t *p, const redis_t *r, const bw_coll_t *c, size_t *len)
{
    bw_str_t key = c->persist->key;
    const char *head = apr_pstrcat(p, r->sc->redis_prefix, c->name, ":", NULL);
    size_t hl = strlen(head);
    char *k = apr_palloc(p, hl + key.len);
    memcpy(k, head, hl);
    memcpy(k + hl, key.data, key.len);
    *len = hl + key.len;
    return k;
}

/* Send the batch and read its last reply (the others are status replies
 * of MULTI and the queued commands). *broken: the connection is no use.
 * *refused: the first error among the other replies, else NULL: a command
 * refused while queued (one the user's ACL lacks) aborts the transaction,
 * and EXEC's own error does not say which command it was. */
static redisReply *round_trip(apr_pool_t *p, redisContext *c, batch_t *b, const char **broken,
                              const char **refused)
{
    redisReply *last = NULL;
    int i, at = 0;
    *broken = NULL;
    *refused = NULL;
    for (i = 0; i < b->ncmd; i++) {
        redisAppendCommandArgv(c, b->argc[i], b->argv + at, b->lens + at);
        at += b->argc[i];
    }
    for (i = 0; i < b->ncmd; i++) {
        redisReply *rep = NULL;
        if (redisGetReply(c, (void **)&rep) != REDIS_OK || !rep) {
            *broken = apr_pstrdup(p, c->errstr[0] ? c->errstr : "no reply");
            if (last)
                freeReplyObject(last);
            return NULL;
        }
        if (last && last->type == REDIS_REPLY_ERROR && !*refused)
            *refused = apr_pstrndup(p, last->str, last->len);
        if (last)
            freeReplyObject(last);
        last = rep;
    }
    return last;
}

/* The batch on a connection of the pool; the reply (and *refused, as
 * round_trip), or NULL and *why (the server is unavailable). A connection
 * kept idle across a restart of the server fails at once: the batch is
 * sent once more on a new connection (the old server never read it). */
static redisReply *exchange(apr_pool_t *p, redis_t *r, batch_t *b, const char **why,
                            const char **refused)
{
    int attempt, reused = 0;
    for (attempt = 0; attempt < 2; attempt++) {
        const char *broken = NULL;
        redisContext *c = get_conn(p, r, &reused, why);
        redisReply *rep;
        if (!c)
            return NULL;
        rep = round_trip(p, c, b, &broken, refused);
        if (rep) {
            put_conn(r, c, NULL);
            return rep;
        }
        *why = broken;
        if (!reused || !stale(c)) {
            put_conn(r, c, broken);
            return NULL;
        }
        redisFree(c);
        drop_idle(r);
    }
    return NULL;
}

/* ---- initcol ------------------------------------------------------------------ */

static int redis_load(bw_store_t *st, bw_tx_t *tx, bw_coll_t *c, const char **why)
{
    redis_t *r = st->impl;
    long now = (long)apr_time_sec(apr_time_now());
    const size_t plen = sizeof(BW_EXPIRE_PREFIX) - 1;
    redisReply *rep;
    batch_t b;
    size_t klen, i;
    const char *key = record_key(tx->pool, r, c, &klen), *refused;

    b.n = b.ncmd = 0;
    arg(&b, "HGETALL", 7);
    arg(&b, key, klen);
    cmd_end(&b, 0);
    rep = exchange(tx->pool, r, &b, why, &refused);
    if (!rep)
        return -1;
    if (rep->type != REDIS_REPLY_ARRAY) {
        *why = apr_pstrcat(tx->pool, "HGETALL: ", rep->type == REDIS_REPLY_ERROR ? rep->str : "no hash",
                           NULL);
        freeReplyObject(rep);
        return -1;
    }
    for (i = 0; i + 1 < rep->elements; i += 2)
        bw_coll_set(tx->pool, c, bw_str_n(rep->element[i]->str, rep->element[i]->len),
                    bw_str_n(rep->element[i + 1]->str, rep->element[i + 1]->len));
    freeReplyObject(rep);
    /* variables whose time has come: gone now, deleted on the server with
     * the first change */
    for (i = 0; i < (size_t)c->order->nelts; i++) {
        const bw_kv_t *kv = ((const bw_kv_t **)c->order->elts)[i];
        if (!kv->name.data || kv->name.len <= plen || strncasecmp(kv->name.data, BW_EXPIRE_PREFIX, plen)
            || bw_str_to_num(kv->value) > now)
            continue;
        if (!c->persist->expired)
            c->persist->expired = apr_array_make(tx->pool, 2, sizeof(bw_str_t));
        *(bw_str_t *)apr_array_push(c->persist->expired) = kv->name;
        *(bw_str_t *)apr_array_push(c->persist->expired) = bw_str_n(kv->name.data + plen,
                                                                     kv->name.len - plen);
        bw_coll_unset(c, bw_str_n(kv->name.data + plen, kv->name.len - plen));
        bw_coll_unset(c, kv->name);
    }
    bw_persist_fresh(tx, c, now);
    return 0;
}

/* ---- changes ------------------------------------------------------------------ */

/* Queue the change itself; returns its index among EXEC's replies. */
static int queue_change(apr_pool_t *p, batch_t *b, const char *key, size_t klen,
                        const bw_change_t *ch, int at)
{
    int s = b->n;
    if (ch->op == BW_PCH_ADD) {
        const char *d = apr_psprintf(p, "%ld", ch->delta);
        arg(b, "HINCRBY", 7);
        arg(b, key, klen);
        arg(b, ch->name.data, ch->name.len);
        arg(b, d, strlen(d));
    } else if (ch->op == BW_PCH_SET) {
        arg(b, "HSET", 4);
        arg(b, key, klen);
        arg(b, ch->name.data, ch->name.len);
        arg(b, ch->value.data, ch->value.len);
    } else {
        arg(b, "HDEL", 4);
        arg(b, key, klen);
        arg(b, ch->name.data, ch->name.len);
    }
    cmd_end(b, s);
    return at;
}

static void queue_field(batch_t *b, const char *verb, const char *key, size_t klen, const char *name,
                        bw_str_t value)
{
    int s = b->n;
    arg(b, verb, strlen(verb));
    arg(b, key, klen);
    arg(b, name, strlen(name));
    arg(b, value.data, value.len);
    cmd_end(b, s);
}

/* The record's own fields that ride along with a change. */
static void queue_fields(apr_pool_t *p, batch_t *b, const bw_coll_t *c, const char *key, size_t klen,
                         long now, int first)
{
    const bw_kv_t *ct = bw_coll_get(c, bw_str_make("CREATE_TIME"));
    long timeout = bw_persist_timeout(c);
    queue_field(b, "HSET", key, klen, "LAST_UPDATE_TIME", bw_num_str(p, now));
    if (first) {
        queue_field(b, "HSETNX", key, klen, "KEY", c->persist->key);
        queue_field(b, "HSETNX", key, klen, "CREATE_TIME", ct ? ct->value : bw_num_str(p, now));
        queue_field(b, "HSETNX", key, klen, "TIMEOUT", bw_num_str(p, timeout));
        queue_field(b, "HINCRBY", key, klen, "UPDATE_COUNTER", bw_num_str(p, 1));
    }
    if (timeout > 0) {
        const char *t = apr_psprintf(p, "%ld", timeout);
        int s = b->n;
        arg(b, "EXPIRE", 6);
        arg(b, key, klen);
        arg(b, t, strlen(t));
        cmd_end(b, s);
    }
}

/* HDEL of the variables initcol found expired (their names, then the
 * __expire_ names), at most what fits the batch. */
static void queue_expired(batch_t *b, const bw_pcoll_t *pc, const char *key, size_t klen)
{
    int i, s = b->n;
    if (!pc->expired || pc->written)
        return;
    arg(b, "HDEL", 4);
    arg(b, key, klen);
    for (i = 0; i < pc->expired->nelts && b->n < MAX_ARGS - 32; i++) {
        bw_str_t nm = ((bw_str_t *)pc->expired->elts)[i];
        arg(b, nm.data, nm.len);
    }
    cmd_end(b, s);
}

static int redis_change(bw_store_t *st, bw_tx_t *tx, bw_coll_t *c, const bw_change_t *ch,
                        bw_str_t *out, const char **why)
{
    redis_t *r = st->impl;
    long now = (long)apr_time_sec(apr_time_now());
    redisReply *rep, *res;
    batch_t b;
    size_t klen;
    int at;
    const char *key = record_key(tx->pool, r, c, &klen), *refused = NULL;

    b.n = b.ncmd = 0;
    arg(&b, "MULTI", 5);
    cmd_end(&b, 0);
    queue_expired(&b, c->persist, key, klen);
    at = queue_change(tx->pool, &b, key, klen, ch, b.ncmd - 1);
    queue_fields(tx->pool, &b, c, key, klen, now, !c->persist->written);
    arg(&b, "EXEC", 4);
    cmd_end(&b, b.n - 1);
    rep = exchange(tx->pool, r, &b, why, &refused);
    if (!rep)
        return -1;
    if (rep->type != REDIS_REPLY_ARRAY || (size_t)at >= rep->elements) {
        /* the queued command's refusal names the cause; EXECABORT does not */
        *why = apr_pstrcat(tx->pool, "MULTI/EXEC: ", refused ? refused
                                     : rep->type == REDIS_REPLY_ERROR ? rep->str : "transaction refused",
                           NULL);
        freeReplyObject(rep);
        return -1;
    }
    res = rep->element[at];
    if (ch->op == BW_PCH_ADD && res->type == REDIS_REPLY_INTEGER)
        *out = bw_num_str(tx->pool, (long)res->integer);
    else if (res->type == REDIS_REPLY_ERROR)
        /* HINCRBY on a value that is not a number: the transaction's own
         * count stands (as ModSecurity reads such a value as 0) */
        bw_tx_log_message(tx, 1, "collection %s: %s on \"%s\": %.*s", c->name,
                          ch->op == BW_PCH_ADD ? "HINCRBY" : "change",
                          bw_str_pdup(tx->pool, ch->name), (int)res->len, res->str);
    freeReplyObject(rep);
    return 0;
}

/* ---- opening ------------------------------------------------------------------- */

/* The idle connections go with the store (its configuration's pool). */
static apr_status_t close_idle(void *data)
{
    redis_t *r = data;
    while (r->nidle)
        redisFree(r->idle[--r->nidle]);
    return APR_SUCCESS;
}

const char *bw_store_redis_open(bw_store_t *st, apr_pool_t *pool)
{
    redis_t *r = apr_pcalloc(pool, sizeof(*r));
    r->sc = st->conf;
    r->idle = apr_pcalloc(pool, sizeof(redisContext *) * (size_t)r->sc->redis_pool);
    if (apr_thread_mutex_create(&r->mu, APR_THREAD_MUTEX_DEFAULT, pool) != APR_SUCCESS)
        return "cannot create a mutex";
    apr_pool_cleanup_register(pool, r, close_idle, apr_pool_cleanup_null);
    st->impl = r;
    st->describe = apr_psprintf(pool, "redis %s:%d db %d prefix \"%s\"", r->sc->redis_host,
                                r->sc->redis_port, r->sc->redis_db, r->sc->redis_prefix);
    return NULL;
}

const bw_store_ops_t bw_store_redis_ops = { "redis", redis_load, redis_change, NULL };
