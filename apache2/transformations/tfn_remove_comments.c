// removeComments
//
// Description: removes comments as ModSecurity does, without knowing the
//   language: a C comment /* ... */ or an HTML comment <!-- ... --> is
//   removed (inside one, either terminator ends it); an unterminated one is
//   removed to the end of the input and replaced by a single space. "--" or
//   "#" outside a comment starts a line comment that, as in ModSecurity,
//   runs to the end of the input (not only of the line). Consecutive
//   comments are not compressed. ModSecurity's loop also copies the byte
//   right after a closing marker without looking at it (so "/**/#x" keeps
//   "#x"); here every byte is examined.
// Example: "UNION/**/SELECT<!-- x -->1 -- rest" -> "UNIONSELECT1 ";
//          "a/*b" -> "a "
// (Line comments: the markers above would end a block comment.)

#include "tfn_internal.h"

static int starts(bw_str_t in, size_t i, const char *lit, size_t n)
{
    return in.len - i >= n && memcmp(in.data + i, lit, n) == 0;
}

static int remove_comments(const bw_tfn_env_t *env, apr_pool_t *pool,
                           bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i = 0;
    int in_comment = 0;

    tfn_out_init(&o, pool, in, in.len);
    while (i < in.len) {
        if (in_comment) {
            if (starts(in, i, "*/", 2) || starts(in, i, "-->", 3)) {
                i += in.data[i] == '*' ? 2 : 3;
                in_comment = 0;
            } else {
                i++;
            }
        } else if (starts(in, i, "/*", 2) || starts(in, i, "<!--", 4)) {
            i += in.data[i] == '/' ? 2 : 4;
            in_comment = 1;
        } else if (starts(in, i, "--", 2) || in.data[i] == '#') {
            break;
        } else {
            tfn_out_byte(&o, (unsigned char)in.data[i]);
            i++;
        }
    }
    if (in_comment)
        tfn_out_byte(&o, ' ');
    return tfn_out_finish(&o, out);
}

// Triggers: one byte of each thing that removes anything: '*' of "/*",
// '-' of "<!--" and "--", and '#'. Without them no comment starts and every
// byte is copied; '/' and '<' alone are plain bytes, so they are not
// needed.
#define REMOVE_COMMENTS_TRIGGERS(k)                                          \
    (BW_BS_BYTE(k, '*') | BW_BS_BYTE(k, '-') | BW_BS_BYTE(k, '#'))

const bw_tfn_def_t bw_tfn_remove_comments =
    TFN_DEF("removeComments", remove_comments, REMOVE_COMMENTS_TRIGGERS);
