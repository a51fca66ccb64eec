/*
 * A streaming JSON parser for request bodies (body_json_parse.c).
 *
 * It reads the grammar yajl 2.1 reads with its default flags, reports the
 * same events in the same order and fails the same inputs with the same
 * messages ("lexical error: ..." or "parse error: ..."), because users'
 * logs and rules read REQBODY_ERROR_MSG as mod_security2 (on yajl) writes
 * it. tests/unit/test_json_parse.c and tests/fuzz/fuzz_json_parse.c hold
 * it to yajl itself, event by event, for any split of the input.
 *
 * A string's bytes are valid only during its event. A token cut by the
 * end of a chunk is kept (only the token) until the next chunk ends it.
 */
#ifndef BW_BODY_JSON_PARSE_H
#define BW_BODY_JSON_PARSE_H

#include <stddef.h>
#include <apr_pools.h>

/* Each returns 0 to stop the parse (bw_jp_feed then fails). */
typedef struct {
    int (*null)(void *ctx);
    int (*boolean)(void *ctx, int value);
    int (*number)(void *ctx, const char *text, size_t len);   /* as written */
    int (*string)(void *ctx, const char *s, size_t len);      /* escapes decoded */
    int (*start_map)(void *ctx);
    int (*map_key)(void *ctx, const char *s, size_t len);
    int (*end_map)(void *ctx);
    int (*start_array)(void *ctx);
    int (*end_array)(void *ctx);
} bw_jp_events_t;

typedef struct bw_jp_s bw_jp_t;

bw_jp_t *bw_jp_create(apr_pool_t *pool, const bw_jp_events_t *ev, void *ctx);

/* 0, or -1 once the document is known to be bad (and from then on). */
int bw_jp_feed(bw_jp_t *jp, const char *data, size_t len);

/* The end of the document: 0 when it was one whole value, else -1. */
int bw_jp_finish(bw_jp_t *jp);

/* Why it failed, e.g. "parse error: premature EOF"; NULL while it has not. */
const char *bw_jp_error(const bw_jp_t *jp);

#endif
