/*
 * Actions (the "id:1,phase:2,deny,setvar:tx.x=+1" part of a rule): the
 * registry of every action the language knows and the compilers of their
 * parameters. One family per file (act_meta.c: metadata, flow, disruptive
 * and rule flags; act_data.c: setvar and the other data actions; act_ctl.c:
 * ctl:), each exporting a NULL-terminated table that act_registry.c reads.
 *
 * This is the definition side only. A compiled action says what it does
 * (op) and carries its parsed parameter (num / data); the rule reader
 * (lang/bw_rule_actions.c) applies the ones that configure a rule, and the
 * executor (run/bw_run_actions.c) runs the non-disruptive ones on a match.
 */
#ifndef BW_ACTION_H
#define BW_ACTION_H

#include "base/bw_types.h"
#include "base/bw_regex.h"
#include "base/bw_coll.h"
#include "variables/bw_var.h"

typedef enum {
    BW_AK_META,          /* id, msg, tag… : fields of the rule */
    BW_AK_DISRUPTIVE,    /* deny, block, pass… */
    BW_AK_FLOW,          /* chain, skip, skipAfter */
    BW_AK_NONDISRUPTIVE, /* setvar, ctl, initcol… : run on every match */
    BW_AK_DATA           /* t:, status, log flags: parameters for the rule */
} bw_action_kind_t;

typedef enum {
    /* metadata */
    BW_A_ID, BW_A_PHASE, BW_A_MSG, BW_A_LOGDATA, BW_A_SEVERITY, BW_A_TAG, BW_A_REV,
    BW_A_VER, BW_A_MATURITY, BW_A_ACCURACY,
    /* rule flags and parameters */
    BW_A_LOG, BW_A_NOLOG, BW_A_AUDITLOG, BW_A_NOAUDITLOG, BW_A_CAPTURE, BW_A_MULTIMATCH,
    BW_A_T, BW_A_STATUS, BW_A_ACCEPTED,
    /* flow */
    BW_A_CHAIN, BW_A_SKIP, BW_A_SKIP_AFTER,
    /* disruptive */
    BW_A_PASS, BW_A_DENY, BW_A_DROP, BW_A_BLOCK, BW_A_ALLOW, BW_A_REDIRECT, BW_A_PROXY,
    BW_A_PAUSE,
    /* run on a match */
    BW_A_SETVAR, BW_A_SETENV, BW_A_EXPIREVAR, BW_A_DEPRECATEVAR, BW_A_INITCOL,
    BW_A_SANITISE, BW_A_CTL, BW_A_EXEC
} bw_action_op_t;

typedef struct bw_action_def_s bw_action_def_t;

typedef struct bw_action_s {
    const bw_action_def_t *def;
    const char *param;          /* as written, unquoted ("" when none) */
    long num;                   /* numeric parameter (id, phase, severity, status, skip, allow kind) */
    void *data;                 /* compiled parameter: a macro, a tfn, one of the structs below */
    const char *file;           /* the rule's file, for paths relative to it */
} bw_action_t;

struct bw_action_def_s {
    const char *name;
    bw_action_kind_t kind;
    /* 0 none, 1 required, 2 optional, 3 required but '' (quoted) is a
     * value: mod_security2 takes msg:'' and tag:'' as empty metadata */
    int param;
    bw_action_op_t op;
    /* Start-up: check a->param and compile it into a->num / a->data.
     * Returns NULL or a reason. NULL compile: nothing to compile. */
    const char *(*compile)(bw_action_t *a, apr_pool_t *p);
};

/* Case-insensitive lookup; NULL when unknown. */
const bw_action_def_t *bw_action_lookup(const char *name, size_t len);

/* The external program a compiled action runs (exec with a program), or
 * NULL: what SecExternalPrograms Off refuses at start-up. */
const char *bw_action_program(const bw_action_t *a);

/* Severity number to the name ModSecurity logs ("CRITICAL"…), or NULL. */
const char *bw_severity_name(int severity);

/* ---- compiled parameters -------------------------------------------------- */

/* exec's num: what the parameter names. A Lua script (".lua", as
 * ModSecurity decides) is read by the rule reader, which knows the rule
 * file its path is relative to; data is then its bw_lua_script_t. Any
 * other file is an external program (act_exec.c), checked at start-up. */
enum { BW_EXEC_LUA = 1, BW_EXEC_PROGRAM = 2 };

/* allow's num */
enum { BW_ALLOW_ALL = 0, BW_ALLOW_PHASE = 1, BW_ALLOW_REQUEST = 2 };

typedef enum { BW_SV_SET, BW_SV_ADD, BW_SV_SUB, BW_SV_DEL } bw_setvar_op_t;

/* setvar:[!]coll.name[=[+-]value]; expirevar/deprecatevar:coll.name=value */
typedef struct bw_setvar_s {
    const char *coll;            /* upper-case collection name */
    const bw_macro_t *name;
    bw_key_t key;                /* the name hashed, when it has no macro */
    const bw_macro_t *value;     /* NULL for BW_SV_DEL */
    bw_setvar_op_t op;
} bw_setvar_t;

/* setenv:[!]name[=value] */
typedef struct bw_setenv_s {
    const bw_macro_t *name, *value;
    int del;
} bw_setenv_t;

/* initcol:coll=key, setsid/setuid/setrsc:key */
typedef struct bw_initcol_s {
    const char *coll;
    const bw_macro_t *key;
    const char *key_sha1;        /* the key's SHA-1 in hex, when it has no macro */
} bw_initcol_t;

/* "1-9,12,100-200" */
typedef struct bw_idrange_s { long lo, hi; } bw_idrange_t;
const char *bw_idranges_parse(apr_pool_t *p, const char *text, apr_array_header_t *out);
int bw_idranges_match(const apr_array_header_t *ranges, long id);

typedef enum {
    BW_CTL_RULE_ENGINE, BW_CTL_REMOVE_ID, BW_CTL_REMOVE_TAG, BW_CTL_REMOVE_MSG,
    BW_CTL_REMOVE_TARGET_ID, BW_CTL_REMOVE_TARGET_TAG, BW_CTL_REMOVE_TARGET_MSG,
    BW_CTL_REQBODY_PROCESSOR, BW_CTL_REQBODY_ACCESS, BW_CTL_REQBODY_LIMIT, BW_CTL_RESBODY_ACCESS,
    BW_CTL_RESBODY_LIMIT, BW_CTL_FORCE_REQBODY_VAR, BW_CTL_AUDIT_ENGINE, BW_CTL_AUDIT_PARTS,
    BW_CTL_HASH_ENGINE, BW_CTL_HASH_ENFORCEMENT, BW_CTL_IGNORED
} bw_ctl_kind_t;

/* ctl:option=value */
typedef struct bw_ctl_s {
    bw_ctl_kind_t kind;
    int ival;
    const char *sval;
    apr_array_header_t *ranges;   /* bw_idrange_t */
    pcre2_code *re;
    apr_array_header_t *targets;  /* bw_target_t */
} bw_ctl_t;

#endif /* BW_ACTION_H */
