/*
 * libFuzzer target for what reads a body before the processors do: the
 * UTF-16/UTF-32 decoder, the content sniffer and the upload text test. The
 * first byte picks the declared charset (or none: byte order mark only) and
 * the chunk size the body arrives in. Besides the sanitizers, it checks what
 * must always hold: the decoder's UTF-8 is at most twice the input (UTF-16:
 * 2 bytes become at most 3, a pair of 4 becomes 4), decoding in chunks gives
 * the same bytes and the same verdict as in one piece, and the output of a
 * successful decode is valid UTF-8.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "body/bw_body.h"

static apr_pool_t *root;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    apr_initialize();
    apr_pool_create(&root, NULL);
    return 0;
}

/* Decodes body in chunks of step; the UTF-8 goes to *out. Returns 0 or -1. */
/* Well-formed UTF-8 (no surrogates, nothing past U+10FFFF, shortest forms). */
static int utf8_valid(const char *s, size_t n)
{
    size_t i = 0, k, len;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        unsigned long cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) { len = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { len = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 3; cp = c & 0x07; }
        else return 0;
        for (k = 1; k <= len; k++) {
            if (i + k >= n || ((unsigned char)s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x800) || (len == 3 && cp < 0x10000) || cp > 0x10FFFF
            || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len + 1;
    }
    return 1;
}

/* Decodes body in chunks of step; the UTF-8 goes to *out, *decoded says
 * whether a UTF-16/32 decoder ran (not a pass-through). Returns 0 or -1. */
static int decode(apr_pool_t *p, const char *cs, const char *body, size_t len, size_t step,
                  char **out, size_t *olen, int *decoded)
{
    bw_charset_dec_t *dc = bw_charset_dec_create(p, cs);
    const char *o, *err = NULL;
    size_t i, n;
    *out = apr_palloc(p, len * 2 + 8);
    *olen = 0;
    *decoded = 0;
    if (!dc) {
        memcpy(*out, body, len);
        *olen = len;
        return 0;
    }
    for (i = 0; i < len; i += step) {
        size_t k = len - i < step ? len - i : step;
        if (bw_charset_dec_feed(dc, body + i, k, &o, &n, &err) < 0)
            return err ? -1 : (abort(), -1);
        memcpy(*out + *olen, o, n);
        *olen += n;
        if (*olen > len * 2 + 4)
            abort();
    }
    if (bw_charset_dec_finish(dc, &o, &n, &err) < 0)
        return err ? -1 : (abort(), -1);
    memcpy(*out + *olen, o, n);
    *olen += n;
    *decoded = bw_charset_dec_name(dc) != NULL;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const charsets[] = {
        NULL, "utf-16", "utf-16le", "utf-16be", "utf-32", "utf-32le", "utf-32be", "utf-8",
    };
    apr_pool_t *pool;
    const char *body = (const char *)data + 1, *cs;
    size_t len, step, l1, l2;
    char *o1, *o2;
    int r1, r2, decoded, d2;
    if (size == 0)
        return 0;
    cs = charsets[data[0] & 7];
    step = (size_t)(data[0] >> 3) + 1;
    len = size - 1;
    apr_pool_create(&pool, root);
    r1 = decode(pool, cs, body, len, len ? len : 1, &o1, &l1, &decoded);
    r2 = decode(pool, cs, body, len, step, &o2, &l2, &d2);
    if (r1 != r2 || (r1 == 0 && (l1 != l2 || memcmp(o1, o2, l1))))
        abort();
    if (r1 == 0 && decoded && !utf8_valid(o1, l1))
        abort();
    (void)bw_body_sniff(bw_str_n(body, len));
    (void)bw_body_text_like(bw_str_n(body, len > 8 ? 8 : len), bw_str_n(body, len));
    apr_pool_destroy(pool);
    return 0;
}
