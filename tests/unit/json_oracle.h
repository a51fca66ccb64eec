/*
 * yajl as the oracle of Bulwark's JSON parser (apache2/body/body_json_parse.c):
 * one document, fed in given pieces to yajl 2.1 (default flags, as
 * mod_security2 uses it) and to bw_jp, each written down as a transcript of
 * its events and its outcome. The two transcripts must be equal byte for
 * byte. Used by tests/unit/test_json_parse.c and tests/fuzz/fuzz_json_parse.c.
 *
 * A transcript is one record per event, "<tag><length>:<bytes>\n" (tags:
 * s string, k key, n number, b boolean, z null, { } [ ]), then "ok\n" or
 * "error:<message>\n" with yajl's message as body_json.c shows it (its
 * trailing newline and spaces cut).
 */
#ifndef BW_TEST_JSON_ORACLE_H
#define BW_TEST_JSON_ORACLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_pools.h>
#include <yajl/yajl_parse.h>
#include "body/body_json_parse.h"

typedef struct {
    char *data;
    size_t len, cap;
} jo_text_t;

static void jo_put(jo_text_t *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        t->data = realloc(t->data, cap);
        if (!t->data)
            abort();
        t->cap = cap;
    }
    if (n)
        memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

static int jo_event(void *ctx, char tag, const char *s, size_t n)
{
    char head[32];
    int k = snprintf(head, sizeof(head), "%c%zu:", tag, n);
    jo_put(ctx, head, (size_t)k);
    jo_put(ctx, s, n);
    jo_put(ctx, "\n", 1);
    return 1;
}

static void jo_outcome(jo_text_t *t, const char *error, size_t n)
{
    while (error && n && (error[n - 1] == '\n' || error[n - 1] == ' '))
        n--;
    if (!error) {
        jo_put(t, "ok\n", 3);
        return;
    }
    jo_put(t, "error:", 6);
    jo_put(t, error, n);
    jo_put(t, "\n", 1);
}

/* events, either parser */
static int jo_null(void *c) { return jo_event(c, 'z', "", 0); }
static int jo_bool(void *c, int b) { return jo_event(c, 'b', b ? "1" : "0", 1); }
static int jo_start_map(void *c) { return jo_event(c, '{', "", 0); }
static int jo_end_map(void *c) { return jo_event(c, '}', "", 0); }
static int jo_start_array(void *c) { return jo_event(c, '[', "", 0); }
static int jo_end_array(void *c) { return jo_event(c, ']', "", 0); }
static int jo_number(void *c, const char *s, size_t n) { return jo_event(c, 'n', s, n); }
static int jo_string(void *c, const char *s, size_t n) { return jo_event(c, 's', s, n); }
static int jo_key(void *c, const char *s, size_t n) { return jo_event(c, 'k', s, n); }
static int jo_ystring(void *c, const unsigned char *s, size_t n)
{
    return jo_event(c, 's', (const char *)s, n);
}
static int jo_ykey(void *c, const unsigned char *s, size_t n)
{
    return jo_event(c, 'k', (const char *)s, n);
}

/* The next piece's size: pieces[] in turn, 0 or none for the rest. */
static size_t jo_piece(const size_t *pieces, size_t npieces, size_t i, size_t left)
{
    size_t k = npieces ? pieces[i % npieces] : 0;
    return k == 0 || k > left ? left : k;
}

static void jo_yajl(const unsigned char *in, size_t n, const size_t *pieces, size_t npieces,
                    jo_text_t *out)
{
    static const yajl_callbacks cb = {
        jo_null, jo_bool, NULL, NULL, jo_number, jo_ystring,
        jo_start_map, jo_ykey, jo_end_map, jo_start_array, jo_end_array
    };
    yajl_handle h = yajl_alloc(&cb, NULL, out);
    yajl_status st = yajl_status_ok;
    size_t off = 0, i = 0;
    while (off < n && st == yajl_status_ok) {
        size_t k = jo_piece(pieces, npieces, i++, n - off);
        st = yajl_parse(h, in + off, k);
        off += k;
    }
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    if (st == yajl_status_ok) {
        jo_outcome(out, NULL, 0);
    } else {
        unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
        jo_outcome(out, (const char *)msg, strlen((const char *)msg));
        yajl_free_error(h, msg);
    }
    yajl_free(h);
}

static void jo_bulwark(apr_pool_t *pool, const unsigned char *in, size_t n, const size_t *pieces,
                       size_t npieces, jo_text_t *out)
{
    static const bw_jp_events_t ev = {
        jo_null, jo_bool, jo_number, jo_string,
        jo_start_map, jo_key, jo_end_map, jo_start_array, jo_end_array
    };
    bw_jp_t *jp = bw_jp_create(pool, &ev, out);
    int rc = 0;
    size_t off = 0, i = 0;
    while (off < n && rc == 0) {
        size_t k = jo_piece(pieces, npieces, i++, n - off);
        rc = bw_jp_feed(jp, (const char *)in + off, k);
        off += k;
    }
    if (rc == 0)
        rc = bw_jp_finish(jp);
    jo_outcome(out, rc == 0 ? NULL : bw_jp_error(jp), rc == 0 ? 0 : strlen(bw_jp_error(jp)));
}

/* Both transcripts of in for these pieces; 1 when they are equal. The
 * caller frees a->data and b->data. */
static int jo_compare(apr_pool_t *pool, const unsigned char *in, size_t n, const size_t *pieces,
                      size_t npieces, jo_text_t *a, jo_text_t *b)
{
    jo_yajl(in, n, pieces, npieces, a);
    jo_bulwark(pool, in, n, pieces, npieces, b);
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

#endif
