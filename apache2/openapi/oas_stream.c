/*
 * A JSON body checked against a schema as the body parser reads it: the
 * parser's events (bw_json_observer_t) drive a stack of open checks, and
 * no tree of the document is built.
 *
 * A check ("instance") is one schema applied to one value. When a value
 * starts, its checks are pushed: one per schema its parent's checks ask for
 * (a property's schema, additionalProperties, items), each with the checks
 * its combinators add (allOf members report as their owner does; anyOf,
 * oneOf and not branches only record whether they passed). A scalar is
 * checked and its checks are popped at once; a container keeps them open,
 * on a level of its own, until it ends, and then settles what needed the
 * whole of it (required, minItems, the branch counts), innermost first, so
 * every branch has its verdict before its owner reads it. Memory is the
 * open checks and levels only: a million-item array costs what one item
 * costs. A value no schema constrains is skipped with a depth counter.
 *
 * Failures of a reporting check become violations at once, named by the
 * JSON pointer of the value in the body and the schema's pointer in the
 * description. The number of checks open at once is bounded
 * (OAS_MAX_OPEN): past it the body is reported as too deep for its schema
 * and the rest is not checked.
 */
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include "openapi/oas_int.h"

#define OAS_MAX_OPEN 65536

enum { M_ALL, M_ANY, M_ONE, M_NOT };
enum { K_NONE, K_OBJ, K_ARR };

typedef struct {
    const oas_schema_t *s;
    int owner;                  /* the check this one answers to, -1: none */
    unsigned char mode;         /* how its verdict reaches the owner */
    unsigned char report;       /* its failures are violations */
    unsigned char failed;
    unsigned char kind;         /* K_OBJ / K_ARR: it constrains the children */
    int any_pass, one_pass, not_valid;
    long count;                 /* properties or items seen */
    uint64_t seen;              /* required properties seen */
    const oas_schema_t *pending;   /* the schema for the next property's value */
} inst_t;

typedef struct {
    int first, end;             /* the container's checks */
    int is_array;
    long index;                 /* elements begun so far */
    size_t key_off, key_len;    /* the current key, in keys */
} level_t;

struct oas_stream_s {
    apr_pool_t *p;
    const char *base;           /* the pointer of the document in the request */
    const oas_schema_t *root;
    oas_report_fn report;
    oas_full_fn full;
    void *ctx;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    inst_t *insts;
    int n_inst, cap_inst;
    level_t *levels;
    int n_levels, cap_levels;
    bw_buf_t keys;              /* the keys of the open levels, end to end */
    long skip;                  /* depth inside a container nothing constrains */
    int started, done, dead;
    bw_json_observer_t ob;
};

#define WHERE_MAX 1024   /* longer pointers keep their two ends */

static void put(char *buf, size_t *at, const char *s, size_t n)
{
    memcpy(buf + *at, s, n);
    *at += n;
}

/* The JSON pointer of the value being read: each level's current key or
 * element, in one pass (a body nested 100,000 deep has a long pointer). */
static const char *where(oas_stream_t *st)
{
    size_t len = strlen(st->base), at = 0;
    char *buf, num[24];
    int i;
    for (i = 0; i < st->n_levels; i++)
        len += 1 + (st->levels[i].is_array ? 20 : 2 * st->levels[i].key_len);
    buf = apr_palloc(st->p, len + 1);
    put(buf, &at, st->base, strlen(st->base));
    for (i = 0; i < st->n_levels; i++) {
        const level_t *l = &st->levels[i];
        buf[at++] = '/';
        if (l->is_array) {
            put(buf, &at, num, (size_t)snprintf(num, sizeof(num), "%ld", l->index - 1));
        } else {
            const char *k = l->key_len ? st->keys.data + l->key_off : "";
            size_t j;
            for (j = 0; j < l->key_len; j++) {
                if (k[j] == '~' || k[j] == '/') {
                    buf[at++] = '~';
                    buf[at++] = k[j] == '~' ? '0' : '1';
                } else {
                    buf[at++] = k[j];
                }
            }
        }
    }
    buf[at] = '\0';
    if (at > WHERE_MAX)
        return apr_psprintf(st->p, "%.*s/...%s", WHERE_MAX / 2, buf, buf + at - WHERE_MAX / 2);
    return buf;
}

/* Check i failed. Its reason and pointer are made only when it reports
 * and violations are still kept; schema_tail names the keyword
 * ("/oneOf") after the schema's own pointer. */
static void fail(oas_stream_t *st, int i, const char *schema_tail, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail(oas_stream_t *st, int i, const char *schema_tail, const char *fmt, ...)
{
    inst_t *x = &st->insts[i];
    va_list ap;
    const char *reason;
    x->failed = 1;
    if (!x->report)
        return;
    if (st->full(st->ctx)) {
        st->report(st->ctx, NULL, NULL, NULL);
        return;
    }
    va_start(ap, fmt);
    reason = apr_pvsprintf(st->p, fmt, ap);
    va_end(ap);
    st->report(st->ctx, where(st), reason, apr_pstrcat(st->p, x->s->ptr, schema_tail, NULL));
}

/* The pool to make check i's reason in, or NULL: only its verdict counts. */
static apr_pool_t *reason_pool(oas_stream_t *st, int i)
{
    return st->insts[i].report && !st->full(st->ctx) ? st->p : NULL;
}

/* A new check of s: every field set here (a check is pushed for every
 * value a schema constrains, so no memset call per push). */
static int push_inst(oas_stream_t *st, const oas_schema_t *s, int owner, int mode, int report)
{
    inst_t *x;
    if (st->n_inst == st->cap_inst) {
        int cap = st->cap_inst ? st->cap_inst * 2 : 16;
        inst_t *n = apr_palloc(st->p, sizeof(*n) * (size_t)cap);
        if (st->n_inst)
            memcpy(n, st->insts, sizeof(*n) * (size_t)st->n_inst);
        st->insts = n;
        st->cap_inst = cap;
    }
    x = &st->insts[st->n_inst];
    x->s = s;
    x->owner = owner;
    x->mode = (unsigned char)mode;
    x->report = (unsigned char)report;
    x->failed = 0;
    x->kind = K_NONE;
    x->any_pass = x->one_pass = x->not_valid = 0;
    x->count = 0;
    x->seen = 0;
    x->pending = NULL;
    return st->n_inst++;
}

/* Push the checks of schema s for the value about to be read. */
static int expand(oas_stream_t *st, const oas_schema_t *s, int owner, int mode, int report)
{
    int i, x;
    if (st->n_inst >= OAS_MAX_OPEN) {
        if (!st->dead && !st->full(st->ctx))
            st->report(st->ctx, where(st), apr_psprintf(st->p, "nested too deep for its schema "
                       "(more than %d checks open at once): the rest is not checked",
                       OAS_MAX_OPEN), s->ptr);
        else if (!st->dead)
            st->report(st->ctx, NULL, NULL, NULL);
        st->dead = 1;
        return -1;
    }
    x = push_inst(st, s, owner, mode, report);
    for (i = 0; i < s->n_all; i++)
        if (expand(st, s->all_of[i], x, M_ALL, report) < 0)
            return -1;
    for (i = 0; i < s->n_any; i++)
        if (expand(st, s->any_of[i], x, M_ANY, 0) < 0)
            return -1;
    for (i = 0; i < s->n_one; i++)
        if (expand(st, s->one_of[i], x, M_ONE, 0) < 0)
            return -1;
    if (s->not_schema && expand(st, s->not_schema, x, M_NOT, 0) < 0)
        return -1;
    return 0;
}

/* A check whose value is complete: what needed the whole value, then its
 * verdict to its owner. */
static void settle(oas_stream_t *st, int i)
{
    inst_t *x = &st->insts[i];
    const oas_schema_t *s = x->s;
    int k;
    if (x->kind == K_OBJ) {
        if (x->seen != (s->n_required == 64 ? ~(uint64_t)0 : (((uint64_t)1 << s->n_required) - 1)))
            for (k = 0; k < s->n_props; k++) {
                const oas_prop_t *p = &s->props[k];
                if (p->required_bit >= 0 && !(x->seen & ((uint64_t)1 << p->required_bit)))
                    fail(st, i, "", "required property \"%.*s\" is missing", (int)p->name.len,
                         p->name.data);
            }
        if (s->min_props >= 0 && x->count < s->min_props)
            fail(st, i, "", "fewer than minProperties %ld", s->min_props);
        if (s->max_props >= 0 && x->count > s->max_props)
            fail(st, i, "", "more than maxProperties %ld", s->max_props);
    } else if (x->kind == K_ARR) {
        if (s->min_items >= 0 && x->count < s->min_items)
            fail(st, i, "", "fewer than minItems %ld", s->min_items);
        if (s->max_items >= 0 && x->count > s->max_items)
            fail(st, i, "", "more than maxItems %ld", s->max_items);
    }
    if (s->n_any && !x->any_pass)
        fail(st, i, "/anyOf", "matches none of the anyOf schemas");
    if (s->n_one && x->one_pass != 1)
        fail(st, i, "/oneOf", "%s", x->one_pass ? "matches more than one of the oneOf schemas"
                                                : "matches none of the oneOf schemas");
    if (s->not_schema && x->not_valid)
        fail(st, i, "/not", "matches the schema it must not match");
    if (x->owner >= 0) {
        inst_t *o = &st->insts[x->owner];
        switch (x->mode) {
        case M_ALL: if (x->failed) o->failed = 1; break;
        case M_ANY: o->any_pass += !x->failed; break;
        case M_ONE: o->one_pass += !x->failed; break;
        default: o->not_valid |= !x->failed; break;
        }
    }
}

static void value_end(oas_stream_t *st, int first)
{
    int i;
    for (i = st->n_inst - 1; i >= first; i--)
        settle(st, i);
    st->n_inst = first;
    if (st->n_levels == 0)
        st->done = 1;
}

/* The checks the parent level asks for this value; -1 when over the bound. */
static int child_checks(oas_stream_t *st)
{
    level_t *l = &st->levels[st->n_levels - 1];
    int i;
    l->index += l->is_array;
    for (i = l->first; i < l->end; i++) {
        inst_t *o = &st->insts[i];
        const oas_schema_t *c = NULL;
        if (o->kind == K_ARR) {
            o->count++;
            c = o->s->items;
        } else if (o->kind == K_OBJ) {
            c = o->pending;
            o->pending = NULL;
        }
        if (c && expand(st, c, i, M_ALL, st->insts[i].report) < 0)
            return -1;
    }
    return 0;
}

/* What check o asks of its next child: items, or the pending property's
 * schema; NULL for nothing. */
static inline const oas_schema_t *child_schema(const inst_t *o)
{
    return o->kind == K_ARR ? o->s->items : o->kind == K_OBJ ? o->pending : NULL;
}

/* Whether c alone passes v: no combinators (width 1: c is the only schema
 * the value is checked against) and its own keywords hold. */
static inline int plain_passes(oas_stream_t *st, const oas_schema_t *c, const oas_value_t *v)
{
    int rc;
    return c->width == 1 && oas_scalar_fault(c, v, st->md, st->mctx, &rc) == OAS_PASS;
}

/* Count a child of o that needed no check of its own. */
static inline void child_counted(inst_t *o)
{
    if (o->kind == K_ARR)
        o->count++;
    else if (o->kind == K_OBJ)
        o->pending = NULL;
}

/* A scalar whose checks (what the parent level asks for it) are all plain
 * schemas, without combinators, and all pass: what child_checks would
 * count is counted and nothing is pushed, since settling such a check
 * does nothing. 0, with nothing changed, for the full way: a check that
 * fails (to report it) or a combinator. Most values of a body, and most
 * under a level of one check (an object or array one schema describes). */
static int plain_scalar_passes(oas_stream_t *st, const oas_value_t *v)
{
    level_t *l = &st->levels[st->n_levels - 1];
    const oas_schema_t *c;
    int i;
    if (l->end - l->first == 1) {
        inst_t *o = &st->insts[l->first];
        if ((c = child_schema(o)) && !plain_passes(st, c, v))
            return 0;
        l->index += l->is_array;
        child_counted(o);
        return 1;
    }
    for (i = l->first; i < l->end; i++)
        if ((c = child_schema(&st->insts[i])) && !plain_passes(st, c, v))
            return 0;
    l->index += l->is_array;
    for (i = l->first; i < l->end; i++)
        child_counted(&st->insts[i]);
    return 1;
}

static void container_checks(oas_stream_t *st, int first, int is_array)
{
    unsigned bit = is_array ? OAS_T_ARR : OAS_T_OBJ;
    int i;
    for (i = first; i < st->n_inst; i++) {
        inst_t *x = &st->insts[i];
        if (!(x->s->types & bit)) {
            fail(st, i, "", "expected %s, got %s", oas_type_names(st->p, x->s->types),
                 is_array ? "array" : "object");
            continue;
        }
        if (x->s->n_lits >= 0) {
            fail(st, i, "", "not one of the enum values");
            continue;
        }
        x->kind = is_array ? K_ARR : K_OBJ;
    }
}

/* A value begins: scalar (v) or container (v NULL). */
static void value_begin(oas_stream_t *st, const oas_value_t *v, int is_array)
{
    int first = st->n_inst, i;
    level_t *l;
    if (st->skip) {
        st->skip += v == NULL;
        return;
    }
    if (st->n_levels == 0) {
        if (st->started)
            return;
        st->started = 1;
        if (expand(st, st->root, -1, M_ALL, 1) < 0)
            return;
    } else if (v && plain_scalar_passes(st, v)) {
        return;
    } else if (child_checks(st) < 0) {
        return;
    }
    if (st->n_inst == first) {          /* nothing constrains this value */
        if (!v)
            st->skip = 1;
        else if (st->n_levels == 0)
            st->done = 1;
        return;
    }
    if (v) {
        for (i = first; i < st->n_inst; i++) {
            const char *why = oas_check_scalar(reason_pool(st, i), st->insts[i].s, v, st->md,
                                               st->mctx);
            if (why)
                fail(st, i, "", "%s", why);
        }
        value_end(st, first);
        return;
    }
    container_checks(st, first, is_array);
    if (st->n_levels == st->cap_levels) {
        int cap = st->cap_levels ? st->cap_levels * 2 : 8;
        level_t *n = apr_palloc(st->p, sizeof(*n) * (size_t)cap);
        if (st->n_levels)
            memcpy(n, st->levels, sizeof(*n) * (size_t)st->n_levels);
        st->levels = n;
        st->cap_levels = cap;
    }
    l = &st->levels[st->n_levels++];
    l->first = first;
    l->end = st->n_inst;
    l->is_array = is_array;
    l->index = 0;
    l->key_off = st->keys.len;
    l->key_len = 0;
}

/* ---- the observer ------------------------------------------------------------ */

static void ob_scalar(void *ctx, int type, const char *text, size_t len)
{
    oas_stream_t *st = ctx;
    oas_value_t v;
    if (st->dead)
        return;
    v.text = bw_str_n(text, len);
    v.num = 0;
    switch (type) {
    case BW_JSON_NULL: v.type = OAS_T_NULL; break;
    case BW_JSON_TRUE:
    case BW_JSON_FALSE: v.type = OAS_T_BOOL; break;
    case BW_JSON_STRING: v.type = OAS_T_STR; break;
    default:
        if (!oas_number(v.text, &v.num, &v.type)) {
            /* the parser took it, so it is only too long for a double's text */
            v.type = OAS_T_NUM;
            v.num = 0;
        }
    }
    value_begin(st, &v, 0);
}

/* The key at the end of st->keys (for where()), from the words the
 * property lookup makes of it (oas_key_words): up to 24 bytes, the usual,
 * without a memcpy call per key. */
static inline void key_keep(oas_stream_t *st, const char *name, size_t len, uint64_t a,
                            uint64_t b, uint64_t c)
{
    char *d;
    if (len == 0)       /* the buffer may have no memory yet */
        return;
    if (st->keys.len + len > st->keys.cap)
        bw_buf_grow(st->p, &st->keys, st->keys.len + len);
    d = st->keys.data + st->keys.len;
    st->keys.len += len;
    if (len >= 8 && len <= 24) {
        memcpy(d, &a, 8);
        if (len > 16)
            memcpy(d + 8, &c, 8);
        memcpy(d + len - 8, &b, 8);
    } else if (len >= 4 && len < 8) {
        uint32_t x = (uint32_t)a, y = (uint32_t)(a >> 32);
        memcpy(d, &x, 4);
        memcpy(d + len - 4, &y, 4);
    } else {
        memcpy(d, name, len);
    }
}

static void ob_key(void *ctx, const char *name, size_t len)
{
    oas_stream_t *st = ctx;
    level_t *l;
    uint64_t a, b, c;
    int i;
    if (st->dead || st->skip || !st->n_levels)
        return;
    l = &st->levels[st->n_levels - 1];
    st->keys.len = l->key_off;
    oas_key_words(name, len, &a, &b, &c);
    key_keep(st, name, len, a, b, c);
    l->key_len = len;
    for (i = l->first; i < l->end; i++) {
        inst_t *o = &st->insts[i];
        const oas_prop_t *p;
        if (o->kind != K_OBJ)
            continue;
        o->count++;
        p = !o->s->n_props ? NULL
            : len > 24 ? oas_prop_find_long(o->s, name, len)
            : oas_prop_probe_words(o->s, name, len, a, b, c, 0);
        if (p) {
            if (p->required_bit >= 0)
                o->seen |= (uint64_t)1 << p->required_bit;
            o->pending = p->schema;
        } else if (o->s->additional_schema) {
            o->pending = o->s->additional_schema;
        } else {
            o->pending = NULL;
            if (!o->s->additional)
                fail(st, i, "", "property not allowed (additionalProperties is false)");
        }
    }
}

static void ob_start(void *ctx, int is_array)
{
    oas_stream_t *st = ctx;
    if (!st->dead)
        value_begin(st, NULL, is_array);
}

static void ob_end(void *ctx, int is_array)
{
    oas_stream_t *st = ctx;
    if (st->dead)
        return;
    if (st->skip) {
        if (--st->skip == 0 && st->n_levels == 0)
            st->done = 1;
        return;
    }
    if (!st->n_levels)
        return;
    st->n_levels--;
    value_end(st, st->levels[st->n_levels].first);
}

oas_stream_t *oas_stream_make(apr_pool_t *p, const oas_schema_t *root, oas_report_fn report,
                              oas_full_fn full, void *ctx, pcre2_match_data *md,
                              pcre2_match_context *mctx)
{
    oas_stream_t *st = apr_pcalloc(p, sizeof(*st));
    st->p = p;
    st->base = "";
    st->root = root;
    st->report = report;
    st->full = full;
    st->ctx = ctx;
    st->md = md;
    st->mctx = mctx;
    st->ob.ctx = st;
    st->ob.scalar = ob_scalar;
    st->ob.key = ob_key;
    st->ob.start = ob_start;
    st->ob.end = ob_end;
    return st;
}

void oas_stream_base(oas_stream_t *st, const char *base)
{
    st->base = base;
}

const bw_json_observer_t *oas_stream_observer(oas_stream_t *st)
{
    return &st->ob;
}

int oas_stream_done(const oas_stream_t *st)
{
    return st->done || st->dead;
}
