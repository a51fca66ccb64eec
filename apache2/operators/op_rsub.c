/*
 * @rsub — regular expression substitution in a stream variable.
 *
 * Description: On STREAM_INPUT_BODY or STREAM_OUTPUT_BODY, replaces every
 *   match of the regex by the replacement, and the result is what goes on
 *   (to the backend, to the client). As in mod_security2 2.9.7 every match
 *   is replaced (no 'g' needed), and the operator matches whenever it ran on
 *   a stream, replacement or not; on any other variable it never matches.
 *   The regex is compiled once (PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY as @rx,
 *   JIT); an empty match replaces and then moves one byte on, so "s/x*\/-/"
 *   ends (mod_security2 loops forever there).
 * Arguments: s/REGEX/REPLACEMENT/[FLAGS]. '\/' is a '/' in both parts; in
 *   the replacement '\\' is a backslash, '\|' stays the two bytes "\|", any
 *   other backslash is refused (as mod_security2 refuses it), '|41 0a|' is
 *   bytes in hex, and %{macros} are expanded per transaction — their values
 *   are inserted as they are, never read as escapes. There are no group
 *   references ("$1" is literal text, as in mod_security2). Flags: 'i'
 *   case-insensitive; others ('d', 'g'...) accepted without effect.
 * Returns: 1 on a stream variable (run->rewritten when the value changed),
 *   0 elsewhere, -1 when PCRE2 stops on a limit.
 * Example: SecRule STREAM_OUTPUT_BODY "@rsub s/<!--.*?-->//" "id:1,phase:4,pass,nolog"
 */
#include <string.h>
#include "op_internal.h"

typedef struct {
    pcre2_code *code;
    bw_str_t repl;          /* escapes and hex already decoded */
    int repl_macros;        /* repl contains "%{": expanded per transaction */
} rsub_data_t;

/* Cut the next part of *rest at an unescaped '/' into *part (raw, escapes
 * kept). Returns 0 when no '/' ends it (the part runs to the end). */
static int next_part(bw_str_t *rest, bw_str_t *part)
{
    size_t i;
    for (i = 0; i < rest->len; i++) {
        if (rest->data[i] == '\\' && i + 1 < rest->len) {
            i++;
            continue;
        }
        if (rest->data[i] == '/') {
            *part = bw_str_n(rest->data, i);
            *rest = bw_str_n(rest->data + i + 1, rest->len - i - 1);
            return 1;
        }
    }
    *part = *rest;
    *rest = bw_str_n(rest->data + rest->len, 0);
    return 0;
}

/* The regex: "\/" becomes '/', every other escape is PCRE2's. */
static bw_str_t regex_of(apr_pool_t *p, bw_str_t raw)
{
    char *out = apr_palloc(p, raw.len + 1);
    size_t i, n = 0;
    for (i = 0; i < raw.len; i++) {
        if (raw.data[i] == '\\' && i + 1 < raw.len && raw.data[i + 1] == '/')
            i++;
        out[n++] = raw.data[i];
    }
    out[n] = '\0';
    return bw_str_n(out, n);
}

/* "|41 42|" at s (s[0] == '|'): the bytes into out, returns the length
 * consumed, or 0 when it is no hex block (then '|' is literal). */
static size_t hex_block(bw_str_t s, char *out, size_t *n)
{
    size_t i, start = *n;
    int hi = -1;
    for (i = 1; i < s.len && s.data[i] != '|'; i++) {
        int v = bw_hexval(s.data[i]);
        if (s.data[i] == ' ' && hi < 0)
            continue;
        if (v < 0)
            break;
        if (hi < 0) {
            hi = v;
        } else {
            out[(*n)++] = (char)(hi << 4 | v);
            hi = -1;
        }
    }
    if (i >= s.len || s.data[i] != '|' || hi >= 0 || i == 1) {
        *n = start;
        return 0;
    }
    return i + 1;
}

/* The replacement decoded once; NULL with *err on an escape it refuses. */
static const char *repl_of(apr_pool_t *p, bw_str_t raw, bw_str_t *out, char **err)
{
    char *b = apr_palloc(p, raw.len + 1);
    size_t i = 0, n = 0, used;
    while (i < raw.len) {
        char c = raw.data[i];
        if (c == '\\' && i + 1 < raw.len) {
            char e = raw.data[i + 1];
            if (e == '|')
                b[n++] = '\\';
            else if (e != '/' && e != '\\') {
                *err = apr_psprintf(p, "@rsub: unsupported escape \"\\%c\" in the replacement "
                                    "(only \\/, \\\\ and \\| are; hex bytes go as |0a|)", e);
                return NULL;
            }
            b[n++] = e;
            i += 2;
            continue;
        }
        if (c == '|' && (used = hex_block(bw_str_n(raw.data + i, raw.len - i), b, &n)) > 0) {
            i += used;
            continue;
        }
        b[n++] = c;
        i++;
    }
    b[n] = '\0';
    *out = bw_str_n(b, n);
    return b;
}

static int rsub_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    rsub_data_t *d = apr_pcalloc(env->pool, sizeof(*d));
    bw_str_t rest = bw_str_n(op->param, op->param_len), re, repl, flags;
    uint32_t opts = 0;
    size_t i;

    if (rest.len < 2 || rest.data[0] != 's' || rest.data[1] != '/') {
        *err = apr_pstrdup(env->pool, "@rsub: the parameter must be s/regex/replacement/[flags]");
        return -1;
    }
    rest = bw_str_n(rest.data + 2, rest.len - 2);
    if (!next_part(&rest, &re)) {
        *err = apr_pstrdup(env->pool, "@rsub: no replacement: the parameter must be "
                           "s/regex/replacement/[flags]");
        return -1;
    }
    next_part(&rest, &repl);
    flags = rest;
    for (i = 0; i < flags.len; i++)
        if (flags.data[i] == 'i')
            opts |= PCRE2_CASELESS;
    d->code = bw_op_regex_compile_re(regex_of(env->pool, re), opts, env, "rsub", err);
    if (d->code == NULL || repl_of(env->pool, repl, &d->repl, err) == NULL)
        return -1;
    d->repl_macros = memmem(d->repl.data, d->repl.len, "%{", 2) != NULL;
    op->data = d;
    return 0;
}

/* Append n bytes to the growing output. */
static void put(apr_pool_t *p, char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        char *nb;
        while (c < *len + n + 1)
            c *= 2;
        nb = apr_palloc(p, c);
        if (*len)
            memcpy(nb, *buf, *len);
        *buf = nb;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
}

static int rsub_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    const rsub_data_t *d = op->data;
    bw_str_t repl = d->repl;
    char *out = NULL;
    size_t len = 0, cap = 0, pos = 0, copied = 0;
    int rc, changed = 0;

    if (!run->stream)
        return 0;
    if (run->md == NULL) {
        run->error = "@rsub: no PCRE2 match data";
        return -1;
    }
    if (value.data == NULL)
        value = bw_str_n("", 0);
    if (d->repl_macros && run->expand)
        repl = run->expand(run->script_host, repl);
    while (pos <= value.len) {
        PCRE2_SIZE *ov;
        rc = pcre2_match(d->code, (PCRE2_SPTR)value.data, value.len, pos, 0, run->md, run->mctx);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            return bw_op_regex_error(run, "rsub", rc);
        ov = pcre2_get_ovector_pointer(run->md);
        put(run->pool, &out, &len, &cap, value.data + copied, ov[0] - copied);
        put(run->pool, &out, &len, &cap, repl.data, repl.len);
        copied = ov[1];
        changed = 1;
        /* an empty match must not be found again at the same place */
        if (ov[1] == ov[0]) {
            if (ov[1] < value.len)
                put(run->pool, &out, &len, &cap, value.data + ov[1], 1);
            copied = ov[1] + 1;
            pos = ov[1] + 1;
        } else {
            pos = ov[1];
        }
    }
    if (changed) {
        if (copied < value.len)
            put(run->pool, &out, &len, &cap, value.data + copied, value.len - copied);
        if (out == NULL)
            put(run->pool, &out, &len, &cap, "", 0);
        out[len] = '\0';
        run->rewrite = bw_str_n(out, len);
        run->rewritten = 1;
    }
    if (!run->no_msg)
        run->msg = "Operator rsub succeeded.";
    return 1;
}

const bw_op_def_t bw_op_rsub = {
    "rsub", BW_OP_PARAM_REQUIRED | BW_OP_STREAM, rsub_compile, rsub_execute, NULL, NULL
};
