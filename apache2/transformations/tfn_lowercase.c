/*
 * lowercase
 *
 * Description: converts ASCII A-Z to a-z (the C locale, which is all
 *   ModSecurity's tolower() does under Apache); other bytes are untouched.
 * Example: "SeLeCt\xC9" -> "select\xC9"
 */
#include "tfn_internal.h"

static int lowercase(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                     bw_str_t *out)
{
    return tfn_flip_case(pool, in, out, tfn_v_upper);
}

/* Triggers: the bytes it rewrites, each on its own. */
#define LOWERCASE_TRIGGERS(k) BW_BS_RANGE(k, 'A', 'Z')

/* The output's bytes: exactly the input's with A-Z as a-z. */
const bw_tfn_def_t bw_tfn_lowercase = TFN_DEF_BYTES("lowercase", lowercase,
                                                    LOWERCASE_TRIGGERS, bw_byteset_lower);
