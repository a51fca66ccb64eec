/*
 * normalizePath, normalisePath, normalizePathWin, normalisePathWin
 *
 * Description: normalizes a path without touching the file system:
 *   collapses runs of '/', drops "." segments and resolves ".." against the
 *   segment before it. An absolute path never goes above its root ("/../x"
 *   is "/x"); a relative path keeps the ".." segments that have nothing left
 *   to remove ("a/../../x" is "../x"), as the ModSecurity manual says. A
 *   trailing '/' is kept only when the input had one. The Win variants first
 *   treat '\' as '/' (and write '/'). Both spellings are registered.
 * Example: "/a/./b//../c/" -> "/a/c/"; "x/../../y" -> "../y";
 *          normalizePathWin: c:\windows\..\boot.ini -> c:/boot.ini
 */
#include "tfn_internal.h"

static int is_sep(unsigned char c, int win)
{
    return c == '/' || (win && c == '\\');
}

/* Append one segment, with its separator unless it is the first after base
 * (the root '/' of an absolute path, or nothing). */
static void append_segment(tfn_out_t *o, size_t base, const char *seg,
                           size_t n)
{
    if (o->len > base)
        tfn_out_byte(o, '/');
    tfn_out_mem(o, seg, n);
}

/* Remove the last segment produced, never going below floor. */
static void pop_segment(tfn_out_t *o, size_t floor)
{
    const char *d = tfn_out_data(o);
    size_t p = o->len;
    while (p > floor && d[p - 1] != '/')
        p--;
    if (p > floor)
        p--; /* its separator too */
    tfn_out_truncate(o, p);
}

static int normalize(apr_pool_t *pool, bw_str_t in, bw_str_t *out, int win)
{
    tfn_out_t o;
    size_t i = 0, start, n, base, floor;
    int absolute, trailing;

    /* one segment (no separator): the same, unless it is "." */
    if (in.len == 0 || (!memchr(in.data, '/', in.len) && !(win && memchr(in.data, '\\', in.len))
                        && !(in.len == 1 && in.data[0] == '.'))) {
        *out = in;
        return 0;
    }
    absolute = is_sep((unsigned char)in.data[0], win);
    trailing = is_sep((unsigned char)in.data[in.len - 1], win);
    tfn_out_init(&o, pool, in, in.len);
    if (absolute)
        tfn_out_byte(&o, '/');
    base = floor = o.len; /* floor: below it are the root and kept ".." */
    while (i < in.len) {
        while (i < in.len && is_sep((unsigned char)in.data[i], win))
            i++;
        for (start = i; i < in.len && !is_sep((unsigned char)in.data[i], win);)
            i++;
        n = i - start;
        if (n == 0 || (n == 1 && in.data[start] == '.'))
            continue;
        if (n == 2 && in.data[start] == '.' && in.data[start + 1] == '.') {
            if (o.len > floor) {
                pop_segment(&o, floor);
            } else if (!absolute) {
                append_segment(&o, base, "..", 2);
                floor = o.len;
            }
            continue;
        }
        append_segment(&o, base, in.data + start, n);
    }
    if (trailing && o.len > base)
        tfn_out_byte(&o, '/');
    return tfn_out_finish(&o, out);
}

static int normalize_path(const bw_tfn_env_t *env, apr_pool_t *pool,
                          bw_str_t in, bw_str_t *out)
{
    return normalize(pool, in, out, 0);
}

static int normalize_path_win(const bw_tfn_env_t *env, apr_pool_t *pool,
                              bw_str_t in, bw_str_t *out)
{
    return normalize(pool, in, out, 1);
}

/* Triggers: without a separator the input is one segment, written back as
 * it is unless it is "." (dropped: hence '.'); ".." stays when there is
 * nothing to pop. The separators: "a//b" loses a '/', "a\b" becomes
 * "a/b". */
#define PATH_TRIGGERS(k) (BW_BS_BYTE(k, '/') | BW_BS_BYTE(k, '.'))
#define PATH_WIN_TRIGGERS(k) (PATH_TRIGGERS(k) | BW_BS_BYTE(k, '\\'))

/* One segment, known from the bytes: as normalize's first test, without
 * its memchr (a '.' without a '/' is most dotted values: "12.5", names). */
static int one_segment(const bw_byteset_t *present, bw_str_t in)
{
    return !bw_byteset_has(present, '/') && !(in.len == 1 && in.data[0] == '.');
}

static int one_segment_win(const bw_byteset_t *present, bw_str_t in)
{
    return one_segment(present, in) && !bw_byteset_has(present, '\\');
}

const bw_tfn_def_t bw_tfn_normalize_path =
    TFN_DEF_UNCHANGED("normalizePath", normalize_path, PATH_TRIGGERS, one_segment);
const bw_tfn_def_t bw_tfn_normalise_path =
    TFN_DEF_UNCHANGED("normalisePath", normalize_path, PATH_TRIGGERS, one_segment);
const bw_tfn_def_t bw_tfn_normalize_path_win =
    TFN_DEF_UNCHANGED("normalizePathWin", normalize_path_win, PATH_WIN_TRIGGERS, one_segment_win);
const bw_tfn_def_t bw_tfn_normalise_path_win =
    TFN_DEF_UNCHANGED("normalisePathWin", normalize_path_win, PATH_WIN_TRIGGERS, one_segment_win);
