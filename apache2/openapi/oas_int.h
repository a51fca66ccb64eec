/*
 * What the parts of apache2/openapi/ share: the document tree the loaders
 * build (oas_doc.c), compiled schemas (oas_schema.c), value checks
 * (oas_check.c), the streaming body validator (oas_stream.c), the compiled
 * description (oas_spec.c), the per-request state (oas_request.c) and the
 * patterns matched without PCRE2 (oas_pattern.c).
 */
#ifndef BW_OAS_INT_H
#define BW_OAS_INT_H

#include <string.h>
#include "openapi/bw_openapi.h"

/* ---- the document: a tree in the configuration's pool --------------------- */

enum { OAS_N_NULL, OAS_N_BOOL, OAS_N_NUM, OAS_N_STR, OAS_N_MAP, OAS_N_SEQ };

typedef struct oas_node_s oas_node_t;
struct oas_node_s {
    int kind;
    bw_str_t text;                 /* scalars: the text ("true", "12.5", the string) */
    apr_array_header_t *keys;      /* maps: bw_str_t, beside kids */
    apr_array_header_t *kids;      /* maps and sequences: oas_node_t * */
    apr_hash_t *index;             /* maps: name -> oas_node_t * */
    const char *ptr;               /* JSON pointer from the root, "#/paths/~1pets" */
};

/* Documents nested deeper than this are refused (the compiler recurses). */
#define OAS_DOC_DEPTH 200

/* Parse YAML or JSON (chosen by the first non-blank byte: { or [ is JSON). */
oas_node_t *oas_doc_parse(apr_pool_t *p, const char *text, size_t len, char **err);
/* A map's member by name, or NULL. */
const oas_node_t *oas_get(const oas_node_t *map, const char *name);
#define OAS_KID(n, i) (((oas_node_t **)(n)->kids->elts)[i])
#define OAS_KEY(n, i) (((bw_str_t *)(n)->keys->elts)[i])
/* Resolve a local reference ("#/components/schemas/Pet") from root; NULL
 * with *err when it is not local or points nowhere. */
const oas_node_t *oas_resolve(apr_pool_t *p, const oas_node_t *root, const char *ref, char **err);
/* Escape one segment for a JSON pointer (~ as ~0, / as ~1). */
char *oas_ptr_escape(apr_pool_t *p, bw_str_t seg);

/* ---- compiled schemas ---------------------------------------------------- */

enum {
    OAS_T_NULL = 1, OAS_T_BOOL = 2, OAS_T_INT = 4, OAS_T_NUM = 8,
    OAS_T_STR = 16, OAS_T_ARR = 32, OAS_T_OBJ = 64, OAS_T_ANY = 127
};

enum {
    OAS_F_NONE, OAS_F_DATE_TIME, OAS_F_DATE, OAS_F_TIME, OAS_F_UUID, OAS_F_EMAIL, OAS_F_IPV4,
    OAS_F_IPV6, OAS_F_URI, OAS_F_INT32, OAS_F_INT64, OAS_F_BYTE, OAS_F_ANNOTATION
};

/* A literal of enum or const: one JSON scalar. */
typedef struct {
    unsigned type;      /* one OAS_T_ bit (numbers: OAS_T_NUM) */
    bw_str_t text;      /* strings decoded */
    double num;
} oas_lit_t;

typedef struct oas_schema_s oas_schema_t;

typedef struct {
    bw_str_t name;
    const oas_schema_t *schema;   /* NULL: a required name no property describes */
    int required_bit;             /* -1 when not required */
} oas_prop_t;

/* A slot of a schema's property table (oas_schema.c): the name's length
 * and three words made of it (all of its bytes when it is 24 or shorter),
 * and the property's index + 1 (0: the slot is empty). */
typedef struct {
    uint64_t a, b, c;
    uint32_t len;
    uint32_t idx;
} oas_slot_t;

#define OAS_MAX_REQUIRED 64
#define OAS_MAX_WIDTH 256   /* schemas one value may be checked against at once */

struct oas_schema_s {
    const char *ptr;              /* where it is in the description */
    unsigned types;               /* OAS_T_ bits a value may have */
    /* strings */
    long min_len, max_len;        /* code points, -1 unset */
    pcre2_code *pattern;
    int pattern_jit;              /* JIT-compiled: matched by pcre2_jit_match */
    const struct oas_pat_s *pattern_fast;   /* or NULL: the pattern matched without PCRE2 */
    const char *pattern_src;
    int format;
    /* numbers */
    int has_min, has_max, excl_min, excl_max;
    double min, max, multiple_of; /* multiple_of 0: none */
    /* enum / const */
    const oas_lit_t *lits;
    int n_lits;                   /* -1: no enum */
    /* arrays */
    const oas_schema_t *items;
    long min_items, max_items;
    /* objects */
    const oas_prop_t *props;      /* sorted by name */
    int n_props, n_required;
    const oas_slot_t *slots;      /* props by hash of their name (open addressing) */
    unsigned slot_mask;
    int additional;               /* additionalProperties: 1 allowed, 0 refused */
    const oas_schema_t *additional_schema;
    long min_props, max_props;
    /* combinators */
    const oas_schema_t **all_of, **any_of, **one_of;
    int n_all, n_any, n_one;
    const oas_schema_t *not_schema;
    int width;                    /* itself and every schema its combinators add */
    int compiling;                /* start-up only: on the current compile path */
};

typedef struct oas_compiler_s oas_compiler_t;
oas_compiler_t *oas_compiler_make(apr_pool_t *p, const oas_node_t *root, int v31);
/* Compile the schema at n (a $ref is followed). NULL with *err. */
const oas_schema_t *oas_schema_compile(oas_compiler_t *c, const oas_node_t *n, char **err);
/* Whether the schema wants at most strings, numbers, booleans (parameters). */
int oas_schema_is_scalar(const oas_schema_t *s);

/* The property table's words (oas_schema.c lays the table out): three
 * words that, with the length, tell apart any two names of 24 bytes or
 * fewer: the first and last 8 bytes (overlapping below 16) and, past 16,
 * the 8 after the first (overlapping the last below 24); the first and
 * last 4 below 8, and every byte below 4. Longer names are also compared
 * in full. Inline: a body's every key is looked up. */
static inline void oas_key_words(const char *d, size_t len, uint64_t *a, uint64_t *b,
                                 uint64_t *c)
{
    *c = 0;
    if (len >= 8) {
        memcpy(a, d, 8);
        memcpy(b, d + len - 8, 8);
        if (len > 16)
            memcpy(c, d + 8, 8);
    } else if (len >= 4) {
        uint32_t x, y;
        memcpy(&x, d, 4);
        memcpy(&y, d + len - 4, 4);
        *a = x | (uint64_t)y << 32;
        *b = 0;
    } else {
        *a = len ? (unsigned char)d[0] | (unsigned)(unsigned char)d[len / 2] << 8
                   | (unsigned)(unsigned char)d[len - 1] << 16 : 0;
        *b = 0;
    }
}

static inline unsigned oas_key_hash(uint64_t a, uint64_t b, size_t len, unsigned mask)
{
    uint64_t h = (a ^ (b * 0xff51afd7ed558ccdULL) ^ len) * 0x9e3779b97f4a7c15ULL;
    return (unsigned)(h >> 40) & mask;
}

/* The property named name, whose words are a, b, c: the slots they and
 * the length hash to. Up to 24 bytes the words hold all of a name; a
 * longer one's bytes between them are compared once its words matched
 * (is_long, a constant in each copy). */
static inline __attribute__((always_inline)) const oas_prop_t *
oas_prop_probe_words(const oas_schema_t *s, const char *name, size_t len, uint64_t a, uint64_t b,
                     uint64_t c, const int is_long)
{
    unsigned h;
    for (h = oas_key_hash(a, b, len, s->slot_mask); s->slots[h].idx; h = (h + 1) & s->slot_mask) {
        const oas_slot_t *t = &s->slots[h];
        if (t->a == a && t->b == b && t->c == c && t->len == len) {
            const oas_prop_t *p = &s->props[t->idx - 1];
            if (!is_long || !memcmp(p->name.data + 16, name + 16, len - 24))
                return p;
        }
    }
    return NULL;
}

/* A property named by more than 24 bytes (oas_prop_probe_words takes the
 * shorter ones inline). */
const oas_prop_t *oas_prop_find_long(const oas_schema_t *s, const char *name, size_t len);

/* A pattern of the usual shape (^, atoms of ASCII sets with greedy
 * quantifiers, $) that matching greedily decides exactly, compiled for
 * oas_pat_match (oas_pattern.c); NULL for any other, which PCRE2 keeps. */
typedef struct oas_pat_s oas_pat_t;
const oas_pat_t *oas_pat_compile(apr_pool_t *p, const char *src, size_t len);
/* Whether s matches: what pcre2_match of the pattern says (compiled with
 * PCRE2_UTF | PCRE2_MATCH_INVALID_UTF). */
int oas_pat_match(const oas_pat_t *pat, const char *s, size_t len);

/* ---- checking values ----------------------------------------------------- */

/* One scalar to check: its JSON type bits and text. */
typedef struct {
    unsigned type;     /* OAS_T_NULL, OAS_T_BOOL, OAS_T_STR, or OAS_T_NUM (| OAS_T_INT) */
    bw_str_t text;
    double num;
} oas_value_t;

/* The number a JSON number's text says; its type bits in *type. 0 when
 * text is no JSON number. */
int oas_number(bw_str_t text, double *num, unsigned *type);
/* What v breaks first of s's own scalar keywords (not the combinators):
 * OAS_PASS (0) when nothing; for OAS_X_PATTERN *rc is PCRE2's answer. The
 * verdict alone, nothing formatted: most values of a body pass. */
enum {
    OAS_PASS, OAS_X_TYPE, OAS_X_ENUM, OAS_X_MIN_LEN, OAS_X_MAX_LEN, OAS_X_FORMAT, OAS_X_PATTERN,
    OAS_X_MIN, OAS_X_MAX, OAS_X_MULTIPLE
};
int oas_scalar_fault(const oas_schema_t *s, const oas_value_t *v, pcre2_match_data *md,
                     pcre2_match_context *mctx, int *rc);
/* Check v against s's own scalar keywords (not the combinators). NULL when
 * it passes, else the reason (static or from p; "" when p is NULL: the
 * verdict alone, nothing allocated). */
const char *oas_check_scalar(apr_pool_t *p, const oas_schema_t *s, const oas_value_t *v,
                             pcre2_match_data *md, pcre2_match_context *mctx);
/* The name of a type set for messages ("string or null"). */
const char *oas_type_names(apr_pool_t *p, unsigned types);
int oas_format_lookup(const char *name);
int oas_format_check(int format, bw_str_t s);

/* ---- the streaming body validator ---------------------------------------- */

typedef struct oas_stream_s oas_stream_t;
/* A violation; where NULL: one more, not kept (full said so). */
typedef void (*oas_report_fn)(void *ctx, const char *where, const char *reason, const char *schema);
/* Whether violations are still kept (else they are only counted, and
 * nothing is formatted for them). */
typedef int (*oas_full_fn)(void *ctx);
oas_stream_t *oas_stream_make(apr_pool_t *p, const oas_schema_t *root, oas_report_fn report,
                              oas_full_fn full, void *ctx, pcre2_match_data *md,
                              pcre2_match_context *mctx);
/* Violations are named base + the value's pointer ("/body/items/0"). */
void oas_stream_base(oas_stream_t *st, const char *base);
const bw_json_observer_t *oas_stream_observer(oas_stream_t *st);
/* 1 when a whole document was seen. */
int oas_stream_done(const oas_stream_t *st);

/* ---- the compiled description ------------------------------------------- */

enum { OAS_IN_PATH, OAS_IN_QUERY, OAS_IN_HEADER, OAS_IN_COOKIE };

typedef struct {
    int in;
    const char *name;
    int required;
    int explode;                  /* arrays: repeated (1) or comma-separated (0) */
    int allow_empty;
    const oas_schema_t *schema;   /* scalar, or an array of scalars */
    const char *ptr;
} oas_param_t;

typedef struct {
    const char *media;            /* "application/json", or a range: type/ * or * / * */
    int json;                     /* a JSON media type: the body is streamed */
    const oas_schema_t *schema;   /* NULL: any content */
} oas_media_t;

typedef struct {
    const char *method;           /* upper case */
    const char *name;             /* operationId or "GET /pets/{id}" */
    const char *ptr;
    const oas_param_t *params;
    int n_params;
    int has_body;                 /* a requestBody is described */
    int body_required;
    const oas_media_t *media;
    int n_media;
    const char *body_ptr;
} oas_op_t;

typedef struct oas_path_s {
    const char *tmpl;             /* "/pets/{petId}" */
    const oas_op_t *ops;
    int n_ops;
    const char **param_names;     /* the template's names, in segment order */
    int n_names;
} oas_path_t;

/* One segment of a template: literal, or prefix{name}suffix. */
typedef struct oas_seg_s oas_seg_t;
struct oas_seg_s {
    bw_str_t lit;                 /* whole literal, or the prefix */
    bw_str_t suffix;
    int is_param;
    apr_array_header_t *kids;     /* oas_seg_t *: literals first, sorted; then parameters */
    const oas_path_t *path;       /* a template ends here */
};

struct bw_oas_s {
    const char *file;
    apr_array_header_t *bases;    /* const char *: server path prefixes, "" for none */
    oas_seg_t root;
    int max_segments;
    int n_ops;
};

#endif /* BW_OAS_INT_H */
