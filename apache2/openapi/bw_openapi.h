/*
 * The positive security model: requests checked against an OpenAPI 3.0 or
 * 3.1 description (BulwarkOpenAPI). The description is read once at
 * start-up (YAML with libyaml, JSON with yajl), its local $refs resolved
 * and compiled: the path templates into a segment tree, each operation's
 * parameters and JSON request body into validators. Anything the compiler
 * does not implement is a start-up error naming the file, the JSON pointer
 * and the reason; nothing is skipped silently.
 *
 * A request is checked in two steps: bw_oas_begin matches path and method
 * and checks the parameters; the JSON body is checked as the body parser
 * reads it (bw_oas_body_observer, events, no tree), and bw_oas_body_end
 * closes it. What failed is a list of violations, each naming where in the
 * request ("/query/limit", "/body/items/0/price"), why, and the schema
 * location in the description. Memory comes from the pools handed in.
 */
#ifndef BW_OPENAPI_H
#define BW_OPENAPI_H

#include "base/bw_types.h"
#include "base/bw_regex.h"
#include "body/bw_body.h"

typedef struct bw_oas_s bw_oas_t;          /* a compiled description, read-only */
typedef struct bw_oas_run_s bw_oas_run_t;  /* one request checked against it */

/* Read and compile the description at path for the life of pool. NULL with
 * *err ("PATH: #/json/pointer: reason") when it cannot be used. */
bw_oas_t *bw_oas_load(apr_pool_t *pool, const char *path, char **err);
/* The same from text in memory; name is used in messages. */
bw_oas_t *bw_oas_load_text(apr_pool_t *pool, const char *name, const char *text, size_t len,
                           char **err);
const char *bw_oas_file(const bw_oas_t *oas);
/* Number of operations compiled, for `bulwark check` and the tests. */
int bw_oas_operation_count(const bw_oas_t *oas);

/* What of a request the checks read. */
typedef struct bw_oas_request_s {
    bw_str_t method;
    bw_str_t uri;                          /* request-target as sent */
    const apr_array_header_t *query;       /* bw_kv_t, decoded (ARGS_GET) */
    const apr_array_header_t *headers;     /* bw_kv_t */
    const apr_array_header_t *cookies;     /* bw_kv_t */
} bw_oas_request_t;

typedef struct bw_oas_violation_s {
    const char *where;    /* "/path", "/method", "/query/limit", "/body/items/0", ... */
    const char *reason;
    const char *schema;   /* JSON pointer into the description ("#/paths/...") */
} bw_oas_violation_t;

/* Keeps at most this many violations; the count goes on. */
#define BW_OAS_MAX_KEPT 64

/* Match the request's path and method, check its parameters. md and mctx
 * (the transaction's, with its PCRE2 limits) run the patterns. */
bw_oas_run_t *bw_oas_begin(apr_pool_t *pool, const bw_oas_t *oas, const bw_oas_request_t *req,
                           pcre2_match_data *md, pcre2_match_context *mctx);
/* The events to feed the JSON body to, or NULL when the operation expects
 * no JSON body of this request's content type (nothing to stream). */
const bw_json_observer_t *bw_oas_body_observer(bw_oas_run_t *run);
/* The body is over: had_body says whether one came, parse_error is the JSON
 * parser's message when it failed. Checks requestBody.required. */
void bw_oas_body_end(bw_oas_run_t *run, int had_body, const char *parse_error);

const apr_array_header_t *bw_oas_violations(const bw_oas_run_t *run);  /* bw_oas_violation_t */
long bw_oas_violation_count(const bw_oas_run_t *run);
/* operationId, or "METHOD /template", of the matched operation; NULL when none. */
const char *bw_oas_operation(const bw_oas_run_t *run);

#endif /* BW_OPENAPI_H */
