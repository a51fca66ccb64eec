/*
 * The counter block shown three ways (bw_metrics_fmt.h): an HTML page for
 * people, JSON for scripts, and the Prometheus text exposition format
 * (version 0.0.4) for scrapers. Built from a snapshot (bw_metrics_read),
 * so a page is consistent with itself whatever the workers do meanwhile.
 *
 * Prometheus names follow its conventions: a `bulwark_` prefix, base
 * units (seconds), `_total` on counters, labels for what varies (rule id,
 * phase, status). Rule and phase time is what the sample measured: the
 * sampled evaluations or runs and their seconds, never an extrapolation
 * presented as a measurement; the HTML page estimates a rule's whole time
 * and a phase's mean from them and says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/bw_metrics_fmt.h"

/* The text being made: a pool buffer (bw_buf_t) kept NUL-terminated. */
typedef struct {
    apr_pool_t *p;
    bw_buf_t out;
} sb_t;

static void sb_put(sb_t *b, const char *s, size_t n)
{
    bw_buf_append(b->p, &b->out, s, n);
    bw_buf_append(b->p, &b->out, "", 1);   /* the NUL, not counted */
    b->out.len--;
}

static void sb_str(sb_t *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

static void sb_printf(sb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb_t *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sb_put(b, small, (size_t)n);
        return;
    }
    va_start(ap, fmt);
    sb_put(b, apr_pvsprintf(b->p, fmt, ap), (size_t)n);
    va_end(ap);
}

static double secs(uint64_t ns)
{
    return (double)ns / 1e9;
}

/* ---- names of the totals ---------------------------------------------------- */

typedef struct {
    int k;
    const char *prom, *json, *help;
} total_name_t;

static const total_name_t totals[] = {
    { BW_MT_TX, "bulwark_transactions_total", "transactions", "Transactions counted." },
    { BW_MT_INTERCEPTED, "bulwark_transactions_intercepted_total", "intercepted",
      "Transactions a rule intercepted (deny, drop, redirect, proxy)." },
    { BW_MT_DROP, "bulwark_transactions_dropped_total", "dropped",
      "Intercepted transactions whose connection was dropped." },
    { BW_MT_REDIRECT, "bulwark_transactions_redirected_total", "redirected",
      "Intercepted transactions redirected." },
    { BW_MT_PROXY, "bulwark_transactions_proxied_total", "proxied",
      "Intercepted transactions proxied elsewhere." },
    { BW_MT_REQBODY_ERROR, "bulwark_request_body_errors_total", "request_body_errors",
      "Request bodies their processor could not parse (REQBODY_ERROR)." },
    { BW_MT_REQBODY_LIMIT, "bulwark_request_body_limit_hits_total", "request_body_limit_hits",
      "Request bodies past a limit, refused or inspected in part." },
    { BW_MT_RESBODY_LIMIT, "bulwark_response_body_limit_hits_total", "response_body_limit_hits",
      "Response bodies past SecResponseBodyLimit." },
    { BW_MT_LINKS, "bulwark_rule_links_evaluated_total", "rule_links_evaluated",
      "Rule links (chain starters and their links) the executor evaluated." },
    { BW_MT_LINKS_SKIPPED, "bulwark_scan_rules_skipped_total", "scan_rules_skipped",
      "Rule links the multi-pattern scan ruled out without reading a value." },
    { BW_MT_OP_RUNS, "bulwark_operator_runs_total", "operator_runs", "Operator runs." },
    { BW_MT_CONFIRMS, "bulwark_scan_confirmations_total", "scan_confirmations",
      "Operator runs that confirmed a scan hit." },
    { BW_MT_SCAN_VALUES, "bulwark_scan_values_total", "scan_values",
      "Values scanned by the multi-pattern matcher." },
    { BW_MT_SCAN_BYTES, "bulwark_scan_bytes_total", "scan_bytes", "Bytes scanned." },
    { BW_MT_SCAN_CALLS, "bulwark_scan_calls_total", "scan_calls",
      "Matcher calls (values are joined: fewer than values)." },
    { BW_MT_TIMED_TX, "bulwark_timed_transactions_total", "timed_transactions",
      "Transactions whose rules were timed (the sample)." },
};
#define NTOTALS (sizeof(totals) / sizeof(totals[0]))

/* ---- Prometheus ------------------------------------------------------------- */

static void prom_head(sb_t *b, const char *name, const char *type, const char *help)
{
    sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

typedef uint64_t (*rule_field_fn)(const bw_metrics_rule_t *r);
static uint64_t f_evals(const bw_metrics_rule_t *r) { return r->evals; }
static uint64_t f_matches(const bw_metrics_rule_t *r) { return r->matches; }
static uint64_t f_blocks(const bw_metrics_rule_t *r) { return r->blocks; }
static uint64_t f_timed(const bw_metrics_rule_t *r) { return r->timed; }
static uint64_t f_ns(const bw_metrics_rule_t *r) { return r->ns; }
static uint64_t f_max(const bw_metrics_rule_t *r) { return r->max_ns; }

typedef struct {
    const char *name, *type, *help;
    rule_field_fn f;
    int seconds;
} rule_metric_t;

static const rule_metric_t rule_metrics[] = {
    { "bulwark_rule_evaluations_total", "counter",
      "Times the executor reached the rule in a phase (scan verdicts and folded rules included).",
      f_evals, 0 },
    { "bulwark_rule_matches_total", "counter", "Times the rule (its whole chain) matched.",
      f_matches, 0 },
    { "bulwark_rule_blocks_total", "counter", "Transactions the rule intercepted.", f_blocks, 0 },
    { "bulwark_rule_sampled_evaluations_total", "counter",
      "Evaluations of the rule in timed (sampled) transactions.", f_timed, 0 },
    { "bulwark_rule_sampled_seconds_total", "counter",
      "Time the rule took in timed (sampled) transactions.", f_ns, 1 },
    { "bulwark_rule_max_seconds", "gauge",
      "Longest single evaluation of the rule seen in a timed transaction.", f_max, 1 },
};

char *bw_metrics_prometheus(apr_pool_t *p, const bw_metrics_snap_t *s,
                            const bw_metrics_info_t *info)
{
    sb_t b = { p, { NULL, 0, 0 } };
    size_t k;
    int i;
    sb_str(&b, "");
    prom_head(&b, "bulwark_info", "gauge", "Engine mode and rule set of the running configuration.");
    sb_printf(&b, "bulwark_info{engine_mode=\"%s\",ruleset=\"%s\"} 1\n",
              bw_metrics_label_escape(p, info->engine_mode),
              bw_metrics_label_escape(p, info->ruleset));
    prom_head(&b, "bulwark_rules_loaded", "gauge", "Rules of the main server's configuration.");
    sb_printf(&b, "bulwark_rules_loaded %d\n", info->rules_loaded);
    prom_head(&b, "bulwark_metrics_start_time_seconds", "gauge",
              "When the counters started (they survive graceful restarts).");
    sb_printf(&b, "bulwark_metrics_start_time_seconds %lld\n", (long long)s->created);
    prom_head(&b, "bulwark_metrics_generations_total", "counter",
              "Configurations that counted in this block (1 + graceful restarts).");
    sb_printf(&b, "bulwark_metrics_generations_total %llu\n", (unsigned long long)s->attached);
    for (k = 0; k < NTOTALS; k++) {
        prom_head(&b, totals[k].prom, "counter", totals[k].help);
        sb_printf(&b, "%s %llu\n", totals[k].prom, (unsigned long long)s->total[totals[k].k]);
    }
    prom_head(&b, "bulwark_requests_blocked_total", "counter",
              "Intercepted transactions by the status answered (0: connection dropped).");
    for (i = 0; i < 600; i++)
        if (s->status[i])
            sb_printf(&b, "bulwark_requests_blocked_total{status=\"%d\"} %llu\n", i,
                      (unsigned long long)s->status[i]);
    prom_head(&b, "bulwark_phase_runs_total", "counter", "Phases run.");
    for (i = 1; i < BW_METRICS_PHASES; i++)
        sb_printf(&b, "bulwark_phase_runs_total{phase=\"%d\"} %llu\n", i,
                  (unsigned long long)s->phase_runs[i]);
    prom_head(&b, "bulwark_phase_evaluations_total", "counter", "Rules reached in each phase.");
    for (i = 1; i < BW_METRICS_PHASES; i++)
        sb_printf(&b, "bulwark_phase_evaluations_total{phase=\"%d\"} %llu\n", i,
                  (unsigned long long)s->phase_evals[i]);
    prom_head(&b, "bulwark_phase_sampled_runs_total", "counter",
              "Phase runs in timed (sampled) transactions.");
    for (i = 1; i < BW_METRICS_PHASES; i++)
        sb_printf(&b, "bulwark_phase_sampled_runs_total{phase=\"%d\"} %llu\n", i,
                  (unsigned long long)s->phase_timed[i]);
    prom_head(&b, "bulwark_phase_sampled_seconds_total", "counter",
              "Time the phase's rules took in timed (sampled) transactions.");
    for (i = 1; i < BW_METRICS_PHASES; i++)
        sb_printf(&b, "bulwark_phase_sampled_seconds_total{phase=\"%d\"} %.9f\n", i,
                  secs(s->phase_ns[i]));
    prom_head(&b, "bulwark_rule_uncounted_evaluations_total", "counter",
              "Evaluations of rules without an id, or past the counters' capacity.");
    sb_printf(&b, "bulwark_rule_uncounted_evaluations_total %llu\n",
              (unsigned long long)s->uncounted_evals);
    for (k = 0; k < sizeof(rule_metrics) / sizeof(rule_metrics[0]); k++) {
        const rule_metric_t *rm = &rule_metrics[k];
        prom_head(&b, rm->name, rm->type, rm->help);
        for (i = 0; i < s->nrules; i++) {
            uint64_t v = rm->f(&s->rules[i]);
            if (rm->seconds)
                sb_printf(&b, "%s{id=\"%ld\"} %.9f\n", rm->name, s->rules[i].id, secs(v));
            else
                sb_printf(&b, "%s{id=\"%ld\"} %llu\n", rm->name, s->rules[i].id,
                          (unsigned long long)v);
        }
    }
    return b.out.data;
}

const char *bw_metrics_label_escape(apr_pool_t *p, const char *in)
{
    sb_t b = { p, { NULL, 0, 0 } };
    sb_str(&b, "");
    for (; in && *in; in++) {
        if (*in == '\\')
            sb_str(&b, "\\\\");
        else if (*in == '"')
            sb_str(&b, "\\\"");
        else if (*in == '\n')
            sb_str(&b, "\\n");
        else
            sb_put(&b, in, 1);
    }
    return b.out.data;
}

/* ---- JSON ------------------------------------------------------------------- */

static void json_str(sb_t *b, const char *s)
{
    sb_str(b, "\"");
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sb_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            sb_printf(b, "\\u%04x", c);
        else
            sb_put(b, s, 1);
    }
    sb_str(b, "\"");
}

char *bw_metrics_json(apr_pool_t *p, const bw_metrics_snap_t *s, const bw_metrics_info_t *info)
{
    sb_t b = { p, { NULL, 0, 0 } };
    size_t k;
    int i, first = 1;
    sb_str(&b, "{\"engine_mode\":");
    json_str(&b, info->engine_mode);
    sb_str(&b, ",\"ruleset\":");
    json_str(&b, info->ruleset);
    sb_printf(&b, ",\"rules_loaded\":%d,\"timing_sample\":%d,\"now\":%lld,\"start_time\":%lld,"
              "\"generations\":%llu,\"shards_used\":%d,\"totals\":{", info->rules_loaded,
              info->sample, (long long)info->now, (long long)s->created,
              (unsigned long long)s->attached, s->shards_used);
    for (k = 0; k < NTOTALS; k++)
        sb_printf(&b, "%s\"%s\":%llu", k ? "," : "", totals[k].json,
                  (unsigned long long)s->total[totals[k].k]);
    sb_printf(&b, ",\"rule_uncounted_evaluations\":%llu},\"blocked_by_status\":{",
              (unsigned long long)s->uncounted_evals);
    for (i = 0; i < 600; i++)
        if (s->status[i]) {
            sb_printf(&b, "%s\"%d\":%llu", first ? "" : ",", i, (unsigned long long)s->status[i]);
            first = 0;
        }
    sb_str(&b, "},\"blocks_per_minute\":[");
    for (i = 0; i < BW_METRICS_MINUTES; i++)
        sb_printf(&b, "%s%llu", i ? "," : "", (unsigned long long)s->minutes[i]);
    sb_str(&b, "],\"phases\":[");
    for (i = 1; i < BW_METRICS_PHASES; i++)
        sb_printf(&b, "%s{\"phase\":%d,\"runs\":%llu,\"evaluations\":%llu,"
                  "\"sampled_runs\":%llu,\"sampled_seconds\":%.9f}",
                  i > 1 ? "," : "", i, (unsigned long long)s->phase_runs[i],
                  (unsigned long long)s->phase_evals[i], (unsigned long long)s->phase_timed[i],
                  secs(s->phase_ns[i]));
    sb_str(&b, "],\"rules\":[");
    for (i = 0; i < s->nrules; i++) {
        const bw_metrics_rule_t *r = &s->rules[i];
        sb_printf(&b, "%s{\"id\":%ld,\"evaluations\":%llu,\"matches\":%llu,\"blocks\":%llu,"
                  "\"sampled_evaluations\":%llu,\"sampled_seconds\":%.9f,\"max_seconds\":%.9f}",
                  i ? "," : "", r->id, (unsigned long long)r->evals,
                  (unsigned long long)r->matches, (unsigned long long)r->blocks,
                  (unsigned long long)r->timed, secs(r->ns), secs(r->max_ns));
    }
    sb_str(&b, "]}\n");
    return b.out.data;
}

/* ---- HTML ------------------------------------------------------------------- */

static void html_text(sb_t *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': sb_str(b, "&lt;"); break;
        case '>': sb_str(b, "&gt;"); break;
        case '&': sb_str(b, "&amp;"); break;
        case '"': sb_str(b, "&quot;"); break;
        default: sb_put(b, s, 1);
        }
    }
}

/* A rule's whole time, estimated from its sample: mean sampled time per
 * evaluation times its evaluations. */
static double est_seconds(const bw_metrics_rule_t *r)
{
    return r->timed ? secs(r->ns) / (double)r->timed * (double)r->evals : 0.0;
}

static int by_matches(const void *a, const void *b)
{
    const bw_metrics_rule_t *x = a, *y = b;
    if (x->matches != y->matches)
        return x->matches < y->matches ? 1 : -1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int by_time(const void *a, const void *b)
{
    double x = est_seconds(a), y = est_seconds(b);
    if (x != y)
        return x < y ? 1 : -1;
    return by_matches(a, b);
}

/* A table of the first BW_METRICS_TOP rules in cmp's order; with
 * detections_only, of the rules that log their matches only (the set-up
 * rules of a rule set match on every request and would fill it). */
static void html_rules(sb_t *b, const bw_metrics_snap_t *s, const bw_metrics_info_t *info,
                       const char *title, int (*cmp)(const void *, const void *),
                       int detections_only)
{
    bw_metrics_rule_t *sorted = apr_palloc(b->p, sizeof(*s->rules) * (size_t)(s->nrules + 1));
    int i, n = 0;
    for (i = 0; i < s->nrules; i++)
        if (!detections_only || !info->detects || info->detects(info->baton, s->rules[i].id))
            sorted[n++] = s->rules[i];
    qsort(sorted, (size_t)n, sizeof(*sorted), cmp);
    if (n > BW_METRICS_TOP)
        n = BW_METRICS_TOP;
    sb_printf(b, "<h2>%s</h2>\n<table>\n<tr><th>id</th><th>evaluations</th><th>matches</th>"
              "<th>blocks</th><th>est. time (s)</th><th>mean (&micro;s)</th><th>max (&micro;s)</th>"
              "<th>rule</th></tr>\n", title);
    for (i = 0; i < n; i++) {
        const bw_metrics_rule_t *r = &sorted[i];
        sb_printf(b, "<tr><td>%ld</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%.6f</td>"
                  "<td>%.3f</td><td>%.3f</td><td>", r->id, (unsigned long long)r->evals,
                  (unsigned long long)r->matches, (unsigned long long)r->blocks, est_seconds(r),
                  r->timed ? (double)r->ns / (double)r->timed / 1e3 : 0.0,
                  (double)r->max_ns / 1e3);
        html_text(b, info->describe ? info->describe(info->baton, r->id) : "");
        sb_str(b, "</td></tr>\n");
    }
    sb_str(b, "</table>\n");
}

char *bw_metrics_html(apr_pool_t *p, const bw_metrics_snap_t *s, const bw_metrics_info_t *info)
{
    sb_t b = { p, { NULL, 0, 0 } };
    size_t k;
    int i;
    uint64_t rules = 0, skipped = s->total[BW_MT_LINKS_SKIPPED];
    sb_str(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Bulwark status</title>"
               "</head><body>\n<h1>Bulwark status</h1>\n<dl>\n<dt>engine mode</dt><dd>");
    html_text(&b, info->engine_mode);
    sb_str(&b, "</dd>\n<dt>rule set</dt><dd>");
    html_text(&b, info->ruleset);
    rules = s->total[BW_MT_LINKS];
    sb_printf(&b, "</dd>\n<dt>rules loaded</dt><dd>%d</dd>\n<dt>counting for</dt><dd>%lld s "
              "(%llu configuration%s)</dd>\n<dt>rule timing</dt><dd>one transaction in %d "
              "per thread</dd>\n<dt>scan</dt><dd>%.1f%% of rule links ruled out without reading "
              "a value; %llu operator runs, %llu of them confirming a scan hit</dd>\n</dl>\n",
              info->rules_loaded, (long long)(info->now - s->created),
              (unsigned long long)s->attached, s->attached == 1 ? "" : "s", info->sample,
              rules ? 100.0 * (double)skipped / (double)rules : 0.0,
              (unsigned long long)s->total[BW_MT_OP_RUNS],
              (unsigned long long)s->total[BW_MT_CONFIRMS]);
    sb_str(&b, "<h2>Totals</h2>\n<table>\n");
    for (k = 0; k < NTOTALS; k++)
        sb_printf(&b, "<tr><td>%s</td><td>%llu</td></tr>\n", totals[k].json,
                  (unsigned long long)s->total[totals[k].k]);
    sb_str(&b, "</table>\n<h2>Blocked by status</h2>\n<table>\n");
    for (i = 0; i < 600; i++)
        if (s->status[i])
            sb_printf(&b, "<tr><td>%d</td><td>%llu</td></tr>\n", i, (unsigned long long)s->status[i]);
    sb_str(&b, "</table>\n<h2>Blocks per minute (now first, last hour)</h2>\n<p>");
    for (i = 0; i < BW_METRICS_MINUTES; i++)
        sb_printf(&b, "%s%llu", i ? " " : "", (unsigned long long)s->minutes[i]);
    sb_str(&b, "</p>\n<h2>Phases</h2>\n<table>\n<tr><th>phase</th><th>runs</th><th>rules "
               "reached</th><th>timed runs</th><th>mean time (us, timed runs)</th></tr>\n");
    for (i = 1; i < BW_METRICS_PHASES; i++)
        sb_printf(&b, "<tr><td>%d</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%.1f</td></tr>\n",
                  i, (unsigned long long)s->phase_runs[i], (unsigned long long)s->phase_evals[i],
                  (unsigned long long)s->phase_timed[i],
                  s->phase_timed[i] ? (double)s->phase_ns[i] / (double)s->phase_timed[i] / 1e3
                                    : 0.0);
    sb_str(&b, "</table>\n");
    html_rules(&b, s, info, "Top rules by matches (rules that log)", by_matches, 1);
    html_rules(&b, s, info, "Top rules by time (estimated from the timed sample)", by_time, 0);
    sb_str(&b, "</body></html>\n");
    return b.out.data;
}
