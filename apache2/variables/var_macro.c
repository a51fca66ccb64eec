/*
 * Macros: %{VAR} and %{VAR.key} inside action values and operator
 * parameters (msg:'%{MATCHED_VAR}', setvar:tx.score=+%{tx.critical_anomaly_score},
 * @ge %{tx.inbound_anomaly_score_threshold}). The text is split into parts
 * once at start-up (here); expansion walks the parts and takes the first
 * value of each variable (run/bw_macro_expand.c). A name that is no variable
 * stays as written, as it does in ModSecurity.
 */
#include <string.h>
#include "base/bw_coll.h"
#include "variables/bw_var.h"

int bw_macro_text_has_vars(const char *text)
{
    const char *s = strstr(text, "%{");
    return s && strchr(s + 2, '}') != NULL;
}

static void add_literal(apr_array_header_t *parts, const char *s, size_t n)
{
    bw_macro_part_t *p;
    if (!n)
        return;
    p = apr_array_push(parts);
    memset(p, 0, sizeof(*p));
    p->literal = bw_str_n(s, n);
}

const bw_macro_t *bw_macro_compile(apr_pool_t *p, const char *text, char **err)
{
    bw_macro_t *m = apr_pcalloc(p, sizeof(*m));
    apr_array_header_t *parts = apr_array_make(p, 4, sizeof(bw_macro_part_t));
    const char *s = text, *lit = text;

    m->text = apr_pstrdup(p, text);
    while ((s = strstr(s, "%{")) != NULL) {
        const char *end = strchr(s + 2, '}');
        const char *name = s + 2, *dot;
        const bw_var_def_t *var;
        size_t nlen;
        if (!end)
            break;
        nlen = (size_t)(end - name);
        dot = memchr(name, '.', nlen);
        if (!dot)
            dot = memchr(name, ':', nlen);
        var = bw_var_lookup(name, dot ? (size_t)(dot - name) : nlen);
        if (!var) {
            s = end + 1;
            continue;
        }
        add_literal(parts, lit, (size_t)(s - lit));
        {
            bw_macro_part_t *mp = apr_array_push(parts);
            memset(mp, 0, sizeof(*mp));
            mp->var = var;
            if (dot)
                mp->key = bw_str_n(apr_pstrndup(p, dot + 1, (size_t)(end - dot - 1)),
                                   (size_t)(end - dot - 1));
            mp->key_hash = bw_key_hash(mp->key);
            m->has_vars = 1;
        }
        s = lit = end + 1;
    }
    add_literal(parts, lit, strlen(lit));
    m->nparts = parts->nelts;
    m->parts = (bw_macro_part_t *)parts->elts;
    (void)err;
    return m;
}

