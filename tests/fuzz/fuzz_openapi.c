/*
 * libFuzzer target for the OpenAPI validator (apache2/openapi/). The first
 * byte of an input chooses what the rest is:
 *   even: a description, loaded (it must load or fail with a message, and
 *         a loaded one is asked one request);
 *   odd:  a JSON body, checked against a small description with every
 *         combinator and a recursive $ref, whole and in chunks of sizes
 *         derived from the input: both runs must find the same violations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "openapi/bw_openapi.h"

static apr_pool_t *root;

static const char spec_text[] =
    "openapi: 3.1.0\n"
    "info: {title: fuzz, version: '1'}\n"
    "paths:\n"
    "  /t:\n"
    "    post:\n"
    "      requestBody:\n"
    "        content:\n"
    "          application/json:\n"
    "            schema: {$ref: '#/components/schemas/N'}\n"
    "      responses: {}\n"
    "components:\n"
    "  schemas:\n"
    "    N:\n"
    "      type: object\n"
    "      required: [a]\n"
    "      additionalProperties: {type: integer, minimum: 0}\n"
    "      properties:\n"
    "        a: {type: string, maxLength: 8, pattern: '^[a-z]+$'}\n"
    "        b: {oneOf: [{type: number, multipleOf: 0.5}, {type: string, format: date-time}]}\n"
    "        c: {anyOf: [{type: 'null'}, {type: boolean}], nullable: true}\n"
    "        d: {type: array, maxItems: 3, items: {$ref: '#/components/schemas/N'}}\n"
    "        e: {allOf: [{type: string, format: email}, {minLength: 3}]}\n"
    "        f: {not: {enum: [1, 'x', true]}}\n"
    "        g: {type: string, format: ipv6}\n";

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

/* The description, compiled in the input's pool: its patterns are freed
 * with it (LeakSanitizer does not look into the pools' memory). */
static const bw_oas_t *body_spec(apr_pool_t *p)
{
    char *err = NULL;
    const bw_oas_t *o = bw_oas_load_text(p, "fuzz.yaml", spec_text, sizeof(spec_text) - 1, &err);
    if (!o) {
        fprintf(stderr, "fuzz_openapi: %s\n", err);
        abort();
    }
    return o;
}

static bw_oas_run_t *begin(apr_pool_t *p, const bw_oas_t *oas, const char *uri)
{
    bw_oas_request_t req;
    apr_array_header_t *h = apr_array_make(p, 1, sizeof(bw_kv_t));
    bw_kv_t *ct = apr_array_push(h);
    ct->name = bw_str_make("Content-Type");
    ct->value = bw_str_make("application/json");
    memset(&req, 0, sizeof(req));
    req.method = bw_str_make("POST");
    req.uri = bw_str_make(uri);
    req.headers = h;
    return bw_oas_begin(p, oas, &req, NULL, NULL);
}

/* The violations of one run, one line each. */
static const char *check(apr_pool_t *p, const bw_oas_t *spec, bw_str_t body, int chunked)
{
    bw_oas_run_t *run = begin(p, spec, "/t");
    bw_body_sink_t sink;
    bw_body_result_t res;
    bw_body_limits_t lim;
    bw_body_parser_t *bp;
    const apr_array_header_t *v;
    const char *out = "";
    uint32_t x = 2166136261u;
    size_t off = 0, i;
    int k;
    for (i = 0; i < body.len; i++)
        x = (x ^ (uint8_t)body.data[i]) * 16777619u;
    memset(&sink, 0, sizeof(sink));
    memset(&res, 0, sizeof(res));
    memset(&lim, 0, sizeof(lim));
    lim.json_depth = 64;
    sink.json = bw_oas_body_observer(run);
    bp = bw_body_json_create(p, &lim, &sink, &res);
    while (off < body.len) {
        size_t n = body.len - off;
        if (chunked) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            n = 1 + x % (n < 7 ? n : 7);
        }
        bw_body_feed(bp, body.data + off, n);
        off += n;
    }
    bw_body_finish(bp);
    bw_oas_body_end(run, body.len > 0, res.error ? res.error_msg : NULL);
    v = bw_oas_violations(run);
    for (k = 0; k < v->nelts; k++) {
        const bw_oas_violation_t *e = &((const bw_oas_violation_t *)v->elts)[k];
        out = apr_pstrcat(p, out, e->where, " ", e->reason, " ", e->schema, "\n", NULL);
    }
    return apr_psprintf(p, "%s%ld", out, bw_oas_violation_count(run));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    bw_str_t rest;
    if (size < 1)
        return 0;
    rest = bw_str_n((const char *)data + 1, size - 1);
    apr_pool_create(&p, root);
    if (data[0] & 1) {
        const bw_oas_t *spec = body_spec(p);
        const char *whole = check(p, spec, rest, 0), *chunked = check(p, spec, rest, 1);
        if (strcmp(whole, chunked)) {
            fprintf(stderr, "whole:\n%s\nchunked:\n%s\n", whole, chunked);
            abort();
        }
    } else {
        char *err = NULL;
        bw_oas_t *o = bw_oas_load_text(p, "input.yaml", rest.data, rest.len, &err);
        if (!o && (!err || strncmp(err, "input.yaml: ", 12)))
            abort();
        if (o)
            bw_oas_violation_count(begin(p, o, "/a/b?c=d"));
    }
    apr_pool_destroy(p);
    return 0;
}
