/*
 * removeWhitespace
 *
 * Description: removes every white-space byte: space, \t, \n, \v, \f, \r
 *   and the non-breaking space 0xA0.
 * Example: "java\tscript :\xA0x" -> "javascript:x"
 */
#include "tfn_internal.h"

TFN_PRED(space_bytes)
{
    return tfn_v_or(tfn_v_or(tfn_v_range(v, '\t', '\r'), tfn_v_eq(v, ' ')),
                    tfn_v_eq(v, 0xA0));
}

static int is_space(unsigned char c)
{
    return tfn_isspace(c) || c == 0xA0;
}

static int remove_whitespace(const bw_tfn_env_t *env, apr_pool_t *pool,
                             bw_str_t in, bw_str_t *out)
{
    return tfn_remove_bytes(pool, in, out, space_bytes, is_space);
}

/* Triggers: the bytes it removes, each on its own. */
#define REMOVE_WS_TRIGGERS(k) (TFN_SPACE_BYTES(k) | BW_BS_BYTE(k, 0xA0))

const bw_tfn_def_t bw_tfn_remove_whitespace =
    TFN_DEF("removeWhitespace", remove_whitespace, REMOVE_WS_TRIGGERS);
