/*
 * Helpers the operators share: message escaping (bw_op.h), data-file paths
 * and reading, line/token splitting over length-carrying strings, and the
 * atoi rules of ModSecurity's numeric operators (op_internal.h).
 */
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <apr_file_io.h>
#include <apr_file_info.h>
#include "op_internal.h"

char *bw_op_log_escape(apr_pool_t *p, bw_str_t s, size_t max)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = (max && s.len > max) ? max : s.len, i, o = 0;
    char *d = apr_palloc(p, n * 4 + 1);   /* worst case: every byte as \xHH */

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (c == '"' || c == '\\') {
            d[o++] = '\\';
            d[o++] = (char)c;
        } else if (c < 0x20 || c > 0x7e) {
            d[o++] = '\\';
            d[o++] = 'x';
            d[o++] = hex[c >> 4];
            d[o++] = hex[c & 0x0f];
        } else {
            d[o++] = (char)c;
        }
    }
    d[o] = '\0';
    return d;
}

const char *bw_op_param_msg(bw_op_run_t *run, const bw_op_t *op, const char *head)
{
    return apr_psprintf(run->pool, "%s \"%s\" at %s.", head,
                        bw_op_log_escape(run->pool, bw_str_n(op->param, op->param_len), 0),
                        run->var_name);
}

const char *bw_op_data_path(apr_pool_t *p, const char *rule_file, const char *path)
{
    const char *slash;

    if (path[0] == '/' || rule_file == NULL)
        return path;
    slash = strrchr(rule_file, '/');
    if (slash == NULL)
        return path;
    return apr_pstrcat(p, apr_pstrmemdup(p, rule_file, (apr_size_t)(slash - rule_file + 1)),
                       path, NULL);
}

int bw_op_read_file(apr_pool_t *p, const char *opname, const char *what,
                    const char *path, bw_str_t *content, char **err)
{
    apr_file_t *f = NULL;
    apr_finfo_t fi;
    apr_size_t got = 0;
    apr_status_t rv;
    char *buf, ebuf[256];

    rv = apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY, APR_OS_DEFAULT, p);
    if (rv == APR_SUCCESS)
        rv = apr_file_info_get(&fi, APR_FINFO_SIZE | APR_FINFO_TYPE, f);
    if (rv == APR_SUCCESS && fi.filetype != APR_REG)
        rv = APR_EBADF;
    if (rv == APR_SUCCESS) {
        buf = apr_palloc(p, (apr_size_t)fi.size + 1);
        if (fi.size > 0)
            rv = apr_file_read_full(f, buf, (apr_size_t)fi.size, &got);
        buf[got] = '\0';
        content->data = buf;
        content->len = got;
    }
    if (f)
        apr_file_close(f);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(p, "@%s: cannot read %s \"%s\": %s", opname, what, path,
                            rv == APR_EBADF ? "not a regular file"
                                            : apr_strerror(rv, ebuf, sizeof(ebuf)));
        return -1;
    }
    return 0;
}

int bw_op_next_line(bw_str_t *rest, bw_str_t *line)
{
    const char *nl;
    size_t len;

    if (rest->len == 0)
        return 0;
    nl = memchr(rest->data, '\n', rest->len);
    len = nl ? (size_t)(nl - rest->data) : rest->len;
    *line = bw_str_n(rest->data, len);
    if (len > 0 && line->data[len - 1] == '\r')
        line->len--;
    rest->data += nl ? len + 1 : len;
    rest->len -= nl ? len + 1 : len;
    return 1;
}

int bw_op_next_token(bw_str_t *rest, const char *seps, bw_str_t *tok)
{
    size_t i = 0, start;

    while (i < rest->len && rest->data[i] != '\0' && strchr(seps, rest->data[i]))
        i++;
    if (i == rest->len) {
        rest->data += i;
        rest->len = 0;
        return 0;
    }
    start = i;
    while (i < rest->len && (rest->data[i] == '\0' || !strchr(seps, rest->data[i])))
        i++;
    *tok = bw_str_n(rest->data + start, i - start);
    rest->data += i;
    rest->len -= i;
    return 1;
}


int bw_op_is_url(bw_str_t s)
{
    return (s.len >= 7 && strncasecmp(s.data, "http://", 7) == 0)
        || (s.len >= 8 && strncasecmp(s.data, "https://", 8) == 0);
}

int bw_op_data_file(apr_pool_t *p, const bw_op_cenv_t *env, const char *opname,
                    const char *what, bw_str_t name, const char **path, char **err)
{
    if (name.len == 0) {
        *err = apr_psprintf(p, "@%s: no %s name in the parameter", opname, what);
        return -1;
    }
    if (memchr(name.data, '\0', name.len)) {
        *err = apr_psprintf(p, "@%s: NUL byte in file name \"%s\"", opname,
                            bw_op_log_escape(p, name, 0));
        return -1;
    }
    if (bw_op_is_url(name)) {
        *err = apr_psprintf(p, "@%s: loading a %s from a URL is not supported (\"%s\"); "
                            "download the file and name its local path",
                            opname, what, bw_str_pdup(p, name));
        return -1;
    }
    *path = bw_op_data_path(p, env->file, bw_str_pdup(p, name));
    return 0;
}

int bw_op_atoi(bw_str_t s)
{
    size_t i = 0;
    long long v = 0;
    int neg = 0;

    /* isspace() in the C locale, as atoi() skips */
    while (i < s.len && (s.data[i] == ' ' || (s.data[i] >= '\t' && s.data[i] <= '\r')))
        i++;
    if (i < s.len && (s.data[i] == '+' || s.data[i] == '-'))
        neg = s.data[i++] == '-';
    for (; i < s.len && s.data[i] >= '0' && s.data[i] <= '9'; i++) {
        v = v * 10 + (s.data[i] - '0');
        if (v > (long long)INT_MAX + 1)
            v = (long long)INT_MAX + 1;     /* saturate; keeps v bounded */
    }
    if (neg)
        return v > INT_MAX ? INT_MIN : (int)-v;
    return v > INT_MAX ? INT_MAX : (int)v;
}

const char *bw_op_literal_regex(apr_pool_t *p, const bw_op_t *op, const char *head,
                                const char *tail)
{
    static const char hex[] = "0123456789abcdef";
    size_t hl = strlen(head), tl = strlen(tail), i;
    char *o = apr_palloc(p, hl + 4 * op->param_len + tl + 1), *q = o;
    memcpy(q, head, hl);
    q += hl;
    for (i = 0; i < op->param_len; i++) {
        unsigned char c = (unsigned char)op->param[i];
        *q++ = '\\';
        *q++ = 'x';
        *q++ = hex[c >> 4];
        *q++ = hex[c & 15];
    }
    memcpy(q, tail, tl + 1);
    return o;
}
