/*
 * replaceNulls
 *
 * Description: replaces every NUL (0x00) byte with a space.
 * Example: "a\x00b" -> "a b"
 */
#include "tfn_internal.h"

static int replace_nulls(const bw_tfn_env_t *env, apr_pool_t *pool,
                         bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, in.len);
    for (i = 0; i < in.len; i++)
        tfn_out_byte(&o, in.data[i] == '\0' ? ' '
                                            : (unsigned char)in.data[i]);
    return tfn_out_finish(&o, out);
}

/* Triggers: the byte it replaces. */
#define NUL_TRIGGERS(k) BW_BS_BYTE(k, 0)

const bw_tfn_def_t bw_tfn_replace_nulls = TFN_DEF("replaceNulls",
                                                  replace_nulls, NUL_TRIGGERS);
