/*
 * BulwarkOpenAPI in a transaction: the check of the request against the
 * description the settings in force name (openapi/), and the variables
 * that show its result to the rules:
 *   OPENAPI_VIOLATIONS        one value per violation, named by where it is
 *                             in the request ("/query/limit", "/body/items/0")
 *                             and valued "reason [schema #/pointer]";
 *                             &OPENAPI_VIOLATIONS counts them
 *   OPENAPI_VIOLATIONS_NAMES  the same names
 *   OPENAPI_OPERATION         operationId (or "METHOD /template") matched
 * A deny of a request that broke the description may answer with an RFC
 * 9457 problem document naming the violations (bw_tx_openapi_problem).
 * The check begins when first needed (a variable read, the first chunk of
 * the body), so phase 1 sees the path, method and parameter violations and
 * phase 2 the body's as well. A <Location> that names another description
 * than its server's begins again under the new settings, before the body.
 */
#include <string.h>
#include "run/bw_run.h"
#include "openapi/bw_openapi.h"

struct bw_oas_run_s *bw_tx_openapi(bw_tx_t *tx)
{
    bw_oas_request_t req;
    const bw_oas_t *oas = tx->cfg->openapi;
    if (!oas)
        return NULL;
    if (tx->oas && (tx->oas_of == oas || (tx->rb && tx->reqbody_seen)))
        return tx->oas;
    memset(&req, 0, sizeof(req));
    req.method = tx->req.method;
    req.uri = tx->req.uri;
    req.query = tx->args_get;
    req.headers = tx->req.headers;
    req.cookies = tx->cookies;
    tx->oas = bw_oas_begin(tx->pool, oas, &req, tx->md, tx->mctx);
    tx->oas_of = oas;
    return tx->oas;
}

const bw_json_observer_t *bw_tx_openapi_observer(bw_tx_t *tx)
{
    struct bw_oas_run_s *run = bw_tx_openapi(tx);
    return run ? bw_oas_body_observer(run) : NULL;
}

void bw_tx_openapi_body_end(bw_tx_t *tx, int had_body, const char *parse_error)
{
    struct bw_oas_run_s *run = bw_tx_openapi(tx);
    const apr_array_header_t *v;
    int i;
    if (!run)
        return;
    bw_oas_body_end(run, had_body, parse_error);
    if (tx->oas_audited || tx->audit_engine == 0)
        return;
    /* the audit record names each violation (part H) */
    tx->oas_audited = 1;
    v = bw_oas_violations(run);
    for (i = 0; i < v->nelts; i++) {
        const bw_oas_violation_t *x = &((const bw_oas_violation_t *)v->elts)[i];
        *(const char **)apr_array_push(tx->audit_msgs) =
            apr_psprintf(tx->pool, "OpenAPI violation at %s: %s [schema \"%s\"] [operation \"%s\"]",
                         x->where, x->reason, x->schema,
                         bw_oas_operation(run) ? bw_oas_operation(run) : "-");
    }
    if (bw_oas_violation_count(run) > v->nelts)
        *(const char **)apr_array_push(tx->audit_msgs) =
            apr_psprintf(tx->pool, "OpenAPI: %ld violations, the first %d listed",
                         bw_oas_violation_count(run), v->nelts);
}

void bw_var_gen_openapi(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel,
                        apr_array_header_t *out)
{
    struct bw_oas_run_s *run = bw_tx_openapi(tx);
    const apr_array_header_t *v;
    int i, names = d->id == BW_V_OPENAPI_VIOLATIONS_NAMES;
    if (!run)
        return;
    v = bw_oas_violations(run);
    for (i = 0; i < v->nelts; i++) {
        const bw_oas_violation_t *x = &((const bw_oas_violation_t *)v->elts)[i];
        bw_str_t name = bw_str_make(x->where);
        if (sel.len && !bw_str_eq_ci(sel, name))
            continue;
        bw_var_emit(out, d, name, names ? name : bw_str_make(apr_psprintf(tx->pool,
                    "%s [schema %s]", x->reason, x->schema)));
    }
}

int bw_var_openapi_operation(bw_tx_t *tx, bw_str_t *out)
{
    struct bw_oas_run_s *run = bw_tx_openapi(tx);
    const char *op = run ? bw_oas_operation(run) : NULL;
    if (!op)
        return 0;
    *out = bw_str_make(op);
    return 1;
}

/* s as the body of a JSON string: quote, backslash and control bytes
 * escaped, and bytes past ASCII as \u00XX, so that the document is valid
 * JSON whatever bytes a violation's name carries (a query parameter's
 * name need not be UTF-8). */
static void json_str(bw_buf_t *b, apr_pool_t *p, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    bw_buf_append(p, b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
        if (c == '"' || c == '\\') {
            e[1] = (char)c;
            bw_buf_append(p, b, e, 2);
        } else if (c < 0x20 || c >= 0x7f) {
            bw_buf_append(p, b, e, 6);
        } else {
            bw_buf_append(p, b, (const char *)&c, 1);
        }
    }
    bw_buf_append(p, b, "\"", 1);
}

static void put(bw_buf_t *b, apr_pool_t *p, const char *s)
{
    bw_buf_append(p, b, s, strlen(s));
}

const char *bw_tx_openapi_problem(bw_tx_t *tx, int status)
{
    struct bw_oas_run_s *run;
    const apr_array_header_t *v;
    const char *op;
    bw_buf_t b = { NULL, 0, 0 };
    int i;
    if (tx->cfg->openapi_problem != 1 || !(run = bw_tx_openapi(tx)) || !bw_oas_violation_count(run))
        return NULL;
    v = bw_oas_violations(run);
    op = bw_oas_operation(run);
    put(&b, tx->pool, apr_psprintf(tx->pool, "{\"type\":\"about:blank\",\"status\":%d,"
                                   "\"title\":\"The request does not match the API description\","
                                   "\"detail\":\"%ld violation%s\",\"operation\":", status,
                                   bw_oas_violation_count(run),
                                   bw_oas_violation_count(run) == 1 ? "" : "s"));
    if (op)
        json_str(&b, tx->pool, op);
    else
        put(&b, tx->pool, "null");
    put(&b, tx->pool, ",\"violations\":[");
    for (i = 0; i < v->nelts; i++) {
        const bw_oas_violation_t *x = &((const bw_oas_violation_t *)v->elts)[i];
        put(&b, tx->pool, i ? ",{\"pointer\":" : "{\"pointer\":");
        json_str(&b, tx->pool, x->where);
        put(&b, tx->pool, ",\"reason\":");
        json_str(&b, tx->pool, x->reason);
        put(&b, tx->pool, ",\"schema\":");
        json_str(&b, tx->pool, x->schema);
        put(&b, tx->pool, "}");
    }
    put(&b, tx->pool, "]}\n");
    bw_buf_append(tx->pool, &b, "", 1);   /* the NUL */
    return b.data;
}
