// removeCommentsChar
//
// Description: removes the comment markers themselves — "/*", "*/",
//   "<!--", "-->", "--" and "#" — and keeps what is between them.
// Example: "UN/**/ION--x#<!--y-->" -> "UNIONxy"
// (Line comments: the markers above would end a block comment.)

#include "tfn_internal.h"

/* Length of the comment marker at in.data[i], or 0. */
static size_t marker_len(bw_str_t in, size_t i)
{
    static const struct { const char *lit; size_t n; } markers[] = {
        { "/*", 2 }, { "*/", 2 }, { "<!--", 4 }, { "-->", 3 }, { "--", 2 },
        { "#", 1 },
    };
    size_t k;
    for (k = 0; k < sizeof(markers) / sizeof(markers[0]); k++)
        if (in.len - i >= markers[k].n
            && memcmp(in.data + i, markers[k].lit, markers[k].n) == 0)
            return markers[k].n;
    return 0;
}

static int remove_comments_char(const bw_tfn_env_t *env, apr_pool_t *pool,
                                bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i = 0, n;

    tfn_out_init(&o, pool, in, in.len);
    while (i < in.len) {
        n = marker_len(in, i);
        if (n) {
            i += n;
        } else {
            tfn_out_byte(&o, (unsigned char)in.data[i]);
            i++;
        }
    }
    return tfn_out_finish(&o, out);
}

// Triggers: one byte of every marker: '*' ("/*", "*/"), '-' ("<!--",
// "-->", "--") and '#'. '/' and '<' alone are plain bytes.
#define COMMENT_CHAR_TRIGGERS(k)                                             \
    (BW_BS_BYTE(k, '*') | BW_BS_BYTE(k, '-') | BW_BS_BYTE(k, '#'))

const bw_tfn_def_t bw_tfn_remove_comments_char =
    TFN_DEF("removeCommentsChar", remove_comments_char, COMMENT_CHAR_TRIGGERS);
