/*
 * mod_bulwark: the module structure, the directive table and per-directory
 * configuration.
 *
 * Every Sec* directive is RAW_ARGS: httpd has already joined continuation
 * lines, the engine splits words itself (exactly as ap_getword_conf does),
 * so `bulwark check` and Apache read a rule file the same way. A directive's
 * error comes back as a string that httpd prints with the file and line.
 *
 * Configuration merging: a merged per-dir configuration only records its
 * parent and its own context; the rule program for that pair is built once
 * (start-up for servers and <Location>s httpd merges then, first request
 * otherwise) and cached, so requests never copy rule lists.
 */
#define BW_HTTPD_MODULE_FILE
#include "httpd/bw_httpd.h"
#include "apr_thread_mutex.h"
#include "ap_mpm.h"
#include "httpd/bw_httpd_audit.h"

static void *create_dir_config(apr_pool_t *p, char *dir)
{
    bw_httpd_dircfg_t *d = apr_pcalloc(p, sizeof(*d));
    d->cfg = bw_config_create(p);
    apr_pool_create(&d->build_pool, p);
    d->where = dir ? apr_pstrdup(p, dir) : "server";
    return d;
}

static void *merge_dir_config(apr_pool_t *p, void *basev, void *addv)
{
    const bw_httpd_dircfg_t *base = basev, *add = addv;
    bw_httpd_dircfg_t *m = apr_pcalloc(p, sizeof(*m));
    *m = *add;
    m->parent = base;
    return m;
}

/* A cache entry: the program of `cfg` over `parent`. */
typedef struct {
    const bw_program_t *parent;
    const bw_program_t *prog;
} cache_entry_t;

/* Programs are built under the context's mutex, into the context's own
 * build pool, so concurrent first requests never share a pool. */
const bw_program_t *bw_httpd_program(request_rec *r, const bw_httpd_dircfg_t *d, char **err)
{
    const bw_program_t *parent = NULL, *prog = NULL;
    apr_array_header_t *cache;
    int i;

    if (!d)
        return NULL;
    if (d->parent) {
        parent = bw_httpd_program(r, d->parent, err);
        if (!parent)
            return NULL;
    }
    cache = bw_config_cache(d->cfg);
    bw_config_lock(d->cfg);
    for (i = 0; i < cache->nelts; i++) {
        cache_entry_t *e = &((cache_entry_t *)cache->elts)[i];
        if (e->parent == parent) {
            prog = e->prog;
            break;
        }
    }
    if (!prog) {
        prog = bw_program_build(d->build_pool, parent, d->cfg, err);
        if (prog) {
            cache_entry_t *e = apr_array_push(cache);
            e->parent = parent;
            e->prog = prog;
        }
    }
    bw_config_unlock(d->cfg);
    return prog;
}

/* A directive's warnings (SecRemoteRulesFailAction Warn: a download that
 * failed) go to the error log at once; its error stops httpd. */
static const char *cmd_sec(cmd_parms *cmd, void *dv, const char *args)
{
    bw_httpd_dircfg_t *d = dv;
    const apr_array_header_t *warn = bw_config_warnings(d->cfg);
    int i, before = warn->nelts;
    const char *err;
    /* one jail for the whole server, as in mod_security2 */
    if (!strcasecmp(cmd->cmd->name, "SecChrootDir") && (err = ap_check_cmd_context(cmd, GLOBAL_ONLY)))
        return err;
    /* one collection store per Apache (SecCollectionTimeout is mod_security2's, per context) */
    if (!strncasecmp(cmd->cmd->name, "SecCollection", 13)
        && strcasecmp(cmd->cmd->name, "SecCollectionTimeout")
        && (err = ap_check_cmd_context(cmd, GLOBAL_ONLY)))
        return err;
    /* one block of live counters per Apache (bw_httpd_status.c) */
    if (!strncasecmp(cmd->cmd->name, "SecMetrics", 10) && (err = ap_check_cmd_context(cmd, GLOBAL_ONLY)))
        return err;
    err = bw_config_directive(d->cfg, cmd->cmd->name, args,
                                          cmd->directive ? cmd->directive->filename : NULL,
                                          cmd->directive ? cmd->directive->line_num : 0);
    for (i = before; i < warn->nelts; i++)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, cmd->server, "ModSecurity: %s",
                     ((const char **)warn->elts)[i]);
    return err;
}

static const command_rec bw_cmds[] = {
#define BW_DIRECTIVE(name) AP_INIT_RAW_ARGS(#name, cmd_sec, NULL, RSRC_CONF | ACCESS_CONF, \
                                            "ModSecurity rule language directive " #name),
#include "lang/bw_directive_list.h"
#undef BW_DIRECTIVE
    { NULL }
};

/* Audit log (apache2/audit/): opened at start-up and per child; one record
 * per transaction, written after phase 5 (bw_httpd_hooks.c runs phase 5 at
 * log_transaction FIRST; this hook is MIDDLE, before mod_log_config). */
static int audit_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    return bw_httpd_audit_post_config(pconf, plog, s) == OK ? OK : HTTP_INTERNAL_SERVER_ERROR;
}

static void audit_child_init(apr_pool_t *p, server_rec *s)
{
    bw_httpd_audit_child_init(p, s);
}

static int audit_log_transaction(request_rec *r)
{
    request_rec *orig = r;
    bw_httpd_req_t *st;
    while (orig->prev)
        orig = orig->prev;
    st = ap_get_module_config(orig->request_config, &bulwark_module);
    if (!st || apr_table_get(orig->notes, "bulwark-audit-done"))
        return DECLINED;
    apr_table_setn(orig->notes, "bulwark-audit-done", "1");
    bw_httpd_audit_transaction(r, st);
    return DECLINED;
}

static void register_hooks(apr_pool_t *p)
{
    static const char *const before_log_config[] = { "mod_log_config.c", NULL };
    bw_httpd_register_hooks(p);
    bw_httpd_register_filters();
    bw_httpd_register_chroot();
    bw_httpd_register_status();
    ap_hook_post_config(audit_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(audit_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_log_transaction(audit_log_transaction, NULL, before_log_config, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(bulwark) = {
    STANDARD20_MODULE_STUFF,
    create_dir_config,
    merge_dir_config,
    NULL,
    NULL,
    bw_cmds,
    register_hooks,
    AP_MODULE_FLAG_NONE
};
