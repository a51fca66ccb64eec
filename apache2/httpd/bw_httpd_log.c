/*
 * Engine messages to Apache's error log. Rule matches become one line each
 * in ModSecurity's bracketed format (bw_alert_format); httpd adds the
 * [client …] prefix itself. Lines are written at level "error" like
 * mod_security2's, so the default LogLevel keeps them.
 */
#include "httpd/bw_httpd.h"

static void on_alert(void *baton, bw_tx_t *tx, const bw_alert_t *a)
{
    request_rec *r = baton;
    ap_log_rerror(APLOG_MARK, APLOG_ERR | APLOG_NOERRNO, 0, r, "%s", bw_alert_format(r->pool, tx, a));
}

static void on_message(void *baton, bw_tx_t *tx, int level, const char *text)
{
    request_rec *r = baton;
    int lvl = level == 0 ? APLOG_ERR : level == 1 ? APLOG_WARNING
              : level == 2 ? APLOG_NOTICE : APLOG_DEBUG;
    ap_log_rerror(APLOG_MARK, lvl | APLOG_NOERRNO, 0, r, "Bulwark: %s", text);
}

const bw_callbacks_t *bw_httpd_callbacks(request_rec *r)
{
    bw_callbacks_t *cb = apr_pcalloc(r->pool, sizeof(*cb));
    cb->baton = r;
    cb->alert = on_alert;
    cb->message = on_message;
    return cb;
}
