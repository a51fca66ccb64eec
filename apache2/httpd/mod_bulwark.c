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
 * and cached, so requests never copy rule lists. Start-up builds every
 * server's and every section's over its server's (bw_httpd_build_programs);
 * a request that merges several sections builds the rest at its first time,
 * in each child.
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
    /* a context without Sec* directives (a <VirtualHost>, a <Location> of
     * other modules' settings) adds nothing: it runs its parent's program,
     * so its sections find the pairs start-up built over that program */
    if (!d->directives && d->parent)
        return bw_httpd_program(r, d->parent, err);
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

/* Is v one of the first n sections of the main server's list? A virtual
 * host's lists start with the main server's sections (httpd appends its
 * own to them), which are built over the main server's program. */
static int main_section(const apr_array_header_t *main_secs, int i, const ap_conf_vector_t *v)
{
    return main_secs && i < main_secs->nelts && ((ap_conf_vector_t **)main_secs->elts)[i] == v;
}

/* The sections a server's configuration defines that hold Sec* directives,
 * each built over that server's program, as a request mapped to that one
 * section merges them (a <Location> after no <Directory> of ours, or the
 * other way round). Not the main server's sections again for each virtual
 * host: a host without Sec* directives of its own runs the main server's
 * program and finds them built; one with its own builds them at the first
 * request there, so start-up grows with the sections, not with sections
 * times hosts. */
static int build_sections(server_rec *sv, server_rec *main_sv, const bw_httpd_dircfg_t *base)
{
    core_server_config *core = ap_get_core_module_config(sv->module_config);
    core_server_config *main_core = ap_get_core_module_config(main_sv->module_config);
    const apr_array_header_t *secs[2], *main_secs[2];
    int k, i, failed = 0;

    secs[0] = core ? core->sec_dir : NULL;
    secs[1] = core ? core->sec_url : NULL;
    main_secs[0] = sv != main_sv && main_core ? main_core->sec_dir : NULL;
    main_secs[1] = sv != main_sv && main_core ? main_core->sec_url : NULL;
    for (k = 0; k < 2; k++)
        for (i = 0; secs[k] && i < secs[k]->nelts; i++) {
            ap_conf_vector_t *v = ((ap_conf_vector_t **)secs[k]->elts)[i];
            const bw_httpd_dircfg_t *sd = ap_get_module_config(v, &bulwark_module);
            bw_httpd_dircfg_t merged;
            char *err = NULL;
            if (!sd || !sd->directives || main_section(main_secs[k], i, v))
                continue;
            merged = *sd;               /* what merge_dir_config makes of it */
            merged.parent = base;
            if (!bw_httpd_program(NULL, &merged, &err)) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, sv, "Bulwark: %s (in <%s %s>)",
                             err ? err : "configuration error", k ? "Location" : "Directory",
                             sd->where);
                failed = 1;
            }
        }
    return failed;
}

int bw_httpd_build_programs(server_rec *s)
{
    server_rec *sv;
    int failed = 0;
    for (sv = s; sv; sv = sv->next) {
        const bw_httpd_dircfg_t *d = ap_get_module_config(sv->lookup_defaults, &bulwark_module);
        char *err = NULL;
        if (!d)
            continue;
        if (!bw_httpd_program(NULL, d, &err)) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, 0, sv, "Bulwark: %s", err ? err : "configuration error");
            failed = 1;
            continue;
        }
        failed |= build_sections(sv, s, d);
    }
    return failed;
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
    d->directives++;
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
