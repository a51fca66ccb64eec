/*
 * libFuzzer target for the MULTIPART body processor. Input: a Content-Type
 * line, then the body. Each input is parsed twice, whole and in chunks of
 * sizes derived from the input, and the two transcripts (arguments, files,
 * part headers, flags, error) must be identical: a boundary split across
 * chunks must never change the answer. Odd-length bodies store their files
 * in a private directory; the sink removes them, and a file left behind
 * after a run (an error path that forgot its upload) aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <apr_general.h>
#include "body/bw_body.h"

typedef struct {
    apr_pool_t *pool;
    char *text;
    size_t len, cap;
} tr_t;

static apr_pool_t *root;
static char upload_dir[] = "/tmp/bw-fuzz-mp-XXXXXX";

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    apr_initialize();
    apr_pool_create(&root, NULL);
    if (mkdtemp(upload_dir) == NULL)
        abort();
    return 0;
}

static void tr_add(tr_t *t, const char *tag, bw_str_t a, bw_str_t b)
{
    size_t need = t->len + strlen(tag) + a.len + b.len + 4;
    if (need > t->cap) {
        char *n = apr_palloc(t->pool, need * 2);
        if (t->len)
            memcpy(n, t->text, t->len);
        t->text = n;
        t->cap = need * 2;
    }
    t->len += (size_t)sprintf(t->text + t->len, "%s|", tag);
    if (a.len)
        memcpy(t->text + t->len, a.data, a.len);
    t->len += a.len;
    t->text[t->len++] = '|';
    if (b.len)
        memcpy(t->text + t->len, b.data, b.len);
    t->len += b.len;
    t->text[t->len++] = '\n';
}

static int on_arg(void *ctx, bw_str_t name, bw_str_t value)
{
    tr_add(ctx, "arg", name, value);
    return 0;
}

static int on_header(void *ctx, bw_str_t part, bw_str_t header)
{
    tr_add(ctx, "hdr", part, header);
    return 0;
}

static int on_file(void *ctx, const bw_body_file_t *f)
{
    tr_t *t = ctx;
    char size[32];
    sprintf(size, "%ld", (long)f->size);
    tr_add(t, "file", f->field_name, f->file_name);
    tr_add(t, "file", f->content_type, bw_str_make(size));
    if (f->tmp_name && unlink(f->tmp_name) != 0)
        abort();
    return 0;
}

static void run(apr_pool_t *pool, const char *ct, bw_str_t body, int chunked, tr_t *t)
{
    bw_body_limits_t lim = { 64, 0, 3, NULL, 0600, '&' };
    bw_body_sink_t sink = { t, on_arg, on_file, on_header };
    bw_body_result_t res;
    bw_body_parser_t *bp;
    uint32_t x = 2166136261u;
    size_t off = 0, i;
    char flags[64];
    if (body.len % 2)
        lim.upload_dir = upload_dir;
    for (i = 0; i < body.len; i++)
        x = (x ^ (uint8_t)body.data[i]) * 16777619u;
    memset(&res, 0, sizeof(res));
    bp = bw_body_multipart_create(pool, ct, &lim, &sink, &res);
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
    sprintf(flags, "%d%d%d%d%d%d%d%d%d%d%d%d%d %d", res.mp.boundary_quoted,
            res.mp.boundary_whitespace, res.mp.data_before, res.mp.data_after,
            res.mp.header_folding, res.mp.lf_line, res.mp.missing_semicolon,
            res.mp.invalid_quoting, res.mp.invalid_part, res.mp.invalid_header_folding,
            res.mp.file_limit_exceeded, res.mp.unmatched_boundary, res.mp.crlf_lf_lines,
            res.mp_strict_error);
    tr_add(t, "result", bw_str_make(flags), bw_str_make(res.error ? res.error_msg : "-"));
}

static void check_no_leftover_upload(void)
{
    DIR *d = opendir(upload_dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            fprintf(stderr, "upload file left behind: %s\n", e->d_name);
            abort();
        }
    closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    apr_pool_t *pool;
    tr_t a, b;
    char *ct;
    bw_str_t body;
    if (nl == NULL || memchr(data, '\0', (size_t)(nl - data)) != NULL)
        return 0;
    apr_pool_create(&pool, root);
    ct = apr_pstrndup(pool, (const char *)data, (size_t)(nl - data));
    body = bw_str_n((const char *)nl + 1, size - (size_t)(nl - data) - 1);
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.pool = b.pool = pool;
    run(pool, ct, body, 0, &a);
    run(pool, ct, body, 1, &b);
    if (a.len != b.len || memcmp(a.text, b.text, a.len) != 0) {
        fprintf(stderr, "whole:\n%.*s\nchunked:\n%.*s\n", (int)a.len, a.text, (int)b.len, b.text);
        abort();
    }
    apr_pool_destroy(pool);
    check_no_leftover_upload();
    return 0;
}
