/*
 * length
 *
 * Description: replaces the input with its length in bytes, as decimal
 *   text (NUL bytes count like any other).
 * Example: "ABCDE" -> "5"; "" -> "0"
 */
#include <stdio.h>
#include "tfn_internal.h"

static int length(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                  bw_str_t *out)
{
    char digits[32];
    int n = snprintf(digits, sizeof(digits), "%zu", in.len);
    tfn_out_t o;

    tfn_out_init(&o, pool, in, (size_t)n);
    tfn_out_mem(&o, digits, (size_t)n);
    return tfn_out_finish(&o, out);
}

/* No trigger set: only one-digit inputs such as "1" come back unchanged. */
const bw_tfn_def_t bw_tfn_length = TFN_DEF_ALWAYS("length", length);
