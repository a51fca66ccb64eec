/*
 * The httpd glue: the only part of Bulwark that includes httpd headers.
 * mod_bulwark.c holds the module, its directive table and per-directory
 * configuration; bw_httpd_hooks.c drives a transaction through the request;
 * bw_httpd_filters.c stores the request body and replays it, and inspects
 * the response; bw_httpd_log.c writes engine messages to the error log.
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
    int directives;                  /* Sec* directives read into this context */
} bw_httpd_dircfg_t;

/* One request's state. The request body as read in fixups is replayed to
 * the handler by BULWARK_IN: its first bytes are in memory (up to
 * SecRequestBodyInMemoryLimit), the rest in a temp file under SecTmpDir
 * that has no name (unlinked once created) and closes with r->pool. */
typedef struct bw_httpd_req_s {
    bw_tx_t *tx;
    request_rec *r;
    int intercepted;
    char *body;                      /* the in-memory part (the whole body when it fits) */
    apr_size_t body_len;
    apr_size_t body_cap, body_mem_limit;
    const char *body_tmp_dir;        /* SecTmpDir */
    const char *body_tmp_name;       /* set only if the name could not be removed at once */
    apr_file_t *body_file;           /* the rest, or NULL */
    apr_off_t body_file_len;
    apr_off_t body_sent;             /* replay position: memory part, then file */
    int body_complete;               /* EOS was read: nothing follows the stored bytes */
    int body_read;                   /* fixups read (part of) the body: the store is set */
    int phase5_done;
    int resp_started;
    apr_bucket_brigade *resp_bb;     /* buffered response for phase 4 */
    int resp_buffering;
    int resp_done;
} bw_httpd_req_t;

/* The program for a request's merged per-dir configuration, or NULL with an
 * error logged. */
const bw_program_t *bw_httpd_program(request_rec *r, const bw_httpd_dircfg_t *d, char **err);

/* Build, before any request, the program of every server and of every
 * <Location>/<Directory> section (and their Match forms) that holds Sec*
 * directives, over its server's: what a request that merges one section
 * into its server's configuration uses. An error that only shows when
 * contexts merge (an id a section repeats) is logged with its file and
 * line on s, and the call returns non-zero; the children inherit the
 * programs instead of each building one at its first request there. */
int bw_httpd_build_programs(server_rec *s);

void bw_httpd_register_hooks(apr_pool_t *p);
void bw_httpd_register_filters(void);
/* The collection store (bw_httpd_store.c): opened in post_config from the
 * main server's settings (its shared block kept across graceful restarts);
 * this generation's store for a request's transaction. */
int bw_httpd_store_post_config(apr_pool_t *pconf, server_rec *s);
/* The anonymous shared block of `size` bytes kept in the process pool
 * under key: the last generation's when it has that size (a graceful
 * restart keeps it), else a new one (a block of another size is given
 * back). NULL, logged with `what`, when it cannot be made. */
void *bw_httpd_shm_block(server_rec *s, const char *key, apr_size_t size, const char *what);
bw_store_t *bw_httpd_store(server_rec *s);
/* Live counters and the bulwark-status handler (bw_httpd_status.c): the
 * shared block made in post_config, each transaction counted in it. */
int bw_httpd_status_post_config(apr_pool_t *pconf, server_rec *s);
void bw_httpd_status_count(request_rec *r, bw_tx_t *tx);
void bw_httpd_register_status(void);
/* SecChrootDir (bw_httpd_chroot.c) */
void bw_httpd_register_chroot(void);
/* BULWARK_IN for r, first of its protocol input filters (see bw_httpd_filters.c). */
void bw_httpd_add_replay_filter(request_rec *r, bw_httpd_req_t *st);
apr_status_t bw_httpd_input_filter(ap_filter_t *f, apr_bucket_brigade *bb, ap_input_mode_t mode,
                                   apr_read_type_e block, apr_off_t readbytes);
apr_status_t bw_httpd_output_filter(ap_filter_t *f, apr_bucket_brigade *bb);

/* The request body store (bw_httpd_filters.c): init once the program is
 * known (announced: Content-Length, or -1), then store every byte read;
 * an error means the temp file could not be made or written (logged). */
/* SecStreamInBodyInspection: the stored body becomes STREAM_INPUT_BODY
 * before phase 2 (stream_lend), and after it what @rsub made of it replaces
 * the store, with Content-Length to match (stream_take). */
void bw_httpd_stream_lend(bw_httpd_req_t *st);
void bw_httpd_stream_take(bw_httpd_req_t *st);
void bw_httpd_body_init(bw_httpd_req_t *st, const bw_settings_t *set, apr_int64_t announced);
apr_status_t bw_httpd_body_store(bw_httpd_req_t *st, const char *data, apr_size_t len);

/* The whole request body as read (memory part and temp file), e.g. for the
 * audit log's part C. Returns APR_SUCCESS, or the error reading the file. */
apr_status_t bw_httpd_request_body(apr_pool_t *p, bw_httpd_req_t *st, bw_str_t *out);

/* The response headers as the engine sees them: headers_out, then
 * err_headers_out, plus Content-Type when only r->content_type has it. */
apr_array_header_t *bw_httpd_response_headers(request_rec *r);

/* RESPONSE_PROTOCOL and the protocol of the audit log's part F: httpd's own
 * protocol (AP_SERVER_PROTOCOL, "HTTP/1.1"), whatever the request's was, as
 * mod_security2 2.9.7 shows it. An HTTP/1.0 request gets an "HTTP/1.1" status
 * line from httpd, and an HTTP/2 stream has no status line at all: the
 * request's protocol (r->protocol, "HTTP/1.0", "HTTP/2.0") stays in
 * REQUEST_PROTOCOL and REQUEST_LINE (tests/fronts/cases.py compares both
 * engines). */
const char *bw_httpd_response_protocol(void);

/* Callbacks that write alerts and messages to the error log of r. */
const bw_callbacks_t *bw_httpd_callbacks(request_rec *r);

/* Turn an intervention into an HTTP status for a hook to return. */
int bw_httpd_intervene(request_rec *r, const bw_intervention_t *iv);

#endif /* BW_HTTPD_H */
