/*
 * @pmFromFile (alias @pmf) — phrase match with phrases read from files.
 *
 * Description: Like @pm (same case-insensitive Aho-Corasick search, same
 *   message and capture), but the phrases come from data files read once at
 *   start-up. Each line is one phrase, taken byte for byte (only the line
 *   end, "\n" or "\r\n", is removed: CRS files rely on leading and trailing
 *   spaces); empty lines and lines starting with '#' are skipped.
 * Arguments: one or more file names separated by spaces. A relative name is
 *   resolved against the directory of the rule file. ModSecurity can fetch
 *   http(s) URLs; Bulwark refuses them at start-up (no network access from
 *   the configuration).
 * Returns: 1 when a phrase occurs in the value, 0 otherwise. A file that
 *   cannot be read is a configuration error naming the resolved path.
 * Example: SecRule REQUEST_FILENAME "@pmFromFile restricted-files.data" "id:1,..."
 *   logs: Matched phrase ".htaccess" at REQUEST_FILENAME.
 */
#include <string.h>
#include "op_internal.h"

/* Add every phrase of one file's content to ac. */
static int add_lines(bw_ac_t *ac, bw_str_t content, int id)
{
    bw_str_t line;
    while (bw_op_next_line(&content, &line)) {
        if (line.len == 0 || line.data[0] == '#')
            continue;
        bw_ac_add(ac, line, id++);
    }
    return id;
}

static int pmf_compile_named(bw_op_t *op, const bw_op_cenv_t *env, char **err,
                             const char *opname)
{
    bw_str_t rest = bw_str_n(op->param, op->param_len), tok, content;
    apr_pool_t *tmp = env->temp_pool ? env->temp_pool : env->pool;
    bw_ac_t *ac = bw_ac_create(env->pool, 1);
    int id = 0, nfiles = 0;

    while (bw_op_next_token(&rest, " \t", &tok)) {
        const char *path;
        char *rerr = NULL;
        if (memchr(tok.data, '\0', tok.len)) {
            *err = apr_psprintf(env->pool, "@%s: NUL byte in file name \"%s\"", opname,
                                bw_op_log_escape(env->pool, tok, 0));
            return -1;
        }
        if (bw_op_is_url(tok)) {
            *err = apr_psprintf(env->pool, "@%s: loading phrases from a URL is not supported "
                                "(\"%s\"); download the file and name its local path",
                                opname, bw_str_pdup(env->pool, tok));
            return -1;
        }
        path = bw_op_data_path(tmp, env->file, bw_str_pdup(tmp, tok));
        if (bw_op_read_file(tmp, opname, "phrase file", path, &content, &rerr) < 0) {
            *err = apr_pstrdup(env->pool, rerr);
            return -1;
        }
        id = add_lines(ac, content, id);
        nfiles++;
    }
    if (nfiles == 0) {
        *err = apr_psprintf(env->pool, "@%s: no file name in the parameter", opname);
        return -1;
    }
    bw_ac_compile(ac);
    op->data = ac;
    return 0;
}

static int pmf_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    return pmf_compile_named(op, env, err, op->def ? op->def->name : "pmFromFile");
}

const bw_op_def_t bw_op_pm_from_file = {
    "pmFromFile", BW_OP_PARAM_REQUIRED | BW_OP_SCAN_PHRASES, pmf_compile, bw_op_pm_execute, NULL, NULL
};

const bw_op_def_t bw_op_pmf = {
    "pmf", BW_OP_PARAM_REQUIRED | BW_OP_SCAN_PHRASES, pmf_compile, bw_op_pm_execute, NULL, NULL
};
