/*
 * Variables that are not parsed from the request: the response, keyed
 * collections (TX, IP, SESSION, USER, GLOBAL, RESOURCE, GEO), ENV, RULE,
 * MATCHED_*, time, and engine state (HIGHEST_SEVERITY, DURATION…).
 */
#include <string.h>
#include <apr_time.h>
#include "run/bw_run.h"

static void g_coll(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_coll_t *c = bw_tx_collection(tx, d->name, 0);
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

static void g_env(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
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

static void g_res_headers(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->res.headers, sel, 0, out);
}
static void g_res_headers_names(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_gen_kv(d, tx->res.headers, sel, 1, out);
}

static void g_rule(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
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

static void g_matched_vars(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel, apr_array_header_t *out)
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
    return bw_tx_matched_var_name_str(tx, v);
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
/* Present only once the stream was set: before phase 2 (phase 4) and
 * without the Sec*BodyInspection directive there is nothing to show. */
static int s_stream_in(bw_tx_t *tx, bw_str_t *v)
{
    *v = tx->stream[BW_STREAM_IN];
    return tx->stream_set[BW_STREAM_IN];
}
static int s_stream_out(bw_tx_t *tx, bw_str_t *v)
{
    *v = tx->stream[BW_STREAM_OUT];
    return tx->stream_set[BW_STREAM_OUT];
}


const bw_var_gen_t bw_var_gens_misc[BW_V__COUNT] = {
    [BW_V_TX] = { g_coll, NULL },
    [BW_V_IP] = { g_coll, NULL },
    [BW_V_SESSION] = { g_coll, NULL },
    [BW_V_USER] = { g_coll, NULL },
    [BW_V_GLOBAL] = { g_coll, NULL },
    [BW_V_RESOURCE] = { g_coll, NULL },
    [BW_V_GEO] = { g_coll, NULL },
    [BW_V_ENV] = { g_env, NULL },
    [BW_V_RULE] = { g_rule, NULL },
    [BW_V_MATCHED_VARS] = { g_matched_vars, NULL },
    [BW_V_MATCHED_VARS_NAMES] = { g_matched_vars, NULL },
    [BW_V_RESPONSE_HEADERS] = { g_res_headers, NULL },
    [BW_V_RESPONSE_HEADERS_NAMES] = { g_res_headers_names, NULL },
    [BW_V_MATCHED_VAR] = { bw_var_gen_scalar, (const void *)s_matched_var },
    [BW_V_MATCHED_VAR_NAME] = { bw_var_gen_scalar, (const void *)s_matched_var_name },
    [BW_V_RESPONSE_STATUS] = { bw_var_gen_scalar, (const void *)s_res_status },
    [BW_V_RESPONSE_PROTOCOL] = { bw_var_gen_scalar, (const void *)s_res_protocol },
    [BW_V_STATUS_LINE] = { bw_var_gen_scalar, (const void *)s_status_line },
    [BW_V_RESPONSE_CONTENT_TYPE] = { bw_var_gen_scalar, (const void *)s_res_ctype },
    [BW_V_RESPONSE_CONTENT_LENGTH] = { bw_var_gen_scalar, (const void *)s_res_clen },
    [BW_V_RESPONSE_BODY] = { bw_var_gen_scalar, (const void *)s_res_body },
    [BW_V_OUTBOUND_DATA_ERROR] = { bw_var_gen_scalar, (const void *)s_outbound_error },
    [BW_V_HIGHEST_SEVERITY] = { bw_var_gen_scalar, (const void *)s_highest_severity },
    [BW_V_DURATION] = { bw_var_gen_scalar, (const void *)s_duration },
    [BW_V_TIME] = { bw_var_gen_scalar, (const void *)s_time },
    [BW_V_TIME_DAY] = { bw_var_gen_scalar, (const void *)s_time_day },
    [BW_V_TIME_EPOCH] = { bw_var_gen_scalar, (const void *)s_time_epoch },
    [BW_V_TIME_HOUR] = { bw_var_gen_scalar, (const void *)s_time_hour },
    [BW_V_TIME_MIN] = { bw_var_gen_scalar, (const void *)s_time_min },
    [BW_V_TIME_MON] = { bw_var_gen_scalar, (const void *)s_time_mon },
    [BW_V_TIME_SEC] = { bw_var_gen_scalar, (const void *)s_time_sec },
    [BW_V_TIME_WDAY] = { bw_var_gen_scalar, (const void *)s_time_wday },
    [BW_V_TIME_YEAR] = { bw_var_gen_scalar, (const void *)s_time_year },
    [BW_V_MODSEC_BUILD] = { bw_var_gen_scalar, (const void *)s_build },
    [BW_V_SESSIONID] = { bw_var_gen_scalar, (const void *)s_sessionid },
    [BW_V_USERID] = { bw_var_gen_scalar, (const void *)s_userid },
    [BW_V_WEBAPPID] = { bw_var_gen_scalar, (const void *)s_webappid },
    [BW_V_PERF_ALL] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_COMBINED] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_GC] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_LOGGING] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_PHASE1] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_PHASE2] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_PHASE3] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_PHASE4] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_PHASE5] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_SREAD] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_PERF_SWRITE] = { bw_var_gen_scalar, (const void *)s_zero },
    [BW_V_STREAM_INPUT_BODY] = { bw_var_gen_scalar, (const void *)s_stream_in },
    [BW_V_STREAM_OUTPUT_BODY] = { bw_var_gen_scalar, (const void *)s_stream_out },
    [BW_V_WEBSERVER_ERROR_LOG] = { bw_var_gen_scalar, (const void *)s_none },
    [BW_V_SCRIPT_FILENAME] = { bw_var_gen_scalar, (const void *)s_none },
    [BW_V_SCRIPT_BASENAME] = { bw_var_gen_scalar, (const void *)s_none },
    [BW_V_SCRIPT_UID] = { bw_var_gen_scalar, (const void *)s_none },
    [BW_V_SCRIPT_GID] = { bw_var_gen_scalar, (const void *)s_none },
    [BW_V_SCRIPT_USERNAME] = { bw_var_gen_scalar, (const void *)s_none },
    [BW_V_SCRIPT_GROUPNAME] = { bw_var_gen_scalar, (const void *)s_none },
    [BW_V_SCRIPT_MODE] = { bw_var_gen_scalar, (const void *)s_none },
    /* Rules are not timed and persistent records are files, not SDBM: a
     * configuration naming these loads, and they have no value. */
    [BW_V_PERF_RULES] = { bw_var_gen_scalar, (const void *)s_none },
    [BW_V_SDBM_DELETE_ERROR] = { bw_var_gen_scalar, (const void *)s_none },
    [BW_V_OPENAPI_VIOLATIONS] = { bw_var_gen_openapi, NULL },
    [BW_V_OPENAPI_VIOLATIONS_NAMES] = { bw_var_gen_openapi, NULL },
    [BW_V_OPENAPI_OPERATION] = { bw_var_gen_scalar, (const void *)bw_var_openapi_operation },
};
