/*
 * The httpd glue: the only part of Bulwark that includes httpd headers.
 * mod_bulwark.c holds the module, its directive table and per-directory
 * configuration; bw_httpd_hooks.c drives a transaction through the request;
 * bw_httpd_filters.c replays the buffered request body and inspects the
 * response; bw_httpd_log.c writes engine messages to the error log.
 */
#ifndef BW_HTTPD_H
#define BW_HTTPD_H

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_filter.h"
#include "bw_engine.h"

extern module AP_MODULE_DECLARE_DATA bulwark_module;
#ifndef BW_HTTPD_MODULE_FILE   /* mod_bulwark.c declares it with the module */
APLOG_USE_MODULE(bulwark);
#endif

/* Per-directory configuration. Merged configurations point at their parent;
 * the effective program is built once per (parent, context) pair and cached
 * in the context's engine configuration. */
typedef struct bw_httpd_dircfg_s {
    bw_config_t *cfg;
    const struct bw_httpd_dircfg_s *parent;
    apr_pool_t *build_pool;          /* where programs of this context live */
    const char *where;               /* for errors: "<Location /x>" or "server" */
} bw_httpd_dircfg_t;

/* One request's state. */
typedef struct bw_httpd_req_s {
    bw_tx_t *tx;
    request_rec *r;
    int intercepted;
    char *body;                      /* raw request body as read, replayed to the handler */
    apr_size_t body_len;
    apr_size_t body_sent;
    int body_complete;               /* EOS was read */
    int body_read;
    int phase5_done;
    int resp_started;
    apr_bucket_brigade *resp_bb;     /* buffered response for phase 4 */
    int resp_buffering;
    int resp_done;
} bw_httpd_req_t;

/* The program for a request's merged per-dir configuration, or NULL with an
 * error logged. */
const bw_program_t *bw_httpd_program(request_rec *r, const bw_httpd_dircfg_t *d, char **err);

void bw_httpd_register_hooks(apr_pool_t *p);
void bw_httpd_register_filters(void);
apr_status_t bw_httpd_input_filter(ap_filter_t *f, apr_bucket_brigade *bb, ap_input_mode_t mode,
                                   apr_read_type_e block, apr_off_t readbytes);
apr_status_t bw_httpd_output_filter(ap_filter_t *f, apr_bucket_brigade *bb);

/* Callbacks that write alerts and messages to the error log of r. */
const bw_callbacks_t *bw_httpd_callbacks(request_rec *r);

/* Turn an intervention into an HTTP status for a hook to return. */
int bw_httpd_intervene(request_rec *r, const bw_intervention_t *iv);

#endif /* BW_HTTPD_H */
