/*
 * Reading configuration text the way httpd does, so a rule file means the
 * same thing to `bulwark check` as to Apache:
 *  - a line that ends in a backslash right before its newline is joined
 *    with the next one, the backslash dropped (httpd 2.4 does not look at
 *    the character before it, so "\\" at the end joins too; white space
 *    after the backslash means no join); lines starting with '#' are
 *    comments, a comment continued this way swallows the next line;
 *  - words are split like ap_getword_conf(): a word that starts with a quote
 *    runs to the matching quote, or to the end of the line when there is
 *    none (httpd accepts that, so mod_security2 configurations rely on it),
 *    and inside any word "\\" and (in a quoted word) "\<quote>" lose their
 *    backslash;
 *  - Include and IncludeOptional take a path or a glob, relative paths
 *    resolved against the including file's directory.
 */
#include <string.h>
#include <ctype.h>
#include <glob.h>
#include <apr_file_io.h>
#include "lang/bw_lang.h"

#define BW_MAX_INCLUDE_DEPTH 32

static char *substring_conf(apr_pool_t *p, const char *start, size_t len, char quote)
{
    char *res = apr_palloc(p, len + 1), *o = res;
    size_t i;
    for (i = 0; i < len; i++) {
        if (start[i] == '\\' && i + 1 < len
            && (start[i + 1] == '\\' || (quote && start[i + 1] == quote)))
            *o++ = start[++i];
        else
            *o++ = start[i];
    }
    *o = '\0';
    return res;
}

/* Next word of *line into *word ("" at the end). Returns NULL: every line
 * splits into words, as it does for httpd; the return value stays for
 * callers that check it. */
const char *bw_conf_getword(apr_pool_t *p, const char **line, char **word)
{
    const char *s = *line, *e;
    char quote;

    while (*s && isspace((unsigned char)*s))
        s++;
    if (!*s) {
        *line = s;
        *word = "";
        return NULL;
    }
    quote = *s;
    if (quote == '"' || quote == '\'') {
        e = s + 1;
        while (*e && *e != quote) {
            if (*e == '\\' && e[1] && (e[1] == quote || e[1] == '\\'))
                e += 2;
            else
                e++;
        }
        *word = substring_conf(p, s + 1, (size_t)(e - s - 1), quote);
        if (*e == quote)
            e++;
    } else {
        e = s;
        while (*e && !isspace((unsigned char)*e))
            e++;
        *word = substring_conf(p, s, (size_t)(e - s), 0);
    }
    while (*e && isspace((unsigned char)*e))
        e++;
    *line = e;
    return NULL;
}

/* Split a whole file's text into logical lines. Each line records the
 * physical line number it started on. */
typedef struct {
    const char *text;
    int line;
} logical_line_t;

static apr_array_header_t *split_lines(apr_pool_t *p, const char *buf, apr_size_t len)
{
    apr_array_header_t *out = apr_array_make(p, 256, sizeof(logical_line_t));
    apr_size_t i = 0;
    int phys = 0;
    char *acc = NULL;
    apr_size_t acc_len = 0, acc_cap = 0;
    int start_line = 0;

    while (i < len) {
        apr_size_t j = i, end;
        int cont = 0;
        while (j < len && buf[j] != '\n')
            j++;
        phys++;
        end = j;
        if (end > i && buf[end - 1] == '\r')
            end--;
        /* only a backslash before a newline joins: at the very end of the
         * file it stays, as for httpd */
        if (end > i && buf[end - 1] == '\\' && j < len) {
            end--;
            cont = 1;
        }
        if (!acc) {
            start_line = phys;
            acc_len = 0;
        }
        if (acc_len + (end - i) + 1 > acc_cap) {
            apr_size_t ncap = (acc_len + (end - i) + 1) * 2;
            char *n = apr_palloc(p, ncap);
            if (acc_len)
                memcpy(n, acc, acc_len);
            acc = n;
            acc_cap = ncap;
        }
        memcpy(acc + acc_len, buf + i, end - i);
        acc_len += end - i;
        i = j < len ? j + 1 : j;
        if (cont && i < len)
            continue;
        acc[acc_len] = '\0';
        {
            logical_line_t *ll = apr_array_push(out);
            ll->text = acc;
            ll->line = start_line;
        }
        acc = NULL;
        acc_cap = 0;
    }
    return out;
}

static const char *load_path(bw_config_t *cfg, const char *path, int optional);

static const char *dir_of(apr_pool_t *p, const char *file)
{
    const char *slash = strrchr(file, '/');
    if (!slash)
        return ".";
    if (slash == file)
        return "/";
    return apr_pstrndup(p, file, (apr_size_t)(slash - file));
}

static const char *do_include(bw_config_t *cfg, const char *from_file, int line,
                              const char *arg, int optional)
{
    const char *path = arg;
    glob_t g;
    size_t k;
    int rc;

    if (path[0] != '/')
        path = apr_pstrcat(cfg->pool, dir_of(cfg->pool, from_file), "/", arg, NULL);
    rc = glob(path, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) {
        globfree(&g);
        if (optional || strpbrk(arg, "*?["))
            return NULL;
        return apr_psprintf(cfg->pool, "%s:%d: Include: no such file: %s", from_file, line, path);
    }
    if (rc != 0) {
        globfree(&g);
        return apr_psprintf(cfg->pool, "%s:%d: Include: cannot expand %s", from_file, line, path);
    }
    for (k = 0; k < g.gl_pathc; k++) {
        const char *err = load_path(cfg, apr_pstrdup(cfg->pool, g.gl_pathv[k]), optional);
        if (err) {
            globfree(&g);
            return err;
        }
    }
    globfree(&g);
    return NULL;
}

/* <IfModule NAME> as httpd reads it where Bulwark is the module loaded:
 * true for Bulwark's own names, false for any other module (the CLI stands
 * for the engine alone), "!" negates. Returns -1 on a malformed section. */
static int ifmodule_test(const char *s)
{
    size_t n;
    int neg = 0;
    s += strlen("<IfModule");
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '!') {
        neg = 1;
        s++;
    }
    n = strcspn(s, "> \t");
    if (n == 0 || !strchr(s + n, '>'))
        return -1;
    return neg ^ ((n == 14 && !strncmp(s, "bulwark_module", 14))
                  || (n == 13 && !strncmp(s, "mod_bulwark.c", 13)));
}

static const char *load_lines(bw_config_t *cfg, const char *file, apr_array_header_t *lines)
{
    /* <IfModule> nesting: bit k of skip set = section k is false */
    unsigned long skip = 0;
    int depth = 0, i;
    for (i = 0; i < lines->nelts; i++) {
        const logical_line_t *ll = &((logical_line_t *)lines->elts)[i];
        const char *s = ll->text, *rest;
        char *name;
        const char *err;
        int t;

        while (*s && isspace((unsigned char)*s))
            s++;
        if (!*s || *s == '#')
            continue;
        if (!strncasecmp(s, "<IfModule", 9) && (s[9] == ' ' || s[9] == '\t')) {
            if ((t = ifmodule_test(s)) < 0 || depth >= 32)
                return apr_psprintf(cfg->pool, "%s:%d: malformed or too deeply nested <IfModule>",
                                    file, ll->line);
            if (!t)
                skip |= 1UL << depth;
            depth++;
            continue;
        }
        if (!strncasecmp(s, "</IfModule>", 11)) {
            if (depth == 0)
                return apr_psprintf(cfg->pool, "%s:%d: </IfModule> without <IfModule>", file, ll->line);
            depth--;
            skip &= ~(1UL << depth);
            continue;
        }
        if (skip)
            continue;
        rest = s;
        err = bw_conf_getword(cfg->pool, &rest, &name);
        if (err)
            return apr_psprintf(cfg->pool, "%s:%d: %s", file, ll->line, err);
        if (!strcasecmp(name, "Include") || !strcasecmp(name, "IncludeOptional")) {
            char *arg;
            err = bw_conf_getword(cfg->pool, &rest, &arg);
            if (err)
                return apr_psprintf(cfg->pool, "%s:%d: %s", file, ll->line, err);
            if (!*arg)
                return apr_psprintf(cfg->pool, "%s:%d: %s takes one argument, a path", file, ll->line, name);
            err = do_include(cfg, file, ll->line, arg, !strcasecmp(name, "IncludeOptional"));
            if (err)
                return err;
            continue;
        }
        /* a bad directive is reported and reading goes on, so one run of
         * `bulwark check` shows every error of a rule set */
        if (!bw_config_is_directive(name))
            err = apr_psprintf(cfg->pool, "unknown directive \"%s\"", name);
        else
            err = bw_config_directive(cfg, name, rest, file, ll->line);
        if (err)
            *(const char **)apr_array_push(cfg->errors) =
                apr_psprintf(cfg->pool, "%s:%d: %s", file, ll->line, err);
    }
    if (depth)
        return apr_psprintf(cfg->pool, "%s: <IfModule> not closed at the end of the file", file);
    return NULL;
}

static const char *load_path(bw_config_t *cfg, const char *path, int optional)
{
    apr_file_t *f;
    apr_finfo_t fi;
    apr_status_t rv;
    char *buf;
    apr_size_t n;
    const char *err;

    if (cfg->include_depth >= BW_MAX_INCLUDE_DEPTH)
        return apr_psprintf(cfg->pool, "%s: Include nested more than %d deep (a loop?)",
                            path, BW_MAX_INCLUDE_DEPTH);
    rv = apr_stat(&fi, path, APR_FINFO_TYPE | APR_FINFO_SIZE, cfg->pool);
    if (rv != APR_SUCCESS) {
        char eb[128];
        return apr_psprintf(cfg->pool, "%s: cannot open: %s", path, apr_strerror(rv, eb, sizeof eb));
    }
    if (fi.filetype == APR_DIR) {
        /* httpd includes every file of a directory, in order */
        return do_include(cfg, path, 0, apr_pstrcat(cfg->pool, path, "/*", NULL), optional);
    }
    rv = apr_file_open(&f, path, APR_READ, 0, cfg->pool);
    if (rv != APR_SUCCESS) {
        char eb[128];
        return apr_psprintf(cfg->pool, "%s: cannot open: %s", path, apr_strerror(rv, eb, sizeof eb));
    }
    buf = apr_palloc(cfg->pool, (apr_size_t)fi.size + 1);
    n = (apr_size_t)fi.size;
    rv = apr_file_read_full(f, buf, n, &n);
    apr_file_close(f);
    if (rv != APR_SUCCESS && rv != APR_EOF) {
        char eb[128];
        return apr_psprintf(cfg->pool, "%s: cannot read: %s", path, apr_strerror(rv, eb, sizeof eb));
    }
    buf[n] = '\0';
    cfg->include_depth++;
    err = load_lines(cfg, path, split_lines(cfg->pool, buf, n));
    cfg->include_depth--;
    return err;
}

const char *bw_config_load_text(bw_config_t *cfg, const char *label, const char *text, size_t len)
{
    const char *err;
    if (cfg->include_depth >= BW_MAX_INCLUDE_DEPTH)
        return apr_psprintf(cfg->pool, "%s: Include nested more than %d deep (a loop?)",
                            label, BW_MAX_INCLUDE_DEPTH);
    cfg->include_depth++;
    err = load_lines(cfg, label, split_lines(cfg->pool, text, len));
    cfg->include_depth--;
    return err;
}

const char *bw_config_load_file(bw_config_t *cfg, const char *path)
{
    const char *err = load_path(cfg, path, 0);
    if (err)
        *(const char **)apr_array_push(cfg->errors) = err;
    if (cfg->pending_chain) {
        *(const char **)apr_array_push(cfg->errors) =
            apr_psprintf(cfg->pool, "%s:%d: chain: the last rule of a chain is missing "
                         "(a rule with the chain action must be followed by another SecRule)",
                         cfg->pending_chain->file, cfg->pending_chain->line);
        cfg->pending_chain = NULL;
    }
    if (!cfg->errors->nelts)
        return NULL;
    return apr_array_pstrcat(cfg->pool, cfg->errors, '\n');
}
