/*
 * sha1
 *
 * Description: replaces the input with its SHA-1 digest in raw binary form
 *   (20 bytes), as ModSecurity does; follow with t:hexEncode to print it.
 * Example: "abc" -> "\xa9\x99\x3e\x36\x47\x06\x81\x6a\xba\x3e\x25\x71\x78\x50\xc2\x6c\x9c\xd0\xd8\x9d"
 */
#include <limits.h>
#include <apr_sha1.h>
#include "tfn_internal.h"

static int sha1(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                bw_str_t *out)
{
    unsigned char digest[APR_SHA1_DIGESTSIZE];
    const unsigned char *p = (const unsigned char *)in.data;
    size_t left = in.len;
    apr_sha1_ctx_t ctx;
    tfn_out_t o;

    apr_sha1_init(&ctx);
    /* APR takes an unsigned int length: feed larger inputs in slices. */
    while (left > 0) {
        unsigned int n = left > UINT_MAX ? UINT_MAX : (unsigned int)left;
        apr_sha1_update_binary(&ctx, p, n);
        p += n;
        left -= n;
    }
    apr_sha1_final(digest, &ctx);
    tfn_out_init(&o, pool, in, sizeof(digest));
    tfn_out_mem(&o, (const char *)digest, sizeof(digest));
    return tfn_out_finish(&o, out);
}

/* No trigger set: the digest replaces every input, the empty one too. */
const bw_tfn_def_t bw_tfn_sha1 = TFN_DEF_ALWAYS("sha1", sha1);
