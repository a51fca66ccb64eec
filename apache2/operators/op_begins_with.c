/*
 * @beginsWith — prefix match.
 *
 * Description: Case-sensitive check that the value starts with the parameter.
 * Arguments: the prefix (may contain %{macros}); an empty prefix matches
 *   every value.
 * Returns: 1 when the value begins with the parameter, 0 otherwise.
 * Example: SecRule REQUEST_LINE "!@beginsWith GET /" "id:1,..."
 *   logs (on match): String match "GET /" at REQUEST_LINE.
 */
#include <string.h>
#include "op_internal.h"

static int begins_with_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    if (op->param_len > value.len
        || (op->param_len && memcmp(value.data, op->param, op->param_len) != 0))
        return 0;
    if (!run->no_msg)
        run->msg = bw_op_param_msg(run, op, "String match");
    return 1;
}

/* The values it matches, as a regex for the scan. */
static const char *begins_with_scan_regex(const bw_op_t *op, apr_pool_t *pool)
{
    return bw_op_literal_regex(pool, op, "^", "");
}

const bw_op_def_t bw_op_begins_with = {
    "beginsWith", BW_OP_PARAM_REQUIRED | BW_OP_MACROS, NULL, begins_with_execute, NULL,
    begins_with_scan_regex
};
