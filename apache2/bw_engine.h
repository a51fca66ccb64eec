/*
 * The Bulwark engine's public face, used by the httpd glue, the CLI and the
 * unit tests. It knows nothing of httpd: requests come in as plain structs,
 * decisions go out as a bw_intervention_t, log lines go out through
 * callbacks.
 *
 * Life cycle:
 *   configuration  bw_config_create() per context (server, <VirtualHost>,
 *                  <Location>…), bw_config_directive() per directive (or
 *                  bw_config_load_file() in the CLI, which follows Include);
 *   program        bw_program_build(parent program, context) merges a context
 *                  over its parent once; the result is immutable and shared
 *                  by every transaction that uses it;
 *   transaction    bw_tx_create() per request, request data set, phases run
 *                  in order with bw_tx_run_phase().
 */
#ifndef BW_ENGINE_H
#define BW_ENGINE_H

#include "base/bw_types.h"
#include "base/bw_hmac.h"

#define BW_PHASES 5
enum {
    BW_PHASE_REQUEST_HEADERS = 1,
    BW_PHASE_REQUEST_BODY = 2,
    BW_PHASE_RESPONSE_HEADERS = 3,
    BW_PHASE_RESPONSE_BODY = 4,
    BW_PHASE_LOGGING = 5
};

typedef enum {
    BW_ENGINE_UNSET = -1,
    BW_ENGINE_OFF = 0,
    BW_ENGINE_ON = 1,
    BW_ENGINE_DETECTION_ONLY = 2
} bw_engine_mode_t;

typedef struct bw_config_s bw_config_t;
typedef struct bw_program_s bw_program_t;
typedef struct bw_tx_s bw_tx_t;
typedef struct bw_rule_s bw_rule_t;

/* Once per load of the engine, before any thread uses it. life is the
 * pool the engine's code lives as long as (Apache: pconf, at whose
 * clearing a restart unloads the module and its static data): the
 * process-wide state the engine keeps (the scan's scratch) is freed with
 * it, not left behind by every reload. */
void bw_engine_init(apr_pool_t *life);

/* ---- settings ---------------------------------------------------------- */

struct bw_geo_db_s;   /* an opened GeoIP database (operators/bw_geo.h) */

/* Where persistent collections (IP, SESSION, USER, GLOBAL, RESOURCE) live:
 * SecCollectionBackend and the SecCollectionShm*, SecCollectionRedis* and
 * SecCollectionFailAction directives (lang/bw_store_dir.c). One store per
 * server: the glue accepts them in the main server only. */
enum { BW_STORE_SHM = 0, BW_STORE_FILE, BW_STORE_REDIS };
typedef struct bw_store_conf_s {
    int backend;                     /* BW_STORE_SHM (the default), _FILE, _REDIS */
    apr_int64_t shm_size;            /* bytes of the shared block */
    int shm_record_size;             /* bytes of one record's slot */
    int shm_refuse;                  /* full: refuse new records (1) or evict the LRU one (0) */
    const char *redis_host;
    int redis_port;
    const char *redis_user;          /* NULL: AUTH with the password alone */
    const char *redis_password;      /* NULL: no AUTH */
    int redis_db;
    const char *redis_prefix;        /* of every key */
    int redis_connect_ms, redis_command_ms;
    int redis_pool;                  /* idle connections a worker process keeps */
    int fail_closed;                 /* store unavailable: deny (1) or empty collections (0) */
    int fail_status;
} bw_store_conf_t;
struct bw_gsb_db_s;   /* a Safe Browsing hash list (operators/bw_gsb.h) */

/* Every Sec* setting of one context. Unset values are -1 / NULL and are
 * inherited from the parent context when programs are built. */
typedef struct bw_settings_s {
    int rule_engine;                 /* bw_engine_mode_t */
    int reqbody_access;
    int resbody_access;
    apr_int64_t reqbody_limit;
    apr_int64_t reqbody_nofiles_limit;
    apr_int64_t reqbody_inmemory_limit;
    int reqbody_limit_action;        /* 0 Reject, 1 ProcessPartial */
    apr_int64_t resbody_limit;
    int resbody_limit_action;
    int json_depth_limit;
    int args_limit;
    apr_int64_t pcre_match_limit;
    apr_int64_t pcre_recursion_limit;
    int arg_separator;               /* a byte, or -1 */
    int cookie_format;               /* 0 or 1 */
    const char *unicode_map_file;
    int unicode_codepage;
    const int *unicode_map;          /* loaded table */
    const char *tmp_dir;
    const char *data_dir;
    const char *upload_dir;
    int upload_keep_files;           /* 0 Off, 1 On, 2 RelevantOnly */
    int upload_file_mode;
    int upload_file_limit;
    int tmp_save_uploaded_files;
    int reqbody_guess;               /* SecRequestBodyProcessorGuess: 0 Off, 1 On */
    apr_int64_t upload_text_limit;   /* SecUploadTextLimit: FILES_CONTENT bytes, 0 = none */
    apr_array_header_t *resbody_mime_types;  /* of const char*, lowercase */
    int audit_engine;                /* 0 Off, 1 On, 2 RelevantOnly */
    const char *audit_log;
    const char *audit_log2;
    const char *audit_parts;
    int audit_type;                  /* 0 Serial, 1 Concurrent */
    int audit_format;                /* 0 Native, 1 JSON */
    const char *audit_storage_dir;
    int audit_dir_mode;
    int audit_file_mode;
    const char *audit_relevant_status;
    void *audit_relevant_status_re;  /* pcre2_code* */
    const char *debug_log;
    int debug_log_level;
    apr_int64_t collection_timeout;
    bw_store_conf_t *store;          /* NULL: the defaults (bw_store_conf) */
    const char *geo_db;              /* SecGeoLookupDb, as resolved */
    const struct bw_geo_db_s *geo;   /* ...opened at the directive (operators/bw_geo.h) */
    const char *gsb_db;              /* SecGsbLookupDb, as resolved */
    const struct bw_gsb_db_s *gsb;   /* ...read at the directive (operators/bw_gsb.h) */
    const char *scan_cache_dir;      /* compiled multi-pattern databases (SecScanCacheDir) */
    const char *chroot_dir;          /* SecChrootDir (main server only): the glue chroots there */
    int external_programs;           /* SecExternalPrograms: may @inspectFile/exec run programs */
    int external_program_timeout;    /* SecExternalProgramTimeout, seconds */
    int status_engine;
    int metrics_engine;              /* SecMetricsEngine: live counters (main server only) */
    int metrics_sample;              /* SecMetricsTimingSample: time the rules of 1 tx in N */
    const char *server_signature;
    apr_array_header_t *component_signatures;
    int disable_backend_compression;
    int rule_inheritance;
    int stream_inbody_inspection;
    int stream_outbody_inspection;
    int content_injection;           /* SecContentInjection: @rsub may edit the response */
    int hash_engine;
    bw_hash_conf_t hash;             /* SecHashKey, SecHashParam, SecHashMethodRx/Pm */
    int xml_external_entity;
    const char *httpbl_key;
    const char *sensor_id;
    const char *web_app_id;
    int interceptor_on_error;
    int conn_read_state_limit;
    int conn_write_state_limit;
} bw_settings_t;

/* The store settings s names, the defaults when it names none. */
const bw_store_conf_t *bw_store_conf(const bw_settings_t *s);

/* ---- configuration ----------------------------------------------------- */

/* A context's configuration: its own settings and its own rule items in
 * definition order. */
bw_config_t *bw_config_create(apr_pool_t *pool);

/* Apply one directive. name is e.g. "SecRule"; args is the raw text after
 * the name (quotes and escapes as written; line continuations already
 * joined). Returns NULL, or a reason (the caller adds file:line). */
const char *bw_config_directive(bw_config_t *cfg, const char *name,
                                const char *args, const char *file, int line);

/* Is this one of ours (a Sec* directive the engine implements)? */
int bw_config_is_directive(const char *name);

/* The names of every directive, NULL-terminated (for httpd's command table). */
extern const char *const bw_config_directive_names[];

/* Read a rule file the way httpd would (comments, '\' continuations), apply
 * each directive, follow Include / IncludeOptional (globs, relative to the
 * including file's directory). Returns NULL or "file:line: reason". */
const char *bw_config_load_file(bw_config_t *cfg, const char *path);

/* Built-program cache of a context, for the glue: an array of two pointers
 * per entry (parent program, program), guarded by bw_config_lock(). */
apr_array_header_t *bw_config_cache(bw_config_t *cfg);
void bw_config_lock(bw_config_t *cfg);
void bw_config_unlock(bw_config_t *cfg);

/* Settings before merging: start-up warnings the caller should print. */
const apr_array_header_t *bw_config_warnings(const bw_config_t *cfg);

/* From now on, note each use of a directive, variable, operator,
 * transformation or action that Bulwark supports differently from
 * mod_security2 (docs/compatibility.md). Off by default: httpd does not
 * pay for it at start-up; `bulwark check` turns it on. */
void bw_config_note_compat(bw_config_t *cfg);
/* The notes so far, "file:line: warning: KIND NAME differs from
 * mod_security2: HOW", in the order the configuration was read. */
const apr_array_header_t *bw_config_compat_notes(const bw_config_t *cfg);

/* ---- programs ---------------------------------------------------------- */

/* Build the effective program of cfg over parent (NULL for the top). Errors
 * ("file:line: reason") go to *err and NULL is returned. The program lives in
 * pool and is immutable afterwards. */
bw_program_t *bw_program_build(apr_pool_t *pool, const bw_program_t *parent,
                               bw_config_t *cfg, char **err);

const bw_settings_t *bw_program_settings(const bw_program_t *prog);
/* The rule (chain starter) of id in prog, or NULL. */
const bw_rule_t *bw_program_rule(const bw_program_t *prog, long id);

/* The same with options, for benchmarks and differential tests that
 * compare a program with and without an optimisation. */
#define BW_PROG_NO_SCAN 0x01   /* run every pattern operator on every value */
#define BW_PROG_NO_FOLD 0x02   /* keep what the configuration decides as rules */
bw_program_t *bw_program_build_ex(apr_pool_t *pool, const bw_program_t *parent,
                                  bw_config_t *cfg, unsigned flags, char **err);

/* Summary for `bulwark check`. */
typedef struct bw_program_stats_s {
    int rules_per_phase[BW_PHASES + 1];
    int chained_rules;
    int markers;
    int total_rules;
    apr_hash_t *operators;   /* name -> int* count */
    apr_hash_t *actions;     /* name -> int* count */
    apr_hash_t *tfns;        /* name -> int* count */
    apr_hash_t *variables;   /* name -> int* count */
} bw_program_stats_t;
void bw_program_stats(const bw_program_t *prog, apr_pool_t *pool, bw_program_stats_t *st);

/* ---- transactions ------------------------------------------------------ */

/* What the caller knows about the request before the body. */
typedef struct bw_request_s {
    bw_str_t request_line;
    bw_str_t method;
    bw_str_t uri;             /* request-target as sent */
    bw_str_t protocol;        /* "HTTP/1.1" */
    apr_array_header_t *headers;   /* of bw_kv_t, in order */
    bw_str_t remote_addr;
    int remote_port;
    bw_str_t server_addr;
    int server_port;
    bw_str_t server_name;     /* Host / ServerName, for [hostname] */
    bw_str_t unique_id;
    bw_str_t remote_user;
    bw_str_t auth_type;
    bw_str_t request_filename; /* httpd's r->filename when known, else empty */
    apr_time_t start;
} bw_request_t;

typedef struct bw_response_s {
    int status;
    bw_str_t protocol;
    bw_str_t status_line;
    apr_array_header_t *headers;   /* of bw_kv_t */
} bw_response_t;

/* A disruptive decision. */
typedef enum {
    BW_DISP_NONE = 0,     /* go on */
    BW_DISP_DENY,         /* answer with status */
    BW_DISP_DROP,         /* close the connection */
    BW_DISP_REDIRECT,     /* status + url */
    BW_DISP_PROXY,        /* forward the request to url (mod_proxy), phases 1-2 */
    BW_DISP_ALLOW         /* informational: allow decided, go on */
} bw_disposition_t;

typedef struct bw_intervention_s {
    bw_disposition_t disposition;
    int status;
    const char *url;
    const bw_rule_t *rule;
    int phase;
} bw_intervention_t;

/* One logged rule match, handed to the logger callback. */
typedef struct bw_alert_s {
    const bw_rule_t *rule;
    int phase;
    const char *prefix;       /* "Warning." or "Access denied with code 403 (phase 2)." */
    const char *op_msg;       /* operator's message */
    const char *file;
    int line;
    const char *id;           /* may be NULL */
    const char *rev, *ver, *msg, *data;
    int severity;             /* -1 none */
    int maturity, accuracy;   /* -1 none */
    const apr_array_header_t *tags;  /* of const char* */
    int is_disruptive;        /* interception happened */
    int noauditlog;
} bw_alert_t;

typedef struct bw_callbacks_s {
    void *baton;
    /* A rule match that logs. */
    void (*alert)(void *baton, bw_tx_t *tx, const bw_alert_t *alert);
    /* An engine error or warning tied to the transaction (PCRE limit hit,
     * a run-time operator error…). level: 0 error, 1 warning, 2 notice,
     * 3 debug (what an exec program wrote). */
    void (*message)(void *baton, bw_tx_t *tx, int level, const char *text);
} bw_callbacks_t;

bw_tx_t *bw_tx_create(apr_pool_t *pool, const bw_program_t *prog,
                      const bw_request_t *req, const bw_callbacks_t *cb);

/* Switch to another program (a <Location> merged after phase 1). */
void bw_tx_set_program(bw_tx_t *tx, const bw_program_t *prog);

/* Environment variables visible as ENV (and written by setenv). The caller's
 * table: httpd passes r->subprocess_env. */
void bw_tx_set_env(bw_tx_t *tx, apr_table_t *env);
/* Who the server authenticated (REMOTE_USER, AUTH_TYPE): known only after
 * httpd's authentication, so the glue hands it over before phase 2 (phase 1
 * runs before it, as in mod_security2). NULL leaves a value unset. */
void bw_tx_set_identity(bw_tx_t *tx, const char *remote_user, const char *auth_type);

/* Request body, in chunks, then end. The processor (URLENCODED, MULTIPART,
 * JSON, XML) is fixed by the first chunk: phase 1 and its ctl: actions must
 * have run. MULTIPART, JSON and XML are fed chunk by chunk as data arrives;
 * a copy is kept only where ModSecurity needs the whole body (URLENCODED,
 * ctl:forceRequestBodyVariable: REQUEST_BODY and FULL_REQUEST), unless the
 * caller did not call bw_tx_request_body_external(). append returns 0, or
 * -1 when a limit was hit: stop feeding; the rest is not inspected, and
 * bw_tx_request_body_rejected() says whether to refuse the request. */
int bw_tx_request_body_append(bw_tx_t *tx, const char *data, apr_size_t len);
void bw_tx_request_body_end(bw_tx_t *tx);
/* The caller keeps the raw body itself (the httpd glue replays it to the
 * backend): the engine then holds no copy it does not need. Without this
 * call it keeps the whole body (within the limits) for the CLI's audit
 * record. Call before the first chunk. */
void bw_tx_request_body_external(bw_tx_t *tx);
/* The body's announced length (Content-Length), before any chunk: returns
 * 413 when it is over SecRequestBodyLimit and the request is to be refused
 * without reading it (SecRequestBodyLimitAction Reject, engine On), else 0. */
int bw_tx_request_body_expect(bw_tx_t *tx, apr_int64_t length);
/* The status to answer with when the request body is refused, or 0: past
 * SecRequestBodyLimit with SecRequestBodyLimitAction Reject, or past
 * SecRequestBodyNoFilesLimit (whatever the action, as in mod_security2).
 * DetectionOnly never refuses: it inspects what fits. */
int bw_tx_request_body_rejected(const bw_tx_t *tx);
/* The limit the body went past ("SecRequestBodyLimit" or
 * "SecRequestBodyNoFilesLimit") with its value, and whether Content-Length
 * announced it; NULL when no limit was hit. */
const char *bw_tx_request_body_limit(const bw_tx_t *tx, apr_int64_t *value, int *announced);
/* Multipart file parts the processor stored (SecUploadDir, else SecTmpDir;
 * only when SecUploadKeepFiles or SecTmpSaveUploadedFiles asks): once the
 * transaction is over, keep them (SecUploadKeepFiles On, or RelevantOnly
 * and a rule logged a match) or remove them. Idempotent; the glue calls it
 * from a request pool cleanup. */
void bw_tx_finish_uploads(bw_tx_t *tx);

void bw_tx_set_response(bw_tx_t *tx, const bw_response_t *res);

/* The streams @rsub edits (BW_STREAM_IN: STREAM_INPUT_BODY, with
 * SecStreamInBodyInspection On; BW_STREAM_OUT: STREAM_OUTPUT_BODY, with
 * SecStreamOutBodyInspection On and the response body buffered). The glue
 * keeps the raw request body, so it lends it here before phase 2 (the bytes
 * must live as long as the transaction); the response body the engine
 * buffered itself becomes the output stream when phase 4 starts. */
#define BW_STREAM_IN  0
#define BW_STREAM_OUT 1
int bw_tx_stream_inspection(const bw_tx_t *tx, int which);
void bw_tx_set_stream(bw_tx_t *tx, int which, bw_str_t body);
/* 1 and *body when a rule rewrote the stream: what must go on instead of
 * the original (to the backend, to the client). */
int bw_tx_stream_changed(const bw_tx_t *tx, int which, bw_str_t *body);
int bw_tx_response_body_append(bw_tx_t *tx, const char *data, apr_size_t len);
/* Should the response body be buffered and inspected (phase 4)? */
int bw_tx_wants_response_body(bw_tx_t *tx, const char *content_type);

/* SecHashEngine On: the buffered response body with the links that
 * SecHashMethodRx/Pm select signed, when it is complete and text/html.
 * Returns how many links were signed; *out is the body to send (the
 * buffered one when 0). */
int bw_tx_hash_response_body(bw_tx_t *tx, const char *content_type, bw_str_t *out);
/* SecHashEngine On: the Location header with its signature (HashLocation),
 * or NULL when it is kept as it is. */
const char *bw_tx_hash_location(bw_tx_t *tx, const char *location);

/* Run one phase. Returns 1 and fills *iv when the transaction must be
 * disrupted, else 0. Phases already run, or skipped by allow, return 0. */
int bw_tx_run_phase(bw_tx_t *tx, int phase, bw_intervention_t *iv);

/* Effective rule engine mode for this transaction (after ctl:ruleEngine). */
int bw_tx_engine_mode(const bw_tx_t *tx);
int bw_tx_request_body_access(const bw_tx_t *tx);

/* Results, for `bulwark eval` and the audit log. */
typedef struct bw_match_record_s {
    const bw_rule_t *rule;
    const char *id, *msg, *data;
    int severity;
    const apr_array_header_t *tags;
    int phase;
    const char *op_msg;
} bw_match_record_t;
const apr_array_header_t *bw_tx_matches(const bw_tx_t *tx);   /* of bw_match_record_t */
/* What the executor did, for `bulwark bench`. */
typedef struct bw_tx_stats_s {
    unsigned long rules;          /* rule links evaluated */
    unsigned long rules_skipped;  /* links the scan ruled out without looking at a value */
    unsigned long op_runs;        /* operator runs (one per link and value looked at) */
    unsigned long confirms;       /* of those, runs that confirmed a scan hit */
    unsigned long scans;          /* values scanned by a multi-pattern matcher */
    unsigned long bytes_scanned;
    unsigned long scan_calls;     /* matcher scans run (values are joined: fewer than scans) */
} bw_tx_stats_t;
const bw_tx_stats_t *bw_tx_stats(const bw_tx_t *tx);

/* ---- collection stores (run/bw_store.c) ---------------------------------- */

/* An open collection store (SecCollectionBackend): what initcol reads and
 * setvar writes on IP, SESSION, USER, GLOBAL and RESOURCE. */
typedef struct bw_store_s bw_store_t;

/* Bytes of shared memory the store of settings s needs: the shm backend's
 * block, 0 for the others. */
apr_size_t bw_store_shm_size(const bw_settings_t *s);
/* Open the store s names. For shm, base[0..size) is the block every
 * worker maps (the glue's: made before the workers fork, kept across
 * graceful restarts; a block already laid out with the same geometry is
 * adopted with its records, *adopted says so), or NULL for memory of this
 * process taken from pool (the CLI, tests). Redis connects lazily, in
 * each process that uses it. NULL and *err when it cannot be opened. */
bw_store_t *bw_store_open(apr_pool_t *pool, const bw_settings_t *s, void *base, apr_size_t size,
                          int *adopted, char **err);
/* "shm 32 MB, 32768 records of 1024 bytes", "redis 127.0.0.1:6379 db 0"... */
const char *bw_store_describe(const bw_store_t *st);
/* Where this transaction's persistent collections live. Without a store
 * a transaction uses files under SecDataDir (the file backend). */
void bw_tx_set_store(bw_tx_t *tx, bw_store_t *st);

/* ---- live counters (base/bw_metrics.h, run/bw_tx_metrics.c) --------------- */

typedef struct bw_metrics_s bw_metrics_t;
/* Count this transaction in m (the block every worker shares): per rule
 * evaluations, matches and blocks, per phase and per transaction totals,
 * added when the transaction's pool goes. sample N > 0: the rules of one
 * transaction in N of this thread are timed (0: never). */
void bw_tx_set_metrics(bw_tx_t *tx, bw_metrics_t *m, int sample);
/* Register the rule ids of prog in m, in the program's order (so that a
 * transaction's counters sit side by side); done at start-up. */
void bw_metrics_register_program(bw_metrics_t *m, const bw_program_t *prog);

/* TX collection entries (name, value) for the report. */
void bw_tx_collection_dump(const bw_tx_t *tx, const char *collection, apr_array_header_t *out);

/* Rule accessors for the glue. */
const char *bw_rule_file(const bw_rule_t *r);
int bw_rule_line(const bw_rule_t *r);
long bw_rule_id(const bw_rule_t *r);
/* Does a match of r log (log, or nothing said)? nolog rules are set-up,
 * counters and chains' helpers rather than detections. */
int bw_rule_logs(const bw_rule_t *r);

/* Format an alert as ModSecurity's error-log text (without the httpd prefix):
 *   ModSecurity: Warning. <op msg> [file "…"] [line "…"] [id "…"] … [uri "…"] [unique_id "…"] */
const char *bw_alert_format(apr_pool_t *p, const bw_tx_t *tx, const bw_alert_t *a);

/* Severity number to the name ModSecurity logs ("CRITICAL"…). */
const char *bw_severity_name(int severity);

#endif /* BW_ENGINE_H */
