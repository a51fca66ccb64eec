/*
 * The audit log writer (httpd side): opens the logs, writes records.
 *
 * Whole records, never interleaved, without one lock serialising every
 * worker: the engine builds a record in one buffer, and here it goes out
 * with a single write(2) —
 *   - Serial, regular file: opened O_APPEND in post_config (as root, before
 *     the children drop privileges); an O_APPEND write is atomic against
 *     other appends on Linux local filesystems, so no lock at all.
 *   - Pipe ("|/usr/bin/rotatelogs …", ap_open_piped_log): writes longer
 *     than PIPE_BUF may interleave, so the write holds a cross-process
 *     apr_global_mutex for exactly that one write(2).
 *   - Concurrent: each record in its own file under SecAuditLogStorageDir
 *     (O_EXCL, SecAuditLogFileMode; directories SecAuditLogDirMode), then
 *     one index line appended to SecAuditLog as above.
 * SecAuditLog2 is a second index: Concurrent mode appends each index line
 * to it too; in Serial mode it is not written (both as mod_security2 2.9.7).
 *
 * The open logs live in the configuration pool's user data (they are
 * reopened on every restart with the configuration), not in a global.
 * A log named only inside a section the start-up walk does not see
 * (<Files>, <If>) is opened on first use by the child, if it can.
 */
#include <errno.h>
#include <unistd.h>
#include "apr_strings.h"
#include "apr_md5.h"
#include "apr_global_mutex.h"
#include "apr_thread_mutex.h"
#include "unixd.h"
#include "httpd/bw_httpd_audit.h"
#include "audit/bw_audit.h"

#define STATE_KEY "bulwark-audit-state"

typedef struct audit_log_s {
    const char *name;        /* as configured */
    apr_file_t *file;
    int fd;
    int is_pipe;
} audit_log_t;

typedef struct audit_state_s {
    apr_hash_t *logs;                 /* name -> audit_log_t*, read-only after post_config */
    apr_global_mutex_t *pipe_mutex;   /* NULL when no log is a pipe */
    const char *mutex_file;
    /* per child: logs opened on first use */
    apr_pool_t *child_pool;
    apr_thread_mutex_t *lazy_mutex;
    apr_hash_t *lazy;
} audit_state_t;

static audit_state_t *state_of(server_rec *s)
{
    void *st = NULL;
    apr_pool_userdata_get(&st, STATE_KEY, s->process->pconf);
    return st;
}

/* Unix mode bits to APR permission bits (they are not the same numbers). */
static apr_fileperms_t perms(int mode)
{
    static const struct { int unix_bit; apr_fileperms_t apr_bit; } map[] = {
        { 0400, APR_FPROT_UREAD }, { 0200, APR_FPROT_UWRITE }, { 0100, APR_FPROT_UEXECUTE },
        { 040, APR_FPROT_GREAD }, { 020, APR_FPROT_GWRITE }, { 010, APR_FPROT_GEXECUTE },
        { 04, APR_FPROT_WREAD }, { 02, APR_FPROT_WWRITE }, { 01, APR_FPROT_WEXECUTE }
    };
    apr_fileperms_t out = 0;
    size_t i;
    for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (mode & map[i].unix_bit)
            out |= map[i].apr_bit;
    return out;
}

static apr_status_t open_log(apr_pool_t *p, const char *name, audit_log_t **out)
{
    audit_log_t *l = apr_pcalloc(p, sizeof(*l));
    apr_os_file_t fd;
    apr_status_t rv;
    l->name = name;
    if (name[0] == '|') {
        piped_log *pl = ap_open_piped_log(p, name + 1);
        if (!pl)
            return APR_EGENERAL;
        l->file = ap_piped_log_write_fd(pl);
        l->is_pipe = 1;
    } else {
        const char *path = ap_server_root_relative(p, name);
        if (!path)
            return APR_EBADPATH;
        rv = apr_file_open(&l->file, path, APR_FOPEN_WRITE | APR_FOPEN_APPEND | APR_FOPEN_CREATE,
                           perms(0640), p);
        if (rv != APR_SUCCESS)
            return rv;
    }
    apr_os_file_get(&fd, l->file);
    l->fd = fd;
    *out = l;
    return APR_SUCCESS;
}

static void collect_names(apr_pool_t *p, server_rec *s, apr_array_header_t *names)
{
    server_rec *sv;
    for (sv = s; sv; sv = sv->next) {
        core_server_config *core = ap_get_core_module_config(sv->module_config);
        const apr_array_header_t *secs[2];
        const bw_httpd_dircfg_t *d = ap_get_module_config(sv->lookup_defaults, &bulwark_module);
        int k, i;
        if (d)
            bw_audit_config_logs(d->cfg, names);
        secs[0] = core ? core->sec_dir : NULL;
        secs[1] = core ? core->sec_url : NULL;
        for (k = 0; k < 2; k++)
            for (i = 0; secs[k] && i < secs[k]->nelts; i++) {
                ap_conf_vector_t *v = ((ap_conf_vector_t **)secs[k]->elts)[i];
                d = ap_get_module_config(v, &bulwark_module);
                if (d)
                    bw_audit_config_logs(d->cfg, names);
            }
    }
}

static int create_pipe_mutex(apr_pool_t *pconf, server_rec *s, audit_state_t *st)
{
    apr_status_t rv;
    st->mutex_file = ap_runtime_dir_relative(pconf, "bulwark-audit.mutex");
    rv = apr_global_mutex_create(&st->pipe_mutex, st->mutex_file, APR_LOCK_DEFAULT, pconf);
    if (rv == APR_SUCCESS)
        rv = ap_unixd_set_global_mutex_perms(st->pipe_mutex);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "Bulwark: cannot create the audit log pipe mutex");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

int bw_httpd_audit_post_config(apr_pool_t *pconf, apr_pool_t *plog, server_rec *s)
{
    audit_state_t *st = apr_pcalloc(pconf, sizeof(*st));
    apr_array_header_t *names = apr_array_make(pconf, 4, sizeof(const char *));
    int i, pipes = 0;

    st->logs = apr_hash_make(pconf);
    collect_names(pconf, s, names);
    for (i = 0; i < names->nelts; i++) {
        const char *n = ((const char **)names->elts)[i];
        audit_log_t *l;
        apr_status_t rv;
        if (apr_hash_get(st->logs, n, APR_HASH_KEY_STRING))
            continue;
        rv = open_log(pconf, n, &l);
        if (rv != APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "Bulwark: SecAuditLog: cannot open \"%s\"", n);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        pipes += l->is_pipe;
        apr_hash_set(st->logs, n, APR_HASH_KEY_STRING, l);
    }
    if (pipes && create_pipe_mutex(pconf, s, st) != OK)
        return HTTP_INTERNAL_SERVER_ERROR;
    apr_pool_userdata_set(st, STATE_KEY, apr_pool_cleanup_null, pconf);
    return OK;
}

void bw_httpd_audit_child_init(apr_pool_t *p, server_rec *s)
{
    audit_state_t *st = state_of(s);
    apr_status_t rv;
    if (!st)
        return;
    st->child_pool = p;
    st->lazy = apr_hash_make(p);
    apr_thread_mutex_create(&st->lazy_mutex, APR_THREAD_MUTEX_DEFAULT, p);
    if (st->pipe_mutex) {
        rv = apr_global_mutex_child_init(&st->pipe_mutex, st->mutex_file, p);
        if (rv != APR_SUCCESS)
            ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "Bulwark: audit log pipe mutex: child init failed");
    }
}

/* The log named name: opened at start-up, or now (files only). A log that
 * cannot be opened is remembered as such and reported once per child. */
static audit_log_t *find_log(request_rec *r, audit_state_t *st, const char *name)
{
    audit_log_t *l = apr_hash_get(st->logs, name, APR_HASH_KEY_STRING);
    if (l || !st->lazy_mutex || name[0] == '|')
        return l;
    apr_thread_mutex_lock(st->lazy_mutex);
    l = apr_hash_get(st->lazy, name, APR_HASH_KEY_STRING);
    if (!l) {
        apr_status_t rv = open_log(st->child_pool, name, &l);
        if (rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "Bulwark: SecAuditLog: cannot open \"%s\"", name);
            l = apr_pcalloc(st->child_pool, sizeof(*l));
            l->fd = -1;
        }
        apr_hash_set(st->lazy, apr_pstrdup(st->child_pool, name), APR_HASH_KEY_STRING, l);
    }
    apr_thread_mutex_unlock(st->lazy_mutex);
    return l->fd >= 0 ? l : NULL;
}

static apr_status_t write_fd(int fd, const char *data, apr_size_t len)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        data += n;
        len -= (apr_size_t)n;
    }
    return APR_SUCCESS;
}

static void write_log(request_rec *r, audit_state_t *st, const char *name, const char *data, apr_size_t len)
{
    audit_log_t *l = find_log(r, st, name);
    apr_status_t rv;
    if (!l)
        return;
    if (l->is_pipe && st->pipe_mutex) {
        if ((rv = apr_global_mutex_lock(st->pipe_mutex)) != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "Bulwark: audit log pipe mutex");
            return;
        }
        rv = write_fd(l->fd, data, len);
        apr_global_mutex_unlock(st->pipe_mutex);
    } else {
        rv = write_fd(l->fd, data, len);
    }
    if (rv != APR_SUCCESS)
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "Bulwark: cannot write the audit log \"%s\"", name);
}

/* Concurrent mode: the record into its own file; returns the name relative
 * to the storage directory, or NULL (logged). */
static const char *write_record_file(request_rec *r, const bw_settings_t *cfg, bw_tx_t *tx,
                                     bw_str_t rec)
{
    const char *dir, *name = bw_audit_file_name(r->pool, tx, &dir), *path;
    int dmode = cfg->audit_dir_mode, n;
    apr_file_t *f = NULL;
    apr_status_t rv;
    apr_size_t written;
    /* a directory is no use without x where r is granted (the default
     * SecAuditLogDirMode is 0600) */
    dmode |= (dmode & 0444) >> 2;
    rv = apr_dir_make_recursive(apr_pstrcat(r->pool, cfg->audit_storage_dir, dir, NULL), perms(dmode), r->pool);
    if (rv != APR_SUCCESS && !APR_STATUS_IS_EEXIST(rv)) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "Bulwark: cannot create audit log directory %s%s",
                      cfg->audit_storage_dir, dir);
        return NULL;
    }
    for (n = 0; n < 100; n++) {
        const char *cand = n ? apr_psprintf(r->pool, "%s-%d", name, n) : name;
        path = apr_pstrcat(r->pool, cfg->audit_storage_dir, cand, NULL);
        rv = apr_file_open(&f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_EXCL,
                           perms(cfg->audit_file_mode), r->pool);
        if (rv == APR_SUCCESS) {
            name = cand;
            break;
        }
        if (!APR_STATUS_IS_EEXIST(rv))
            break;
    }
    if (rv == APR_SUCCESS)
        rv = apr_file_write_full(f, rec.data, rec.len, &written);
    if (f)
        apr_file_close(f);
    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "Bulwark: cannot write audit record %s%s",
                      cfg->audit_storage_dir, name);
        return NULL;
    }
    return name;
}

static void fill_final(request_rec *r, request_rec *last, bw_httpd_req_t *st, bw_audit_final_t *fin)
{
    memset(fin, 0, sizeof(*fin));
    fin->status = last->status;
    fin->protocol = bw_str_make(bw_httpd_response_protocol());
    fin->status_line = bw_str_make(last->status_line ? last->status_line
                                                     : ap_get_status_line(last->status));
    fin->headers = bw_httpd_response_headers(last);
    /* the whole body as read: memory part and temp file (part C) */
    if (st->body_read && bw_httpd_request_body(r->pool, st, &fin->request_body) != APR_SUCCESS)
        fin->request_body = bw_str_n(st->body ? st->body : "", st->body_len);
    fin->handler = last->handler ? last->handler : r->handler;
    fin->server = ap_get_server_banner();
    fin->bytes_sent = last->bytes_sent ? last->bytes_sent : r->bytes_sent;
    fin->end = apr_time_now();
}

void bw_httpd_audit_transaction(request_rec *r, bw_httpd_req_t *st)
{
    audit_state_t *state;
    const bw_settings_t *cfg;
    request_rec *last = r;
    bw_audit_final_t fin;
    bw_str_t rec;

    if (!st || !st->tx)
        return;
    while (last->next)
        last = last->next;
    if (!bw_audit_wanted(st->tx, last->status))
        return;
    state = state_of(r->server);
    cfg = bw_audit_settings(st->tx);
    if (!state || !cfg->audit_log)
        return;
    fill_final(r, last, st, &fin);
    rec = bw_audit_record(r->pool, st->tx, &fin, -1);
    if (cfg->audit_type == BW_AUDIT_CONCURRENT) {
        unsigned char md5[APR_MD5_DIGESTSIZE];
        const char *name, *line;
        if (!cfg->audit_storage_dir) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                          "Bulwark: SecAuditLogType Concurrent needs SecAuditLogStorageDir");
            return;
        }
        if (!(name = write_record_file(r, cfg, st->tx, rec)))
            return;
        apr_md5(md5, rec.data, rec.len);
        line = bw_audit_index_line(r->pool, st->tx, &fin, name, rec.len, md5);
        rec = bw_str_make(line);
    }
    write_log(r, state, cfg->audit_log, rec.data, rec.len);
    if (cfg->audit_log2 && cfg->audit_type == BW_AUDIT_CONCURRENT)
        write_log(r, state, cfg->audit_log2, rec.data, rec.len);
}
