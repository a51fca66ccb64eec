/*
 * ctl: — change the engine's behaviour for the current transaction only:
 * ruleEngine, ruleRemoveById/ByTag/ByMsg, ruleRemoveTargetById/ByTag/ByMsg,
 * requestBodyProcessor, requestBodyAccess, requestBodyLimit,
 * responseBodyAccess, responseBodyLimit, forceRequestBodyVariable,
 * auditEngine, auditLogParts, debugLogLevel. Everything is parsed at start-up
 * (ids, regexes, targets); at run time the action only records its effect in
 * the transaction.
 */
#include <string.h>
#include <apr_lib.h>
#include "bw_internal.h"

typedef enum {
    CTL_RULE_ENGINE, CTL_REMOVE_ID, CTL_REMOVE_TAG, CTL_REMOVE_MSG,
    CTL_REMOVE_TARGET_ID, CTL_REMOVE_TARGET_TAG, CTL_REMOVE_TARGET_MSG,
    CTL_REQBODY_PROCESSOR, CTL_REQBODY_ACCESS, CTL_REQBODY_LIMIT, CTL_RESBODY_ACCESS,
    CTL_RESBODY_LIMIT, CTL_FORCE_REQBODY_VAR, CTL_AUDIT_ENGINE, CTL_AUDIT_PARTS,
    CTL_IGNORED
} ctl_kind_t;

typedef struct {
    ctl_kind_t kind;
    int ival;
    const char *sval;
    apr_array_header_t *ranges;   /* bw_idrange_t */
    pcre2_code *re;
    apr_array_header_t *targets;  /* bw_target_t */
} ctl_t;

static const struct {
    const char *name;
    ctl_kind_t kind;
} ctl_names[] = {
    { "ruleEngine", CTL_RULE_ENGINE }, { "ruleRemoveById", CTL_REMOVE_ID },
    { "ruleRemoveByTag", CTL_REMOVE_TAG }, { "ruleRemoveByMsg", CTL_REMOVE_MSG },
    { "ruleRemoveTargetById", CTL_REMOVE_TARGET_ID },
    { "ruleRemoveTargetByTag", CTL_REMOVE_TARGET_TAG },
    { "ruleRemoveTargetByMsg", CTL_REMOVE_TARGET_MSG },
    { "requestBodyProcessor", CTL_REQBODY_PROCESSOR }, { "requestBodyAccess", CTL_REQBODY_ACCESS },
    { "requestBodyLimit", CTL_REQBODY_LIMIT }, { "responseBodyAccess", CTL_RESBODY_ACCESS },
    { "responseBodyLimit", CTL_RESBODY_LIMIT },
    { "forceRequestBodyVariable", CTL_FORCE_REQBODY_VAR }, { "auditEngine", CTL_AUDIT_ENGINE },
    { "auditLogParts", CTL_AUDIT_PARTS }, { "debugLogLevel", CTL_IGNORED },
    { "hashEngine", CTL_IGNORED }, { "hashEnforcement", CTL_IGNORED },
    { NULL, CTL_IGNORED }
};

static const char *on_off(apr_pool_t *p, const char *v, int *out)
{
    if (!strcasecmp(v, "On"))
        *out = 1;
    else if (!strcasecmp(v, "Off"))
        *out = 0;
    else
        return apr_psprintf(p, "invalid value \"%s\" (On or Off)", v);
    return NULL;
}

static const char *init_target_removal(ctl_t *c, const char *v, apr_pool_t *p)
{
    const char *semi = strchr(v, ';');
    char *which, *err = NULL;
    const char *e;
    if (!semi)
        return apr_psprintf(p, "invalid value \"%s\" (expected RULE;TARGET)", v);
    which = apr_pstrndup(p, v, (apr_size_t)(semi - v));
    if (c->kind == CTL_REMOVE_TARGET_ID) {
        c->ranges = apr_array_make(p, 1, sizeof(bw_idrange_t));
        e = bw_idranges_parse(p, which, c->ranges);
        if (e)
            return e;
    } else {
        c->re = bw_regex_compile(p, which, 0, &err);
        if (!c->re)
            return err;
    }
    c->targets = apr_array_make(p, 1, sizeof(bw_target_t));
    return bw_targets_parse(p, semi + 1, c->targets);
}

static const char *init_value(ctl_t *c, const char *v, apr_pool_t *p)
{
    char *err = NULL;
    switch (c->kind) {
    case CTL_RULE_ENGINE:
        if (!strcasecmp(v, "On")) c->ival = BW_ENGINE_ON;
        else if (!strcasecmp(v, "Off")) c->ival = BW_ENGINE_OFF;
        else if (!strcasecmp(v, "DetectionOnly")) c->ival = BW_ENGINE_DETECTION_ONLY;
        else return apr_psprintf(p, "invalid value \"%s\" (On, Off or DetectionOnly)", v);
        return NULL;
    case CTL_REMOVE_ID:
        c->ranges = apr_array_make(p, 2, sizeof(bw_idrange_t));
        return bw_idranges_parse(p, v, c->ranges);
    case CTL_REMOVE_TAG:
    case CTL_REMOVE_MSG:
        c->re = bw_regex_compile(p, v, 0, &err);
        return c->re ? NULL : err;
    case CTL_REMOVE_TARGET_ID:
    case CTL_REMOVE_TARGET_TAG:
    case CTL_REMOVE_TARGET_MSG:
        return init_target_removal(c, v, p);
    case CTL_REQBODY_PROCESSOR:
        if (strcasecmp(v, "URLENCODED") && strcasecmp(v, "MULTIPART") && strcasecmp(v, "XML")
            && strcasecmp(v, "JSON"))
            return apr_psprintf(p, "unknown request body processor \"%s\" (URLENCODED, "
                                "MULTIPART, XML or JSON)", v);
        c->sval = apr_pstrdup(p, v);
        {
            char *u;
            for (u = (char *)c->sval; *u; u++)
                *u = (char)apr_toupper(*u);
        }
        return NULL;
    case CTL_REQBODY_ACCESS:
    case CTL_RESBODY_ACCESS:
    case CTL_FORCE_REQBODY_VAR:
        return on_off(p, v, &c->ival);
    case CTL_REQBODY_LIMIT:
    case CTL_RESBODY_LIMIT:
        c->ival = atoi(v);
        return c->ival > 0 ? NULL : apr_psprintf(p, "invalid limit \"%s\"", v);
    case CTL_AUDIT_ENGINE:
        if (!strcasecmp(v, "On")) c->ival = 1;
        else if (!strcasecmp(v, "Off")) c->ival = 0;
        else if (!strcasecmp(v, "RelevantOnly")) c->ival = 2;
        else return apr_psprintf(p, "invalid value \"%s\" (On, Off or RelevantOnly)", v);
        return NULL;
    case CTL_AUDIT_PARTS:
        c->sval = v;
        return NULL;
    default:
        return NULL;
    }
}

static const char *i_ctl(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    ctl_t *c = apr_pcalloc(p, sizeof(*c));
    const char *eq = strchr(a->param, '=');
    int i;
    if (!eq)
        return apr_psprintf(p, "invalid value \"%s\" (expected option=value)", a->param);
    for (i = 0; ctl_names[i].name; i++)
        if (strlen(ctl_names[i].name) == (size_t)(eq - a->param)
            && !strncasecmp(ctl_names[i].name, a->param, (size_t)(eq - a->param)))
            break;
    if (!ctl_names[i].name)
        return apr_psprintf(p, "unknown option \"%.*s\"", (int)(eq - a->param), a->param);
    c->kind = ctl_names[i].kind;
    a->data = c;
    return init_value(c, eq + 1, p);
}

static void add_removal(bw_tx_t *tx, int kind, const ctl_t *c)
{
    int i, n = c->targets ? c->targets->nelts : 1;
    for (i = 0; i < n; i++) {
        bw_removal_t *rm = apr_array_push(tx->removals);
        memset(rm, 0, sizeof(*rm));
        rm->kind = kind;
        rm->re = c->re;
        rm->ranges = c->ranges;
        rm->target = c->targets ? &((const bw_target_t *)c->targets->elts)[i] : NULL;
    }
}

static void audit_parts(bw_tx_t *tx, const char *spec)
{
    const char *cur = tx->audit_parts ? tx->audit_parts : tx->cfg->audit_parts;
    char buf[32];
    size_t n = 0;
    const char *s;
    if (*spec != '+' && *spec != '-') {
        tx->audit_parts = spec;
        return;
    }
    for (s = cur; *s && n < sizeof(buf) - 1; s++)
        if (!(*spec == '-' && strchr(spec + 1, *s)))
            buf[n++] = *s;
    if (*spec == '+')
        for (s = spec + 1; *s && n < sizeof(buf) - 1; s++)
            if (!memchr(buf, *s, n))
                buf[n++] = *s;
    tx->audit_parts = apr_pstrndup(tx->pool, buf, n);
}

static void x_ctl(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const ctl_t *c = a->data;
    switch (c->kind) {
    case CTL_RULE_ENGINE: tx->engine_mode = c->ival; break;
    case CTL_REMOVE_ID: case CTL_REMOVE_TARGET_ID: add_removal(tx, 0, c); break;
    case CTL_REMOVE_TAG: case CTL_REMOVE_TARGET_TAG: add_removal(tx, 1, c); break;
    case CTL_REMOVE_MSG: case CTL_REMOVE_TARGET_MSG: add_removal(tx, 2, c); break;
    case CTL_REQBODY_PROCESSOR:
        tx->reqbody_processor = c->sval;
        tx->reqbody_processor_set = 1;
        break;
    case CTL_REQBODY_ACCESS: tx->reqbody_access = c->ival; break;
    case CTL_RESBODY_ACCESS: tx->resbody_access = c->ival; break;
    case CTL_REQBODY_LIMIT: tx->reqbody_limit = c->ival; break;
    case CTL_RESBODY_LIMIT: tx->resbody_limit = c->ival; break;
    case CTL_FORCE_REQBODY_VAR: tx->force_reqbody_var = c->ival; break;
    case CTL_AUDIT_ENGINE: tx->audit_engine = c->ival; break;
    case CTL_AUDIT_PARTS: audit_parts(tx, c->sval); break;
    default: break;
    }
}

const bw_action_def_t bw_actions_ctl[] = {
    { "ctl", BW_AK_NONDISRUPTIVE, 1, i_ctl, x_ctl },
    { NULL, BW_AK_META, 0, NULL, NULL }
};
