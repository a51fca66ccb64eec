/*
 * Rule targets: parsing "ARGS|!ARGS:foo|&TX:x|REQUEST_COOKIES:/^sess/" once
 * at start-up (the executor produces their values, run/bw_targets_run.c). Selectors are exact names (case-insensitive, as ModSecurity
 * matches collection keys) or /regex/ (compiled caseless); XML takes an
 * XPath expression instead.
 */
#include <string.h>
#include <ctype.h>
#include "base/bw_coll.h"
#include "variables/bw_var.h"

/* The end of a /regex/ selector starting at open: the first unescaped '/'
 * followed by '|' or the end of the list. NULL when there is none (an XPath
 * such as XML:/root is no regex and ends at the next '|'). */
static const char *regex_selector_end(const char *open)
{
    const char *p = open + 1;
    for (; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            continue;
        }
        if (*p == '/' && (p[1] == '|' || p[1] == '\0'))
            return p + 1;
    }
    return NULL;
}

/* Split at '|' outside /regex/ and '…' selectors. */
static const char *next_part(const char *s, const char **end)
{
    const char *p = s;
    int after_colon = 0;
    while (*p && *p != '|') {
        if (*p == ':' && !after_colon) {
            after_colon = 1;
            p++;
            if (*p == '/') {
                const char *e = regex_selector_end(p);
                if (e)
                    p = e;
                continue;
            }
            if (*p == '\'') {
                p++;
                while (*p && *p != '\'')
                    p++;
                if (*p == '\'')
                    p++;
                continue;
            }
            continue;
        }
        p++;
    }
    *end = p;
    return s;
}

static const char *parse_one(apr_pool_t *p, const char *s, size_t len, bw_target_t *t)
{
    size_t i = 0, nlen;
    const char *colon;
    char *err = NULL;

    memset(t, 0, sizeof(*t));
    while (i < len && isspace((unsigned char)s[i]))
        i++;
    while (len > i && isspace((unsigned char)s[len - 1]))
        len--;
    if (i < len && s[i] == '!') {
        t->is_exclusion = 1;
        i++;
    }
    if (i < len && s[i] == '&') {
        t->is_count = 1;
        i++;
    }
    s += i;
    len -= i;
    if (!len)
        return "empty target";
    colon = memchr(s, ':', len);
    nlen = colon ? (size_t)(colon - s) : len;
    t->var = bw_var_lookup(s, nlen);
    if (!t->var)
        return apr_psprintf(p, "unknown variable \"%.*s\"", (int)nlen, s);
    if (!colon) {
        if (t->var->flags & BW_VAR_SELECTOR_REQ)
            return apr_psprintf(p, "variable %s needs a selector (%s:name)", t->var->name, t->var->name);
        return NULL;
    }
    {
        const char *sel = colon + 1;
        size_t slen = len - nlen - 1;
        if (t->var->flags & BW_VAR_NO_SELECTOR)
            return apr_psprintf(p, "variable %s does not take a selector", t->var->name);
        if (slen >= 2 && sel[0] == '\'' && sel[slen - 1] == '\'') {
            sel++;
            slen -= 2;
        }
        if (!slen)
            return apr_psprintf(p, "empty selector after %s:", t->var->name);
        if (!strcmp(t->var->name, "XML") || slen < 2 || sel[0] != '/' || sel[slen - 1] != '/') {
            t->selector = bw_str_n(apr_pstrndup(p, sel, slen), slen);
            t->selector_hash = bw_key_hash(t->selector);
            if (bw_macro_text_has_vars(t->selector.data)) {
                t->selector_macro = bw_macro_compile(p, t->selector.data, &err);
                if (!t->selector_macro)
                    return err;
            }
            return NULL;
        }
        t->selector = bw_str_n(apr_pstrndup(p, sel, slen), slen);
        t->selector_re = bw_regex_compile(p, apr_pstrndup(p, sel + 1, slen - 2), 1, &err);
        if (!t->selector_re)
            return apr_psprintf(p, "%s: bad regex selector %.*s: %s", t->var->name, (int)slen, sel, err);
        t->selector_lit = bw_relit_compile(p, apr_pstrndup(p, sel + 1, slen - 2), 1);
    }
    return NULL;
}

const char *bw_targets_parse(apr_pool_t *p, const char *text, apr_array_header_t *out)
{
    const char *s = text;
    if (!*text)
        return "empty target list";
    while (*s) {
        const char *end;
        const char *err;
        next_part(s, &end);
        err = parse_one(p, s, (size_t)(end - s), apr_array_push(out));
        if (err)
            return err;
        s = *end ? end + 1 : end;
    }
    return NULL;
}

int bw_target_covers(const bw_target_t *t, const bw_varval_t *v, pcre2_match_data *md)
{
    if (t->var != v->var)
        return 0;
    if (t->selector_re)
        return bw_target_selects(t, v->key, md);
    if (!t->selector.len)
        return 1;
    return bw_str_eq_ci(t->selector, v->key);
}

int bw_target_selects(const bw_target_t *t, bw_str_t name, pcre2_match_data *md)
{
    return t->selector_lit ? bw_relit_match(t->selector_lit, name)
                           : bw_regex_match(t->selector_re, name, md) > 0;
}

const char *bw_varval_name(apr_pool_t *p, const bw_varval_t *v)
{
    size_t len;
    return bw_varval_name_n(p, v, &len);
}

const char *bw_varval_name_n(apr_pool_t *p, const bw_varval_t *v, size_t *out_len)
{
    int by_key = (v->var->flags & BW_VAR_NAMED_BY_KEY) != 0;
    size_t n = by_key ? 0 : strlen(v->var->name), len;
    const char *nul;
    char *out, *o;
    /* mod_security2 names a count by its variable, whatever the selector */
    if (v->is_count || !v->key.len) {
        *out_len = by_key ? strlen(v->var->name) : n;
        return v->var->name;
    }
    /* NAME ":" key, as "%s:%.*s" would print it (up to a NUL in key);
     * the key alone where it is the name (MATCHED_VARS) */
    nul = memchr(v->key.data, '\0', v->key.len);
    len = nul ? (size_t)(nul - v->key.data) : v->key.len;
    o = out = apr_palloc(p, n + 1 + len + 1);
    if (!by_key) {
        memcpy(o, v->var->name, n);
        o += n;
        *o++ = ':';
    }
    memcpy(o, v->key.data, len);
    o[len] = '\0';
    *out_len = (size_t)(o + len - out);
    return out;
}

void bw_var_emit(apr_array_header_t *out, const bw_var_def_t *def, bw_str_t key, bw_str_t value)
{
    bw_varval_t *v = bw_array_push(out);
    v->var = def;
    v->key = key;
    v->value = value;
    v->is_count = 0;
}
