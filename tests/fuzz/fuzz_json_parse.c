/*
 * libFuzzer target: Bulwark's JSON parser against yajl 2.1, its oracle
 * (tests/unit/json_oracle.h). Each input is a document fed to both whole
 * and in pieces whose sizes come from its first three bytes; the events
 * and the outcome, message included, must be equal.
 */
#include <stdint.h>
#include <stdlib.h>
#include <apr_general.h>
#include "../unit/json_oracle.h"

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

static void check(const uint8_t *doc, size_t n, const size_t *pieces, size_t npieces)
{
    jo_text_t a = { 0 }, b = { 0 };
    apr_pool_t *p;
    apr_pool_create(&p, root);
    if (!jo_compare(p, doc, n, pieces, npieces, &a, &b)) {
        fprintf(stderr, "yajl:\n%s\nbulwark:\n%s\n", a.data, b.data);
        abort();
    }
    apr_pool_destroy(p);
    free(a.data);
    free(b.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pieces[3];
    if (size < 3)
        return 0;
    pieces[0] = 1 + data[0] % 16;
    pieces[1] = 1 + data[1] % 4;
    pieces[2] = 1 + data[2];
    check(data + 3, size - 3, NULL, 0);
    check(data + 3, size - 3, pieces, 3);
    return 0;
}
