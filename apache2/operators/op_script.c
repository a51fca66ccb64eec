/*
 * The operator of a SecRuleScript rule, and the Lua half of @inspectFile.
 *
 * Description: runs a Lua script's main() inside the transaction (the
 *   executor lends run->script, which gives the script m.getvar, m.setvar,
 *   m.log). SecRuleScript's rule has no targets, so this runs once per
 *   evaluation of the rule; @inspectFile x.lua calls main(value) for each
 *   value. Not in the registry: a SecRule cannot name it.
 * Arguments: the script path, relative to the rule file's directory.
 * Returns: match when main returns something other than nil or false; the
 *   returned string is the match message. A script error, or one that
 *   hits the instruction or memory limit, is an operator error: logged,
 *   and the rule does not match.
 * Example: SecRuleScript scripts/score.lua "id:1,phase:2,deny"
 */
#include "op_internal.h"
#include "bw_lua.h"

int bw_op_script_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    const char *path = bw_op_data_path(env->pool, env->file, op->param);
    char *why = NULL;
    op->data = bw_lua_script_load(env->pool, path, &why);
    if (!op->data) {
        *err = why;
        return -1;
    }
    return 0;
}

int bw_op_script_run(const struct bw_lua_script_s *s, bw_op_run_t *run, const bw_str_t *arg)
{
    const char *msg = NULL, *err = NULL;
    int rc;
    if (!run->script) {
        run->error = "a Lua script runs only inside a transaction";
        return -1;
    }
    rc = run->script(run->script_host, s, arg, &msg, &err);
    if (rc < 0)
        run->error = err;
    else if (rc == 1)
        run->msg = msg;
    return rc;
}

static int script_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    return bw_op_script_run(op->data, run, NULL);
}

const bw_op_def_t bw_op_script = {
    "luaScript", BW_OP_PARAM_REQUIRED, bw_op_script_compile, script_execute, NULL, NULL
};
