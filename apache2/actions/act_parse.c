/*
 * Action lists: "id:942100,phase:2,block,capture,t:none,msg:'SQL…',setvar:'tx.x=+1'".
 * Splitting follows ModSecurity: a name ends at ':' or ','; a value is
 * either quoted with single quotes (inside, \' and \\ are the only escapes)
 * or runs to the next ','. Each action is looked up in the registry and
 * initialised into the rule at once, so a bad value is a start-up error
 * with the rule's file and line.
 */
#include <string.h>
#include <ctype.h>
#include "bw_internal.h"

static const char *read_value(apr_pool_t *p, const char **sp, char **out)
{
    const char *s = *sp;
    if (*s == '\'') {
        char *buf = apr_palloc(p, strlen(s) + 1), *o = buf;
        s++;
        for (;;) {
            if (!*s)
                return "missing closing quote in action value";
            if (*s == '\\') {
                if (s[1] != '\'' && s[1] != '\\')
                    return apr_psprintf(p, "invalid quoted pair \"\\%c\" in action value "
                                        "(only \\' and \\\\ are escapes)", s[1] ? s[1] : ' ');
                *o++ = s[1];
                s += 2;
                continue;
            }
            if (*s == '\'') {
                s++;
                break;
            }
            *o++ = *s++;
        }
        *o = '\0';
        *out = buf;
    } else {
        const char *start = s;
        while (*s && *s != ',')
            s++;
        {
            const char *end = s;
            while (end > start && isspace((unsigned char)end[-1]))
                end--;
            *out = apr_pstrndup(p, start, (apr_size_t)(end - start));
        }
    }
    *sp = s;
    return NULL;
}

const char *bw_actions_parse(apr_pool_t *p, bw_rule_t *rule, const char *text,
                             apr_array_header_t *out)
{
    const char *s = text;
    while (*s) {
        const char *name_start, *err;
        size_t nlen;
        char *value = NULL;
        const bw_action_def_t *def;
        bw_action_t *a;

        while (*s && (isspace((unsigned char)*s) || *s == ','))
            s++;
        if (!*s)
            break;
        name_start = s;
        while (*s && *s != ':' && *s != ',' && !isspace((unsigned char)*s))
            s++;
        nlen = (size_t)(s - name_start);
        while (*s && isspace((unsigned char)*s))
            s++;
        if (*s == ':') {
            s++;
            while (*s && isspace((unsigned char)*s))
                s++;
            err = read_value(p, &s, &value);
            if (err)
                return err;
        }
        while (*s && isspace((unsigned char)*s))
            s++;
        if (*s && *s != ',')
            return apr_psprintf(p, "unexpected text after action \"%.*s\": \"%s\"", (int)nlen, name_start, s);
        def = bw_action_lookup(name_start, nlen);
        if (!def)
            return apr_psprintf(p, "unknown action \"%.*s\"", (int)nlen, name_start);
        if (def->param == 1 && (!value || !*value))
            return apr_psprintf(p, "action %s needs a value (%s:…)", def->name, def->name);
        if (def->param == 0 && value)
            return apr_psprintf(p, "action %s takes no value", def->name);
        a = apr_array_push(out);
        a->def = def;
        a->param = value ? value : "";
        a->data = NULL;
        if (def->init) {
            err = def->init(rule, a, p);
            if (err)
                return apr_psprintf(p, "%s: %s", def->name, err);
        }
        if (def->kind == BW_AK_NONDISRUPTIVE && def->execute)
            *(bw_action_t *)apr_array_push(rule->run_actions) = *a;
    }
    return NULL;
}
