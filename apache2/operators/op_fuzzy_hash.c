/*
 * @fuzzyHash — ssdeep similarity against a hash file (refused).
 *
 * Description: ModSecurity compares the value's ssdeep fuzzy hash with a
 *   list of known hashes. Bulwark is not built with ssdeep, so a rule using
 *   it fails to load with a message saying so.
 * Arguments: hash file and threshold (ignored).
 * Returns: compile always fails.
 * Example: SecRule FILES "@fuzzyHash ssdeep.txt 1" "id:1,..."
 */
#include "op_internal.h"

static int fuzzy_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    *err = apr_pstrdup(env->pool, "@fuzzyHash is not supported (no ssdeep)");
    return -1;
}

static int fuzzy_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    run->error = "@fuzzyHash is not supported";
    return -1;
}

const bw_op_def_t bw_op_fuzzy_hash = {
    "fuzzyHash", BW_OP_PARAM_REQUIRED, fuzzy_compile, fuzzy_execute, NULL, NULL
};
