/*
 * removeNulls
 *
 * Description: removes every NUL (0x00) byte.
 * Example: "a\x00b\x00\x00c" -> "abc"
 */
#include "tfn_internal.h"

static int remove_nulls(const bw_tfn_env_t *env, apr_pool_t *pool,
                        bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, in.len);
    for (i = 0; i < in.len; i++)
        if (in.data[i] != '\0')
            tfn_out_byte(&o, (unsigned char)in.data[i]);
    return tfn_out_finish(&o, out);
}

/* Triggers: the byte it removes. */
#define NUL_TRIGGERS(k) BW_BS_BYTE(k, 0)

const bw_tfn_def_t bw_tfn_remove_nulls = TFN_DEF("removeNulls", remove_nulls,
                                                 NUL_TRIGGERS);
