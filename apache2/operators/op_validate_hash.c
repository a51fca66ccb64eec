/*
 * @validateHash — the request's link signature is missing or wrong.
 *
 * Description: With SecHashEngine On, a value (the request target,
 *   REQUEST_URI) that the regex matches must carry the SecHashParam
 *   parameter, last, holding the HMAC-SHA1 that the hash engine signed the
 *   link with (base/bw_hmac.h: what is signed and under which key). The
 *   operator matches when it does not. A value the regex does not match,
 *   or any value while SecHashEngine is Off, does not match.
 * Arguments: a regular expression (as @rx: DOTALL, DOLLAR_ENDONLY, JIT).
 * Returns: 1 when the signature is missing or wrong (the message says
 *   which, and both values), 0 otherwise, -1 when PCRE2 fails.
 * Example: SecRule REQUEST_URI "@validateHash \.php" "id:1,phase:2,deny"
 *   logs: Request URI matched "\\.php" at REQUEST_URI. No Hash parameter
 */
#include <string.h>
#include "op_internal.h"
#include "base/bw_hmac.h"

typedef struct {
    pcre2_code *code;
    const char *msg_head;   /* Request URI matched "<escaped regex>" at  */
} vh_data_t;

static int vh_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    vh_data_t *d = apr_pcalloc(env->pool, sizeof(*d));
    d->code = bw_op_regex_compile(op, env, "validateHash", err);
    if (d->code == NULL)
        return -1;
    d->msg_head = apr_psprintf(env->pool, "Request URI matched \"%s\" at ",
                               bw_op_log_escape(env->pool, bw_str_n(op->param, op->param_len), 252));
    op->data = d;
    return 0;
}

static int vh_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    const vh_data_t *d = op->data;
    char want[BW_HMAC_HEX_LEN + 1];
    bw_str_t given, key;
    int rc;

    if (run->hash == NULL || run->hash_key == NULL)
        return 0;
    if (run->md == NULL) {
        run->error = "@validateHash: no PCRE2 match data";
        return -1;
    }
    if (value.data == NULL)
        value = bw_str_n("", 0);
    rc = pcre2_match(d->code, (PCRE2_SPTR)value.data, value.len, 0, 0, run->md, run->mctx);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc < 0)
        return bw_op_regex_error(run, "validateHash", rc);
    key = run->hash_key(run->script_host);
    rc = bw_hash_check_uri(run->hash, key, value, &given, want);
    if (rc == BW_HASH_VALID)
        return 0;
    if (run->no_msg)
        return 1;
    if (rc == BW_HASH_MISSING)
        run->msg = apr_pstrcat(run->pool, d->msg_head, run->var_name, ". No Hash parameter", NULL);
    else
        run->msg = apr_pstrcat(run->pool, d->msg_head, run->var_name,
                               ". Hash parameter hash value = [",
                               bw_op_log_escape(run->pool, given, 252),
                               "] Requested URI hash value = [", want, "]", NULL);
    return 1;
}

const bw_op_def_t bw_op_validate_hash = {
    "validateHash", BW_OP_PARAM_REQUIRED, vh_compile, vh_execute, NULL, NULL
};
