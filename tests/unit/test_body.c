/*
 * Unit tests for the body processors (apache2/body/), data-driven: every
 * case in $BW_TEST_DATA/body/<kind>.cases is a body, how to parse it and
 * the exact transcript expected. Streaming processors run each case whole,
 * one byte at a time and in 20 random splits, and all transcripts must be
 * identical. The expectations were written from ModSecurity 2.9's manual
 * and checked against mod_security2 2.9.7 where noted in the case files.
 *
 * Case file format (one case after another):
 *   == name
 *   ct: <Content-Type>            (multipart)
 *   sep: <char>                   (urlencoded argument separator)
 *   limits: json_depth=N args=N files=N mode=0NNN upload refuse=N
 *   body: <text with \r \n \t \\ \xHH escapes>   (repeatable, concatenated)
 *   bodyfile: <path under body/>  (raw bytes)
 *   xpath: <expression>           (xml, repeatable)
 *   expect:
 *   <transcript lines>; `error ~"text"` matches an error containing text
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>
#include <apr_file_io.h>
#include <libxml/parser.h>
#include "test_body.h"

typedef struct {
    apr_pool_t *pool;
    const tb_case_t *c;
    apr_array_header_t *lines;   /* char * */
    tb_outcome_t *out;
} rec_t;

const char *tb_quote(apr_pool_t *pool, bw_str_t s)
{
    static const char hex[] = "0123456789abcdef";
    char *d = apr_palloc(pool, s.len * 4 + 3);
    size_t i, o = 0;
    d[o++] = '"';
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (c == '"' || c == '\\') {
            d[o++] = '\\';
            d[o++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            d[o++] = '\\';
            d[o++] = 'x';
            d[o++] = hex[c >> 4];
            d[o++] = hex[c & 15];
        } else {
            d[o++] = (char)c;
        }
    }
    d[o++] = '"';
    d[o] = '\0';
    return d;
}

static void rec_line(rec_t *r, const char *line)
{
    if (!r->c->quiet)
        APR_ARRAY_PUSH(r->lines, const char *) = line;
}

static int rec_arg(void *ctx, bw_str_t name, bw_str_t value)
{
    rec_t *r = ctx;
    if (r->c->refuse_after >= 0 && r->out->nargs >= r->c->refuse_after)
        return -1;
    r->out->nargs++;
    rec_line(r, apr_pstrcat(r->pool, "arg ", tb_quote(r->pool, name), " ",
                            tb_quote(r->pool, value), NULL));
    return 0;
}

/* A stored file is read back (its size must match) and removed, as the
 * glue does when SecUploadKeepFiles is off. */
static const char *stored_content(rec_t *r, const bw_body_file_t *f)
{
    bw_str_t content;
    struct stat st;
    if (f->tmp_name == NULL)
        return "-";
    ck_assert_int_eq(stat(f->tmp_name, &st), 0);
    ck_assert_int_eq((long)st.st_size, (long)f->size);
    if (r->c->limits.upload_file_mode > 0)
        ck_assert_int_eq(st.st_mode & 0777, r->c->limits.upload_file_mode);
    content = tb_read_file(r->pool, f->tmp_name);
    unlink(f->tmp_name);
    if (content.len > 64)
        content.len = 64;
    return apr_pstrcat(r->pool, "stored ", tb_quote(r->pool, content), NULL);
}

static int rec_file(void *ctx, const bw_body_file_t *f)
{
    rec_t *r = ctx;
    const char *stored = stored_content(r, f);
    r->out->nfiles++;
    rec_line(r, apr_psprintf(r->pool, "file %s %s %s %ld %s", tb_quote(r->pool, f->field_name),
                             tb_quote(r->pool, f->file_name), tb_quote(r->pool, f->content_type),
                             (long)f->size, stored));
    return 0;
}

static int rec_header(void *ctx, bw_str_t part, bw_str_t header)
{
    rec_t *r = ctx;
    r->out->nheaders++;
    rec_line(r, apr_pstrcat(r->pool, "hdr ", tb_quote(r->pool, part), " ",
                            tb_quote(r->pool, header), NULL));
    return 0;
}

void tb_case_init(tb_case_t *c, tb_kind_t kind)
{
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    c->sep = '&';
    c->refuse_after = -1;
    c->limits.json_depth = 512;
    c->limits.upload_file_limit = 100;
    c->limits.arg_separator = '&';
}

static bw_body_parser_t *make_parser(apr_pool_t *pool, const tb_case_t *c,
                                     const bw_body_limits_t *lim, const bw_body_sink_t *sink,
                                     bw_body_result_t *res)
{
    switch (c->kind) {
    case TB_MULTIPART:
        return bw_body_multipart_create(pool, c->content_type, lim, sink, res);
    case TB_JSON:
        return bw_body_json_create(pool, lim, sink, res);
    default:
        return bw_body_xml_create(pool, lim, sink, res);
    }
}

/* Feeds the body in the pieces the split mode asks for; a random split
 * mixes 1..8-byte pieces, empty feeds and large pieces. */
static void feed_split(bw_body_parser_t *bp, bw_str_t b, unsigned split)
{
    unsigned long x = split * 2654435761u + 1;
    size_t off = 0;
    while (off < b.len) {
        size_t n = b.len - off;
        if (split == TB_BYTES) {
            n = 1;
        } else if (split >= TB_RANDOM) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            n = (x & 1) ? 1 + (x >> 3) % 8 : (x >> 3) % (b.len / 2 + 1);
            if (n > b.len - off)
                n = b.len - off;
        }
        bw_body_feed(bp, b.data + off, n);
        off += n;
    }
}

static void add_result_lines(rec_t *r, const bw_body_result_t *res)
{
    static const char *names[] = {
        "boundary_quoted", "boundary_whitespace", "data_before", "data_after",
        "header_folding", "lf_line", "missing_semicolon", "invalid_quoting",
        "invalid_part", "invalid_header_folding", "file_limit_exceeded",
        "unmatched_boundary", "crlf_lf_lines"
    };
    const int *f = &res->mp.boundary_quoted;
    const char *flags = "";
    size_t i;
    if (res->error)
        APR_ARRAY_PUSH(r->lines, const char *) =
            apr_pstrcat(r->pool, "error ", tb_quote(r->pool, bw_str_make(res->error_msg)), NULL);
    if (res->urlencoded_error)
        APR_ARRAY_PUSH(r->lines, const char *) = "urlencoded_error";
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (f[i])
            flags = apr_pstrcat(r->pool, flags, " ", names[i], NULL);
    if (*flags)
        APR_ARRAY_PUSH(r->lines, const char *) = apr_pstrcat(r->pool, "flags", flags, NULL);
    if (res->mp_strict_error)
        APR_ARRAY_PUSH(r->lines, const char *) = "strict";
}

static void add_xpath_lines(rec_t *r, const tb_case_t *c, void *doc)
{
    int i, k;
    for (i = 0; c->xpaths && i < c->xpaths->nelts; i++) {
        const char *expr = APR_ARRAY_IDX(c->xpaths, i, const char *);
        apr_array_header_t *vals = apr_array_make(r->pool, 4, sizeof(bw_kv_t));
        char *err = NULL;
        if (bw_body_xml_xpath(r->pool, doc, expr, vals, &err) < 0) {
            APR_ARRAY_PUSH(r->lines, const char *) =
                apr_pstrcat(r->pool, "xpath-error ", tb_quote(r->pool, bw_str_make(err)), NULL);
            continue;
        }
        for (k = 0; k < vals->nelts; k++) {
            bw_kv_t *kv = &APR_ARRAY_IDX(vals, k, bw_kv_t);
            APR_ARRAY_PUSH(r->lines, const char *) = apr_pstrcat(
                r->pool, "xpath ", tb_quote(r->pool, kv->name), " ", tb_quote(r->pool, kv->value),
                NULL);
        }
    }
}

static const char *join_lines(apr_pool_t *pool, apr_array_header_t *lines)
{
    bw_str_t nl = BW_STR_LIT("\n");
    size_t len = 0;
    int i;
    char *d, *p;
    for (i = 0; i < lines->nelts; i++)
        len += strlen(APR_ARRAY_IDX(lines, i, const char *)) + nl.len;
    p = d = apr_palloc(pool, len + 1);
    for (i = 0; i < lines->nelts; i++) {
        const char *l = APR_ARRAY_IDX(lines, i, const char *);
        memcpy(p, l, strlen(l));
        p += strlen(l);
        *p++ = '\n';
    }
    *p = '\0';
    return d;
}

const char *tb_run(apr_pool_t *pool, const tb_case_t *c, unsigned split, tb_outcome_t *out)
{
    rec_t r;
    bw_body_sink_t sink;
    bw_body_limits_t lim = c->limits;
    char dir[] = "/tmp/bw-test-body-XXXXXX";
    struct timespec t0, t1;
    memset(out, 0, sizeof(*out));
    r.pool = pool;
    r.c = c;
    r.out = out;
    r.lines = apr_array_make(pool, 16, sizeof(const char *));
    memset(&sink, 0, sizeof(sink));
    sink.ctx = &r;
    sink.add_arg = rec_arg;
    sink.add_file = rec_file;
    sink.add_part_header = rec_header;
    if (c->store_uploads) {
        ck_assert_ptr_nonnull(mkdtemp(dir));
        lim.upload_dir = dir;
    }
    /* CPU time of this thread, not wall time: the limit tests catch a
     * parser gone quadratic, and a loaded machine (CI, parallel builds)
     * must not fail them by making the wall clock run on */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    if (c->kind == TB_URLENCODED) {
        bw_body_urlencoded(pool, c->body, c->sep, &sink, &out->res);
    } else {
        bw_body_parser_t *bp = make_parser(pool, c, &lim, &sink, &out->res);
        feed_split(bp, c->body, split);
        bw_body_finish(bp);
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    out->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    add_result_lines(&r, &out->res);
    if (c->kind == TB_XML)
        add_xpath_lines(&r, c, out->res.xml_doc);
    if (c->store_uploads)
        ck_assert_msg(rmdir(dir) == 0, "upload dir %s not empty: a file was left behind", dir);
    return join_lines(pool, r.lines);
}

const char *tb_run_all_splits(apr_pool_t *pool, const tb_case_t *c, int n, tb_outcome_t *out)
{
    const char *whole = tb_run(pool, c, TB_WHOLE, out);
    tb_outcome_t other;
    int i;
    if (c->kind == TB_URLENCODED)
        return whole;
    for (i = 0; i <= n; i++) {
        unsigned split = i == 0 ? TB_BYTES : (unsigned)(TB_RANDOM + i);
        const char *t = tb_run(pool, c, split, &other);
        ck_assert_msg(strcmp(t, whole) == 0, "split %u differs:\n--- whole\n%s--- split\n%s",
                      split, whole, t);
    }
    return whole;
}

const char *tb_data_path(apr_pool_t *pool, const char *rel)
{
    const char *base = getenv("BW_TEST_DATA");
    return apr_pstrcat(pool, base && *base ? base : "tests/unit/data", "/body/", rel, NULL);
}

bw_str_t tb_read_file(apr_pool_t *pool, const char *path)
{
    apr_file_t *f;
    apr_finfo_t fi;
    char *d;
    apr_size_t n;
    ck_assert_msg(apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, pool)
                      == APR_SUCCESS, "cannot open %s (is BW_TEST_DATA set?)", path);
    ck_assert_int_eq(apr_file_info_get(&fi, APR_FINFO_SIZE, f), APR_SUCCESS);
    d = apr_palloc(pool, (apr_size_t)fi.size + 1);
    n = (apr_size_t)fi.size;
    if (n)
        ck_assert_int_eq(apr_file_read_full(f, d, n, NULL), APR_SUCCESS);
    d[n] = '\0';
    apr_file_close(f);
    return bw_str_n(d, n);
}

/* ---- case files ------------------------------------------------------- */

typedef struct {
    const char *where;              /* file:line of the "==" */
    const char *name;
    tb_case_t c;
    apr_array_header_t *expect;     /* const char * */
} file_case_t;

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

/* Appends the unescaped form of a "body:" line to buf at *len. */
static void unescape_into(char *buf, size_t *len, const char *s)
{
    while (*s) {
        if (*s != '\\' || s[1] == '\0') {
            buf[(*len)++] = *s++;
            continue;
        }
        s++;
        switch (*s) {
        case 'r': buf[(*len)++] = '\r'; s++; break;
        case 'n': buf[(*len)++] = '\n'; s++; break;
        case 't': buf[(*len)++] = '\t'; s++; break;
        case 'x':
            ck_assert(hexval(s[1]) >= 0 && hexval(s[2]) >= 0);
            buf[(*len)++] = (char)(hexval(s[1]) * 16 + hexval(s[2]));
            s += 3;
            break;
        default: buf[(*len)++] = *s++; break;
        }
    }
}

static void parse_limits(file_case_t *fc, char *s)
{
    char *last, *tok;
    for (tok = apr_strtok(s, " ", &last); tok; tok = apr_strtok(NULL, " ", &last)) {
        if (strncmp(tok, "json_depth=", 11) == 0)
            fc->c.limits.json_depth = atoi(tok + 11);
        else if (strncmp(tok, "args=", 5) == 0)
            fc->c.limits.args_limit = atoi(tok + 5);
        else if (strncmp(tok, "files=", 6) == 0)
            fc->c.limits.upload_file_limit = atoi(tok + 6);
        else if (strncmp(tok, "mode=", 5) == 0)
            fc->c.limits.upload_file_mode = (int)strtol(tok + 5, NULL, 8);
        else if (strncmp(tok, "refuse=", 7) == 0)
            fc->c.refuse_after = atoi(tok + 7);
        else if (strcmp(tok, "upload") == 0)
            fc->c.store_uploads = 1;
        else
            ck_abort_msg("%s: unknown limit %s", fc->where, tok);
    }
}

/* One "key: value" line of a case (not in its expect block). */
static void case_line(apr_pool_t *pool, file_case_t *fc, char *line, char *body, size_t *blen)
{
    if (strncmp(line, "ct: ", 4) == 0) {
        fc->c.content_type = apr_pstrdup(pool, line + 4);
    } else if (strncmp(line, "sep: ", 5) == 0) {
        fc->c.sep = line[5];
    } else if (strncmp(line, "limits: ", 8) == 0) {
        parse_limits(fc, line + 8);
    } else if (strncmp(line, "body: ", 6) == 0 || strcmp(line, "body:") == 0) {
        unescape_into(body, blen, line + (line[5] ? 6 : 5));
    } else if (strncmp(line, "bodyfile: ", 10) == 0) {
        bw_str_t f = tb_read_file(pool, tb_data_path(pool, line + 10));
        fc->c.body = f;
    } else if (strncmp(line, "xpath: ", 7) == 0) {
        if (fc->c.xpaths == NULL)
            fc->c.xpaths = apr_array_make(pool, 2, sizeof(const char *));
        APR_ARRAY_PUSH(fc->c.xpaths, const char *) = apr_pstrdup(pool, line + 7);
    } else {
        ck_abort_msg("%s: cannot read line: %s", fc->where, line);
    }
}

static apr_array_header_t *load_cases(apr_pool_t *pool, const char *rel, tb_kind_t kind)
{
    bw_str_t text = tb_read_file(pool, tb_data_path(pool, rel));
    apr_array_header_t *cases = apr_array_make(pool, 32, sizeof(file_case_t));
    char *body = apr_palloc(pool, text.len + 1), *line, *next = (char *)text.data;
    size_t blen = 0;
    file_case_t *fc = NULL;
    int lineno = 0, in_expect = 0;
    while ((line = next) != NULL && *line) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        if (strncmp(line, "== ", 3) == 0) {
            if (fc && fc->c.body.data == NULL)
                fc->c.body = bw_str_n(apr_pmemdup(pool, body, blen + 1), blen);
            fc = apr_array_push(cases);
            memset(fc, 0, sizeof(*fc));
            tb_case_init(&fc->c, kind);
            fc->where = apr_psprintf(pool, "%s:%d", rel, lineno);
            fc->name = apr_pstrdup(pool, line + 3);
            fc->expect = apr_array_make(pool, 8, sizeof(const char *));
            blen = 0;
            in_expect = 0;
        } else if (line[0] == '#' || line[0] == '\0' || fc == NULL) {
            continue;
        } else if (strcmp(line, "expect:") == 0) {
            in_expect = 1;
        } else if (in_expect) {
            APR_ARRAY_PUSH(fc->expect, const char *) = line;
        } else {
            case_line(pool, fc, line, body, &blen);
        }
    }
    if (fc && fc->c.body.data == NULL)
        fc->c.body = bw_str_n(apr_pmemdup(pool, body, blen + 1), blen);
    return cases;
}

/* Transcript lines against expected lines; `error ~"x"` is a substring. */
static const char *compare(apr_pool_t *pool, const file_case_t *fc, const char *got)
{
    apr_array_header_t *lines = apr_array_make(pool, 8, sizeof(char *));
    char *copy = apr_pstrdup(pool, got), *last, *l;
    int i, ok;
    for (l = apr_strtok(copy, "\n", &last); l; l = apr_strtok(NULL, "\n", &last))
        APR_ARRAY_PUSH(lines, char *) = l;
    ok = lines->nelts == fc->expect->nelts;
    for (i = 0; ok && i < lines->nelts; i++) {
        const char *e = APR_ARRAY_IDX(fc->expect, i, const char *);
        const char *g = APR_ARRAY_IDX(lines, i, const char *);
        if (strncmp(e, "error ~\"", 8) == 0) {
            char *sub = apr_pstrndup(pool, e + 8, strlen(e + 8) - 1);
            ok = strncmp(g, "error \"", 7) == 0 && strstr(g, sub) != NULL;
        } else {
            ok = strcmp(e, g) == 0;
        }
    }
    if (ok)
        return NULL;
    return apr_psprintf(pool, "%s %s:\n--- expected\n%s\n--- got\n%s", fc->where, fc->name,
                        apr_array_pstrcat(pool, fc->expect, '\n'), got);
}

static const char *const case_files[] = {
    "urlencoded.cases", "multipart.cases", "json.cases", "xml.cases"
};

START_TEST(test_case_file)
{
    apr_pool_t *pool;
    apr_array_header_t *cases;
    const char *failures = "";
    int i, nfail = 0;
    apr_pool_create(&pool, NULL);
    cases = load_cases(pool, case_files[_i], (tb_kind_t)_i);
    ck_assert_int_gt(cases->nelts, 0);
    for (i = 0; i < cases->nelts; i++) {
        file_case_t *fc = &APR_ARRAY_IDX(cases, i, file_case_t);
        apr_pool_t *sub;
        tb_outcome_t out;
        const char *diff;
        apr_pool_create(&sub, pool);
        diff = compare(pool, fc, tb_run_all_splits(sub, &fc->c, 20, &out));
        if (diff) {
            failures = apr_pstrcat(pool, failures, diff, "\n", NULL);
            nfail++;
        }
        apr_pool_destroy(sub);
    }
    ck_assert_msg(nfail == 0, "%d of %d cases in %s failed:\n%s", nfail, cases->nelts,
                  case_files[_i], failures);
    apr_pool_destroy(pool);
}
END_TEST

Suite *tb_cases_suite(void)
{
    Suite *s = suite_create("body cases");
    TCase *tc = tcase_create("case files");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_case_file, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;
    apr_initialize();
    xmlInitParser(); /* once, before any parser: what the glue does at child_init */
    sr = srunner_create(tb_cases_suite());
    srunner_add_suite(sr, tb_limits_suite());
    srunner_add_suite(sr, tb_sniff_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_terminate();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
