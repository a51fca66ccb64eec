/*
 * bulwark diff — the optimisations, proven on requests: every raw request
 * given (files, or every *.http file of a directory) runs through two
 * programs built from the same rules, the optimised one and one built
 * without folding (--no-fold) or without the multi-pattern scan
 * (--no-scan), in one process. Phases 1 and 2 with the request, phases 3
 * and 4 with a fixed 200 text/html response (bw_cli_respond), phase 5. Compared per
 * request: the matched rule ids in order (with their phase), the final TX
 * collection (names and values, in order), the disposition (action,
 * status, rule). Prints each difference and, last,
 *   diff: N passed, M failed
 * Exit 0 when no request differs.
 *
 * One difference is expected and counted apart: the plain program's PCRE2
 * hit SecPcreMatchLimit (TX:MSC_PCRE_LIMITS_EXCEEDED) on a value the scan
 * decided exactly without backtracking, so the optimised program has no
 * limit hit, and nothing else differs.
 */
#include <string.h>
#include <stdlib.h>
#include <apr_file_io.h>
#include "cli.h"

typedef struct {
    const char *ids;        /* "phase:id phase:id …" */
    const char *tx;         /* "name=value\n…" */
    const char *disp;
} outcome_t;

static void on_message(void *baton, bw_tx_t *tx, int level, const char *text)
{
}

static const bw_callbacks_t quiet = { NULL, NULL, on_message };

static int run_phase(bw_tx_t *tx, int ph, bw_intervention_t *out)
{
    bw_intervention_t iv;
    if (bw_tx_run_phase(tx, ph, &iv) && !out->disposition)
        *out = iv;
    return out->disposition != BW_DISP_NONE;
}

static void run_request(apr_pool_t *p, const bw_program_t *prog, const bw_cli_request_t *rq,
                        outcome_t *o)
{
    bw_intervention_t iv;
    bw_tx_t *tx = bw_tx_create(p, prog, &rq->req, &quiet);
    const apr_array_header_t *m;
    apr_array_header_t *txv = apr_array_make(p, 32, sizeof(bw_kv_t));
    char *ids = "", *txs = "";
    int i;

    memset(&iv, 0, sizeof(iv));
    bw_tx_set_env(tx, apr_table_make(p, 4));
    if (!run_phase(tx, BW_PHASE_REQUEST_HEADERS, &iv)) {
        if (rq->body.len && bw_tx_request_body_access(tx))
            bw_tx_request_body_append(tx, rq->body.data, rq->body.len);
        bw_tx_request_body_end(tx);
        if (!run_phase(tx, BW_PHASE_REQUEST_BODY, &iv)) {
            bw_cli_respond(p, tx);
            if (!run_phase(tx, BW_PHASE_RESPONSE_HEADERS, &iv))
                run_phase(tx, BW_PHASE_RESPONSE_BODY, &iv);
        }
    }
    run_phase(tx, BW_PHASE_LOGGING, &iv);
    m = bw_tx_matches(tx);
    for (i = 0; i < m->nelts; i++) {
        const bw_match_record_t *r = &((const bw_match_record_t *)m->elts)[i];
        ids = apr_psprintf(p, "%s%s%d:%s", ids, i ? " " : "", r->phase, r->id ? r->id : "-");
    }
    bw_tx_collection_dump(tx, "TX", txv);
    for (i = 0; i < txv->nelts; i++) {
        const bw_kv_t *kv = &((const bw_kv_t *)txv->elts)[i];
        txs = apr_pstrcat(p, txs, bw_str_pdup(p, kv->name), "=", bw_str_pdup(p, kv->value), "\n", NULL);
    }
    o->ids = ids;
    o->tx = txs;
    o->disp = apr_psprintf(p, "%d/%d/%ld", (int)iv.disposition, iv.status,
                           iv.rule ? bw_rule_id(iv.rule) : 0L);
}

/* First line where two TX dumps differ, for the report. */
static const char *first_diff(apr_pool_t *p, const char *a, const char *b)
{
    size_t i = 0, line = 0;
    for (; a[i] && a[i] == b[i]; i++)
        if (a[i] == '\n')
            line = i + 1;
    a += line;
    b += line;
    return apr_psprintf(p, "%.*s | %.*s", (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
}

/* b's TX without the limit flag a does not have; NULL when nothing to drop. */
static const char *without_limit(apr_pool_t *p, const char *a, const char *b)
{
    static const char flag[] = "MSC_PCRE_LIMITS_EXCEEDED=1\n";
    const char *at = strstr(b, flag);
    if (!at || strstr(a, flag))
        return NULL;
    return apr_pstrcat(p, apr_pstrndup(p, b, (apr_size_t)(at - b)), at + sizeof(flag) - 1, NULL);
}

static int compare(apr_pool_t *p, const bw_program_t *a, const bw_program_t *b, const char *file,
                   int *avoided)
{
    bw_str_t *raw;
    bw_cli_request_t rq;
    outcome_t oa, ob;
    char *err = NULL;
    const char *e;
    raw = bw_cli_read_all(p, file, &err);
    if (!raw || (e = bw_cli_parse_request(p, *raw, &rq)) != NULL)
        return -1;   /* not a request this client can send: not compared */
    run_request(p, a, &rq, &oa);
    run_request(p, b, &rq, &ob);
    if (strcmp(oa.ids, ob.ids))
        printf("DIFF %s: matched [%s] vs [%s]\n", file, oa.ids, ob.ids);
    else if (strcmp(oa.disp, ob.disp))
        printf("DIFF %s: disposition %s vs %s\n", file, oa.disp, ob.disp);
    else if (strcmp(oa.tx, ob.tx)) {
        const char *b2 = without_limit(p, oa.tx, ob.tx);
        if (b2 && !strcmp(oa.tx, b2)) {
            printf("note %s: the plain program hit the PCRE limit, the scan did not need PCRE\n",
                   file);
            ++*avoided;
            return 0;
        }
        printf("DIFF %s: TX %s\n", file, first_diff(p, oa.tx, ob.tx));
    } else {
        return 0;
    }
    return 1;
}

static void diff_usage(FILE *o)
{
    fprintf(o, "Usage: bulwark diff --rules FILE [--rules FILE...] (--no-fold | --no-scan)\n"
               "                    REQUEST-FILE|DIR...\n"
               "Run every raw request through the program and through the same program built\n"
               "without folding or without the multi-pattern scan; print every difference in\n"
               "matched rules, final TX or disposition, then 'diff: N passed, M failed'.\n");
}

/* Files to compare: the arguments, a directory standing for its *.http files. */
static void add_path(apr_pool_t *p, const char *path, apr_array_header_t *files)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    if (apr_dir_open(&d, path, p) != APR_SUCCESS) {
        *(const char **)apr_array_push(files) = path;
        return;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        size_t n = strlen(fi.name);
        if (fi.filetype == APR_REG && n > 5 && !strcmp(fi.name + n - 5, ".http"))
            *(const char **)apr_array_push(files) = apr_pstrcat(p, path, "/", fi.name, NULL);
    }
    apr_dir_close(d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int bw_cli_diff(apr_pool_t *pool, int argc, const char *const *argv)
{
    bw_config_t *cfg = bw_config_create(pool);
    apr_array_header_t *files = apr_array_make(pool, 256, sizeof(const char *));
    const bw_program_t *a, *b;
    unsigned flags = 0;
    char *err = NULL;
    int i, nrules = 0, pass = 0, fail = 0, skipped = 0, avoided = 0;

    bw_config_directive(cfg, "SecRuleEngine", "On", "(bulwark diff)", 0);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) {
            const char *e = bw_config_load_file(cfg, argv[++i]);
            if (e) {
                fprintf(stderr, "%s\n", e);
                return 2;
            }
            nrules++;
        } else if (!strcmp(argv[i], "--no-fold")) {
            flags |= BW_PROG_NO_FOLD;
        } else if (!strcmp(argv[i], "--no-scan")) {
            flags |= BW_PROG_NO_SCAN;
        } else if (argv[i][0] == '-') {
            diff_usage(!strcmp(argv[i], "--help") ? stdout : stderr);
            return strcmp(argv[i], "--help") ? 2 : 0;
        } else {
            add_path(pool, argv[i], files);
        }
    }
    if (!nrules || !flags || !files->nelts) {
        diff_usage(stderr);
        return 2;
    }
    a = bw_program_build(pool, NULL, cfg, &err);
    b = a ? bw_program_build_ex(pool, NULL, cfg, flags, &err) : NULL;
    if (!a || !b) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    qsort(files->elts, (size_t)files->nelts, sizeof(const char *), cmp_str);
    for (i = 0; i < files->nelts; i++) {
        apr_pool_t *p;
        int rc;
        apr_pool_create(&p, pool);
        rc = compare(p, a, b, ((const char **)files->elts)[i], &avoided);
        apr_pool_destroy(p);
        if (rc < 0)
            skipped++;
        else if (rc)
            fail++;
        else
            pass++;
    }
    if (skipped)
        printf("diff: %d requests this client cannot parse were not compared\n", skipped);
    if (avoided)
        printf("diff: %d passed with a PCRE limit hit only the plain program had\n", avoided);
    printf("diff: %d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
