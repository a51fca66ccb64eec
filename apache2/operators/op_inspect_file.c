/*
 * @inspectFile — run a Lua script or an external program on each value
 * (typically FILES_TMPNAMES, the stored uploads' names).
 *
 * Description: A Lua script (the path ends in ".lua") runs inside the
 *   server: its main(value) returning nil or false passes, anything else
 *   matches, a returned string being the match message (op_script.c).
 *   Any other file is an external program, run for each value with the
 *   value as its one argument (no shell), the transaction's environment
 *   (run/bw_run_program.c), stdin from /dev/null, and a time limit
 *   (SecExternalProgramTimeout). The first line of what it writes
 *   (stdout and stderr) is the verdict, as in ModSecurity: starting with
 *   "1" the value is clean (no match); anything else is a match, the line
 *   in the message. The exit status is not looked at. A program that
 *   writes nothing, cannot be started or runs past the time limit is an
 *   error (logged with the rule id; the rule does not match). Values
 *   containing a NUL byte cannot be an argument: an error too. Like
 *   @rbl, it allocates (from run->pool) whether it matches or not.
 *   FILES_TMPNAMES needs the files stored on disk (SecTmpSaveUploadedFiles
 *   On or SecUploadKeepFiles On|RelevantOnly).
 * Arguments: the script's or program's path; a relative path is taken from
 *   the directory of the rule's file. A program must exist and be
 *   executable at start-up, and SecExternalPrograms Off refuses it.
 * Returns: 1 when the script says so / the first line does not start with
 *   "1"; 0 otherwise; -1 (logged, no match) when the script fails or hits
 *   a limit, or the program gives no verdict.
 * Example: SecRule FILES_TMPNAMES "@inspectFile /usr/local/bin/runav" "id:1,deny"
 *   logs: File "/tmp/bulwark-upload-x" rejected by the approver script
 *   "/usr/local/bin/runav": 0 Eicar-Test-Signature FOUND
 */
#include <string.h>
#include "op_internal.h"
#include "bw_lua.h"

/* The longest first line kept in a message. */
#define VERDICT_MAX 256

typedef struct {
    const char *path;      /* absolute, checked at start-up */
} inspect_t;

static int inspect_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    const char *path, *why;
    inspect_t *in;

    if (bw_lua_is_script(op->param))
        return bw_op_script_compile(op, env, err);
    path = bw_str_pdup(env->pool, bw_str_trim(bw_str_n(op->param, op->param_len)));
    path = bw_spawn_absolute(env->pool, bw_op_data_path(env->pool, env->file, path));
    why = bw_spawn_check(env->pool, path);
    if (why) {
        *err = apr_psprintf(env->pool, "@inspectFile: %s", why);
        return -1;
    }
    in = apr_pcalloc(env->pool, sizeof(*in));
    in->path = path;
    op->data = in;
    return 0;
}

/* The verdict line: output up to the first newline, without "\r". */
static bw_str_t first_line(bw_str_t out, int *complete)
{
    const char *nl = memchr(out.data, '\n', out.len);
    bw_str_t line = bw_str_n(out.data, nl ? (size_t)(nl - out.data) : out.len);
    *complete = nl != NULL;
    if (line.len && line.data[line.len - 1] == '\r')
        line.len--;
    return line;
}

/* -1 with run->error when the run gave no verdict to go by. */
static int no_verdict(bw_op_run_t *run, const inspect_t *in, const bw_spawn_result_t *res)
{
    const char *why = res->timed_out || res->truncated || res->output.len
                      ? bw_spawn_describe(run->pool, res, &run->spawn->lim)
                      : apr_pstrcat(run->pool, "wrote nothing (",
                                    bw_spawn_describe(run->pool, res, &run->spawn->lim), ")", NULL);
    run->error = apr_psprintf(run->pool, "@inspectFile: program \"%s\" gave no verdict: %s",
                              in->path, why);
    return -1;
}

static int inspect_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    const inspect_t *in = op->data;
    const char *argv[3], *err = NULL;
    bw_spawn_result_t res;
    bw_str_t line;
    int complete;

    if (bw_lua_is_script(op->param))
        return bw_op_script_run(op->data, run, &value);
    if (!run->spawn) {
        run->error = "@inspectFile: no program may run here";
        return -1;
    }
    if (memchr(value.data, '\0', value.len)) {
        run->error = "@inspectFile: the value contains a NUL byte and cannot be an argument";
        return -1;
    }
    argv[0] = in->path;
    argv[1] = apr_pstrmemdup(run->pool, value.data, value.len);
    argv[2] = NULL;
    if (bw_spawn_run(run->pool, argv, run->spawn->env(run->spawn->baton), &run->spawn->lim,
                     &res, &err) != 0) {
        run->error = apr_psprintf(run->pool, "@inspectFile: %s", err);
        return -1;
    }
    line = first_line(res.output, &complete);
    /* killed past the output limit, a complete first line still decides */
    if (res.output.len == 0 || res.timed_out || (res.truncated && !complete))
        return no_verdict(run, in, &res);
    if (line.len && line.data[0] == '1')
        return 0;
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "File \"%s\" rejected by the approver script \"%s\": %s",
                                bw_op_log_escape(run->pool, value, 0), in->path,
                                bw_op_log_escape(run->pool, line, VERDICT_MAX));
    return 1;
}

const char *bw_op_program(const bw_op_t *op)
{
    if (op->def != &bw_op_inspect_file || !op->data || bw_lua_is_script(op->param))
        return NULL;
    return ((const inspect_t *)op->data)->path;
}

const bw_op_def_t bw_op_inspect_file = {
    "inspectFile", BW_OP_PARAM_REQUIRED, inspect_compile, inspect_execute, NULL, NULL
};
