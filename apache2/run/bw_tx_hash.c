/*
 * The hash engine in a transaction: the signing key of this request and
 * the response's links signed (SecHashEngine On). What is signed is
 * body/bw_hash_html.c's; this file only says when and with which key.
 */
#include <string.h>
#include <strings.h>
#include "run/bw_run.h"
#include "body/bw_hash_html.h"

bw_str_t bw_tx_hash_key(bw_tx_t *tx)
{
    bw_str_t session = bw_str_n("", 0);
    if (tx->cfg->hash.mode == BW_HASH_SESSION_ID) {
        bw_coll_t *c = bw_tx_collection(tx, "SESSION", 0);
        const bw_kv_t *kv = c ? bw_coll_get(c, bw_str_make("KEY")) : NULL;
        if (kv)
            session = kv->value;
    }
    return bw_hash_tx_key(tx->pool, &tx->cfg->hash, tx->req.remote_addr, session);
}

/* The request's path and query: where relative links of its page lead from. */
static bw_str_t page_path(const bw_tx_t *tx)
{
    bw_str_t u = tx->req.uri;
    bw_str_t t;
    if (u.len && u.data[0] == '/')
        return u;
    /* absolute form: the same resolution as a link's */
    if (bw_hash_link_target(tx->pool, bw_str_make("/"), u, &t))
        return t;
    return bw_str_make("/");
}

int bw_tx_hash_response_body(bw_tx_t *tx, const char *content_type, bw_str_t *out)
{
    *out = bw_str_n(tx->resbody, tx->resbody_len);
    if (!tx->hash_engine || tx->resbody_truncated || !tx->resbody_len
        || !content_type || strncasecmp(content_type, "text/html", 9) != 0)
        return 0;
    return bw_hash_sign_html(tx->pool, &tx->cfg->hash, bw_tx_hash_key(tx), page_path(tx),
                             bw_str_n(tx->resbody, tx->resbody_len), tx->md, out);
}

const char *bw_tx_hash_location(bw_tx_t *tx, const char *location)
{
    if (!tx->hash_engine || !location)
        return NULL;
    return bw_hash_sign_location(tx->pool, &tx->cfg->hash, bw_tx_hash_key(tx), page_path(tx),
                                 bw_str_make(location), tx->md);
}
