/*
 * @verifyCPF — Brazilian CPF number detection.
 *
 * Description: Finds candidates with the regex given as parameter, then
 *   keeps those made of exactly 11 digits (separators ignored) whose two
 *   check digits are right (mod 11 weights 10..2 and 11..2) and that are
 *   not one digit repeated (000.000.000-00 etc. pass the checksum but are
 *   not issued).
 * Arguments: a PCRE2 regular expression for candidates (compiled like @rx).
 * Returns: 1 when a candidate is a valid CPF, 0 otherwise, -1 on a PCRE2
 *   limit. With capture, captures[0] is the candidate.
 * Example: SecRule ARGS "@verifyCPF \d{3}\.?\d{3}\.?\d{3}-?\d{2}" "id:1,..."
 *   logs: CPF# match "..." at ARGS:cpf.
 */
#include "op_internal.h"

/* Check digit over d[0..n) with weights n+1 .. 2. */
static unsigned cpf_digit(const unsigned char *d, size_t n)
{
    unsigned sum = 0;
    size_t i;

    for (i = 0; i < n; i++)
        sum += d[i] * (unsigned)(n + 1 - i);
    sum %= 11;
    return sum < 2 ? 0 : 11 - sum;
}

static int cpf_ok(const unsigned char *d, size_t n)
{
    size_t i;
    int all_same = 1;

    if (n != 11)
        return 0;
    for (i = 1; i < n; i++)
        if (d[i] != d[0])
            all_same = 0;
    if (all_same)
        return 0;
    return cpf_digit(d, 9) == d[9] && cpf_digit(d, 10) == d[10];
}

static int vcpf_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    op->data = bw_op_regex_compile(op, env, "verifyCPF", err);
    return op->data ? 0 : -1;
}

static int vcpf_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    return bw_op_verify_execute(op, run, value, "verifyCPF", "CPF# match", cpf_ok);
}

const bw_op_def_t bw_op_verify_cpf = {
    "verifyCPF", BW_OP_PARAM_REQUIRED, vcpf_compile, vcpf_execute, NULL, NULL
};
