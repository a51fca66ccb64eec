/*
 * ctl: — change the engine's behaviour for the current transaction only:
 * ruleEngine, ruleRemoveById/ByTag/ByMsg, ruleRemoveTargetById/ByTag/ByMsg,
 * requestBodyProcessor, requestBodyAccess, requestBodyLimit,
 * responseBodyAccess, responseBodyLimit, forceRequestBodyVariable,
 * auditEngine, auditLogParts, debugLogLevel, hashEngine (sign this
 * response's links), hashEnforcement (check this request's signature). Everything is parsed here, at
 * start-up (ids, regexes, targets); at run time the action only records its
 * effect in the transaction (run/bw_run_actions.c).
 */
#include <string.h>
#include <apr_lib.h>
#include "actions/bw_action.h"
#include "bw_engine.h"

static const struct {
    const char *name;
    bw_ctl_kind_t kind;
} ctl_names[] = {
    { "ruleEngine", BW_CTL_RULE_ENGINE }, { "ruleRemoveById", BW_CTL_REMOVE_ID },
    { "ruleRemoveByTag", BW_CTL_REMOVE_TAG }, { "ruleRemoveByMsg", BW_CTL_REMOVE_MSG },
    { "ruleRemoveTargetById", BW_CTL_REMOVE_TARGET_ID },
    { "ruleRemoveTargetByTag", BW_CTL_REMOVE_TARGET_TAG },
    { "ruleRemoveTargetByMsg", BW_CTL_REMOVE_TARGET_MSG },
    { "requestBodyProcessor", BW_CTL_REQBODY_PROCESSOR }, { "requestBodyAccess", BW_CTL_REQBODY_ACCESS },
    { "requestBodyLimit", BW_CTL_REQBODY_LIMIT }, { "responseBodyAccess", BW_CTL_RESBODY_ACCESS },
    { "responseBodyLimit", BW_CTL_RESBODY_LIMIT },
    { "forceRequestBodyVariable", BW_CTL_FORCE_REQBODY_VAR }, { "auditEngine", BW_CTL_AUDIT_ENGINE },
    { "auditLogParts", BW_CTL_AUDIT_PARTS }, { "debugLogLevel", BW_CTL_IGNORED },
    { "hashEngine", BW_CTL_HASH_ENGINE }, { "hashEnforcement", BW_CTL_HASH_ENFORCEMENT },
    { NULL, BW_CTL_IGNORED }
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

static const char *init_target_removal(bw_ctl_t *c, const char *v, apr_pool_t *p)
{
    const char *semi = strchr(v, ';');
    char *which, *err = NULL;
    const char *e;
    if (!semi)
        return apr_psprintf(p, "invalid value \"%s\" (expected RULE;TARGET)", v);
    which = apr_pstrndup(p, v, (apr_size_t)(semi - v));
    if (c->kind == BW_CTL_REMOVE_TARGET_ID) {
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

static const char *init_value(bw_ctl_t *c, const char *v, apr_pool_t *p)
{
    char *err = NULL;
    switch (c->kind) {
    case BW_CTL_RULE_ENGINE:
        if (!strcasecmp(v, "On")) c->ival = BW_ENGINE_ON;
        else if (!strcasecmp(v, "Off")) c->ival = BW_ENGINE_OFF;
        else if (!strcasecmp(v, "DetectionOnly")) c->ival = BW_ENGINE_DETECTION_ONLY;
        else return apr_psprintf(p, "invalid value \"%s\" (On, Off or DetectionOnly)", v);
        return NULL;
    case BW_CTL_REMOVE_ID:
        c->ranges = apr_array_make(p, 2, sizeof(bw_idrange_t));
        return bw_idranges_parse(p, v, c->ranges);
    case BW_CTL_REMOVE_TAG:
    case BW_CTL_REMOVE_MSG:
        c->re = bw_regex_compile(p, v, 0, &err);
        return c->re ? NULL : err;
    case BW_CTL_REMOVE_TARGET_ID:
    case BW_CTL_REMOVE_TARGET_TAG:
    case BW_CTL_REMOVE_TARGET_MSG:
        return init_target_removal(c, v, p);
    case BW_CTL_REQBODY_PROCESSOR:
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
    case BW_CTL_REQBODY_ACCESS:
    case BW_CTL_RESBODY_ACCESS:
    case BW_CTL_FORCE_REQBODY_VAR:
    case BW_CTL_HASH_ENGINE:
    case BW_CTL_HASH_ENFORCEMENT:
        return on_off(p, v, &c->ival);
    case BW_CTL_REQBODY_LIMIT:
    case BW_CTL_RESBODY_LIMIT:
        c->ival = atoi(v);
        return c->ival > 0 ? NULL : apr_psprintf(p, "invalid limit \"%s\"", v);
    case BW_CTL_AUDIT_ENGINE:
        if (!strcasecmp(v, "On")) c->ival = 1;
        else if (!strcasecmp(v, "Off")) c->ival = 0;
        else if (!strcasecmp(v, "RelevantOnly")) c->ival = 2;
        else return apr_psprintf(p, "invalid value \"%s\" (On, Off or RelevantOnly)", v);
        return NULL;
    case BW_CTL_AUDIT_PARTS:
        c->sval = v;
        return NULL;
    default:
        return NULL;
    }
}

static const char *i_ctl(bw_action_t *a, apr_pool_t *p)
{
    bw_ctl_t *c = apr_pcalloc(p, sizeof(*c));
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

const bw_action_def_t bw_actions_ctl[] = {
    { "ctl", BW_AK_NONDISRUPTIVE, 1, BW_A_CTL, i_ctl },
    { NULL, BW_AK_META, 0, BW_A_ACCEPTED, NULL }
};
