/*
 * @inspectFile — run a script on each value (uploaded files' temporary names).
 *
 * Description: ModSecurity runs the named script for each value, typically
 *   FILES_TMPNAMES. A Lua script (the path ends in ".lua") runs inside the
 *   server: its main(value) returning nil or false passes, anything else
 *   matches, a returned string being the match message. Other programs are
 *   not run: a rule naming one fails to load with a message saying so.
 * Arguments: the script path, relative to the rule file's directory.
 * Returns: 1 when the script says so, 0 otherwise; -1 (logged, no match)
 *   when it fails or hits its instruction or memory limit.
 * Example: SecRule FILES_TMPNAMES "@inspectFile scripts/av.lua" "id:1,deny"
 */
#include "op_internal.h"
#include "bw_lua.h"

static int inspect_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    if (bw_lua_is_script(op->param))
        return bw_op_script_compile(op, env, err);
    *err = apr_pstrdup(env->pool,
                       "@inspectFile is not supported: Bulwark does not run external programs");
    return -1;
}

static int inspect_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    if (bw_lua_is_script(op->param))
        return bw_op_script_run(op->data, run, &value);
    run->error = "@inspectFile is not supported";
    return -1;
}

const bw_op_def_t bw_op_inspect_file = {
    "inspectFile", BW_OP_PARAM_REQUIRED, inspect_compile, inspect_execute, NULL, NULL
};
