/*
 * Settings: the "unset" state of a fresh context, the child-over-parent
 * merge, and the defaults filled in at the end. The defaults are those of
 * ModSecurity 2.9 when a directive is absent, so a configuration behaves the
 * same as it did under mod_security2.
 */
#include "lang/bw_lang.h"

void bw_settings_init_unset(bw_settings_t *s)
{
    memset(s, 0, sizeof(*s));
    s->rule_engine = -1;
    s->reqbody_access = -1;
    s->resbody_access = -1;
    s->reqbody_limit = -1;
    s->reqbody_nofiles_limit = -1;
    s->reqbody_inmemory_limit = -1;
    s->reqbody_limit_action = -1;
    s->resbody_limit = -1;
    s->resbody_limit_action = -1;
    s->json_depth_limit = -1;
    s->args_limit = -1;
    s->pcre_match_limit = -1;
    s->pcre_recursion_limit = -1;
    s->arg_separator = -1;
    s->cookie_format = -1;
    s->unicode_codepage = -1;
    s->upload_keep_files = -1;
    s->upload_file_mode = -1;
    s->upload_file_limit = -1;
    s->tmp_save_uploaded_files = -1;
    s->reqbody_guess = -1;
    s->upload_text_limit = -1;
    s->audit_engine = -1;
    s->audit_type = -1;
    s->audit_format = -1;
    s->audit_dir_mode = -1;
    s->audit_file_mode = -1;
    s->debug_log_level = -1;
    s->collection_timeout = -1;
    s->status_engine = -1;
    s->metrics_engine = -1;
    s->metrics_sample = -1;
    s->disable_backend_compression = -1;
    s->rule_inheritance = -1;
    s->stream_inbody_inspection = -1;
    s->stream_outbody_inspection = -1;
    s->content_injection = -1;
    s->hash_engine = -1;
    s->hash.mode = -1;
    s->xml_external_entity = -1;
    s->interceptor_on_error = -1;
    s->conn_read_state_limit = -1;
    s->conn_write_state_limit = -1;
    s->external_programs = -1;
    s->external_program_timeout = -1;
}

#define MI(f) out->f = (child->f != -1) ? child->f : parent->f
#define MP(f) out->f = child->f ? child->f : parent->f

void bw_settings_merge(bw_settings_t *out, const bw_settings_t *parent, const bw_settings_t *child)
{
    MI(rule_engine); MI(reqbody_access); MI(resbody_access);
    MI(reqbody_limit); MI(reqbody_nofiles_limit); MI(reqbody_inmemory_limit);
    MI(reqbody_limit_action); MI(resbody_limit); MI(resbody_limit_action);
    MI(json_depth_limit); MI(args_limit); MI(pcre_match_limit); MI(pcre_recursion_limit);
    MI(arg_separator); MI(cookie_format);
    MP(unicode_map_file); MI(unicode_codepage); MP(unicode_map);
    MP(tmp_dir); MP(data_dir); MP(upload_dir);
    MI(upload_keep_files); MI(upload_file_mode); MI(upload_file_limit); MI(tmp_save_uploaded_files);
    MI(reqbody_guess); MI(upload_text_limit);
    MP(resbody_mime_types);
    MI(audit_engine); MP(audit_log); MP(audit_log2); MP(audit_parts); MI(audit_type);
    MI(audit_format); MP(audit_storage_dir); MI(audit_dir_mode); MI(audit_file_mode);
    MP(audit_relevant_status); MP(audit_relevant_status_re);
    MP(debug_log); MI(debug_log_level); MI(collection_timeout); MP(store); MP(geo_db); MP(geo); MP(gsb_db); MP(gsb); MP(scan_cache_dir);
    MP(chroot_dir);
    MI(status_engine); MI(metrics_engine); MI(metrics_sample); MP(server_signature); MP(component_signatures);
    MI(disable_backend_compression); MI(rule_inheritance); MI(stream_inbody_inspection);
    MI(stream_outbody_inspection); MI(content_injection);
    MI(hash_engine); MI(xml_external_entity); MP(httpbl_key); MP(sensor_id); MP(web_app_id);
    MI(interceptor_on_error); MI(conn_read_state_limit); MI(conn_write_state_limit);
    MI(external_programs); MI(external_program_timeout);
    out->hash.key = child->hash.key.data ? child->hash.key : parent->hash.key;
    MI(hash.mode); MP(hash.methods);
    out->hash.param = child->hash.param.data ? child->hash.param : parent->hash.param;
}

#define DEF(f, v) if (s->f == -1) s->f = (v)

void bw_settings_finalize(bw_settings_t *s)
{
    DEF(rule_engine, BW_ENGINE_OFF);
    DEF(reqbody_access, 0);
    DEF(resbody_access, 0);
    DEF(reqbody_limit, 134217728);
    DEF(reqbody_nofiles_limit, 1048576);
    DEF(reqbody_inmemory_limit, 131072);
    DEF(reqbody_limit_action, 0);
    DEF(resbody_limit, 524288);
    DEF(resbody_limit_action, 0);
    DEF(json_depth_limit, 10000);
    DEF(args_limit, 1000);
    DEF(pcre_match_limit, 1000);
    DEF(pcre_recursion_limit, 1000);
    DEF(arg_separator, '&');
    DEF(cookie_format, 0);
    DEF(upload_keep_files, 0);
    DEF(upload_file_mode, 0600);
    DEF(upload_file_limit, 100);
    DEF(tmp_save_uploaded_files, 0);
    /* Bulwark's own: off by default, as mod_security2 has neither */
    DEF(reqbody_guess, 0);
    DEF(upload_text_limit, 0);
    DEF(audit_engine, 0);
    DEF(audit_type, 0);
    DEF(audit_format, 0);
    DEF(audit_dir_mode, 0600);
    DEF(audit_file_mode, 0600);
    DEF(debug_log_level, 0);
    DEF(collection_timeout, 3600);
    DEF(status_engine, 0);
    /* Bulwark's own, on by default: cheap enough (docs/design-notes.md) */
    DEF(metrics_engine, 1);
    DEF(metrics_sample, 100);
    DEF(disable_backend_compression, 0);
    DEF(rule_inheritance, 1);
    DEF(stream_inbody_inspection, 0);
    DEF(stream_outbody_inspection, 0);
    DEF(content_injection, 0);
    DEF(hash_engine, 0);
    DEF(hash.mode, BW_HASH_KEY_ONLY);
    DEF(xml_external_entity, 0);
    DEF(interceptor_on_error, 0);
    DEF(conn_read_state_limit, 0);
    DEF(conn_write_state_limit, 0);
    /* On, as mod_security2 (which has no such switch): see README */
    DEF(external_programs, 1);
    DEF(external_program_timeout, BW_SPAWN_DEFAULT_TIMEOUT);
    if (!s->tmp_dir)
        s->tmp_dir = "/tmp";
    if (!s->audit_parts)
        s->audit_parts = "ABCFHZ";
    /* resbody_mime_types stays NULL: text/plain and text/html (see bw_tx.c) */
}
