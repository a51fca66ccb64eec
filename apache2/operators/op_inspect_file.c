/*
 * @inspectFile — run an external program on uploaded files (refused).
 *
 * Description: ModSecurity runs the named script for each uploaded file and
 *   matches on its output. Bulwark does not run external programs from
 *   inside the web server, so a rule using it fails to load with a message
 *   saying so, rather than loading and never doing what it promises.
 * Arguments: the program path (ignored).
 * Returns: compile always fails.
 * Example: SecRule FILES_TMPNAMES "@inspectFile /opt/av-scan.sh" "id:1,..."
 */
#include "op_internal.h"

static int inspect_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    *err = apr_pstrdup(env->pool,
                       "@inspectFile is not supported: Bulwark does not run external programs");
    return -1;
}

static int inspect_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    run->error = "@inspectFile is not supported";
    return -1;
}

const bw_op_def_t bw_op_inspect_file = {
    "inspectFile", BW_OP_PARAM_REQUIRED, inspect_compile, inspect_execute, NULL, NULL
};
