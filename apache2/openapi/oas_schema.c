/*
 * JSON Schema (the OpenAPI 3.0 dialect and 3.1's JSON Schema 2020-12
 * subset listed in README.md) compiled into oas_schema_t. Each schema
 * object of the description is compiled once, whatever number of $refs
 * name it, so a recursive $ref becomes a cycle in the compiled graph and
 * costs nothing more at start-up. A cycle that never reaches a property or
 * an item (A: allOf [$ref A]) would make the validator expand one value
 * for ever: it is refused here, as is a value that would be checked
 * against more than OAS_MAX_WIDTH schemas at once. Keywords the validator
 * does not implement are errors, never ignored.
 */
#include <string.h>
#include <stdlib.h>
#include <math.h>
#include "openapi/oas_int.h"

#define OAS_COMPILE_DEPTH 1000

struct oas_compiler_s {
    apr_pool_t *p;
    const oas_node_t *root;
    int v31;
    apr_hash_t *done;        /* const oas_node_t * -> oas_schema_t * */
    apr_hash_t *level;       /* const oas_node_t * -> int child depth while compiling */
    apr_array_header_t *fresh;  /* oas_schema_t *: compiled, width not yet checked */
    int depth, child_depth;
};

/* Keywords that say something about a schema but nothing a request must
 * satisfy. */
static const char *const annotations[] = {
    "title", "description", "example", "examples", "default", "deprecated", "readOnly",
    "writeOnly", "xml", "externalDocs", "discriminator", "$comment", "$schema",
    "contentMediaType", "contentEncoding", NULL
};

oas_compiler_t *oas_compiler_make(apr_pool_t *p, const oas_node_t *root, int v31)
{
    oas_compiler_t *c = apr_pcalloc(p, sizeof(*c));
    c->p = p;
    c->root = root;
    c->v31 = v31;
    c->done = apr_hash_make(p);
    c->level = apr_hash_make(p);
    c->fresh = apr_array_make(p, 16, sizeof(oas_schema_t *));
    return c;
}

static const char *fail(oas_compiler_t *c, char **err, const char *ptr, const char *why)
{
    *err = apr_psprintf(c->p, "%s: %s", ptr, why);
    return NULL;
}

static int is_annotation(bw_str_t k)
{
    int i;
    if (k.len > 2 && !memcmp(k.data, "x-", 2))
        return 1;
    for (i = 0; annotations[i]; i++)
        if (strlen(annotations[i]) == k.len && !memcmp(annotations[i], k.data, k.len))
            return 1;
    return 0;
}

static unsigned type_bit(const oas_node_t *n)
{
    static const struct { const char *name; unsigned bits; } t[] = {
        { "null", OAS_T_NULL }, { "boolean", OAS_T_BOOL }, { "integer", OAS_T_INT },
        { "number", OAS_T_NUM | OAS_T_INT }, { "string", OAS_T_STR }, { "array", OAS_T_ARR },
        { "object", OAS_T_OBJ }, { NULL, 0 }
    };
    int i;
    if (n->kind != OAS_N_STR)
        return 0;
    for (i = 0; t[i].name; i++)
        if (!strcmp(t[i].name, n->text.data))
            return t[i].bits;
    return 0;
}

/* A non-negative integer keyword (minLength...). */
static int count_kw(oas_compiler_t *c, const oas_node_t *n, long *out, char **err)
{
    char *end;
    double d;
    if (n->kind != OAS_N_NUM || (d = strtod(n->text.data, &end), *end) || d < 0 || d != floor(d)
        || d > 1e15) {
        fail(c, err, n->ptr, "must be a non-negative integer");
        return -1;
    }
    *out = (long)d;
    return 0;
}

static int number_kw(oas_compiler_t *c, const oas_node_t *n, double *out, char **err)
{
    char *end;
    if (n->kind != OAS_N_NUM) {
        fail(c, err, n->ptr, "must be a number");
        return -1;
    }
    *out = strtod(n->text.data, &end);
    if (*end || !isfinite(*out)) {
        fail(c, err, n->ptr, "must be a finite number");
        return -1;
    }
    return 0;
}

static int literal(oas_compiler_t *c, const oas_node_t *n, oas_lit_t *l, char **err)
{
    memset(l, 0, sizeof(*l));
    l->text = n->text;
    switch (n->kind) {
    case OAS_N_NULL: l->type = OAS_T_NULL; return 0;
    case OAS_N_BOOL: l->type = OAS_T_BOOL; return 0;
    case OAS_N_STR: l->type = OAS_T_STR; return 0;
    case OAS_N_NUM: l->type = OAS_T_NUM; return number_kw(c, n, &l->num, err);
    default:
        fail(c, err, n->ptr, "enum and const values that are objects or arrays are not supported");
        return -1;
    }
}

static const oas_schema_t *compile(oas_compiler_t *c, const oas_node_t *n, int child, char **err);

/* allOf / anyOf / oneOf: a non-empty list of schemas for the same value. */
static int schema_list(oas_compiler_t *c, const oas_node_t *n, const oas_schema_t ***out, int *count,
                       char **err)
{
    int i;
    if (n->kind != OAS_N_SEQ || n->kids->nelts == 0) {
        fail(c, err, n->ptr, "must be a non-empty list of schemas");
        return -1;
    }
    *out = apr_pcalloc(c->p, sizeof(**out) * (size_t)n->kids->nelts);
    for (i = 0; i < n->kids->nelts; i++)
        if (!((*out)[i] = compile(c, OAS_KID(n, i), 0, err)))
            return -1;
    *count = n->kids->nelts;
    return 0;
}

static int prop_cmp(const void *a, const void *b)
{
    const oas_prop_t *x = a, *y = b;
    if (x->name.len != y->name.len)
        return x->name.len < y->name.len ? -1 : 1;
    return memcmp(x->name.data, y->name.data, x->name.len);
}

/* Start-up only: the property named so, by binary search of the sorted
 * table (the hash table is built when the table is complete). */
static oas_prop_t *prop_search(const oas_schema_t *s, const char *name, size_t len)
{
    int lo = 0, hi = s->n_props - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, r;
        const oas_prop_t *p = &s->props[mid];
        if (p->name.len != len)
            r = p->name.len < len ? -1 : 1;
        else
            r = memcmp(p->name.data, name, len);
        if (!r)
            return (oas_prop_t *)p;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* The table at least twice the properties' number, so that a probe
 * meets an empty slot soon; the schema's own names decide how slots
 * collide, not the request. */
static void prop_slots(apr_pool_t *p, oas_schema_t *s)
{
    unsigned size = 4, i;
    oas_slot_t *t;
    while (size < 2 * (unsigned)s->n_props)
        size *= 2;
    t = apr_pcalloc(p, sizeof(*t) * size);
    for (i = 0; i < (unsigned)s->n_props; i++) {
        const bw_str_t *n = &s->props[i].name;
        uint64_t a, b, c;
        unsigned h;
        oas_key_words(n->data, n->len, &a, &b, &c);
        for (h = oas_key_hash(a, b, n->len, size - 1); t[h].idx; h = (h + 1) & (size - 1))
            ;
        t[h].a = a;
        t[h].b = b;
        t[h].c = c;
        t[h].len = (uint32_t)n->len;
        t[h].idx = i + 1;
    }
    s->slots = t;
    s->slot_mask = size - 1;
}

/* Names longer than 24 bytes (the key handler probes for the others
 * inline): out of line, so that the lookup of the usual, shorter name
 * calls nothing and saves no registers. */
const oas_prop_t *oas_prop_find_long(const oas_schema_t *s, const char *name, size_t len)
{
    uint64_t a, b, c;
    oas_key_words(name, len, &a, &b, &c);
    return oas_prop_probe_words(s, name, len, a, b, c, 1);
}

/* properties and required into one sorted table. */
static int object_kws(oas_compiler_t *c, oas_schema_t *s, const oas_node_t *props,
                      const oas_node_t *req, char **err)
{
    int np, nr, i, n = 0;
    oas_prop_t *t;
    if (props && props->kind != OAS_N_MAP)
        return fail(c, err, props->ptr, "must be a map of schemas") ? 0 : -1;
    if (req && req->kind != OAS_N_SEQ)
        return fail(c, err, req->ptr, "must be a list of property names") ? 0 : -1;
    np = props ? props->kids->nelts : 0;
    nr = req ? req->kids->nelts : 0;
    if (nr > OAS_MAX_REQUIRED)
        return fail(c, err, req->ptr, apr_psprintf(c->p, "more than %d required properties are "
                                                   "not supported", OAS_MAX_REQUIRED)) ? 0 : -1;
    t = apr_pcalloc(c->p, sizeof(*t) * (size_t)(np + nr + 1));
    for (i = 0; i < np; i++) {
        t[n].name = OAS_KEY(props, i);
        t[n].required_bit = -1;
        if (!(t[n].schema = compile(c, OAS_KID(props, i), 1, err)))
            return -1;
        n++;
    }
    qsort(t, (size_t)n, sizeof(*t), prop_cmp);
    s->props = t;
    s->n_props = n;
    for (i = 0; i < nr; i++) {
        const oas_node_t *r = OAS_KID(req, i);
        oas_prop_t *p;
        if (r->kind != OAS_N_STR)
            return fail(c, err, r->ptr, "must be a property name") ? 0 : -1;
        p = prop_search(s, r->text.data, r->text.len);
        if (!p) {
            p = &t[n++];
            p->name = r->text;
            p->schema = NULL;
            p->required_bit = -1;
            qsort(t, (size_t)n, sizeof(*t), prop_cmp);
            s->n_props = n;
            p = prop_search(s, r->text.data, r->text.len);
        }
        if (p->required_bit >= 0)
            return fail(c, err, r->ptr, "named twice") ? 0 : -1;
        p->required_bit = s->n_required++;
    }
    if (n)
        prop_slots(c->p, s);
    return 0;
}

static int bool_node(const oas_node_t *n)
{
    return n->kind == OAS_N_BOOL && n->text.data[0] == 't';
}

static apr_status_t free_pattern(void *re)
{
    pcre2_code_free(re);
    return APR_SUCCESS;
}

/* One keyword of schema s. */
static int keyword(oas_compiler_t *c, oas_schema_t *s, bw_str_t k, const oas_node_t *v,
                   int *nullable, char **err)
{
#define IS(name) (k.len == sizeof(name) - 1 && !memcmp(k.data, name, k.len))
    if (IS("type")) {
        int i;
        unsigned bits = 0;
        if (v->kind == OAS_N_SEQ && c->v31) {
            for (i = 0; i < v->kids->nelts; i++) {
                unsigned b = type_bit(OAS_KID(v, i));
                if (!b)
                    return fail(c, err, OAS_KID(v, i)->ptr, "unknown type") ? 0 : -1;
                bits |= b;
            }
        } else if (!(bits = type_bit(v)) || (bits == OAS_T_NULL && !c->v31)) {
            return fail(c, err, v->ptr, "unknown type") ? 0 : -1;
        }
        s->types = bits;
        return 0;
    }
    if (IS("nullable")) {
        if (v->kind != OAS_N_BOOL)
            return fail(c, err, v->ptr, "must be true or false") ? 0 : -1;
        *nullable = bool_node(v);
        return 0;
    }
    if (IS("format")) {
        if (v->kind != OAS_N_STR || (s->format = oas_format_lookup(v->text.data)) < 0)
            return fail(c, err, v->ptr, "unsupported format (supported: date-time, date, time, "
                        "uuid, email, ipv4, ipv6, uri, int32, int64, byte; annotations only: "
                        "float, double, binary, password)") ? 0 : -1;
        return 0;
    }
    if (IS("enum") || IS("const")) {
        int i, one = IS("const");
        oas_lit_t *l;
        if (!one && (v->kind != OAS_N_SEQ || !v->kids->nelts))
            return fail(c, err, v->ptr, "must be a non-empty list") ? 0 : -1;
        l = apr_pcalloc(c->p, sizeof(*l) * (size_t)(one ? 1 : v->kids->nelts));
        for (i = 0; i < (one ? 1 : v->kids->nelts); i++)
            if (literal(c, one ? v : OAS_KID(v, i), &l[i], err) < 0)
                return -1;
        s->lits = l;
        s->n_lits = one ? 1 : v->kids->nelts;
        return 0;
    }
    if (IS("minLength"))
        return count_kw(c, v, &s->min_len, err);
    if (IS("maxLength"))
        return count_kw(c, v, &s->max_len, err);
    if (IS("minItems"))
        return count_kw(c, v, &s->min_items, err);
    if (IS("maxItems"))
        return count_kw(c, v, &s->max_items, err);
    if (IS("minProperties"))
        return count_kw(c, v, &s->min_props, err);
    if (IS("maxProperties"))
        return count_kw(c, v, &s->max_props, err);
    if (IS("pattern")) {
        int code;
        PCRE2_SIZE off;
        if (v->kind != OAS_N_STR)
            return fail(c, err, v->ptr, "must be a string") ? 0 : -1;
        s->pattern = pcre2_compile((PCRE2_SPTR)v->text.data, v->text.len,
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &off, NULL);
        if (!s->pattern) {
            PCRE2_UCHAR msg[160];
            pcre2_get_error_message(code, msg, sizeof(msg));
            return fail(c, err, v->ptr, apr_psprintf(c->p, "bad pattern at offset %lu: %s",
                                                     (unsigned long)off, (char *)msg)) ? 0 : -1;
        }
        s->pattern_jit = pcre2_jit_compile(s->pattern, PCRE2_JIT_COMPLETE) == 0;
        s->pattern_fast = oas_pat_compile(c->p, v->text.data, v->text.len);
        apr_pool_cleanup_register(c->p, s->pattern, free_pattern, apr_pool_cleanup_null);
        s->pattern_src = v->text.data;
        return 0;
    }
    if (IS("minimum")) {
        s->has_min = 1;
        return number_kw(c, v, &s->min, err);
    }
    if (IS("maximum")) {
        s->has_max = 1;
        return number_kw(c, v, &s->max, err);
    }
    if (IS("exclusiveMinimum") || IS("exclusiveMaximum")) {
        int is_min = IS("exclusiveMinimum");
        if (v->kind == OAS_N_BOOL) {      /* 3.0: qualifies minimum / maximum */
            *(is_min ? &s->excl_min : &s->excl_max) = bool_node(v) ? 2 : 0;
            return 0;
        }
        *(is_min ? &s->excl_min : &s->excl_max) = 1;   /* 3.1: a bound of its own */
        return number_kw(c, v, is_min ? &s->min : &s->max, err) < 0 ? -1
             : (*(is_min ? &s->has_min : &s->has_max) = 1, 0);
    }
    if (IS("multipleOf")) {
        if (number_kw(c, v, &s->multiple_of, err) < 0)
            return -1;
        return s->multiple_of > 0 ? 0 : (fail(c, err, v->ptr, "must be greater than 0") ? 0 : -1);
    }
    if (IS("uniqueItems")) {
        if (v->kind == OAS_N_BOOL && !bool_node(v))
            return 0;
        return fail(c, err, v->ptr, "uniqueItems: true is not supported") ? 0 : -1;
    }
    if (IS("items")) {
        if (v->kind == OAS_N_SEQ)
            return fail(c, err, v->ptr, "a list of item schemas (tuples) is not supported") ? 0 : -1;
        return (s->items = compile(c, v, 1, err)) ? 0 : -1;
    }
    if (IS("additionalProperties")) {
        if (v->kind == OAS_N_BOOL) {
            s->additional = bool_node(v);
            return 0;
        }
        return (s->additional_schema = compile(c, v, 1, err)) ? 0 : -1;
    }
    if (IS("allOf"))
        return schema_list(c, v, &s->all_of, &s->n_all, err);
    if (IS("anyOf"))
        return schema_list(c, v, &s->any_of, &s->n_any, err);
    if (IS("oneOf"))
        return schema_list(c, v, &s->one_of, &s->n_one, err);
    if (IS("not"))
        return (s->not_schema = compile(c, v, 0, err)) ? 0 : -1;
    if (IS("properties") || IS("required") || IS("$ref"))
        return 0;   /* taken together by the caller */
    if (is_annotation(k))
        return 0;
    fail(c, err, v->ptr, "unsupported schema keyword");
    return -1;
#undef IS
}

/* A schema with its own keywords besides a $ref: the target joins as an
 * allOf member (what 3.1 says; 3.0 would ignore the siblings, which here
 * would be ignoring the description's words). */
static int ref_member(oas_compiler_t *c, oas_schema_t *s, const oas_schema_t *target)
{
    const oas_schema_t **all = apr_pcalloc(c->p, sizeof(*all) * (size_t)(s->n_all + 1));
    if (s->n_all)
        memcpy(all, s->all_of, sizeof(*all) * (size_t)s->n_all);
    all[s->n_all++] = target;
    s->all_of = all;
    return 0;
}

static int only_ref(const oas_node_t *n)
{
    int i;
    for (i = 0; i < n->keys->nelts; i++) {
        bw_str_t k = OAS_KEY(n, i);
        if (!(k.len == 4 && !memcmp(k.data, "$ref", 4)) && !is_annotation(k))
            return 0;
    }
    return 1;
}

static oas_schema_t *schema_new(oas_compiler_t *c, const char *ptr)
{
    oas_schema_t *s = apr_pcalloc(c->p, sizeof(*s));
    s->ptr = ptr;
    s->types = OAS_T_ANY;
    s->min_len = s->max_len = s->min_items = s->max_items = s->min_props = s->max_props = -1;
    s->n_lits = -1;
    s->additional = 1;
    return s;
}

static int compile_body(oas_compiler_t *c, oas_schema_t *s, const oas_node_t *n, char **err)
{
    const oas_node_t *ref = oas_get(n, "$ref");
    int i, nullable = -1;
    if (ref) {
        const oas_node_t *t;
        const oas_schema_t *ts;
        if (ref->kind != OAS_N_STR)
            return fail(c, err, ref->ptr, "must be a string") ? 0 : -1;
        if (!(t = oas_resolve(c->p, c->root, ref->text.data, err))) {
            *err = apr_psprintf(c->p, "%s: %s", ref->ptr, *err);
            return -1;
        }
        if (!(ts = compile(c, t, 0, err)))
            return -1;
        ref_member(c, s, ts);
    }
    for (i = 0; i < n->keys->nelts; i++)
        if (keyword(c, s, OAS_KEY(n, i), OAS_KID(n, i), &nullable, err) < 0)
            return -1;
    if (object_kws(c, s, oas_get(n, "properties"), oas_get(n, "required"), err) < 0)
        return -1;
    if (nullable == 1)
        s->types |= OAS_T_NULL;
    return 0;
}

static const oas_schema_t *compile(oas_compiler_t *c, const oas_node_t *n, int child, char **err)
{
    oas_schema_t *s;
    int *lvl;
    const oas_schema_t *r = NULL;
    if (n->kind == OAS_N_BOOL && c->v31) {
        s = schema_new(c, n->ptr);
        if (!bool_node(n))
            s->types = 0;   /* false: nothing is valid */
        return s;
    }
    if (n->kind != OAS_N_MAP)
        return fail(c, err, n->ptr, "a schema must be a map"), NULL;
    if ((s = apr_hash_get(c->done, &n, sizeof(n)))) {
        lvl = apr_hash_get(c->level, &n, sizeof(n));
        if (lvl && *lvl == c->child_depth + child)
            return fail(c, err, n->ptr, "recursive $ref (or combinator) that reaches the same "
                        "schema without a property or item in between"), NULL;
        return s;
    }
    if (c->depth >= OAS_COMPILE_DEPTH)
        return fail(c, err, n->ptr, apr_psprintf(c->p, "schemas nested more than %d deep",
                                                 OAS_COMPILE_DEPTH)), NULL;
    s = schema_new(c, n->ptr);
    *(oas_schema_t **)apr_array_push(c->fresh) = s;
    lvl = apr_palloc(c->p, sizeof(*lvl));
    c->depth++;
    c->child_depth += child;
    *lvl = c->child_depth;
    apr_hash_set(c->done, apr_pmemdup(c->p, &n, sizeof(n)), sizeof(n), s);
    apr_hash_set(c->level, apr_pmemdup(c->p, &n, sizeof(n)), sizeof(n), lvl);
    if (compile_body(c, s, n, err) == 0)
        r = s;
    apr_hash_set(c->level, &n, sizeof(n), NULL);
    c->child_depth -= child;
    c->depth--;
    /* a schema that is nothing but a $ref is its target */
    if (r && oas_get(n, "$ref") && only_ref(n)) {
        r = s->all_of[0];
        apr_hash_set(c->done, &n, sizeof(n), r);
    }
    return r;
}

/* Width: itself and all the schemas its combinators add for one value.
 * Computed once every schema is compiled (a member may still be compiling
 * when its user is). */
static int width(apr_pool_t *p, const oas_schema_t *cs, int depth, char **err)
{
    oas_schema_t *s = (oas_schema_t *)cs;
    int i, w = 1, sub;
    if (s->width)
        return s->width;
    if (depth > OAS_COMPILE_DEPTH) {
        *err = apr_psprintf(p, "%s: combinators nested too deep", s->ptr);
        return -1;
    }
#define ADD(x) do { if ((sub = width(p, (x), depth + 1, err)) < 0) return -1; w += sub; \
                    if (w > OAS_MAX_WIDTH) goto wide; } while (0)
    for (i = 0; i < s->n_all; i++)
        ADD(s->all_of[i]);
    for (i = 0; i < s->n_any; i++)
        ADD(s->any_of[i]);
    for (i = 0; i < s->n_one; i++)
        ADD(s->one_of[i]);
    if (s->not_schema)
        ADD(s->not_schema);
#undef ADD
    s->width = w;
    return w;
wide:
    *err = apr_psprintf(p, "%s: its combinators check one value against more than %d schemas",
                        s->ptr, OAS_MAX_WIDTH);
    return -1;
}

const oas_schema_t *oas_schema_compile(oas_compiler_t *c, const oas_node_t *n, char **err)
{
    const oas_schema_t *s = compile(c, n, 0, err);
    int i;
    if (!s)
        return NULL;
    for (i = 0; i < c->fresh->nelts; i++)
        if (width(c->p, ((oas_schema_t **)c->fresh->elts)[i], 0, err) < 0)
            return NULL;
    c->fresh->nelts = 0;
    return s;
}

int oas_schema_is_scalar(const oas_schema_t *s)
{
    int i;
    /* an enum or const lists scalars only (literal() refuses the others) */
    if ((s->types & (OAS_T_ARR | OAS_T_OBJ)) && s->n_lits < 0)
        return 0;
    for (i = 0; i < s->n_all; i++)
        if (!oas_schema_is_scalar(s->all_of[i]))
            return 0;
    for (i = 0; i < s->n_any; i++)
        if (!oas_schema_is_scalar(s->any_of[i]))
            return 0;
    for (i = 0; i < s->n_one; i++)
        if (!oas_schema_is_scalar(s->one_of[i]))
            return 0;
    return 1;
}
