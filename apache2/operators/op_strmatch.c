/*
 * @strmatch — fast single-string match.
 *
 * Description: Case-sensitive search for the parameter anywhere in the
 *   value with Boyer-Moore-Horspool: the skip table is built once at
 *   compile time, so long patterns over long values skip most bytes.
 * Arguments: the string to look for (may contain %{macros}).
 * Returns: 1 when the parameter occurs in the value, 0 otherwise. An empty
 *   parameter matches every value.
 * Example: SecRule REQUEST_LINE "@strmatch WebZIP" "id:1,..."
 *   logs: String match "WebZIP" at REQUEST_LINE.
 */
#include <string.h>
#include "op_internal.h"

typedef struct {
    size_t skip[256];
} strmatch_data_t;

static int strmatch_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    strmatch_data_t *d = apr_palloc(env->pool, sizeof(*d));
    size_t n = op->param_len, i;

    for (i = 0; i < 256; i++)
        d->skip[i] = n;
    for (i = 0; i + 1 < n; i++)
        d->skip[(unsigned char)op->param[i]] = n - 1 - i;
    op->data = d;
    return 0;
}

static int strmatch_find(const strmatch_data_t *d, const char *pat, size_t n, bw_str_t v)
{
    size_t pos = 0;

    if (n == 0)
        return 1;
    while (pos + n <= v.len) {
        unsigned char last = (unsigned char)v.data[pos + n - 1];
        if (last == (unsigned char)pat[n - 1] && memcmp(v.data + pos, pat, n - 1) == 0)
            return 1;
        pos += d->skip[last];
    }
    return 0;
}

static int strmatch_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    if (!strmatch_find(op->data, op->param, op->param_len, value))
        return 0;
    if (!run->no_msg)
        run->msg = bw_op_param_msg(run, op, "String match");
    return 1;
}

const bw_op_def_t bw_op_strmatch = {
    "strmatch", BW_OP_PARAM_REQUIRED | BW_OP_MACROS, strmatch_compile, strmatch_execute, NULL, NULL
};
