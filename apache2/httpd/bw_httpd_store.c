/*
 * The collection store in httpd (run/bw_store.h): opened in post_config,
 * in the parent, from the main server's settings, before the workers
 * fork; every request's transaction gets it.
 *
 * The shm backend's block is anonymous shared memory made in the process
 * pool, not the configuration's: a graceful restart re-reads the
 * configuration but keeps the block, and the new store adopts it with its
 * records (the same size and record size; another geometry lays it out
 * anew, and the old block is given back). So the memory is bounded by
 * SecCollectionShmSize and stays flat across restarts, and no worker ever
 * maps a block its parent did not make. Redis connects lazily in each
 * worker (bw_store_redis.c), so nothing is shared across a fork.
 *
 * The store directives are for the main server only (mod_bulwark.c checks
 * that): one Apache has one store.
 */
#include "httpd/bw_httpd.h"
#include "apr_shm.h"

#define SHM_KEY   "bulwark-store-shm"   /* process pool: the block, across restarts */
#define STORE_KEY "bulwark-store"       /* pconf: this generation's store */

typedef struct {
    apr_shm_t *shm;
    apr_size_t size;
} shm_keep_t;

void *bw_httpd_shm_block(server_rec *s, const char *key, apr_size_t size, const char *what)
{
    apr_pool_t *pp = s->process->pool;
    shm_keep_t *keep = NULL;
    apr_status_t rv;
    char buf[120];

    apr_pool_userdata_get((void **)&keep, key, pp);
    if (keep && keep->size != size) {
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s, "Bulwark: the %s changed size: it starts "
                     "empty", what);
        apr_shm_destroy(keep->shm);
        keep = NULL;
    }
    if (!keep) {
        keep = apr_pcalloc(pp, sizeof(*keep));
        rv = apr_shm_create(&keep->shm, size, NULL, pp);
        if (rv != APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "Bulwark: cannot make %lu bytes of shared "
                         "memory for the %s: %s", (unsigned long)size, what,
                         apr_strerror(rv, buf, sizeof buf));
            apr_pool_userdata_set(NULL, key, apr_pool_cleanup_null, pp);
            return NULL;
        }
        keep->size = size;
        apr_pool_userdata_set(keep, key, apr_pool_cleanup_null, pp);
    }
    return apr_shm_baseaddr_get(keep->shm);
}

int bw_httpd_store_post_config(apr_pool_t *pconf, server_rec *s)
{
    const bw_httpd_dircfg_t *d = ap_get_module_config(s->lookup_defaults, &bulwark_module);
    const bw_program_t *prog;
    const bw_settings_t *set;
    bw_store_t *st;
    apr_size_t size;
    void *base = NULL;
    char *err = NULL;
    int adopted = 0;

    prog = d ? bw_httpd_program(NULL, d, &err) : NULL;
    if (!prog)
        return OK;      /* no configuration: the program's own error is logged */
    set = bw_program_settings(prog);
    size = bw_store_shm_size(set);
    if (size && !(base = bw_httpd_shm_block(s, SHM_KEY, size,
                                            "collection store (SecCollectionShmSize)")))
        return HTTP_INTERNAL_SERVER_ERROR;
    st = bw_store_open(pconf, set, base, size, &adopted, &err);
    if (!st) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, "Bulwark: %s", err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    apr_pool_userdata_set(st, STORE_KEY, apr_pool_cleanup_null, pconf);
    ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s, "Bulwark: collection store: %s%s",
                 bw_store_describe(st), adopted ? " (records kept across the restart)" : "");
    return OK;
}

bw_store_t *bw_httpd_store(server_rec *s)
{
    void *st = NULL;
    apr_pool_userdata_get(&st, STORE_KEY, s->process->pconf);
    return st;
}
