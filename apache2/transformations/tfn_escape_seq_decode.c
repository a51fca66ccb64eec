/*
 * escapeSeqDecode
 *
 * Description: decodes ANSI C escapes: \a \b \f \n \r \t \v \\ \? \' \",
 *   \xHH (x or X, exactly two hex digits) and octal \O, \OO, \OOO (the low
 *   byte of the value, so \777 is 0xFF). For any other escaped byte,
 *   including a \x without two hex digits, ModSecurity drops the backslash
 *   and keeps the byte, and so does this ("\z" -> "z", "\x4" -> "x4"). A
 *   lone trailing backslash is kept.
 * Example: "\x41\102\n\q\\" -> "AB\nq\\" (the last two bytes: q, backslash)
 */
#include "tfn_internal.h"

/* The byte \c stands for when c is a one-letter escape, or -1. */
static int simple_escape(unsigned char c)
{
    if (c == '\\' || c == '?' || c == '\'' || c == '"')
        return c;
    return tfn_control_escape(c);
}

/* Decode the escape whose backslash is at in.data[i] (not the last byte);
 * sets *end past it. */
static unsigned char c_escape(bw_str_t in, size_t i, size_t *end)
{
    unsigned char c = (unsigned char)in.data[i + 1];
    int simple = simple_escape(c);
    size_t j;
    unsigned v = 0;

    *end = i + 2;
    if (simple >= 0)
        return (unsigned char)simple;
    if ((c | 0x20) == 'x') {
        if (in.len - i >= 4 && tfn_all_hex(in.data + i + 2, 2)) {
            *end = i + 4;
            return (unsigned char)tfn_hex_n(in.data + i + 2, 2);
        }
        return c;
    }
    if (!tfn_is_odigit(c))
        return c;
    for (j = i + 1; j < in.len && j < i + 4
                    && tfn_is_odigit((unsigned char)in.data[j]); j++)
        v = v * 8 + (unsigned)(in.data[j] - '0');
    *end = j;
    return (unsigned char)(v & 0xFF);
}

static int escape_seq_decode(const bw_tfn_env_t *env, apr_pool_t *pool,
                             bw_str_t in, bw_str_t *out)
{
    return tfn_backslash_decode(pool, in, out, c_escape);
}

/* Triggers: every escape starts with a backslash; other bytes are copied. */
#define ESCAPE_SEQ_TRIGGERS(k) BW_BS_BYTE(k, '\\')

const bw_tfn_def_t bw_tfn_escape_seq_decode =
    TFN_DEF("escapeSeqDecode", escape_seq_decode, ESCAPE_SEQ_TRIGGERS);
