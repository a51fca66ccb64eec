// replaceComments
//
// Description: replaces each C comment /* ... */ with one space (so
//   "UNION/**/SELECT" cannot hide a keyword boundary); an unterminated
//   comment is replaced, to the end of the input, by one space too.
//   Consecutive comments give consecutive spaces. A "*/" outside a comment
//   is left alone.
// Example: "UNION/**/SELECT/*x*//*y*/1*/" -> "UNION SELECT  1*/"
// (Line comments: the markers above would end a block comment.)

#include "tfn_internal.h"

static int replace_comments(const bw_tfn_env_t *env, apr_pool_t *pool,
                            bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i = 0;
    int in_comment = 0;

    tfn_out_init(&o, pool, in, in.len);
    while (i < in.len) {
        int two = in.len - i >= 2;
        if (!in_comment && two && in.data[i] == '/' && in.data[i + 1] == '*') {
            in_comment = 1;
            i += 2;
        } else if (in_comment && two && in.data[i] == '*'
                   && in.data[i + 1] == '/') {
            in_comment = 0;
            tfn_out_byte(&o, ' ');
            i += 2;
        } else {
            if (!in_comment)
                tfn_out_byte(&o, (unsigned char)in.data[i]);
            i++;
        }
    }
    if (in_comment)
        tfn_out_byte(&o, ' ');
    return tfn_out_finish(&o, out);
}

// Triggers: only "/*" starts what is replaced, and '*' is much rarer than
// '/' in benign values (0.6% of the lines of tests/detect/benign against
// 13%: paths, URLs, dates), so '*' is the one that triggers.
#define REPLACE_COMMENTS_TRIGGERS(k) BW_BS_BYTE(k, '*')

const bw_tfn_def_t bw_tfn_replace_comments =
    TFN_DEF("replaceComments", replace_comments, REPLACE_COMMENTS_TRIGGERS);
