/*
 * removeWhitespace
 *
 * Description: removes every white-space byte: space, \t, \n, \v, \f, \r
 *   and the non-breaking space 0xA0.
 * Example: "java\tscript :\xA0x" -> "javascript:x"
 */
#include "tfn_internal.h"

static int remove_whitespace(const bw_tfn_env_t *env, apr_pool_t *pool,
                             bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, in.len);
    for (i = 0; i < in.len; i++) {
        unsigned char c = (unsigned char)in.data[i];
        if (!tfn_isspace(c) && c != 0xA0)
            tfn_out_byte(&o, c);
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: the bytes it removes, each on its own. */
#define REMOVE_WS_TRIGGERS(k) (TFN_SPACE_BYTES(k) | BW_BS_BYTE(k, 0xA0))

const bw_tfn_def_t bw_tfn_remove_whitespace =
    TFN_DEF("removeWhitespace", remove_whitespace, REMOVE_WS_TRIGGERS);
