/*
 * Types every part of the Bulwark engine shares: strings that carry their
 * length (NUL bytes are attacker input, never a terminator), name/value pairs
 * and the handful of helpers that go with them. No httpd headers here or in
 * anything that includes this file; the engine depends on APR only.
 */
#ifndef BW_TYPES_H
#define BW_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_hash.h>
#include <apr_strings.h>

/* A byte string with its length. data need not be NUL-terminated and may
 * contain NUL bytes; code that needs a C string makes one with bw_str_pdup. */
typedef struct {
    const char *data;
    size_t len;
} bw_str_t;

#define BW_STR_LIT(s) { (s), sizeof(s) - 1 }

/* A name/value pair: one entry of a collection (ARGS, REQUEST_HEADERS, TX…). */
typedef struct {
    bw_str_t name;
    bw_str_t value;
} bw_kv_t;

static inline bw_str_t bw_str_make(const char *cstr)
{
    bw_str_t s;
    s.data = cstr ? cstr : "";
    s.len = cstr ? strlen(cstr) : 0;
    return s;
}

static inline bw_str_t bw_str_n(const char *data, size_t len)
{
    bw_str_t s;
    s.data = data;
    s.len = len;
    return s;
}

/* Value of an ASCII hex digit, or -1. */
static inline int bw_hexval(char ch)
{
    unsigned char c = (unsigned char)ch;
    return (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
         : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
}

/* Is c an ASCII letter or digit? */
static inline int bw_is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* NUL-terminated copy of s in pool p (embedded NULs are kept). */
char *bw_str_pdup(apr_pool_t *p, bw_str_t s);

/* memset(p, 0, n) as a call to the C library's memset (vector stores).
 * For structs of a hundred bytes or more cleared on a hot path: gcc turns
 * a memset of such a constant size into an inline `rep stos`, whose
 * start-up cost is tens of cycles (perf: most of an operator call's own
 * time, once per rule). */
void bw_memzero(void *p, size_t n);

/* Equality, exact and ASCII case-insensitive. */
int bw_str_eq(bw_str_t a, bw_str_t b);
int bw_str_eq_ci(bw_str_t a, bw_str_t b);
int bw_str_eq_cstr_ci(bw_str_t a, const char *b);

/* ASCII lower-case copy in pool p. */
bw_str_t bw_str_lower(apr_pool_t *p, bw_str_t s);

/* %XX-decoded as httpd decodes a path ('+' stays '+'; an invalid escape
 * stays as written); s itself when it has no '%'. */
bw_str_t bw_str_pct_decode(apr_pool_t *p, bw_str_t s);

/* A growable byte buffer in a pool. Growth doubles, so appending n bytes in
 * any number of pieces costs O(n) time and at most 2n + 64 bytes of pool. */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
} bw_buf_t;
void bw_buf_grow(apr_pool_t *pool, bw_buf_t *b, size_t need);
/* Inline: parsers append a few bytes at a time, and a call per key or run
 * of a JSON string was a measurable part of a body's cost. */
static inline void bw_buf_append(apr_pool_t *pool, bw_buf_t *b, const char *data, size_t len)
{
    if (len == 0)
        return;
    if (b->len + len > b->cap)
        bw_buf_grow(pool, b, b->len + len);
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

/* A new last element of a, not cleared (apr_array_push clears it): for
 * elements the caller writes whole. Inline: the usual case, room left, is
 * a compare and an add. */
static inline void *bw_array_push(apr_array_header_t *a)
{
    if (a->nelts < a->nalloc)
        return a->elts + (size_t)a->elt_size * (size_t)a->nelts++;
    return apr_array_push(a);
}

/* A byte with ASCII A-Z lowered. */
static inline unsigned char bw_lower1(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* Eight bytes with ASCII A-Z lowered, the others as they are: a byte is
 * upper case when it has no high bit, is >= 'A' and is not > 'Z'. */
static inline uint64_t bw_lower8(uint64_t w)
{
    const uint64_t high = 0x8080808080808080ULL, low7 = 0x7f7f7f7f7f7f7f7fULL;
    uint64_t b = w & low7;
    uint64_t ge_a = b + 0x3f3f3f3f3f3f3f3fULL;    /* bit 7 set when b >= 'A' (0x41) */
    uint64_t gt_z = b + 0x2525252525252525ULL;    /* bit 7 set when b > 'Z' (0x5a) */
    return w | ((ge_a & ~gt_z & ~w & high) >> 2);
}

/* Eight bytes of a and b at offset i equal but for ASCII case? */
static inline int bw_same8_ci(const char *a, const char *b, size_t i)
{
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    return x == y || bw_lower8(x) == bw_lower8(y);
}

/* a[0..n) and b[0..n) equal but for ASCII case: eight bytes at a time,
 * folded only when they differ; n of eight or more ends with the eight
 * bytes before the end (overlapping the last whole word), a shorter n
 * byte by byte. Collection names, literal selectors and bw_str_eq_ci. */
static inline int bw_mem_eq_ci(const char *a, const char *b, size_t n)
{
    size_t i = 0;
    if (n >= 8) {
        for (; i + 8 <= n; i += 8)
            if (!bw_same8_ci(a, b, i))
                return 0;
        return i == n || bw_same8_ci(a, b, n - 8);
    }
    for (; i < n; i++)
        if (bw_lower1((unsigned char)a[i]) != bw_lower1((unsigned char)b[i]))
            return 0;
    return 1;
}

/* s without the spaces and tabs at its ends (no copy). */
bw_str_t bw_str_trim(bw_str_t s);

/* n bytes as 2n lower-case hex digits and a NUL. */
void bw_hex_encode(const unsigned char *d, size_t n, char *out);

/* The SHA-1 of s as 40 lower-case hex digits and a NUL. */
void bw_sha1_hex(bw_str_t s, char out[41]);

/* Locate needle in haystack (binary safe); NULL when absent. */
const char *bw_memmem(const char *hay, size_t hlen, const char *needle, size_t nlen);

#endif /* BW_TYPES_H */
