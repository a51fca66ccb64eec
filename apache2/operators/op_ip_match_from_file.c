/*
 * @ipMatchFromFile (alias @ipMatchF) — IP match against addresses in files.
 *
 * Description: Like @ipMatch, with the addresses and CIDR blocks read from
 *   data files at start-up: one per line, surrounding spaces ignored, empty
 *   lines and lines starting with '#' skipped.
 * Arguments: one or more file names separated by spaces; a relative name is
 *   resolved against the directory of the rule file. URLs are refused (no
 *   network access from the configuration). An unreadable file or a bad
 *   line is a configuration error naming the path (and line).
 * Returns: 1 when the address is in the set, 0 when not, -1 (run->error)
 *   when the value is not an IP address.
 * Example: SecRule REMOTE_ADDR "@ipMatchFromFile blocked-ips.txt" "id:1,deny"
 *   logs: IPmatchFromFile: "192.0.2.7" matched at REMOTE_ADDR.
 */
#include <string.h>
#include "op_internal.h"

/* Add every address of one file; -1 with *err on a bad line. */
static int add_file_lines(bw_iptree_t *t, bw_str_t content, const char *opname,
                          const char *path, apr_pool_t *p, char **err)
{
    bw_str_t line;
    int lineno = 0;

    while (bw_op_next_line(&content, &line)) {
        const char *why = NULL;
        lineno++;
        line = bw_str_trim(line);
        if (line.len == 0 || line.data[0] == '#')
            continue;
        if (bw_iptree_add(t, line, &why) < 0) {
            *err = apr_psprintf(p, "@%s: %s \"%s\" in %s line %d", opname, why,
                                bw_op_log_escape(p, line, 0), path, lineno);
            return -1;
        }
    }
    return 0;
}

static int ipf_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    const char *opname = op->def ? op->def->name : "ipMatchFromFile";
    bw_str_t rest = bw_str_n(op->param, op->param_len), tok, content;
    apr_pool_t *tmp = env->temp_pool ? env->temp_pool : env->pool;
    bw_iptree_t *t = bw_iptree_create(env->pool);
    int nfiles = 0;

    while (bw_op_next_token(&rest, " \t", &tok)) {
        const char *path;
        char *rerr = NULL;
        if (memchr(tok.data, '\0', tok.len)) {
            *err = apr_psprintf(env->pool, "@%s: NUL byte in file name \"%s\"", opname,
                                bw_op_log_escape(env->pool, tok, 0));
            return -1;
        }
        if (bw_op_is_url(tok)) {
            *err = apr_psprintf(env->pool, "@%s: loading addresses from a URL is not "
                                "supported (\"%s\"); download the file and name its local path",
                                opname, bw_str_pdup(env->pool, tok));
            return -1;
        }
        path = bw_op_data_path(tmp, env->file, bw_str_pdup(tmp, tok));
        if (bw_op_read_file(tmp, opname, "address file", path, &content, &rerr) < 0
            || add_file_lines(t, content, opname, path, tmp, &rerr) < 0) {
            *err = apr_pstrdup(env->pool, rerr);
            return -1;
        }
        nfiles++;
    }
    if (nfiles == 0) {
        *err = apr_psprintf(env->pool, "@%s: no file name in the parameter", opname);
        return -1;
    }
    op->data = t;
    return 0;
}

static int ipf_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    return bw_op_ip_execute(op, run, value, "IPmatchFromFile");
}

const bw_op_def_t bw_op_ip_match_from_file = {
    "ipMatchFromFile", BW_OP_PARAM_REQUIRED, ipf_compile, ipf_execute, NULL, NULL
};

const bw_op_def_t bw_op_ip_match_f = {
    "ipMatchF", BW_OP_PARAM_REQUIRED, ipf_compile, ipf_execute, NULL, NULL
};
