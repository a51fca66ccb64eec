/*
 * Unit tests for the OpenAPI validator (apache2/openapi/), data-driven:
 *   data/openapi/requests.cases   requests against a description, with the
 *                                 exact violations expected (or none); each
 *                                 JSON body goes through the real JSON body
 *                                 parser whole, one byte at a time and in
 *                                 random pieces, and all runs must agree
 *   data/openapi/specs.cases      descriptions that must load, or fail with
 *                                 the JSON pointer and reason given
 * plus hostile bodies built here (deep nesting, huge arrays) that must be
 * checked in bounded memory and time, and the patterns matched without
 * PCRE2 (oas_pattern.c) held to PCRE2's verdicts.
 *
 * requests.cases, one case after another:
 *   == name
 *   spec: FILE                    (under data/openapi/)
 *   request: METHOD TARGET
 *   header: Name: value           (repeatable)
 *   cookie: name=value            (repeatable)
 *   body: TEXT                    (repeatable, joined with newlines)
 *   expect:
 *   WHERE ~ REASON-SUBSTRING      (one line per violation, in order; none: valid)
 * specs.cases:
 *   == name
 *   spec:
 *   <the description's lines>
 *   error: SUBSTRING              (or "error: none")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <check.h>
#include <apr_general.h>
#include <apr_file_io.h>
#include "openapi/oas_int.h"

static apr_pool_t *pool;    /* the case files, for the whole run */
static apr_pool_t *tpool;   /* one test's: the descriptions it loads die with it (their
                               patterns are freed by its cleanups, as LeakSanitizer wants) */
static apr_hash_t *specs;   /* name -> const bw_oas_t *, in tpool */

static void setup(void)
{
    apr_pool_create(&tpool, pool);
    specs = apr_hash_make(tpool);
}

static void teardown(void)
{
    apr_pool_destroy(tpool);
}

static const char *data_path(const char *name)
{
    const char *dir = getenv("BW_TEST_DATA");
    return apr_pstrcat(pool, dir ? dir : "tests/unit/data", "/openapi/", name, NULL);
}

/* Outside a test (reading the case files): say why and stop. */
static void die_unless(int ok, const char *what, int line)
{
    if (ok)
        return;
    fprintf(stderr, "test_openapi: %s (line %d)\n", what, line);
    exit(2);
}

static char *slurp(const char *path, apr_size_t *len)
{
    apr_file_t *f;
    apr_finfo_t fi;
    char *buf;
    die_unless(apr_file_open(&f, path, APR_FOPEN_READ, 0, pool) == APR_SUCCESS, path, 0);
    apr_file_info_get(&fi, APR_FINFO_SIZE, f);
    buf = apr_palloc(pool, (apr_size_t)fi.size + 1);
    *len = (apr_size_t)fi.size;
    apr_file_read_full(f, buf, *len, len);
    buf[*len] = '\0';
    apr_file_close(f);
    return buf;
}

static const bw_oas_t *spec(const char *name)
{
    const bw_oas_t *o;
    char *err = NULL;
    if ((o = apr_hash_get(specs, name, APR_HASH_KEY_STRING)))
        return o;
    o = bw_oas_load(tpool, data_path(name), &err);
    ck_assert_msg(o != NULL, "%s: %s", name, err ? err : "?");
    apr_hash_set(specs, apr_pstrdup(tpool, name), APR_HASH_KEY_STRING, o);
    return o;
}

/* ---- requests ------------------------------------------------------------------ */

typedef struct {
    const char *name, *spec, *method, *target;
    apr_array_header_t *headers, *cookies;   /* bw_kv_t */
    char *body;                              /* NULL: none */
    apr_array_header_t *expect;              /* char *: "WHERE ~ TEXT" */
    int line;
} req_case_t;

static bw_str_t pct(apr_pool_t *p, const char *s, size_t n)
{
    char *d = apr_palloc(p, n + 1);
    size_t i, o = 0;
    for (i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && bw_hexval(s[i + 1]) >= 0 && bw_hexval(s[i + 2]) >= 0) {
            d[o++] = (char)(bw_hexval(s[i + 1]) * 16 + bw_hexval(s[i + 2]));
            i += 2;
        } else {
            d[o++] = s[i] == '+' ? ' ' : s[i];
        }
    }
    d[o] = '\0';
    return bw_str_n(d, o);
}

/* ARGS_GET as the engine makes it, for the cases: a=b&c=d, %-decoded. */
static apr_array_header_t *query_args(apr_pool_t *p, const char *target)
{
    apr_array_header_t *a = apr_array_make(p, 4, sizeof(bw_kv_t));
    const char *q = strchr(target, '?');
    while (q && *q) {
        const char *s = q + 1, *e = strchr(s, '&'), *eq;
        bw_kv_t *kv;
        if (!e)
            e = s + strlen(s);
        if (e > s) {
            eq = memchr(s, '=', (size_t)(e - s));
            kv = apr_array_push(a);
            kv->name = pct(p, s, (size_t)((eq ? eq : e) - s));
            kv->value = eq ? pct(p, eq + 1, (size_t)(e - eq - 1)) : bw_str_n("", 0);
        }
        q = *e ? e : NULL;
    }
    return a;
}

/* The violations of one run of c, one line each: "WHERE ~ REASON". split:
 * 0 whole, 1 byte by byte, else the seed of random pieces. */
static apr_array_header_t *run_case(const req_case_t *c, unsigned split, apr_pool_t *p)
{
    bw_oas_request_t req;
    bw_oas_run_t *run;
    const bw_json_observer_t *ob;
    const apr_array_header_t *v;
    apr_array_header_t *out = apr_array_make(p, 4, sizeof(char *));
    pcre2_match_data *md = pcre2_match_data_create(16, NULL);
    int i;
    memset(&req, 0, sizeof(req));
    req.method = bw_str_make(c->method);
    req.uri = bw_str_make(c->target);
    req.query = query_args(p, c->target);
    req.headers = c->headers;
    req.cookies = c->cookies;
    run = bw_oas_begin(p, spec(c->spec), &req, md, NULL);
    ob = bw_oas_body_observer(run);
    if (c->body && ob) {
        bw_body_sink_t sink;
        bw_body_result_t res;
        bw_body_limits_t lim;
        bw_body_parser_t *bp;
        size_t len = strlen(c->body), at = 0;
        memset(&sink, 0, sizeof(sink));
        memset(&res, 0, sizeof(res));
        memset(&lim, 0, sizeof(lim));
        lim.json_depth = 100000;
        sink.json = ob;
        bp = bw_body_json_create(p, &lim, &sink, &res);
        srand(split);
        while (at < len) {
            size_t n = split == 0 ? len : split == 1 ? 1 : 1 + (size_t)rand() % 7;
            if (n > len - at)
                n = len - at;
            bw_body_feed(bp, c->body + at, n);
            at += n;
        }
        bw_body_finish(bp);
        bw_oas_body_end(run, 1, res.error ? res.error_msg : NULL);
    } else {
        bw_oas_body_end(run, c->body != NULL, NULL);
    }
    v = bw_oas_violations(run);
    for (i = 0; i < v->nelts; i++) {
        const bw_oas_violation_t *x = &((const bw_oas_violation_t *)v->elts)[i];
        *(char **)apr_array_push(out) = apr_psprintf(p, "%s ~ %s", x->where, x->reason);
    }
    pcre2_match_data_free(md);
    return out;
}

static void check_case(const req_case_t *c)
{
    apr_pool_t *p;
    apr_array_header_t *got, *again;
    unsigned split;
    int i;
    apr_pool_create(&p, tpool);
    got = run_case(c, 0, p);
    for (i = 0; i < got->nelts || i < c->expect->nelts; i++) {
        const char *g = i < got->nelts ? ((char **)got->elts)[i] : "(nothing)";
        const char *e = i < c->expect->nelts ? ((char **)c->expect->elts)[i] : "(nothing)";
        const char *tilde = strstr(e, " ~ ");
        int ok = i < got->nelts && i < c->expect->nelts && tilde
            && !strncmp(g, e, (size_t)(tilde - e) + 3) && strstr(g + (tilde - e) + 3, tilde + 3);
        ck_assert_msg(ok, "case \"%s\" (line %d), violation %d:\n  expected %s\n  got      %s",
                      c->name, c->line, i + 1, e, g);
    }
    /* the same violations whatever pieces the body arrives in */
    for (split = 1; c->body && split < 12; split++) {
        again = run_case(c, split, p);
        ck_assert_msg(again->nelts == got->nelts, "case \"%s\": %d violations split %u, %d whole",
                      c->name, again->nelts, split, got->nelts);
        for (i = 0; i < got->nelts; i++)
            ck_assert_str_eq(((char **)again->elts)[i], ((char **)got->elts)[i]);
    }
    apr_pool_destroy(p);
}

static apr_array_header_t *read_lines(const char *name)
{
    apr_size_t len;
    char *text = slurp(data_path(name), &len), *save = NULL, *l;
    apr_array_header_t *lines = apr_array_make(pool, 256, sizeof(char *));
    /* keep empty lines: strtok_r would drop them */
    for (l = text; l; l = save) {
        save = strchr(l, '\n');
        if (save)
            *save++ = '\0';
        *(char **)apr_array_push(lines) = l;
    }
    return lines;
}

static apr_array_header_t *req_cases;

static void load_req_cases(void)
{
    apr_array_header_t *lines = read_lines("requests.cases");
    req_case_t *c = NULL;
    int i, in_expect = 0;
    req_cases = apr_array_make(pool, 64, sizeof(req_case_t));
    for (i = 0; i < lines->nelts; i++) {
        char *l = ((char **)lines->elts)[i];
        if (!strncmp(l, "== ", 3)) {
            c = apr_array_push(req_cases);
            memset(c, 0, sizeof(*c));
            c->name = l + 3;
            c->line = i + 1;
            c->spec = "shop.yaml";
            c->headers = apr_array_make(pool, 2, sizeof(bw_kv_t));
            c->cookies = apr_array_make(pool, 1, sizeof(bw_kv_t));
            c->expect = apr_array_make(pool, 2, sizeof(char *));
            in_expect = 0;
        } else if (!c || l[0] == '#' || (!l[0] && !in_expect)) {
            continue;
        } else if (in_expect) {
            if (l[0])
                *(char **)apr_array_push(c->expect) = l;
        } else if (!strncmp(l, "spec: ", 6)) {
            c->spec = l + 6;
        } else if (!strncmp(l, "request: ", 9)) {
            char *sp = strchr(l + 9, ' ');
            die_unless(sp != NULL, "requests.cases: request: METHOD TARGET", i + 1);
            c->method = apr_pstrmemdup(pool, l + 9, (size_t)(sp - l - 9));
            c->target = sp + 1;
        } else if (!strncmp(l, "header: ", 8) || !strncmp(l, "cookie: ", 8)) {
            int hdr = l[0] == 'h';
            char *sep = strstr(l + 8, hdr ? ": " : "=");
            bw_kv_t *kv = apr_array_push(hdr ? c->headers : c->cookies);
            die_unless(sep != NULL, "requests.cases: bad header or cookie", i + 1);
            kv->name = bw_str_n(l + 8, (size_t)(sep - l - 8));
            kv->value = bw_str_make(sep + (hdr ? 2 : 1));
        } else if (!strncmp(l, "body: ", 6)) {
            c->body = c->body ? apr_pstrcat(pool, c->body, "\n", l + 6, NULL) : l + 6;
        } else if (!strcmp(l, "expect:")) {
            in_expect = 1;
        } else {
            die_unless(0, "requests.cases: a line of no known kind", i + 1);
        }
    }
}

START_TEST(request_cases)
{
    const req_case_t *c = &((req_case_t *)req_cases->elts)[_i];
    check_case(c);
}
END_TEST

/* ---- descriptions --------------------------------------------------------------- */

typedef struct {
    const char *name, *text, *error;
    int line;
} spec_case_t;

static apr_array_header_t *spec_cases;

static void load_spec_cases(void)
{
    apr_array_header_t *lines = read_lines("specs.cases");
    spec_case_t *c = NULL;
    int i, in_spec = 0;
    spec_cases = apr_array_make(pool, 32, sizeof(spec_case_t));
    for (i = 0; i < lines->nelts; i++) {
        char *l = ((char **)lines->elts)[i];
        if (!strncmp(l, "== ", 3)) {
            c = apr_array_push(spec_cases);
            memset(c, 0, sizeof(*c));
            c->name = l + 3;
            c->line = i + 1;
            c->text = "";
            in_spec = 0;
        } else if (!c) {
            continue;
        } else if (!strcmp(l, "spec:")) {
            in_spec = 1;
        } else if (!strncmp(l, "error: ", 7)) {
            c->error = l + 7;
            in_spec = 0;
        } else if (in_spec) {
            c->text = apr_pstrcat(pool, c->text, l, "\n", NULL);
        }
    }
}

START_TEST(spec_cases_run)
{
    const spec_case_t *c = &((spec_case_t *)spec_cases->elts)[_i];
    char *err = NULL;
    bw_oas_t *o = bw_oas_load_text(tpool, "case.yaml", c->text, strlen(c->text), &err);
    ck_assert_msg(c->error != NULL, "case \"%s\" (line %d) has no error: line", c->name, c->line);
    if (!strcmp(c->error, "none")) {
        ck_assert_msg(o != NULL, "case \"%s\" (line %d): %s", c->name, c->line, err);
        return;
    }
    ck_assert_msg(o == NULL, "case \"%s\" (line %d) loaded; expected %s", c->name, c->line, c->error);
    ck_assert_msg(strstr(err, c->error) != NULL, "case \"%s\" (line %d):\n  expected %s\n  got      %s",
                  c->name, c->line, c->error, err);
    ck_assert_msg(!strncmp(err, "case.yaml: ", 11), "the file is named first: %s", err);
}
END_TEST

START_TEST(shop_loads)
{
    ck_assert_int_eq(bw_oas_operation_count(spec("shop.yaml")), 12);
    ck_assert_int_eq(bw_oas_operation_count(spec("notes31.json")), 1);
}
END_TEST

START_TEST(missing_file)
{
    char *err = NULL;
    ck_assert_ptr_null(bw_oas_load(tpool, data_path("no-such.yaml"), &err));
    ck_assert_ptr_nonnull(strstr(err, "no-such.yaml: cannot read"));
}
END_TEST

/* ---- hostile bodies ------------------------------------------------------------------ */

/* Run body (already built) against POST target; the violations' count,
 * the first violation's text in *first, the time taken in *secs. */
static long hostile(const char *target, const char *body, size_t len, int depth_limit,
                    const char **first, double *secs)
{
    bw_oas_request_t req;
    bw_oas_run_t *run;
    bw_body_sink_t sink;
    bw_body_result_t res;
    bw_body_limits_t lim;
    bw_body_parser_t *bp;
    apr_array_header_t *h = apr_array_make(tpool, 1, sizeof(bw_kv_t));
    bw_kv_t *ct = apr_array_push(h);
    struct timespec t0, t1;
    const apr_array_header_t *v;
    ct->name = bw_str_make("Content-Type");
    ct->value = bw_str_make("application/json");
    memset(&req, 0, sizeof(req));
    req.method = bw_str_make("POST");
    req.uri = bw_str_make(target);
    req.headers = h;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run = bw_oas_begin(tpool, spec("shop.yaml"), &req, NULL, NULL);
    memset(&sink, 0, sizeof(sink));
    memset(&res, 0, sizeof(res));
    memset(&lim, 0, sizeof(lim));
    lim.json_depth = depth_limit;
    sink.json = bw_oas_body_observer(run);
    ck_assert_ptr_nonnull(sink.json);
    bp = bw_body_json_create(tpool, &lim, &sink, &res);
    bw_body_feed(bp, body, len);
    bw_body_finish(bp);
    bw_oas_body_end(run, 1, res.error ? res.error_msg : NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    v = bw_oas_violations(run);
    *first = v->nelts ? apr_psprintf(tpool, "%s ~ %s", ((bw_oas_violation_t *)v->elts)[0].where,
                                     ((bw_oas_violation_t *)v->elts)[0].reason) : "";
    return bw_oas_violation_count(run);
}

/* The recursive Category nested 20,000 deep (40,000 JSON levels): valid,
 * checked with one level of state per JSON level. */
START_TEST(deep_recursive_ref)
{
    const int n = 20000;
    const char *open = "{\"name\":\"c\",\"children\":[", *close = "]}";
    size_t lo = strlen(open), len = (size_t)n * (lo + 2) + 16, at = 0;
    char *b = apr_palloc(tpool, len);
    const char *first;
    double secs;
    long nv;
    int i;
    for (i = 0; i < n; i++, at += lo)
        memcpy(b + at, open, lo);
    memcpy(b + at, "{\"name\":\"leaf\"}", 15);
    at += 15;
    for (i = 0; i < n; i++, at += 2)
        memcpy(b + at, close, 2);
    nv = hostile("/api/v1/categories", b, at, 100000, &first, &secs);
    ck_assert_msg(nv == 0, "%ld violations, first %s", nv, first);
    /* the same with one name missing deep down: found, named by its pointer */
    memcpy(b + (size_t)(n - 1) * lo + 2, "nome", 4);
    nv = hostile("/api/v1/categories", b, at, 100000, &first, &secs);
    ck_assert_int_eq(nv, 1);
    ck_assert_msg(strstr(first, "/children/0/children/0/") && strstr(first, "\"name\" is missing"),
                  "%s", first);
    ck_assert_msg(secs < 2.0, "%.2f s", secs);
}
END_TEST

/* Arrays nested 200,000 deep where nothing constrains them (metadata of an
 * order is strings only: the first array is refused, what is inside is
 * skipped with a counter). */
START_TEST(deep_unconstrained)
{
    const int n = 200000;
    const char *head = "{\"customer\":{\"email\":\"a@example.com\"},\"items\":[{\"sku\":\"SKU000001\","
                       "\"quantity\":1}],\"payment\":{\"method\":\"card\",\"last4\":\"1234\"},"
                       "\"metadata\":{\"x\":";
    size_t lh = strlen(head), len = lh + 2 * (size_t)n + 8, at = lh;
    char *b = apr_palloc(tpool, len);
    const char *first;
    double secs;
    long nv;
    memcpy(b, head, lh);
    memset(b + at, '[', (size_t)n);
    at += (size_t)n;
    memset(b + at, ']', (size_t)n);
    at += (size_t)n;
    memcpy(b + at, "}}", 2);
    at += 2;
    nv = hostile("/api/v1/orders", b, at, 1000000, &first, &secs);
    ck_assert_msg(nv == 1, "%ld violations, first %s", nv, first);
    ck_assert_msg(!strcmp(first, "/body/metadata/x ~ expected string, got array"), "%s", first);
    ck_assert_msg(secs < 2.0, "%.2f s", secs);
}
END_TEST

/* 500,000 order items: one violation (maxItems), each item still checked. */
START_TEST(huge_array)
{
    const int n = 500000;
    const char *head = "{\"customer\":{\"email\":\"a@example.com\"},\"payment\":{\"method\":\"card\","
                       "\"last4\":\"1234\"},\"items\":[";
    const char *item = "{\"sku\":\"SKU000001\",\"quantity\":2},";
    size_t lh = strlen(head), li = strlen(item), at = lh;
    char *b = apr_palloc(tpool, lh + li * (size_t)n + 64);
    const char *first;
    double secs;
    long nv;
    int i;
    memcpy(b, head, lh);
    for (i = 0; i < n; i++, at += li)
        memcpy(b + at, item, li);
    /* the last item is wrong: quantity 0 */
    memcpy(b + at - li, "{\"sku\":\"SKU000001\",\"quantity\":0}]}", li + 1);
    at += 1;
    nv = hostile("/api/v1/orders", b, at, 512, &first, &secs);
    ck_assert_msg(nv == 2, "%ld violations, first %s", nv, first);
    ck_assert_msg(!strcmp(first, "/body/items/499999/quantity ~ below the minimum 1"), "%s", first);
    ck_assert_msg(secs < 5.0, "%.2f s", secs);
}
END_TEST

/* The body parser's depth limit stops a hostile body before the validator
 * sees it all: the violation says the JSON is no document. */
START_TEST(depth_limit_stops)
{
    char b[4096];
    const char *first;
    double secs;
    long nv;
    memset(b, '[', 2000);
    memset(b + 2000, ']', 2000);
    nv = hostile("/api/v1/categories", b, 4000, 512, &first, &secs);
    ck_assert_int_ge(nv, 1);
    ck_assert_msg(strstr(first, "/body ~ expected object, got array") != NULL, "%s", first);
}
END_TEST

/* ---- patterns matched without PCRE2 (oas_pattern.c) ---------------------------- */

/* Patterns of the shape oas_pat_compile takes, each with a value it
 * matches (the mutations below start from it). */
static const struct { const char *re, *sample; } fast_patterns[] = {
    { "^SKU[0-9]{6}$", "SKU123456" },
    { "^B[0-9]+$", "B637361" },
    { "^P[0-9]{6}$", "P000001" },
    { "^[a-z][a-z0-9-]*$", "pet-food2" },
    { "^[A-Z]{4}-[0-9]{4}$", "ABCD-1234" },
    { "^[0-9a-f]{24}$", "0123456789abcdef01234567" },
    { "^[0-9]{4}$", "4242" },
    { "^$", "" },
    { "^a?b*c+$", "abbc" },
    { "^\\d{2,4}x\\w{0,3}$", "123x_Z9" },
    { "^a\\.b\\$c$", "a.b$c" },
    { "^ab{2,}c$", "abbbc" },
    { "^[+--]{1,2}z$", "+-z" },
    { "^a b[ ]c$", "a b c" },
    { "^[.$|()*]x?$", "|x" },
    { "^[a-]+_[-b]?$", "a-a_-" },
    { "^\\\\[\\]\\\\]{3}$", "\\]\\]" },
    { "^x{0}y{1,1}$", "y" },
};

/* Patterns that keep PCRE2: outside the shape, or where taking greedily
 * is not what PCRE2 does (the first five). */
static const char *const pcre_patterns[] = {
    "^a*a$", "^[0-9]+[0-9]{2}$", "^a{0,2}b?a$", "^\\w+_$", "^[a-c]*b?c$",
    "^a|b$", "^(ab)$", "^a.b$", "^[^a]$", "^a*?$", "^a++$", "^a{2}{3}$", "^\\s$",
    "^\\1$", "^\xc3\xa9$", "abc$", "^abc", "^abc\\$", "^a{,3}$", "^[a-z-0]$", "^[]a]$",
    "^a{x}$", "^\\bab$", "^[[:alpha:]]$", "^a\tb$", "^a{70000}$", "^[z-a]$", "$", "^",
};

/* The pattern as oas_schema.c compiles it for PCRE2. */
static pcre2_code *pcre_of(const char *re)
{
    int code;
    PCRE2_SIZE off;
    pcre2_code *c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED,
                                  PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &off, NULL);
    ck_assert_msg(c != NULL, "PCRE2 refuses %s", re);
    return c;
}

static int pcre_says(const pcre2_code *c, const char *s, size_t len, pcre2_match_data *md)
{
    int rc = pcre2_match(c, (PCRE2_SPTR)s, len, 0, 0, md, NULL);
    ck_assert_msg(rc >= 0 || rc == PCRE2_ERROR_NOMATCH, "PCRE2 error %d", rc);
    return rc >= 0;
}

START_TEST(pattern_shapes)
{
    size_t i;
    for (i = 0; i < sizeof(fast_patterns) / sizeof(fast_patterns[0]); i++)
        ck_assert_msg(oas_pat_compile(tpool, fast_patterns[i].re, strlen(fast_patterns[i].re)),
                      "%s should be matched without PCRE2", fast_patterns[i].re);
    for (i = 0; i < sizeof(pcre_patterns) / sizeof(pcre_patterns[0]); i++)
        ck_assert_msg(!oas_pat_compile(tpool, pcre_patterns[i], strlen(pcre_patterns[i])),
                      "%s should keep PCRE2", pcre_patterns[i]);
}
END_TEST

/* Every value up to four bytes over the pattern's own bytes and a few
 * others (a newline, a two-byte character, an invalid byte), and 3,000
 * mutations of its sample: oas_pat_match says what PCRE2 says. */
START_TEST(pattern_agrees)
{
    const char *re = fast_patterns[_i].re, *sample = fast_patterns[_i].sample;
    const oas_pat_t *pat = oas_pat_compile(tpool, re, strlen(re));
    pcre2_code *re2 = pcre_of(re);
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    char alpha[64], buf[64];
    size_t na = 0, i, n, len;
    const char *extra = "\n\xc3\xa9\xff" "0aZ_";
    unsigned seed = 12345u + (unsigned)_i;
    ck_assert(pat != NULL);
    for (i = 1; re[i + 1]; i++)     /* the pattern's bytes between ^ and $ */
        if (!memchr(alpha, re[i], na) && re[i] != '\\' && na < 40)
            alpha[na++] = re[i];
    for (i = 0; extra[i]; i++)
        if (!memchr(alpha, extra[i], na))
            alpha[na++] = extra[i];
    ck_assert_int_eq(oas_pat_match(pat, sample, strlen(sample)), 1);
    ck_assert_int_eq(pcre_says(re2, sample, strlen(sample), md), 1);
    for (len = 0; len <= 4; len++) {
        size_t total = 1, k;
        for (k = 0; k < len; k++)
            total *= na;
        if (total > 200000)
            break;
        for (n = 0; n < total; n++) {
            size_t v = n;
            for (k = 0; k < len; k++, v /= na)
                buf[k] = alpha[v % na];
            ck_assert_msg(oas_pat_match(pat, buf, len) == pcre_says(re2, buf, len, md),
                          "%s on \"%.*s\"", re, (int)len, buf);
        }
    }
    for (n = 0; n < 3000; n++) {
        size_t k, edits = 1 + rand_r(&seed) % 3;
        len = strlen(sample);
        memcpy(buf, sample, len);
        for (k = 0; k < edits; k++) {
            size_t at = len ? (size_t)rand_r(&seed) % (len + 1) : 0;
            char c = alpha[(size_t)rand_r(&seed) % na];
            switch (rand_r(&seed) % 3) {
            case 0:                                   /* replace */
                if (at < len)
                    buf[at] = c;
                break;
            case 1:                                   /* insert */
                if (len < sizeof(buf) - 1) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = c;
                    len++;
                }
                break;
            default:                                  /* delete */
                if (at < len) {
                    memmove(buf + at, buf + at + 1, len - at - 1);
                    len--;
                }
            }
        }
        ck_assert_msg(oas_pat_match(pat, buf, len) == pcre_says(re2, buf, len, md),
                      "%s on \"%.*s\"", re, (int)len, buf);
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re2);
}
END_TEST

static Suite *openapi_suite(void)
{
    Suite *s = suite_create("openapi");
    TCase *tc = tcase_create("requests");
    TCase *ts = tcase_create("descriptions");
    TCase *th = tcase_create("hostile");
    tcase_set_timeout(tc, 60);
    tcase_set_timeout(th, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_checked_fixture(ts, setup, teardown);
    tcase_add_checked_fixture(th, setup, teardown);
    tcase_add_loop_test(tc, request_cases, 0, req_cases->nelts);
    tcase_add_test(ts, shop_loads);
    tcase_add_test(ts, missing_file);
    tcase_add_test(ts, pattern_shapes);
    tcase_add_loop_test(ts, pattern_agrees, 0,
                        (int)(sizeof(fast_patterns) / sizeof(fast_patterns[0])));
    tcase_add_loop_test(ts, spec_cases_run, 0, spec_cases->nelts);
    tcase_add_test(th, deep_recursive_ref);
    tcase_add_test(th, deep_unconstrained);
    tcase_add_test(th, huge_array);
    tcase_add_test(th, depth_limit_stops);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, ts);
    suite_add_tcase(s, th);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;
    apr_initialize();
    apr_pool_create(&pool, NULL);
    load_req_cases();
    load_spec_cases();
    sr = srunner_create(openapi_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(pool);
    apr_terminate();
    return failed ? 1 : 0;
}
