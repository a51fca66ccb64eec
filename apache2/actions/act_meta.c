/*
 * Actions that configure the rule itself at start-up: metadata (id, phase,
 * msg, logdata, severity, tag, rev, ver, maturity, accuracy), logging flags,
 * transformations (t:), flow (chain, skip, skipAfter), the disruptive
 * actions and their parameters (status, redirect…). None of them runs per
 * request; the rule engine reads the fields they set.
 */
#include <string.h>
#include <ctype.h>
#include "bw_internal.h"

static const char *parse_int(apr_pool_t *p, const char *v, long lo, long hi, long *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < lo || n > hi)
        return apr_psprintf(p, "invalid value \"%s\" (expected a number from %ld to %ld)", v, lo, hi);
    *out = n;
    return NULL;
}

static const char *i_id(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    long n = 0;
    const char *err = parse_int(p, a->param, 1, 0x7fffffffL, &n);
    if (err)
        return err;
    r->id = n;
    r->id_str = apr_ltoa(p, n);
    return NULL;
}

static const char *i_phase(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    long n = 0;
    if (!strcasecmp(a->param, "request"))
        n = 2;
    else if (!strcasecmp(a->param, "response"))
        n = 4;
    else if (!strcasecmp(a->param, "logging"))
        n = 5;
    else {
        const char *err = parse_int(p, a->param, 1, 5, &n);
        if (err)
            return err;
    }
    r->phase = (int)n;
    return NULL;
}

static const char *i_msg(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    char *err = NULL;
    r->msg = bw_macro_compile(p, a->param, &err);
    return r->msg ? NULL : err;
}

static const char *i_logdata(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    char *err = NULL;
    r->logdata = bw_macro_compile(p, a->param, &err);
    return r->logdata ? NULL : err;
}

static const char *const sev_names[] = {
    "EMERGENCY", "ALERT", "CRITICAL", "ERROR", "WARNING", "NOTICE", "INFO", "DEBUG", NULL
};

const char *bw_severity_name(int severity)
{
    return (severity >= 0 && severity <= 7) ? sev_names[severity] : NULL;
}

static const char *i_severity(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    int i;
    long n = 0;
    for (i = 0; sev_names[i]; i++)
        if (!strcasecmp(sev_names[i], a->param)) {
            r->severity = i;
            return NULL;
        }
    if (parse_int(p, a->param, 0, 7, &n))
        return apr_psprintf(p, "invalid severity \"%s\" (0-7 or EMERGENCY, ALERT, CRITICAL, "
                            "ERROR, WARNING, NOTICE, INFO, DEBUG)", a->param);
    r->severity = (int)n;
    return NULL;
}

static const char *i_tag(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    *(const char **)apr_array_push(r->tags) = a->param;
    return NULL;
}
static const char *i_rev(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->rev = a->param;
    return NULL;
}
static const char *i_ver(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->ver = a->param;
    return NULL;
}
static const char *i_maturity(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    long n = 0;
    const char *err = parse_int(p, a->param, 0, 9, &n);
    r->maturity = (int)n;
    return err;
}
static const char *i_accuracy(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    long n = 0;
    const char *err = parse_int(p, a->param, 0, 9, &n);
    r->accuracy = (int)n;
    return err;
}
static const char *i_log(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->log = 1;
    r->auditlog = 1;
    return NULL;
}
static const char *i_nolog(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->log = 0;
    r->auditlog = 0;
    return NULL;
}
static const char *i_auditlog(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->auditlog = 1;
    return NULL;
}
static const char *i_noauditlog(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->auditlog = 0;
    return NULL;
}
static const char *i_capture(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->capture = 1;
    return NULL;
}
static const char *i_multimatch(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->multi_match = 1;
    return NULL;
}
static const char *i_chain(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->chained = 1;
    return NULL;
}
static const char *i_skip(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    long n = 0;
    const char *err = parse_int(p, a->param, 1, 100000, &n);
    r->skip = (int)n;
    return err;
}
static const char *i_skip_after(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    r->skip_after = a->param;
    return NULL;
}

/* t:NAME — appended to the rule's chain; t:none drops what came before,
 * including what SecDefaultAction would add. */
static const char *i_t(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    const bw_tfn_def_t *def, **n;
    if (!strcasecmp(a->param, "none")) {
        r->ntfns = 0;
        r->tfns = NULL;
        r->tfn_none = 1;
        return NULL;
    }
    def = bw_tfn_lookup(a->param);
    if (!def)
        return apr_psprintf(p, "unknown transformation \"%s\"", a->param);
    n = apr_palloc(p, sizeof(*n) * (size_t)(r->ntfns + 1));
    if (r->ntfns)
        memcpy(n, r->tfns, sizeof(*n) * (size_t)r->ntfns);
    n[r->ntfns++] = def;
    r->tfns = n;
    return NULL;
}

static const char *set_disruptive(bw_rule_t *r, bw_disruptive_t d)
{
    r->disruptive = d;
    return NULL;
}
static const char *i_pass(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    return set_disruptive(r, BW_DA_PASS);
}
static const char *i_deny(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    return set_disruptive(r, BW_DA_DENY);
}
static const char *i_drop(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    return set_disruptive(r, BW_DA_DROP);
}
static const char *i_block(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    return set_disruptive(r, BW_DA_BLOCK);
}
static const char *i_allow(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    if (!*a->param)
        return set_disruptive(r, BW_DA_ALLOW);
    if (!strcasecmp(a->param, "phase"))
        return set_disruptive(r, BW_DA_ALLOW_PHASE);
    if (!strcasecmp(a->param, "request"))
        return set_disruptive(r, BW_DA_ALLOW_REQUEST);
    return apr_psprintf(p, "invalid value \"%s\" (allow, allow:phase or allow:request)", a->param);
}
static const char *i_redirect(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    char *err = NULL;
    r->redirect = bw_macro_compile(p, a->param, &err);
    return r->redirect ? set_disruptive(r, BW_DA_REDIRECT) : err;
}
static const char *i_proxy(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    return "proxy is not supported: route requests with mod_proxy's own configuration";
}
static const char *i_status(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    long n = 0;
    const char *err = parse_int(p, a->param, 100, 599, &n);
    r->status = (int)n;
    return err;
}
static const char *i_pause(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    long n = 0;
    return parse_int(p, a->param, 0, 600000, &n);
}
static const char *i_exec(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    return "exec is not supported: Bulwark does not run external programs";
}
static const char *i_accept(bw_rule_t *r, bw_action_t *a, apr_pool_t *p)
{
    return NULL;   /* parameters other actions read (xmlns), content injection */
}

#define M(n, i, par) { n, BW_AK_META, par, i, NULL }
#define D(n, i, par) { n, BW_AK_DISRUPTIVE, par, i, NULL }
#define F(n, i, par) { n, BW_AK_FLOW, par, i, NULL }
#define A(n, i, par) { n, BW_AK_DATA, par, i, NULL }

const bw_action_def_t bw_actions_meta[] = {
    M("id", i_id, 1), M("phase", i_phase, 1), M("msg", i_msg, 1), M("logdata", i_logdata, 1),
    M("severity", i_severity, 1), M("tag", i_tag, 1), M("rev", i_rev, 1), M("ver", i_ver, 1),
    M("maturity", i_maturity, 1), M("accuracy", i_accuracy, 1),
    A("log", i_log, 0), A("nolog", i_nolog, 0), A("auditlog", i_auditlog, 0),
    A("noauditlog", i_noauditlog, 0), A("capture", i_capture, 0), A("multiMatch", i_multimatch, 0),
    A("t", i_t, 1), A("status", i_status, 1), A("xmlns", i_accept, 1),
    A("append", i_accept, 1), A("prepend", i_accept, 1),
    F("chain", i_chain, 0), F("skip", i_skip, 1), F("skipAfter", i_skip_after, 1),
    D("pass", i_pass, 0), D("deny", i_deny, 0), D("drop", i_drop, 0), D("block", i_block, 0),
    D("allow", i_allow, 2), D("redirect", i_redirect, 1), D("proxy", i_proxy, 1),
    D("pause", i_pause, 1), A("exec", i_exec, 1),
    { NULL, BW_AK_META, 0, NULL, NULL }
};
