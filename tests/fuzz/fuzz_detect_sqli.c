/*
 * libFuzzer target for the SQL-injection detector (apache2/detect/bw_sqli.c).
 * Checks, beyond "no crash, no read past the value" (ASan/UBSan):
 * the result is well formed (a known context and evidence, a non-empty
 * fingerprint within its bound), the verdict is deterministic, and the
 * fast path changes nothing: bw_sqli_detect_full() (no fast path) gives
 * the same verdict, fingerprint, context and evidence.
 * Build: clang -g -O1 -fsanitize=fuzzer,address,undefined -Iapache2 \
 *   $(apr-1-config --includes --cppflags) tests/fuzz/fuzz_detect_sqli.c \
 *   apache2/detect/bw_sqli.c apache2/detect/bw_sqli_ctx.c apache2/detect/bw_sqli_fast.c \
 *   apache2/detect/bw_sqli_lex.c -o fuzz_detect_sqli
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "detect/bw_sqli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bw_sqli_result_t r, f;
    bw_str_t v = bw_str_n((const char *)data, size);
    int m;

    memset(&r, 0x5a, sizeof(r));
    m = bw_sqli_detect(v, &r);
    if (m != 0 && m != 1)
        abort();
    if (m == 1) {
        size_t n = strnlen(r.fingerprint, sizeof(r.fingerprint));
        if (n == 0 || n > BW_SQLI_FP_MAX)
            abort();
        if (r.context < BW_SQLI_CTX_ASIS || r.context > BW_SQLI_CTX_GLUED)
            abort();
        if (strcmp(bw_sqli_evidence_name(r.evidence), "none") == 0)
            abort();
    }
    if (bw_sqli_detect(v, NULL) != m)
        abort();
    /* the fast path only ever skips work: without it, the same answer */
    memset(&f, 0x5a, sizeof(f));
    if (bw_sqli_detect_full(v, &f) != m)
        abort();
    if (m == 1) {
        if (strcmp(r.fingerprint, f.fingerprint) != 0 || r.context != f.context
            || r.evidence != f.evidence)
            abort();
    }
    return 0;
}
