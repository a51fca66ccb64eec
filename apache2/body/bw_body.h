/*
 * Request body processors: URLENCODED, MULTIPART, JSON and XML. They know
 * nothing of transactions: each pushes what it finds into a bw_body_sink_t
 * that the engine provides, and reports errors in a bw_body_result_t. All of
 * them take input in chunks (any split, down to one byte) and keep hard
 * limits; none of them reads past what it was given.
 */
#ifndef BW_BODY_H
#define BW_BODY_H

#include "base/bw_types.h"

/* A file part of a multipart body. */
typedef struct bw_body_file_s {
    bw_str_t field_name;     /* name="…" (FILES_NAMES) */
    bw_str_t file_name;      /* filename="…" (FILES) */
    bw_str_t content_type;
    apr_off_t size;          /* FILES_SIZES */
    const char *tmp_name;    /* FILES_TMPNAMES: path under upload dir, or NULL when not stored */
} bw_body_file_t;

typedef struct bw_body_sink_s {
    void *ctx;
    /* One argument (ARGS_POST). Returns 0, or -1 to stop the parser (argument
     * limit reached: the parser then fails with that reason). */
    int (*add_arg)(void *ctx, bw_str_t name, bw_str_t value);
    /* One file part (multipart). Same return convention. May be NULL. */
    int (*add_file)(void *ctx, const bw_body_file_t *file);
    /* One header line of a multipart part (MULTIPART_PART_HEADERS), keyed by
     * the part's field name. May be NULL. */
    int (*add_part_header)(void *ctx, bw_str_t part_name, bw_str_t header);
} bw_body_sink_t;

typedef struct bw_body_limits_s {
    int json_depth;              /* SecRequestBodyJsonDepthLimit, e.g. 512 */
    int args_limit;              /* SecArgumentsLimit, e.g. 1000 (enforced by the sink too) */
    int upload_file_limit;       /* SecUploadFileLimit, e.g. 100 */
    const char *upload_dir;      /* SecUploadDir / SecTmpDir for file parts, or NULL: not stored */
    int upload_file_mode;        /* SecUploadFileMode, e.g. 0600 */
    char arg_separator;          /* SecArgumentSeparator, '&' */
} bw_body_limits_t;

/* Multipart strictness flags, each 0/1, named as the MULTIPART_* variables. */
typedef struct bw_multipart_flags_s {
    int boundary_quoted, boundary_whitespace, data_before, data_after,
        header_folding, lf_line, missing_semicolon, invalid_quoting,
        invalid_part, invalid_header_folding, file_limit_exceeded,
        unmatched_boundary, crlf_lf_lines;
} bw_multipart_flags_t;

typedef struct bw_body_result_s {
    int error;                   /* REQBODY_ERROR (0/1) */
    const char *error_msg;       /* REQBODY_ERROR_MSG */
    int urlencoded_error;        /* URLENCODED_ERROR: invalid %-encoding seen */
    bw_multipart_flags_t mp;     /* multipart only */
    int mp_strict_error;         /* MULTIPART_STRICT_ERROR: OR of the flags that make it */
    void *xml_doc;               /* XML only: the parsed xmlDocPtr (freed by a pool cleanup) */
} bw_body_result_t;

/* URL-encoded (also used for QUERY_STRING). Whole buffer: bodies of this
 * kind are bounded by SecRequestBodyNoFilesLimit. Splits on sep, then '=',
 * then %-decodes and turns '+' into space as ModSecurity does; invalid
 * %-escapes are kept literally and set urlencoded_error. */
int bw_body_urlencoded(apr_pool_t *pool, bw_str_t body, char sep,
                       const bw_body_sink_t *sink, bw_body_result_t *res);

/* Streaming processors: create, feed chunks, finish. feed/finish return 0,
 * or -1 once res->error is set (then further feeds are ignored). */
typedef struct bw_body_parser_s bw_body_parser_t;

bw_body_parser_t *bw_body_multipart_create(apr_pool_t *pool, const char *content_type,
                                           const bw_body_limits_t *limits,
                                           const bw_body_sink_t *sink, bw_body_result_t *res);
bw_body_parser_t *bw_body_json_create(apr_pool_t *pool, const bw_body_limits_t *limits,
                                      const bw_body_sink_t *sink, bw_body_result_t *res);
bw_body_parser_t *bw_body_xml_create(apr_pool_t *pool, const bw_body_limits_t *limits,
                                     const bw_body_sink_t *sink, bw_body_result_t *res);
int bw_body_feed(bw_body_parser_t *bp, const char *data, size_t len);
int bw_body_finish(bw_body_parser_t *bp);

/* XPath over a document from bw_body_xml_create: appends the string value of
 * each node selected by expr as a bw_kv_t (name = expr) to out. Returns 0, or
 * -1 with *err on a bad expression. */
int bw_body_xml_xpath(apr_pool_t *pool, void *xml_doc, const char *expr,
                      apr_array_header_t *out, char **err);

#endif /* BW_BODY_H */
