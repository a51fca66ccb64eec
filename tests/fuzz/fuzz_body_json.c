/*
 * libFuzzer target for the JSON body processor. Each input is parsed
 * twice, whole and in chunks of sizes derived from the input, and the two
 * transcripts (every argument, then the error) must be identical. A small
 * depth limit keeps the depth error path busy.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "body/bw_body.h"

typedef struct {
    apr_pool_t *pool;
    char *text;
    size_t len, cap;
} tr_t;

static apr_pool_t *root;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    apr_initialize();
    apr_pool_create(&root, NULL);
    return 0;
}

static void tr_add(tr_t *t, bw_str_t a, bw_str_t b)
{
    size_t need = t->len + a.len + b.len + 2;
    if (need > t->cap) {
        char *n = apr_palloc(t->pool, need * 2);
        if (t->len)
            memcpy(n, t->text, t->len);
        t->text = n;
        t->cap = need * 2;
    }
    if (a.len)
        memcpy(t->text + t->len, a.data, a.len);
    t->len += a.len;
    t->text[t->len++] = '=';
    if (b.len)
        memcpy(t->text + t->len, b.data, b.len);
    t->len += b.len;
    t->text[t->len++] = '\n';
}

static int on_arg(void *ctx, bw_str_t name, bw_str_t value)
{
    tr_add(ctx, name, value);
    return 0;
}

static void run(apr_pool_t *pool, bw_str_t body, int chunked, tr_t *t)
{
    bw_body_limits_t lim = { 16, 5000, 0, NULL, 0, '&' };
    bw_body_sink_t sink = { t, on_arg, NULL, NULL };
    bw_body_result_t res;
    bw_body_parser_t *bp;
    uint32_t x = 2166136261u;
    size_t off = 0, i;
    for (i = 0; i < body.len; i++)
        x = (x ^ (uint8_t)body.data[i]) * 16777619u;
    memset(&res, 0, sizeof(res));
    bp = bw_body_json_create(pool, &lim, &sink, &res);
    while (off < body.len) {
        size_t n = body.len - off;
        if (chunked) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            n = (x & 3) ? 1 + x % 5 : 1 + x % (n + 1);
            n = n > body.len - off ? body.len - off : n;
        }
        bw_body_feed(bp, body.data + off, n);
        off += n;
    }
    bw_body_finish(bp);
    tr_add(t, bw_str_make("error"), bw_str_make(res.error ? res.error_msg : "-"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool;
    tr_t a, b;
    bw_str_t body = bw_str_n((const char *)data, size);
    apr_pool_create(&pool, root);
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.pool = b.pool = pool;
    run(pool, body, 0, &a);
    run(pool, body, 1, &b);
    if (a.len != b.len || memcmp(a.text, b.text, a.len) != 0) {
        fprintf(stderr, "whole:\n%.*s\nchunked:\n%.*s\n", (int)a.len, a.text, (int)b.len, b.text);
        abort();
    }
    apr_pool_destroy(pool);
    return 0;
}
