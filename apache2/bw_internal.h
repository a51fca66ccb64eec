/*
 * The engine's internal structures: compiled rules, targets, actions,
 * variables, macros and the transaction. Only engine files include this;
 * the glue and the CLI use bw_engine.h.
 */
#ifndef BW_INTERNAL_H
#define BW_INTERNAL_H

#include "bw_engine.h"
#include "operators/bw_op.h"
#include "transformations/bw_tfn.h"
#include "body/bw_body.h"
#include <apr_thread_mutex.h>

typedef struct bw_var_def_s bw_var_def_t;
typedef struct bw_action_def_s bw_action_def_t;
typedef struct bw_macro_s bw_macro_t;

/* ---- variables --------------------------------------------------------- */

/* One value a target produced: variable, key in its collection, value. */
typedef struct bw_varval_s {
    const bw_var_def_t *var;
    bw_str_t key;           /* collection key; empty for scalars */
    bw_str_t value;
    int is_count;           /* produced by &VAR */
} bw_varval_t;

#define BW_VAR_COLLECTION   0x01  /* takes a selector, yields many values */
#define BW_VAR_SELECTOR_REQ 0x02  /* a selector is required (e.g. XML, RULE) */
#define BW_VAR_TX_COLL      0x04  /* keyed collection held in tx->colls */
#define BW_VAR_NO_SELECTOR  0x08  /* scalar: a selector is an error */

struct bw_var_def_s {
    const char *name;       /* upper case as logged, e.g. "ARGS" */
    unsigned flags;
    /* Append the values of this variable to out (bw_varval_t). sel is the
     * literal selector (may be empty = all); the caller filters /regex/
     * selectors and exclusions. For selector-by-literal the generator may
     * restrict itself (faster), matching names case-insensitively. */
    void (*generate)(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t sel,
                     apr_array_header_t *out);
    const void *data;       /* generator-specific: getter or collection name */
};

/* Append one value (used by generators). */
void bw_var_emit(apr_array_header_t *out, const bw_var_def_t *def, bw_str_t key, bw_str_t value);

const bw_var_def_t *bw_var_lookup(const char *name, size_t len);

/* A rule target: VAR, VAR:sel, VAR:/re/, &VAR, !VAR:sel. */
typedef struct bw_target_s {
    const bw_var_def_t *var;
    bw_str_t selector;          /* literal selector (empty: none) */
    pcre2_code *selector_re;    /* /regex/ selector */
    const bw_macro_t *selector_macro; /* selector with %{…} (rare) */
    int is_count;
    int is_exclusion;
} bw_target_t;

/* Parse a target list ("ARGS|!ARGS:foo|&TX:x"). Returns NULL or a reason. */
const char *bw_targets_parse(apr_pool_t *p, const char *text,
                             apr_array_header_t *out /* bw_target_t */);
/* Does target t (an exclusion or a ctl:ruleRemoveTarget) cover value v? */
int bw_target_covers(const bw_target_t *t, const bw_varval_t *v, pcre2_match_data *md);

/* Produce the values of one target into out. */
void bw_target_values(bw_tx_t *tx, const bw_target_t *t, apr_array_header_t *out);

/* The full name of a value for logs and MATCHED_VAR_NAME: "ARGS:id". */
const char *bw_varval_name(apr_pool_t *p, const bw_varval_t *v);

/* ---- macros ------------------------------------------------------------ */

/* A string with %{VAR} / %{VAR.key} parts, split once at compile time. */
typedef struct bw_macro_part_s {
    bw_str_t literal;               /* when var == NULL */
    const bw_var_def_t *var;
    bw_str_t key;
} bw_macro_part_t;

struct bw_macro_s {
    const char *text;               /* as written */
    int nparts;
    bw_macro_part_t *parts;
    int has_vars;
};

/* Compile text; NULL when the text has no macro? No: always returns a macro
 * (has_vars = 0 when constant). An unknown variable in %{} is an error. */
const bw_macro_t *bw_macro_compile(apr_pool_t *p, const char *text, char **err);
bw_str_t bw_macro_expand(bw_tx_t *tx, const bw_macro_t *m);
int bw_macro_text_has_vars(const char *text);

/* ---- actions ----------------------------------------------------------- */

typedef enum {
    BW_AK_META,          /* id, msg, tag… : set fields of the rule at parse time */
    BW_AK_DISRUPTIVE,    /* deny, block, pass… */
    BW_AK_FLOW,          /* chain, skip, skipAfter */
    BW_AK_NONDISRUPTIVE, /* setvar, ctl, capture… : run on match */
    BW_AK_DATA           /* status, xmlns: parameters for others */
} bw_action_kind_t;

typedef struct bw_action_s {
    const bw_action_def_t *def;
    const char *param;
    void *data;
} bw_action_t;

struct bw_action_def_s {
    const char *name;
    bw_action_kind_t kind;
    int param;   /* 0 none, 1 required, 2 optional */
    /* Parse-time: validate/compile param, and for meta actions apply to rule.
     * Returns NULL or a reason. */
    const char *(*init)(bw_rule_t *rule, bw_action_t *a, apr_pool_t *p);
    /* Run-time, for non-disruptive actions. */
    void (*execute)(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a);
};

const bw_action_def_t *bw_action_lookup(const char *name, size_t len);

/* Split an action list ("id:1,phase:2,'msg:x'"…) and init each action
 * into rule. Returns NULL or a reason. */
const char *bw_actions_parse(apr_pool_t *p, bw_rule_t *rule, const char *text,
                             apr_array_header_t *out /* bw_action_t */);

/* ---- rules ------------------------------------------------------------- */

typedef enum { BW_RULE_SECRULE, BW_RULE_SECACTION, BW_RULE_MARKER } bw_rule_kind_t;

typedef enum {
    BW_DA_UNSET = 0, BW_DA_PASS, BW_DA_DENY, BW_DA_DROP, BW_DA_BLOCK,
    BW_DA_ALLOW, BW_DA_ALLOW_PHASE, BW_DA_ALLOW_REQUEST, BW_DA_REDIRECT, BW_DA_PROXY
} bw_disruptive_t;

struct bw_rule_s {
    bw_rule_kind_t kind;
    const char *file;
    int line;
    long id;                     /* 0 = none */
    const char *id_str;
    int phase;                   /* 1..5; 0 unset */
    apr_array_header_t *targets; /* bw_target_t */
    bw_op_t op;
    int op_negated;
    const bw_macro_t *op_macro;  /* param has %{…}: compiled per tx */
    const bw_tfn_def_t **tfns;
    int ntfns;
    int tfn_none;                /* t:none seen: defaults' tfns not inherited */
    apr_array_header_t *actions; /* bw_action_t, all of them as written */
    apr_array_header_t *run_actions; /* non-disruptive, in order */
    const bw_macro_t *msg;
    const bw_macro_t *logdata;
    int severity;                /* -1 unset */
    const char *rev, *ver;
    int maturity, accuracy;      /* -1 unset */
    apr_array_header_t *tags;    /* const char* */
    bw_disruptive_t disruptive;
    int status;                  /* 0 unset */
    const bw_macro_t *redirect;
    int log, auditlog;           /* -1 unset */
    int capture, multi_match;
    int chained;                 /* this rule has the chain action */
    int skip;
    const char *skip_after;
    bw_rule_t *chain_next;       /* next link */
    bw_rule_t *chain_head;       /* starter (self for starters) */
    const char *marker;          /* SecMarker name */
    const bw_rule_t *default_set;/* SecDefaultAction in force when parsed */
    struct bw_pf_group_s *pf_group; /* @rx literal prefilter (bw_rxfilter.c), or NULL */
    const struct bw_tfn_node_s *const *tfn_nodes; /* interned chain prefixes (bw_tfn_cache.c) */
    int pf_bit;
    int pf_stable;               /* all targets can use the per-phase scan */
    int order;                   /* definition order inside the program */
};

/* ---- configuration internals -------------------------------------------- */

typedef enum {
    BW_ITEM_RULE,
    BW_ITEM_REMOVE_ID, BW_ITEM_REMOVE_TAG, BW_ITEM_REMOVE_MSG,
    BW_ITEM_UPDATE_TARGET_ID, BW_ITEM_UPDATE_TARGET_TAG, BW_ITEM_UPDATE_TARGET_MSG,
    BW_ITEM_UPDATE_ACTION_ID
} bw_item_kind_t;

typedef struct bw_idrange_s { long lo, hi; } bw_idrange_t;

typedef struct bw_item_s {
    bw_item_kind_t kind;
    const char *file;
    int line;
    bw_rule_t *rule;                 /* BW_ITEM_RULE */
    apr_array_header_t *ranges;      /* REMOVE_ID, UPDATE_*_ID: bw_idrange_t */
    pcre2_code *re;                  /* tag / msg match */
    const char *text;                /* tag / msg text */
    apr_array_header_t *targets;     /* UPDATE_TARGET: bw_target_t to add / exclude */
    apr_array_header_t *replaced;    /* UPDATE_TARGET with replacement: old names */
    const char *actions_text;        /* UPDATE_ACTION */
} bw_item_t;

struct bw_config_s {
    apr_pool_t *pool;
    bw_settings_t settings;
    apr_array_header_t *items;       /* bw_item_t */
    bw_rule_t *defaults[BW_PHASES + 1];  /* SecDefaultAction per phase */
    bw_rule_t *pending_chain;        /* last link of a chain awaiting a rule */
    apr_hash_t *ids;                 /* id (long as key) -> rule, this context */
    apr_array_header_t *warnings;    /* const char* */
    apr_array_header_t *errors;      /* const char*: "file:line: reason" (file loading) */
    apr_thread_mutex_t *mutex;       /* guards cache */
    apr_array_header_t *cache;       /* built programs per parent */
    int include_depth;
    int pf_prepared;                 /* prefilter groups built for these rules */
};

struct bw_program_s {
    apr_pool_t *pool;
    bw_settings_t settings;
    apr_array_header_t *phase[BW_PHASES + 1];  /* bw_rule_t* starters and markers */
    apr_hash_t *by_id;               /* long -> rule (starter) */
    int nrules;
    int pf_disabled;                 /* benchmarks and differential tests */
};

/* Parse SecRule / SecAction / SecMarker into a rule. */
const char *bw_rule_parse(bw_config_t *cfg, bw_rule_kind_t kind, const char *args,
                          const char *file, int line, bw_rule_t **out);
/* Apply the SecDefaultAction in force to a freshly parsed starter rule. */
void bw_rule_apply_defaults(bw_rule_t *r, const bw_rule_t *def);
/* Parse SecDefaultAction's actions into a pseudo-rule. */
const char *bw_rule_parse_default(bw_config_t *cfg, const char *args,
                                  const char *file, int line, bw_rule_t **out);

/* Rule directives (bw_rules_dir.c), called from the directive table. */
const char *bw_dir_secrule(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_secaction(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_secmarker(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_default_action(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_remove(bw_config_t *cfg, bw_item_kind_t kind, const char *args,
                          const char *file, int line);
const char *bw_dir_update_target(bw_config_t *cfg, bw_item_kind_t kind, const char *args,
                                 const char *file, int line);
const char *bw_dir_update_action(bw_config_t *cfg, const char *args, const char *file, int line);

/* Word splitting as httpd does for directive arguments. */
const char *bw_conf_getword(apr_pool_t *p, const char **line, char **word);

/* Settings merge and defaults. */
void bw_settings_init_unset(bw_settings_t *s);
void bw_settings_merge(bw_settings_t *out, const bw_settings_t *parent, const bw_settings_t *child);
void bw_settings_finalize(bw_settings_t *s);

/* ---- collections -------------------------------------------------------- */

/* A keyed collection (TX, IP, SESSION…): case-insensitive keys. */
typedef struct bw_coll_s {
    const char *name;        /* "TX" */
    bw_kv_t **slots;         /* open addressing, case-insensitive (bw_coll.c) */
    size_t cap, used;
    apr_array_header_t *order; /* bw_kv_t* in insertion order; an unset entry
                                  has name.data == NULL */
    /* persistent collections (bw_persist.c); NULL otherwise */
    const char *path;        /* record file under SecDataDir */
    apr_hash_t *orig;        /* lowercase name -> bw_kv_t* as loaded */
    apr_hash_t *abs_set;     /* lowercase name -> "1": set outright, not only += / -= */
    int dirty;               /* changed by this transaction: store it */
} bw_coll_t;

bw_coll_t *bw_coll_create(apr_pool_t *p, const char *name);
const bw_kv_t *bw_coll_get(const bw_coll_t *c, bw_str_t key);
void bw_coll_set(apr_pool_t *p, bw_coll_t *c, bw_str_t key, bw_str_t value);
void bw_coll_unset(bw_coll_t *c, bw_str_t key);
void bw_coll_clear(apr_pool_t *p, bw_coll_t *c);

/* Persistent collections: load at initcol (registers the collection in the
 * transaction), remember outright assignments, store all at the end. */
bw_coll_t *bw_persist_load(bw_tx_t *tx, const char *name, bw_str_t key);
void bw_persist_mark_set(bw_tx_t *tx, bw_coll_t *c, bw_str_t name);
void bw_persist_mark_delta(bw_coll_t *c);
void bw_persist_store_all(bw_tx_t *tx);

/* ---- @rx literal prefilter (bw_rxfilter.c) ------------------------------- */

typedef struct bw_pf_group_s bw_pf_group_t;
/* Group the @rx rules of a context by transformation chain (once). */
void bw_rxfilter_prepare(bw_config_t *cfg);
/* 0 when rule r cannot match the current values, else 1. */
int bw_rxfilter_maybe(bw_tx_t *tx, const bw_rule_t *r);
int bw_rxfilter_targets_stable(const bw_rule_t *r);
unsigned int bw_rxfilter_key_hash(const char *key, apr_ssize_t *klen);

/* ---- transformation cache (bw_tfn_cache.c) -------------------------------- */

typedef struct bw_tfn_cache_s bw_tfn_cache_t;
typedef struct bw_tfn_node_s bw_tfn_node_t;
/* Intern a chain into trie (start-up): one node per prefix, equal prefixes
 * share nodes. NULL for an empty chain. */
const bw_tfn_node_t *const *bw_tfn_intern(apr_pool_t *p, apr_hash_t *trie,
                                           const bw_tfn_def_t *const *tfns, int n);
/* tfns[0..n-1] applied to in, each prefix computed once per transaction
 * for a given value (by address); nodes from bw_tfn_intern, or NULL for no
 * caching. */
bw_str_t bw_tfn_apply_cached(bw_tx_t *tx, const bw_tfn_node_t *const *nodes,
                             const bw_tfn_def_t *const *tfns, int n, bw_str_t in);

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
    apr_array_header_t *cookies;       /* bw_kv_t */
    apr_array_header_t *files;         /* bw_body_file_t */
    apr_array_header_t *part_headers;  /* bw_kv_t */
    int urlencoded_error_get;
    bw_body_result_t body_res;
    const char *reqbody_processor;     /* "URLENCODED", "MULTIPART", "JSON", "XML" or NULL */
    int reqbody_processor_set;         /* by ctl */
    int force_reqbody_var;
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

    /* collections */
    apr_hash_t *colls;                 /* "TX", "IP"… -> bw_coll_t* */
    bw_coll_t *tx_coll;

    /* matching state */
    bw_varval_t matched_var;
    const char *matched_var_name;      /* lazily built from matched_var */
    int has_matched_var;
    apr_array_header_t *matched_vars;  /* bw_varval_t: MATCHED_VARS (previous chain link) */
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
    const char *audit_parts;
    int phase_done[BW_PHASES + 1];
    int allow_level;                   /* 0 none, 1 phase, 2 request, 3 all */
    int allow_phase;
    int intercepted;
    bw_intervention_t iv;
    apr_array_header_t *matches;       /* bw_match_record_t */

    /* scratch */
    apr_array_header_t *vals;          /* bw_varval_t, reused per target list */
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    apr_pool_t *scratch;
    bw_tfn_env_t tfn_env;
    bw_tfn_cache_t *tfn_cache;
    apr_time_t phase_start;
    int skip_count;
    int persisted;
    int cur_phase;
    apr_hash_t *pf_cache;              /* prefilter bitsets (bw_rxfilter.c) */

    /* audit log (apache2/audit/): formatted alert lines for part H, filled
     * only when the audit engine is not Off; the writer's own state */
    apr_array_header_t *audit_msgs;    /* const char*: "Warning. … [id …] …" */
    void *audit;
};

/* Run-time pieces other files call. */
void bw_tx_log_message(bw_tx_t *tx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bw_coll_t *bw_tx_collection(bw_tx_t *tx, const char *name, int create);
void bw_tx_parse_request_line(bw_tx_t *tx);
void bw_tx_build_cookies(bw_tx_t *tx);
int bw_tx_exec_phase(bw_tx_t *tx, int phase);
int bw_tx_rule_removed(const bw_tx_t *tx, const bw_rule_t *r);
const char *bw_tx_matched_var_name(bw_tx_t *tx);
void bw_tx_process_request_body(bw_tx_t *tx);

/* Which values did a ctl:ruleRemoveTarget… exclude for rule r? */
int bw_tx_target_excluded(const bw_tx_t *tx, const bw_rule_t *r, const bw_varval_t *v);

/* Parse "1-9,12,100-200" id lists. */
const char *bw_idranges_parse(apr_pool_t *p, const char *text, apr_array_header_t *out);
int bw_idranges_match(const apr_array_header_t *ranges, long id);

/* Tag matching for removals: ModSecurity treats the argument as a regex. */
int bw_rule_has_tag_matching(const bw_rule_t *r, const pcre2_code *re, pcre2_match_data *md);
int bw_rule_msg_matches(const bw_rule_t *r, const pcre2_code *re, pcre2_match_data *md);
pcre2_code *bw_regex_compile(apr_pool_t *p, const char *pattern, int caseless, char **err);
int bw_regex_match(const pcre2_code *re, bw_str_t s, pcre2_match_data *md);

#endif /* BW_INTERNAL_H */
