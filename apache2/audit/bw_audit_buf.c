/*
 * The buffer an audit record is built in, and the two escapings records
 * need: JSON string literals that always parse (invalid UTF-8 included)
 * and single-line text for Native header-like lines.
 */
#include <string.h>
#include "audit/bw_audit_int.h"

void bw_abuf_init(bw_abuf_t *b, apr_pool_t *p, apr_size_t cap)
{
    b->pool = p;
    b->cap = cap ? cap : 1024;
    b->data = apr_palloc(p, b->cap);
    b->len = 0;
}

static void grow(bw_abuf_t *b, apr_size_t need)
{
    apr_size_t cap = b->cap;
    char *n;
    while (cap < b->len + need)
        cap *= 2;
    n = apr_palloc(b->pool, cap);
    memcpy(n, b->data, b->len);
    b->data = n;
    b->cap = cap;
}

void bw_abuf_add(bw_abuf_t *b, const char *s, apr_size_t n)
{
    if (!n)
        return;
    if (b->len + n > b->cap)
        grow(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

void bw_abuf_cstr(bw_abuf_t *b, const char *s)
{
    if (s)
        bw_abuf_add(b, s, strlen(s));
}

void bw_abuf_str(bw_abuf_t *b, bw_str_t s)
{
    bw_abuf_add(b, s.data, s.len);
}

void bw_abuf_byte(bw_abuf_t *b, char c)
{
    if (b->len + 1 > b->cap)
        grow(b, 1);
    b->data[b->len++] = c;
}

void bw_abuf_num(bw_abuf_t *b, apr_int64_t n)
{
    char tmp[24];
    int i = (int)sizeof(tmp);
    apr_uint64_t u = n < 0 ? (apr_uint64_t)(-(n + 1)) + 1 : (apr_uint64_t)n;
    do {
        tmp[--i] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (n < 0)
        tmp[--i] = '-';
    bw_abuf_add(b, tmp + i, sizeof(tmp) - (apr_size_t)i);
}

static const char hexd[] = "0123456789abcdef";

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes there
 * are not one (overlong forms and surrogates included). */
static int utf8_len(const unsigned char *s, apr_size_t left)
{
    int n, i;
    unsigned cp;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2, cp = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, cp = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (left < (apr_size_t)n)
        return 0;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

static void json_escape_byte(bw_abuf_t *b, unsigned char c)
{
    char e[6] = { '\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15] };
    switch (c) {
    case '"': bw_abuf_add(b, "\\\"", 2); return;
    case '\\': bw_abuf_add(b, "\\\\", 2); return;
    case '\n': bw_abuf_add(b, "\\n", 2); return;
    case '\r': bw_abuf_add(b, "\\r", 2); return;
    case '\t': bw_abuf_add(b, "\\t", 2); return;
    default: bw_abuf_add(b, e, 6); return;
    }
}

void bw_abuf_json(bw_abuf_t *b, bw_str_t s)
{
    const unsigned char *p = (const unsigned char *)s.data;
    apr_size_t i = 0, run = 0;
    bw_abuf_byte(b, '"');
    while (i < s.len) {
        unsigned char c = p[i];
        int n = 1;
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80 && (n = utf8_len(p + i, s.len - i)) > 0) {
            i += (apr_size_t)n;
            continue;
        }
        bw_abuf_add(b, s.data + run, i - run);
        json_escape_byte(b, c);
        run = ++i;
    }
    bw_abuf_add(b, s.data + run, i - run);
    bw_abuf_byte(b, '"');
}

void bw_abuf_json_c(bw_abuf_t *b, const char *s)
{
    bw_abuf_json(b, bw_str_make(s));
}

void bw_abuf_line_safe(bw_abuf_t *b, bw_str_t s)
{
    apr_size_t i, run = 0;
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        char e[4];
        if ((c >= 0x20 && c != 0x7f) || c == '\t')
            continue;
        bw_abuf_add(b, s.data + run, i - run);
        e[0] = '\\';
        e[1] = 'x';
        e[2] = hexd[c >> 4];
        e[3] = hexd[c & 15];
        bw_abuf_add(b, e, 4);
        run = i + 1;
    }
    bw_abuf_add(b, s.data + run, s.len - run);
}
