/*
 * @unconditionalMatch — always matches.
 *
 * Description: Matches every value; what SecAction does implicitly, written
 *   as an operator so a SecRule can run its actions for each target.
 * Arguments: none.
 * Returns: 1, always.
 * Example: SecRule REMOTE_ADDR "@unconditionalMatch" "id:1,pass,setvar:tx.seen=1"
 *   logs: Unconditional match in SecAction.
 */
#include "op_internal.h"

static int um_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    /* ModSecurity's wording, whatever the target. */
    if (!run->no_msg)
        run->msg = "Unconditional match in SecAction.";
    return 1;
}

const bw_op_def_t bw_op_unconditional_match = {
    "unconditionalMatch", BW_OP_PARAM_NONE, NULL, um_execute, NULL, NULL
};
