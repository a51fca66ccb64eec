/*
 * compressWhitespace
 *
 * Description: replaces each run of white space (space, \t, \n, \v, \f, \r
 *   and the non-breaking space 0xA0) with a single space.
 * Example: "a \t\n b\xA0c" -> "a b c"
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

/* Runs without white space are copied whole (nothing is written while the
 * output is still the input); each run of white space becomes one ' ',
 * which leaves a lone space as it was. */
static int compress_whitespace(const bw_tfn_env_t *env, apr_pool_t *pool,
                               bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i = tfn_find(in.data, 0, in.len, space_bytes);

    if (i == in.len) {
        *out = in;
        return 0;
    }
    tfn_out_init_at(&o, pool, in, in.len, i);
    while (i < in.len) {
        while (i < in.len && is_space((unsigned char)in.data[i]))
            i++;
        tfn_out_byte(&o, ' ');
        i = tfn_out_run_until(&o, i, space_bytes);
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: the white-space bytes. All but the space change on their own;
 * a space changes an input only next to other white space ("a  b"). */
#define COMPRESS_TRIGGERS(k) (TFN_SPACE_BYTES(k) | BW_BS_BYTE(k, 0xA0))

const bw_tfn_def_t bw_tfn_compress_whitespace =
    TFN_DEF("compressWhitespace", compress_whitespace, COMPRESS_TRIGGERS);
