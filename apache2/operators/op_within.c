/*
 * @within — the value occurs inside the parameter.
 *
 * Description: The reverse of @contains: case-sensitive search for the value
 *   anywhere in the parameter. Typical use is a list in a TX variable, e.g.
 *   allowed methods "GET HEAD POST"; note that, as in ModSecurity, any
 *   substring matches ("T HE" is within that list), and an empty value is
 *   always within.
 * Arguments: the string to search in (may contain %{macros}).
 * Returns: 1 when the value is found in the parameter, 0 otherwise.
 * Example: SecRule REQUEST_METHOD "!@within %{tx.allowed_methods}" "id:1,..."
 *   logs (on match): String match within "GET HEAD POST" at REQUEST_METHOD.
 */
#include "op_internal.h"

static int within_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    if (value.len > op->param_len
        || bw_memmem(op->param, op->param_len, value.data, value.len) == NULL)
        return 0;
    if (!run->no_msg)
        run->msg = bw_op_param_msg(run, op, "String match within");
    return 1;
}

const bw_op_def_t bw_op_within = {
    "within", BW_OP_PARAM_REQUIRED | BW_OP_MACROS, NULL, within_execute, NULL, NULL
};
