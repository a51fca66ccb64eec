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
    return tfn_flip_case(pool, in, out, tfn_v_lower);
}

/* Triggers: the bytes it rewrites, each on its own. */
#define UPPERCASE_TRIGGERS(k) BW_BS_RANGE(k, 'a', 'z')

const bw_tfn_def_t bw_tfn_uppercase = TFN_DEF("uppercase", uppercase,
                                              UPPERCASE_TRIGGERS);
