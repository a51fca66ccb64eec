/*
 * bulwark eval --rules FILE [--request FILE] — run a raw HTTP/1.1 request
 * (file or stdin) through phases 1 and 2 of a rule set, offline, and print
 * a JSON report: matched rules, TX scores, disposition. Unless the rules
 * say otherwise (SecRuleEngine), the engine runs On here: the point of eval
 * is to see what the rules would do.
 */
#include <string.h>
#include <stdlib.h>
#include <ctype.h>
#include "cli.h"
#include "bw_engine.h"

static void print_report(bw_tx_t *tx, apr_pool_t *p, int disrupted, const bw_intervention_t *iv)
{
    const apr_array_header_t *m = bw_tx_matches(tx);
    apr_array_header_t *txv = apr_array_make(p, 16, sizeof(bw_kv_t));
    int i, j, first = 1;
    printf("{\n  \"matched\": [");
    for (i = 0; i < m->nelts; i++) {
        const bw_match_record_t *r = &((const bw_match_record_t *)m->elts)[i];
        printf("%s\n    {\"id\": %s, \"phase\": %d, \"msg\": ", i ? "," : "", r->id ? r->id : "null", r->phase);
        bw_cli_json_str(stdout, bw_str_make(r->msg ? r->msg : ""));
        printf(", \"data\": ");
        bw_cli_json_str(stdout, bw_str_make(r->data ? r->data : ""));
        printf(", \"severity\": ");
        if (bw_severity_name(r->severity))
            bw_cli_json_str(stdout, bw_str_make(bw_severity_name(r->severity)));
        else
            printf("null");
        printf(", \"tags\": [");
        for (j = 0; r->tags && j < r->tags->nelts; j++) {
            printf("%s", j ? ", " : "");
            bw_cli_json_str(stdout, bw_str_make(((const char **)r->tags->elts)[j]));
        }
        printf("]}");
    }
    printf("%s],\n  \"scores\": {", m->nelts ? "\n  " : "");
    bw_tx_collection_dump(tx, "TX", txv);
    for (i = 0; i < txv->nelts; i++) {
        const bw_kv_t *kv = &((const bw_kv_t *)txv->elts)[i];
        bw_str_t lower = bw_str_lower(p, kv->name);
        if (!bw_memmem(lower.data, lower.len, "score", 5) || bw_memmem(lower.data, lower.len, "threshold", 9))
            continue;
        printf("%s\n    ", first ? "" : ",");
        bw_cli_json_str(stdout, kv->name);
        printf(": ");
        bw_cli_json_str(stdout, kv->value);
        first = 0;
    }
    printf("%s},\n  \"disposition\": ", first ? "" : "\n  ");
    if (!disrupted)
        printf("{\"action\": \"pass\"}\n}\n");
    else if (iv->disposition == BW_DISP_REDIRECT || iv->disposition == BW_DISP_PROXY)
        printf("{\"action\": \"%s\", \"status\": %d, \"url\": \"%s\", \"rule\": %ld, \"phase\": %d}\n}\n",
               iv->disposition == BW_DISP_PROXY ? "proxy" : "redirect", iv->status, iv->url,
               iv->rule ? bw_rule_id(iv->rule) : 0L, iv->phase);
    else
        printf("{\"action\": \"%s\", \"status\": %d, \"rule\": %ld, \"phase\": %d}\n}\n",
               iv->disposition == BW_DISP_DROP ? "drop" : "deny", iv->status,
               iv->rule ? bw_rule_id(iv->rule) : 0L, iv->phase);
}

static void on_message(void *baton, bw_tx_t *tx, int level, const char *text)
{
    fprintf(stderr, "%s: %s\n", level == 0 ? "error" : level == 1 ? "warning"
                                 : level == 2 ? "notice" : "debug", text);
}

static void eval_usage(FILE *o)
{
    fprintf(o, "Usage: bulwark eval --rules FILE [--rules FILE...] [--request FILE]\n"
               "Run a raw HTTP/1.1 request (from FILE or standard input) through phases 1 and 2 and\n"
               "print a JSON report: matched rules, TX scores and the disposition (pass or deny).\n"
               "SecRuleEngine is On unless the rules set it. Exit status: 0 pass, 1 disrupted, 2 error.\n");
}

int bw_cli_eval(apr_pool_t *pool, int argc, const char *const *argv)
{
    bw_config_t *cfg = bw_config_create(pool);
    const char *reqfile = NULL, *e;
    bw_program_t *prog;
    bw_str_t *raw;
    bw_cli_request_t pr;
    bw_tx_t *tx;
    bw_callbacks_t cb;
    bw_store_t *store;
    bw_intervention_t iv;
    char *err = NULL;
    int i, nrules = 0, disrupted;

    bw_config_directive(cfg, "SecRuleEngine", "On", "(bulwark eval)", 0);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            eval_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) {
            e = bw_config_load_file(cfg, argv[++i]);
            if (e) {
                fprintf(stderr, "%s\n", e);
                return 2;
            }
            nrules++;
        } else if (!strcmp(argv[i], "--request") && i + 1 < argc) {
            reqfile = argv[++i];
        } else {
            eval_usage(stderr);
            return 2;
        }
    }
    if (!nrules) {
        eval_usage(stderr);
        return 2;
    }
    prog = bw_program_build(pool, NULL, cfg, &err);
    if (!prog) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    raw = bw_cli_read_all(pool, reqfile, &err);
    if (!raw) {
        fprintf(stderr, "bulwark eval: %s\n", err);
        return 2;
    }
    e = bw_cli_parse_request(pool, *raw, &pr);
    if (e) {
        fprintf(stderr, "bulwark eval: %s\n", e);
        return 2;
    }
    memset(&cb, 0, sizeof(cb));
    cb.message = on_message;
    tx = bw_tx_create(pool, prog, &pr.req, &cb);
    bw_tx_set_env(tx, apr_table_make(pool, 4));
    /* one transaction: a store of this process, the configured backend */
    store = bw_store_open(pool, bw_program_settings(prog), NULL, 0, NULL, &err);
    if (!store) {
        fprintf(stderr, "bulwark eval: %s\n", err);
        return 2;
    }
    bw_tx_set_store(tx, store);
    disrupted = bw_tx_run_phase(tx, BW_PHASE_REQUEST_HEADERS, &iv);
    if (!disrupted) {
        if (pr.body.len && bw_tx_request_body_access(tx))
            bw_tx_request_body_append(tx, pr.body.data, pr.body.len);
        bw_tx_request_body_end(tx);
        if (bw_tx_request_body_rejected(tx)) {
            memset(&iv, 0, sizeof(iv));
            iv.disposition = BW_DISP_DENY;
            iv.status = bw_tx_request_body_rejected(tx);
            disrupted = 1;
        } else {
            disrupted = bw_tx_run_phase(tx, BW_PHASE_REQUEST_BODY, &iv);
        }
    }
    print_report(tx, pool, disrupted, &iv);
    return disrupted ? 1 : 0;
}
