/*
 * The directive table: every Sec* directive of the ModSecurity 2.9
 * language, what it takes and where it is stored. Settings are parsed here
 * into the context's bw_settings_t (unset = -1 / NULL, merged later);
 * rule-defining and rule-modifying directives go to bw_rules_dir.c.
 *
 * The table is the single place to find a directive: httpd's command table
 * is generated from bw_config_directive_names and every call lands in
 * bw_config_directive().
 */
#include <string.h>
#include <stddef.h>
#include <ctype.h>
#include <apr_thread_mutex.h>
#include <apr_file_info.h>
#include "lang/bw_lang.h"
#include "lang/bw_compat.h"
#include "operators/bw_geo.h"
#include "operators/bw_gsb.h"

typedef enum {
    DT_ONOFF,      /* On | Off */
    DT_ENUM,       /* one of names[] -> index */
    DT_I64,        /* non-negative integer */
    DT_INT,
    DT_STR,        /* one word */
    DT_OCTAL,      /* file mode */
    DT_IGNORED,    /* accepted, has no effect here (documented as such) */
    DT_CUSTOM
} dir_type_t;

typedef struct dir_def_s dir_def_t;
typedef const char *(*dir_fn_t)(bw_config_t *cfg, const dir_def_t *d, const char *args,
                                const char *file, int line);

struct dir_def_s {
    const char *name;
    dir_type_t type;
    size_t offset;             /* into bw_settings_t */
    const char *const *names;  /* DT_ENUM */
    dir_fn_t fn;               /* DT_CUSTOM */
};

#define OFF(f) offsetof(bw_settings_t, f)

static const char *const engine_names[] = { "Off", "On", "DetectionOnly", NULL };
static const char *const limit_action_names[] = { "Reject", "ProcessPartial", NULL };
static const char *const keep_names[] = { "Off", "On", "RelevantOnly", NULL };
static const char *const audit_type_names[] = { "Serial", "Concurrent", "HTTPS", NULL };
static const char *const audit_format_names[] = { "Native", "JSON", NULL };
static const char *const cookie_names[] = { "0", "1", NULL };

static const char *d_rule(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_secrule(c, a, f, l);
}
static const char *d_action(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_secaction(c, a, f, l);
}
static const char *d_script(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_secrulescript(c, a, f, l);
}
static const char *d_marker(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_secmarker(c, a, f, l);
}
static const char *d_default(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_default_action(c, a, f, l);
}
static const char *d_rm_id(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_remove(c, BW_ITEM_REMOVE_ID, a, f, l);
}
static const char *d_rm_tag(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_remove(c, BW_ITEM_REMOVE_TAG, a, f, l);
}
static const char *d_rm_msg(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_remove(c, BW_ITEM_REMOVE_MSG, a, f, l);
}
static const char *d_ut_id(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_update_target(c, BW_ITEM_UPDATE_TARGET_ID, a, f, l);
}
static const char *d_ut_tag(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_update_target(c, BW_ITEM_UPDATE_TARGET_TAG, a, f, l);
}
static const char *d_ut_msg(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_update_target(c, BW_ITEM_UPDATE_TARGET_MSG, a, f, l);
}
static const char *d_ua_id(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_update_action(c, a, f, l);
}

const char *bw_dir_words(apr_pool_t *p, const char *args, apr_array_header_t **out)
{
    apr_array_header_t *w = apr_array_make(p, 4, sizeof(char *));
    const char *s = args;
    for (;;) {
        char *word;
        const char *err = bw_conf_getword(p, &s, &word);
        if (err)
            return err;
        if (!*word && !*s)
            break;
        *(char **)apr_array_push(w) = word;
        if (!*s)
            break;
    }
    *out = w;
    return NULL;
}

static const char *one_word(apr_pool_t *p, const dir_def_t *d, const char *args, char **out)
{
    apr_array_header_t *w;
    const char *err = bw_dir_words(p, args, &w);
    if (err)
        return err;
    if (w->nelts != 1)
        return apr_psprintf(p, "%s takes one argument", d->name);
    *out = ((char **)w->elts)[0];
    return NULL;
}

static const char *d_mime_types(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    apr_array_header_t *w;
    int i;
    const char *err = bw_dir_words(c->pool, a, &w);
    if (err)
        return err;
    if (w->nelts == 0)
        return "SecResponseBodyMimeType takes one or more MIME types";
    if (!c->settings.resbody_mime_types)
        c->settings.resbody_mime_types = apr_array_make(c->pool, 4, sizeof(char *));
    for (i = 0; i < w->nelts; i++) {
        bw_str_t t = bw_str_lower(c->pool, bw_str_make(((char **)w->elts)[i]));
        *(const char **)apr_array_push(c->settings.resbody_mime_types) = t.data;
    }
    return NULL;
}

static const char *d_mime_clear(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    c->settings.resbody_mime_types = apr_array_make(c->pool, 4, sizeof(char *));
    return NULL;
}

static const char *d_arg_sep(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    char *w = NULL;
    const char *err = one_word(c->pool, d, a, &w);
    if (err)
        return err;
    if (strlen(w) != 1)
        return apr_psprintf(c->pool, "SecArgumentSeparator takes one character, not \"%s\"", w);
    c->settings.arg_separator = (unsigned char)w[0];
    return NULL;
}

static const char *d_unicode_map(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    apr_array_header_t *w;
    char *err2 = NULL;
    const char *err = bw_dir_words(c->pool, a, &w);
    const char *path;
    if (err)
        return err;
    if (w->nelts != 2)
        return "SecUnicodeMapFile takes a file and a code page, e.g. unicode.mapping 20127";
    path = ((char **)w->elts)[0];
    if (path[0] != '/' && f) {
        const char *slash = strrchr(f, '/');
        if (slash)
            path = apr_pstrcat(c->pool, apr_pstrndup(c->pool, f, (apr_size_t)(slash - f)), "/", path, NULL);
    }
    c->settings.unicode_map_file = path;
    c->settings.unicode_codepage = atoi(((char **)w->elts)[1]);
    c->settings.unicode_map = bw_tfn_unicode_map_load(c->pool, path,
                                                      (unsigned)c->settings.unicode_codepage, &err2);
    if (!c->settings.unicode_map)
        return apr_psprintf(c->pool, "SecUnicodeMapFile: %s", err2 ? err2 : "cannot load");
    return NULL;
}

static const char *d_relevant_status(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    char *w = NULL, *err2 = NULL;
    const char *err = one_word(c->pool, d, a, &w);
    if (err)
        return err;
    c->settings.audit_relevant_status = w;
    c->settings.audit_relevant_status_re = bw_regex_compile(c->pool, w, 0, &err2);
    if (!c->settings.audit_relevant_status_re)
        return apr_psprintf(c->pool, "SecAuditLogRelevantStatus: %s", err2);
    return NULL;
}

static const char *d_audit_log(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    char *w = NULL;
    const char *err = one_word(c->pool, d, a, &w);
    if (err)
        return err;
    if (!strcmp(d->name, "SecAuditLog2"))
        c->settings.audit_log2 = w;
    else
        c->settings.audit_log = w;
    return NULL;
}

static const char *d_parts(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    char *w = NULL;
    const char *p;
    const char *err = one_word(c->pool, d, a, &w);
    if (err)
        return err;
    for (p = w; *p; p++)
        if (!strchr("ABCDEFGHIJKZ", *p))
            return apr_psprintf(c->pool, "SecAuditLogParts: unknown part '%c' (parts are A-K and Z)", *p);
    c->settings.audit_parts = w;
    return NULL;
}

static const char *d_component(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    char *w = NULL;
    const char *err = one_word(c->pool, d, a, &w);
    if (err)
        return err;
    if (!c->settings.component_signatures)
        c->settings.component_signatures = apr_array_make(c->pool, 2, sizeof(char *));
    *(const char **)apr_array_push(c->settings.component_signatures) = w;
    return NULL;
}

/* The one word of a directive naming a data file, as *path: a relative
 * name is read from the directory of the file that names it. */
static const char *data_file_arg(bw_config_t *c, const dir_def_t *d, const char *a, const char *f,
                                 const char **path)
{
    char *w = NULL;
    const char *err = one_word(c->pool, d, a, &w);
    if (!err)
        *path = bw_op_data_path(c->pool, f, w);
    return err;
}

/* The database is opened here, once, from the configuration's pool: a
 * missing or damaged file stops start-up at this line, and the mapping is
 * shared read-only by every transaction until the configuration goes. A
 * relative path is read from the directory of the file that names it. */
static const char *d_geo_db(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    const char *why = NULL, *path = NULL;
    const char *err = data_file_arg(c, d, a, f, &path);
    if (err)
        return err;
    c->settings.geo = bw_geo_open(c->pool, path, &why);
    if (!c->settings.geo)
        return apr_psprintf(c->pool, "SecGeoLookupDb: %s", why);
    c->settings.geo_db = path;
    return NULL;
}

/* The list is read here, once, into a sorted array in the configuration's
 * pool: a missing file or a bad line stops start-up at this line (naming
 * the list's own line too), and lookups never touch the file again. A
 * relative path is read from the directory of the file that names it. */
static const char *d_gsb_db(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    const char *why = NULL, *path = NULL;
    const char *err = data_file_arg(c, d, a, f, &path);
    if (err)
        return err;
    c->settings.gsb = bw_gsb_open(c->pool, path, &why);
    if (!c->settings.gsb)
        return apr_psprintf(c->pool, "SecGsbLookupDb: %s", why);
    c->settings.gsb_db = path;
    return NULL;
}

/* Seconds, 1 to 3600: a worker waits that long at most for a program. */
static const char *d_ext_timeout(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    char *w = NULL, *end;
    long v;
    const char *err = one_word(c->pool, d, a, &w);
    if (err)
        return err;
    v = strtol(w, &end, 10);
    if (*end || end == w || v < 1 || v > 3600)
        return apr_psprintf(c->pool, "%s: invalid value \"%s\" (seconds, 1 to 3600)", d->name, w);
    c->settings.external_program_timeout = (int)v;
    return NULL;
}

/* The jail must be a directory now, as mod_security2 checks (by changing
 * into it): a typo stops start-up at its line, not after the server has
 * half started. A relative path is taken from httpd's working directory,
 * as chroot(2) would. Only root can chroot; that is found when it is done. */
static const char *d_chroot_dir(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    char *w = NULL, buf[120];
    apr_finfo_t fi;
    apr_status_t rv;
    const char *err = one_word(c->pool, d, a, &w);
    if (err)
        return err;
    rv = apr_stat(&fi, w, APR_FINFO_TYPE, c->pool);
    if (rv != APR_SUCCESS)
        return apr_psprintf(c->pool, "SecChrootDir: %s: %s", w, apr_strerror(rv, buf, sizeof buf));
    if (fi.filetype != APR_DIR)
        return apr_psprintf(c->pool, "SecChrootDir: %s: not a directory", w);
    c->settings.chroot_dir = w;
    return NULL;
}

static const char *d_hash_key(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_hash_key(c, a, f, l);
}

static const char *d_hash_param(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_hash_param(c, a);
}

static const char *d_hash_method(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_hash_method(c, !strcmp(d->name, "SecHashMethodPm"), a, f, l);
}

static const char *d_remote(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_remote_rules(c, a, f, l);
}

static const char *d_remote_fail(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_remote_fail_action(c, a);
}

static const char *d_remote_timeout(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_remote_timeout(c, a);
}

/* Bulwark's own: the CA bundle that verifies SecRemoteRules servers, read
 * when the download happens (mod_security2 has only the system's CAs). */
static const char *d_remote_ca(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    char *w = NULL;
    const char *err = one_word(c->pool, d, a, &w);
    if (err)
        return err;
    c->remote_ca_file = w;
    return NULL;
}

/* SecCollectionBackend, SecCollectionShm*, SecCollectionRedis*,
 * SecCollectionFailAction: lang/bw_store_dir.c */
static const char *d_store(bw_config_t *c, const dir_def_t *d, const char *a, const char *f, int l)
{
    return bw_dir_store(c, d->name, a);
}

static const dir_def_t dirs[] = {
    { "SecRule", DT_CUSTOM, 0, NULL, d_rule },
    { "SecAction", DT_CUSTOM, 0, NULL, d_action },
    { "SecMarker", DT_CUSTOM, 0, NULL, d_marker },
    { "SecDefaultAction", DT_CUSTOM, 0, NULL, d_default },
    { "SecRuleRemoveById", DT_CUSTOM, 0, NULL, d_rm_id },
    { "SecRuleRemoveByTag", DT_CUSTOM, 0, NULL, d_rm_tag },
    { "SecRuleRemoveByMsg", DT_CUSTOM, 0, NULL, d_rm_msg },
    { "SecRuleUpdateTargetById", DT_CUSTOM, 0, NULL, d_ut_id },
    { "SecRuleUpdateTargetByTag", DT_CUSTOM, 0, NULL, d_ut_tag },
    { "SecRuleUpdateTargetByMsg", DT_CUSTOM, 0, NULL, d_ut_msg },
    { "SecRuleUpdateActionById", DT_CUSTOM, 0, NULL, d_ua_id },
    { "SecRuleEngine", DT_ENUM, OFF(rule_engine), engine_names, NULL },
    { "SecRequestBodyAccess", DT_ONOFF, OFF(reqbody_access), NULL, NULL },
    { "SecResponseBodyAccess", DT_ONOFF, OFF(resbody_access), NULL, NULL },
    { "SecRequestBodyLimit", DT_I64, OFF(reqbody_limit), NULL, NULL },
    { "SecRequestBodyNoFilesLimit", DT_I64, OFF(reqbody_nofiles_limit), NULL, NULL },
    { "SecRequestBodyInMemoryLimit", DT_I64, OFF(reqbody_inmemory_limit), NULL, NULL },
    { "SecRequestBodyLimitAction", DT_ENUM, OFF(reqbody_limit_action), limit_action_names, NULL },
    { "SecRequestBodyJsonDepthLimit", DT_INT, OFF(json_depth_limit), NULL, NULL },
    { "SecArgumentsLimit", DT_INT, OFF(args_limit), NULL, NULL },
    { "SecResponseBodyLimit", DT_I64, OFF(resbody_limit), NULL, NULL },
    { "SecResponseBodyLimitAction", DT_ENUM, OFF(resbody_limit_action), limit_action_names, NULL },
    { "SecResponseBodyMimeType", DT_CUSTOM, 0, NULL, d_mime_types },
    { "SecResponseBodyMimeTypesClear", DT_CUSTOM, 0, NULL, d_mime_clear },
    { "SecPcreMatchLimit", DT_I64, OFF(pcre_match_limit), NULL, NULL },
    { "SecPcreMatchLimitRecursion", DT_I64, OFF(pcre_recursion_limit), NULL, NULL },
    { "SecArgumentSeparator", DT_CUSTOM, 0, NULL, d_arg_sep },
    { "SecCookieFormat", DT_ENUM, OFF(cookie_format), cookie_names, NULL },
    { "SecCookieV0Separator", DT_IGNORED, 0, NULL, NULL },
    { "SecUnicodeMapFile", DT_CUSTOM, 0, NULL, d_unicode_map },
    { "SecUnicodeCodePage", DT_INT, OFF(unicode_codepage), NULL, NULL },
    { "SecTmpDir", DT_STR, OFF(tmp_dir), NULL, NULL },
    { "SecDataDir", DT_STR, OFF(data_dir), NULL, NULL },
    { "SecUploadDir", DT_STR, OFF(upload_dir), NULL, NULL },
    { "SecUploadKeepFiles", DT_ENUM, OFF(upload_keep_files), keep_names, NULL },
    { "SecUploadFileMode", DT_OCTAL, OFF(upload_file_mode), NULL, NULL },
    { "SecUploadFileLimit", DT_INT, OFF(upload_file_limit), NULL, NULL },
    { "SecTmpSaveUploadedFiles", DT_ONOFF, OFF(tmp_save_uploaded_files), NULL, NULL },
    { "SecRequestBodyProcessorGuess", DT_ONOFF, OFF(reqbody_guess), NULL, NULL },
    { "SecUploadTextLimit", DT_I64, OFF(upload_text_limit), NULL, NULL },
    { "SecAuditEngine", DT_ENUM, OFF(audit_engine), keep_names, NULL },
    { "SecAuditLog", DT_CUSTOM, 0, NULL, d_audit_log },
    { "SecAuditLog2", DT_CUSTOM, 0, NULL, d_audit_log },
    { "SecAuditLogParts", DT_CUSTOM, 0, NULL, d_parts },
    { "SecAuditLogType", DT_ENUM, OFF(audit_type), audit_type_names, NULL },
    { "SecAuditLogFormat", DT_ENUM, OFF(audit_format), audit_format_names, NULL },
    { "SecAuditLogStorageDir", DT_STR, OFF(audit_storage_dir), NULL, NULL },
    { "SecAuditLogDirMode", DT_OCTAL, OFF(audit_dir_mode), NULL, NULL },
    { "SecAuditLogFileMode", DT_OCTAL, OFF(audit_file_mode), NULL, NULL },
    { "SecAuditLogRelevantStatus", DT_CUSTOM, 0, NULL, d_relevant_status },
    { "SecDebugLog", DT_STR, OFF(debug_log), NULL, NULL },
    { "SecDebugLogLevel", DT_INT, OFF(debug_log_level), NULL, NULL },
    { "SecCollectionTimeout", DT_I64, OFF(collection_timeout), NULL, NULL },
    { "SecCollectionBackend", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionShmSize", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionShmRecordSize", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionShmFull", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionRedisServer", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionRedisAuth", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionRedisDatabase", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionRedisPrefix", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionRedisTimeout", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionRedisPool", DT_CUSTOM, 0, NULL, d_store },
    { "SecCollectionFailAction", DT_CUSTOM, 0, NULL, d_store },
    { "SecGeoLookupDb", DT_CUSTOM, 0, NULL, d_geo_db },
    { "SecScanCacheDir", DT_STR, OFF(scan_cache_dir), NULL, NULL },
    { "SecExternalPrograms", DT_ONOFF, OFF(external_programs), NULL, NULL },
    { "SecExternalProgramTimeout", DT_CUSTOM, 0, NULL, d_ext_timeout },
    { "SecStatusEngine", DT_ONOFF, OFF(status_engine), NULL, NULL },
    { "SecMetricsEngine", DT_ONOFF, OFF(metrics_engine), NULL, NULL },
    { "SecMetricsTimingSample", DT_INT, OFF(metrics_sample), NULL, NULL },
    { "SecServerSignature", DT_STR, OFF(server_signature), NULL, NULL },
    { "SecComponentSignature", DT_CUSTOM, 0, NULL, d_component },
    { "SecDisableBackendCompression", DT_ONOFF, OFF(disable_backend_compression), NULL, NULL },
    { "SecRuleInheritance", DT_ONOFF, OFF(rule_inheritance), NULL, NULL },
    { "SecStreamInBodyInspection", DT_ONOFF, OFF(stream_inbody_inspection), NULL, NULL },
    { "SecStreamOutBodyInspection", DT_ONOFF, OFF(stream_outbody_inspection), NULL, NULL },
    { "SecHashEngine", DT_ONOFF, OFF(hash_engine), NULL, NULL },
    { "SecXmlExternalEntity", DT_ONOFF, OFF(xml_external_entity), NULL, NULL },
    { "SecHttpBlKey", DT_STR, OFF(httpbl_key), NULL, NULL },
    { "SecSensorId", DT_STR, OFF(sensor_id), NULL, NULL },
    { "SecWebAppId", DT_STR, OFF(web_app_id), NULL, NULL },
    { "SecInterceptOnError", DT_ONOFF, OFF(interceptor_on_error), NULL, NULL },
    { "SecConnReadStateLimit", DT_INT, OFF(conn_read_state_limit), NULL, NULL },
    { "SecReadStateLimit", DT_INT, OFF(conn_read_state_limit), NULL, NULL },
    { "SecConnWriteStateLimit", DT_INT, OFF(conn_write_state_limit), NULL, NULL },
    { "SecWriteStateLimit", DT_INT, OFF(conn_write_state_limit), NULL, NULL },
    { "SecCacheTransformations", DT_IGNORED, 0, NULL, NULL },
    { "SecContentInjection", DT_ONOFF, OFF(content_injection), NULL, NULL },
    { "SecRulePerfTime", DT_IGNORED, 0, NULL, NULL },
    { "SecGuardianLog", DT_IGNORED, 0, NULL, NULL },
    { "SecConnEngine", DT_IGNORED, 0, NULL, NULL },
    { "SecHashKey", DT_CUSTOM, 0, NULL, d_hash_key },
    { "SecHashParam", DT_CUSTOM, 0, NULL, d_hash_param },
    { "SecHashMethodRx", DT_CUSTOM, 0, NULL, d_hash_method },
    { "SecHashMethodPm", DT_CUSTOM, 0, NULL, d_hash_method },
    { "SecChrootDir", DT_CUSTOM, 0, NULL, d_chroot_dir },
    { "SecRuleScript", DT_CUSTOM, 0, NULL, d_script },
    { "SecRemoteRules", DT_CUSTOM, 0, NULL, d_remote },
    { "SecRemoteRulesFailAction", DT_CUSTOM, 0, NULL, d_remote_fail },
    { "SecRemoteRulesCAFile", DT_CUSTOM, 0, NULL, d_remote_ca },
    { "SecRemoteRulesTimeout", DT_CUSTOM, 0, NULL, d_remote_timeout },
    { "SecGsbLookupDb", DT_CUSTOM, 0, NULL, d_gsb_db },
    { NULL, DT_IGNORED, 0, NULL, NULL }
};

const char *const bw_config_directive_names[] = {
#define BW_DIRECTIVE(name) #name,
#include "lang/bw_directive_list.h"
#undef BW_DIRECTIVE
    NULL
};

static const dir_def_t *find_dir(const char *name)
{
    const dir_def_t *d;
    for (d = dirs; d->name; d++)
        if (!strcasecmp(d->name, name))
            return d;
    return NULL;
}

int bw_config_is_directive(const char *name)
{
    return find_dir(name) != NULL;
}

static const char *set_enum(bw_config_t *cfg, const dir_def_t *d, const char *w, int *field)
{
    int i;
    for (i = 0; d->names[i]; i++)
        if (!strcasecmp(d->names[i], w)) {
            *field = i;
            return NULL;
        }
    {
        const char *list = d->names[0];
        for (i = 1; d->names[i]; i++)
            list = apr_pstrcat(cfg->pool, list, d->names[i + 1] ? ", " : " or ", d->names[i], NULL);
        return apr_psprintf(cfg->pool, "%s: invalid value \"%s\" (expected %s)", d->name, w, list);
    }
}

static const char *set_number(bw_config_t *cfg, const dir_def_t *d, const char *w, char *base)
{
    char *end;
    apr_int64_t v;
    if (d->type == DT_OCTAL) {
        long m = strtol(w, &end, 8);
        if (*end || end == w || m < 0 || m > 07777)
            return apr_psprintf(cfg->pool, "%s: invalid file mode \"%s\" (octal, e.g. 0600)", d->name, w);
        *(int *)(base + d->offset) = (int)m;
        return NULL;
    }
    v = apr_strtoi64(w, &end, 10);
    if (*end || end == w || v < 0)
        return apr_psprintf(cfg->pool, "%s: invalid number \"%s\"", d->name, w);
    if (d->type == DT_I64)
        *(apr_int64_t *)(base + d->offset) = v;
    else if (v > 0x7fffffff)
        return apr_psprintf(cfg->pool, "%s: number too large \"%s\"", d->name, w);
    else
        *(int *)(base + d->offset) = (int)v;
    return NULL;
}

static const char *apply_directive(bw_config_t *cfg, const dir_def_t *d, const char *args,
                                   const char *file, int line)
{
    char *base = (char *)&cfg->settings;
    char *w = NULL;
    const char *err;

    if (d->type == DT_CUSTOM)
        return d->fn(cfg, d, args ? args : "", file, line);
    if (d->type == DT_IGNORED)
        return NULL;
    err = one_word(cfg->pool, d, args ? args : "", &w);
    if (err)
        return err;
    switch (d->type) {
    case DT_ONOFF:
        if (!strcasecmp(w, "On"))
            *(int *)(base + d->offset) = 1;
        else if (!strcasecmp(w, "Off"))
            *(int *)(base + d->offset) = 0;
        else
            return apr_psprintf(cfg->pool, "%s: invalid value \"%s\" (expected On or Off)", d->name, w);
        return NULL;
    case DT_ENUM:
        return set_enum(cfg, d, w, (int *)(base + d->offset));
    case DT_STR:
        *(const char **)(base + d->offset) = w;
        return NULL;
    default:
        return set_number(cfg, d, w, base);
    }
}

const char *bw_config_directive(bw_config_t *cfg, const char *name, const char *args,
                                const char *file, int line)
{
    const dir_def_t *d = find_dir(name);
    const char *err;

    if (!d)
        return apr_psprintf(cfg->pool, "unknown directive \"%s\"", name);
    err = apply_directive(cfg, d, args, file, line);
    if (!err)
        bw_compat_note_directive(cfg, d->name, args, file, line);
    return err;
}

bw_config_t *bw_config_create(apr_pool_t *pool)
{
    bw_config_t *cfg = apr_pcalloc(pool, sizeof(*cfg));
    cfg->pool = pool;
    bw_settings_init_unset(&cfg->settings);
    cfg->items = apr_array_make(pool, 64, sizeof(bw_item_t));
    cfg->ids = apr_hash_make(pool);
    cfg->warnings = apr_array_make(pool, 4, sizeof(char *));
    cfg->errors = apr_array_make(pool, 4, sizeof(char *));
    cfg->cache = apr_array_make(pool, 2, sizeof(void *) * 2);
    cfg->remote_connect_timeout = 10;
    cfg->remote_timeout = 60;
    apr_thread_mutex_create(&cfg->mutex, APR_THREAD_MUTEX_DEFAULT, pool);
    return cfg;
}

const apr_array_header_t *bw_config_warnings(const bw_config_t *cfg)
{
    return cfg->warnings;
}

void bw_config_note_compat(bw_config_t *cfg)
{
    if (!cfg->compat)
        cfg->compat = apr_array_make(cfg->pool, 8, sizeof(char *));
}

const apr_array_header_t *bw_config_compat_notes(const bw_config_t *cfg)
{
    return cfg->compat;
}

apr_array_header_t *bw_config_cache(bw_config_t *cfg)
{
    return cfg->cache;
}

void bw_config_lock(bw_config_t *cfg)
{
    apr_thread_mutex_lock(cfg->mutex);
}

void bw_config_unlock(bw_config_t *cfg)
{
    apr_thread_mutex_unlock(cfg->mutex);
}
