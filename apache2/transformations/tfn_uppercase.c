/*
 * uppercase
 *
 * Description: converts ASCII a-z to A-Z (C locale); other bytes are
 *   untouched.
 * Example: "SeLeCt\xE9" -> "SELECT\xE9"
 */
#include "tfn_internal.h"

static int uppercase(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                     bw_str_t *out)
{
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, in.len);
    for (i = 0; i < in.len; i++)
        tfn_out_byte(&o, tfn_upper((unsigned char)in.data[i]));
    return tfn_out_finish(&o, out);
}

/* Triggers: the bytes it rewrites, each on its own. */
#define UPPERCASE_TRIGGERS(k) BW_BS_RANGE(k, 'a', 'z')

const bw_tfn_def_t bw_tfn_uppercase = TFN_DEF("uppercase", uppercase,
                                              UPPERCASE_TRIGGERS);
