/*
 * @noMatch — never matches.
 *
 * Description: Matches no value; used to disable a rule while keeping it (and
 *   its non-disruptive side effects in a chain) in the configuration.
 * Arguments: none.
 * Returns: 0, always.
 * Example: SecRule ARGS "@noMatch" "id:1,pass"
 */
#include "op_internal.h"

static int nm_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    return 0;
}

const bw_op_def_t bw_op_no_match = {
    "noMatch", BW_OP_PARAM_NONE, NULL, nm_execute, NULL, NULL
};
