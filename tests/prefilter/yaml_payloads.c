/*
 * A purpose-built YAML reader for the prefilter's differential test: it
 * pulls every scalar value out of the CRS regression test files (uri, data,
 * header values, payload notes…) without understanding the document
 * structure, which the test does not need: any string is a fair subject.
 * Handles plain, single- and double-quoted (escapes, folding over lines) and
 * block (| and >, chomping, indentation indicator) scalars; values of
 * encoded_request are base64-decoded as well.
 */
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include "corpus.h"

typedef struct {
    const char *s;      /* line start */
    size_t len;         /* without the newline */
    size_t indent;      /* leading spaces */
} yline_t;

typedef struct {
    char *buf;
    size_t len, room;
    apr_pool_t *pool;
} ybuf_t;

static void yb_put(ybuf_t *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->room) {
        size_t room = (b->room + n) * 2 + 64;
        char *nb = apr_palloc(b->pool, room);
        if (b->len)
            memcpy(nb, b->buf, b->len);
        b->buf = nb;
        b->room = room;
    }
    if (n)
        memcpy(b->buf + b->len, s, n);
    b->len += n;
}

static void yb_utf8(ybuf_t *b, unsigned long cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | ((cp >> 18) & 0x07));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    yb_put(b, u, n);
}

static int yhex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* One escape of a double-quoted scalar (s after the backslash); returns the
 * bytes consumed. */
static size_t dq_escape(ybuf_t *b, const char *s, size_t n)
{
    static const char from[] = "0abtnvfre \"/\\\t";
    static const char to[] = "\0\a\b\t\n\v\f\r\033 \"/\\\t";
    const char *k;
    size_t digits = 0, i;
    unsigned long cp = 0;

    if (n == 0)
        return 0;
    if ((k = memchr(from, s[0], sizeof(from) - 1)) != NULL) {
        yb_put(b, &to[k - from], 1);
        return 1;
    }
    switch (s[0]) {
    case 'N': yb_utf8(b, 0x85); return 1;
    case '_': yb_utf8(b, 0xa0); return 1;
    case 'L': yb_utf8(b, 0x2028); return 1;
    case 'P': yb_utf8(b, 0x2029); return 1;
    case 'x': digits = 2; break;
    case 'u': digits = 4; break;
    case 'U': digits = 8; break;
    default: yb_put(b, s, 1); return 1;
    }
    for (i = 1; i <= digits && i < n && yhex(s[i]) >= 0; i++)
        cp = cp * 16 + (unsigned long)yhex(s[i]);
    yb_utf8(b, cp);
    return i;
}

/* A quoted scalar starting at line li, column col (at the quote). Lines are
 * folded: a line break becomes a space, an empty line a newline. Returns the
 * index of the last line used. */
static int quoted(ybuf_t *b, const yline_t *lines, int nl, int li, size_t col)
{
    char q = lines[li].s[col];
    size_t i = col + 1;
    int first = 1, empties = 0, esc_break = 0;

    for (; li < nl; li++, i = 0, first = 0) {
        const yline_t *l = &lines[li];
        size_t e = l->len;
        if (!first) {
            while (i < e && (l->s[i] == ' ' || l->s[i] == '\t'))
                i++;
            if (i == e) {
                empties++;
                continue;
            }
            if (empties == 0 && !esc_break)
                yb_put(b, " ", 1);
            for (; empties > 0; empties--)
                yb_put(b, "\n", 1);
            esc_break = 0;
        }
        for (; i < e; i++) {
            char c = l->s[i];
            if (c == q && q == '\'' && i + 1 < e && l->s[i + 1] == '\'') {
                yb_put(b, "'", 1);
                i++;
            } else if (c == q) {
                return li;
            } else if (c == '\\' && q == '"' && i + 1 == e) {
                esc_break = 1;      /* escaped line break: joined without a space */
            } else if (c == '\\' && q == '"') {
                i += dq_escape(b, l->s + i + 1, e - i - 1);
            } else {
                yb_put(b, &c, 1);
            }
        }
        while (!esc_break && b->len && (b->buf[b->len - 1] == ' ' || b->buf[b->len - 1] == '\t'))
            b->len--;
    }
    return nl - 1;
}

/* A block scalar whose header (| or > …) is at column col of line li, under
 * a key at column parent: its lines are the ones indented deeper. Returns
 * the index of the last line used. */
static int block(ybuf_t *b, const yline_t *lines, int nl, int li, size_t col, size_t parent)
{
    const char *h = lines[li].s + col;
    char style = h[0], chomp = 'c';
    size_t ind = 0, k, hl = lines[li].len - col;
    int j, last = li;

    for (k = 1; k < hl && h[k] != ' ' && h[k] != '#'; k++) {
        if (h[k] == '-' || h[k] == '+')
            chomp = h[k];
        else if (h[k] >= '1' && h[k] <= '9')
            ind = parent + (size_t)(h[k] - '0');
    }
    for (j = li + 1; j < nl; j++) {
        const yline_t *l = &lines[j];
        int blank = l->indent == l->len;
        if (!blank && l->indent <= parent)
            break;
        if (!blank && ind == 0)
            ind = l->indent;
        last = j;
        if (blank || l->len <= ind) {
            yb_put(b, "\n", 1);
            continue;
        }
        if (style == '>' && b->len && b->buf[b->len - 1] == '\n' && l->indent == ind
            && j > li + 1 && lines[j - 1].indent == ind && lines[j - 1].len > ind)
            b->buf[b->len - 1] = ' ';
        yb_put(b, l->s + ind, l->len - ind);
        yb_put(b, "\n", 1);
    }
    while (chomp != '+' && b->len > 0 && b->buf[b->len - 1] == '\n')
        b->len--;
    if (chomp == 'c' && b->len > 0)
        yb_put(b, "\n", 1);
    return last;
}

/* Where the value of a "key: value" or "- value" line starts, and whether
 * the key is encoded_request. */
static size_t value_start(const yline_t *l, int *encoded, size_t *key_col)
{
    size_t i = l->indent, e = l->len, k;
    while (i + 1 < e && l->s[i] == '-' && l->s[i + 1] == ' ')
        for (i += 2; i < e && l->s[i] == ' '; i++)
            ;
    *encoded = 0;
    *key_col = i;
    if (i < e && (l->s[i] == '"' || l->s[i] == '\''))
        return i;           /* a quoted scalar (quoted keys are not used) */
    for (k = i; k < e; k++) {
        if (l->s[k] == ':' && (k + 1 == e || l->s[k + 1] == ' ')) {
            *encoded = k - i == 15 && memcmp(l->s + i, "encoded_request", 15) == 0;
            for (k++; k < e && l->s[k] == ' '; k++)
                ;
            return k;
        }
    }
    return i;
}

static void add_value(pf_payloads_t *pl, ybuf_t *b, int encoded)
{
    bw_str_t v = bw_str_n(b->buf ? b->buf : "", b->len);
    pf_payloads_add_variants(pl, v);
    if (encoded)
        pf_payloads_add_variants(pl, pf_base64_decode(pl->pool, v));
}

/* A plain scalar: up to a " #" comment, trailing blanks dropped. */
static void plain(ybuf_t *b, const yline_t *l, size_t v)
{
    size_t e = l->len, k;
    for (k = v; k + 1 < e; k++)
        if (l->s[k] == ' ' && l->s[k + 1] == '#')
            break;
    if (k + 1 >= e)
        k = e;
    while (k > v && (l->s[k - 1] == ' ' || l->s[k - 1] == '\t'))
        k--;
    yb_put(b, l->s + v, k - v);
}

static void read_yaml(pf_payloads_t *pl, bw_str_t text)
{
    apr_array_header_t *arr = apr_array_make(pl->pool, 256, sizeof(yline_t));
    const char *s = text.data, *end = s + text.len;
    const yline_t *lines;
    int i;

    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        yline_t *l = apr_array_push(arr);
        l->s = s;
        l->len = (size_t)((nl ? nl : end) - s);
        if (l->len && s[l->len - 1] == '\r')
            l->len--;
        for (l->indent = 0; l->indent < l->len && s[l->indent] == ' '; l->indent++)
            ;
        s = nl ? nl + 1 : end;
    }
    lines = (const yline_t *)arr->elts;
    for (i = 0; i < arr->nelts; i++) {
        const yline_t *l = &lines[i];
        ybuf_t b = { NULL, 0, 0, pl->pool };
        int encoded;
        size_t v, key_col;
        if (l->indent == l->len || l->s[l->indent] == '#')
            continue;
        v = value_start(l, &encoded, &key_col);
        if (v >= l->len)
            continue;
        if (l->s[v] == '"' || l->s[v] == '\'')
            i = quoted(&b, lines, arr->nelts, i, v);
        else if (l->s[v] == '|' || l->s[v] == '>')
            i = block(&b, lines, arr->nelts, i, v, key_col);
        else
            plain(&b, l, v);
        add_value(pl, &b, encoded);
    }
}

int pf_corpus_load_yaml_dir(pf_payloads_t *pl, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    if (!d)
        return 0;
    while ((de = readdir(d)) != NULL) {
        const char *path;
        struct stat st;
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.')
            continue;
        path = apr_pstrcat(pl->pool, dir, "/", de->d_name, NULL);
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            n += pf_corpus_load_yaml_dir(pl, path);
        } else if (len > 5 && strcmp(de->d_name + len - 5, ".yaml") == 0) {
            bw_str_t text;
            if (pf_corpus_read_file(pl->pool, path, &text) == 0) {
                read_yaml(pl, text);
                n++;
            }
        }
    }
    closedir(d);
    return n;
}
