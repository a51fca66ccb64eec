/*
 * @validateUrlEncoding — checks %-encoding in the value.
 *
 * Description: Looks at every '%' in the value: it must be followed by two
 *   hexadecimal digits. Other bytes are not judged (use @validateByteRange
 *   for that). The first problem found is reported.
 * Arguments: none.
 * Returns: 1 when the encoding is invalid, 0 when it is valid (or there is
 *   no '%').
 * Example: SecRule REQUEST_URI "@validateUrlEncoding" "id:1,..."
 *   "/a%zz" logs: Invalid URL Encoding: Non-hexadecimal digits used at REQUEST_URI.
 *   "/a%4"  logs: Invalid URL Encoding: Not enough characters at the end of input at REQUEST_URI.
 */
#include <string.h>
#include "op_internal.h"

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int vue_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    const char *why = NULL;
    size_t i = 0;

    while (i < value.len) {
        const char *pct = memchr(value.data + i, '%', value.len - i);
        if (pct == NULL)
            return 0;
        i = (size_t)(pct - value.data);
        if (i + 2 >= value.len) {
            why = "Not enough characters at the end of input";
            break;
        }
        if (!is_hex((unsigned char)value.data[i + 1]) || !is_hex((unsigned char)value.data[i + 2])) {
            why = "Non-hexadecimal digits used";
            break;
        }
        i += 3;
    }
    if (why == NULL)
        return 0;
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "Invalid URL Encoding: %s at %s.", why, run->var_name);
    return 1;
}

const bw_op_def_t bw_op_validate_url_encoding = {
    "validateUrlEncoding", BW_OP_PARAM_NONE, NULL, vue_execute, NULL, NULL
};
