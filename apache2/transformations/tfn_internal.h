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
 * return value exact: 1 if and only if the bytes changed. The block scans
 * of tfn_simd.h go further: a transformation first looks for the first
 * byte that can need work and hands the input back untouched when there is
 * none; after it, runs up to the next such byte are appended whole
 * (tfn_out_run_until), which costs nothing while the output is still the
 * input.
 */
#ifndef BW_TFN_INTERNAL_H
#define BW_TFN_INTERNAL_H

#include <assert.h>
#include <string.h>
#include "bw_tfn.h"
#include "tfn_simd.h"

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
#define TFN_DEF(name, fn, F) { name, fn, BW_BYTESET(F), 0, NULL, NULL }

/* The same, with bw_tfn_def_t.bytes: the output's bytes from the input's. */
#define TFN_DEF_BYTES(name, fn, F, bytes) { name, fn, BW_BYTESET(F), 0, bytes, NULL }

/* The same, with bw_tfn_def_t.unchanged. */
#define TFN_DEF_UNCHANGED(name, fn, F, unchanged) { name, fn, BW_BYTESET(F), 0, NULL, unchanged }

/* A definition without a useful trigger set: (nearly) every input changes,
 * so callers always run fn. */
#define TFN_DEF_ALWAYS(name, fn) { name, fn, { { 0, 0, 0, 0 } }, 1, NULL, NULL }

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

/* The same, when the first `same` bytes of in are known to come out as
 * they are (a scan found no byte that needs work before them): the output
 * starts as that prefix of the input, still without a buffer. */
static inline void tfn_out_init_at(tfn_out_t *o, apr_pool_t *pool, bw_str_t in,
                                   size_t cap, size_t same)
{
    tfn_out_init(o, pool, in, cap);
    o->len = same;
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

/* Append the n input bytes at in.data[from] (a run a scan found nothing
 * to do in). O(1) while the output is still the input's prefix up to
 * there, which is the common case: nothing is compared or copied. */
static inline void tfn_out_run(tfn_out_t *o, size_t from, size_t n)
{
    tfn_out_mem(o, o->in.data + from, n);
}

/* Append the input from in.data[i] up to the next byte pred flags, or the
 * end, as a run; returns that byte's index. Loops call it only at a byte
 * that needs no work, so that dense input ("%%%%", quote runs) goes a byte
 * at a time with no scan set up per byte. */
static inline __attribute__((always_inline)) size_t
tfn_out_run_until(tfn_out_t *o, size_t i, tfn_pred_fn pred)
{
    size_t j = tfn_find(o->in.data, i, o->in.len, pred);
    tfn_out_run(o, i, j - i);
    return j;
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
        v = (v << 4) | (unsigned long)bw_hexval(p[i]);
    return v;
}

/* 1 when the n bytes at p (within bounds) are all hex digits. */
static inline int tfn_all_hex(const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (bw_hexval(p[i]) < 0)
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

/* --- runs and removals ---------------------------------------------------- */

/* Append the n input bytes at in.data[from] with A-Z lower-cased, a block
 * at a time: while the output is the input's prefix, up to the first
 * capital nothing is written; from there (or once diverged) blocks are
 * lower-cased into the buffer. */
static inline void tfn_out_run_lower(tfn_out_t *o, size_t from, size_t n)
{
    const char *p = o->in.data + from;
    size_t k;

    if (o->buf == NULL && from == o->len) {
        k = tfn_find(p, 0, n, tfn_v_upper);
        o->len += k;
        p += k;
        n -= k;
    }
    while (n > 0 && o->buf == NULL) {
        tfn_out_byte(o, tfn_lower((unsigned char)*p));
        p++;
        n--;
    }
    if (n == 0)
        return;
    assert(n <= o->cap - o->len);
    tfn_flip_case_copy(o->buf + o->len, p, n, tfn_v_upper);
    o->len += n;
}

/* Decoder of one backslash escape: the backslash is at in.data[i] and is not
 * the last byte; sets *end past the escape and returns the byte it means. */
typedef unsigned char (*tfn_escape_fn)(bw_str_t in, size_t i, size_t *end);

TFN_PRED(tfn_v_backslash)
{
    return tfn_v_eq(v, '\\');
}

/* The loop jsDecode and escapeSeqDecode share: every backslash that is not
 * the last byte starts an escape decoded by esc; other bytes (a lone
 * trailing backslash too) are copied, a run between backslashes at a time.
 * Copy-on-write like every tfn: without a backslash, nothing is written. */
static inline int tfn_backslash_decode(apr_pool_t *pool, bw_str_t in, bw_str_t *out,
                                       tfn_escape_fn esc)
{
    tfn_out_t o;
    size_t i = tfn_find(in.data, 0, in.len, tfn_v_backslash), end;

    if (i == in.len) {
        *out = in;
        return 0;
    }
    tfn_out_init_at(&o, pool, in, in.len, i);
    while (i < in.len) {
        if (in.data[i] != '\\') {
            i = tfn_out_run_until(&o, i, tfn_v_backslash);
        } else if (i + 1 < in.len) {
            tfn_out_byte(&o, esc(in, i, &end));
            i = end;
        } else {
            tfn_out_byte(&o, '\\');
            i++;
        }
    }
    return tfn_out_finish(&o, out);
}

/* lowercase and uppercase: unchanged without a letter flip flags; else a
 * buffer from the first one on, converted a block at a time. */
static inline int tfn_flip_case(apr_pool_t *pool, bw_str_t in, bw_str_t *out, tfn_pred_fn flip)
{
    size_t i = tfn_find(in.data, 0, in.len, flip);
    char *buf;

    if (i == in.len) {
        *out = in;
        return 0;
    }
    buf = apr_palloc(pool, in.len + 1);
    memcpy(buf, in.data, i);
    tfn_flip_case_copy(buf + i, in.data + i, in.len - i, flip);
    buf[in.len] = '\0';
    *out = bw_str_n(buf, in.len);
    return 1;
}

/* Drop every byte pred flags (drop() says the same of one byte): the
 * removals (removeNulls, removeWhitespace). Unchanged without such a byte;
 * with one the output is shorter, so it is built directly, a run of kept
 * bytes at a time. */
static inline int tfn_remove_bytes(apr_pool_t *pool, bw_str_t in, bw_str_t *out,
                                   tfn_pred_fn pred, int (*drop)(unsigned char))
{
    size_t i = tfn_find(in.data, 0, in.len, pred), j, len;
    char *buf;

    if (i == in.len) {
        *out = in;
        return 0;
    }
    buf = apr_palloc(pool, in.len);  /* at most in.len - 1 bytes, and a NUL */
    memcpy(buf, in.data, i);
    len = i;
    while (i < in.len) {
        while (i < in.len && drop((unsigned char)in.data[i]))
            i++;
        j = tfn_find(in.data, i, in.len, pred);
        memcpy(buf + len, in.data + i, j - i);
        len += j - i;
        i = j;
    }
    buf[len] = '\0';
    *out = bw_str_n(buf, len);
    return 1;
}

#endif /* BW_TFN_INTERNAL_H */
