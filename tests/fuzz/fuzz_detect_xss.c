/*
 * libFuzzer target for the XSS detector (apache2/detect/bw_xss.c,
 * bw_xss_check.c). Checks, beyond "no crash, no read past the value"
 * (ASan/UBSan): the construct reported lies inside the value, the context
 * and reason are known, the verdict is deterministic, and the fast path
 * changes nothing: bw_xss_detect_full() (no fast path) gives the same
 * verdict, construct, context and reason.
 * Build: clang -g -O1 -fsanitize=fuzzer,address,undefined -Iapache2 \
 *   $(apr-1-config --includes --cppflags) tests/fuzz/fuzz_detect_xss.c \
 *   apache2/detect/bw_xss.c apache2/detect/bw_xss_check.c -o fuzz_detect_xss
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "detect/bw_xss.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bw_xss_result_t r, f;
    bw_str_t v = bw_str_n((const char *)data, size);
    int m;

    memset(&r, 0x5a, sizeof(r));
    m = bw_xss_detect(v, &r);
    if (m != 0 && m != 1)
        abort();
    if (m == 1) {
        if (r.off > size || r.len > size - r.off)
            abort();
        if (strcmp(bw_xss_context_name(r.context), "none") == 0
            || strcmp(bw_xss_reason_name(r.reason), "none") == 0)
            abort();
    }
    if (bw_xss_detect(v, NULL) != m)
        abort();
    /* the fast path only ever skips work: without it, the same answer */
    memset(&f, 0x5a, sizeof(f));
    if (bw_xss_detect_full(v, &f) != m)
        abort();
    if (m == 1) {
        if (r.off != f.off || r.len != f.len || r.context != f.context || r.reason != f.reason)
            abort();
    }
    return 0;
}
