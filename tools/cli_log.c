/*
 * bulwark log — what an operator reaches for when tuning false positives:
 * read audit logs (Native or JSON, told apart by the first record, from
 * Bulwark or mod_security2; a directory is read as a Concurrent-mode
 * storage tree), keep the records that match every filter given, and print
 * a compact table or the records as JSON, one per line.
 *
 * Text from the log is request data: the table escapes control bytes so a
 * logged request cannot write to the operator's terminal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <time.h>
#include <apr_file_info.h>
#include <apr_network_io.h>
#include "cli.h"
#include "cli_log.h"
#include "audit/bw_audit.h"

typedef struct {
    int format;                    /* -1 auto */
    apr_array_header_t *ids;       /* const char* */
    apr_array_header_t *statuses;  /* int */
    apr_array_header_t *clients;   /* apr_ipsubnet_t* */
    apr_time_t since, until;       /* 0: unbounded */
    int json;
    int top;                       /* --top: counts by rule, path, client instead of records */
    apr_pool_t *keep;              /* where --top's keys live (the whole run) */
    apr_hash_t *by_rule, *by_path, *by_client;   /* key -> uint64_t count */
    int printed, broken, header_done;
    int unusable;                  /* an input that is not an audit log */
} log_opts_t;

static void log_usage(FILE *out)
{
    fprintf(out,
            "Usage: bulwark log [OPTION]... FILE...\n"
            "Read ModSecurity-format audit logs (Native or JSON, detected from the first record;\n"
            "a directory is read as a SecAuditLogStorageDir tree, '-' is standard input) and print\n"
            "the records that match every filter: a table (time, unique id, client, status,\n"
            "request, rule ids) or, with --json, one JSON record per line.\n\n"
            "  --format native|json  read the input as this format instead of detecting it\n"
            "  --id RULEID           records with a message or matched rule of this id\n"
            "  --status N            records whose response status is N\n"
            "  --client IP[/BITS]    records from this client address or network\n"
            "  --since T             records at or after T\n"
            "  --until T             records before T\n"
            "  --json                print JSON records, one per line (Native records are\n"
            "                        converted: summary fields plus the record as text)\n"
            "  --top                 instead of the records, the 10 rule ids, paths and clients\n"
            "                        found in most of them, with how many\n"
            "  -h, --help            show this help and exit\n\n"
            "--id, --status and --client may be repeated (any of them matches).\n"
            "T is YYYY-MM-DD, YYYY-MM-DD[T ]HH:MM[:SS] (local time; a trailing Z means UTC),\n"
            "@EPOCH_SECONDS, or ModSecurity's 22/Nov/2026:16:01:28 +0000.\n\n"
            "Exit status: 0 if a record was printed, 1 if none matched, 2 on a usage error or\n"
            "an unreadable input. Broken records (cut or interleaved) are reported on stderr.\n"
            "Example: bulwark log --id 942100 --since 2026-11-22 /var/log/apache2/modsec_audit.log\n");
}

static int digits(const char *s, int n)
{
    int v = 0, i;
    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* See --help for the accepted forms; 0 when none fits. */
static apr_time_t parse_when(const char *s)
{
    apr_time_exp_t xt;
    apr_time_t t;
    size_t n = strlen(s);
    int utc = n && (s[n - 1] == 'Z' || s[n - 1] == 'z');
    if (s[0] == '@' && n > 1) {
        char *end;
        long long v = strtoll(s + 1, &end, 10);
        return *end ? 0 : apr_time_from_sec(v);
    }
    if (n >= 20 && s[2] == '/')
        return bw_audit_parse_time(bw_str_make(s));
    memset(&xt, 0, sizeof(xt));
    if (utc)
        n--;
    if (n < 10 || s[4] != '-' || s[7] != '-')
        return 0;
    xt.tm_year = digits(s, 4) - 1900;
    xt.tm_mon = digits(s + 5, 2) - 1;
    xt.tm_mday = digits(s + 8, 2);
    if (n >= 16 && (s[10] == 'T' || s[10] == ' ') && s[13] == ':') {
        xt.tm_hour = digits(s + 11, 2);
        xt.tm_min = digits(s + 14, 2);
        if (n >= 19 && s[16] == ':')
            xt.tm_sec = digits(s + 17, 2);
        else if (n != 16)
            return 0;
    } else if (n != 10) {
        return 0;
    }
    if (xt.tm_year < 0 || xt.tm_mon < 0 || xt.tm_mon > 11 || xt.tm_mday < 1 || xt.tm_hour < 0
        || xt.tm_min < 0 || xt.tm_sec < 0)
        return 0;
    if (utc)
        return apr_time_exp_gmt_get(&t, &xt) == APR_SUCCESS ? t : 0;
    /* local time: let the C library find the offset in force that day */
    {
        struct tm tmv;
        time_t secs;
        memset(&tmv, 0, sizeof(tmv));
        tmv.tm_year = xt.tm_year;
        tmv.tm_mon = xt.tm_mon;
        tmv.tm_mday = xt.tm_mday;
        tmv.tm_hour = xt.tm_hour;
        tmv.tm_min = xt.tm_min;
        tmv.tm_sec = xt.tm_sec;
        tmv.tm_isdst = -1;
        secs = mktime(&tmv);
        return secs == (time_t)-1 ? 0 : apr_time_from_sec(secs);
    }
}

static int add_client(apr_pool_t *p, log_opts_t *o, const char *arg)
{
    apr_ipsubnet_t *sn = NULL;
    const char *slash = strchr(arg, '/');
    char *ip = slash ? apr_pstrndup(p, arg, (apr_size_t)(slash - arg)) : apr_pstrdup(p, arg);
    if (apr_ipsubnet_create(&sn, ip, slash ? slash + 1 : NULL, p) != APR_SUCCESS)
        return -1;
    *(apr_ipsubnet_t **)apr_array_push(o->clients) = sn;
    return 0;
}

static int client_matches(apr_pool_t *p, const log_opts_t *o, const char *client)
{
    apr_sockaddr_t *sa;
    int i;
    if (!o->clients->nelts)
        return 1;
    if (!client || apr_sockaddr_info_get(&sa, client, APR_UNSPEC, 0, APR_IPV4_ADDR_OK, p) != APR_SUCCESS)
        return 0;
    for (i = 0; i < o->clients->nelts; i++)
        if (apr_ipsubnet_test(((apr_ipsubnet_t **)o->clients->elts)[i], sa))
            return 1;
    return 0;
}

static int entry_matches(apr_pool_t *p, const log_opts_t *o, const bw_audit_entry_t *e)
{
    int i, j, ok;
    if (o->since && (!e->time || e->time < o->since))
        return 0;
    if (o->until && (!e->time || e->time >= o->until))
        return 0;
    if (o->statuses->nelts) {
        for (ok = 0, i = 0; i < o->statuses->nelts && !ok; i++)
            ok = ((int *)o->statuses->elts)[i] == e->status;
        if (!ok)
            return 0;
    }
    if (o->ids->nelts) {
        for (ok = 0, i = 0; i < o->ids->nelts && !ok; i++)
            for (j = 0; j < e->rule_ids->nelts && !ok; j++)
                ok = !strcmp(((const char **)o->ids->elts)[i], ((const char **)e->rule_ids->elts)[j]);
        if (!ok)
            return 0;
    }
    return client_matches(p, o, e->client);
}

/* Printable text of at most max columns: control bytes as \xHH, cut with "...". */
static void put_cell(FILE *out, const char *s, int width, int max, int last)
{
    int n = 0;
    const unsigned char *c = (const unsigned char *)(s ? s : "-");
    for (; *c && n < max; c++) {
        if (*c < 0x20 || *c == 0x7f) {
            n += fprintf(out, "\\x%02x", *c);
        } else {
            fputc(*c, out);
            n++;
        }
    }
    if (*c) {
        fputs("...", out);
        n += 3;
    }
    if (!last)
        for (fputc(' ', out), n++; n < width + 1; n++)
            fputc(' ', out);
}

static void print_row(apr_pool_t *p, log_opts_t *o, const bw_audit_entry_t *e)
{
    char when[32] = "-";
    const char *req = e->method && e->uri ? apr_pstrcat(p, e->method, " ", e->uri, NULL) : e->request_line;
    const char *ids = e->rule_ids->nelts ? apr_array_pstrcat(p, e->rule_ids, ',') : "-";
    char status[16];
    if (!o->header_done) {
        printf("%-19s  %-27s  %-15s  %-6s  %-50s  %s\n", "TIME", "UNIQUE_ID", "CLIENT", "STATUS",
               "REQUEST", "RULES");
        o->header_done = 1;
    }
    if (e->time) {
        apr_time_exp_t xt;
        apr_size_t n;
        apr_time_exp_lt(&xt, e->time);
        apr_strftime(when, &n, sizeof when, "%Y-%m-%d %H:%M:%S", &xt);
    }
    apr_snprintf(status, sizeof status, e->status >= 0 ? "%d" : "-", e->status);
    put_cell(stdout, when, 20, 19, 0);
    put_cell(stdout, e->unique_id, 28, 40, 0);
    put_cell(stdout, e->client, 16, 39, 0);
    put_cell(stdout, status, 7, 6, 0);
    put_cell(stdout, req, 51, 47, 0);
    put_cell(stdout, ids, 0, 200, 1);
    fputc('\n', stdout);
}

static void print_json(const bw_audit_entry_t *e)
{
    int i;
    if (e->format == BW_AUDIT_JSON) {
        bw_str_t r = e->raw;
        while (r.len && (r.data[r.len - 1] == '\n' || r.data[r.len - 1] == '\r'))
            r.len--;
        fwrite(r.data, 1, r.len, stdout);
        fputc('\n', stdout);
        return;
    }
    fputs("{\"transaction\":{\"time_epoch_us\":", stdout);
    printf("%" APR_TIME_T_FMT ",\"transaction_id\":", e->time);
    bw_cli_json_str(stdout, bw_str_make(e->unique_id ? e->unique_id : ""));
    fputs(",\"remote_address\":", stdout);
    bw_cli_json_str(stdout, bw_str_make(e->client ? e->client : ""));
    printf(",\"remote_port\":%d},\"request\":{\"request_line\":", e->client_port);
    bw_cli_json_str(stdout, bw_str_make(e->request_line ? e->request_line : ""));
    printf("},\"response\":{\"status\":%d},\"audit_data\":{\"messages\":[", e->status);
    for (i = 0; i < e->messages->nelts; i++) {
        if (i)
            fputc(',', stdout);
        bw_cli_json_str(stdout, bw_str_make(((const char **)e->messages->elts)[i]));
    }
    fputs("]},\"native_record\":", stdout);
    bw_cli_json_str(stdout, e->raw);
    fputs("}\n", stdout);
}

/* A Concurrent-mode index line: "host client - - [time] "…" … md5:HEX". */
static int looks_like_index(bw_str_t text)
{
    const char *nl = memchr(text.data, '\n', text.len);
    size_t n = nl ? (size_t)(nl - text.data) : text.len;
    return n > 40 && text.data[0] != '-' && text.data[0] != '{' && bw_memmem(text.data, n, "] \"", 3)
           && bw_memmem(text.data, n, " md5:", 5);
}

/* One more record for key in h (keys copied into o->keep). */
static void tally(log_opts_t *o, apr_hash_t *h, const char *key, size_t n)
{
    uint64_t *c = apr_hash_get(h, key, (apr_ssize_t)n);
    if (!c) {
        c = apr_pcalloc(o->keep, sizeof(*c));
        apr_hash_set(h, apr_pstrmemdup(o->keep, key, n), (apr_ssize_t)n, c);
    }
    (*c)++;
}

static void tally_entry(log_opts_t *o, const bw_audit_entry_t *e)
{
    const char *uri = e->uri ? e->uri : "-", *client = e->client ? e->client : "-";
    int i, j;
    for (i = 0; i < e->rule_ids->nelts; i++) {
        const char *id = ((const char **)e->rule_ids->elts)[i];
        for (j = 0; j < i && strcmp(id, ((const char **)e->rule_ids->elts)[j]); j++)
            ;
        if (j == i)     /* a rule counts once per record */
            tally(o, o->by_rule, id, strlen(id));
    }
    tally(o, o->by_path, uri, strcspn(uri, "?"));
    tally(o, o->by_client, client, strlen(client));
}

typedef struct {
    const char *key;
    uint64_t n;
} count_t;

static int by_count(const void *a, const void *b)
{
    const count_t *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->key, y->key);
}

static void print_top(apr_pool_t *p, const char *title, apr_hash_t *h)
{
    count_t *all = apr_palloc(p, sizeof(*all) * (size_t)(apr_hash_count(h) + 1));
    apr_hash_index_t *hi;
    int n = 0, i;
    for (hi = apr_hash_first(p, h); hi; hi = apr_hash_next(hi)) {
        const void *k;
        void *v;
        apr_hash_this(hi, &k, NULL, &v);
        all[n].key = k;
        all[n++].n = *(uint64_t *)v;
    }
    qsort(all, (size_t)n, sizeof(*all), by_count);
    printf("%-50s  %s\n", title, "RECORDS");
    for (i = 0; i < n && i < 10; i++) {
        put_cell(stdout, all[i].key, 51, 50, 0);
        printf("%" APR_UINT64_T_FMT "\n", all[i].n);
    }
}

static void read_text(apr_pool_t *pool, log_opts_t *o, const char *name, bw_str_t text)
{
    bw_audit_reader_t *rd = bw_audit_reader_create(pool, text, o->format);
    apr_pool_t *p;
    int n = 0, rc;
    if (o->format < 0 && looks_like_index(text)) {
        fprintf(stderr, "bulwark log: %s looks like a SecAuditLogType Concurrent index: "
                        "give the SecAuditLogStorageDir directory instead\n", name);
        o->unusable = 1;
        return;
    }
    apr_pool_create(&p, pool);
    for (;;) {
        bw_audit_entry_t e;
        const char *err = NULL;
        apr_pool_clear(p);
        rc = bw_audit_reader_next(rd, p, &e, &err);
        if (rc == 0)
            break;
        n++;
        if (rc < 0) {
            fprintf(stderr, "bulwark log: %s: record %d: %s\n", name, n, err ? err : "broken record");
            o->broken++;
            continue;
        }
        if (!entry_matches(p, o, &e))
            continue;
        if (o->top)
            tally_entry(o, &e);
        else if (o->json)
            print_json(&e);
        else
            print_row(p, o, &e);
        o->printed++;
    }
    apr_pool_destroy(p);
}

static int read_path(apr_pool_t *pool, log_opts_t *o, const char *path);

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A Concurrent-mode storage tree: every regular file, in name order. */
static int read_dir(apr_pool_t *pool, log_opts_t *o, const char *path)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_array_header_t *names = apr_array_make(pool, 16, sizeof(char *));
    int i, rc = 0;
    if (apr_dir_open(&d, path, pool) != APR_SUCCESS) {
        fprintf(stderr, "bulwark log: %s: cannot open directory\n", path);
        return 2;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        if (!strcmp(fi.name, ".") || !strcmp(fi.name, ".."))
            continue;
        *(const char **)apr_array_push(names) = apr_pstrcat(pool, path, "/", fi.name, NULL);
    }
    apr_dir_close(d);
    qsort(names->elts, (size_t)names->nelts, sizeof(char *), by_name);
    for (i = 0; i < names->nelts; i++)
        if (read_path(pool, o, ((const char **)names->elts)[i]) == 2)
            rc = 2;
    return rc;
}

static int read_path(apr_pool_t *pool, log_opts_t *o, const char *path)
{
    apr_finfo_t fi;
    apr_pool_t *p;
    bw_str_t *text;
    char *err = NULL;
    int rc = 0;
    if (strcmp(path, "-") && apr_stat(&fi, path, APR_FINFO_TYPE, pool) == APR_SUCCESS && fi.filetype == APR_DIR)
        return read_dir(pool, o, path);
    apr_pool_create(&p, pool);
    text = bw_cli_read_all(p, path, &err);
    if (!text) {
        fprintf(stderr, "bulwark log: %s\n", err);
        rc = 2;
    } else {
        read_text(p, o, path, *text);
    }
    apr_pool_destroy(p);
    return rc;
}

/* Options; returns the index of the first FILE, or -1 (message printed). */
static int parse_opts(apr_pool_t *pool, log_opts_t *o, int argc, const char *const *argv)
{
    int i;
    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            return i + 1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
            continue;
        } else if (!strcmp(a, "--top")) {
            o->top = 1;
            continue;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            log_usage(stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "bulwark log: option %s needs a value\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--format") && (!strcmp(v, "native") || !strcmp(v, "json"))) {
            o->format = !strcmp(v, "json") ? BW_AUDIT_JSON : BW_AUDIT_NATIVE;
        } else if (!strcmp(a, "--id") && *v) {
            *(const char **)apr_array_push(o->ids) = v;
        } else if (!strcmp(a, "--status") && atoi(v) > 0) {
            *(int *)apr_array_push(o->statuses) = atoi(v);
        } else if (!strcmp(a, "--client") && add_client(pool, o, v) == 0) {
            continue;
        } else if (!strcmp(a, "--since") && (o->since = parse_when(v)) != 0) {
            continue;
        } else if (!strcmp(a, "--until") && (o->until = parse_when(v)) != 0) {
            continue;
        } else {
            fprintf(stderr, "bulwark log: invalid option or value: %s %s\n", a, v);
            return -1;
        }
    }
    return i;
}

int bw_cli_log(apr_pool_t *pool, int argc, const char *const *argv)
{
    log_opts_t o;
    int first, i, rc = 0;
    memset(&o, 0, sizeof(o));
    o.format = -1;
    o.ids = apr_array_make(pool, 2, sizeof(char *));
    o.statuses = apr_array_make(pool, 2, sizeof(int));
    o.clients = apr_array_make(pool, 2, sizeof(apr_ipsubnet_t *));
    o.keep = pool;
    o.by_rule = apr_hash_make(pool);
    o.by_path = apr_hash_make(pool);
    o.by_client = apr_hash_make(pool);
    first = parse_opts(pool, &o, argc, argv);
    if (first < 0) {
        fprintf(stderr, "Try 'bulwark log --help' for more information.\n");
        return 2;
    }
    if (first >= argc) {
        fprintf(stderr, "bulwark log: no FILE given (use '-' for standard input)\n");
        fprintf(stderr, "Try 'bulwark log --help' for more information.\n");
        return 2;
    }
    for (i = first; i < argc; i++)
        if (read_path(pool, &o, argv[i]) == 2)
            rc = 2;
    if (o.top && o.printed) {
        print_top(pool, "RULE", o.by_rule);
        printf("\n");
        print_top(pool, "PATH", o.by_path);
        printf("\n");
        print_top(pool, "CLIENT", o.by_client);
    }
    fflush(stdout);
    if (rc || o.unusable)
        return 2;
    return o.printed ? 0 : 1;
}
