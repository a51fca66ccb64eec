/*
 * SecUnicodeMapFile support: loads a ModSecurity unicode.mapping file and
 * keeps one code page as a 65536-entry table that urlDecodeUni consults for
 * %uHHHH. The format (Debian ships it as /etc/modsecurity/unicode.mapping):
 * a header line starting with the code page number ("20127 (US-ASCII)"),
 * then lines of space-separated "HHHH:HH" pairs (code point : byte, hex)
 * up to the next header; CRLF line ends; headers without a number, such as
 * "(UTF-8)", start blocks no one can select.
 */
#include <apr_file_io.h>
#include "tfn_internal.h"

#define UNICODE_MAP_SIZE 65536

/* Read the whole file into scratch. */
static int read_file(apr_pool_t *scratch, const char *path, bw_str_t *content,
                     char **err, apr_pool_t *pool)
{
    apr_file_t *f;
    apr_finfo_t info;
    apr_size_t got = 0;
    char *buf, msg[120];
    apr_status_t rc;

    rc = apr_file_open(&f, path, APR_FOPEN_READ, APR_OS_DEFAULT, scratch);
    if (rc == APR_SUCCESS)
        rc = apr_file_info_get(&info, APR_FINFO_SIZE, f);
    if (rc == APR_SUCCESS) {
        buf = apr_palloc(scratch, (apr_size_t)info.size + 1);
        if (info.size > 0)
            rc = apr_file_read_full(f, buf, (apr_size_t)info.size, &got);
        *content = bw_str_n(buf, got);
    }
    if (rc != APR_SUCCESS) {
        *err = apr_psprintf(pool, "cannot open unicode map \"%s\": %s", path,
                            apr_strerror(rc, msg, sizeof(msg)));
        return -1;
    }
    return 0;
}

/* Split the next line (without "\n" / "\r\n") off *rest. */
static int next_line(bw_str_t *rest, bw_str_t *line)
{
    const char *nl;
    size_t n;

    if (rest->len == 0)
        return 0;
    nl = memchr(rest->data, '\n', rest->len);
    n = nl ? (size_t)(nl - rest->data) : rest->len;
    *line = bw_str_n(rest->data, n);
    *rest = bw_str_n(rest->data + n + (nl != NULL), rest->len - n - (nl != NULL));
    if (line->len && line->data[line->len - 1] == '\r')
        line->len--;
    return 1;
}

/* Split the next space/tab-separated token off *rest. */
static int next_token(bw_str_t *rest, bw_str_t *tok)
{
    size_t i = 0, start;
    while (i < rest->len && (rest->data[i] == ' ' || rest->data[i] == '\t'))
        i++;
    start = i;
    while (i < rest->len && rest->data[i] != ' ' && rest->data[i] != '\t')
        i++;
    *tok = bw_str_n(rest->data + start, i - start);
    *rest = bw_str_n(rest->data + i, rest->len - i);
    return tok->len > 0;
}

/* A header's code page number, or -1 when tok is not all decimal digits. */
static long header_number(bw_str_t tok)
{
    long v = 0;
    size_t i;
    if (tok.len == 0 || tok.len > 9)
        return -1;
    for (i = 0; i < tok.len; i++) {
        if (tok.data[i] < '0' || tok.data[i] > '9')
            return -1;
        v = v * 10 + (tok.data[i] - '0');
    }
    return v;
}

/* Parse "HHHH:HH" into map; 0 on success. */
static int parse_pair(bw_str_t tok, int *map)
{
    const char *colon = memchr(tok.data, ':', tok.len);
    size_t n1, n2;
    unsigned long cp, byte;

    if (colon == NULL)
        return -1;
    n1 = (size_t)(colon - tok.data);
    n2 = tok.len - n1 - 1;
    if (n1 < 1 || n1 > 4 || n2 < 1 || n2 > 2 || !tfn_all_hex(tok.data, n1)
        || !tfn_all_hex(colon + 1, n2))
        return -1;
    cp = tfn_hex_n(tok.data, n1);
    byte = tfn_hex_n(colon + 1, n2);
    map[cp] = (int)byte;
    return 0;
}

/* Fill map from the block of code page cp. 1 when found, 0 when not, -1 on
 * a malformed pair (with *err). */
static int parse_map(bw_str_t content, unsigned cp, int *map, const char *path,
                     apr_pool_t *pool, char **err)
{
    bw_str_t rest = content, line, tok;
    unsigned lineno = 0;
    int active = 0;
    long number;

    while (next_line(&rest, &line)) {
        lineno++;
        if (!next_token(&line, &tok))
            continue;
        number = header_number(tok);
        if (number >= 0 || tok.data[0] == '(') {
            if (active)
                return 1; /* the next block starts */
            active = (number >= 0 && (unsigned long)number == cp);
            continue;
        }
        if (!active)
            continue;
        do {
            if (parse_pair(tok, map) != 0) {
                *err = apr_psprintf(pool, "%s:%u: bad unicode mapping \"%s\"",
                                    path, lineno, bw_str_pdup(pool, tok));
                return -1;
            }
        } while (next_token(&line, &tok));
    }
    return active;
}

const int *bw_tfn_unicode_map_load(apr_pool_t *pool, const char *path,
                                   unsigned codepage, char **err)
{
    apr_pool_t *scratch;
    bw_str_t content;
    int *map = NULL, found, i;

    if (apr_pool_create(&scratch, pool) != APR_SUCCESS) {
        *err = apr_pstrdup(pool, "cannot create a memory pool");
        return NULL;
    }
    if (read_file(scratch, path, &content, err, pool) == 0) {
        map = apr_palloc(pool, UNICODE_MAP_SIZE * sizeof(*map));
        for (i = 0; i < UNICODE_MAP_SIZE; i++)
            map[i] = -1;
        found = parse_map(content, codepage, map, path, pool, err);
        if (found == 0)
            *err = apr_psprintf(pool, "code page %u not found in \"%s\"",
                                codepage, path);
        if (found <= 0)
            map = NULL;
    }
    apr_pool_destroy(scratch);
    if (map == NULL)
        return NULL;
    /* Like ModSecurity: the IDNA label separators of RFC 3490 section 3.1
     * (ideographic, full-width and half-width full stops) decode to '.'. */
    map[0x002E] = '.';
    map[0x3002] = '.';
    map[0xFF0E] = '.';
    map[0xFF61] = '.';
    return map;
}
