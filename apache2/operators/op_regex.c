/*
 * PCRE2 plumbing shared by @rx and the @verifyCC/@verifyCPF/@verifySSN
 * family: compiling with the options ModSecurity uses plus mandatory JIT,
 * turning match errors into messages that name the limit that was hit, and
 * the "regex, then checksum" loop of the verify operators.
 *
 * Compiled code belongs to the pool the operator was compiled in: a cleanup
 * frees it (the code and the JIT's executable memory) with the pool. PCRE2
 * allocates with malloc: the JIT compiler's working memory (hundreds of KB
 * for some CRS patterns) is freed as soon as the code is made, where a pool
 * allocator would keep it for the life of the configuration.
 */
#include <string.h>
#include "op_internal.h"

#define VERIFY_MAX_DIGITS 64   /* longer digit runs cannot be CC/CPF/SSN */

static apr_status_t code_cleanup(void *data)
{
    pcre2_code_free((pcre2_code *)data);
    return APR_SUCCESS;
}

pcre2_code *bw_op_regex_compile(const bw_op_t *op, const bw_op_cenv_t *env,
                                const char *opname, char **err)
{
    return bw_op_regex_compile_re(bw_str_n(op->param, op->param_len), 0, env, opname, err);
}

pcre2_code *bw_op_regex_compile_re(bw_str_t re, uint32_t extra, const bw_op_cenv_t *env,
                                   const char *opname, char **err)
{
    pcre2_code *code;
    PCRE2_UCHAR msg[256];
    PCRE2_SIZE eoff = 0;
    int ecode = 0, rc;

    code = pcre2_compile((PCRE2_SPTR)re.data, re.len,
                         PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY | extra, &ecode, &eoff, NULL);
    if (code == NULL) {
        pcre2_get_error_message(ecode, msg, sizeof(msg));
        *err = apr_psprintf(env->pool, "@%s: %s at offset %lu", opname, (const char *)msg,
                            (unsigned long)eoff);
        return NULL;
    }
    apr_pool_cleanup_register(env->pool, code, code_cleanup, apr_pool_cleanup_null);
    rc = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    if (rc != 0) {
        pcre2_get_error_message(rc, msg, sizeof(msg));
        *err = apr_psprintf(env->pool, "@%s: PCRE2 JIT compilation failed: %s", opname,
                            (const char *)msg);
        return NULL;
    }
    return code;
}

int bw_op_regex_error(bw_op_run_t *run, const char *opname, int rc)
{
    const char *limit = NULL;
    PCRE2_UCHAR msg[256];

    switch (rc) {
    case PCRE2_ERROR_MATCHLIMIT:
        limit = "match limit exceeded (SecPcreMatchLimit)";
        break;
    case PCRE2_ERROR_DEPTHLIMIT:
        limit = "depth limit exceeded (SecPcreMatchLimitRecursion)";
        break;
    case PCRE2_ERROR_HEAPLIMIT:
        limit = "heap limit exceeded";
        break;
    case PCRE2_ERROR_JIT_STACKLIMIT:
        limit = "JIT stack limit exceeded";
        break;
    default:
        break;
    }
    if (limit) {
        run->limit_hit = 1;
        run->error = apr_psprintf(run->pool, "@%s: PCRE2 %s", opname, limit);
    } else {
        pcre2_get_error_message(rc, msg, sizeof(msg));
        run->error = apr_psprintf(run->pool, "@%s: PCRE2 match error %d: %s", opname, rc,
                                  (const char *)msg);
    }
    return -1;
}

/* Digits of value[from..to) into out; returns their count, or
 * VERIFY_MAX_DIGITS + 1 when there are too many to be a number we check. */
static size_t collect_digits(bw_str_t value, size_t from, size_t to, unsigned char *out)
{
    size_t n = 0, i;
    for (i = from; i < to; i++) {
        unsigned char c = (unsigned char)value.data[i];
        if (c < '0' || c > '9')
            continue;
        if (n == VERIFY_MAX_DIGITS)
            return VERIFY_MAX_DIGITS + 1;
        out[n++] = (unsigned char)(c - '0');
    }
    return n;
}

int bw_op_verify_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value,
                         const char *opname, const char *label,
                         bw_op_digits_check_t check)
{
    unsigned char digits[VERIFY_MAX_DIGITS];
    size_t start = 0;

    if (run->md == NULL) {
        run->error = apr_psprintf(run->pool, "@%s: no PCRE2 match data", opname);
        return -1;
    }
    /* ModSecurity retries from every offset after a candidate that fails
     * its checksum, so overlapping candidates are all considered. */
    while (start <= value.len) {
        PCRE2_SIZE *ov;
        size_t n;
        int rc = pcre2_match((const pcre2_code *)op->data, (PCRE2_SPTR)value.data,
                             value.len, start, 0, run->md, run->mctx);
        if (rc == PCRE2_ERROR_NOMATCH)
            return 0;
        if (rc < 0)
            return bw_op_regex_error(run, opname, rc);
        ov = pcre2_get_ovector_pointer(run->md);
        n = collect_digits(value, ov[0], ov[1], digits);
        if (n > 0 && n <= VERIFY_MAX_DIGITS && check(digits, n)) {
            bw_str_t m = bw_str_n(value.data + ov[0], ov[1] - ov[0]);
            if (run->capture) {
                run->captures[0] = bw_str_n(bw_str_pdup(run->pool, m), m.len);
                run->ncaptures = 1;
            }
            /* The pattern, not the number: card numbers stay out of logs. */
            if (!run->no_msg)
                run->msg = bw_op_param_msg(run, op, label);
            return 1;
        }
        start = ov[0] + 1;
    }
    return 0;
}
