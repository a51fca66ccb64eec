/*
 * exec — run a Lua script or an external program when the rule matches.
 *
 * Description: Non-disruptive. A ".lua" parameter is a Lua script, read
 *   and compiled by the rule reader (lang/bw_rule_actions.c) and run inside
 *   the server (run/bw_lua_api.c). Any other parameter is an external
 *   program: when the rule matches it runs with no arguments, the
 *   transaction's environment (run/bw_run_program.c: CGI-style request
 *   variables, HTTP_* headers, the ENV collection), stdin from /dev/null
 *   and the time limit of SecExternalProgramTimeout. Its output is logged
 *   at debug level and its result is ignored, as in ModSecurity; a program
 *   that cannot be started, writes nothing or runs past the limit is logged
 *   as a warning. It runs whatever the disruptive action, in DetectionOnly
 *   too.
 * Arguments: the script's or program's path; a relative path is taken from
 *   the directory of the rule's file. A program must exist and be
 *   executable at start-up, and SecExternalPrograms Off refuses it.
 * Example: SecRule ARGS "@rx attack" "id:1,phase:2,deny,exec:/usr/local/bin/notify"
 */
#include <string.h>
#include "actions/bw_action.h"
#include "operators/bw_op.h"
#include "operators/bw_lua.h"
#include "base/bw_spawn.h"

/* The compiled parameter of a program: its absolute path. */
typedef struct {
    const char *path;
} exec_t;

static const char *c_exec(bw_action_t *a, apr_pool_t *p)
{
    const char *path = bw_str_pdup(p, bw_str_trim(bw_str_make(a->param)));
    const char *why;
    exec_t *x;

    if (bw_lua_is_script(path)) {
        a->num = BW_EXEC_LUA;    /* the rule reader loads it */
        return NULL;
    }
    path = bw_spawn_absolute(p, bw_op_data_path(p, a->file, path));
    why = bw_spawn_check(p, path);
    if (why)
        return why;
    x = apr_pcalloc(p, sizeof(*x));
    x->path = path;
    a->num = BW_EXEC_PROGRAM;
    a->data = x;
    return NULL;
}

const char *bw_action_program(const bw_action_t *a)
{
    if (a->def->op != BW_A_EXEC || a->num != BW_EXEC_PROGRAM)
        return NULL;
    return ((const exec_t *)a->data)->path;
}

const bw_action_def_t bw_actions_exec[] = {
    { "exec", BW_AK_NONDISRUPTIVE, 1, BW_A_EXEC, c_exec },
    { NULL, BW_AK_META, 0, BW_A_ACCEPTED, NULL }
};
