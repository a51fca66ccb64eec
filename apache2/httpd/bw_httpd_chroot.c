/*
 * SecChrootDir: jail the whole server in a directory, as mod_security2 does.
 *
 * When and where: in the parent process, once, at the end of the
 * configuration pass that goes on to serve (post_config, REALLY_LAST: every
 * module has opened its logs, listeners and shared memory), before the MPM
 * starts children, so each child is born inside the jail. The first pass at
 * start-up only checks the configuration and is skipped. Only root can
 * chroot; a failure stops start-up with the directory and the reason.
 *
 * What follows, as with mod_security2: whatever opens a file after this
 * point opens it inside the jail (the PidFile the MPM writes next, request
 * temp files under SecTmpDir, SecDataDir, error documents, shared libraries
 * loaded on demand such as the resolver's), and a restart re-reads the
 * configuration from inside the jail; the parent is never jailed twice.
 * httpd's own ChrootDir (mod_unixd), which jails each child and leaves the
 * parent free, is the gentler choice where a configuration can use it.
 */
#include "httpd/bw_httpd.h"
#include <unistd.h>
#include <errno.h>
#include "http_main.h"

#define JAILED_KEY "bulwark-chroot-done"

/* The main server's SecChrootDir, or NULL (its program is already built:
 * the main post_config ran first). */
static const char *chroot_dir(server_rec *s)
{
    const bw_httpd_dircfg_t *d = ap_get_module_config(s->lookup_defaults, &bulwark_module);
    const bw_program_t *prog;
    char *err = NULL;
    if (!d || !(prog = bw_httpd_program(NULL, d, &err)))
        return NULL;
    return bw_program_settings(prog)->chroot_dir;
}

static int enter_jail(server_rec *s, const char *dir)
{
    const char *step = "chdir";
    if (chdir(dir) == 0 && (step = "chroot", chroot(dir) == 0) && (step = "chdir /", chdir("/") == 0))
        return OK;
    ap_log_error(APLOG_MARK, APLOG_CRIT, errno, s,
                 "ModSecurity: SecChrootDir %s: %s failed (chroot needs httpd started as root)",
                 dir, step);
    return HTTP_INTERNAL_SERVER_ERROR;
}

static int chroot_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    void *done = NULL;
    const char *dir;
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return OK;
    if (!(dir = chroot_dir(s)))
        return OK;
    apr_pool_userdata_get(&done, JAILED_KEY, s->process->pool);
    if (done) {
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s,
                     "ModSecurity: already in the SecChrootDir jail; not entering %s again", dir);
        return OK;
    }
    if (enter_jail(s, dir) != OK)
        return HTTP_INTERNAL_SERVER_ERROR;
    apr_pool_userdata_set((void *)1, JAILED_KEY, apr_pool_cleanup_null, s->process->pool);
    ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s, "ModSecurity: chroot successful, path=%s", dir);
    return OK;
}

void bw_httpd_register_chroot(void)
{
    ap_hook_post_config(chroot_post_config, NULL, NULL, APR_HOOK_REALLY_LAST);
}
