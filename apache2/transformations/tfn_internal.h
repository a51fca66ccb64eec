/*
 * Helpers shared by the transformation files but not part of the
 * transformation interface (bw_tfn.h): the list of definitions, a
 * copy-on-write output buffer and the few character classes ModSecurity's
 * C-locale code relies on. Only files in apache2/transformations/ include it.
 *
 * The output buffer is why a transformation that changes nothing costs no
 * allocation and no copy: while every byte produced equals the input byte at
 * the same position, nothing is written; the buffer is allocated (and the
 * common prefix copied) at the first byte that differs. That also makes the
 * return value exact: 1 if and only if the bytes changed.
 */
#ifndef BW_TFN_INTERNAL_H
#define BW_TFN_INTERNAL_H

#include <assert.h>
#include <string.h>
#include "bw_tfn.h"

/* Every definition, in registry order. BW_TFN_DEF(sym) declares or lists
 * bw_tfn_<sym>; aliases (normalisePath…) are separate definitions sharing a
 * function. */
#define BW_TFN_LIST(X)                                                       \
    X(base64_decode) X(base64_decode_ext) X(base64_encode) X(cmd_line)       \
    X(compress_whitespace) X(css_decode) X(escape_seq_decode) X(hex_decode)  \
    X(hex_encode) X(html_entity_decode) X(js_decode) X(length) X(lowercase)  \
    X(md5) X(normalize_path) X(normalise_path) X(normalize_path_win)         \
    X(normalise_path_win) X(parity_even_7bit) X(parity_odd_7bit)             \
    X(parity_zero_7bit) X(remove_comments) X(remove_comments_char)           \
    X(remove_nulls) X(remove_whitespace) X(replace_comments)                 \
    X(replace_nulls) X(sha1) X(sql_hex_decode) X(trim) X(trim_left)          \
    X(trim_right) X(uppercase) X(url_decode) X(url_decode_uni)               \
    X(url_encode) X(utf8_to_unicode)

#define BW_TFN_DECLARE(sym) extern const bw_tfn_def_t bw_tfn_##sym;
BW_TFN_LIST(BW_TFN_DECLARE)
#undef BW_TFN_DECLARE

/* --- definitions ---------------------------------------------------------- */

/* A definition whose trigger set is BW_BYTESET(F): the file defining it says
 * next to F why an input without those bytes comes back unchanged, and why
 * no byte of F could be left out. */
#define TFN_DEF(name, fn, F) { name, fn, BW_BYTESET(F), 0 }

/* A definition without a useful trigger set: (nearly) every input changes,
 * so callers always run fn. */
#define TFN_DEF_ALWAYS(name, fn) { name, fn, { { 0, 0, 0, 0 } }, 1 }

/* The bytes tfn_isspace() accepts, as trigger set terms. */
#define TFN_SPACE_BYTES(k) (BW_BS_RANGE(k, '\t', '\r') | BW_BS_BYTE(k, ' '))

/* --- copy-on-write output ------------------------------------------------- */

typedef struct {
    apr_pool_t *pool;
    bw_str_t in;
    size_t cap;   /* most bytes this transformation can produce */
    char *buf;    /* NULL while the output is still a prefix of in */
    size_t len;   /* bytes produced so far */
} tfn_out_t;

/* cap must bound the output for any input: the buffer is never grown. */
static inline void tfn_out_init(tfn_out_t *o, apr_pool_t *pool, bw_str_t in,
                                size_t cap)
{
    o->pool = pool;
    o->in = in;
    o->cap = cap;
    o->buf = NULL;
    o->len = 0;
}

/* Switch to a real buffer: the output is known to differ from the input. */
static inline void tfn_out_diverge(tfn_out_t *o)
{
    o->buf = apr_palloc(o->pool, o->cap + 1);
    if (o->len)
        memcpy(o->buf, o->in.data, o->len);
}

static inline void tfn_out_byte(tfn_out_t *o, unsigned char c)
{
    if (o->buf == NULL) {
        if (o->len < o->in.len && (unsigned char)o->in.data[o->len] == c) {
            o->len++;
            return;
        }
        tfn_out_diverge(o);
    }
    assert(o->len < o->cap);
    o->buf[o->len++] = (char)c;
}

static inline void tfn_out_mem(tfn_out_t *o, const char *p, size_t n)
{
    if (n == 0)
        return;
    if (o->buf == NULL) {
        if (n <= o->in.len - o->len
            && (p == o->in.data + o->len
                || memcmp(p, o->in.data + o->len, n) == 0)) {
            o->len += n;
            return;
        }
        tfn_out_diverge(o);
    }
    assert(n <= o->cap - o->len);
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

/* The bytes produced so far (for transformations that look back, such as
 * normalizePath popping a segment). */
static inline const char *tfn_out_data(const tfn_out_t *o)
{
    return o->buf ? o->buf : o->in.data;
}

/* Forget everything produced after the first len bytes. */
static inline void tfn_out_truncate(tfn_out_t *o, size_t len)
{
    if (len < o->len)
        o->len = len;
}

/* Hand the result over: in itself when unchanged, a prefix of in when only
 * the tail went away, else the pool buffer (NUL-terminated for debugging;
 * callers use the length). Returns 1 when the bytes changed. */
static inline int tfn_out_finish(tfn_out_t *o, bw_str_t *out)
{
    if (o->buf == NULL) {
        *out = bw_str_n(o->in.data, o->len);
        return o->len != o->in.len;
    }
    /* A truncation may have brought a diverged buffer back to the input. */
    if (o->len == o->in.len && memcmp(o->buf, o->in.data, o->len) == 0) {
        *out = o->in;
        return 0;
    }
    o->buf[o->len] = '\0';
    *out = bw_str_n(o->buf, o->len);
    return 1;
}

/* --- character classes ------------------------------------------------------ */

/* Value of an ASCII hex digit, or -1. */
static inline int tfn_hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* isspace() in the C locale, which is what ModSecurity's checks amount to
 * (Apache does not call setlocale): space, \t, \n, \v, \f, \r. */
static inline int tfn_isspace(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline unsigned char tfn_lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

static inline unsigned char tfn_upper(unsigned char c)
{
    return (c >= 'a' && c <= 'z') ? (unsigned char)(c - 32) : c;
}

/* The one byte a decoder writes for code point cp (urlDecodeUni without a
 * map entry, jsDecode, cssDecode): full-width ASCII U+FF01..U+FF5E becomes
 * its ASCII twin 0x21..0x7E, anything else keeps only its low byte. */
static inline unsigned char tfn_unicode_byte(unsigned long cp)
{
    if (cp >= 0xFF01 && cp <= 0xFF5E)
        return (unsigned char)(cp - 0xFF01 + 0x21);
    return (unsigned char)(cp & 0xFF);
}

/* Value of the n hex digits at p (all already checked to be hex). */
static inline unsigned long tfn_hex_n(const char *p, size_t n)
{
    unsigned long v = 0;
    size_t i;
    for (i = 0; i < n; i++)
        v = (v << 4) | (unsigned long)tfn_hexval((unsigned char)p[i]);
    return v;
}

/* 1 when the n bytes at p (within bounds) are all hex digits. */
static inline int tfn_all_hex(const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (tfn_hexval((unsigned char)p[i]) < 0)
            return 0;
    return 1;
}

static inline int tfn_is_odigit(unsigned char c)
{
    return c >= '0' && c <= '7';
}

/* The control byte of a one-letter C escape (\a \b \f \n \r \t \v), or
 * -1 for any other letter. */
static inline int tfn_control_escape(unsigned char c)
{
    switch (c) {
    case 'a': return '\a';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'v': return '\v';
    default: return -1;
    }
}

/* Decoder of one backslash escape: the backslash is at in.data[i] and is not
 * the last byte; sets *end past the escape and returns the byte it means. */
typedef unsigned char (*tfn_escape_fn)(bw_str_t in, size_t i, size_t *end);

/* The loop jsDecode and escapeSeqDecode share: every backslash that is not
 * the last byte starts an escape decoded by esc; other bytes (a lone
 * trailing backslash too) are copied. Copy-on-write like every tfn. */
static inline int tfn_backslash_decode(apr_pool_t *pool, bw_str_t in, bw_str_t *out,
                                       tfn_escape_fn esc)
{
    tfn_out_t o;
    size_t i = 0, end;

    tfn_out_init(&o, pool, in, in.len);
    while (i < in.len) {
        if (in.data[i] == '\\' && i + 1 < in.len) {
            tfn_out_byte(&o, esc(in, i, &end));
            i = end;
        } else {
            tfn_out_byte(&o, (unsigned char)in.data[i]);
            i++;
        }
    }
    return tfn_out_finish(&o, out);
}

#endif /* BW_TFN_INTERNAL_H */
