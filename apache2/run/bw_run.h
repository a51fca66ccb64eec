/*
 * The executor: one transaction, from the request line to the logging
 * phase. Transactions hold what the engine knows about one request and its
 * response (split once: path, query string, ARGS_GET, cookies; the body as
 * it arrives); the executor runs a program's phases over it.
 *
 * Built on the program (program/), the rule definitions (lang/) and the
 * kinds; only the audit writer, the glue and the CLI sit above it.
 */
#ifndef BW_RUN_H
#define BW_RUN_H

#include <string.h>
#include "program/bw_prog.h"
#include "body/bw_body.h"
#include "base/bw_coll.h"
#include "base/bw_metrics.h"

/* ---- collections -------------------------------------------------------- */

/* Persistent collections (bw_persist.c; the stores in run/bw_store.h): the
 * end of the transaction, for the stores that write then. */
typedef struct bw_pcoll_s bw_pcoll_t;
void bw_persist_store_all(bw_tx_t *tx);

/* ---- transformations (bw_tfn_cache.c) ------------------------------------ */

typedef struct bw_tfn_cache_s bw_tfn_cache_t;
/* The chain of program node `node` (-1: none) applied to in; each prefix
 * computed once per transaction for a given value (by address). */
bw_str_t bw_tfn_apply_node(bw_tx_t *tx, int node, bw_str_t in);
/* tfns[0..n-1] applied to in, not cached. */
bw_str_t bw_tfn_apply(bw_tx_t *tx, const bw_tfn_def_t *const *tfns, int n, bw_str_t in);
/* Forget every cached result (the program changed: nodes are its own). */
void bw_tfn_cache_reset(bw_tx_t *tx);

/* ---- the values of a phase (bw_values.c) ----------------------------------- */

/* A source's scan (its plan's verdicts). The plan's slots are grouped by
 * the array of strings their chains made (slots whose chains left every
 * value as another slot's did are one group); per value, vrow[i] is NULL
 * when no string of the value hit anything (most values), else per group
 * the hits of the string that group made (nwords words, or NULL: none).
 * Bits in `all` hit every string. Per slot, the union over all values
 * (any[slot * nwords…], `all` included when there are values). inexact:
 * some string could not be scanned, so no hit is exact. */
typedef struct bw_hits_s {
    int nwords;
    const int *group_of;               /* per slot */
    const uint64_t *const *const *vrow;
    const uint64_t *all;
    uint64_t *any;
    int inexact;
} bw_hits_t;

/* Does value i's string of `slot` hit `bit`? */
static inline int bw_hits_has(const bw_hits_t *h, int i, int slot, int bit)
{
    uint64_t m = (uint64_t)1 << (bit % 64);
    const uint64_t *const *r = h->vrow[i];
    const uint64_t *v;
    if (h->all[bit / 64] & m)
        return 1;
    return r && (v = r[h->group_of[slot]]) && (v[bit / 64] & m);
}

/* A source's values, their transformations and scans, kept across phases
 * while the data they come from is the same (bw_src_get). Per chain node
 * (when a rule needed it): the transformed values, the bytes each
 * contains and their union; a node that changed no value shares its
 * parent's arrays. The nodes are the source's own (prog->src_local: only
 * those its rules and plan use), numbered from 0. */
typedef struct bw_src_state_s {
    int gen, cgen;                /* tx->data_gen and the class's generation when built */
    int cls;                      /* the class: BW_SRC_HEAD, _BODY, _RESPONSE */
    int n;
    bw_varval_t *vals;
    bw_str_t *raw;                /* vals[i].value */
    bw_byteset_t *present;        /* the bytes of raw[i] (when a chain needed them) */
    bw_byteset_t all;             /* their union */
    const int *local;             /* program node -> the source's own number */
    bw_str_t **tv;                /* per own node: transformed values, or NULL */
    bw_byteset_t **tps;           /* per own node: the bytes of each of them */
    const bw_byteset_t **tall;    /* per own node: their union (a node that
                                     changed no value points to its parent's) */
    bw_hits_t *hits;              /* the source's scan, or NULL */
} bw_src_state_t;

/* The bytes of S's values through node `node` (computed by bw_src_tv),
 * and their union. */
static inline const bw_byteset_t *bw_src_tps(const bw_src_state_t *S, int node)
{
    return S->tps[S->local[node]];
}

static inline const bw_byteset_t *bw_src_tall(const bw_src_state_t *S, int node)
{
    return S->tall[S->local[node]];
}

/* What a source's values are made of (bw_var.h): the request line and
 * headers, also the request body, the response. */
enum { BW_SRC_HEAD, BW_SRC_BODY, BW_SRC_RESPONSE };

/* Fresh source states for tx->prog (at creation, and when the program changes). */
void bw_src_reset(bw_tx_t *tx);
/* The data some values are made of changed (the generations were bumped):
 * forget the cached scans (src_any). */
void bw_src_stale(bw_tx_t *tx);
bw_src_state_t *bw_src_get(bw_tx_t *tx, int k);
/* The bytes of S's raw values (present, all), computed once. */
void bw_src_bytes(bw_tx_t *tx, bw_src_state_t *S);
/* The values of S through chain node `node` (-1: as they are); with a node,
 * its tps and tall too. */
const bw_str_t *bw_src_tv_make(bw_tx_t *tx, bw_src_state_t *S, int node);
static inline const bw_str_t *bw_src_tv(bw_tx_t *tx, bw_src_state_t *S, int node)
{
    if (node < 0)
        return S->raw;
    if (S->tv && S->tv[S->local[node]])
        return S->tv[S->local[node]];
    return bw_src_tv_make(tx, S, node);
}
/* The scan of source k by its plan (once while its values are the same). */
const bw_hits_t *bw_src_scan(bw_tx_t *tx, bw_src_state_t *S, int k);

/* Scratch of one scan, reused by the next (bw_values.c). */
typedef struct bw_scan_arena_s {
    char *base;
    size_t used, cap;
} bw_scan_arena_t;

/* The executor's own arrays of a transaction (a source's values, their
 * bytes, transformed strings, scan results, expanded macros): carved from
 * blocks of its pool by bw_tx_alloc (below), a few instructions where
 * apr_palloc is a call of some twenty, a few hundred times a GET. They
 * live as long as the pool, like the rest of its memory. */
typedef struct bw_tx_mem_s {
    char *p;
    size_t left;
} bw_tx_mem_t;

/* ---- transactions ----------------------------------------------------- */

typedef struct bw_removal_s {
    int kind;                     /* 0 id ranges, 1 tag, 2 msg */
    const apr_array_header_t *ranges;
    const pcre2_code *re;
    const bw_target_t *target;    /* NULL: whole rule removed; else target exclusion */
} bw_removal_t;

struct bw_tx_s {
    apr_pool_t *pool;
    const bw_program_t *prog;
    const bw_settings_t *cfg;
    bw_request_t req;
    const bw_callbacks_t *cb;
    apr_table_t *env;

    /* request-derived data, built once */
    bw_str_t uri_path, query_string, basename, filename;
    apr_array_header_t *args_get;      /* bw_kv_t */
    apr_array_header_t *args_post;     /* bw_kv_t */
    int args_post_counted;             /* body arguments counted, not made (only
                                        * &ARGS and &ARGS_POST read them) */
    apr_array_header_t *cookies;       /* bw_kv_t */
    apr_array_header_t *files;         /* bw_body_file_t */
    bw_str_t *files_tmp_content;       /* per file: FILES_TMP_CONTENT once read (data NULL: not yet) */
    int files_tmp_n;                   /* ...of that many files */
    apr_int64_t files_tmp_read;        /* bytes read for it, at most reqbody_seen */
    apr_array_header_t *part_headers;  /* bw_kv_t */
    int urlencoded_error_get;
    bw_body_result_t body_res;
    const char *reqbody_processor;     /* "URLENCODED", "MULTIPART", "JSON", "XML" or NULL */
    int reqbody_processor_set;         /* by ctl */
    int force_reqbody_var;
    /* SecRequestBodyProcessorGuess: the processor the content called for
     * (REQBODY_PROCESSOR_GUESSED), or NULL; reqbody_guess_kept: the body was
     * kept to be guessed, so REQUEST_BODY shows it */
    const char *reqbody_guessed;
    int reqbody_guess_kept;
    char *reqbody;                     /* buffered request body (REQUEST_BODY) */
    apr_size_t reqbody_len, reqbody_cap;
    int reqbody_truncated, reqbody_rejected;
    int reqbody_done;
    apr_off_t reqbody_seen;            /* bytes received: REQUEST_BODY_LENGTH */
    struct bw_reqbody_s *rb;           /* streaming state between chunks (bw_tx.c) */

    /* response */
    bw_response_t res;
    int have_response;
    char *resbody;
    apr_size_t resbody_len, resbody_cap;
    int resbody_truncated;
    /* STREAM_INPUT_BODY / STREAM_OUTPUT_BODY (bw_stream.c): the body as the
     * rules last left it, and whether a rule rewrote it */
    bw_str_t stream[2];
    int stream_set[2], stream_changed[2];

    /* collections */
    apr_hash_t *colls;                 /* "TX", "IP"… -> bw_coll_t* */
    bw_coll_t *tx_coll;
    bw_store_t *store;                 /* where IP, SESSION… live (bw_tx_set_store); NULL: files */

    /* matching state */
    bw_varval_t matched_var;
    const char *matched_var_name;      /* lazily built from matched_var */
    size_t matched_var_name_len;       /* ... its length, once built */
    int has_matched_var;
    apr_array_header_t *matched_vars;  /* bw_varval_t: MATCHED_VARS (earlier chain links) */
    apr_array_header_t *cur_matched;   /* bw_varval_t matched by the link being run */
    const bw_rule_t *cur_rule;
    int highest_severity;
    apr_array_header_t *removals;      /* bw_removal_t from ctl: */
    int engine_mode;                   /* after ctl:ruleEngine */
    int reqbody_access;
    int resbody_access;
    apr_int64_t reqbody_limit;
    apr_int64_t resbody_limit;
    int audit_engine;
    int hash_engine;             /* sign the response's links (SecHashEngine, ctl:hashEngine) */
    int hash_enforcement;        /* @validateHash checks (SecHashEngine, ctl:hashEnforcement) */
    const char *audit_parts;
    int phase_done[BW_PHASES + 1];
    int allow_level;                   /* 0 none, 1 phase, 2 request, 3 all */
    int allow_phase;
    int intercepted;
    bw_intervention_t iv;
    apr_array_header_t *matches;       /* bw_match_record_t */

    /* scratch */
    apr_array_header_t *vals;          /* bw_varval_t, reused per target list */
    apr_array_header_t *vals_tmp;      /* bw_varval_t, building a source */
    apr_array_header_t *macro_vals;    /* bw_varval_t, a macro part's values (made when needed) */
    bw_matcher_buf_t scanbuf;          /* joined values of a scan (bw_values.c) */
    bw_scan_arena_t scan_arena;        /* a scan's own arrays (bw_values.c) */
    bw_tx_mem_t mem;                   /* bw_tx_alloc's block */
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    /* what every operator run of a phase starts from (bw_exec.c, set as
     * the phase starts): the transaction's parts, the rest zero */
    bw_op_run_t run0;
    apr_pool_t *scratch;
    bw_tfn_env_t tfn_env;
    bw_tfn_cache_t *tfn_cache;
    apr_time_t phase_start;
    int skip_count;
    int persisted;
    int cur_phase;
    int img_end;                       /* phase 1: slots below it are in TX already
                                        * (bw_program_t's image_end), or 0 */
    struct bw_src_state_s *src;        /* per program source: its values (bw_values.c),
                                        * meaningful where src_built says so */
    unsigned char *src_built;          /* per source: its state was built (the states
                                        * are not zeroed per transaction: 120 bytes each) */
    const uint64_t **src_any;          /* per source: its scan's any[] while valid, or NULL
                                        * (what the executor reads for most rules) */
    int data_gen;                      /* bumped when a stream variable is set or rewritten */
    int cls_gen[3];                    /* per BW_SRC_… class: bumped when the request
                                        * body is in, when the response's headers are */
    bw_tx_stats_t stats;
    struct bw_tx_metrics_s *metrics;   /* where this transaction is counted, or NULL */

    /* audit log (apache2/audit/): formatted alert lines for part H, filled
     * only when the audit engine is not Off; the writer's own state */
    apr_array_header_t *audit_msgs;    /* const char*: "Warning. … [id …] …" */
    void *audit;
    bw_spawn_ctx_t spawn;              /* where @inspectFile and exec run programs */

    /* BulwarkOpenAPI (bw_tx_openapi.c): the request checked against the
     * description in force, begun when first needed */
    struct bw_oas_run_s *oas;
    const struct bw_oas_s *oas_of;     /* the description oas was begun with */
    int oas_audited;
};

/* External programs (bw_run_program.c): the limits and environment of
 * tx->spawn from the settings in force; the exec action. */
void bw_tx_spawn_setup(bw_tx_t *tx);
void bw_run_exec(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a);

/* Run-time pieces other files call. */
void bw_tx_log_message(bw_tx_t *tx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bw_coll_t *bw_tx_collection(bw_tx_t *tx, const char *name, int create);
void bw_tx_parse_request_line(bw_tx_t *tx);
void bw_tx_build_cookies(bw_tx_t *tx);
int bw_tx_exec_phase(bw_tx_t *tx, int phase);
int bw_tx_rule_removed(const bw_tx_t *tx, const bw_rule_t *r);
const char *bw_tx_matched_var_name(bw_tx_t *tx);
/* The same as a string with its length; 0 when there is no matched var. */
int bw_tx_matched_var_name_str(bw_tx_t *tx, bw_str_t *name);
void bw_tx_process_request_body(bw_tx_t *tx);
/* An operator rewrote a stream variable's value (bw_stream.c). */
void bw_tx_stream_rewrite(bw_tx_t *tx, const bw_varval_t *v, bw_str_t body);
/* The stream a value belongs to (BW_STREAM_IN/OUT), or -1. */
int bw_tx_stream_of(const bw_varval_t *v);
/* Phase 4 begins: a whole buffered response body becomes STREAM_OUTPUT_BODY. */
void bw_tx_stream_response(bw_tx_t *tx);

/* BulwarkOpenAPI (bw_tx_openapi.c): the request's check against the
 * description the settings name, begun when first asked (NULL: none). */
struct bw_oas_run_s *bw_tx_openapi(bw_tx_t *tx);
/* The events a JSON body is to be checked with, or NULL. */
const bw_json_observer_t *bw_tx_openapi_observer(bw_tx_t *tx);
/* The body is over (or there was none): the last checks, and the
 * violations into the audit record's messages. */
void bw_tx_openapi_body_end(bw_tx_t *tx, int had_body, const char *parse_error);
/* OPENAPI_VIOLATIONS(_NAMES) and OPENAPI_OPERATION. */
void bw_var_gen_openapi(bw_tx_t *tx, const bw_var_def_t *d, const void *data, bw_str_t sel,
                        apr_array_header_t *out);
int bw_var_openapi_operation(bw_tx_t *tx, bw_str_t *out);

/* Which values did a ctl:ruleRemoveTarget… exclude for rule r? */
int bw_tx_target_excluded(const bw_tx_t *tx, const bw_rule_t *r, const bw_varval_t *v);

/* ---- live counters (bw_tx_metrics.c) ----------------------------------------- */

/* Phases of at most this many steps count their paths (bw_metrics_path);
 * the loop keeps their bitmaps on its stack. */
#define BW_TX_PATH_STEPS 4096

/* What one phase adds to: the thread's counters and, per slot of the
 * phase's code, the rule's index in them (0: not counted), 16 bits: the
 * map a phase reads is a few hundred bytes. */
typedef struct bw_tx_mphase_s {
    int on;
    int timed;
    uint32_t layout;                   /* the phase's layout (a phase of at most
                                        * BW_TX_PATH_STEPS steps), or 0 */
    const uint16_t *ix;
    const bw_metrics_ctr_t *ctr;       /* the transaction's own, not a copy */
} bw_tx_mphase_t;

/* Set *mp up for phase `phase` of tx->prog: 0 (mp->on 0) when tx is not
 * counted. */
int bw_tx_metrics_phase(bw_tx_t *tx, int phase, bw_tx_mphase_t *mp);

/* ---- values, macros, actions ----------------------------------------------- */

/* A variable's generator: appends its values (literal selector sel, empty =
 * all; names matched case-insensitively) to out. data is per variable.
 * count, where set, says how many values fn would append without making
 * them (&ARGS over a body of thousands of values: rule 200007 of the
 * recommended settings); NULL: a count generates and counts. */
typedef struct bw_var_gen_s {
    void (*fn)(bw_tx_t *tx, const bw_var_def_t *def, const void *data, bw_str_t sel,
               apr_array_header_t *out);
    const void *data;
    int (*count)(bw_tx_t *tx, bw_str_t sel);
} bw_var_gen_t;
extern const bw_var_gen_t bw_var_gens_request[BW_V__COUNT];  /* bw_vars_request.c */
extern const bw_var_gen_t bw_var_gens_misc[BW_V__COUNT];     /* bw_vars_misc.c */

/* Generators of scalars: data is a bw_var_scalar_fn; nothing is produced
 * when it returns 0 (variable not available). */
typedef int (*bw_var_scalar_fn)(bw_tx_t *tx, bw_str_t *out);
void bw_var_gen_scalar(bw_tx_t *tx, const bw_var_def_t *def, const void *data, bw_str_t sel,
                       apr_array_header_t *out);
/* The entries of an array of bw_kv_t, filtered by a literal selector. */
void bw_var_gen_kv(const bw_var_def_t *def, const apr_array_header_t *arr, bw_str_t sel,
                   int names_only, apr_array_header_t *out);
/* How many of them bw_var_gen_kv would append. */
int bw_var_count_kv(const apr_array_header_t *arr, bw_str_t sel);

/* Append the values of variable def (literal selector sel, empty = all) to
 * out (bw_varval_t): the generators of bw_vars_request.c / bw_vars_misc.c. */
void bw_var_generate(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t sel, apr_array_header_t *out);
/* An array of n elements of size bytes from p, not zeroed (apr_array_make
 * clears them): for arrays whose elements are each written before read. */
apr_array_header_t *bw_scratch_array(apr_pool_t *p, int n, int size);
/* How many values bw_var_generate would append, or -1 when the variable
 * cannot tell without making them. */
int bw_var_count(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t sel);
/* A scalar variable's value without an array: 1 with *v set, 0 when it
 * has none, -1 when def is not a scalar (bw_var_generate it). */
int bw_var_scalar(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t *v);
/* Produce the values of one target into out (regex selectors applied,
 * &counts counted). */
void bw_target_values(bw_tx_t *tx, const bw_target_t *t, apr_array_header_t *out);
bw_str_t bw_macro_expand(bw_tx_t *tx, const bw_macro_t *m);
/* Run one non-disruptive action of rule on a match. */
void bw_run_action(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a);

/* ---- Lua scripts (bw_lua_api.c) ------------------------------------------- */

/* An operator's run->script: script s's main(arg) with the m table over
 * transaction tx (a bw_tx_t *). */
int bw_lua_tx_call(void *tx, const struct bw_lua_script_s *s, const bw_str_t *arg,
                   const char **msg, const char **err);
/* exec:x.lua on a match of rule: main() run, its result ignored, a failure
 * logged. */
void bw_lua_tx_exec(bw_tx_t *tx, const bw_rule_t *rule, const struct bw_lua_script_s *s);

/* The hash engine's signing key for this transaction: SecHashKey's mode
 * reads the client's address or the session id (setsid) as it is now
 * (bw_tx_hash.c). */
bw_str_t bw_tx_hash_key(bw_tx_t *tx);

/* Source k's state, valid (inline: the executor asks for every rule). */
static inline bw_src_state_t *bw_src_at(bw_tx_t *tx, int k)
{
    bw_src_state_t *S = &tx->src[k];
    if (tx->src_built[k] && S->gen == tx->data_gen && S->cgen == tx->cls_gen[S->cls])
        return S;
    return bw_src_get(tx, k);
}

/* Source k's scan. */
static inline const bw_hits_t *bw_src_hits(bw_tx_t *tx, int k)
{
    bw_src_state_t *S = bw_src_at(tx, k);
    return S->hits ? S->hits : bw_src_scan(tx, S, k);
}

/* Source k's scan's union per slot (h->any). */
static inline const uint64_t *bw_src_any(bw_tx_t *tx, int k)
{
    const uint64_t *a = tx->src_any[k];
    return a ? a : (tx->src_any[k] = bw_src_hits(tx, k)->any);
}

/* n bytes of tx's pool, 8-aligned, not zeroed (bw_tx_mem_t). */
void *bw_tx_alloc_more(bw_tx_t *tx, size_t n);
static inline void *bw_tx_alloc(bw_tx_t *tx, size_t n)
{
    void *r;
    n = (n + 7) & ~(size_t)7;
    if (n > tx->mem.left)
        return bw_tx_alloc_more(tx, n);
    r = tx->mem.p;
    tx->mem.p += n;
    tx->mem.left -= n;
    return r;
}

/* The same, zeroed. */
static inline void *bw_tx_calloc(bw_tx_t *tx, size_t n)
{
    return memset(bw_tx_alloc(tx, n), 0, n);
}

#endif /* BW_RUN_H */
