/*
 * What the body processors share and nothing outside apache2/body/ needs:
 * the parser object behind bw_body_parser_t (a small vtable plus the
 * caller's sink, limits and result), error reporting, and a growable byte
 * buffer that lives in a pool.
 */
#ifndef BW_BODY_INTERNAL_H
#define BW_BODY_INTERNAL_H

#include "bw_body.h"

typedef struct bw_body_ops_s {
    const char *name;   /* REQBODY_PROCESSOR spelling, used in messages */
    int (*feed)(bw_body_parser_t *bp, const char *data, size_t len);
    int (*finish)(bw_body_parser_t *bp);
} bw_body_ops_t;

struct bw_body_parser_s {
    const bw_body_ops_t *ops;
    apr_pool_t *pool;
    const bw_body_limits_t *limits;
    const bw_body_sink_t *sink;
    bw_body_result_t *res;
    void *impl;          /* the processor's own state */
    int finished;        /* bw_body_finish already ran */
    long nargs;          /* arguments handed to the sink so far */
};

/* A parser object owning impl; never fails (APR aborts on OOM). */
bw_body_parser_t *bw_body_parser_new(apr_pool_t *pool, const bw_body_ops_t *ops,
                                     const bw_body_limits_t *limits,
                                     const bw_body_sink_t *sink,
                                     bw_body_result_t *res, void *impl);

/* Records the first error (later ones are dropped: the first names the
 * cause) and returns -1 so callers can write `return bw_body_fail(...)`. */
int bw_body_fail(bw_body_result_t *res, apr_pool_t *pool, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Hands one argument to the sink. Going past limits->args_limit (when it
 * is > 0) or a refusal by the sink becomes the parser's error; who names
 * the processor in that message. */
int bw_body_emit_arg(bw_body_parser_t *bp, const char *who, bw_str_t name, bw_str_t value);

/* Attacker bytes made safe for an error message: at most max bytes, with
 * control, quote, backslash and non-ASCII bytes written as \xHH. */
const char *bw_body_escape(apr_pool_t *pool, bw_str_t s, size_t max);

/* Code point cp (below 0x200000) as UTF-8 at o (room for 4 bytes); returns
 * the bytes written. Surrogates are encoded as any other code point. */
size_t bw_body_utf8_put(char *o, unsigned long cp);

/* Growable byte buffer in a pool (base's bw_buf_t). */
typedef bw_buf_t bw_body_buf_t;
#define bw_body_buf_append bw_buf_append

/* A pool copy of what the buffer holds now (NUL-terminated, NULs kept). */
bw_str_t bw_body_buf_take(apr_pool_t *pool, const bw_body_buf_t *b);

/* Multipart header parsing (body_multipart_hdr.c). */

/* RFC 2046 caps a boundary at 70 characters. */
#define BW_BODY_MP_BOUNDARY_MAX 70

/* The boundary parameter of a multipart Content-Type, with the
 * boundary_quoted, boundary_whitespace and missing_semicolon flags set in
 * res->mp; -1 with res->error on anything that cannot be used safely. */
int bw_body_mp_boundary(apr_pool_t *pool, const char *content_type, bw_str_t *boundary,
                        bw_body_result_t *res);

/* What a part's Content-Disposition says. */
typedef struct {
    bw_str_t name, filename;
    int has_name, has_filename;
} bw_body_mp_disp_t;

/* Parses a Content-Disposition value ("form-data; name=...; filename=...");
 * may set invalid_quoting; -1 with res->error when malformed. */
int bw_body_mp_disposition(apr_pool_t *pool, bw_str_t value, bw_body_mp_disp_t *d,
                           bw_body_result_t *res);

#endif /* BW_BODY_INTERNAL_H */
