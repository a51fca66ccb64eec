/*
 * Live counters in httpd (base/bw_metrics.h): the shared block, made in
 * post_config in the parent before the workers fork, and the
 * `bulwark-status` handler that shows it.
 *
 * The block lives in the process pool, as the shm collection store's does
 * (bw_httpd_store.c): a graceful restart re-reads the configuration, the
 * new generation adopts the block and its counts go on. Its size is fixed
 * by the build (bw_metrics_size), so it never changes across restarts.
 * SecMetricsEngine and SecMetricsTimingSample are read from the main
 * server: one Apache, one block.
 *
 * The handler answers GET and HEAD only. Who may see it is the operator's
 * business, with the usual access control:
 *     <Location /bulwark-status>
 *         SetHandler bulwark-status
 *         Require ip 127.0.0.1
 *     </Location>
 * `?json` and `?prometheus` choose the format; anything else is HTML.
 */
#include "httpd/bw_httpd.h"
#include "base/bw_metrics_fmt.h"

#define SHM_KEY     "bulwark-metrics-shm"   /* process pool: the block, across restarts */
#define METRICS_KEY "bulwark-metrics"       /* pconf: this generation's handle */

typedef struct {
    bw_metrics_t *m;
    int sample;
    const bw_program_t *prog;    /* the main server's */
} status_t;

int bw_httpd_status_post_config(apr_pool_t *pconf, server_rec *s)
{
    const bw_httpd_dircfg_t *d = ap_get_module_config(s->lookup_defaults, &bulwark_module);
    const bw_settings_t *set;
    status_t *st;
    server_rec *sv;
    const char *err = NULL;
    char *perr = NULL;
    void *base;
    int adopted = 0;

    st = apr_pcalloc(pconf, sizeof(*st));
    st->prog = d ? bw_httpd_program(NULL, d, &perr) : NULL;
    apr_pool_userdata_set(st, METRICS_KEY, apr_pool_cleanup_null, pconf);
    if (!st->prog)
        return OK;
    set = bw_program_settings(st->prog);
    st->sample = set->metrics_sample;
    if (!set->metrics_engine)
        return OK;
    if (!(base = bw_httpd_shm_block(s, SHM_KEY, bw_metrics_size(), "live counters")))
        return OK;      /* logged; the server runs, uncounted */
    st->m = bw_metrics_attach(pconf, base, bw_metrics_size(), &adopted, &err);
    if (!st->m) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "Bulwark: live counters: %s; counting is off", err);
        return OK;
    }
    /* the servers' rules in their order, so a transaction's counters are
     * neighbours (a <Location>'s are registered at its first request) */
    for (sv = s; sv; sv = sv->next) {
        const bw_httpd_dircfg_t *sd = ap_get_module_config(sv->lookup_defaults, &bulwark_module);
        const bw_program_t *prog = sd ? bw_httpd_program(NULL, sd, &perr) : NULL;
        bw_metrics_register_program(st->m, prog);
    }
    ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s, "Bulwark: live counters on (%lu KB of shared "
                 "memory mapped%s)", (unsigned long)(bw_metrics_size() / 1024),
                 adopted ? ", counts kept across the restart" : "");
    return OK;
}

static status_t *status_of(server_rec *s)
{
    void *st = NULL;
    apr_pool_userdata_get(&st, METRICS_KEY, s->process->pconf);
    return st;
}

void bw_httpd_status_count(request_rec *r, bw_tx_t *tx)
{
    status_t *st = status_of(r->server);
    if (st && st->m)
        bw_tx_set_metrics(tx, st->m, st->sample);
}

static const char *engine_name(int mode)
{
    switch (mode) {
    case BW_ENGINE_ON: return "On";
    case BW_ENGINE_DETECTION_ONLY: return "DetectionOnly";
    default: return "Off";
    }
}

static const char *ruleset_of(apr_pool_t *p, const bw_settings_t *set)
{
    const apr_array_header_t *cs = set->component_signatures;
    return cs && cs->nelts ? apr_array_pstrcat(p, cs, ',') : "";
}

typedef struct {
    apr_pool_t *p;
    const bw_program_t *prog;
} describe_t;

static const char *describe_rule(void *baton, long id)
{
    describe_t *d = baton;
    const bw_rule_t *r = bw_program_rule(d->prog, id);
    return r ? apr_psprintf(d->p, "%s:%d", bw_rule_file(r), bw_rule_line(r)) : "";
}

static int rule_logs(void *baton, long id)
{
    describe_t *d = baton;
    const bw_rule_t *r = bw_program_rule(d->prog, id);
    return r && bw_rule_logs(r);
}

static int status_handler(request_rec *r)
{
    status_t *st;
    bw_metrics_snap_t snap;
    bw_metrics_info_t info;
    bw_program_stats_t ps;
    describe_t dd;
    const bw_settings_t *set;
    const char *q = r->args ? r->args : "";
    char *body;

    if (!r->handler || strcmp(r->handler, "bulwark-status"))
        return DECLINED;
    r->allowed |= (AP_METHOD_BIT << M_GET);
    if (r->method_number != M_GET)
        return HTTP_METHOD_NOT_ALLOWED;
    st = status_of(r->server);
    if (!st || !st->m) {
        ap_set_content_type(r, "text/plain; charset=utf-8");
        ap_rputs("Bulwark: live counters are off (SecMetricsEngine Off, or no configuration)\n", r);
        return OK;
    }
    bw_metrics_read(st->m, r->pool, (int64_t)apr_time_sec(r->request_time), &snap);
    set = bw_program_settings(st->prog);
    bw_program_stats(st->prog, r->pool, &ps);
    memset(&info, 0, sizeof(info));
    info.engine_mode = engine_name(set->rule_engine);
    info.ruleset = ruleset_of(r->pool, set);
    info.rules_loaded = ps.total_rules;
    info.sample = st->sample;
    info.now = (int64_t)apr_time_sec(apr_time_now());
    dd.p = r->pool;
    dd.prog = st->prog;
    info.describe = describe_rule;
    info.detects = rule_logs;
    info.baton = &dd;
    if (!strcmp(q, "prometheus")) {
        ap_set_content_type(r, "text/plain; version=0.0.4; charset=utf-8");
        body = bw_metrics_prometheus(r->pool, &snap, &info);
    } else if (!strcmp(q, "json")) {
        ap_set_content_type(r, "application/json");
        body = bw_metrics_json(r->pool, &snap, &info);
    } else {
        ap_set_content_type(r, "text/html; charset=utf-8");
        body = bw_metrics_html(r->pool, &snap, &info);
    }
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (!r->header_only)
        ap_rputs(body, r);
    return OK;
}

void bw_httpd_register_status(void)
{
    ap_hook_handler(status_handler, NULL, NULL, APR_HOOK_MIDDLE);
}
