/*
 * cmdLine
 *
 * Description: undoes the escaping tricks Windows and Unix shells accept in
 *   command lines (c^md, "cmd", c\md, cmd,/c): deletes \ " ' and ^, deletes
 *   white space before '/' and '(', turns ',' ';' and runs of space, tab, CR
 *   and LF into one space, and lower-cases everything else.
 * Example: "C^MD.exe  /c \"dir\";echo" -> "cmd.exe/c dir echo"
 */
#include "tfn_internal.h"

/* The bytes deleted or turned into a space. */
TFN_PRED(separators)
{
    tfn_v_t f = tfn_v_or(tfn_v_eq(v, '\\'), tfn_v_eq(v, '"'));
    f = tfn_v_or(f, tfn_v_or(tfn_v_eq(v, '\''), tfn_v_eq(v, '^')));
    f = tfn_v_or(f, tfn_v_or(tfn_v_eq(v, ' '), tfn_v_eq(v, ',')));
    f = tfn_v_or(f, tfn_v_or(tfn_v_eq(v, ';'), tfn_v_eq(v, '\t')));
    return tfn_v_or(f, tfn_v_or(tfn_v_eq(v, '\r'), tfn_v_eq(v, '\n')));
}

#define SEPARATOR_BYTES(k)                                                   \
    (BW_BS_BYTE(k, '\\') | BW_BS_BYTE(k, '"') | BW_BS_BYTE(k, '\'')          \
     | BW_BS_BYTE(k, '^') | BW_BS_BYTE(k, ' ') | BW_BS_BYTE(k, ',')          \
     | BW_BS_BYTE(k, ';') | BW_BS_BYTE(k, '\t') | BW_BS_BYTE(k, '\r')        \
     | BW_BS_BYTE(k, '\n'))
static const bw_byteset_t separator_set = BW_BYTESET(SEPARATOR_BYTES);

/* The trigger bytes: separators and capitals. */
TFN_PRED(triggers)
{
    return tfn_v_or(separators(v), tfn_v_upper(v));
}

/* Up to the first trigger byte the input comes out as it is. From there,
 * while no separator space is pending, a run up to the next separator is
 * copied lower-cased a block at a time ('/' and '(' in it only matter
 * after a pending space); separators, and the byte after a pending space,
 * go one at a time. */
static int cmd_line(const bw_tfn_env_t *env, apr_pool_t *pool, bw_str_t in,
                    bw_str_t *out)
{
    tfn_out_t o;
    int space = 0; /* the last byte written is a separator space */
    size_t i = tfn_find(in.data, 0, in.len, triggers), j;

    if (i == in.len) {
        *out = in;
        return 0;
    }
    tfn_out_init_at(&o, pool, in, in.len, i);
    for (; i < in.len; i++) {
        unsigned char c = (unsigned char)in.data[i];
        if (!space && !bw_byteset_has(&separator_set, c)) {
            j = tfn_find(in.data, i, in.len, separators);
            tfn_out_run_lower(&o, i, j - i);
            if ((i = j) == in.len)
                break;
            c = (unsigned char)in.data[i];
        }
        switch (c) {
        case '\\': case '"': case '\'': case '^':
            break; /* deleted; a pending space stays pending */
        case ' ': case ',': case ';': case '\t': case '\r': case '\n':
            if (!space)
                tfn_out_byte(&o, ' ');
            space = 1;
            break;
        case '/': case '(':
            if (space)
                tfn_out_truncate(&o, o.len - 1);
            space = 0;
            tfn_out_byte(&o, c);
            break;
        default:
            space = 0;
            tfn_out_byte(&o, tfn_lower(c));
            break;
        }
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: the deleted bytes, the separators and A-Z, each of which changes
 * an input on its own ("a^", "a,", "A"; the space as "a  b"). Without them
 * nothing is deleted, lowered or turned into a space, and '/' '(' only
 * drop a separator space written before them. */
#define CMD_LINE_TRIGGERS(k) (SEPARATOR_BYTES(k) | BW_BS_RANGE(k, 'A', 'Z'))

/* The output's bytes: the input's lower-cased, without the separators
 * (deleted or turned into spaces), with a space when there was one to turn
 * (a superset: the only one may have gone before a '/'). */
#define SPACE_MAKERS(k)                                                      \
    (BW_BS_BYTE(k, ' ') | BW_BS_BYTE(k, ',') | BW_BS_BYTE(k, ';')            \
     | BW_BS_BYTE(k, '\t') | BW_BS_BYTE(k, '\r') | BW_BS_BYTE(k, '\n'))
static void cmd_line_bytes(const bw_byteset_t *in, bw_byteset_t *out)
{
    static const bw_byteset_t makers = BW_BYTESET(SPACE_MAKERS);
    int w, space = 0;
    bw_byteset_lower(in, out);
    for (w = 0; w < 4; w++) {
        space |= (in->w[w] & makers.w[w]) != 0;
        out->w[w] &= ~separator_set.w[w];
    }
    if (space)
        out->w[0] |= (uint64_t)1 << ' ';
}

const bw_tfn_def_t bw_tfn_cmd_line = TFN_DEF_BYTES("cmdLine", cmd_line,
                                                   CMD_LINE_TRIGGERS, cmd_line_bytes);
