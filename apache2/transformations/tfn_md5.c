/*
 * md5
 *
 * Description: replaces the input with its MD5 digest in raw binary form
 *   (16 bytes), as ModSecurity does; follow with t:hexEncode to print it.
 * Example: "" -> "\xd4\x1d\x8c\xd9\x8f\x00\xb2\x04\xe9\x80\x09\x98\xec\xf8\x42\x7e"
 */
#include <apr_md5.h>
#include "tfn_internal.h"

static int md5(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
               bw_str_t *out)
{
    unsigned char digest[APR_MD5_DIGESTSIZE];
    tfn_out_t o;

    apr_md5(digest, in.len ? in.data : "", in.len);
    tfn_out_init(&o, pool, in, sizeof(digest));
    tfn_out_mem(&o, (const char *)digest, sizeof(digest));
    return tfn_out_finish(&o, out);
}

/* No trigger set: the digest replaces every input, the empty one too. */
const bw_tfn_def_t bw_tfn_md5 = TFN_DEF_ALWAYS("md5", md5);
