/*
 * Variables, as the rule language names them: the table of every variable
 * (ARGS, REQUEST_HEADERS, TX…) with what its name allows, rule targets
 * ("ARGS|!ARGS:foo|&TX:x|REQUEST_COOKIES:/^sess/") and macros
 * ("%{tx.score}") compiled once at start-up.
 *
 * This is the definition side only. Producing a variable's values for a
 * transaction is the executor's business (run/bw_vars_*.c): a definition
 * carries an id, and the executor keeps one generator per id.
 */
#ifndef BW_VAR_H
#define BW_VAR_H

#include "base/bw_types.h"
#include "base/bw_regex.h"

#define BW_VAR_COLLECTION   0x01  /* takes a selector, yields many values */
#define BW_VAR_SELECTOR_REQ 0x02  /* a selector is required (e.g. XML, RULE) */
#define BW_VAR_TX_COLL      0x04  /* keyed collection held by the transaction (coll) */
#define BW_VAR_NO_SELECTOR  0x08  /* scalar: a selector is an error */
#define BW_VAR_STABLE       0x10  /* the values cannot change while the data they
                                     come from does not: the executor builds them
                                     once and keeps them across phases until it does */
#define BW_VAR_FROM_BODY    0x20  /* with BW_VAR_STABLE: also made of the request body */
#define BW_VAR_FROM_RESPONSE 0x40 /* with BW_VAR_STABLE: made of the response */
#define BW_VAR_NAMED_BY_KEY 0x80  /* a value is named by its key alone: MATCHED_VARS's
                                     keys are the names of the variables that matched,
                                     and a match of one is logged under that name */

#define BW_C (BW_VAR_COLLECTION)
#define BW_CS (BW_VAR_COLLECTION | BW_VAR_STABLE)
#define BW_S (BW_VAR_NO_SELECTOR)
#define BW_SS (BW_VAR_NO_SELECTOR | BW_VAR_STABLE)
#define BW_CB (BW_CS | BW_VAR_FROM_BODY)
#define BW_SB (BW_SS | BW_VAR_FROM_BODY)
#define BW_CR (BW_CS | BW_VAR_FROM_RESPONSE)
#define BW_SR (BW_SS | BW_VAR_FROM_RESPONSE)
#define BW_K (BW_VAR_COLLECTION | BW_VAR_TX_COLL)
#define BW_M (BW_VAR_COLLECTION | BW_VAR_NAMED_BY_KEY)

/* X(symbol, "NAME", flags): every variable, in lookup order. */
#define BW_VAR_LIST(X)                                                                   \
    X(ARGS, "ARGS", BW_CB) X(ARGS_NAMES, "ARGS_NAMES", BW_CB)                             \
    X(ARGS_GET, "ARGS_GET", BW_CS) X(ARGS_GET_NAMES, "ARGS_GET_NAMES", BW_CS)             \
    X(ARGS_POST, "ARGS_POST", BW_CB) X(ARGS_POST_NAMES, "ARGS_POST_NAMES", BW_CB)         \
    X(ARGS_COMBINED_SIZE, "ARGS_COMBINED_SIZE", BW_S)                                    \
    X(REQUEST_HEADERS, "REQUEST_HEADERS", BW_CS)                                         \
    X(REQUEST_HEADERS_NAMES, "REQUEST_HEADERS_NAMES", BW_CS)                             \
    X(REQUEST_COOKIES, "REQUEST_COOKIES", BW_CS)                                         \
    X(REQUEST_COOKIES_NAMES, "REQUEST_COOKIES_NAMES", BW_CS)                             \
    X(MULTIPART_PART_HEADERS, "MULTIPART_PART_HEADERS", BW_CB)                           \
    X(FILES, "FILES", BW_CB) X(FILES_NAMES, "FILES_NAMES", BW_CB)                         \
    X(FILES_SIZES, "FILES_SIZES", BW_C) X(FILES_TMPNAMES, "FILES_TMPNAMES", BW_C)         \
    X(FILES_TMP_CONTENT, "FILES_TMP_CONTENT", BW_C)                                      \
    X(FILES_CONTENT, "FILES_CONTENT", BW_CB)                                             \
    X(FILES_COMBINED_SIZE, "FILES_COMBINED_SIZE", BW_S)                                  \
    X(MULTIPART_FILENAME, "MULTIPART_FILENAME", BW_C)                                    \
    X(MULTIPART_NAME, "MULTIPART_NAME", BW_C)                                            \
    X(XML, "XML", BW_CB)                                                                 \
    X(REQUEST_METHOD, "REQUEST_METHOD", BW_SS) X(REQUEST_PROTOCOL, "REQUEST_PROTOCOL", BW_SS) \
    X(REQUEST_LINE, "REQUEST_LINE", BW_SS) X(REQUEST_URI, "REQUEST_URI", BW_SS)           \
    X(REQUEST_URI_RAW, "REQUEST_URI_RAW", BW_SS)                                         \
    X(REQUEST_FILENAME, "REQUEST_FILENAME", BW_SS)                                       \
    X(REQUEST_BASENAME, "REQUEST_BASENAME", BW_SS) X(QUERY_STRING, "QUERY_STRING", BW_SS) \
    X(REMOTE_ADDR, "REMOTE_ADDR", BW_SS) X(REMOTE_HOST, "REMOTE_HOST", BW_SS)             \
    X(USERAGENT_IP, "USERAGENT_IP", BW_SS) X(REMOTE_PORT, "REMOTE_PORT", BW_S)            \
    X(REMOTE_USER, "REMOTE_USER", BW_S) X(AUTH_TYPE, "AUTH_TYPE", BW_S)                   \
    X(SERVER_ADDR, "SERVER_ADDR", BW_SS) X(SERVER_NAME, "SERVER_NAME", BW_SS)             \
    X(SERVER_PORT, "SERVER_PORT", BW_S) X(UNIQUE_ID, "UNIQUE_ID", BW_SS)                  \
    X(PATH_INFO, "PATH_INFO", BW_S)                                                      \
    X(REQUEST_BODY, "REQUEST_BODY", BW_SB)                                               \
    X(REQUEST_BODY_LENGTH, "REQUEST_BODY_LENGTH", BW_S)                                  \
    X(FULL_REQUEST, "FULL_REQUEST", BW_S)                                                \
    X(FULL_REQUEST_LENGTH, "FULL_REQUEST_LENGTH", BW_S)                                  \
    X(REQBODY_ERROR, "REQBODY_ERROR", BW_S) X(REQBODY_ERROR_MSG, "REQBODY_ERROR_MSG", BW_S) \
    X(REQBODY_PROCESSOR, "REQBODY_PROCESSOR", BW_S)                                      \
    X(REQBODY_PROCESSOR_GUESSED, "REQBODY_PROCESSOR_GUESSED", BW_S)                      \
    X(REQBODY_PROCESSOR_ERROR, "REQBODY_PROCESSOR_ERROR", BW_S)                          \
    X(REQBODY_PROCESSOR_ERROR_MSG, "REQBODY_PROCESSOR_ERROR_MSG", BW_S)                  \
    X(URLENCODED_ERROR, "URLENCODED_ERROR", BW_S)                                        \
    X(INBOUND_DATA_ERROR, "INBOUND_DATA_ERROR", BW_S)                                    \
    X(MULTIPART_STRICT_ERROR, "MULTIPART_STRICT_ERROR", BW_S)                            \
    X(MULTIPART_BOUNDARY_QUOTED, "MULTIPART_BOUNDARY_QUOTED", BW_S)                      \
    X(MULTIPART_BOUNDARY_WHITESPACE, "MULTIPART_BOUNDARY_WHITESPACE", BW_S)              \
    X(MULTIPART_DATA_BEFORE, "MULTIPART_DATA_BEFORE", BW_S)                              \
    X(MULTIPART_DATA_AFTER, "MULTIPART_DATA_AFTER", BW_S)                                \
    X(MULTIPART_HEADER_FOLDING, "MULTIPART_HEADER_FOLDING", BW_S)                        \
    X(MULTIPART_LF_LINE, "MULTIPART_LF_LINE", BW_S)                                      \
    X(MULTIPART_MISSING_SEMICOLON, "MULTIPART_MISSING_SEMICOLON", BW_S)                  \
    X(MULTIPART_INVALID_QUOTING, "MULTIPART_INVALID_QUOTING", BW_S)                      \
    X(MULTIPART_INVALID_PART, "MULTIPART_INVALID_PART", BW_S)                            \
    X(MULTIPART_INVALID_HEADER_FOLDING, "MULTIPART_INVALID_HEADER_FOLDING", BW_S)        \
    X(MULTIPART_FILE_LIMIT_EXCEEDED, "MULTIPART_FILE_LIMIT_EXCEEDED", BW_S)              \
    X(MULTIPART_UNMATCHED_BOUNDARY, "MULTIPART_UNMATCHED_BOUNDARY", BW_S)                \
    X(MULTIPART_CRLF_LF_LINES, "MULTIPART_CRLF_LF_LINES", BW_S)                          \
    X(TX, "TX", BW_K) X(IP, "IP", BW_K) X(SESSION, "SESSION", BW_K) X(USER, "USER", BW_K) \
    X(GLOBAL, "GLOBAL", BW_K) X(RESOURCE, "RESOURCE", BW_K) X(GEO, "GEO", BW_K)           \
    X(ENV, "ENV", BW_C) X(RULE, "RULE", BW_C | BW_VAR_SELECTOR_REQ)                       \
    X(MATCHED_VARS, "MATCHED_VARS", BW_M) X(MATCHED_VARS_NAMES, "MATCHED_VARS_NAMES", BW_M) \
    X(RESPONSE_HEADERS, "RESPONSE_HEADERS", BW_CR)                                       \
    X(RESPONSE_HEADERS_NAMES, "RESPONSE_HEADERS_NAMES", BW_CR)                           \
    X(MATCHED_VAR, "MATCHED_VAR", BW_S) X(MATCHED_VAR_NAME, "MATCHED_VAR_NAME", BW_S)     \
    X(RESPONSE_STATUS, "RESPONSE_STATUS", BW_S)                                          \
    X(RESPONSE_PROTOCOL, "RESPONSE_PROTOCOL", BW_S) X(STATUS_LINE, "STATUS_LINE", BW_S)   \
    X(RESPONSE_CONTENT_TYPE, "RESPONSE_CONTENT_TYPE", BW_S)                              \
    X(RESPONSE_CONTENT_LENGTH, "RESPONSE_CONTENT_LENGTH", BW_S)                          \
    X(RESPONSE_BODY, "RESPONSE_BODY", BW_SR)                                             \
    X(OUTBOUND_DATA_ERROR, "OUTBOUND_DATA_ERROR", BW_S)                                  \
    X(HIGHEST_SEVERITY, "HIGHEST_SEVERITY", BW_S) X(DURATION, "DURATION", BW_S)           \
    X(TIME, "TIME", BW_S) X(TIME_DAY, "TIME_DAY", BW_S) X(TIME_EPOCH, "TIME_EPOCH", BW_S) \
    X(TIME_HOUR, "TIME_HOUR", BW_S) X(TIME_MIN, "TIME_MIN", BW_S)                         \
    X(TIME_MON, "TIME_MON", BW_S) X(TIME_SEC, "TIME_SEC", BW_S)                           \
    X(TIME_WDAY, "TIME_WDAY", BW_S) X(TIME_YEAR, "TIME_YEAR", BW_S)                       \
    X(MODSEC_BUILD, "MODSEC_BUILD", BW_S) X(SESSIONID, "SESSIONID", BW_S)                 \
    X(USERID, "USERID", BW_S) X(WEBAPPID, "WEBAPPID", BW_S)                               \
    X(PERF_ALL, "PERF_ALL", BW_S) X(PERF_COMBINED, "PERF_COMBINED", BW_S)                 \
    X(PERF_GC, "PERF_GC", BW_S) X(PERF_LOGGING, "PERF_LOGGING", BW_S)                     \
    X(PERF_PHASE1, "PERF_PHASE1", BW_S) X(PERF_PHASE2, "PERF_PHASE2", BW_S)               \
    X(PERF_PHASE3, "PERF_PHASE3", BW_S) X(PERF_PHASE4, "PERF_PHASE4", BW_S)               \
    X(PERF_PHASE5, "PERF_PHASE5", BW_S) X(PERF_SREAD, "PERF_SREAD", BW_S)                 \
    X(PERF_SWRITE, "PERF_SWRITE", BW_S) X(PERF_RULES, "PERF_RULES", BW_C)                 \
    X(SDBM_DELETE_ERROR, "SDBM_DELETE_ERROR", BW_S)                                      \
    X(STREAM_INPUT_BODY, "STREAM_INPUT_BODY", BW_S)                                      \
    X(STREAM_OUTPUT_BODY, "STREAM_OUTPUT_BODY", BW_S)                                    \
    X(WEBSERVER_ERROR_LOG, "WEBSERVER_ERROR_LOG", BW_S)                                  \
    X(SCRIPT_FILENAME, "SCRIPT_FILENAME", BW_S) X(SCRIPT_BASENAME, "SCRIPT_BASENAME", BW_S) \
    X(SCRIPT_UID, "SCRIPT_UID", BW_S) X(SCRIPT_GID, "SCRIPT_GID", BW_S)                   \
    X(SCRIPT_USERNAME, "SCRIPT_USERNAME", BW_S)                                          \
    X(SCRIPT_GROUPNAME, "SCRIPT_GROUPNAME", BW_S) X(SCRIPT_MODE, "SCRIPT_MODE", BW_S)     \
    X(OPENAPI_VIOLATIONS, "OPENAPI_VIOLATIONS", BW_C)                                    \
    X(OPENAPI_VIOLATIONS_NAMES, "OPENAPI_VIOLATIONS_NAMES", BW_C)                        \
    X(OPENAPI_OPERATION, "OPENAPI_OPERATION", BW_S)

typedef enum {
#define BW_VAR_ENUM(sym, name, flags) BW_V_##sym,
    BW_VAR_LIST(BW_VAR_ENUM)
#undef BW_VAR_ENUM
    BW_V__COUNT
} bw_var_id_t;

typedef struct bw_var_def_s {
    const char *name;       /* upper case as logged, e.g. "ARGS" */
    unsigned flags;
    bw_var_id_t id;
} bw_var_def_t;

/* Case-insensitive lookup; NULL when unknown. */
const bw_var_def_t *bw_var_lookup(const char *name, size_t len);
const bw_var_def_t *bw_var_by_id(bw_var_id_t id);

/* One value a target produced: variable, key in its collection, value. */
typedef struct bw_varval_s {
    const bw_var_def_t *var;
    bw_str_t key;           /* collection key; empty for scalars */
    bw_str_t value;
    int is_count;           /* produced by &VAR */
} bw_varval_t;

/* The full name of a value for logs and MATCHED_VAR_NAME: "ARGS:id"; a
 * count is named by its variable alone ("ARGS" for &ARGS:id), a value of
 * MATCHED_VARS by the variable it came from, as mod_security2 2.9.7 does. */
const char *bw_varval_name(apr_pool_t *p, const bw_varval_t *v);
/* The same, its length in *len. */
const char *bw_varval_name_n(apr_pool_t *p, const bw_varval_t *v, size_t *len);

/* Append one value to out (an array of bw_varval_t). */
void bw_var_emit(apr_array_header_t *out, const bw_var_def_t *def, bw_str_t key, bw_str_t value);

/* ---- macros ------------------------------------------------------------ */

/* A string with %{VAR} / %{VAR.key} parts, split once at compile time. */
typedef struct bw_macro_part_s {
    bw_str_t literal;               /* when var == NULL */
    const bw_var_def_t *var;
    bw_str_t key;
    uint32_t key_hash;              /* bw_key_hash(key) (base/bw_coll.h) */
} bw_macro_part_t;

typedef struct bw_macro_s {
    const char *text;               /* as written */
    int nparts;
    bw_macro_part_t *parts;
    int has_vars;
} bw_macro_t;

/* Always returns a macro (has_vars = 0 when the text is constant). A name
 * that is no variable stays literal text, as in ModSecurity. */
const bw_macro_t *bw_macro_compile(apr_pool_t *p, const char *text, char **err);
int bw_macro_text_has_vars(const char *text);

/* ---- targets ----------------------------------------------------------- */

/* A rule target: VAR, VAR:sel, VAR:/re/, &VAR, !VAR:sel. */
typedef struct bw_target_s {
    const bw_var_def_t *var;
    bw_str_t selector;          /* literal selector (empty: none) */
    uint32_t selector_hash;     /* bw_key_hash(selector) (base/bw_coll.h) */
    pcre2_code *selector_re;    /* /regex/ selector */
    const bw_relit_t *selector_lit; /* its literal form, when it has one */
    const bw_macro_t *selector_macro; /* selector with %{…} (rare) */
    int is_count;
    int is_exclusion;
} bw_target_t;

/* Parse a target list ("ARGS|!ARGS:foo|&TX:x"). Returns NULL or a reason. */
const char *bw_targets_parse(apr_pool_t *p, const char *text,
                             apr_array_header_t *out /* bw_target_t */);

/* Does target t (an exclusion or a ctl:ruleRemoveTarget) cover value v? */
int bw_target_covers(const bw_target_t *t, const bw_varval_t *v, pcre2_match_data *md);
/* Does t's /regex/ selector match name? */
int bw_target_selects(const bw_target_t *t, bw_str_t name, pcre2_match_data *md);

#endif /* BW_VAR_H */
