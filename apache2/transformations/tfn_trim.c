/*
 * trimLeft, trimRight, trim
 *
 * Description: remove white space (space, \t, \n, \v, \f, \r — not 0xA0,
 *   as in ModSecurity) from the start, the end, or both ends. The result is
 *   always a sub-range of the input, so nothing is allocated.
 * Example: trim " \t a b \n" -> "a b"; trimLeft -> "a b \n";
 *          trimRight -> " \t a b"
 */
#include "tfn_internal.h"

static size_t leading_space(bw_str_t s)
{
    size_t i = 0;
    while (i < s.len && tfn_isspace((unsigned char)s.data[i]))
        i++;
    return i;
}

static size_t trailing_space(bw_str_t s)
{
    size_t n = 0;
    while (n < s.len && tfn_isspace((unsigned char)s.data[s.len - 1 - n]))
        n++;
    return n;
}

/* Keep in[skip, len - cut); ret 1 when anything went. */
static int keep(bw_str_t in, size_t skip, size_t cut, bw_str_t *out)
{
    *out = bw_str_n(in.data + skip, in.len - skip - cut);
    return skip + cut != 0;
}

static int trim_left(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                     bw_str_t *out)
{
    return keep(in, leading_space(in), 0, out);
}

static int trim_right(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                      bw_str_t *out)
{
    return keep(in, 0, trailing_space(in), out);
}

static int trim(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                bw_str_t *out)
{
    size_t skip = leading_space(in);
    /* An all-space input is wholly consumed by skip. */
    return keep(in, skip, trailing_space(bw_str_n(in.data + skip,
                                                  in.len - skip)), out);
}

/* Triggers: the white space they remove (not 0xA0); any one of those bytes
 * alone is removed. */
const bw_tfn_def_t bw_tfn_trim = TFN_DEF("trim", trim, TFN_SPACE_BYTES);
const bw_tfn_def_t bw_tfn_trim_left = TFN_DEF("trimLeft", trim_left,
                                              TFN_SPACE_BYTES);
const bw_tfn_def_t bw_tfn_trim_right = TFN_DEF("trimRight", trim_right,
                                               TFN_SPACE_BYTES);
