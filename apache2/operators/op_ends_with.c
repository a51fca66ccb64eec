/*
 * @endsWith — suffix match.
 *
 * Description: Case-sensitive check that the value ends with the parameter.
 * Arguments: the suffix (may contain %{macros}); an empty suffix matches
 *   every value.
 * Returns: 1 when the value ends with the parameter, 0 otherwise.
 * Example: SecRule REQUEST_FILENAME "@endsWith /wp-login.php" "id:1,..."
 *   logs: String match "/wp-login.php" at REQUEST_FILENAME.
 */
#include <string.h>
#include "op_internal.h"

static int ends_with_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    if (op->param_len > value.len
        || (op->param_len
            && memcmp(value.data + value.len - op->param_len, op->param, op->param_len) != 0))
        return 0;
    if (!run->no_msg)
        run->msg = bw_op_param_msg(run, op, "String match");
    return 1;
}

/* The values it matches, as a regex for the scan. */
static const char *ends_with_scan_regex(const bw_op_t *op, apr_pool_t *pool)
{
    return bw_op_literal_regex(pool, op, "", "\\z");
}

const bw_op_def_t bw_op_ends_with = {
    "endsWith", BW_OP_PARAM_REQUIRED | BW_OP_MACROS, NULL, ends_with_execute, NULL,
    ends_with_scan_regex
};
