/*
 * Action lists: "id:942100,phase:2,block,capture,t:none,msg:'SQL…',setvar:'tx.x=+1'".
 * Splitting follows ModSecurity: a name ends at ':' or ','; a value is
 * either quoted with single quotes (inside, \' and \\ are the only escapes)
 * or runs to the next ','. Each action is looked up in the registry
 * (actions/), its parameter compiled, and applied to the rule at once, so a
 * bad value is a start-up error with the rule's file and line.
 */
#include <string.h>
#include <ctype.h>
#include "lang/bw_lang.h"
#include "operators/bw_lua.h"

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

/* t:NAME appends to the rule's chain; t:none drops what came before,
 * including what SecDefaultAction would add. */
static void add_tfn(apr_pool_t *p, bw_rule_t *r, const bw_tfn_def_t *def)
{
    const bw_tfn_def_t **n;
    if (!def) {
        r->ntfns = 0;
        r->tfns = NULL;
        r->tfn_none = 1;
        return;
    }
    n = apr_palloc(p, sizeof(*n) * (size_t)(r->ntfns + 1));
    if (r->ntfns)
        memcpy(n, r->tfns, sizeof(*n) * (size_t)r->ntfns);
    n[r->ntfns++] = def;
    r->tfns = n;
}

static bw_disruptive_t allow_kind(long n)
{
    return n == BW_ALLOW_PHASE ? BW_DA_ALLOW_PHASE
         : n == BW_ALLOW_REQUEST ? BW_DA_ALLOW_REQUEST : BW_DA_ALLOW;
}

/* What an action that configures the rule does to it. */
static void apply(bw_rule_t *r, const bw_action_t *a, apr_pool_t *p)
{
    switch (a->def->op) {
    case BW_A_ID: r->id = a->num; r->id_str = apr_ltoa(p, a->num); break;
    case BW_A_PHASE: r->phase = (int)a->num; break;
    case BW_A_MSG: r->msg = a->data; break;
    case BW_A_LOGDATA: r->logdata = a->data; break;
    case BW_A_SEVERITY: r->severity = (int)a->num; break;
    case BW_A_TAG: *(const char **)apr_array_push(r->tags) = a->param; break;
    case BW_A_REV: r->rev = a->param; break;
    case BW_A_VER: r->ver = a->param; break;
    case BW_A_MATURITY: r->maturity = (int)a->num; break;
    case BW_A_ACCURACY: r->accuracy = (int)a->num; break;
    case BW_A_LOG: r->log = 1; r->auditlog = 1; break;
    case BW_A_NOLOG: r->log = 0; r->auditlog = 0; break;
    case BW_A_AUDITLOG: r->auditlog = 1; break;
    case BW_A_NOAUDITLOG: r->auditlog = 0; break;
    case BW_A_CAPTURE: r->capture = 1; break;
    case BW_A_MULTIMATCH: r->multi_match = 1; break;
    case BW_A_T: add_tfn(p, r, a->data); break;
    case BW_A_STATUS: r->status = (int)a->num; break;
    case BW_A_CHAIN: r->chained = 1; break;
    case BW_A_SKIP: r->skip = (int)a->num; break;
    case BW_A_SKIP_AFTER: r->skip_after = a->param; break;
    case BW_A_PASS: r->disruptive = BW_DA_PASS; break;
    case BW_A_DENY: r->disruptive = BW_DA_DENY; break;
    case BW_A_DROP: r->disruptive = BW_DA_DROP; break;
    case BW_A_BLOCK: r->disruptive = BW_DA_BLOCK; break;
    case BW_A_ALLOW: r->disruptive = allow_kind(a->num); break;
    case BW_A_REDIRECT: r->redirect = a->data; r->disruptive = BW_DA_REDIRECT; break;
    case BW_A_PROXY: r->redirect = a->data; r->disruptive = BW_DA_PROXY; break;
    default: break;   /* pause, xmlns, append, prepend: accepted, no effect */
    }
}

/* exec:x.lua: compile the script, its path relative to the rule's file. */
static const char *exec_script(apr_pool_t *p, bw_rule_t *rule, bw_action_t *a)
{
    char *err = NULL;
    a->data = bw_lua_script_load(p, bw_op_data_path(p, rule->file, a->param), &err);
    if (!a->data)
        return err;
    rule->lua = 1;
    return NULL;
}

const char *bw_rule_forbidden_program(apr_pool_t *p, const bw_rule_t *r, const bw_settings_t *s)
{
    const char *path = NULL;
    int k;
    if (s->external_programs != 0 || r->kind == BW_RULE_MARKER)
        return NULL;
    if (r->kind == BW_RULE_SECRULE)
        path = bw_op_program(&r->op);
    for (k = 0; !path && k < r->run_actions->nelts; k++)
        path = bw_action_program(&((const bw_action_t *)r->run_actions->elts)[k]);
    return path ? apr_psprintf(p, "the rule runs the external program \"%s\", which "
                               "SecExternalPrograms Off forbids (SecExternalPrograms On "
                               "allows it)", path) : NULL;
}

const char *bw_rule_apply_actions(apr_pool_t *p, bw_rule_t *rule, const char *text,
                                  apr_array_header_t *out)
{
    const char *s = text;
    while (*s) {
        const char *name_start, *err;
        size_t nlen;
        char *value = NULL;
        int quoted = 0;
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
            quoted = *s == '\'';
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
        if ((def->param == 1 || def->param == 3) && (!value || !*value)
            && !(def->param == 3 && quoted))
            return apr_psprintf(p, "action %s needs a value (%s:…)", def->name, def->name);
        if (def->param == 0 && value)
            return apr_psprintf(p, "action %s takes no value", def->name);
        a = apr_array_push(out);
        a->def = def;
        a->param = value ? value : "";
        a->data = NULL;
        a->num = 0;
        a->file = rule->file;
        err = def->compile ? def->compile(a, p) : NULL;
        if (!err && def->op == BW_A_EXEC && a->num == BW_EXEC_LUA)
            err = exec_script(p, rule, a);
        if (err)
            return apr_psprintf(p, "%s: %s", def->name, err);
        if (def->kind == BW_AK_NONDISRUPTIVE)
            *(bw_action_t *)apr_array_push(rule->run_actions) = *a;
        else
            apply(rule, a, p);
    }
    return NULL;
}
