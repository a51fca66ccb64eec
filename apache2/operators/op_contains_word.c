/*
 * @containsWord — whole-word substring match.
 *
 * Description: Case-sensitive search for the parameter in the value where
 *   the occurrence is not part of a longer word: the bytes just before and
 *   just after it are absent (start/end of value) or not word characters
 *   (ASCII letters, digits and '_').
 * Arguments: the word to look for (may contain %{macros}). An empty
 *   parameter matches every value, as in ModSecurity.
 * Returns: 1 when a whole-word occurrence exists, 0 otherwise.
 * Example: SecRule ARGS "@containsWord select" "id:1,..."
 *   matches "select * from t" and "x;select", not "selected".
 *   logs: String match "select" at ARGS:q.
 */
#include "op_internal.h"

static int is_word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '_';
}

static int contains_word_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    size_t n = op->param_len, pos = 0;
    const char *hit;

    if (n > 0) {
        for (;;) {
            size_t at, end;
            if (pos + n > value.len)
                return 0;
            hit = bw_memmem(value.data + pos, value.len - pos, op->param, n);
            if (hit == NULL)
                return 0;
            at = (size_t)(hit - value.data);
            end = at + n;
            if ((at == 0 || !is_word_byte((unsigned char)value.data[at - 1]))
                && (end == value.len || !is_word_byte((unsigned char)value.data[end])))
                break;
            pos = at + 1;
        }
    }
    if (!run->no_msg)
        run->msg = bw_op_param_msg(run, op, "String match");
    return 1;
}

const bw_op_def_t bw_op_contains_word = {
    "containsWord", BW_OP_PARAM_REQUIRED | BW_OP_MACROS, NULL, contains_word_execute, NULL, NULL
};
