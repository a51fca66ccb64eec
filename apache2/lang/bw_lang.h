/*
 * The rule language front end: configuration text and directives in, rule
 * definitions and settings out. A context (server, <VirtualHost>,
 * <Location>…) is a bw_config_t: its settings and its items (rules, markers,
 * removals, target and action updates) in the order they were written.
 *
 * Everything here happens at start-up. The program builder (program/)
 * turns contexts into compiled programs; nothing here knows about
 * transactions.
 */
#ifndef BW_LANG_H
#define BW_LANG_H

#include <apr_thread_mutex.h>
#include "bw_engine.h"
#include "base/bw_regex.h"
#include "variables/bw_var.h"
#include "actions/bw_action.h"
#include "operators/bw_op.h"
#include "transformations/bw_tfn.h"

/* ---- rules ------------------------------------------------------------- */

typedef enum { BW_RULE_SECRULE, BW_RULE_SECACTION, BW_RULE_MARKER } bw_rule_kind_t;

typedef enum {
    BW_DA_UNSET = 0, BW_DA_PASS, BW_DA_DENY, BW_DA_DROP, BW_DA_BLOCK,
    BW_DA_ALLOW, BW_DA_ALLOW_PHASE, BW_DA_ALLOW_REQUEST, BW_DA_REDIRECT, BW_DA_PROXY
} bw_disruptive_t;

/* One SecRule / SecAction / SecMarker, or one link of a chain. */
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
    const bw_macro_t *op_macro;  /* param has %{…}: compiled per transaction */
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
    const bw_macro_t *redirect;  /* the URL of redirect: or of proxy: */
    int log, auditlog;           /* -1 unset */
    int capture, multi_match;
    int chained;                 /* this rule has the chain action */
    int skip;
    const char *skip_after;
    bw_rule_t *chain_next;       /* next link */
    bw_rule_t *chain_head;       /* starter (self for starters) */
    const char *marker;          /* SecMarker name */
    const bw_rule_t *default_set;/* SecDefaultAction in force when parsed */
    int lua;                     /* runs a Lua script (SecRuleScript, @inspectFile x.lua,
                                    exec:x.lua), which may set any variable */
};

/* Parse an action list ("id:1,phase:2,'msg:x'"…) and apply each action to
 * rule (metadata, flags, flow, disruptive) or queue it in run_actions.
 * Returns NULL or a reason. */
const char *bw_rule_apply_actions(apr_pool_t *p, bw_rule_t *rule, const char *text,
                                  apr_array_header_t *out /* bw_action_t */);
/* SecExternalPrograms: the reason a rule link may not run the program its
 * operator (@inspectFile) or an action (exec) names under settings s (Off
 * there), or NULL. Checked when a rule is read, on the settings of its
 * context so far, and again when programs are built, on merged settings. */
const char *bw_rule_forbidden_program(apr_pool_t *p, const bw_rule_t *r, const bw_settings_t *s);

/* Apply the SecDefaultAction in force to a freshly parsed rule. */
void bw_rule_apply_defaults(bw_rule_t *r, const bw_rule_t *def);

/* Tag / msg matching for removals: ModSecurity treats the argument as a regex. */
int bw_rule_has_tag_matching(const bw_rule_t *r, const pcre2_code *re, pcre2_match_data *md);
int bw_rule_msg_matches(const bw_rule_t *r, const pcre2_code *re, pcre2_match_data *md);

/* ---- contexts ----------------------------------------------------------- */

typedef enum {
    BW_ITEM_RULE,
    BW_ITEM_REMOVE_ID, BW_ITEM_REMOVE_TAG, BW_ITEM_REMOVE_MSG,
    BW_ITEM_UPDATE_TARGET_ID, BW_ITEM_UPDATE_TARGET_TAG, BW_ITEM_UPDATE_TARGET_MSG,
    BW_ITEM_UPDATE_ACTION_ID
} bw_item_kind_t;

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
    apr_array_header_t *compat;      /* const char*: uses of what differs from
                                        mod_security2 (lang/bw_compat.c); NULL: not noted */
    apr_thread_mutex_t *mutex;       /* guards cache */
    apr_array_header_t *cache;       /* built programs per parent (the glue's) */
    int include_depth;
    /* SecRemoteRules (bw_remote.c): read while parsing, in this context */
    int remote_fail_warn;            /* SecRemoteRulesFailAction Warn */
    const char *remote_ca_file;      /* SecRemoteRulesCAFile, NULL: system CAs */
    int remote_connect_timeout, remote_timeout;   /* seconds */
};

/* Rule directives (bw_rules_dir.c), called from the directive table. */
const char *bw_dir_secrule(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_secaction(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_secrulescript(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_secmarker(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_default_action(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_remove(bw_config_t *cfg, bw_item_kind_t kind, const char *args,
                          const char *file, int line);
const char *bw_dir_update_target(bw_config_t *cfg, bw_item_kind_t kind, const char *args,
                                 const char *file, int line);
const char *bw_dir_update_action(bw_config_t *cfg, const char *args, const char *file, int line);

/* SecRemoteRules and its settings (bw_remote.c). */
const char *bw_dir_remote_rules(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_remote_fail_action(bw_config_t *cfg, const char *args);
const char *bw_dir_remote_timeout(bw_config_t *cfg, const char *args);
/* All the words of a directive's arguments (quotes and escapes as
 * bw_conf_getword reads them), into *out (bw_directives.c). */
const char *bw_dir_words(apr_pool_t *p, const char *args, apr_array_header_t **out);
/* The hash engine's directives (bw_hash_dir.c); pm: SecHashMethodPm. */
const char *bw_dir_hash_key(bw_config_t *cfg, const char *args, const char *file, int line);
const char *bw_dir_hash_param(bw_config_t *cfg, const char *args);
const char *bw_dir_hash_method(bw_config_t *cfg, int pm, const char *args, const char *file,
                               int line);

/* The collection store's directives, by name (bw_store_dir.c). */
const char *bw_dir_store(bw_config_t *cfg, const char *name, const char *args);

/* Rules in memory, read as a file named label would be (bw_conf.c).
 * Returns NULL or a fatal error; directive errors go to cfg->errors. */
const char *bw_config_load_text(bw_config_t *cfg, const char *label, const char *text, size_t len);

/* Word splitting as httpd does for directive arguments. */
const char *bw_conf_getword(apr_pool_t *p, const char **line, char **word);

/* Settings: all unset, merged over a parent, defaults filled in. */
void bw_settings_init_unset(bw_settings_t *s);
void bw_settings_merge(bw_settings_t *out, const bw_settings_t *parent, const bw_settings_t *child);
void bw_settings_finalize(bw_settings_t *s);

#endif /* BW_LANG_H */
