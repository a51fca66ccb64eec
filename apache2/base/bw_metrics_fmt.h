/*
 * The live counters as text (bw_metrics_fmt.c): HTML, JSON and the
 * Prometheus text exposition format 0.0.4. What the block does not hold
 * (engine mode, rule set, how to name a rule) comes from the caller.
 */
#ifndef BW_METRICS_FMT_H
#define BW_METRICS_FMT_H

#include "base/bw_metrics.h"

#define BW_METRICS_TOP 20   /* rules in each "top" table of the HTML page */

typedef struct bw_metrics_info_s {
    const char *engine_mode;     /* "On", "DetectionOnly", "Off" */
    const char *ruleset;         /* SecComponentSignature values, or "" */
    int rules_loaded;
    int sample;                  /* SecMetricsTimingSample */
    int64_t now;                 /* epoch seconds */
    /* a rule's description for the HTML page ("file:line"), or NULL */
    const char *(*describe)(void *baton, long id);
    /* does the rule log its matches (a detection, not set-up)? NULL: all do */
    int (*detects)(void *baton, long id);
    void *baton;
} bw_metrics_info_t;

char *bw_metrics_html(apr_pool_t *p, const bw_metrics_snap_t *s, const bw_metrics_info_t *info);
char *bw_metrics_json(apr_pool_t *p, const bw_metrics_snap_t *s, const bw_metrics_info_t *info);
char *bw_metrics_prometheus(apr_pool_t *p, const bw_metrics_snap_t *s,
                            const bw_metrics_info_t *info);
/* in, escaped for a Prometheus label value (\\, \", \n). */
const char *bw_metrics_label_escape(apr_pool_t *p, const char *in);

#endif /* BW_METRICS_FMT_H */
