/*
 * Shared inside apache2/audit/ only: the growing output buffer, the
 * sanitisation plan and the record context both formatters read.
 */
#ifndef BW_AUDIT_INT_H
#define BW_AUDIT_INT_H

#include "run/bw_run.h"
#include "audit/bw_audit.h"

/* ---- output buffer ---------------------------------------------------------- */

/* One record is built in one pool buffer so the writer can hand it to a
 * single write(2). Growth doubles; the old block stays in the transaction
 * pool, which dies with the request. */
typedef struct bw_abuf_s {
    apr_pool_t *pool;
    char *data;
    apr_size_t len, cap;
} bw_abuf_t;

void bw_abuf_init(bw_abuf_t *b, apr_pool_t *p, apr_size_t cap);
void bw_abuf_add(bw_abuf_t *b, const char *s, apr_size_t n);
void bw_abuf_cstr(bw_abuf_t *b, const char *s);
void bw_abuf_str(bw_abuf_t *b, bw_str_t s);
void bw_abuf_num(bw_abuf_t *b, apr_int64_t n);
void bw_abuf_byte(bw_abuf_t *b, char c);
/* A JSON string literal, quotes included. Bytes that are not valid UTF-8
 * are written as \u00XX (their Latin-1 reading) so every record parses. */
void bw_abuf_json(bw_abuf_t *b, bw_str_t s);
void bw_abuf_json_c(bw_abuf_t *b, const char *s);
/* Text for one line: control bytes and DEL as \xHH, so a value can never
 * start a line of its own (and so never a forged section boundary). */
void bw_abuf_line_safe(bw_abuf_t *b, bw_str_t s);

/* ---- sanitisation ----------------------------------------------------------- */

/* What sanitise* actions asked to mask, from the "__SANITISE" collection
 * (keys "sanitiseArg:NAME", "sanitiseMatched:ARGS:NAME", …). Names compare
 * case-insensitively, as ModSecurity compares argument and header names. */
typedef struct bw_audit_san_s {
    apr_array_header_t *get_args;     /* const char*: mask in the query string */
    apr_array_header_t *post_args;    /* const char*: mask in the request body */
    apr_array_header_t *req_headers;  /* const char* */
    apr_array_header_t *res_headers;  /* const char* */
    apr_array_header_t *arg_names;    /* const char*: for Sanitised-Args, in order */
} bw_audit_san_t;

void bw_audit_san_build(apr_pool_t *p, const bw_tx_t *tx, bw_audit_san_t *s);
int bw_audit_san_has(const apr_array_header_t *names, bw_str_t name);
/* The request line with sanitised query-string values starred. */
bw_str_t bw_audit_san_request_line(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_san_t *s,
                                   bw_str_t line);
/* A header value, starred when its name is listed. */
bw_str_t bw_audit_san_header(apr_pool_t *p, const apr_array_header_t *names, bw_str_t name,
                             bw_str_t value);
/* The raw request body with sanitised argument values starred
 * (urlencoded and multipart by structure, other bodies by value). */
bw_str_t bw_audit_san_body(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_san_t *s,
                           bw_str_t body);
/* Part I of a multipart body: the non-file fields as an urlencoded body. */
bw_str_t bw_audit_fake_body(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_san_t *s);

/* ---- the record ------------------------------------------------------------- */

typedef struct bw_audit_rec_s {
    apr_pool_t *pool;
    const bw_tx_t *tx;
    const char *parts;               /* effective, record order */
    bw_audit_san_t san;
    bw_str_t request_line;           /* sanitised */
    bw_str_t body;                   /* sanitised request body, may be empty */
    int multipart;                   /* the body is multipart/form-data */
    int status;
    bw_str_t protocol, status_line;  /* response */
    const apr_array_header_t *res_headers;
    const char *handler, *server;
    apr_time_t start, end;
    const char *time_text;           /* "22/Nov/2026:16:01:28.795459 +0000" */
    const char *boundary;
    apr_array_header_t *messages;    /* bw_str_t: part H Message: texts */
    apr_array_header_t *rules;       /* const bw_rule_t*: matched rules, once each */
} bw_audit_rec_t;

int bw_audit_has_part(const bw_audit_rec_t *r, char part);
/* Request-body part to write: 'C' (raw), 'I' (multipart summary), both, or
 * none; see bw_audit_native.c for ModSecurity's rules. */
int bw_audit_want_c(const bw_audit_rec_t *r);
int bw_audit_want_i(const bw_audit_rec_t *r);
/* "ENABLED", "DETECTION_ONLY", "DISABLED". */
const char *bw_audit_engine_mode(const bw_tx_t *tx);
/* The message the intercepting rule logged (JSON action.message), or NULL. */
const char *bw_audit_action_message(const bw_tx_t *tx);
/* "Bulwark/0.1.0; comp/1.0" (no final '.'). */
const char *bw_audit_producer(apr_pool_t *p, const bw_tx_t *tx, int json_list,
                              apr_array_header_t *out);

void bw_audit_native(bw_audit_rec_t *r, bw_abuf_t *b);
void bw_audit_json(bw_audit_rec_t *r, bw_abuf_t *b);

/* Part K: one rule as configuration text (SecRule "T" "@op p" "actions"). */
const char *bw_audit_rule_text(apr_pool_t *p, const bw_rule_t *r);
/* The target list as written: "ARGS:q|!ARGS:x|&TX:y". */
const char *bw_audit_rule_targets(apr_pool_t *p, const bw_rule_t *r);

/* "22/Nov/2026:16:01:28.795459 +0000", local time. */
const char *bw_audit_time_text(apr_pool_t *p, apr_time_t t);

#endif /* BW_AUDIT_INT_H */
