/*
 * @pm — phrase match.
 *
 * Description: Case-insensitive search for any of a set of phrases anywhere
 *   in the value, with one Aho-Corasick pass (bw_acmatch.c) whatever the
 *   number of phrases.
 * Arguments: phrases separated by spaces (may contain %{macros}). As in
 *   ModSecurity, a |..| block of hex byte pairs inside a phrase stands for
 *   those bytes ("|0d 0a|", spaces inside the block do not separate
 *   phrases); a |..| that is not valid hex is taken literally.
 * Returns: 1 when a phrase occurs, 0 otherwise. The phrase reported (and,
 *   with capture, put in captures[0]) is the one whose occurrence ends
 *   first, the longest at that position, spelt as in the parameter.
 * Example: SecRule REQUEST_HEADERS:User-Agent "@pm nikto sqlmap" "id:1,..."
 *   logs: Matched phrase "sqlmap" at REQUEST_HEADERS:User-Agent.
 */
#include <string.h>
#include "op_internal.h"

/* s points just after a '|'. When a valid hex block (pairs of hex digits,
 * spaces allowed between pairs) closes with '|', returns its length up to
 * the closing '|'; otherwise -1. */
static long hex_block_len(const char *s, size_t n)
{
    size_t i = 0, digits = 0;

    while (i < n && s[i] != '|') {
        if (s[i] == ' ') {
            if (digits % 2)
                return -1;
        } else if (bw_hexval(s[i]) < 0) {
            return -1;
        } else {
            digits++;
        }
        i++;
    }
    return (i < n && digits > 0 && digits % 2 == 0) ? (long)i : -1;
}

/* Decode the next phrase of p starting at *pos into out (capacity p.len);
 * returns its length, 0 when no phrase is left. */
static size_t next_phrase(bw_str_t p, size_t *pos, char *out)
{
    size_t i = *pos, o = 0;

    while (i < p.len && p.data[i] == ' ')
        i++;
    while (i < p.len && p.data[i] != ' ') {
        long bl;
        if (p.data[i] == '|' && (bl = hex_block_len(p.data + i + 1, p.len - i - 1)) > 0) {
            const char *h = p.data + i + 1;
            long k;
            for (k = 0; k < bl; k++) {
                if (h[k] == ' ')
                    continue;
                out[o++] = (char)(bw_hexval(h[k]) * 16
                                  + bw_hexval(h[k + 1]));
                k++;
            }
            i += (size_t)bl + 2;
            continue;
        }
        out[o++] = p.data[i++];
    }
    *pos = i;
    return o;
}

static int pm_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    bw_str_t param = bw_str_n(op->param, op->param_len);
    apr_pool_t *tmp = env->temp_pool ? env->temp_pool : env->pool;
    char *buf = apr_palloc(tmp, param.len + 1);
    bw_ac_t *ac = bw_ac_create(env->pool, 1);
    size_t pos = 0, n;
    int id = 0;

    while ((n = next_phrase(param, &pos, buf)) > 0)
        bw_ac_add(ac, bw_str_n(buf, n), id++);
    if (id == 0 && !env->runtime) {
        *err = apr_pstrdup(env->pool, "@pm: no phrases in the parameter");
        return -1;
    }
    bw_ac_compile(ac);
    op->data = ac;
    return 0;
}

int bw_op_pm_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    bw_ac_match_t m;

    if (!bw_ac_search((const bw_ac_t *)op->data, value, &m))
        return 0;
    if (run->capture) {
        run->captures[0] = bw_str_n(bw_str_pdup(run->pool, m.pattern), m.pattern.len);
        run->ncaptures = 1;
    }
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "Matched phrase \"%s\" at %s.",
                                bw_op_log_escape(run->pool, m.pattern, 0), run->var_name);
    return 1;
}

const bw_op_def_t bw_op_pm = {
    "pm", BW_OP_PARAM_REQUIRED | BW_OP_MACROS | BW_OP_SCAN_PHRASES, pm_compile, bw_op_pm_execute, NULL, NULL
};
