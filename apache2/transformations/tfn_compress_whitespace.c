/*
 * compressWhitespace
 *
 * Description: replaces each run of white space (space, \t, \n, \v, \f, \r
 *   and the non-breaking space 0xA0) with a single space.
 * Example: "a \t\n b\xA0c" -> "a b c"
 */
#include "tfn_internal.h"

static int compress_whitespace(const bw_tfn_env_t *env, apr_pool_t *pool,
                               bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    int in_run = 0;
    size_t i;

    tfn_out_init(&o, pool, in, in.len);
    for (i = 0; i < in.len; i++) {
        unsigned char c = (unsigned char)in.data[i];
        if (tfn_isspace(c) || c == 0xA0) {
            if (!in_run)
                tfn_out_byte(&o, ' ');
            in_run = 1;
        } else {
            in_run = 0;
            tfn_out_byte(&o, c);
        }
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: the white-space bytes. All but the space change on their own;
 * a space changes an input only next to other white space ("a  b"). */
#define COMPRESS_TRIGGERS(k) (TFN_SPACE_BYTES(k) | BW_BS_BYTE(k, 0xA0))

const bw_tfn_def_t bw_tfn_compress_whitespace =
    TFN_DEF("compressWhitespace", compress_whitespace, COMPRESS_TRIGGERS);
