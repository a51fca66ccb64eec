/*
 * The two header values a multipart parser must understand exactly: the
 * request's Content-Type (where the boundary comes from) and each part's
 * Content-Disposition (name and filename). Flags and errors follow what
 * ModSecurity 2.9 documents and what mod_security2 2.9.7 does, except where
 * noted: the boundary is read as a proper parameter, so other parameters
 * (charset) before or after it are accepted where ModSecurity rejects them.
 */
#include <string.h>
#include "body_internal.h"

#define MSG_MAX 200 /* bytes of attacker input quoted in one message */

static int is_ws(char c)
{
    return c == ' ' || c == '\t';
}

/* RFC 2045 token characters: printable ASCII without tspecials. */
static int is_token(unsigned char c)
{
    return c > 32 && c < 127 && strchr("()<>@,;:\\\"/[]?=", c) == NULL;
}

/* RFC 2046 bchars. */
static int is_bchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c != '\0' && strchr("'()+_,-./:=? ", c) != NULL);
}

static size_t skip_ws(const char *s, size_t i, size_t n)
{
    while (i < n && is_ws(s[i]))
        i++;
    return i;
}

static int prefix_ci(const char *s, size_t n, const char *pfx)
{
    size_t l = strlen(pfx);
    return n >= l && bw_str_eq_ci(bw_str_n(s, l), bw_str_n(pfx, l));
}

static int ct_fail(apr_pool_t *pool, bw_body_result_t *res, const char *why, bw_str_t ct)
{
    return bw_body_fail(res, pool, "Multipart: Invalid boundary in C-T (%s): %s", why,
                        bw_body_escape(pool, ct, MSG_MAX));
}

/* One parameter value at s[*i]: a quoted string or the rest up to ';'
 * with trailing whitespace trimmed. Returns 0, or -1 on broken quoting. */
static int ct_value(const char *s, size_t n, size_t *i, bw_str_t *v, int *quoted)
{
    size_t j = *i;
    if (j < n && s[j] == '"') {
        const char *q = memchr(s + j + 1, '"', n - j - 1);
        if (q == NULL)
            return -1;
        *v = bw_str_n(s + j + 1, (size_t)(q - s) - j - 1);
        *quoted = 1;
        *i = (size_t)(q - s) + 1;
        return 0;
    }
    while (j < n && s[j] != ';')
        j++;
    *v = bw_str_n(s + *i, j - *i);
    while (v->len && is_ws(v->data[v->len - 1]))
        v->len--;
    *quoted = 0;
    *i = j;
    return v->len && v->data[v->len - 1] == '"' ? -1 : 0;
}

static int check_boundary(apr_pool_t *pool, bw_body_result_t *res, bw_str_t b, bw_str_t ct)
{
    size_t k;
    if (b.len == 0)
        return ct_fail(pool, res, "empty", ct);
    if (b.len > BW_BODY_MP_BOUNDARY_MAX)
        return bw_body_fail(res, pool,
                            "Multipart: boundary is %" APR_SIZE_T_FMT " characters long, RFC 2046 allows %d",
                            b.len, BW_BODY_MP_BOUNDARY_MAX);
    for (k = 0; k < b.len; k++)
        if (!is_bchar((unsigned char)b.data[k]))
            return ct_fail(pool, res, "characters", ct);
    if (b.data[b.len - 1] == ' ')
        return ct_fail(pool, res, "characters", ct);
    return 0;
}

int bw_body_mp_boundary(apr_pool_t *pool, const char *content_type, bw_str_t *boundary,
                        bw_body_result_t *res)
{
    bw_str_t ct = bw_str_make(content_type), v;
    const char *s = ct.data;
    size_t n = ct.len, i = skip_ws(s, 0, n), start = i;
    int found = 0, quoted;

    while (i < n && s[i] != ';' && !is_ws(s[i]))
        i++;
    if (!prefix_ci(s + start, i - start, "multipart/"))
        return ct_fail(pool, res, "not multipart", ct);
    while (i < n) {
        size_t semis = 0, name_at, name_end;
        int ws_around;
        while (i < n && (is_ws(s[i]) || s[i] == ';'))
            semis += s[i++] == ';';
        if (i >= n)
            break;
        name_at = i;
        while (i < n && is_token((unsigned char)s[i]))
            i++;
        name_end = i;
        i = skip_ws(s, i, n);
        ws_around = i != name_end;
        if (name_end == name_at || i >= n || s[i] != '=')
            return ct_fail(pool, res, "malformed", ct);
        i++;
        ws_around |= i < n && is_ws(s[i]);
        i = skip_ws(s, i, n);
        if (ct_value(s, n, &i, &v, &quoted) < 0)
            return ct_fail(pool, res, "quote", ct);
        i = skip_ws(s, i, n);
        if (i < n && s[i] != ';')
            return ct_fail(pool, res, "malformed", ct);
        if (!bw_str_eq_cstr_ci(bw_str_n(s + name_at, name_end - name_at), "boundary"))
            continue;
        if (found)
            return bw_body_fail(res, pool, "Multipart: Multiple boundary parameters in C-T");
        found = 1;
        *boundary = v;
        res->mp.boundary_quoted |= quoted;
        res->mp.boundary_whitespace |= ws_around;
        if (semis == 0)
            res->mp.missing_semicolon = 1;
    }
    if (!found)
        return bw_body_fail(res, pool, "Multipart: Boundary not found in C-T: %s",
                            bw_body_escape(pool, ct, MSG_MAX));
    return check_boundary(pool, res, *boundary, ct);
}

static int cd_fail(apr_pool_t *pool, bw_body_result_t *res, const char *why, bw_str_t v)
{
    return bw_body_fail(res, pool, "Multipart: Invalid Content-Disposition header (%s): %s",
                        why, bw_body_escape(pool, v, MSG_MAX));
}

/* A quoted value starting at the quote s[*i]. A backslash escapes only the
 * quote character and itself; before anything else it stays (browsers send
 * such filenames), and as the very last byte it is an error. */
static int cd_quoted(apr_pool_t *pool, const char *s, size_t n, size_t *i, bw_str_t *out)
{
    char q = s[*i], *d = apr_palloc(pool, n - *i + 1);
    size_t j = *i + 1, o = 0;
    while (j < n) {
        if (s[j] == '\\') {
            if (j + 1 >= n)
                return -1;
            if (s[j + 1] == q || s[j + 1] == '\\')
                j++;
        } else if (s[j] == q) {
            d[o] = '\0';
            *out = bw_str_n(d, o);
            *i = j + 1;
            return 0;
        }
        d[o++] = s[j++];
    }
    return -1;
}

/* Stores one name/filename parameter; anything else is an error, as in
 * ModSecurity (RFC 7578 forbids filename* in form-data). */
static int cd_assign(apr_pool_t *pool, bw_body_result_t *res, bw_str_t pname, bw_str_t val,
                     bw_body_mp_disp_t *d, bw_str_t whole)
{
    if (bw_str_eq_cstr_ci(pname, "name")) {
        if (d->has_name)
            return cd_fail(pool, res, "duplicate name", whole);
        d->name = val;
        d->has_name = 1;
    } else if (bw_str_eq_cstr_ci(pname, "filename")) {
        if (d->has_filename)
            return cd_fail(pool, res, "duplicate filename", whole);
        d->filename = val;
        d->has_filename = 1;
    } else {
        return cd_fail(pool, res, "unknown parameter", whole);
    }
    return 0;
}

/* One "name=value" at s[*i]; leaves *i just after the value. */
static int cd_param(apr_pool_t *pool, bw_body_result_t *res, bw_str_t v, size_t *i,
                    bw_body_mp_disp_t *d)
{
    const char *s = v.data;
    size_t n = v.len, j = *i, at = j;
    bw_str_t pname, val;
    while (j < n && s[j] != '=' && s[j] != ';' && !is_ws(s[j]))
        j++;
    pname = bw_str_n(s + at, j - at);
    j = skip_ws(s, j, n);
    if (pname.len == 0 || j >= n || s[j] != '=')
        return cd_fail(pool, res, "parameter without '='", v);
    j = skip_ws(s, j + 1, n);
    if (j >= n)
        return cd_fail(pool, res, "parameter without value", v);
    if (s[j] == '"' || s[j] == '\'') {
        /* Single quotes are not MIME quoting, but some backends accept
         * them: parse them and let rules see MULTIPART_INVALID_QUOTING. */
        if (s[j] == '\'')
            res->mp.invalid_quoting = 1;
        if (cd_quoted(pool, s, n, &j, &val) < 0)
            return cd_fail(pool, res, "unterminated or badly escaped quoted value", v);
    } else {
        at = j;
        while (j < n && is_token((unsigned char)s[j]))
            j++;
        val = bw_str_n(bw_str_pdup(pool, bw_str_n(s + at, j - at)), j - at);
    }
    *i = j;
    return cd_assign(pool, res, pname, val, d, v);
}

int bw_body_mp_disposition(apr_pool_t *pool, bw_str_t v, bw_body_mp_disp_t *d,
                           bw_body_result_t *res)
{
    const char *s = v.data;
    size_t n = v.len, i = skip_ws(s, 0, n);
    memset(d, 0, sizeof(*d));
    if (!prefix_ci(s + i, n - i, "form-data"))
        return cd_fail(pool, res, "not form-data", v);
    i = skip_ws(s, i + 9, n);
    if (i >= n)
        return 0;
    if (s[i] != ';')
        return cd_fail(pool, res, "missing ';' after form-data", v);
    i++;
    for (;;) {
        size_t after;
        i = skip_ws(s, i, n);
        if (i >= n)
            return 0;
        if (cd_param(pool, res, v, &i, d) < 0)
            return -1;
        after = i;
        i = skip_ws(s, i, n);
        if (i >= n)
            return 0;
        if (s[i] != ';') {
            /* Junk glued to a closing quote is how quoting evasions look. */
            if (i == after && (s[i - 1] == '"' || s[i - 1] == '\''))
                res->mp.invalid_quoting = 1;
            return cd_fail(pool, res, "missing ';' between parameters", v);
        }
        i++;
    }
}
