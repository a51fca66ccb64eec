/*
 * Audit log records, engine side: ModSecurity 2.9's audit log in its two
 * formats (Native "--boundary-A--" sections and one-line JSON), which
 * transactions are logged (SecAuditEngine, SecAuditLogRelevantStatus,
 * ctl:auditEngine), which parts (SecAuditLogParts, ctl:auditLogParts),
 * sanitisation (sanitiseArg, sanitiseMatched…), the file names and index
 * lines of SecAuditLogType Concurrent, and reading records back for
 * `bulwark log`.
 *
 * No httpd headers here: the writer (bw_httpd_audit.c) hands in what only
 * the server knows at logging time in a bw_audit_final_t and does the I/O.
 */
#ifndef BW_AUDIT_H
#define BW_AUDIT_H

#include "bw_engine.h"

/* Values of bw_settings_t audit_engine / audit_type / audit_format. */
enum { BW_AUDIT_OFF = 0, BW_AUDIT_ON = 1, BW_AUDIT_RELEVANT_ONLY = 2 };
enum { BW_AUDIT_SERIAL = 0, BW_AUDIT_CONCURRENT = 1 };
enum { BW_AUDIT_NATIVE = 0, BW_AUDIT_JSON = 1 };

/* What the server knows at logging time. Fields left zero / NULL fall back
 * to what the engine saw (phase 3 response, its own copy of the body). */
typedef struct bw_audit_final_s {
    int status;                          /* final status; 0: the engine's */
    bw_str_t protocol;                   /* response protocol, "HTTP/1.1" */
    bw_str_t status_line;                /* "403 Forbidden" (no protocol) */
    const apr_array_header_t *headers;   /* final response headers, bw_kv_t */
    bw_str_t request_body;               /* raw body as received (part C) */
    const char *handler;                 /* "proxy-server" (Apache-Handler) */
    const char *server;                  /* server banner (Server:) */
    apr_off_t bytes_sent;                /* for the Concurrent index line */
    apr_time_t end;                      /* 0: now */
    const char *boundary;                /* Native boundary; NULL: random */
} bw_audit_final_t;

/* The SecAuditLog and SecAuditLog2 targets a context sets itself (not
 * inherited), appended to out (const char*): the writer opens them all at
 * start-up, before the server drops its privileges. */
void bw_audit_config_logs(const bw_config_t *cfg, apr_array_header_t *out);

/* The settings in force for tx (after <Location> merging). */
const bw_settings_t *bw_audit_settings(const bw_tx_t *tx);

/* Should tx be written? SecAuditEngine On: yes; RelevantOnly: when a rule
 * match went to the audit log (not noauditlog) or status matches
 * SecAuditLogRelevantStatus; Off, or the rule engine off: no. */
int bw_audit_wanted(const bw_tx_t *tx, int status);

/* The parts that will be written, in record order, A and Z always. */
const char *bw_audit_parts(apr_pool_t *p, const bw_tx_t *tx);

/* The whole record in the configured format (or `format` when >= 0),
 * ready for one write(2): Native ends with its Z boundary and a blank
 * line, JSON with a newline. */
bw_str_t bw_audit_record(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_final_t *fin,
                         int format);

/* Concurrent mode: the record's file, relative to SecAuditLogStorageDir:
 * "/YYYYMMDD/YYYYMMDD-HHMM/YYYYMMDD-HHMMSS-UNIQUEID" (request start,
 * local time). *dir gets the directory part. */
const char *bw_audit_file_name(apr_pool_t *p, const bw_tx_t *tx, const char **dir);

/* Concurrent mode: the index line appended to SecAuditLog for a record
 * written to file_name (size bytes, MD5 digest md5), newline included. */
const char *bw_audit_index_line(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_final_t *fin,
                                const char *file_name, apr_size_t size,
                                const unsigned char md5[16]);

/* ---- reading records back (bulwark log, tests) ------------------------- */

typedef struct bw_audit_entry_s {
    int format;                   /* BW_AUDIT_NATIVE or BW_AUDIT_JSON */
    bw_str_t raw;                 /* the record as it stands in the input */
    apr_time_t time;              /* 0 when unknown */
    const char *unique_id, *client, *request_line, *method, *uri;
    int client_port;
    int status;                   /* -1 when the record has no response part */
    apr_array_header_t *rule_ids; /* const char*: [id "…"] of messages, matched rules */
    apr_array_header_t *messages; /* const char*: part H Message: / audit_data.messages */
} bw_audit_entry_t;

typedef struct bw_audit_reader_s bw_audit_reader_t;

/* A reader over text (a whole file). format: BW_AUDIT_NATIVE, BW_AUDIT_JSON,
 * or -1 to tell from the first record. */
bw_audit_reader_t *bw_audit_reader_create(apr_pool_t *p, bw_str_t text, int format);

/* The next record: 1 and *e filled; 0 at the end; -1 when a record is
 * broken (cut, interleaved, not JSON): *err says why and reading can go on
 * with the next call. Strings live in p. */
int bw_audit_reader_next(bw_audit_reader_t *rd, apr_pool_t *p, bw_audit_entry_t *e,
                         const char **err);

/* "22/Nov/2026:16:01:28.795459 +0000" (with or without the fraction) to
 * apr_time_t; 0 when malformed. */
apr_time_t bw_audit_parse_time(bw_str_t s);

#endif /* BW_AUDIT_H */
