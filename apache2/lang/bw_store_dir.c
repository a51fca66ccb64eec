/*
 * The collection store's directives (Bulwark's own; mod_security2 has only
 * SecDataDir's files):
 *
 *   SecCollectionBackend shm|file|redis          default shm
 *   SecCollectionShmSize BYTES[K|M|G]            default 32M (1M to 64G)
 *   SecCollectionShmRecordSize BYTES             default 1024 (128 to 65536)
 *   SecCollectionShmFull Evict|Refuse            default Evict (the least recently used)
 *   SecCollectionRedisServer HOST[:PORT]         default 127.0.0.1:6379
 *   SecCollectionRedisAuth [USER] PASSWORD       default none
 *   SecCollectionRedisDatabase N                 default 0
 *   SecCollectionRedisPrefix STRING              default "bulwark:"
 *   SecCollectionRedisTimeout CONNECT_MS COMMAND_MS   default 100 100
 *   SecCollectionRedisPool N                     default 4 idle connections per process
 *   SecCollectionFailAction Open|Closed [STATUS] default Open (Closed: 503)
 *
 * A bad value is an error at its line, with the reason, so httpd stops at
 * start-up. Each context that names one gets its own copy of the store
 * settings, starting from the defaults (the glue allows them in the main
 * server only, so in practice there is one).
 */
#include <string.h>
#include <stdlib.h>
#include <ctype.h>
#include "lang/bw_lang.h"

static const bw_store_conf_t defaults = {
    BW_STORE_SHM,
    32 * 1024 * 1024, 1024, 0,
    "127.0.0.1", 6379, NULL, NULL, 0, "bulwark:",
    100, 100, 4,
    0, 503
};

const bw_store_conf_t *bw_store_conf(const bw_settings_t *s)
{
    return s && s->store ? s->store : &defaults;
}

static bw_store_conf_t *own_conf(bw_config_t *cfg)
{
    if (!cfg->settings.store) {
        cfg->settings.store = apr_palloc(cfg->pool, sizeof(bw_store_conf_t));
        *cfg->settings.store = defaults;
    }
    return cfg->settings.store;
}

/* A whole decimal number in [lo, hi], or -1. */
static long number_in(const char *w, long lo, long hi)
{
    char *end;
    long v;
    if (!*w || !isdigit((unsigned char)*w))
        return -1;
    v = strtol(w, &end, 10);
    return *end || v < lo || v > hi ? -1 : v;
}

/* BYTES with an optional K, M or G suffix (powers of 1024), or -1. */
static apr_int64_t size_of(const char *w)
{
    char *end;
    apr_int64_t v;
    if (!*w || !isdigit((unsigned char)*w))
        return -1;
    v = apr_strtoi64(w, &end, 10);
    if (v < 0 || v > ((apr_int64_t)1 << 40))
        return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
    }
    return *end ? -1 : v;
}

/* HOST, HOST:PORT or [IPV6]:PORT. */
static const char *redis_server(apr_pool_t *p, bw_store_conf_t *sc, const char *w)
{
    const char *colon = NULL, *host = w;
    size_t hlen;
    long port = 6379;
    if (*w == '[') {
        const char *close = strchr(w, ']');
        if (!close || (close[1] && close[1] != ':'))
            return apr_psprintf(p, "SecCollectionRedisServer: invalid address \"%s\" "
                                "(expected HOST, HOST:PORT or [IPV6]:PORT)", w);
        host = w + 1;
        hlen = (size_t)(close - host);
        colon = close[1] ? close + 1 : NULL;
    } else {
        colon = strrchr(w, ':');
        if (colon && strchr(w, ':') != colon)
            return apr_psprintf(p, "SecCollectionRedisServer: write an IPv6 address in brackets, "
                                "as [%s]:6379", w);
        hlen = colon ? (size_t)(colon - w) : strlen(w);
    }
    if (!hlen)
        return apr_psprintf(p, "SecCollectionRedisServer: no host in \"%s\"", w);
    if (colon && (port = number_in(colon + 1, 1, 65535)) < 0)
        return apr_psprintf(p, "SecCollectionRedisServer: invalid port in \"%s\" (1 to 65535)", w);
    sc->redis_host = apr_pstrndup(p, host, hlen);
    sc->redis_port = (int)port;
    return NULL;
}

static const char *fail_action(apr_pool_t *p, bw_store_conf_t *sc, apr_array_header_t *w)
{
    const char *what = ((const char **)w->elts)[0];
    long status = 503;
    if (!strcasecmp(what, "Open") && w->nelts == 1) {
        sc->fail_closed = 0;
        return NULL;
    }
    if (strcasecmp(what, "Closed") || w->nelts > 2)
        return "SecCollectionFailAction: expected Open, or Closed with an optional status "
               "(e.g. Closed 503)";
    if (w->nelts == 2 && (status = number_in(((const char **)w->elts)[1], 400, 599)) < 0)
        return apr_psprintf(p, "SecCollectionFailAction: invalid status \"%s\" (400 to 599)",
                            ((const char **)w->elts)[1]);
    sc->fail_closed = 1;
    sc->fail_status = (int)status;
    return NULL;
}

static const char *timeouts(apr_pool_t *p, bw_store_conf_t *sc, apr_array_header_t *w)
{
    long c, m;
    if (w->nelts != 2)
        return "SecCollectionRedisTimeout takes two numbers of milliseconds: CONNECT COMMAND";
    c = number_in(((const char **)w->elts)[0], 1, 60000);
    m = number_in(((const char **)w->elts)[1], 1, 60000);
    if (c < 0 || m < 0)
        return apr_psprintf(p, "SecCollectionRedisTimeout: invalid value \"%s %s\" "
                            "(milliseconds, 1 to 60000 each)",
                            ((const char **)w->elts)[0], ((const char **)w->elts)[1]);
    sc->redis_connect_ms = (int)c;
    sc->redis_command_ms = (int)m;
    return NULL;
}

/* The directives that take one word. */
static const char *one(apr_pool_t *p, bw_store_conf_t *sc, const char *name, const char *w)
{
    long v;
    apr_int64_t sz;
    if (!strcasecmp(name, "SecCollectionBackend")) {
        if (!strcasecmp(w, "shm"))
            sc->backend = BW_STORE_SHM;
        else if (!strcasecmp(w, "file"))
            sc->backend = BW_STORE_FILE;
        else if (!strcasecmp(w, "redis"))
            sc->backend = BW_STORE_REDIS;
        else
            return apr_psprintf(p, "SecCollectionBackend: invalid value \"%s\" "
                                "(expected shm, file or redis)", w);
    } else if (!strcasecmp(name, "SecCollectionShmSize")) {
        sz = size_of(w);
        if (sz < ((apr_int64_t)1 << 20) || sz > ((apr_int64_t)64 << 30))
            return apr_psprintf(p, "SecCollectionShmSize: invalid size \"%s\" (1M to 64G, "
                                "bytes or with a K, M or G suffix)", w);
        sc->shm_size = sz;
    } else if (!strcasecmp(name, "SecCollectionShmRecordSize")) {
        if ((v = number_in(w, 128, 65536)) < 0)
            return apr_psprintf(p, "SecCollectionShmRecordSize: invalid size \"%s\" "
                                "(bytes, 128 to 65536)", w);
        sc->shm_record_size = (int)v;
    } else if (!strcasecmp(name, "SecCollectionShmFull")) {
        if (strcasecmp(w, "Evict") && strcasecmp(w, "Refuse"))
            return apr_psprintf(p, "SecCollectionShmFull: invalid value \"%s\" "
                                "(expected Evict or Refuse)", w);
        sc->shm_refuse = !strcasecmp(w, "Refuse");
    } else if (!strcasecmp(name, "SecCollectionRedisServer")) {
        return redis_server(p, sc, w);
    } else if (!strcasecmp(name, "SecCollectionRedisDatabase")) {
        if ((v = number_in(w, 0, 65535)) < 0)
            return apr_psprintf(p, "SecCollectionRedisDatabase: invalid number \"%s\"", w);
        sc->redis_db = (int)v;
    } else if (!strcasecmp(name, "SecCollectionRedisPrefix")) {
        sc->redis_prefix = w;
    } else if (!strcasecmp(name, "SecCollectionRedisPool")) {
        if ((v = number_in(w, 1, 256)) < 0)
            return apr_psprintf(p, "SecCollectionRedisPool: invalid number \"%s\" (1 to 256)", w);
        sc->redis_pool = (int)v;
    }
    return NULL;
}

const char *bw_dir_store(bw_config_t *cfg, const char *name, const char *args)
{
    apr_array_header_t *w;
    bw_store_conf_t *sc;
    const char *err = bw_dir_words(cfg->pool, args, &w);
    if (err)
        return err;
    if (!w->nelts)
        return apr_psprintf(cfg->pool, "%s takes an argument", name);
    sc = own_conf(cfg);
    if (!strcasecmp(name, "SecCollectionFailAction"))
        return fail_action(cfg->pool, sc, w);
    if (!strcasecmp(name, "SecCollectionRedisTimeout"))
        return timeouts(cfg->pool, sc, w);
    if (!strcasecmp(name, "SecCollectionRedisAuth")) {
        if (w->nelts > 2)
            return "SecCollectionRedisAuth takes a password, or a user and a password";
        sc->redis_user = w->nelts == 2 ? ((const char **)w->elts)[0] : NULL;
        sc->redis_password = ((const char **)w->elts)[w->nelts - 1];
        return NULL;
    }
    if (w->nelts != 1)
        return apr_psprintf(cfg->pool, "%s takes one argument", name);
    return one(cfg->pool, sc, name, ((const char **)w->elts)[0]);
}
