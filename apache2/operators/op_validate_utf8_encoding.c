/*
 * @validateUtf8Encoding — the value must be well-formed UTF-8 (RFC 3629).
 *
 * Description: Decodes the value and reports the first of:
 *   - not enough bytes: a multi-byte sequence cut short by the end of value;
 *   - invalid byte value: a continuation byte (0x80-0xBF) where a character
 *     must start, a lead byte 0xF8-0xFF (5- and 6-byte forms), or a
 *     non-continuation byte inside a sequence;
 *   - overlong character: a code point encoded with more bytes than needed
 *     (e.g. C0 AF for '/'), a classic evasion;
 *   - restricted character: UTF-16 surrogates (U+D800-U+DFFF) and code
 *     points above U+10FFFF.
 *   NUL bytes are ordinary (valid) characters.
 * Arguments: none.
 * Returns: 1 when the value is not valid UTF-8, 0 when it is.
 * Example: SecRule ARGS "@validateUtf8Encoding" "id:1,..."
 *   "%c0%af" decoded logs: Invalid UTF-8 encoding: overlong character detected at ARGS:x.
 */
#include "op_internal.h"

enum { U8_OK, U8_SHORT, U8_INVALID, U8_OVERLONG, U8_RESTRICTED };

/* Check the character starting at s[0] (n bytes available); on U8_OK
 * *used is its length. */
static int utf8_char(const unsigned char *s, size_t n, size_t *used)
{
    static const uint32_t min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    unsigned char c = s[0];
    size_t need, k;
    uint32_t cp;

    if (c < 0x80) {
        *used = 1;
        return U8_OK;
    }
    if ((c & 0xE0) == 0xC0) {
        need = 2;
        cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
        need = 3;
        cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
        need = 4;
        cp = c & 0x07u;
    } else {
        return U8_INVALID;
    }
    if (need > n)
        return U8_SHORT;
    for (k = 1; k < need; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return U8_INVALID;
        cp = (cp << 6) | (s[k] & 0x3Fu);
    }
    if (cp < min_cp[need])
        return U8_OVERLONG;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return U8_RESTRICTED;
    *used = need;
    return U8_OK;
}

static int vu8_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    static const char *const why[] = {
        NULL,
        "not enough bytes in character",
        "invalid byte value in character",
        "overlong character detected",
        "use of restricted character",
    };
    const unsigned char *s = (const unsigned char *)value.data;
    size_t i = 0, used = 0;
    int rc = U8_OK;

    while (i < value.len && (rc = utf8_char(s + i, value.len - i, &used)) == U8_OK)
        i += used;
    if (rc == U8_OK)
        return 0;
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "Invalid UTF-8 encoding: %s at %s.", why[rc],
                                run->var_name);
    return 1;
}

const bw_op_def_t bw_op_validate_utf8_encoding = {
    "validateUtf8Encoding", BW_OP_PARAM_NONE, NULL, vu8_execute, NULL, NULL
};
