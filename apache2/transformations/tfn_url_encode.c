/*
 * urlEncode
 *
 * Description: URL-encodes the input as ModSecurity does: ASCII letters,
 *   digits and '*' stay, a space becomes '+', every other byte becomes %hh
 *   (lower-case hex).
 * Example: "a b/c*" -> "a+b%2fc*"
 */
#include "tfn_internal.h"

static int url_encode(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                      bw_str_t *out)
{
    static const char hex[] = "0123456789abcdef";
    tfn_out_t o;
    size_t i;

    tfn_out_init(&o, pool, in, in.len * 3);
    for (i = 0; i < in.len; i++) {
        unsigned char c = (unsigned char)in.data[i];
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')
            || (c >= 'A' && c <= 'Z') || c == '*') {
            tfn_out_byte(&o, c);
        } else if (c == ' ') {
            tfn_out_byte(&o, '+');
        } else {
            tfn_out_byte(&o, '%');
            tfn_out_byte(&o, (unsigned char)hex[c >> 4]);
            tfn_out_byte(&o, (unsigned char)hex[c & 0x0F]);
        }
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: every byte except the ones kept (ASCII letters, digits, '*'),
 * each of which changes on its own: an identifier or a number comes back
 * unchanged without a call. */
#define URL_ENCODE_TRIGGERS(k)                                               \
    (~(BW_BS_RANGE(k, '0', '9') | BW_BS_RANGE(k, 'A', 'Z')                   \
       | BW_BS_RANGE(k, 'a', 'z') | BW_BS_BYTE(k, '*')))

const bw_tfn_def_t bw_tfn_url_encode = TFN_DEF("urlEncode", url_encode,
                                               URL_ENCODE_TRIGGERS);
