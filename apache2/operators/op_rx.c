/*
 * @rx — regular expression match.
 *
 * Description: Matches the value against a PCRE2 regular expression compiled
 *   once, with PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY as ModSecurity compiles,
 *   and JIT (a regex JIT cannot compile is a configuration error). Matching
 *   uses the transaction's match data and match context, which carry
 *   SecPcreMatchLimit / SecPcreMatchLimitRecursion.
 * Arguments: the regular expression (may contain %{macros}).
 * Returns: 1 on a match, 0 otherwise, -1 when PCRE2 stops on a limit
 *   (run->limit_hit = 1, run->error names the limit) or fails. With the
 *   capture action, captures[0] is the whole match and captures[1..9] groups
 *   1..9 (an unset group is empty).
 * Example: SecRule REQUEST_HEADERS:Host "@rx ^[\d.:]+$" "id:1,capture,..."
 *   logs: Pattern match "^[\\d.:]+$" at REQUEST_HEADERS:Host.
 */
#include <string.h>
#include "op_internal.h"

#define RX_MSG_MAX 252   /* ModSecurity cuts the logged regex here, adds " ..." */

typedef struct {
    pcre2_code *code;
    const char *msg_head;   /* Pattern match "<escaped regex>" at  */
    int whole;              /* matches every value, all of it, no group */
} rx_data_t;

/* ".*" with or without the anchors: with PCRE2_DOTALL the dot takes every
 * byte and with PCRE2_DOLLAR_ENDONLY '$' is the very end, so the match is
 * always the whole value, found without PCRE2 (CRS captures every header
 * name with "^.*$"). */
static int matches_whole(const char *re, size_t len)
{
    static const char *const forms[] = { ".*", "^.*", ".*$", "^.*$" };
    size_t i;
    for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
        if (len == strlen(forms[i]) && !memcmp(re, forms[i], len))
            return 1;
    return 0;
}

static int rx_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    rx_data_t *d = apr_pcalloc(env->pool, sizeof(*d));
    char *esc;

    d->code = bw_op_regex_compile(op, env, "rx", err);
    if (d->code == NULL)
        return -1;
    d->whole = matches_whole(op->param, op->param_len);
    /* The message never changes, so it is built here, not per match. */
    esc = bw_op_log_escape(env->pool, bw_str_n(op->param, op->param_len), 0);
    if (strlen(esc) > RX_MSG_MAX)
        d->msg_head = apr_psprintf(env->pool, "Pattern match \"%.*s ...\" at ", RX_MSG_MAX, esc);
    else
        d->msg_head = apr_psprintf(env->pool, "Pattern match \"%s\" at ", esc);
    op->data = d;
    return 0;
}

/* Copy whole match and groups 1..9 into run->captures. */
static void rx_captures(bw_op_run_t *run, bw_str_t value, int rc)
{
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(run->md);
    uint32_t n = rc > 0 ? (uint32_t)rc : pcre2_get_ovector_count(run->md);
    uint32_t i;

    if (n > 10)
        n = 10;
    for (i = 0; i < n; i++) {
        bw_str_t c = bw_str_n("", 0);
        if (ov[2 * i] != PCRE2_UNSET && ov[2 * i + 1] >= ov[2 * i])
            c = bw_str_n(value.data + ov[2 * i], ov[2 * i + 1] - ov[2 * i]);
        run->captures[i] = bw_str_n(bw_str_pdup(run->pool, c), c.len);
    }
    run->ncaptures = (int)n;
}

static int rx_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    const rx_data_t *d = op->data;
    int rc;

    if (run->md == NULL) {
        run->error = "@rx: no PCRE2 match data";
        return -1;
    }
    if (value.data == NULL)
        value = bw_str_n("", 0);
    if (d->whole) {
        if (run->capture) {
            run->captures[0] = bw_str_n(bw_str_pdup(run->pool, value), value.len);
            run->ncaptures = 1;
        }
        if (!run->no_msg)
            run->msg = apr_pstrcat(run->pool, d->msg_head, run->var_name, ".", NULL);
        return 1;
    }
    rc = pcre2_match(d->code, (PCRE2_SPTR)value.data, value.len, 0, 0, run->md, run->mctx);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc < 0)
        return bw_op_regex_error(run, "rx", rc);
    if (run->capture)
        rx_captures(run, value, rc);
    if (!run->no_msg)
        run->msg = apr_pstrcat(run->pool, d->msg_head, run->var_name, ".", NULL);
    return 1;
}

const bw_op_def_t bw_op_rx = {
    "rx", BW_OP_PARAM_OPTIONAL | BW_OP_MACROS | BW_OP_SCAN_REGEX, rx_compile, rx_execute, NULL, NULL
};
