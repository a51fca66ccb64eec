/*
 * Reads CRS rule files for the prefilter's differential test: splits them
 * into directives the way Apache does (a trailing backslash joins lines;
 * words split like ap_getword_conf, where inside a quoted word only \\ and
 * \<quote> lose their backslash), keeps the @rx operators of SecRule lines
 * (implicit @rx included), and remembers the rule id of each chain. Also
 * the payload set, its URL-decoded and case variants, and text corpora.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include "corpus.h"

const char *pf_crs_v3_rules(void)
{
    const char *v3 = getenv("BW_CRS_RULES");
    return v3 && *v3 ? v3 : "/usr/share/modsecurity-crs/rules";
}

/* The legacy root variable, else ../shared/crs beside the source tree. */
static const char *crs_root(apr_pool_t *p, const char *src_dir)
{
    const char *root = getenv("BW_CRS_ROOT");
    return root && *root ? root : apr_pstrcat(p, src_dir, "/../shared/crs", NULL);
}

const char *pf_crs_v4_dir(apr_pool_t *p, const char *src_dir)
{
    const char *dir = getenv("BW_CRS_V4_DIR");
    return dir && *dir ? dir : apr_pstrcat(p, crs_root(p, src_dir), "/v4.28.0", NULL);
}

const char *pf_crs_v3_tests(apr_pool_t *p, const char *src_dir)
{
    const char *dir = getenv("BW_CRS_V3_TESTS");
    if (dir)
        return *dir ? dir : NULL;
    return apr_pstrcat(p, crs_root(p, src_dir), "/v3.3.4/tests-v2", NULL);
}

int pf_corpus_read_file(apr_pool_t *p, const char *path, bw_str_t *out)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return -1;
    }
    buf = apr_palloc(p, (apr_size_t)n + 1);
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        return -1;
    }
    fclose(f);
    buf[n] = '\0';
    *out = bw_str_n(buf, (size_t)n);
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Next word of a directive line, ap_getword_conf style. */
static char *next_word(apr_pool_t *p, const char **line)
{
    const char *s = *line, *e;
    char quote = 0, *w, *o;

    while (*s && is_space(*s))
        s++;
    if (*s == '"' || *s == '\'') {
        quote = *s++;
        for (e = s; *e && *e != quote; e++)
            if (*e == '\\' && (e[1] == quote || e[1] == '\\'))
                e++;
    } else {
        for (e = s; *e && !is_space(*e); e++)
            ;
    }
    w = o = apr_palloc(p, (apr_size_t)(e - s) + 1);
    for (; s < e; s++) {
        if (*s == '\\' && s + 1 < e && (s[1] == '\\' || (quote && s[1] == quote)))
            s++;
        *o++ = *s;
    }
    *o = '\0';
    if (quote && *e == quote)
        e++;
    *line = e;
    return w;
}

/* The id:NNN of an action list, or NULL. */
static const char *action_id(apr_pool_t *p, const char *actions)
{
    const char *s = actions;
    while ((s = strstr(s, "id:")) != NULL) {
        const char *d;
        if (s > actions && s[-1] != ',' && s[-1] != ' ' && s[-1] != '\t') {
            s += 3;
            continue;
        }
        s += 3;
        if (*s == '\'')
            s++;
        for (d = s; *d >= '0' && *d <= '9'; d++)
            ;
        if (d > s)
            return apr_pstrndup(p, s, (apr_size_t)(d - s));
    }
    return NULL;
}

/* The regex of an operator string, or NULL when it is not @rx. */
static const char *rx_param(const char *op, int *negated)
{
    const char *s = op;
    *negated = 0;
    while (is_space(*s))
        s++;
    if (*s == '!') {
        *negated = 1;
        for (s++; is_space(*s); s++)
            ;
    }
    if (*s != '@')
        return s;
    if (strncmp(s, "@rx", 3) != 0 || (s[3] && !is_space(s[3])))
        return NULL;
    for (s += 3; is_space(*s); s++)
        ;
    return s;
}

typedef struct {
    apr_pool_t *pool;
    const char *file;
    const char *chain_id;
    apr_array_header_t *rxs;
    int *macros;
} conf_state_t;

static void directive(conf_state_t *st, const char *line, int lineno)
{
    const char *s = line, *op, *actions, *id, *param;
    int negated;
    pf_rx_t *rx;

    if (strcasecmp(next_word(st->pool, &s), "SecRule") != 0)
        return;
    next_word(st->pool, &s);                /* targets */
    op = next_word(st->pool, &s);
    actions = next_word(st->pool, &s);
    id = action_id(st->pool, actions);
    if (id)
        st->chain_id = id;
    param = rx_param(op, &negated);
    if (!param)
        return;
    if (strstr(param, "%{")) {
        (*st->macros)++;
        return;
    }
    rx = apr_array_push(st->rxs);
    rx->file = st->file;
    rx->line = lineno;
    rx->id = st->chain_id ? st->chain_id : "?";
    rx->pattern = bw_str_make(param);
    rx->negated = negated;
}

/* Joins continuation lines and hands each directive to directive(). */
static int load_conf(conf_state_t *st, const char *path)
{
    bw_str_t text;
    const char *s, *end;
    int lineno = 1;

    if (pf_corpus_read_file(st->pool, path, &text) != 0)
        return -1;
    s = text.data;
    end = s + text.len;
    while (s < end) {
        char *buf = apr_palloc(st->pool, (apr_size_t)(end - s) + 1), *o = buf;
        int start = lineno;
        for (;;) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            const char *le = nl ? nl : end;
            int cont;
            if (le > s && le[-1] == '\r')
                le--;
            cont = le > s && le[-1] == '\\';
            memcpy(o, s, (size_t)(le - s - cont));
            o += le - s - cont;
            s = nl ? nl + 1 : end;
            lineno++;
            if (!cont || s >= end)
                break;
        }
        *o = '\0';
        directive(st, buf, start);
    }
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int pf_corpus_load_rx(apr_pool_t *p, const char *dir, apr_array_header_t *rxs, int *macros)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    apr_array_header_t *names = apr_array_make(p, 64, sizeof(char *));
    conf_state_t st;
    int i, nfiles = 0;

    if (!d)
        return -1;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n > 5 && strcmp(de->d_name + n - 5, ".conf") == 0)
            APR_ARRAY_PUSH(names, char *) = apr_pstrdup(p, de->d_name);
    }
    closedir(d);
    qsort(names->elts, (size_t)names->nelts, sizeof(char *), cmp_names);
    memset(&st, 0, sizeof(st));
    st.pool = p;
    st.rxs = rxs;
    st.macros = macros;
    for (i = 0; i < names->nelts; i++) {
        st.file = APR_ARRAY_IDX(names, i, char *);
        st.chain_id = NULL;
        if (load_conf(&st, apr_pstrcat(p, dir, "/", st.file, NULL)) == 0)
            nfiles++;
    }
    return nfiles;
}

/* --- payloads --- */

void pf_payloads_init(apr_pool_t *p, pf_payloads_t *pl)
{
    pl->pool = p;
    pl->seen = apr_hash_make(p);
    pl->items = apr_array_make(p, 4096, sizeof(bw_str_t));
}

void pf_payloads_add(pf_payloads_t *pl, bw_str_t s)
{
    char *copy;
    if (apr_hash_get(pl->seen, s.len ? s.data : "", (apr_ssize_t)s.len))
        return;
    copy = apr_palloc(pl->pool, s.len + 1);
    if (s.len)
        memcpy(copy, s.data, s.len);
    copy[s.len] = '\0';
    apr_hash_set(pl->seen, copy, (apr_ssize_t)s.len, copy);
    APR_ARRAY_PUSH(pl->items, bw_str_t) = bw_str_n(copy, s.len);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* %XX and '+' decoding, as a form or query string is decoded. */
static bw_str_t url_decode(apr_pool_t *p, bw_str_t s)
{
    char *o = apr_palloc(p, s.len + 1);
    size_t i, n = 0;
    for (i = 0; i < s.len; i++) {
        if (s.data[i] == '%' && i + 2 < s.len && hexval(s.data[i + 1]) >= 0
            && hexval(s.data[i + 2]) >= 0) {
            o[n++] = (char)(hexval(s.data[i + 1]) * 16 + hexval(s.data[i + 2]));
            i += 2;
        } else {
            o[n++] = s.data[i] == '+' ? ' ' : s.data[i];
        }
    }
    return bw_str_n(o, n);
}

static bw_str_t change_case(apr_pool_t *p, bw_str_t s, int upper)
{
    char *o = apr_palloc(p, s.len + 1);
    size_t i;
    for (i = 0; i < s.len; i++) {
        char c = s.data[i];
        if (upper && c >= 'a' && c <= 'z')
            c = (char)(c - 32);
        else if (!upper && c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        o[i] = c;
    }
    return bw_str_n(o, s.len);
}

void pf_payloads_add_variants(pf_payloads_t *pl, bw_str_t s)
{
    bw_str_t d1 = url_decode(pl->pool, s), d2 = url_decode(pl->pool, d1);
    pf_payloads_add(pl, s);
    pf_payloads_add(pl, d1);
    pf_payloads_add(pl, d2);
    pf_payloads_add(pl, change_case(pl->pool, s, 0));
    pf_payloads_add(pl, change_case(pl->pool, s, 1));
    pf_payloads_add(pl, change_case(pl->pool, d1, 0));
    pf_payloads_add(pl, change_case(pl->pool, d1, 1));
}

int pf_corpus_load_lines(pf_payloads_t *pl, const char *path)
{
    bw_str_t text;
    const char *s, *end;
    int n = 0;

    if (pf_corpus_read_file(pl->pool, path, &text) != 0)
        return -1;
    pf_payloads_add(pl, text);
    for (s = text.data, end = s + text.len; s < end; n++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        pf_payloads_add_variants(pl, bw_str_n(s, (size_t)(le - s)));
        s = nl ? nl + 1 : end;
    }
    return n;
}

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

bw_str_t pf_base64_decode(apr_pool_t *p, bw_str_t in)
{
    char *o = apr_palloc(p, in.len + 1);
    size_t i, n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (i = 0; i < in.len; i++) {
        int v = b64val(in.data[i]);
        if (v < 0)
            continue;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    return bw_str_n(o, n);
}
