/* Helpers the CLI subcommands share: whole-file reads and JSON strings. */
#include <string.h>
#include <apr_file_io.h>
#include "cli.h"

bw_str_t *bw_cli_read_all(apr_pool_t *pool, const char *path, char **err)
{
    apr_file_t *f;
    apr_status_t rv;
    bw_str_t *out = apr_pcalloc(pool, sizeof(*out));
    apr_size_t cap = 65536, len = 0;
    char *buf = apr_palloc(pool, cap + 1);
    char eb[128];

    if (!path || !strcmp(path, "-"))
        rv = apr_file_open_stdin(&f, pool);
    else
        rv = apr_file_open(&f, path, APR_READ | APR_BINARY, 0, pool);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(pool, "%s: %s", path ? path : "stdin", apr_strerror(rv, eb, sizeof eb));
        return NULL;
    }
    for (;;) {
        apr_size_t n = cap - len;
        rv = apr_file_read(f, buf + len, &n);
        len += n;
        if (rv == APR_EOF || (rv == APR_SUCCESS && n == 0))
            break;
        if (rv != APR_SUCCESS) {
            *err = apr_psprintf(pool, "%s: %s", path ? path : "stdin", apr_strerror(rv, eb, sizeof eb));
            return NULL;
        }
        if (len == cap) {
            char *nb = apr_palloc(pool, cap * 2 + 1);
            memcpy(nb, buf, len);
            buf = nb;
            cap *= 2;
        }
    }
    buf[len] = '\0';
    out->data = buf;
    out->len = len;
    return out;
}

void bw_cli_json_str(FILE *out, bw_str_t s)
{
    size_t i;
    fputc('"', out);
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\r')
            fputs("\\r", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(out, "\\u%04x", c);   /* bytes, not code points: lossless and valid JSON */
        else
            fputc(c, out);
    }
    fputc('"', out);
}
