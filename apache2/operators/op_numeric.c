/*
 * @eq @ne @gt @ge @lt @le — integer comparisons.
 *
 * Description: Both the value and the parameter are converted to integers
 *   the way ModSecurity does (atoi rules: leading white space, optional sign,
 *   decimal digits up to the first other byte; no digits gives 0, so
 *   "abc" and "" are 0 and "12abc" is 12), then compared as
 *   value <op> parameter. Out-of-range numbers saturate at INT_MIN/INT_MAX.
 * Arguments: the number to compare with (may contain %{macros}, e.g.
 *   %{tx.inbound_anomaly_score_threshold}); converted once per compile.
 * Returns: 1 when the comparison holds, 0 otherwise.
 * Example: SecRule TX:ANOMALY_SCORE "@ge 5" "id:1,..."
 *   logs: Operator GE matched 5 at TX:anomaly_score.
 */
#include "op_internal.h"

enum { NUM_EQ, NUM_NE, NUM_GT, NUM_GE, NUM_LT, NUM_LE };

static const char *const num_label[] = { "EQ", "NE", "GT", "GE", "LT", "LE" };

static int num_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    int *right = apr_palloc(env->pool, sizeof(*right));
    *right = bw_op_atoi(bw_str_n(op->param, op->param_len));
    op->data = right;
    return 0;
}

static int num_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value, int kind)
{
    int left = bw_op_atoi(value), right = *(const int *)op->data, hit;

    switch (kind) {
    case NUM_EQ: hit = left == right; break;
    case NUM_NE: hit = left != right; break;
    case NUM_GT: hit = left > right; break;
    case NUM_GE: hit = left >= right; break;
    case NUM_LT: hit = left < right; break;
    default:     hit = left <= right; break;
    }
    if (!hit)
        return 0;
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "Operator %s matched %d at %s.", num_label[kind],
                                right, run->var_name);
    return 1;
}

static int eq_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t v)
{
    return num_execute(op, run, v, NUM_EQ);
}

static int ne_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t v)
{
    return num_execute(op, run, v, NUM_NE);
}

static int gt_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t v)
{
    return num_execute(op, run, v, NUM_GT);
}

static int ge_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t v)
{
    return num_execute(op, run, v, NUM_GE);
}

static int lt_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t v)
{
    return num_execute(op, run, v, NUM_LT);
}

static int le_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t v)
{
    return num_execute(op, run, v, NUM_LE);
}

#define NUM_FLAGS (BW_OP_PARAM_REQUIRED | BW_OP_MACROS)
const bw_op_def_t bw_op_eq = { "eq", NUM_FLAGS, num_compile, eq_execute, NULL, NULL };
const bw_op_def_t bw_op_ne = { "ne", NUM_FLAGS, num_compile, ne_execute, NULL, NULL };
const bw_op_def_t bw_op_gt = { "gt", NUM_FLAGS, num_compile, gt_execute, NULL, NULL };
const bw_op_def_t bw_op_ge = { "ge", NUM_FLAGS, num_compile, ge_execute, NULL, NULL };
const bw_op_def_t bw_op_lt = { "lt", NUM_FLAGS, num_compile, lt_execute, NULL, NULL };
const bw_op_def_t bw_op_le = { "le", NUM_FLAGS, num_compile, le_execute, NULL, NULL };
