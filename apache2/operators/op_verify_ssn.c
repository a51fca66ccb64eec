/*
 * @verifySSN — US social security number detection.
 *
 * Description: Finds candidates with the regex given as parameter, then
 *   keeps those made of exactly 9 digits (separators ignored) that follow
 *   the SSA's numbering rules: area (first 3 digits) not 000, 666 or
 *   900-999; group (next 2) not 00; serial (last 4) not 0000.
 * Arguments: a PCRE2 regular expression for candidates (compiled like @rx).
 * Returns: 1 when a candidate is a plausible SSN, 0 otherwise, -1 on a
 *   PCRE2 limit. With capture, captures[0] is the candidate.
 * Example: SecRule RESPONSE_BODY "@verifySSN \d{3}-?\d{2}-?\d{4}" "id:1,..."
 *   logs: SSN match "\\d{3}-?\\d{2}-?\\d{4}" at RESPONSE_BODY.
 */
#include "op_internal.h"

static int ssn_ok(const unsigned char *d, size_t n)
{
    unsigned area, group, serial;

    if (n != 9)
        return 0;
    area = d[0] * 100u + d[1] * 10u + d[2];
    group = d[3] * 10u + d[4];
    serial = d[5] * 1000u + d[6] * 100u + d[7] * 10u + d[8];
    return area != 0 && area != 666 && area < 900 && group != 0 && serial != 0;
}

static int vssn_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    op->data = bw_op_regex_compile(op, env, "verifySSN", err);
    return op->data ? 0 : -1;
}

static int vssn_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    return bw_op_verify_execute(op, run, value, "verifySSN", "SSN match", ssn_ok);
}

const bw_op_def_t bw_op_verify_ssn = {
    "verifySSN", BW_OP_PARAM_REQUIRED, vssn_compile, vssn_execute, NULL, NULL
};
