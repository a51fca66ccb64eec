/* Length-carrying string helpers shared by the whole engine. */
#include <string.h>
#include <apr_sha1.h>
#include "base/bw_types.h"

void bw_memzero(void *p, size_t n)
{
    memset(p, 0, n);
}

char *bw_str_pdup(apr_pool_t *p, bw_str_t s)
{
    char *d = apr_palloc(p, s.len + 1);
    if (s.len)
        memcpy(d, s.data, s.len);
    d[s.len] = '\0';
    return d;
}

int bw_str_eq(bw_str_t a, bw_str_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

int bw_str_eq_ci(bw_str_t a, bw_str_t b)
{
    return a.len == b.len && bw_mem_eq_ci(a.data, b.data, a.len);
}

int bw_str_eq_cstr_ci(bw_str_t a, const char *b)
{
    return bw_str_eq_ci(a, bw_str_make(b));
}

bw_str_t bw_str_lower(apr_pool_t *p, bw_str_t s)
{
    char *d = apr_palloc(p, s.len + 1);
    size_t i;
    for (i = 0; i < s.len; i++)
        d[i] = (char)bw_lower1((unsigned char)s.data[i]);
    d[s.len] = '\0';
    return bw_str_n(d, s.len);
}

bw_str_t bw_str_trim(bw_str_t s)
{
    while (s.len && (s.data[0] == ' ' || s.data[0] == '\t')) {
        s.data++;
        s.len--;
    }
    while (s.len && (s.data[s.len - 1] == ' ' || s.data[s.len - 1] == '\t'))
        s.len--;
    return s;
}

void bw_hex_encode(const unsigned char *d, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * n] = '\0';
}

void bw_sha1_hex(bw_str_t s, char out[41])
{
    unsigned char d[APR_SHA1_DIGESTSIZE];
    apr_sha1_ctx_t c;
    apr_sha1_init(&c);
    apr_sha1_update_binary(&c, (const unsigned char *)s.data, (unsigned int)s.len);
    apr_sha1_final(d, &c);
    bw_hex_encode(d, sizeof(d), out);
}

/* Haystacks up to this long are searched by the loop below: @within's
 * lists (920450 looks for each of a GET's fourteen header names in the 76
 * bytes of tx.restricted_headers) and @contains on a header are this
 * short, and there glibc's memmem spent ~280 instructions a call setting
 * up; longer ones go to memmem, whose two-way search bounds the worst
 * case. */
#define MEMMEM_SHORT 256

/* Sixteen bytes as one value (GCC's vector extension: SSE2 on x86-64,
 * NEON on arm64, plain words elsewhere; no intrinsics). */
typedef unsigned char bw_v16_t __attribute__((vector_size(16)));

static inline bw_v16_t v16_load(const char *p)
{
    bw_v16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

const char *bw_memmem(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
    if (nlen == 0)
        return hay;
    if (nlen > hlen)
        return NULL;
    if (nlen == 1)
        return memchr(hay, needle[0], hlen);
    if (hlen <= MEMMEM_SHORT) {
        /* the places whose first, second and last bytes are the needle's
         * (a list like "/proxy/ /if/" is full of '/' at both ends of a
         * "/name/" needle: two bytes alone flag most of its places),
         * sixteen at a time, then compared whole */
        const unsigned char b0 = (unsigned char)needle[0], b1 = (unsigned char)needle[1];
        const unsigned char bl = (unsigned char)needle[nlen - 1];
        size_t i, end = hlen - nlen;   /* the last place */
        if (end >= 15) {
            const bw_v16_t v0 = (bw_v16_t){ 0 } + b0, v1 = (bw_v16_t){ 0 } + b1;
            const bw_v16_t vl = (bw_v16_t){ 0 } + bl;
            for (i = 0;; i += 16) {
                bw_v16_t m;
                uint64_t w[2];
                int j;
                if (i > end - 15)   /* the last block ends at the last place */
                    i = end - 15;
                m = (bw_v16_t)(v16_load(hay + i) == v0) & (bw_v16_t)(v16_load(hay + i + 1) == v1)
                    & (bw_v16_t)(v16_load(hay + i + nlen - 1) == vl);
                memcpy(w, &m, sizeof(w));
                if (w[0] | w[1])   /* rare: a place to compare */
                    for (j = 0; j < 16; j++)
                        if (m[j] && !memcmp(hay + i + (size_t)j + 2, needle + 2, nlen - 2))
                            return hay + i + j;
                if (i == end - 15)
                    return NULL;
            }
        }
        for (i = 0; i <= end; i++)
            if ((unsigned char)hay[i] == b0 && (unsigned char)hay[i + 1] == b1
                && (unsigned char)hay[i + nlen - 1] == bl
                && !memcmp(hay + i + 2, needle + 2, nlen - 2))
                return hay + i;
        return NULL;
    }
    return memmem(hay, hlen, needle, nlen);
}

bw_str_t bw_str_pct_decode(apr_pool_t *p, bw_str_t in)
{
    char *o;
    size_t i, n = 0;
    if (!memchr(in.data, '%', in.len))
        return in;
    o = apr_palloc(p, in.len + 1);
    for (i = 0; i < in.len; i++) {
        if (in.data[i] == '%' && i + 2 < in.len && bw_hexval(in.data[i + 1]) >= 0
            && bw_hexval(in.data[i + 2]) >= 0) {
            o[n++] = (char)(bw_hexval(in.data[i + 1]) * 16 + bw_hexval(in.data[i + 2]));
            i += 2;
        } else {
            o[n++] = in.data[i];
        }
    }
    o[n] = '\0';
    return bw_str_n(o, n);
}

/* Room for need bytes in all: doubled from 64 until it fits, the bytes
 * so far copied over. */
void bw_buf_grow(apr_pool_t *pool, bw_buf_t *b, size_t need)
{
    size_t cap = b->cap ? b->cap : 64;
    char *n;
    while (cap < need)
        cap *= 2;
    n = apr_palloc(pool, cap);
    if (b->len)
        memcpy(n, b->data, b->len);
    b->data = n;
    b->cap = cap;
}
