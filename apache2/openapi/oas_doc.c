/*
 * The description as a tree: YAML read with libyaml's event parser, JSON
 * with yajl's callbacks, both into the same nodes, each knowing its JSON
 * pointer so that every later error can name where it is. Plain YAML
 * scalars are typed as YAML 1.2's core schema says (null, true/false,
 * numbers, else strings); quoted ones are strings. Aliases, tags and
 * several documents in one file are refused: a description has no need of
 * them, and aliases are how a small YAML file expands into a huge tree.
 */
#include <string.h>
#include <ctype.h>
#include <stdlib.h>
#include <yaml.h>
#include <yajl/yajl_parse.h>
#include "openapi/oas_int.h"

typedef struct {
    apr_pool_t *p;
    oas_node_t *root;
    apr_array_header_t *stack;   /* oas_node_t *: open containers */
    bw_str_t key;                /* the key waiting for its value (maps) */
    int has_key;
    char *err;
} builder_t;

static int b_fail(builder_t *b, const char *ptr, const char *why)
{
    if (!b->err)
        b->err = apr_psprintf(b->p, "%s: %s", ptr ? ptr : "#", why);
    return -1;
}

char *oas_ptr_escape(apr_pool_t *p, bw_str_t seg)
{
    char *d = apr_palloc(p, seg.len * 2 + 1);
    size_t i, o = 0;
    for (i = 0; i < seg.len; i++) {
        if (seg.data[i] == '~') {
            d[o++] = '~';
            d[o++] = '0';
        } else if (seg.data[i] == '/') {
            d[o++] = '~';
            d[o++] = '1';
        } else {
            d[o++] = seg.data[i];
        }
    }
    d[o] = '\0';
    return d;
}

static oas_node_t *top(builder_t *b)
{
    return b->stack->nelts ? ((oas_node_t **)b->stack->elts)[b->stack->nelts - 1] : NULL;
}

/* Hang n under the open container (or make it the root), naming it. */
static int attach(builder_t *b, oas_node_t *n)
{
    oas_node_t *t = top(b);
    if (!t) {
        if (b->root)
            return b_fail(b, "#", "more than one document");
        b->root = n;
        n->ptr = "#";
        return 0;
    }
    if (t->kind == OAS_N_MAP) {
        n->ptr = apr_pstrcat(b->p, t->ptr, "/", oas_ptr_escape(b->p, b->key), NULL);
        if (apr_hash_get(t->index, b->key.data, (apr_ssize_t)b->key.len))
            return b_fail(b, n->ptr, "duplicate key");
        apr_hash_set(t->index, b->key.data, (apr_ssize_t)b->key.len, n);
        *(bw_str_t *)apr_array_push(t->keys) = b->key;
        b->has_key = 0;
    } else {
        n->ptr = apr_psprintf(b->p, "%s/%d", t->ptr, t->kids->nelts);
    }
    *(oas_node_t **)apr_array_push(t->kids) = n;
    return 0;
}

static int b_scalar(builder_t *b, int kind, const char *text, size_t len)
{
    oas_node_t *t = top(b), *n;
    char *copy = apr_pstrmemdup(b->p, text, len);
    if (t && t->kind == OAS_N_MAP && !b->has_key) {
        b->key = bw_str_n(copy, len);
        b->has_key = 1;
        return 0;
    }
    n = apr_pcalloc(b->p, sizeof(*n));
    n->kind = kind;
    n->text = bw_str_n(copy, len);
    return attach(b, n);
}

static int b_start(builder_t *b, int kind)
{
    oas_node_t *t = top(b), *n;
    if (t && t->kind == OAS_N_MAP && !b->has_key)
        return b_fail(b, t->ptr, "a key that is not a scalar");
    if (b->stack->nelts >= OAS_DOC_DEPTH)
        return b_fail(b, t ? t->ptr : "#", apr_psprintf(b->p, "nested more than %d deep",
                                                        OAS_DOC_DEPTH));
    n = apr_pcalloc(b->p, sizeof(*n));
    n->kind = kind;
    n->kids = apr_array_make(b->p, 4, sizeof(oas_node_t *));
    if (kind == OAS_N_MAP) {
        n->keys = apr_array_make(b->p, 4, sizeof(bw_str_t));
        n->index = apr_hash_make(b->p);
    }
    if (attach(b, n) < 0)
        return -1;
    *(oas_node_t **)apr_array_push(b->stack) = n;
    return 0;
}

static int b_end(builder_t *b)
{
    if (b->stack->nelts)
        b->stack->nelts--;
    return 0;
}

/* ---- YAML ------------------------------------------------------------------ */

static int all_digits(const char *s, size_t n)
{
    size_t i;
    if (!n)
        return 0;
    for (i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* YAML 1.2 core schema: the type of a plain scalar. */
static int plain_kind(const char *s, size_t n)
{
    static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
    static const char *const bools[] = { "true", "True", "TRUE", "false", "False", "FALSE", NULL };
    const char *q = s, *end = s + n;
    int i, digits = 0;
    for (i = 0; nulls[i]; i++)
        if (strlen(nulls[i]) == n && !memcmp(nulls[i], s, n))
            return OAS_N_NULL;
    for (i = 0; bools[i]; i++)
        if (strlen(bools[i]) == n && !memcmp(bools[i], s, n))
            return OAS_N_BOOL;
    if (q < end && (*q == '-' || *q == '+'))
        q++;
    while (q < end && isdigit((unsigned char)*q)) {
        q++;
        digits++;
    }
    if (q < end && *q == '.') {
        q++;
        while (q < end && isdigit((unsigned char)*q)) {
            q++;
            digits++;
        }
    }
    if (digits && q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '-' || *q == '+'))
            q++;
        if (!all_digits(q, (size_t)(end - q)))
            return OAS_N_STR;
        q = end;
    }
    return digits && q == end ? OAS_N_NUM : OAS_N_STR;
}

static int yaml_event(builder_t *b, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        const char *s = (const char *)ev->data.scalar.value;
        size_t n = ev->data.scalar.length;
        int kind = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? plain_kind(s, n) : OAS_N_STR;
        if (ev->data.scalar.tag)
            return b_fail(b, top(b) ? top(b)->ptr : "#", "YAML tags are not supported");
        return b_scalar(b, kind, s, n);
    }
    case YAML_MAPPING_START_EVENT:
        if (ev->data.mapping_start.tag)
            return b_fail(b, top(b) ? top(b)->ptr : "#", "YAML tags are not supported");
        return b_start(b, OAS_N_MAP);
    case YAML_SEQUENCE_START_EVENT:
        if (ev->data.sequence_start.tag)
            return b_fail(b, top(b) ? top(b)->ptr : "#", "YAML tags are not supported");
        return b_start(b, OAS_N_SEQ);
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
        return b_end(b);
    case YAML_ALIAS_EVENT:
        return b_fail(b, top(b) ? top(b)->ptr : "#", "YAML aliases (*name) are not supported");
    case YAML_DOCUMENT_START_EVENT:
        if (b->root)
            return b_fail(b, "#", "more than one YAML document");
        return 0;
    default:
        return 0;
    }
}

static oas_node_t *parse_yaml(builder_t *b, const char *text, size_t len)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    int done = 0;
    if (!yaml_parser_initialize(&parser)) {
        b_fail(b, "#", "libyaml could not start");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (!done && !b->err) {
        if (!yaml_parser_parse(&parser, &ev)) {
            b->err = apr_psprintf(b->p, "line %lu column %lu: YAML: %s%s%s",
                                  (unsigned long)parser.problem_mark.line + 1,
                                  (unsigned long)parser.problem_mark.column + 1,
                                  parser.problem ? parser.problem : "syntax error",
                                  parser.context ? " " : "", parser.context ? parser.context : "");
            break;
        }
        yaml_event(b, &ev);
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return b->err ? NULL : b->root;
}

/* ---- JSON ------------------------------------------------------------------- */

static int j_null(void *c)
{
    return b_scalar(c, OAS_N_NULL, "null", 4) == 0;
}
static int j_bool(void *c, int v)
{
    return b_scalar(c, OAS_N_BOOL, v ? "true" : "false", v ? 4 : 5) == 0;
}
static int j_num(void *c, const char *s, size_t n)
{
    return b_scalar(c, OAS_N_NUM, s, n) == 0;
}
static int j_str(void *c, const unsigned char *s, size_t n)
{
    return b_scalar(c, OAS_N_STR, (const char *)s, n) == 0;
}
static int j_key(void *c, const unsigned char *s, size_t n)
{
    builder_t *b = c;
    b->key = bw_str_n(apr_pstrmemdup(b->p, (const char *)s, n), n);
    b->has_key = 1;
    return 1;
}
static int j_start_map(void *c)
{
    return b_start(c, OAS_N_MAP) == 0;
}
static int j_start_seq(void *c)
{
    return b_start(c, OAS_N_SEQ) == 0;
}
static int j_end(void *c)
{
    return b_end(c) == 0;
}

static const yajl_callbacks json_cb = {
    j_null, j_bool, NULL, NULL, j_num, j_str, j_start_map, j_key, j_end, j_start_seq, j_end
};

static oas_node_t *parse_json(builder_t *b, const char *text, size_t len)
{
    yajl_handle h = yajl_alloc(&json_cb, NULL, b);
    yajl_status st;
    if (!h) {
        b_fail(b, "#", "yajl could not start");
        return NULL;
    }
    st = yajl_parse(h, (const unsigned char *)text, len);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    if (st != yajl_status_ok && !b->err) {
        unsigned char *m = yajl_get_error(h, 0, NULL, 0);
        size_t n = m ? strlen((char *)m) : 0;
        while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
            n--;
        b->err = apr_psprintf(b->p, "byte %lu: JSON: %.*s",
                              (unsigned long)yajl_get_bytes_consumed(h), (int)n,
                              m ? (char *)m : "syntax error");
        if (m)
            yajl_free_error(h, m);
    }
    yajl_free(h);
    return b->err ? NULL : b->root;
}

oas_node_t *oas_doc_parse(apr_pool_t *p, const char *text, size_t len, char **err)
{
    builder_t b;
    size_t i = 0;
    oas_node_t *root;
    memset(&b, 0, sizeof(b));
    b.p = p;
    b.stack = apr_array_make(p, 32, sizeof(oas_node_t *));
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    if (i < len && (text[i] == '{' || text[i] == '['))
        root = parse_json(&b, text, len);
    else
        root = parse_yaml(&b, text, len);
    if (!root && !b.err)
        b.err = "#: the document is empty";
    if (root && root->kind != OAS_N_MAP) {
        b.err = "#: the document is not a map";
        root = NULL;
    }
    if (!root)
        *err = b.err;
    return root;
}

const oas_node_t *oas_get(const oas_node_t *map, const char *name)
{
    if (!map || map->kind != OAS_N_MAP)
        return NULL;
    return apr_hash_get(map->index, name, APR_HASH_KEY_STRING);
}

/* One reference token: ~1 is /, ~0 is ~, %XX as a URI fragment says. */
static char *unescape_token(apr_pool_t *p, const char *s, size_t n, size_t *out_len)
{
    char *d = apr_palloc(p, n + 1);
    size_t i, o = 0;
    for (i = 0; i < n; i++) {
        if (s[i] == '~' && i + 1 < n && (s[i + 1] == '0' || s[i + 1] == '1')) {
            d[o++] = s[i + 1] == '0' ? '~' : '/';
            i++;
        } else if (s[i] == '%' && i + 2 < n && bw_hexval(s[i + 1]) >= 0 && bw_hexval(s[i + 2]) >= 0) {
            d[o++] = (char)(bw_hexval(s[i + 1]) * 16 + bw_hexval(s[i + 2]));
            i += 2;
        } else {
            d[o++] = s[i];
        }
    }
    d[o] = '\0';
    *out_len = o;
    return d;
}

const oas_node_t *oas_resolve(apr_pool_t *p, const oas_node_t *root, const char *ref, char **err)
{
    const oas_node_t *n = root;
    const char *s;
    if (ref[0] != '#') {
        *err = apr_psprintf(p, "$ref \"%s\": only references inside the document (#/...) are "
                            "supported", ref);
        return NULL;
    }
    s = ref + 1;
    while (*s) {
        const char *e;
        size_t n_len;
        char *tok;
        if (*s != '/') {
            *err = apr_psprintf(p, "$ref \"%s\": not a JSON pointer", ref);
            return NULL;
        }
        s++;
        e = strchr(s, '/');
        if (!e)
            e = s + strlen(s);
        tok = unescape_token(p, s, (size_t)(e - s), &n_len);
        if (n->kind == OAS_N_MAP) {
            n = apr_hash_get(n->index, tok, (apr_ssize_t)n_len);
        } else if (n->kind == OAS_N_SEQ && all_digits(tok, n_len)) {
            long i = strtol(tok, NULL, 10);
            n = i < n->kids->nelts ? OAS_KID(n, i) : NULL;
        } else {
            n = NULL;
        }
        if (!n) {
            *err = apr_psprintf(p, "$ref \"%s\": points nowhere in the document", ref);
            return NULL;
        }
        s = e;
    }
    return n;
}
