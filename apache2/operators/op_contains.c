/*
 * @contains — substring match.
 *
 * Description: Case-sensitive search for the parameter anywhere in the value.
 * Arguments: the string to look for (may contain %{macros}). An empty
 *   string is found in every value, as in ModSecurity.
 * Returns: 1 when the parameter occurs in the value, 0 otherwise.
 * Example: SecRule REQUEST_FILENAME "@contains /remote.php/webdav" "id:1,..."
 *   logs: String match "/remote.php/webdav" at REQUEST_FILENAME.
 */
#include "op_internal.h"

static int contains_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    if (op->param_len > value.len
        || bw_memmem(value.data, value.len, op->param, op->param_len) == NULL)
        return 0;
    if (!run->no_msg)
        run->msg = bw_op_param_msg(run, op, "String match");
    return 1;
}

/* The values it matches, as a regex for the scan. */
static const char *contains_scan_regex(const bw_op_t *op, apr_pool_t *pool)
{
    return bw_op_literal_regex(pool, op, "", "");
}

const bw_op_def_t bw_op_contains = {
    "contains", BW_OP_PARAM_REQUIRED | BW_OP_MACROS, NULL, contains_execute, NULL,
    contains_scan_regex
};
