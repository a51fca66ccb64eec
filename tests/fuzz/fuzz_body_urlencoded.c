/*
 * libFuzzer target for the URLENCODED body processor. The first byte picks
 * the argument separator (the config can set any), the rest is the body.
 * Besides the sanitizers, it checks what must always hold: no name or value
 * longer than the input, and no more arguments than separators + 1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "body/bw_body.h"

typedef struct {
    size_t max_len;
    long nargs;
} fz_t;

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

static int on_arg(void *ctx, bw_str_t name, bw_str_t value)
{
    fz_t *f = ctx;
    if (name.len > f->max_len || value.len > f->max_len)
        abort();
    f->nargs++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool;
    bw_body_result_t res;
    bw_body_sink_t sink = { NULL, on_arg, NULL, NULL };
    fz_t f = { 0, 0 };
    char sep;
    size_t i;
    long seps = 0;
    if (size == 0)
        return 0;
    sep = (char)(data[0] % 3 == 0 ? '&' : data[0] % 3 == 1 ? ';' : data[0]);
    apr_pool_create(&pool, root);
    f.max_len = size - 1;
    sink.ctx = &f;
    memset(&res, 0, sizeof(res));
    bw_body_urlencoded(pool, bw_str_n((const char *)data + 1, size - 1), sep, &sink, &res);
    for (i = 1; i < size; i++)
        seps += data[i] == (uint8_t)sep;
    if (f.nargs > seps + 1 || res.error)
        abort();
    apr_pool_destroy(pool);
    return 0;
}
