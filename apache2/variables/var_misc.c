/*
 * Variables that are not parsed from the request: the response, keyed
 * collections (TX, IP, SESSION, USER, GLOBAL, RESOURCE, GEO), ENV, RULE,
 * MATCHED_*, time, and engine state (HIGHEST_SEVERITY, DURATION…).
 */
#include <string.h>
#include <apr_time.h>
#include "variables/bw_var.h"

static void g_coll(bw_tx_t *tx, const bw_var_def_t *d, bw_str_t sel, apr_array_header_t *out)
{
    bw_coll_t *c = bw_tx_collection(tx, (const char *)d->data, 0);
    int i;
    if (!c)
        return;
    if (sel.len) {
        const bw_kv_t *kv = bw_coll_get(c, sel);
        if (kv)
            bw_var_emit(out, d, kv->name, kv->value);
        return;
    }
    for (i = 0; i < c->order->nelts; i++) {
        const bw_kv_t *kv = ((const bw_kv_t **)c->order->elts)[i];
        if (kv->name.data)   /* not unset since */
            bw_var_emit(out, d, kv->name, kv->value);
    }
}

static void g_env(bw_tx_t *tx, const bw_var_def_t *d, bw_str_t sel, apr_array_header_t *out)
{
    const apr_array_header_t *arr;
    int i;
    if (!tx->env)
        return;
    arr = apr_table_elts(tx->env);
    for (i = 0; i < arr->nelts; i++) {
        const apr_table_entry_t *e = &((const apr_table_entry_t *)arr->elts)[i];
        bw_str_t k = bw_str_make(e->key);
        if (!e->key || (sel.len && !bw_str_eq(sel, k)))
            continue;
        bw_var_emit(out, d, k, bw_str_make(e->val));
    }
}

static void g_res_headers(bw_tx_t *tx, const bw_var_def_t *d, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->res.headers, sel, 0, out);
}
static void g_res_headers_names(bw_tx_t *tx, const bw_var_def_t *d, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->res.headers, sel, 1, out);
}

static void g_rule(bw_tx_t *tx, const bw_var_def_t *d, bw_str_t sel, apr_array_header_t *out)
{
    const bw_rule_t *r = tx->cur_rule ? tx->cur_rule->chain_head : NULL;
    bw_str_t v = bw_str_n("", 0);
    if (!r || !sel.len)
        return;
    if (bw_str_eq_cstr_ci(sel, "id"))
        v = bw_str_make(r->id_str);
    else if (bw_str_eq_cstr_ci(sel, "msg"))
        v = r->msg ? bw_macro_expand(tx, r->msg) : v;
    else if (bw_str_eq_cstr_ci(sel, "logdata"))
        v = r->logdata ? bw_macro_expand(tx, r->logdata) : v;
    else if (bw_str_eq_cstr_ci(sel, "rev"))
        v = bw_str_make(r->rev);
    else if (bw_str_eq_cstr_ci(sel, "ver"))
        v = bw_str_make(r->ver);
    else if (bw_str_eq_cstr_ci(sel, "severity"))
        v = r->severity >= 0 ? bw_str_make(apr_itoa(tx->pool, r->severity)) : v;
    else if (bw_str_eq_cstr_ci(sel, "phase"))
        v = bw_str_make(apr_itoa(tx->pool, r->phase));
    else if (bw_str_eq_cstr_ci(sel, "maturity"))
        v = r->maturity >= 0 ? bw_str_make(apr_itoa(tx->pool, r->maturity)) : v;
    else if (bw_str_eq_cstr_ci(sel, "accuracy"))
        v = r->accuracy >= 0 ? bw_str_make(apr_itoa(tx->pool, r->accuracy)) : v;
    else
        return;
    bw_var_emit(out, d, sel, v);
}

static void g_matched_vars(bw_tx_t *tx, const bw_var_def_t *d, bw_str_t sel, apr_array_header_t *out)
{
    int i, names = !strcmp(d->name, "MATCHED_VARS_NAMES");
    if (!tx->matched_vars)
        return;
    for (i = 0; i < tx->matched_vars->nelts; i++) {
        const bw_varval_t *m = &((const bw_varval_t *)tx->matched_vars->elts)[i];
        const char *full = bw_varval_name(tx->pool, m);
        bw_str_t fn = bw_str_make(full);
        if (sel.len && !bw_str_eq_ci(sel, fn))
            continue;
        bw_var_emit(out, d, fn, names ? fn : m->value);
    }
}

static int s_matched_var(bw_tx_t *tx, bw_str_t *v)
{
    if (!tx->has_matched_var)
        return 0;
    *v = tx->matched_var.value;
    return 1;
}
static int s_matched_var_name(bw_tx_t *tx, bw_str_t *v)
{
    const char *name = bw_tx_matched_var_name(tx);
    if (!name)
        return 0;
    *v = bw_str_make(name);
    return 1;
}
static int s_res_status(bw_tx_t *tx, bw_str_t *v)
{
    if (!tx->have_response)
        return 0;
    *v = bw_str_make(apr_itoa(tx->pool, tx->res.status));
    return 1;
}
static int s_res_protocol(bw_tx_t *tx, bw_str_t *v)
{
    if (!tx->have_response)
        return 0;
    *v = tx->res.protocol;
    return 1;
}
static int s_status_line(bw_tx_t *tx, bw_str_t *v)
{
    if (!tx->have_response)
        return 0;
    *v = tx->res.status_line;
    return 1;
}
static int res_header(bw_tx_t *tx, const char *name, bw_str_t *v)
{
    int i;
    if (!tx->res.headers)
        return 0;
    for (i = 0; i < tx->res.headers->nelts; i++) {
        const bw_kv_t *kv = &((const bw_kv_t *)tx->res.headers->elts)[i];
        if (bw_str_eq_cstr_ci(kv->name, name)) {
            *v = kv->value;
            return 1;
        }
    }
    return 0;
}
static int s_res_ctype(bw_tx_t *tx, bw_str_t *v)
{
    return res_header(tx, "Content-Type", v);
}
static int s_res_clen(bw_tx_t *tx, bw_str_t *v)
{
    return res_header(tx, "Content-Length", v);
}
static int s_res_body(bw_tx_t *tx, bw_str_t *v)
{
    if (!tx->resbody)
        return 0;
    *v = bw_str_n(tx->resbody, tx->resbody_len);
    return 1;
}
static int s_outbound_error(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(tx->resbody_truncated ? "1" : "0");
    return 1;
}
static int s_highest_severity(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(apr_itoa(tx->pool, tx->highest_severity));
    return 1;
}
static int s_duration(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(apr_psprintf(tx->pool, "%" APR_TIME_T_FMT, apr_time_now() - tx->req.start));
    return 1;
}

static int time_field(bw_tx_t *tx, bw_str_t *v, int which)
{
    apr_time_exp_t t;
    const char *s;
    apr_time_exp_lt(&t, apr_time_now());
    switch (which) {
    case 0: s = apr_psprintf(tx->pool, "%02d:%02d:%02d", t.tm_hour, t.tm_min, t.tm_sec); break;
    case 1: s = apr_psprintf(tx->pool, "%02d", t.tm_mday); break;
    case 2: s = apr_psprintf(tx->pool, "%" APR_TIME_T_FMT, apr_time_sec(apr_time_now())); break;
    case 3: s = apr_psprintf(tx->pool, "%02d", t.tm_hour); break;
    case 4: s = apr_psprintf(tx->pool, "%02d", t.tm_min); break;
    case 5: s = apr_psprintf(tx->pool, "%02d", t.tm_mon); break;
    case 6: s = apr_psprintf(tx->pool, "%02d", t.tm_sec); break;
    case 7: s = apr_psprintf(tx->pool, "%d", t.tm_wday); break;
    default: s = apr_psprintf(tx->pool, "%04d", t.tm_year + 1900); break;
    }
    *v = bw_str_make(s);
    return 1;
}
#define TIMEF(fn, k) static int fn(bw_tx_t *tx, bw_str_t *v) { return time_field(tx, v, k); }
TIMEF(s_time, 0)
TIMEF(s_time_day, 1)
TIMEF(s_time_epoch, 2)
TIMEF(s_time_hour, 3)
TIMEF(s_time_min, 4)
TIMEF(s_time_mon, 5)
TIMEF(s_time_sec, 6)
TIMEF(s_time_wday, 7)
TIMEF(s_time_year, 8)

static int s_build(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make("020907100");   /* the ModSecurity version CRS checks for: 2.9.7 */
    return 1;
}
static int s_sessionid(bw_tx_t *tx, bw_str_t *v)
{
    bw_coll_t *c = bw_tx_collection(tx, "SESSION", 0);
    const bw_kv_t *kv = c ? bw_coll_get(c, bw_str_make("KEY")) : NULL;
    *v = kv ? kv->value : bw_str_n("", 0);
    return 1;
}
static int s_userid(bw_tx_t *tx, bw_str_t *v)
{
    bw_coll_t *c = bw_tx_collection(tx, "USER", 0);
    const bw_kv_t *kv = c ? bw_coll_get(c, bw_str_make("KEY")) : NULL;
    *v = kv ? kv->value : bw_str_n("", 0);
    return 1;
}
static int s_webappid(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make(tx->cfg->web_app_id ? tx->cfg->web_app_id : "default");
    return 1;
}
static int s_zero(bw_tx_t *tx, bw_str_t *v)
{
    *v = bw_str_make("0");
    return 1;
}
static int s_none(bw_tx_t *tx, bw_str_t *v)
{
    return 0;
}

#define S(name, fn) { name, BW_VAR_NO_SELECTOR, bw_var_gen_scalar, (const void *)fn }
#define K(name) { name, BW_VAR_COLLECTION | BW_VAR_TX_COLL, g_coll, name }

const bw_var_def_t bw_vars_misc[] = {
    K("TX"), K("IP"), K("SESSION"), K("USER"), K("GLOBAL"), K("RESOURCE"), K("GEO"),
    { "ENV", BW_VAR_COLLECTION, g_env, NULL },
    { "RULE", BW_VAR_COLLECTION | BW_VAR_SELECTOR_REQ, g_rule, NULL },
    { "MATCHED_VARS", BW_VAR_COLLECTION, g_matched_vars, NULL },
    { "MATCHED_VARS_NAMES", BW_VAR_COLLECTION, g_matched_vars, NULL },
    { "RESPONSE_HEADERS", BW_VAR_COLLECTION, g_res_headers, NULL },
    { "RESPONSE_HEADERS_NAMES", BW_VAR_COLLECTION, g_res_headers_names, NULL },
    S("MATCHED_VAR", s_matched_var), S("MATCHED_VAR_NAME", s_matched_var_name),
    S("RESPONSE_STATUS", s_res_status), S("RESPONSE_PROTOCOL", s_res_protocol),
    S("STATUS_LINE", s_status_line), S("RESPONSE_CONTENT_TYPE", s_res_ctype),
    S("RESPONSE_CONTENT_LENGTH", s_res_clen), S("RESPONSE_BODY", s_res_body),
    S("OUTBOUND_DATA_ERROR", s_outbound_error), S("HIGHEST_SEVERITY", s_highest_severity),
    S("DURATION", s_duration), S("TIME", s_time), S("TIME_DAY", s_time_day),
    S("TIME_EPOCH", s_time_epoch), S("TIME_HOUR", s_time_hour), S("TIME_MIN", s_time_min),
    S("TIME_MON", s_time_mon), S("TIME_SEC", s_time_sec), S("TIME_WDAY", s_time_wday),
    S("TIME_YEAR", s_time_year), S("MODSEC_BUILD", s_build), S("SESSIONID", s_sessionid),
    S("USERID", s_userid), S("WEBAPPID", s_webappid),
    S("PERF_ALL", s_zero), S("PERF_COMBINED", s_zero), S("PERF_GC", s_zero),
    S("PERF_LOGGING", s_zero), S("PERF_PHASE1", s_zero), S("PERF_PHASE2", s_zero),
    S("PERF_PHASE3", s_zero), S("PERF_PHASE4", s_zero), S("PERF_PHASE5", s_zero),
    S("PERF_SREAD", s_zero), S("PERF_SWRITE", s_zero),
    S("STREAM_INPUT_BODY", s_none), S("STREAM_OUTPUT_BODY", s_none),
    S("WEBSERVER_ERROR_LOG", s_none), S("SCRIPT_FILENAME", s_none), S("SCRIPT_BASENAME", s_none),
    S("SCRIPT_UID", s_none), S("SCRIPT_GID", s_none), S("SCRIPT_USERNAME", s_none),
    S("SCRIPT_GROUPNAME", s_none), S("SCRIPT_MODE", s_none),
    { NULL, 0, NULL, NULL }
};
