/*
 * @validateByteRange — every byte of the value must be in the allowed set.
 *
 * Description: Counts the bytes of the value (NUL bytes included) that are
 *   not in the set given by the parameter; matches when there is at least
 *   one. The set is compiled once into a 256-entry table.
 * Arguments: comma-separated byte values (0-255) and inclusive ranges,
 *   e.g. "1-255" or "9,10,13,32-126,128-255"; spaces around items allowed.
 *   Anything else (a number above 255, a reversed range, a stray character)
 *   is a configuration error.
 * Returns: 1 when some byte is outside the set, 0 otherwise.
 * Example: SecRule ARGS "@validateByteRange 32-126" "id:1,..."
 *   logs: Found 3 byte(s) in ARGS:x outside range: 32-126.
 */
#include <string.h>
#include "op_internal.h"

typedef struct {
    unsigned char allowed[256];
} byte_range_t;

/* Strict decimal 0..255. */
static int parse_byte(bw_str_t s, unsigned *out)
{
    unsigned v = 0;
    size_t i;

    s = bw_str_trim(s);
    if (s.len == 0 || s.len > 3)
        return -1;
    for (i = 0; i < s.len; i++) {
        if (s.data[i] < '0' || s.data[i] > '9')
            return -1;
        v = v * 10 + (unsigned)(s.data[i] - '0');
    }
    if (v > 255)
        return -1;
    *out = v;
    return 0;
}

/* Mark one "N" or "N-M" item; -1 when malformed. */
static int add_item(byte_range_t *r, bw_str_t item)
{
    const char *dash = memchr(item.data, '-', item.len);
    unsigned lo, hi, c;

    if (dash == NULL) {
        if (parse_byte(item, &lo) < 0)
            return -1;
        hi = lo;
    } else {
        size_t n = (size_t)(dash - item.data);
        if (parse_byte(bw_str_n(item.data, n), &lo) < 0
            || parse_byte(bw_str_n(dash + 1, item.len - n - 1), &hi) < 0 || lo > hi)
            return -1;
    }
    for (c = lo; c <= hi; c++)
        r->allowed[c] = 1;
    return 0;
}

static int vbr_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    byte_range_t *r = apr_pcalloc(env->pool, sizeof(*r));
    bw_str_t rest = bw_str_n(op->param, op->param_len);

    if (bw_str_trim(rest).len == 0) {
        *err = apr_pstrdup(env->pool, "@validateByteRange: missing byte range");
        return -1;
    }
    while (rest.len) {
        const char *comma = memchr(rest.data, ',', rest.len);
        size_t n = comma ? (size_t)(comma - rest.data) : rest.len;
        bw_str_t item = bw_str_n(rest.data, n);

        if (add_item(r, item) < 0) {
            *err = apr_psprintf(env->pool, "@validateByteRange: invalid range \"%s\" "
                                "(expected N or N-M with 0 <= N <= M <= 255)",
                                bw_op_log_escape(env->pool, bw_str_trim(item), 0));
            return -1;
        }
        rest.data += comma ? n + 1 : n;
        rest.len -= comma ? n + 1 : n;
        if (comma && rest.len == 0) {
            *err = apr_pstrdup(env->pool, "@validateByteRange: empty item after ','");
            return -1;
        }
    }
    op->data = r;
    return 0;
}

static int vbr_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    const byte_range_t *r = op->data;
    size_t i, outside = 0;

    for (i = 0; i < value.len; i++)
        outside += !r->allowed[(unsigned char)value.data[i]];
    if (outside == 0)
        return 0;
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "Found %" APR_SIZE_T_FMT " byte(s) in %s outside range: %s.",
                                outside, run->var_name,
                                bw_op_log_escape(run->pool, bw_str_n(op->param, op->param_len), 0));
    return 1;
}

/* A value matches exactly when it has a byte outside the set. */
static int vbr_gate(const bw_op_t *op, uint64_t gate[4])
{
    const byte_range_t *r = op->data;
    unsigned c;
    memset(gate, 0, sizeof(uint64_t) * 4);
    for (c = 0; c < 256; c++)
        if (!r->allowed[c])
            gate[c / 64] |= (uint64_t)1 << (c % 64);
    return BW_OP_GATE_EXACT;
}

const bw_op_def_t bw_op_validate_byte_range = {
    "validateByteRange", BW_OP_PARAM_REQUIRED, vbr_compile, vbr_execute, vbr_gate, NULL
};
