/*
 * Shared by the body processor unit tests (test_body.c, test_body_limits.c):
 * a sink that writes everything it receives as one line of text each, and
 * a runner that feeds a body to a processor whole, byte by byte or in
 * random pieces and returns the transcript, so tests compare text.
 */
#ifndef BW_TEST_BODY_H
#define BW_TEST_BODY_H

#include <check.h>
#include "body/bw_body.h"

typedef enum { TB_URLENCODED, TB_MULTIPART, TB_JSON, TB_XML } tb_kind_t;

/* One body and how to parse it. */
typedef struct {
    tb_kind_t kind;
    const char *content_type;       /* multipart */
    char sep;                       /* urlencoded */
    bw_body_limits_t limits;
    int store_uploads;              /* files go to a fresh temporary directory */
    int refuse_after;               /* sink refuses the argument after this many; -1 never */
    int quiet;                      /* count events instead of writing them */
    bw_str_t body;
    apr_array_header_t *xpaths;     /* const char *; XML only */
} tb_case_t;

/* What a run produced besides its transcript. */
typedef struct {
    bw_body_result_t res;
    long nargs, nfiles, nheaders;
    double seconds;
} tb_outcome_t;

/* Split modes for tb_run: TB_WHOLE, TB_BYTES, or any value >= TB_RANDOM as
 * the seed of a random split. */
#define TB_WHOLE 0
#define TB_BYTES 1
#define TB_RANDOM 2

void tb_case_init(tb_case_t *c, tb_kind_t kind);

/* Runs c, returns the transcript (events, then result lines). */
const char *tb_run(apr_pool_t *pool, const tb_case_t *c, unsigned split, tb_outcome_t *out);

/* Runs c whole, byte by byte and in n random splits; fails the test unless
 * every transcript is the same. Returns it. */
const char *tb_run_all_splits(apr_pool_t *pool, const tb_case_t *c, int n, tb_outcome_t *out);

/* "quoted" form with \xHH escapes, as transcripts write strings. */
const char *tb_quote(apr_pool_t *pool, bw_str_t s);

/* $BW_TEST_DATA/body/rel, and the whole content of such a file. */
const char *tb_data_path(apr_pool_t *pool, const char *rel);
bw_str_t tb_read_file(apr_pool_t *pool, const char *path);

Suite *tb_cases_suite(void);
Suite *tb_limits_suite(void);
Suite *tb_sniff_suite(void);

#endif /* BW_TEST_BODY_H */
