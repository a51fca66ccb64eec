/*
 * removeNulls
 *
 * Description: removes every NUL (0x00) byte.
 * Example: "a\x00b\x00\x00c" -> "abc"
 */
#include "tfn_internal.h"

TFN_PRED(nul_bytes)
{
    return tfn_v_eq(v, 0);
}

static int is_nul(unsigned char c)
{
    return c == 0;
}

static int remove_nulls(const bw_tfn_env_t *env, apr_pool_t *pool,
                        bw_str_t in, bw_str_t *out)
{
    return tfn_remove_bytes(pool, in, out, nul_bytes, is_nul);
}

/* Triggers: the byte it removes. */
#define NUL_TRIGGERS(k) BW_BS_BYTE(k, 0)

const bw_tfn_def_t bw_tfn_remove_nulls = TFN_DEF("removeNulls", remove_nulls,
                                                 NUL_TRIGGERS);
