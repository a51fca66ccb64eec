/*
 * The description compiled: OpenAPI version, the server path prefixes,
 * every path template into a tree of segments (literal segments before
 * templated ones, as the specification orders them), and each operation's
 * parameters and request body with their schemas. Errors name the JSON
 * pointer of what cannot be used; keys this compiler does not know are
 * errors too, so nothing of the description is ignored without a word
 * (README.md lists what is checked and what is out of scope: responses,
 * security requirements, callbacks, which say nothing of a request's shape).
 */
#include <string.h>
#include <ctype.h>
#include <apr_file_io.h>
#include "openapi/oas_int.h"

static const char *const methods[] = { "get", "put", "post", "delete", "options", "head",
                                       "patch", "trace", NULL };

typedef struct {
    apr_pool_t *p;
    const oas_node_t *root;
    oas_compiler_t *c;
    bw_oas_t *oas;
    char *err;
} spec_t;

static int fail(spec_t *sp, const char *ptr, const char *why)
{
    if (!sp->err)
        sp->err = apr_psprintf(sp->p, "%s: %s", ptr, why);
    return -1;
}

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

static int key_is(bw_str_t k, const char *s)
{
    return k.len == strlen(s) && !memcmp(k.data, s, k.len);
}

/* Every key of map n is one of allowed (or x-...): else an error. */
static int known_keys(spec_t *sp, const oas_node_t *n, const char *const *allowed)
{
    int i, j;
    for (i = 0; i < n->keys->nelts; i++) {
        bw_str_t k = OAS_KEY(n, i);
        if (k.len > 2 && !memcmp(k.data, "x-", 2))
            continue;
        for (j = 0; allowed[j] && !key_is(k, allowed[j]); j++)
            ;
        if (!allowed[j])
            return fail(sp, OAS_KID(n, i)->ptr, "not supported here");
    }
    return 0;
}

/* n, or what its $ref names (one level: a $ref to a $ref is followed too). */
static const oas_node_t *deref(spec_t *sp, const oas_node_t *n)
{
    int hops = 0;
    while (n && n->kind == OAS_N_MAP && oas_get(n, "$ref")) {
        const oas_node_t *r = oas_get(n, "$ref");
        char *e = NULL;
        if (r->kind != OAS_N_STR || ++hops > 32) {
            fail(sp, r->ptr, "a $ref that is not a string, or a chain of more than 32");
            return NULL;
        }
        if (!(n = oas_resolve(sp->p, sp->root, r->text.data, &e))) {
            fail(sp, r->ptr, e);
            return NULL;
        }
    }
    return n;
}

static int flag(spec_t *sp, const oas_node_t *n, int dflt, int *out)
{
    if (!n) {
        *out = dflt;
        return 0;
    }
    if (n->kind != OAS_N_BOOL)
        return fail(sp, n->ptr, "must be true or false");
    *out = n->text.data[0] == 't';
    return 0;
}

static const oas_schema_t *schema(spec_t *sp, const oas_node_t *n)
{
    char *e = NULL;
    const oas_schema_t *s = oas_schema_compile(sp->c, n, &e);
    if (!s && !sp->err)
        sp->err = e;   /* it names its own pointer */
    return s;
}

/* ---- parameters ------------------------------------------------------------------ */

static int param_one(spec_t *sp, const oas_node_t *n, oas_param_t *pm)
{
    static const char *const keys[] = { "name", "in", "description", "required", "deprecated",
                                        "allowEmptyValue", "style", "explode", "allowReserved",
                                        "schema", "example", "examples", NULL };
    static const char *const ins[] = { "path", "query", "header", "cookie", NULL };
    static const char *const styles[] = { "simple", "form", "simple", "form" };
    const oas_node_t *name = oas_get(n, "name"), *in = oas_get(n, "in"), *st, *sc;
    int i, dflt_explode;
    if (n->kind != OAS_N_MAP)
        return fail(sp, n->ptr, "a parameter must be a map");
    if (oas_get(n, "content"))
        return fail(sp, oas_get(n, "content")->ptr, "parameters described by content are not supported");
    if (known_keys(sp, n, keys) < 0)
        return -1;
    if (!name || name->kind != OAS_N_STR || !in || in->kind != OAS_N_STR)
        return fail(sp, n->ptr, "a parameter needs a name and an in");
    for (i = 0; ins[i] && strcmp(ins[i], in->text.data); i++)
        ;
    if (!ins[i])
        return fail(sp, in->ptr, "must be path, query, header or cookie");
    pm->in = i;
    pm->name = name->text.data;
    pm->ptr = n->ptr;
    if ((st = oas_get(n, "style")) && (st->kind != OAS_N_STR || strcmp(st->text.data, styles[i])))
        return fail(sp, st->ptr, apr_psprintf(sp->p, "only style %s is supported for %s parameters",
                                              styles[i], ins[i]));
    dflt_explode = pm->in == OAS_IN_QUERY || pm->in == OAS_IN_COOKIE;
    if (flag(sp, oas_get(n, "required"), 0, &pm->required) < 0
        || flag(sp, oas_get(n, "explode"), dflt_explode, &pm->explode) < 0
        || flag(sp, oas_get(n, "allowEmptyValue"), 0, &pm->allow_empty) < 0)
        return -1;
    if (pm->in == OAS_IN_PATH && !pm->required)
        return fail(sp, n->ptr, "a path parameter must be required: true");
    if (!(sc = oas_get(n, "schema")))
        return fail(sp, n->ptr, "a parameter without a schema is not supported");
    if (!(pm->schema = schema(sp, sc)))
        return -1;
    if (!oas_schema_is_scalar(pm->schema)
        && !(!(pm->schema->types & OAS_T_OBJ) && pm->schema->items
             && oas_schema_is_scalar(pm->schema->items)))
        return fail(sp, sc->ptr, "object parameters (and arrays of non-scalars) are not supported");
    return 0;
}

/* Path-level parameters, then the operation's (which replace the same
 * name and location). Header parameters Accept, Content-Type and
 * Authorization are left out, as the specification says. */
static int params(spec_t *sp, const oas_node_t *lists[2], apr_array_header_t *out)
{
    apr_array_header_t *from = apr_array_make(sp->p, 4, sizeof(int));   /* list of each */
    int l, i, j;
    for (l = 0; l < 2; l++) {
        const oas_node_t *list = lists[l];
        if (!list)
            continue;
        if (list->kind != OAS_N_SEQ)
            return fail(sp, list->ptr, "must be a list of parameters");
        for (i = 0; i < list->kids->nelts; i++) {
            oas_param_t pm;
            const oas_node_t *n = deref(sp, OAS_KID(list, i));
            memset(&pm, 0, sizeof(pm));
            if (!n || param_one(sp, n, &pm) < 0)
                return -1;
            if (pm.in == OAS_IN_HEADER && (!strcasecmp(pm.name, "Accept")
                || !strcasecmp(pm.name, "Content-Type") || !strcasecmp(pm.name, "Authorization")))
                continue;
            for (j = 0; j < out->nelts; j++) {
                oas_param_t *o = &((oas_param_t *)out->elts)[j];
                if (o->in == pm.in && (pm.in == OAS_IN_HEADER ? !strcasecmp(o->name, pm.name)
                                                               : !strcmp(o->name, pm.name)))
                    break;
            }
            if (j < out->nelts && ((int *)from->elts)[j] == l)
                return fail(sp, n->ptr, "the same parameter is described twice");
            if (j < out->nelts) {
                ((oas_param_t *)out->elts)[j] = pm;
                ((int *)from->elts)[j] = l;
            } else {
                *(oas_param_t *)apr_array_push(out) = pm;
                *(int *)apr_array_push(from) = l;
            }
        }
    }
    return 0;
}

/* ---- request bodies --------------------------------------------------------------- */

static int media_is_json(const char *m)
{
    size_t n = strlen(m);
    return !strcmp(m, "application/json") || (n > 5 && !strcmp(m + n - 5, "+json"));
}

static int request_body(spec_t *sp, const oas_node_t *n, oas_op_t *op)
{
    static const char *const keys[] = { "description", "content", "required", NULL };
    static const char *const mkeys[] = { "schema", "example", "examples", NULL };
    const oas_node_t *content;
    oas_media_t *m;
    int i;
    if (!(n = deref(sp, n)))
        return -1;
    if (n->kind != OAS_N_MAP || known_keys(sp, n, keys) < 0)
        return n->kind != OAS_N_MAP ? fail(sp, n->ptr, "must be a map") : -1;
    if (flag(sp, oas_get(n, "required"), 0, &op->body_required) < 0)
        return -1;
    content = oas_get(n, "content");
    if (!content || content->kind != OAS_N_MAP || !content->kids->nelts)
        return fail(sp, n->ptr, "a requestBody needs a content map");
    op->has_body = 1;
    op->body_ptr = n->ptr;
    op->n_media = content->kids->nelts;
    op->media = m = apr_pcalloc(sp->p, sizeof(*m) * (size_t)op->n_media);
    for (i = 0; i < op->n_media; i++) {
        const oas_node_t *mt = OAS_KID(content, i), *sc;
        if (mt->kind != OAS_N_MAP)
            return fail(sp, mt->ptr, "must be a map");
        if (oas_get(mt, "encoding"))
            return fail(sp, oas_get(mt, "encoding")->ptr, "encoding is not supported");
        if (known_keys(sp, mt, mkeys) < 0)
            return -1;
        m[i].media = apr_pstrdup(sp->p, OAS_KEY(content, i).data);
        lower((char *)m[i].media);
        m[i].json = media_is_json(m[i].media);
        sc = oas_get(mt, "schema");
        if (sc && !(m[i].schema = schema(sp, sc)))
            return -1;
        if (sc && !m[i].json) {
            const oas_schema_t *s = m[i].schema;
            /* "any bytes" is the one schema a body of another type can be held to */
            if (!(s->types == OAS_T_STR && s->n_all + s->n_any + s->n_one == 0 && !s->not_schema
                  && s->min_len < 0 && s->max_len < 0 && !s->pattern))
                return fail(sp, sc->ptr, "schemas for non-JSON bodies are not supported (only "
                            "type: string, format: binary)");
            m[i].schema = NULL;
        }
    }
    return 0;
}

/* ---- operations and paths ------------------------------------------------------------ */

static int operation(spec_t *sp, const char *method, const char *tmpl, const oas_node_t *n,
                     const oas_node_t *path_params, oas_op_t *op)
{
    static const char *const keys[] = { "tags", "summary", "description", "externalDocs",
                                        "operationId", "parameters", "requestBody", "responses",
                                        "callbacks", "deprecated", "security", NULL };
    const oas_node_t *lists[2], *id = oas_get(n, "operationId"), *rb;
    apr_array_header_t *ps = apr_array_make(sp->p, 4, sizeof(oas_param_t));
    char *m = apr_pstrdup(sp->p, method), *q;
    if (n->kind != OAS_N_MAP)
        return fail(sp, n->ptr, "an operation must be a map");
    if (oas_get(n, "servers"))
        return fail(sp, oas_get(n, "servers")->ptr, "servers of an operation are not supported");
    if (known_keys(sp, n, keys) < 0)
        return -1;
    for (q = m; *q; q++)
        *q = (char)toupper((unsigned char)*q);
    op->method = m;
    op->ptr = n->ptr;
    op->name = id && id->kind == OAS_N_STR ? id->text.data : apr_pstrcat(sp->p, m, " ", tmpl, NULL);
    lists[0] = path_params;
    lists[1] = oas_get(n, "parameters");
    if (params(sp, lists, ps) < 0)
        return -1;
    op->params = (const oas_param_t *)ps->elts;
    op->n_params = ps->nelts;
    if ((rb = oas_get(n, "requestBody")) && request_body(sp, rb, op) < 0)
        return -1;
    return 0;
}

/* One template segment: literal, or prefix{name}suffix. */
static int split_segment(spec_t *sp, const char *ptr, bw_str_t seg, oas_seg_t *out, const char **name)
{
    const char *o = memchr(seg.data, '{', seg.len), *c;
    memset(out, 0, sizeof(*out));
    *name = NULL;
    if (!o) {
        if (memchr(seg.data, '}', seg.len))
            return fail(sp, ptr, "unbalanced } in the path template");
        out->lit = seg;
        return 0;
    }
    c = memchr(o, '}', seg.len - (size_t)(o - seg.data));
    if (!c || c == o + 1)
        return fail(sp, ptr, "unbalanced { or an empty {} in the path template");
    out->is_param = 1;
    out->lit = bw_str_n(seg.data, (size_t)(o - seg.data));
    out->suffix = bw_str_n(c + 1, seg.len - (size_t)(c + 1 - seg.data));
    if (memchr(out->suffix.data, '{', out->suffix.len) || memchr(out->suffix.data, '}', out->suffix.len)
        || memchr(out->lit.data, '}', out->lit.len))
        return fail(sp, ptr, "more than one parameter in a path segment is not supported");
    *name = apr_pstrmemdup(sp->p, o + 1, (size_t)(c - o - 1));
    return 0;
}

static oas_seg_t *child(spec_t *sp, oas_seg_t *at, const oas_seg_t *want)
{
    int i;
    oas_seg_t *n;
    if (!at->kids)
        at->kids = apr_array_make(sp->p, 2, sizeof(oas_seg_t *));
    for (i = 0; i < at->kids->nelts; i++) {
        n = ((oas_seg_t **)at->kids->elts)[i];
        if (n->is_param == want->is_param && bw_str_eq(n->lit, want->lit)
            && bw_str_eq(n->suffix, want->suffix))
            return n;
    }
    n = apr_pmemdup(sp->p, want, sizeof(*n));
    n->kids = NULL;
    n->path = NULL;
    /* literals are tried first, then templated segments with the longest fixed text */
    *(oas_seg_t **)apr_array_push(at->kids) = n;
    for (i = at->kids->nelts - 1; i > 0; i--) {
        oas_seg_t **k = (oas_seg_t **)at->kids->elts;
        int before = k[i - 1]->is_param > n->is_param
            || (n->is_param && k[i - 1]->is_param
                && k[i - 1]->lit.len + k[i - 1]->suffix.len < n->lit.len + n->suffix.len);
        if (!before)
            break;
        k[i] = k[i - 1];
        k[i - 1] = n;
    }
    return n;
}

static int path_item(spec_t *sp, bw_str_t tmpl, const oas_node_t *item)
{
    static const char *const keys[] = { "summary", "description", "parameters", "get", "put",
                                        "post", "delete", "options", "head", "patch", "trace",
                                        NULL };
    apr_array_header_t *names = apr_array_make(sp->p, 2, sizeof(const char *));
    apr_array_header_t *ops = apr_array_make(sp->p, 2, sizeof(oas_op_t));
    oas_path_t *path = apr_pcalloc(sp->p, sizeof(*path));
    oas_seg_t *at = &sp->oas->root;
    const char *s = tmpl.data + 1, *end = tmpl.data + tmpl.len;
    int i, j, nseg = 0;
    if (!(item = deref(sp, item)))
        return -1;
    if (item->kind != OAS_N_MAP)
        return fail(sp, item->ptr, "a path item must be a map");
    if (oas_get(item, "servers"))
        return fail(sp, oas_get(item, "servers")->ptr, "servers of a path are not supported");
    if (known_keys(sp, item, keys) < 0)
        return -1;
    path->tmpl = tmpl.data;
    while (tmpl.len > 1 && s <= end) {
        const char *e = memchr(s, '/', (size_t)(end - s));
        oas_seg_t seg;
        const char *name;
        if (!e)
            e = end;
        if (split_segment(sp, item->ptr, bw_str_n(s, (size_t)(e - s)), &seg, &name) < 0)
            return -1;
        if (name)
            *(const char **)apr_array_push(names) = name;
        at = child(sp, at, &seg);
        nseg++;
        s = e + 1;
    }
    if (at->path)
        return fail(sp, item->ptr, apr_psprintf(sp->p, "the same path as %s", at->path->tmpl));
    for (i = 0; methods[i]; i++) {
        const oas_node_t *on = oas_get(item, methods[i]);
        oas_op_t *op;
        if (!on)
            continue;
        op = apr_array_push(ops);
        memset(op, 0, sizeof(*op));
        if (operation(sp, methods[i], tmpl.data, on, oas_get(item, "parameters"), op) < 0)
            return -1;
        /* each name of the template is a path parameter, and only those */
        for (j = 0; j < op->n_params; j++) {
            int k, found = 0;
            if (op->params[j].in != OAS_IN_PATH)
                continue;
            for (k = 0; k < names->nelts; k++)
                found |= !strcmp(((const char **)names->elts)[k], op->params[j].name);
            if (!found)
                return fail(sp, op->params[j].ptr, "a path parameter the template does not name");
        }
        for (j = 0; j < names->nelts; j++) {
            int k, found = 0;
            for (k = 0; k < op->n_params; k++)
                found |= op->params[k].in == OAS_IN_PATH
                    && !strcmp(((const char **)names->elts)[j], op->params[k].name);
            if (!found)
                return fail(sp, on->ptr, apr_psprintf(sp->p, "path parameter {%s} is not described",
                                                      ((const char **)names->elts)[j]));
        }
    }
    path->ops = (const oas_op_t *)ops->elts;
    path->n_ops = ops->nelts;
    path->param_names = (const char **)names->elts;
    path->n_names = names->nelts;
    at->path = path;
    sp->oas->n_ops += ops->nelts;
    if (nseg > sp->oas->max_segments)
        sp->oas->max_segments = nseg;
    return 0;
}

/* The path part of each server URL: "https://h/api/v1" -> "/api/v1". */
static int servers(spec_t *sp, const oas_node_t *list)
{
    int i;
    sp->oas->bases = apr_array_make(sp->p, 2, sizeof(const char *));
    if (list && list->kind != OAS_N_SEQ)
        return fail(sp, list->ptr, "must be a list");
    for (i = 0; list && i < list->kids->nelts; i++) {
        const oas_node_t *u = oas_get(OAS_KID(list, i), "url");
        const char *s, *slash;
        size_t n;
        if (!u || u->kind != OAS_N_STR)
            return fail(sp, OAS_KID(list, i)->ptr, "a server needs a url");
        s = u->text.data;
        if (strstr(s, "://")) {
            s = strstr(s, "://") + 3;
            slash = strchr(s, '/');
            s = slash ? slash : "";
        }
        if (strchr(s, '{'))
            return fail(sp, u->ptr, "server variables in the path of a server URL are not supported");
        n = strlen(s);
        while (n && s[n - 1] == '/')
            n--;
        *(const char **)apr_array_push(sp->oas->bases) = apr_pstrmemdup(sp->p, s, n);
    }
    if (!sp->oas->bases->nelts)
        *(const char **)apr_array_push(sp->oas->bases) = "";
    return 0;
}

static int compile_doc(spec_t *sp)
{
    static const char *const keys[] = { "openapi", "info", "servers", "paths", "components",
                                        "security", "tags", "externalDocs", "webhooks",
                                        "jsonSchemaDialect", NULL };
    const oas_node_t *v = oas_get(sp->root, "openapi"), *paths;
    int v31, i;
    if (!v || v->kind != OAS_N_STR || strncmp(v->text.data, "3.", 2)
        || (v->text.data[2] != '0' && v->text.data[2] != '1') || v->text.data[3] != '.')
        return fail(sp, v ? v->ptr : "#", "not an OpenAPI 3.0 or 3.1 description (openapi: 3.0.x "
                    "or 3.1.x)");
    v31 = v->text.data[2] == '1';
    if (known_keys(sp, sp->root, keys) < 0)
        return -1;
    if ((v = oas_get(sp->root, "jsonSchemaDialect")) && (v->kind != OAS_N_STR
        || strcmp(v->text.data, "https://spec.openapis.org/oas/3.1/dialect/base")))
        return fail(sp, v->ptr, "only the default JSON Schema dialect is supported");
    sp->c = oas_compiler_make(sp->p, sp->root, v31);
    if (servers(sp, oas_get(sp->root, "servers")) < 0)
        return -1;
    paths = oas_get(sp->root, "paths");
    if (!paths || paths->kind != OAS_N_MAP)
        return fail(sp, "#", "no paths map");
    for (i = 0; i < paths->kids->nelts; i++) {
        bw_str_t t = OAS_KEY(paths, i);
        if (t.len > 2 && !memcmp(t.data, "x-", 2))
            continue;
        if (!t.len || t.data[0] != '/')
            return fail(sp, OAS_KID(paths, i)->ptr, "a path must start with /");
        if (path_item(sp, t, OAS_KID(paths, i)) < 0)
            return -1;
    }
    return 0;
}

bw_oas_t *bw_oas_load_text(apr_pool_t *pool, const char *name, const char *text, size_t len,
                           char **err)
{
    spec_t sp;
    char *e = NULL;
    memset(&sp, 0, sizeof(sp));
    sp.p = pool;
    sp.oas = apr_pcalloc(pool, sizeof(*sp.oas));
    sp.oas->file = name;
    if (!(sp.root = oas_doc_parse(pool, text, len, &e))) {
        *err = apr_psprintf(pool, "%s: %s", name, e);
        return NULL;
    }
    if (compile_doc(&sp) < 0) {
        *err = apr_psprintf(pool, "%s: %s", name, sp.err);
        return NULL;
    }
    return sp.oas;
}

bw_oas_t *bw_oas_load(apr_pool_t *pool, const char *path, char **err)
{
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n;
    char *buf;
    char msg[120];
    apr_status_t rv = apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, pool);
    if (rv == APR_SUCCESS)
        rv = apr_file_info_get(&fi, APR_FINFO_SIZE, f);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(pool, "%s: cannot read: %s", path, apr_strerror(rv, msg, sizeof(msg)));
        return NULL;
    }
    n = (apr_size_t)fi.size;
    buf = apr_palloc(pool, n + 1);
    rv = apr_file_read_full(f, buf, n, &n);
    apr_file_close(f);
    if (rv != APR_SUCCESS && n != (apr_size_t)fi.size) {
        *err = apr_psprintf(pool, "%s: cannot read: %s", path, apr_strerror(rv, msg, sizeof(msg)));
        return NULL;
    }
    buf[n] = '\0';
    return bw_oas_load_text(pool, path, buf, n, err);
}

const char *bw_oas_file(const bw_oas_t *oas)
{
    return oas->file;
}

int bw_oas_operation_count(const bw_oas_t *oas)
{
    return oas->n_ops;
}
