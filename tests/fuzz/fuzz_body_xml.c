/*
 * libFuzzer target for the XML body processor and its XPath evaluation.
 * Each input is parsed whole and in chunks of sizes derived from the
 * input; whether it is accepted must not depend on the split. Accepted
 * documents are walked with the XPath expressions CRS uses (the root's text
 * and every attribute).
 * The document and the parser context are freed by the pool, so LeakSanitizer
 * checks the cleanups too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include <libxml/parser.h>
#include "body/bw_body.h"

static apr_pool_t *root;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    apr_initialize();
    xmlInitParser();
    apr_pool_create(&root, NULL);
    return 0;
}

static int parse(apr_pool_t *pool, bw_str_t body, int chunked, bw_body_result_t *res)
{
    bw_body_limits_t lim = { 64, 1000, 0, NULL, 0, '&' };
    bw_body_parser_t *bp;
    uint32_t x = 2166136261u;
    size_t off = 0, i;
    for (i = 0; i < body.len; i++)
        x = (x ^ (uint8_t)body.data[i]) * 16777619u;
    memset(res, 0, sizeof(*res));
    bp = bw_body_xml_create(pool, &lim, NULL, res);
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
    return bw_body_finish(bp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const exprs[] = { "/*", "//@*" };
    apr_pool_t *pool;
    bw_body_result_t a, b;
    bw_str_t body = bw_str_n((const char *)data, size);
    size_t i;
    apr_pool_create(&pool, root);
    parse(pool, body, 0, &a);
    parse(pool, body, 1, &b);
    if (a.error != b.error || (a.xml_doc == NULL) != (b.xml_doc == NULL)) {
        fprintf(stderr, "whole: %s\nchunked: %s\n", a.error ? a.error_msg : "ok",
                b.error ? b.error_msg : "ok");
        abort();
    }
    for (i = 0; a.xml_doc && i < sizeof(exprs) / sizeof(exprs[0]); i++) {
        apr_array_header_t *out = apr_array_make(pool, 4, sizeof(bw_kv_t));
        char *err = NULL;
        if (bw_body_xml_xpath(pool, a.xml_doc, exprs[i], out, &err) != 0) {
            fprintf(stderr, "xpath %s: %s\n", exprs[i], err ? err : "?");
            abort();
        }
    }
    apr_pool_destroy(pool);
    return 0;
}
