/* The bulwark CLI's subcommands and the helpers they share. */
#ifndef BW_CLI_H
#define BW_CLI_H

#include <stdio.h>
#include "base/bw_types.h"

int bw_cli_check(apr_pool_t *pool, int argc, const char *const *argv);
int bw_cli_tfn(apr_pool_t *pool, int argc, const char *const *argv);
int bw_cli_op(apr_pool_t *pool, int argc, const char *const *argv);
int bw_cli_eval(apr_pool_t *pool, int argc, const char *const *argv);

/* A raw HTTP request parsed for the engine. */
#include "bw_engine.h"
typedef struct {
    bw_request_t req;
    bw_str_t body;
} bw_cli_request_t;
const char *bw_cli_parse_request(apr_pool_t *p, bw_str_t raw, bw_cli_request_t *out);
int bw_cli_bench(apr_pool_t *pool, int argc, const char *const *argv);
int bw_cli_diff(apr_pool_t *pool, int argc, const char *const *argv);

/* The response phases 3 and 4 see in bench and diff: what the perf
 * harness's backend (tools/perf/backend.c) answers, a small 200 text/html
 * page, with its headers as mod_proxy hands them to the module. The body
 * goes to the engine when the rules ask for it. */
void bw_cli_respond(apr_pool_t *p, bw_tx_t *tx);

/* All of a stream (stdin) or a file into memory; NULL with *err on failure. */
bw_str_t *bw_cli_read_all(apr_pool_t *pool, const char *path, char **err);

/* Write s as a JSON string literal (with quotes). */
void bw_cli_json_str(FILE *out, bw_str_t s);

#endif
