/*
 * HMAC-SHA1 and the signatures of the hash engine (see bw_hmac.h).
 * SHA-1 is APR-util's; the HMAC construction around it is RFC 2104's.
 */
#include <string.h>
#include <apr_sha1.h>
#include "base/bw_hmac.h"
#include "base/bw_regex.h"

#define SHA1_BLOCK 64

/* One SHA-1 over pad (the key xor'ed with fill) followed by msg. */
static void sha1_padded(const unsigned char *key, unsigned char fill, const unsigned char *msg,
                        size_t len, unsigned char out[APR_SHA1_DIGESTSIZE])
{
    unsigned char pad[SHA1_BLOCK];
    apr_sha1_ctx_t c;
    int i;
    for (i = 0; i < SHA1_BLOCK; i++)
        pad[i] = key[i] ^ fill;
    apr_sha1_init(&c);
    apr_sha1_update_binary(&c, pad, SHA1_BLOCK);
    /* apr_sha1_update_binary takes an unsigned int: feed long input in parts */
    while (len > 0) {
        unsigned int n = len > 0x40000000u ? 0x40000000u : (unsigned int)len;
        apr_sha1_update_binary(&c, msg, n);
        msg += n;
        len -= n;
    }
    apr_sha1_final(out, &c);
}

void bw_hmac_sha1_hex(bw_str_t key, bw_str_t msg, char out[BW_HMAC_HEX_LEN + 1])
{
    unsigned char k[SHA1_BLOCK], inner[APR_SHA1_DIGESTSIZE], outer[APR_SHA1_DIGESTSIZE];
    memset(k, 0, sizeof(k));
    if (key.len > SHA1_BLOCK) {
        /* a key longer than a block is replaced by its digest (RFC 2104, 2) */
        apr_sha1_ctx_t c;
        apr_sha1_init(&c);
        apr_sha1_update_binary(&c, (const unsigned char *)key.data, (unsigned int)key.len);
        apr_sha1_final(k, &c);
    } else if (key.len) {
        memcpy(k, key.data, key.len);
    }
    sha1_padded(k, 0x36, (const unsigned char *)(msg.len ? msg.data : ""), msg.len, inner);
    sha1_padded(k, 0x5c, inner, sizeof(inner), outer);
    bw_hex_encode(outer, sizeof(outer), out);
}

bw_str_t bw_hash_tx_key(apr_pool_t *p, const bw_hash_conf_t *hc, bw_str_t client,
                        bw_str_t session)
{
    bw_str_t extra, k;
    char *buf;
    if (hc->mode == BW_HASH_REMOTE_IP)
        extra = client;
    else if (hc->mode == BW_HASH_SESSION_ID)
        extra = session.len ? session : client;   /* no session yet: the address */
    else
        return hc->key;
    buf = apr_palloc(p, hc->key.len + extra.len + 1);
    if (hc->key.len)
        memcpy(buf, hc->key.data, hc->key.len);
    if (extra.len)
        memcpy(buf + hc->key.len, extra.data, extra.len);
    buf[hc->key.len + extra.len] = '\0';
    k.data = buf;
    k.len = hc->key.len + extra.len;
    return k;
}

int bw_hash_kind(const char *name)
{
    static const char *const names[BW_HASH_NKINDS] = {
        "HashHref", "HashFormAction", "HashIframeSrc", "HashFrameSrc", "HashLocation"
    };
    int i;
    for (i = 0; i < BW_HASH_NKINDS; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

/* Does s contain the lower-case phrase ph, in any case? */
static int contains_ci(bw_str_t s, bw_str_t ph)
{
    size_t i, j;
    if (ph.len == 0)
        return 1;
    for (i = 0; i + ph.len <= s.len; i++) {
        for (j = 0; j < ph.len; j++) {
            unsigned char c = (unsigned char)s.data[i + j];
            if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != (unsigned char)ph.data[j])
                break;
        }
        if (j == ph.len)
            return 1;
    }
    return 0;
}

int bw_hash_selects(const bw_hash_conf_t *hc, int kind, bw_str_t link, pcre2_match_data *md)
{
    int i, k;
    if (!hc->methods)
        return 0;
    for (i = 0; i < hc->methods->nelts; i++) {
        const bw_hash_method_t *m = &((const bw_hash_method_t *)hc->methods->elts)[i];
        if (m->kind != kind)
            continue;
        if (m->re && bw_regex_match(m->re, link, md) == 1)
            return 1;
        for (k = 0; k < m->nphrases; k++)
            if (contains_ci(link, m->phrases[k]))
                return 1;
    }
    return 0;
}

/* The parameter "name=" preceded by '?' or '&': offset of the name, or -1. */
static long find_param(bw_str_t uri, bw_str_t name)
{
    size_t i;
    for (i = 1; i + name.len < uri.len; i++) {
        if ((uri.data[i - 1] == '?' || uri.data[i - 1] == '&')
            && memcmp(uri.data + i, name.data, name.len) == 0 && uri.data[i + name.len] == '=')
            return (long)i;
    }
    return -1;
}

/* An absolute-form target ("http://host/p") as its path ("/p"). */
static bw_str_t path_of(bw_str_t uri)
{
    const char *slash;
    size_t skip;
    if (uri.len >= 7 && strncasecmp(uri.data, "http://", 7) == 0)
        skip = 7;
    else if (uri.len >= 8 && strncasecmp(uri.data, "https://", 8) == 0)
        skip = 8;
    else
        return uri;
    slash = memchr(uri.data + skip, '/', uri.len - skip);
    return slash ? bw_str_n(slash, (size_t)(uri.data + uri.len - slash)) : bw_str_n("/", 1);
}

int bw_hash_check_uri(const bw_hash_conf_t *hc, bw_str_t key, bw_str_t uri, bw_str_t *given,
                      char want[BW_HMAC_HEX_LEN + 1])
{
    bw_str_t path = path_of(uri), msg;
    long at = hc->param.len ? find_param(path, hc->param) : -1;
    size_t start;
    want[0] = '\0';
    if (at < 0) {
        *given = bw_str_n("", 0);
        return BW_HASH_MISSING;
    }
    *given = bw_str_n(path.data + at + hc->param.len + 1, path.len - (size_t)at - hc->param.len - 1);
    start = path.len && path.data[0] == '/' ? 1 : 0;
    /* signed: what lies between the leading '/' and the '?' or '&' before the name */
    msg = (size_t)at - 1 > start ? bw_str_n(path.data + start, (size_t)at - 1 - start)
                                 : bw_str_n("", 0);
    bw_hmac_sha1_hex(key, msg, want);
    return bw_hash_equal(*given, bw_str_n(want, BW_HMAC_HEX_LEN)) ? BW_HASH_VALID : BW_HASH_WRONG;
}

int bw_hash_equal(bw_str_t a, bw_str_t b)
{
    unsigned char diff = 0;
    size_t i;
    if (a.len != b.len)
        return 0;
    for (i = 0; i < a.len; i++)
        diff |= (unsigned char)(a.data[i] ^ b.data[i]);
    return diff == 0;
}
