/*
 * Operators (the "@name param" part of a SecRule). One operator per file
 * (op_<name>.c), each exporting a bw_op_def_t listed in op_registry.c.
 *
 * Life of an operator:
 *  - compile(): called once at start-up with the parameter as written (after
 *    the rule parser removed quoting). It prepares op->data (PCRE2 code with
 *    JIT, an Aho-Corasick automaton, a number, an IP tree…) from env->pool.
 *    When the parameter contains a %{macro} and the operator's flags allow
 *    macros, the engine instead expands the macro for each transaction and
 *    calls compile() with env->pool = the transaction pool (env->runtime = 1).
 *  - execute(): called per value. It must not allocate except for the match
 *    message and captures (from run->pool), and never on the no-match path.
 *    Returns 1 on match, 0 on no match, -1 on error (run->error set).
 * Negation ("!@rx") is the engine's business, not the operator's.
 */
#ifndef BW_OP_H
#define BW_OP_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <stddef.h>
#include <pcre2.h>
#include "base/bw_types.h"
#include "base/bw_spawn.h"

typedef struct bw_op_def_s bw_op_def_t;
struct bw_geo_db_s;   /* bw_geo.h */
struct bw_gsb_db_s;   /* bw_gsb.h */

/* One operator as it stands in one rule. */
typedef struct bw_op_s {
    const bw_op_def_t *def;
    const char *param;     /* NUL-terminated parameter, macros not expanded */
    size_t param_len;
    void *data;            /* compiled form, owned by compile() */
} bw_op_t;

/* What compile() may use. */
typedef struct bw_op_cenv_s {
    apr_pool_t *pool;      /* config pool (start-up) or transaction pool (runtime) */
    apr_pool_t *temp_pool; /* scratch, cleared after compile */
    const char *file;      /* rule file, for relative data-file paths */
    int line;
    int runtime;           /* 1 when compiling an expanded macro per transaction */
} bw_op_cenv_t;

struct bw_lua_script_s;
/* Run a Lua script's main(arg) (main() when arg is NULL) inside the
 * transaction, where its m.getvar and m.setvar can reach: 1 it matched
 * (*msg), 0 it did not, -1 it failed (*err). The executor lends one. */
typedef int (*bw_op_script_fn)(void *host, const struct bw_lua_script_s *script,
                               const bw_str_t *arg, const char **msg, const char **err);

/* The per-value call: inputs from the engine, outputs from the operator. */
typedef struct bw_op_run_s {
    apr_pool_t *pool;             /* transaction pool: messages, captures */
    const char *var_name;         /* e.g. "ARGS:id", for messages. The engine may pass
                                     BW_OP_VAR_PLACEHOLDER instead and put the real name
                                     into the message after a match (names cost a
                                     string build per value; messages are rare). */
    int capture;                  /* rule has the capture action */
    pcre2_match_data *md;         /* reusable scratch owned by the transaction */
    pcre2_match_context *mctx;    /* SecPcreMatchLimit / ...Recursion applied */
    int no_msg;                   /* the match message will not be used (nolog rule):
                                     operators skip building it */
    const struct bw_geo_db_s *geo; /* SecGeoLookupDb's database, or NULL (@geoLookup) */
    const struct bw_gsb_db_s *gsb; /* SecGsbLookupDb's list, or NULL (@gsbLookup) */
    void *xml_doc;                /* the request body's parsed XML document (the XML
                                     body processor's xmlDocPtr), or NULL: what
                                     @validateDTD / @validateSchema check */
    /* %{macros} in the text expanded in the transaction (@rsub's
     * replacement); NULL outside one: the text stays as written */
    bw_str_t (*expand)(void *host, bw_str_t text);
    bw_op_script_fn script;       /* NULL outside a transaction (folding, `bulwark op`) */
    void *script_host;
    const struct bw_hash_conf_s *hash; /* SecHashEngine On: the context's SecHash* settings;
                                     NULL when it is Off or outside a transaction */
    bw_str_t (*hash_key)(void *host); /* with hash: the transaction's signing key
                                     (SecHashKey's mode applied); host is script_host */
    const bw_spawn_ctx_t *spawn;  /* where a program may run (@inspectFile): the
                                     transaction's limits and environment; NULL
                                     where none may (start-up folding) */
    int stream;                   /* the value is a stream variable (STREAM_INPUT_BODY,
                                     STREAM_OUTPUT_BODY): an operator may rewrite it
                                     (told only to BW_OP_STREAM operators, else 0) */
    /* outputs */
    int rewritten;                /* @rsub: the stream becomes `rewrite` (run->pool) */
    bw_str_t rewrite;
    int ncaptures;                /* >= 0: captures[0..ncaptures-1] set TX.0.. */
    const char *msg;              /* on match: e.g. Pattern match "x" at ARGS:id. */
    const char *error;            /* on -1 */
    int limit_hit;                /* set with -1 when a PCRE2 limit stopped the match */
    /* On a match, an operator that fills a collection (@geoLookup: GEO)
     * names it here: the engine replaces its content by fill[0..nfill-1]
     * (from run->pool, values copied by the engine), negated rule or not. */
    const char *fill_coll;
    const bw_kv_t *fill;
    int nfill;
    /* last, and never cleared (bw_op_run_clear): only captures[0..ncaptures-1]
     * are read, and an operator sets them before it sets ncaptures */
    bw_str_t captures[10];
} bw_op_run_t;

/* Every member zero but captures (160 bytes nobody reads unset): the
 * engine clears a run before each operator call (bw_memzero: no inline
 * `rep stos`). */
static inline void bw_op_run_clear(bw_op_run_t *run)
{
    bw_memzero(run, offsetof(bw_op_run_t, captures));
}

#define BW_OP_VAR_PLACEHOLDER "\x1e@var\x1e"

/* Parameter rules. */
#define BW_OP_PARAM_NONE      0x01  /* any parameter is an error */
#define BW_OP_PARAM_REQUIRED  0x02  /* an empty parameter is an error */
#define BW_OP_PARAM_OPTIONAL  0x04
#define BW_OP_MACROS          0x10  /* %{…} in the parameter is expanded per transaction */
/* What a multi-pattern matcher (apache2/matcher) can take from a compiled
 * operator: its parameter as a regex, or its data as an automaton of
 * phrases (bw_acmatch.h) any of which anywhere is a match. */
#define BW_OP_SCAN_REGEX      0x100
#define BW_OP_SCAN_PHRASES    0x200
/* Reads run->stream (may rewrite a stream variable's value): the engine
 * tells only such operators whether the value is one. */
#define BW_OP_STREAM          0x400

/* What gate() says of a compiled operator (see below). */
#define BW_OP_GATE_NONE   0   /* nothing */
#define BW_OP_GATE_NEEDS  1   /* no value without a byte of the gate matches */
#define BW_OP_GATE_EXACT  2   /* and every value with one does */

struct bw_op_def_s {
    const char *name;   /* without '@', spelt as in the reference manual */
    unsigned flags;
    int (*compile)(bw_op_t *op, const bw_op_cenv_t *env, char **err);  /* 0 / -1; may be NULL */
    int (*execute)(const bw_op_t *op, bw_op_run_t *run, bw_str_t value);
    /* May be NULL. Fills gate (256 bits) with bytes at least one of which
     * every value the compiled operator matches contains, and returns
     * BW_OP_GATE_NEEDS or _EXACT; the engine then skips values (and whole
     * variables) without such a byte. */
    int (*gate)(const bw_op_t *op, uint64_t gate[4]);
    /* May be NULL. For an operator that compares the value with a constant
     * string: the regex (PCRE2 syntax, DOTALL/DOLLAR_ENDONLY as @rx) that
     * matches exactly the values it matches, so a multi-pattern matcher can
     * take it. */
    const char *(*scan_regex)(const bw_op_t *op, apr_pool_t *pool);
};

/* What SecRuleScript compiles to: a rule without targets whose operator
 * runs op->data (a bw_lua_script_t) once. Not in the registry, so no
 * SecRule can name it. */
extern const bw_op_def_t bw_op_script;

/* The external program a compiled operator runs (@inspectFile with a
 * program), or NULL: what SecExternalPrograms Off refuses at start-up. */
const char *bw_op_program(const bw_op_t *op);

/* Case-insensitive lookup by name without '@'; NULL when unknown. */
const bw_op_def_t *bw_op_lookup(const char *name);
extern const bw_op_def_t *const bw_op_registry[];   /* NULL-terminated */

/* Helpers operators share (op_common.c). */
/* Escape a value for a log message the way ModSecurity does: printable ASCII
 * as is, '"' and '\\' escaped, everything else as \xHH; cut at max bytes. */
char *bw_op_log_escape(apr_pool_t *p, bw_str_t s, size_t max);
/* The parameter as a regex of escaped bytes, between head ("^" or "") and
 * tail ("\\z" or ""): the scan_regex of the string comparisons. */
const char *bw_op_literal_regex(apr_pool_t *p, const bw_op_t *op, const char *head,
                                const char *tail);
/* Resolve a data-file path relative to the directory of the rule file. */
const char *bw_op_data_path(apr_pool_t *p, const char *rule_file, const char *path);

#endif /* BW_OP_H */
