/*
 * @verifyCC — credit card number detection.
 *
 * Description: Finds candidates with the regex given as parameter, then
 *   keeps only those whose digits pass the Luhn (mod 10) checksum, which
 *   removes most false positives of a digits-only regex. A candidate that
 *   fails is retried from the next offset, so overlapping candidates count.
 * Arguments: a PCRE2 regular expression for candidate numbers (compiled like
 *   @rx, with JIT).
 * Returns: 1 when a candidate passes Luhn, 0 otherwise, -1 on a PCRE2 limit.
 *   With capture, captures[0] is the candidate. The message names the
 *   pattern, never the number (card numbers stay out of logs).
 * Example: SecRule RESPONSE_BODY "@verifyCC \d{13,16}" "id:1,capture,..."
 *   logs: CC# match "\\d{13,16}" at RESPONSE_BODY.
 */
#include "op_internal.h"

static int luhn_ok(const unsigned char *d, size_t n)
{
    unsigned sum = 0;
    int dbl = 0;
    size_t i;

    for (i = n; i-- > 0;) {
        unsigned v = d[i];
        if (dbl) {
            v *= 2;
            if (v > 9)
                v -= 9;
        }
        sum += v;
        dbl = !dbl;
    }
    return sum % 10 == 0;
}

static int vcc_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    op->data = bw_op_regex_compile(op, env, "verifyCC", err);
    return op->data ? 0 : -1;
}

static int vcc_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    return bw_op_verify_execute(op, run, value, "verifyCC", "CC# match", luhn_ok);
}

const bw_op_def_t bw_op_verify_cc = {
    "verifyCC", BW_OP_PARAM_REQUIRED, vcc_compile, vcc_execute, NULL, NULL
};
