/*
 * Opening a collection store (bw_engine.h): the backend the settings name,
 * with what it needs from the host (the glue's shared block for shm).
 */
#include <string.h>
#include "run/bw_store.h"

apr_size_t bw_store_shm_size(const bw_settings_t *s)
{
    const bw_store_conf_t *sc = bw_store_conf(s);
    return sc->backend == BW_STORE_SHM ? (apr_size_t)sc->shm_size : 0;
}

bw_store_t *bw_store_open(apr_pool_t *pool, const bw_settings_t *s, void *base, apr_size_t size,
                          int *adopted, char **err)
{
    bw_store_t *st = apr_pcalloc(pool, sizeof(*st));
    const char *e = NULL;
    int dummy = 0;

    if (!adopted)
        adopted = &dummy;
    *adopted = 0;
    st->conf = bw_store_conf(s);
    if (apr_thread_mutex_create(&st->mu, APR_THREAD_MUTEX_DEFAULT, pool) != APR_SUCCESS) {
        *err = "cannot create a mutex";
        return NULL;
    }
    switch (st->conf->backend) {
    case BW_STORE_FILE:
        st->ops = &bw_store_file_ops;
        st->describe = s->data_dir ? apr_pstrcat(pool, "file ", s->data_dir, NULL)
                                   : "file (no SecDataDir)";
        break;
    case BW_STORE_REDIS:
        st->ops = &bw_store_redis_ops;
        e = bw_store_redis_open(st, pool);
        break;
    default:
        st->ops = &bw_store_shm_ops;
        e = bw_store_shm_open(st, pool, base, size, adopted);
        break;
    }
    if (e) {
        *err = apr_pstrcat(pool, "SecCollectionBackend ", st->ops->name, ": ", e, NULL);
        return NULL;
    }
    return st;
}

const char *bw_store_describe(const bw_store_t *st)
{
    return st->describe;
}

void bw_tx_set_store(bw_tx_t *tx, bw_store_t *st)
{
    tx->store = st;
}
