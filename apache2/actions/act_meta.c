/*
 * Actions that configure the rule itself: metadata (id, phase, msg,
 * logdata, severity, tag, rev, ver, maturity, accuracy), logging flags,
 * transformations (t:), flow (chain, skip, skipAfter), the disruptive
 * actions and their parameters (status, redirect…). Here their parameters
 * are checked and compiled; the rule reader (lang/bw_rule_actions.c) sets
 * the rule's fields from them. None of them runs per request (exec, which
 * does, has its own file: act_exec.c).
 */
#include <string.h>
#include <ctype.h>
#include "actions/bw_action.h"
#include "transformations/bw_tfn.h"

static const char *parse_int(apr_pool_t *p, const char *v, long lo, long hi, long *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < lo || n > hi)
        return apr_psprintf(p, "invalid value \"%s\" (expected a number from %ld to %ld)", v, lo, hi);
    *out = n;
    return NULL;
}

static const char *c_id(bw_action_t *a, apr_pool_t *p)
{
    return parse_int(p, a->param, 1, 0x7fffffffL, &a->num);
}

static const char *c_phase(bw_action_t *a, apr_pool_t *p)
{
    if (!strcasecmp(a->param, "request"))
        a->num = 2;
    else if (!strcasecmp(a->param, "response"))
        a->num = 4;
    else if (!strcasecmp(a->param, "logging"))
        a->num = 5;
    else
        return parse_int(p, a->param, 1, 5, &a->num);
    return NULL;
}

/* msg, logdata, redirect: a macro */
static const char *c_macro(bw_action_t *a, apr_pool_t *p)
{
    char *err = NULL;
    a->data = (void *)bw_macro_compile(p, a->param, &err);
    return a->data ? NULL : err;
}

static const char *const sev_names[] = {
    "EMERGENCY", "ALERT", "CRITICAL", "ERROR", "WARNING", "NOTICE", "INFO", "DEBUG", NULL
};

const char *bw_severity_name(int severity)
{
    return (severity >= 0 && severity <= 7) ? sev_names[severity] : NULL;
}

static const char *c_severity(bw_action_t *a, apr_pool_t *p)
{
    int i;
    for (i = 0; sev_names[i]; i++)
        if (!strcasecmp(sev_names[i], a->param)) {
            a->num = i;
            return NULL;
        }
    if (parse_int(p, a->param, 0, 7, &a->num))
        return apr_psprintf(p, "invalid severity \"%s\" (0-7 or EMERGENCY, ALERT, CRITICAL, "
                            "ERROR, WARNING, NOTICE, INFO, DEBUG)", a->param);
    return NULL;
}

static const char *c_digit(bw_action_t *a, apr_pool_t *p)
{
    return parse_int(p, a->param, 0, 9, &a->num);
}

static const char *c_skip(bw_action_t *a, apr_pool_t *p)
{
    return parse_int(p, a->param, 1, 100000, &a->num);
}

static const char *c_status(bw_action_t *a, apr_pool_t *p)
{
    return parse_int(p, a->param, 100, 599, &a->num);
}

static const char *c_pause(bw_action_t *a, apr_pool_t *p)
{
    return parse_int(p, a->param, 0, 600000, &a->num);
}

/* t:NAME — data is the transformation, NULL for t:none */
static const char *c_t(bw_action_t *a, apr_pool_t *p)
{
    if (!strcasecmp(a->param, "none"))
        return NULL;
    a->data = (void *)bw_tfn_lookup(a->param);
    return a->data ? NULL : apr_psprintf(p, "unknown transformation \"%s\"", a->param);
}

static const char *c_allow(bw_action_t *a, apr_pool_t *p)
{
    if (!*a->param)
        a->num = BW_ALLOW_ALL;
    else if (!strcasecmp(a->param, "phase"))
        a->num = BW_ALLOW_PHASE;
    else if (!strcasecmp(a->param, "request"))
        a->num = BW_ALLOW_REQUEST;
    else
        return apr_psprintf(p, "invalid value \"%s\" (allow, allow:phase or allow:request)", a->param);
    return NULL;
}

#define M(n, op, c, par) { n, BW_AK_META, par, op, c }
#define D(n, op, c, par) { n, BW_AK_DISRUPTIVE, par, op, c }
#define F(n, op, c, par) { n, BW_AK_FLOW, par, op, c }
#define A(n, op, c, par) { n, BW_AK_DATA, par, op, c }

const bw_action_def_t bw_actions_meta[] = {
    M("id", BW_A_ID, c_id, 1), M("phase", BW_A_PHASE, c_phase, 1),
    M("msg", BW_A_MSG, c_macro, 3), M("logdata", BW_A_LOGDATA, c_macro, 3),
    M("severity", BW_A_SEVERITY, c_severity, 1), M("tag", BW_A_TAG, NULL, 3),
    M("rev", BW_A_REV, NULL, 3), M("ver", BW_A_VER, NULL, 3),
    M("maturity", BW_A_MATURITY, c_digit, 1), M("accuracy", BW_A_ACCURACY, c_digit, 1),
    A("log", BW_A_LOG, NULL, 0), A("nolog", BW_A_NOLOG, NULL, 0),
    A("auditlog", BW_A_AUDITLOG, NULL, 0), A("noauditlog", BW_A_NOAUDITLOG, NULL, 0),
    A("capture", BW_A_CAPTURE, NULL, 0), A("multiMatch", BW_A_MULTIMATCH, NULL, 0),
    A("t", BW_A_T, c_t, 1), A("status", BW_A_STATUS, c_status, 1),
    A("xmlns", BW_A_ACCEPTED, NULL, 1), A("append", BW_A_ACCEPTED, NULL, 1),
    A("prepend", BW_A_ACCEPTED, NULL, 1),
    F("chain", BW_A_CHAIN, NULL, 0), F("skip", BW_A_SKIP, c_skip, 1),
    F("skipAfter", BW_A_SKIP_AFTER, NULL, 1),
    D("pass", BW_A_PASS, NULL, 0), D("deny", BW_A_DENY, NULL, 0), D("drop", BW_A_DROP, NULL, 0),
    D("block", BW_A_BLOCK, NULL, 0), D("allow", BW_A_ALLOW, c_allow, 2),
    D("redirect", BW_A_REDIRECT, c_macro, 1), D("proxy", BW_A_PROXY, c_macro, 1),
    D("pause", BW_A_PAUSE, c_pause, 1),
    { NULL, BW_AK_META, 0, BW_A_ACCEPTED, NULL }
};
