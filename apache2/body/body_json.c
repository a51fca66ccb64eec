/*
 * JSON body processor, streaming (body_json_parse.c, which reads what yajl
 * 2.1 reads and fails what it fails with its messages, as mod_security2
 * does on yajl): one feed per chunk, finish at the end. Only scalars
 * become arguments.
 *
 * Argument names are those mod_security2 2.9 gives (checked against 2.9.7),
 * because CRS exclusions such as ARGS:user.name or ARGS:ids.ids depend on
 * them:
 *   - keys of nested objects are joined with '.': {"a":{"b":1}} -> a.b;
 *   - array elements are named after the array's key *appended to itself*:
 *     {"a":[1,2]} -> a.a twice; {"a":[[1]]} -> a.a.a; {"a":[{"b":1}]} ->
 *     a.a.b; a top-level array is called "array": [1] -> array.array;
 *   - a scalar at the top level has the empty name; empty keys stay empty:
 *     {"":1} -> "", {"a":{"":1}} -> "a.";
 *   - values are text: strings decoded, numbers exactly as written,
 *     true/false, and null as the empty string.
 * One deliberate difference: 2.9 rebuilds the name after a closing bracket
 * by cutting the prefix at its last '.', which goes wrong when a key itself
 * contains '.' ({"x.y":{},"w":1} names w "x.w", letting one key rename its
 * siblings, e.g. into a name an exclusion ignores). We keep a stack of
 * prefix lengths instead, so w is "w".
 *
 * A sink may also want the document's events (bw_json_observer_t: the
 * OpenAPI validator checks a body's shape with them); with no add_arg it
 * gets those alone, and no names are built: the arguments are at most
 * counted (count_arg, when nothing reads them but their number).
 *
 * Depth counts every open array or object except a top-level object, which
 * is what makes 2.9.7's SecRequestBodyJsonDepthLimit accept [{}] at limit 2
 * and reject [[{}]]. Names are bounded (BW_JSON_NAME_MAX bytes each, and
 * BW_JSON_NAMES_TOTAL for all names built) so that deep prefixes cannot turn
 * a small body into a huge set of names.
 */
#include <string.h>
#include "body_internal.h"
#include "body_json_parse.h"

#define BW_JSON_DEFAULT_DEPTH 10000       /* ModSecurity's default limit */
#define BW_JSON_NAME_MAX 8192
#define BW_JSON_NAMES_TOTAL (32u << 20)
#define MSG_MAX 200

typedef struct {
    bw_str_t key;      /* segment this container added to the prefix */
    long saved;        /* prefix length before it, or -1: there was no prefix */
    int transparent;   /* the top-level object: changes nothing */
} frame_t;

typedef struct {
    bw_body_parser_t *bp;
    bw_jp_t *jp;
    bw_body_buf_t pfx;
    bw_body_buf_t keybuf;         /* the last key's bytes */
    int has_pfx;
    bw_str_t key;
    int has_key;
    apr_array_header_t *frames;   /* frame_t */
    int depth, depth_limit;
    bw_str_t name;                /* last name built, reused while nothing changed */
    int name_ok;
    size_t names_total;
    apr_off_t total;
    const bw_json_observer_t *ob; /* the sink's JSON events, or NULL */
    int events_only;              /* no add_arg, an observer or arg_count: no names */
    int count;                    /* the arguments are counted (arg_count), not made */
    long count_free;              /* counted this far without a limit to check */
} js_t;

static int js_fail_name(js_t *j)
{
    bw_body_fail(j->bp->res, j->bp->pool,
                 "JSON: argument names too long (over %d bytes each or %u in all)",
                 BW_JSON_NAME_MAX, BW_JSON_NAMES_TOTAL);
    return 0;
}

/* The name for a scalar here (prefix "." key, or the key alone): its
 * length, and the name written at d with a NUL. */
static size_t name_len(const js_t *j)
{
    return (j->has_pfx ? j->pfx.len + 1 : 0) + (j->has_key ? j->key.len : 0);
}

static void write_name(const js_t *j, char *d)
{
    size_t len = 0;
    if (j->has_pfx) {
        if (j->pfx.len)
            memcpy(d, j->pfx.data, j->pfx.len);
        d[j->pfx.len] = '.';
        len = j->pfx.len + 1;
    }
    if (j->has_key && j->key.len) {
        memcpy(d + len, j->key.data, j->key.len);
        len += j->key.len;
    }
    d[len] = '\0';
}

/* A scalar's argument: its name (built again only when the key or prefix
 * changed; array elements share it) and its value, in one block. */
static int scalar(void *ctx, int type, const char *v, size_t len)
{
    js_t *j = ctx;
    const bw_json_observer_t *ob = j->ob;
    char *d;
    if (ob)
        ob->scalar(ob->ctx, type, v, len);
    if (j->name_ok) {
        d = apr_palloc(j->bp->pool, len + 1);
    } else {
        size_t n = name_len(j);
        if (n > BW_JSON_NAME_MAX || j->names_total + n > BW_JSON_NAMES_TOTAL)
            return js_fail_name(j);
        j->names_total += n;
        d = apr_palloc(j->bp->pool, n + 1 + len + 1);
        write_name(j, d);
        j->name = bw_str_n(d, n);
        j->name_ok = 1;
        d += n + 1;
    }
    if (len)
        memcpy(d, v, len);
    d[len] = '\0';
    return bw_body_emit_arg(j->bp, "JSON", j->name, bw_str_n(d, len)) < 0 ? 0 : 1;
}

static int cb_null(void *ctx)
{
    return scalar(ctx, BW_JSON_NULL, "", 0);
}

static int cb_boolean(void *ctx, int b)
{
    return b ? scalar(ctx, BW_JSON_TRUE, "true", 4) : scalar(ctx, BW_JSON_FALSE, "false", 5);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
    return scalar(ctx, BW_JSON_NUMBER, s, len);
}

static int cb_string(void *ctx, const char *s, size_t len)
{
    return scalar(ctx, BW_JSON_STRING, s, len);
}

static int cb_map_key(void *ctx, const char *s, size_t len)
{
    js_t *j = ctx;
    const bw_json_observer_t *ob = j->ob;
    if (ob)
        ob->key(ob->ctx, s, len);
    /* into a buffer reused for every key: a container keeps a copy of its own */
    j->keybuf.len = 0;
    bw_body_buf_append(j->bp->pool, &j->keybuf, s, len);
    j->key = bw_str_n(len ? j->keybuf.data : "", len);
    j->has_key = 1;
    j->name_ok = 0;
    return 1;
}

/* A container opens: its key joins the prefix and the depth grows. */
static int push(js_t *j, int transparent, int is_array)
{
    frame_t *f;
    int names = !j->events_only;   /* events only: no prefix to build */
    if (!transparent && j->depth + 1 > j->depth_limit) {
        bw_body_fail(j->bp->res, j->bp->pool,
                     "JSON depth limit exceeded (SecRequestBodyJsonDepthLimit %d)",
                     j->depth_limit);
        return 0;
    }
    if (!transparent && names && j->has_pfx && j->pfx.len + 1 + j->key.len > BW_JSON_NAME_MAX)
        return js_fail_name(j);
    f = apr_array_push(j->frames);
    f->transparent = transparent;
    if (j->ob)
        j->ob->start(j->ob->ctx, is_array);
    if (transparent)
        return 1;
    j->depth++;
    /* the reused key buffer is the next key's: the frame keeps a copy */
    f->key = j->key.len && j->key.data == j->keybuf.data
        ? bw_str_n(bw_str_pdup(j->bp->pool, j->key), j->key.len) : j->key;
    f->saved = j->has_pfx ? (long)j->pfx.len : -1;
    if (names && j->has_pfx)
        bw_body_buf_append(j->bp->pool, &j->pfx, ".", 1);
    if (names)
        bw_body_buf_append(j->bp->pool, &j->pfx, j->key.data, j->key.len);
    j->has_pfx = 1;
    j->name_ok = 0;
    return 1;
}

static int cb_start_map(void *ctx)
{
    js_t *j = ctx;
    return push(j, !j->has_key && !j->has_pfx, 0);
}

static int cb_start_array(void *ctx)
{
    js_t *j = ctx;
    if (!j->has_key && !j->has_pfx) {
        j->key = bw_str_n("array", 5);
        j->has_key = 1;
    }
    return push(j, 0, 1);
}

/* A container closes: back to the prefix before it, and its own key is
 * the current key again (so later array elements keep their name). */
static int end_container(js_t *j, int is_array)
{
    frame_t *f;
    if (j->ob)
        j->ob->end(j->ob->ctx, is_array);
    if (j->frames->nelts == 0)
        return 1;
    f = &APR_ARRAY_IDX(j->frames, --j->frames->nelts, frame_t);
    if (f->transparent)
        return 1;
    j->depth--;
    j->has_pfx = f->saved >= 0;
    j->pfx.len = f->saved >= 0 ? (size_t)f->saved : 0;
    j->key = f->key;
    j->has_key = 1;
    j->name_ok = 0;
    return 1;
}

static int cb_end_map(void *ctx)
{
    return end_container(ctx, 0);
}

static int cb_end_array(void *ctx)
{
    return end_container(ctx, 1);
}

static const bw_jp_events_t js_events = {
    cb_null, cb_boolean, cb_number, cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array
};

/* Events only (no add_arg: the sink wants the observer's events, the
 * arguments' number, or both): no names are built. A scalar is its event
 * and at most a count, a key only says there is one (what push reads of
 * it, for the depth): one callback table each way, so that neither tests
 * the other's case once per value and key. */
static inline int eo_scalar(js_t *j, int type, const char *v, size_t len)
{
    const bw_json_observer_t *ob = j->ob;
    if (ob)
        ob->scalar(ob->ctx, type, v, len);
    if (!j->count)
        return 1;
    if (j->bp->nargs < j->count_free) {     /* one add, the usual case */
        j->bp->nargs++;
        (*j->bp->sink->arg_count)++;
        return 1;
    }
    return bw_body_emit_arg(j->bp, "JSON", bw_str_n("", 0), bw_str_n("", 0)) == 0;
}

static int eo_null(void *ctx)
{
    return eo_scalar(ctx, BW_JSON_NULL, "", 0);
}

static int eo_boolean(void *ctx, int b)
{
    return b ? eo_scalar(ctx, BW_JSON_TRUE, "true", 4) : eo_scalar(ctx, BW_JSON_FALSE, "false", 5);
}

static int eo_number(void *ctx, const char *s, size_t len)
{
    return eo_scalar(ctx, BW_JSON_NUMBER, s, len);
}

static int eo_string(void *ctx, const char *s, size_t len)
{
    return eo_scalar(ctx, BW_JSON_STRING, s, len);
}

static int eo_map_key(void *ctx, const char *s, size_t len)
{
    js_t *j = ctx;
    const bw_json_observer_t *ob = j->ob;
    j->has_key = 1;     /* its bytes are not kept: without names nothing reads them */
    if (ob)
        ob->key(ob->ctx, s, len);
    return 1;
}

static const bw_jp_events_t eo_events = {
    eo_null, eo_boolean, eo_number, eo_string,
    cb_start_map, eo_map_key, cb_end_map, cb_start_array, cb_end_array
};

/* The parser's own reason, unless one of our callbacks stopped it, in
 * which case the reason is already recorded. */
static int js_status(js_t *j, int rc)
{
    if (rc == 0)
        return 0;
    if (j->bp->res->error)
        return -1;
    bw_body_fail(j->bp->res, j->bp->pool, "JSON parsing error: %s", bw_jp_error(j->jp));
    return -1;
}

static int js_feed(bw_body_parser_t *bp, const char *data, size_t len)
{
    js_t *j = bp->impl;
    j->total += (apr_off_t)len;
    return js_status(j, bw_jp_feed(j->jp, data, len));
}

static int js_finish(bw_body_parser_t *bp)
{
    js_t *j = bp->impl;
    /* An empty body is no document, and no error either (as multipart). */
    if (!bp->res->error && j->total > 0)
        return js_status(j, bw_jp_finish(j->jp));
    return 0;
}

static const bw_body_ops_t js_ops = { "JSON", js_feed, js_finish };

bw_body_parser_t *bw_body_json_create(apr_pool_t *pool, const bw_body_limits_t *limits,
                                      const bw_body_sink_t *sink, bw_body_result_t *res)
{
    js_t *j = apr_pcalloc(pool, sizeof(*j));
    j->bp = bw_body_parser_new(pool, &js_ops, limits, sink, res, j);
    j->frames = apr_array_make(pool, 16, sizeof(frame_t));
    j->depth_limit = limits && limits->json_depth > 0 ? limits->json_depth
                                                      : BW_JSON_DEFAULT_DEPTH;
    j->ob = sink ? sink->json : NULL;
    j->count = sink && !sink->add_arg && sink->arg_count;
    if (j->count) {
        /* below both limits, bw_body_emit_arg would only count: its checks
         * (and their messages) are left for the argument that reaches one */
        j->count_free = sink->arg_room;
        if (limits && limits->args_limit > 0 && limits->args_limit < j->count_free)
            j->count_free = limits->args_limit;
    }
    j->events_only = sink && !sink->add_arg && (j->ob || j->count);
    j->jp = bw_jp_create(pool, j->events_only ? &eo_events : &js_events, j);
    return j->bp;
}
