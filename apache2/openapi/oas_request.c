/*
 * One request against a compiled description: the path matched in the
 * segment tree (after a server's path prefix), the method, each
 * parameter converted from its text to the type its schema asks for and
 * checked as a one-value JSON document would be (so combinators and
 * arrays of parameters use the body's validator), the content type, and
 * the JSON body through the streaming validator.
 */
#include <string.h>
#include <ctype.h>
#include "openapi/oas_int.h"

#define OAS_MAX_SEGMENTS 64

struct bw_oas_run_s {
    apr_pool_t *p;
    const bw_oas_t *oas;
    const oas_path_t *path;
    const oas_op_t *op;
    apr_array_header_t *kept;     /* bw_oas_violation_t */
    long count;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    const oas_media_t *media;     /* the request's content type, as described */
    const char *ctype;            /* the request's media type, lower case, or NULL */
    oas_stream_t *body;
    int ended;
};

static void report(void *ctx, const char *where, const char *reason, const char *schema)
{
    bw_oas_run_t *run = ctx;
    bw_oas_violation_t *v;
    run->count++;
    if (!where || run->kept->nelts >= BW_OAS_MAX_KEPT)
        return;
    v = apr_array_push(run->kept);
    v->where = where;
    v->reason = reason;
    v->schema = schema;
}

static int full(void *ctx)
{
    const bw_oas_run_t *run = ctx;
    return run->kept->nelts >= BW_OAS_MAX_KEPT;
}

/* ---- the path ---------------------------------------------------------------------- */

static const oas_path_t *match(const oas_seg_t *at, const bw_str_t *segs, int n, int i,
                               bw_str_t *vals, int nv)
{
    int k;
    if (i == n)
        return at->path;
    for (k = 0; at->kids && k < at->kids->nelts; k++) {
        const oas_seg_t *c = ((const oas_seg_t **)at->kids->elts)[k];
        const oas_path_t *r;
        bw_str_t s = segs[i];
        if (!c->is_param) {
            if (!bw_str_eq(c->lit, s))
                continue;
            if ((r = match(c, segs, n, i + 1, vals, nv)))
                return r;
            continue;
        }
        /* prefix{name}suffix: the value is what is between, and not empty */
        if (s.len <= c->lit.len + c->suffix.len || memcmp(s.data, c->lit.data, c->lit.len)
            || memcmp(s.data + s.len - c->suffix.len, c->suffix.data, c->suffix.len))
            continue;
        vals[nv] = bw_str_n(s.data + c->lit.len, s.len - c->lit.len - c->suffix.len);
        if ((r = match(c, segs, n, i + 1, vals, nv + 1)))
            return r;
    }
    return NULL;
}

/* The path of the request-target: no scheme and authority, no query. */
static bw_str_t target_path(bw_str_t uri)
{
    const char *s = uri.data, *end = uri.data + uri.len, *q;
    if (uri.len && s[0] != '/') {
        const char *sep = bw_memmem(s, uri.len, "://", 3);
        if (sep) {
            s = sep + 3;
            while (s < end && *s != '/' && *s != '?')
                s++;
        }
    }
    for (q = s; q < end && *q != '?' && *q != '#'; q++)
        ;
    return bw_str_n(s, (size_t)(q - s));
}

/* Segments of path (after "/"), each %-decoded. -1 when too many. */
static int split(apr_pool_t *p, bw_str_t path, bw_str_t *segs)
{
    const char *s, *end = path.data + path.len;
    int n = 0;
    if (path.len <= 1)
        return 0;
    for (s = path.data + 1; s <= end; ) {
        const char *e = memchr(s, '/', (size_t)(end - s));
        if (!e)
            e = end;
        if (n == OAS_MAX_SEGMENTS)
            return -1;
        segs[n++] = bw_str_pct_decode(p, bw_str_n(s, (size_t)(e - s)));
        s = e + 1;
    }
    return n;
}

static const oas_path_t *find_path(bw_oas_run_t *run, bw_str_t path, bw_str_t *vals)
{
    bw_str_t segs[OAS_MAX_SEGMENTS];
    int i;
    for (i = 0; i < run->oas->bases->nelts; i++) {
        const char *b = ((const char **)run->oas->bases->elts)[i];
        size_t bl = strlen(b);
        bw_str_t rest;
        int n;
        const oas_path_t *r;
        if (path.len < bl || memcmp(path.data, b, bl) || (path.len > bl && path.data[bl] != '/'))
            continue;
        rest = path.len == bl ? bw_str_n("/", 1) : bw_str_n(path.data + bl, path.len - bl);
        n = split(run->p, rest, segs);
        if (n < 0 || n > run->oas->max_segments)
            continue;
        if ((r = match(&run->oas->root, segs, n, 0, vals, 0)))
            return r;
    }
    return NULL;
}

/* ---- parameters ------------------------------------------------------------------ */

/* Does s, or a schema its combinators add, take a value of these types? */
static int wants(const oas_schema_t *s, unsigned bits)
{
    int i;
    if (s->types & bits)
        return 1;
    for (i = 0; i < s->n_all; i++)
        if (wants(s->all_of[i], bits))
            return 1;
    for (i = 0; i < s->n_any; i++)
        if (wants(s->any_of[i], bits))
            return 1;
    for (i = 0; i < s->n_one; i++)
        if (wants(s->one_of[i], bits))
            return 1;
    return 0;
}

/* A parameter's text as the JSON scalar its schema asks for: a number
 * when it reads as one and numbers are allowed, true/false when booleans
 * are, else a string (which a number-only schema then refuses). */
static void feed_text(const bw_json_observer_t *ob, const oas_schema_t *s, bw_str_t t)
{
    double d;
    unsigned ty;
    if (wants(s, OAS_T_NUM | OAS_T_INT) && oas_number(t, &d, &ty))
        ob->scalar(ob->ctx, BW_JSON_NUMBER, t.data, t.len);
    else if (wants(s, OAS_T_BOOL) && t.len == 4 && !memcmp(t.data, "true", 4))
        ob->scalar(ob->ctx, BW_JSON_TRUE, t.data, t.len);
    else if (wants(s, OAS_T_BOOL) && t.len == 5 && !memcmp(t.data, "false", 5))
        ob->scalar(ob->ctx, BW_JSON_FALSE, t.data, t.len);
    else
        ob->scalar(ob->ctx, BW_JSON_STRING, t.data, t.len);
}

static const char *const in_names[] = { "path", "query", "header", "cookie" };

static const char *param_where(bw_oas_run_t *run, const oas_param_t *pm)
{
    return apr_pstrcat(run->p, "/", in_names[pm->in], "/",
                       oas_ptr_escape(run->p, bw_str_make(pm->name)), NULL);
}

/* Check the values one parameter was given (vals[0..n-1], n >= 1). */
static void check_param(bw_oas_run_t *run, const oas_param_t *pm, const bw_str_t *vals, int n)
{
    const oas_schema_t *s = pm->schema;
    const char *where = param_where(run, pm);
    oas_stream_t *st;
    const bw_json_observer_t *ob;
    int i, is_array = !oas_schema_is_scalar(s);
    if (!is_array && n > 1) {
        report(run, where, apr_psprintf(run->p, "given %d times", n), pm->ptr);
        return;
    }
    for (i = 0; i < n; i++)
        if (!vals[i].len && !pm->allow_empty && pm->in == OAS_IN_QUERY) {
            report(run, where, "empty value (allowEmptyValue is false)", pm->ptr);
            return;
        }
    st = oas_stream_make(run->p, s, report, full, run, run->md, run->mctx);
    oas_stream_base(st, where);
    ob = oas_stream_observer(st);
    if (!is_array) {
        feed_text(ob, s, vals[0]);
        return;
    }
    ob->start(ob->ctx, 1);
    for (i = 0; i < n; i++) {
        bw_str_t v = vals[i];
        /* exploded query and cookie arrays repeat the name; path and
         * header arrays are comma-separated whatever explode says */
        if (!pm->explode || pm->in == OAS_IN_PATH || pm->in == OAS_IN_HEADER) {
            const char *c = v.data, *end = v.data + v.len;
            while (c <= end) {
                const char *e = memchr(c, ',', (size_t)(end - c));
                if (!e)
                    e = end;
                feed_text(ob, s->items, bw_str_n(c, (size_t)(e - c)));
                c = e + 1;
            }
        } else {
            feed_text(ob, s->items, v);
        }
    }
    ob->end(ob->ctx, 1);
}

/* The values a request gives for a name, from a bw_kv_t array. */
static int values_of(apr_pool_t *p, const apr_array_header_t *kv, const char *name, int ci,
                     bw_str_t **out)
{
    int i, n = 0;
    for (i = 0; kv && i < kv->nelts; i++) {
        const bw_kv_t *e = &((const bw_kv_t *)kv->elts)[i];
        if (ci ? bw_str_eq_cstr_ci(e->name, name)
               : (e->name.len == strlen(name) && !memcmp(e->name.data, name, e->name.len))) {
            if (!*out)
                *out = apr_palloc(p, sizeof(bw_str_t) * (size_t)kv->nelts);
            (*out)[n++] = e->value;
        }
    }
    return n;
}

static void check_params(bw_oas_run_t *run, const bw_oas_request_t *req, const bw_str_t *pvals)
{
    const oas_op_t *op = run->op;
    int i, j;
    for (i = 0; i < op->n_params; i++) {
        const oas_param_t *pm = &op->params[i];
        bw_str_t *vals = NULL;
        int n = 0;
        switch (pm->in) {
        case OAS_IN_PATH:
            for (j = 0; j < run->path->n_names; j++)
                if (!strcmp(run->path->param_names[j], pm->name)) {
                    vals = (bw_str_t *)&pvals[j];
                    n = 1;
                }
            break;
        case OAS_IN_QUERY: n = values_of(run->p, req->query, pm->name, 0, &vals); break;
        case OAS_IN_HEADER: n = values_of(run->p, req->headers, pm->name, 1, &vals); break;
        default: n = values_of(run->p, req->cookies, pm->name, 0, &vals); break;
        }
        if (!n) {
            if (pm->required)
                report(run, param_where(run, pm), "required parameter is missing", pm->ptr);
            continue;
        }
        check_param(run, pm, vals, n);
    }
    /* the positive model: a query parameter the operation does not describe */
    for (i = 0; req->query && i < req->query->nelts; i++) {
        const bw_kv_t *e = &((const bw_kv_t *)req->query->elts)[i];
        for (j = 0; j < op->n_params; j++)
            if (op->params[j].in == OAS_IN_QUERY && strlen(op->params[j].name) == e->name.len
                && !memcmp(op->params[j].name, e->name.data, e->name.len))
                break;
        if (j == op->n_params)
            report(run, apr_pstrcat(run->p, "/query/", oas_ptr_escape(run->p, e->name), NULL),
                   "a query parameter the operation does not describe", op->ptr);
    }
}

/* ---- the body ------------------------------------------------------------------- */

static const char *media_type(apr_pool_t *p, const apr_array_header_t *headers)
{
    int i;
    for (i = 0; headers && i < headers->nelts; i++) {
        const bw_kv_t *h = &((const bw_kv_t *)headers->elts)[i];
        if (bw_str_eq_cstr_ci(h->name, "Content-Type")) {
            bw_str_t v = h->value;
            const char *semi = memchr(v.data, ';', v.len);
            if (semi)
                v.len = (size_t)(semi - v.data);
            return bw_str_lower(p, bw_str_trim(v)).data;
        }
    }
    return NULL;
}

/* The described media type for ct: exact, then type/ *, then * / *. */
static const oas_media_t *find_media(const oas_op_t *op, const char *ct)
{
    int i, pass;
    const char *slash = ct ? strchr(ct, '/') : NULL;
    if (!ct)
        return NULL;
    for (pass = 0; pass < 3; pass++)
        for (i = 0; i < op->n_media; i++) {
            const char *m = op->media[i].media;
            if ((pass == 0 && !strcmp(m, ct))
                || (pass == 1 && slash && !strncmp(m, ct, (size_t)(slash - ct + 1))
                    && !strcmp(m + (slash - ct + 1), "*"))
                || (pass == 2 && !strcmp(m, "*/*")))
                return &op->media[i];
        }
    return NULL;
}

static apr_status_t free_md(void *md)
{
    pcre2_match_data_free(md);
    return APR_SUCCESS;
}

/* For a caller with no match data of its own (tests, tools). */
static pcre2_match_data *own_match_data(apr_pool_t *p)
{
    pcre2_match_data *md = pcre2_match_data_create(16, NULL);
    apr_pool_cleanup_register(p, md, free_md, apr_pool_cleanup_null);
    return md;
}

bw_oas_run_t *bw_oas_begin(apr_pool_t *pool, const bw_oas_t *oas, const bw_oas_request_t *req,
                           pcre2_match_data *md, pcre2_match_context *mctx)
{
    bw_oas_run_t *run = apr_pcalloc(pool, sizeof(*run));
    bw_str_t vals[OAS_MAX_SEGMENTS], path = target_path(req->uri);
    int i;
    run->p = pool;
    run->oas = oas;
    run->md = md ? md : own_match_data(pool);
    run->mctx = mctx;
    run->kept = apr_array_make(pool, 4, sizeof(bw_oas_violation_t));
    if (!(run->path = find_path(run, path, vals))) {
        report(run, "/path", apr_psprintf(pool, "no path of the description matches %s",
                                          bw_str_pdup(pool, path)), "#/paths");
        return run;
    }
    for (i = 0; i < run->path->n_ops; i++)
        if (bw_str_eq(req->method, bw_str_make(run->path->ops[i].method)))   /* case matters */
            run->op = &run->path->ops[i];
    if (!run->op) {
        report(run, "/method", apr_psprintf(pool, "%s is not described for %s",
                                            bw_str_pdup(pool, req->method), run->path->tmpl),
               apr_pstrcat(pool, "#/paths/", oas_ptr_escape(pool, bw_str_make(run->path->tmpl)),
                           NULL));
        return run;
    }
    check_params(run, req, vals);
    run->ctype = media_type(pool, req->headers);
    if (run->op->has_body)
        run->media = find_media(run->op, run->ctype);
    return run;
}

const bw_json_observer_t *bw_oas_body_observer(bw_oas_run_t *run)
{
    if (!run->op || !run->media || !run->media->json || !run->media->schema)
        return NULL;
    if (!run->body) {
        run->body = oas_stream_make(run->p, run->media->schema, report, full, run, run->md,
                                   run->mctx);
        oas_stream_base(run->body, "/body");
    }
    return oas_stream_observer(run->body);
}

void bw_oas_body_end(bw_oas_run_t *run, int had_body, const char *parse_error)
{
    const oas_op_t *op = run->op;
    if (!op || run->ended)
        return;
    run->ended = 1;
    if (!had_body) {
        if (op->body_required)
            report(run, "/body", "the request body is required", op->body_ptr);
        return;
    }
    if (!op->has_body) {
        report(run, "/body", "the operation takes no request body", op->ptr);
        return;
    }
    if (!run->media) {
        report(run, "/header/content-type",
               apr_psprintf(run->p, "content type %s is not one the operation accepts",
                            run->ctype ? run->ctype : "(none)"), op->body_ptr);
        return;
    }
    if (parse_error && run->media->json)
        report(run, "/body", apr_pstrcat(run->p, "not valid JSON: ", parse_error, NULL),
               op->body_ptr);
    else if (run->body && !oas_stream_done(run->body))
        report(run, "/body", "the JSON document is incomplete", op->body_ptr);
}

const apr_array_header_t *bw_oas_violations(const bw_oas_run_t *run)
{
    return run->kept;
}

long bw_oas_violation_count(const bw_oas_run_t *run)
{
    return run->count;
}

const char *bw_oas_operation(const bw_oas_run_t *run)
{
    return run->op ? run->op->name : NULL;
}
