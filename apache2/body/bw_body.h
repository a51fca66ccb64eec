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
    bw_str_t content;        /* FILES_CONTENT: the first upload_text_limit bytes of a
                                text-like part (UTF-8), or data NULL: binary or not kept */
} bw_body_file_t;

/* What a JSON body is made of, event by event, as the parser reads it: for
 * a consumer that checks the document's shape (the OpenAPI validator)
 * without the parser building a tree. Strings are decoded, numbers as
 * written; pointers are valid during the call only. */
enum { BW_JSON_NULL, BW_JSON_FALSE, BW_JSON_TRUE, BW_JSON_NUMBER, BW_JSON_STRING };
typedef struct bw_json_observer_s {
    void *ctx;
    void (*scalar)(void *ctx, int type, const char *text, size_t len);
    void (*key)(void *ctx, const char *name, size_t len);
    void (*start)(void *ctx, int is_array);
    void (*end)(void *ctx, int is_array);
} bw_json_observer_t;

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
    /* JSON only, may be NULL: sees every event of the document. With
     * add_arg NULL the JSON parser makes no arguments (no names, no
     * values): events only. */
    const bw_json_observer_t *json;
    /* JSON only, with add_arg NULL, may be NULL: where the arguments are
     * counted (nothing reads them but their number), one add each, and how
     * many it takes (arg_room): one more stops the parser as a refusal by
     * add_arg would. */
    int *arg_count;
    int arg_room;
} bw_body_sink_t;

typedef struct bw_body_limits_s {
    int json_depth;              /* SecRequestBodyJsonDepthLimit, e.g. 512 */
    int args_limit;              /* SecArgumentsLimit, e.g. 1000 (enforced by the sink too) */
    int upload_file_limit;       /* SecUploadFileLimit, e.g. 100 */
    const char *upload_dir;      /* SecUploadDir / SecTmpDir for file parts, or NULL: not stored */
    int upload_file_mode;        /* SecUploadFileMode, e.g. 0600 */
    char arg_separator;          /* SecArgumentSeparator, '&' */
    apr_size_t upload_text_limit; /* SecUploadTextLimit: FILES_CONTENT bytes kept, 0 = none */
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

/* ---- what the content is (body_sniff.c) ------------------------------------ */

/* The processor a body's content calls for, whatever it was labelled:
 * "JSON", "XML", "URLENCODED", or NULL (none: inspect it raw). Looks at
 * the start of the text only (a UTF-8 byte order mark and white space
 * skipped), so a prefix of the body is enough; the processor then proves
 * or disproves the guess. */
const char *bw_body_sniff(bw_str_t body);

/* Whether an uploaded part is text worth inspecting: declared text (text/,
 * JSON, XML, JavaScript, form data…) or, whatever it says, content that is
 * not binary (no NUL or other control bytes but white space, valid UTF-8,
 * not one of the common binary formats by its signature). */
int bw_body_text_like(bw_str_t content_type, bw_str_t content);

/* ---- charsets (body_charset.c) ---------------------------------------------- */

/* The UTF-16/UTF-32 decoder a body needs for inspection, by its declared
 * charset (charset=utf-16, utf-16le, utf-16be, utf-32, utf-32le, utf-32be,
 * case-insensitive) or, when the charset says only "utf-16"/"utf-32" or
 * nothing, its byte order mark. Fed in chunks (any split), it writes UTF-8
 * to a growing buffer; an unpaired surrogate or a code point past U+10FFFF
 * fails with a message. */
typedef struct bw_charset_dec_s bw_charset_dec_t;

/* The charset parameter of a Content-Type value, lower-cased, or NULL. */
const char *bw_body_charset_param(apr_pool_t *pool, const char *content_type);
/* A decoder for charset (as bw_body_charset_param returns it, or NULL),
 * or NULL when the body needs none (UTF-8, ASCII and the other
 * ASCII-compatible charsets go to the processors as they are). With
 * charset NULL the decoder waits for a UTF-16/32 byte order mark and
 * passes anything else through. */
bw_charset_dec_t *bw_charset_dec_create(apr_pool_t *pool, const char *charset);
/* Decode len bytes; *out, *out_len: the UTF-8 for them (valid until the
 * next call). Returns 0, or -1 with *err set (then every later call fails). */
int bw_charset_dec_feed(bw_charset_dec_t *dc, const char *data, size_t len,
                        const char **out, size_t *out_len, const char **err);
/* The end of the body: *out, *out_len: UTF-8 still held back (a body
 * shorter than a byte order mark); -1 with *err when a code unit was left
 * incomplete. */
int bw_charset_dec_finish(bw_charset_dec_t *dc, const char **out, size_t *out_len,
                          const char **err);
/* What the decoder decodes ("UTF-16LE", …), or NULL while it passes through. */
const char *bw_charset_dec_name(const bw_charset_dec_t *dc);

#endif /* BW_BODY_H */
