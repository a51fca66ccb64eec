/*
 * @streq — string equality.
 *
 * Description: Case-sensitive, byte-for-byte comparison of the whole value
 *   with the parameter (NUL bytes included).
 * Arguments: the string to compare with (may contain %{macros}); may be
 *   empty, then only an empty value matches.
 * Returns: 1 when value and parameter are identical, 0 otherwise.
 * Example: SecRule REQUEST_METHOD "@streq POST" "id:1,..."
 *   logs: String match "POST" at REQUEST_METHOD.
 */
#include "op_internal.h"

static int streq_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    if (!bw_str_eq(value, bw_str_n(op->param, op->param_len)))
        return 0;
    if (!run->no_msg)
        run->msg = bw_op_param_msg(run, op, "String match");
    return 1;
}

/* The values it matches, as a regex for the scan. */
static const char *streq_scan_regex(const bw_op_t *op, apr_pool_t *pool)
{
    return bw_op_literal_regex(pool, op, "^", "\\z");
}

const bw_op_def_t bw_op_streq = {
    "streq", BW_OP_PARAM_OPTIONAL | BW_OP_MACROS, NULL, streq_execute, NULL,
    streq_scan_regex
};
