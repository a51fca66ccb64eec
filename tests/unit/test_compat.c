/*
 * The compatibility table (apache2/lang/bw_compat.c) against
 * docs/compatibility.md, in both directions, and the warnings `bulwark
 * check` prints from it: a row and its table entry cannot drift apart, a
 * test a row names must exist, and each use of an entry is one warning at
 * its file and line.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <unistd.h>
#include <glob.h>
#include <apr_general.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "lang/bw_compat.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

/* The source tree: BW_TEST_DATA is <srcdir>/tests/unit/data. */
static const char *srcdir(void)
{
    const char *data = getenv("BW_TEST_DATA");
    ck_assert_msg(data != NULL, "BW_TEST_DATA is not set (run through make check)");
    return apr_pstrcat(pool, data, "/../../..", NULL);
}

/* One table row of the docs: | `name` | status | how | test | */
typedef struct {
    int kind;              /* section, as bw_compat_kind_t */
    const char *name, *status, *how, *test;
    int line;
} doc_row_t;

static const char *const sections[] = { "## Directives", "## Variables", "## Operators",
                                        "## Transformations", "## Actions" };

static char *cell(char **s)
{
    char *start = *s, *end = strstr(start, " | ");
    if (!end) {
        end = start + strlen(start);
        while (end > start && (end[-1] == '|' || end[-1] == ' ' || end[-1] == '\n'))
            end--;
        *end = '\0';
        *s = end;
        return start;
    }
    *end = '\0';
    *s = end + 3;
    return start;
}

static int parse_row(char *line, int kind, int lineno, doc_row_t *out)
{
    char *s = line + 2, *name;
    if (strncmp(line, "| `", 3))
        return 0;
    name = cell(&s);
    out->kind = kind;
    out->name = apr_pstrndup(pool, name + 1, strlen(name) - 2);   /* the backticks */
    out->status = apr_pstrdup(pool, cell(&s));
    out->how = apr_pstrdup(pool, cell(&s));
    out->test = apr_pstrdup(pool, cell(&s));
    out->line = lineno;
    return 1;
}

static apr_array_header_t *doc_rows(void)
{
    const char *path = apr_pstrcat(pool, srcdir(), "/docs/compatibility.md", NULL);
    apr_array_header_t *rows = apr_array_make(pool, 400, sizeof(doc_row_t));
    char buf[4096];
    int kind = -1, lineno = 0, k;
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    while (fgets(buf, sizeof(buf), f)) {
        lineno++;
        if (!strncmp(buf, "## ", 3)) {
            kind = -1;
            for (k = 0; k < BW_COMPAT__KINDS; k++)
                if (!strncmp(buf, sections[k], strlen(sections[k])))
                    kind = k;
            continue;
        }
        if (kind >= 0 && !parse_row(buf, kind, lineno, apr_array_push(rows)))
            apr_array_pop(rows);
    }
    fclose(f);
    ck_assert_int_gt(rows->nelts, 300);
    return rows;
}

static const doc_row_t *find_row(const apr_array_header_t *rows, int kind, const char *name)
{
    int i;
    for (i = 0; i < rows->nelts; i++) {
        const doc_row_t *r = &((const doc_row_t *)rows->elts)[i];
        if (r->kind == kind && !strcmp(r->name, name))
            return r;
    }
    return NULL;
}

START_TEST(every_entry_has_its_row)
{
    apr_array_header_t *rows = doc_rows();
    const bw_compat_t *c;
    for (c = bw_compat_table; c->name; c++) {
        const char *name = bw_compat_display(pool, c);
        const doc_row_t *r = find_row(rows, c->kind, name);
        ck_assert_msg(r != NULL, "docs/compatibility.md has no %s row for %s", bw_compat_kind_name(c->kind),
                      name);
        ck_assert_msg(!strncmp(r->status, "supported differently", 21),
                      "docs/compatibility.md:%d: %s is in the compat table, the row says \"%s\"", r->line,
                      name, r->status);
        ck_assert_msg(!strncmp(r->how, c->how, strlen(c->how)),
                      "docs/compatibility.md:%d: %s: the row does not start with the table's text \"%s\"",
                      r->line, name, c->how);
    }
}
END_TEST

START_TEST(every_differently_row_is_in_the_table)
{
    apr_array_header_t *rows = doc_rows();
    int i;
    for (i = 0; i < rows->nelts; i++) {
        const doc_row_t *r = &((const doc_row_t *)rows->elts)[i];
        const char *name = r->kind == BW_COMPAT_OPERATOR && r->name[0] == '@' ? r->name + 1 : r->name;
        const bw_compat_t *c;
        if (strncmp(r->status, "supported differently", 21))
            continue;
        for (c = bw_compat_table; c->name; c++)
            if ((int)c->kind == r->kind && !strcmp(c->name, name))
                break;
        ck_assert_msg(c->name != NULL, "docs/compatibility.md:%d: %s is \"supported differently\" "
                      "but not in apache2/lang/bw_compat.c", r->line, r->name);
    }
}
END_TEST

/* Each `path` in a test cell exists (a glob matches). */
START_TEST(named_tests_exist)
{
    apr_array_header_t *rows = doc_rows();
    const char *top = srcdir();
    int i;
    for (i = 0; i < rows->nelts; i++) {
        const doc_row_t *r = &((const doc_row_t *)rows->elts)[i];
        const char *s = r->test;
        while ((s = strchr(s, '`')) != NULL) {
            const char *e = strchr(s + 1, '`');
            glob_t g;
            char *pattern;
            ck_assert_ptr_nonnull(e);
            pattern = apr_pstrcat(pool, top, "/", apr_pstrndup(pool, s + 1, (apr_size_t)(e - s - 1)), NULL);
            ck_assert_msg(glob(pattern, 0, NULL, &g) == 0, "docs/compatibility.md:%d: %s names %.*s, "
                          "which does not exist", r->line, r->name, (int)(e - s - 1), s + 1);
            globfree(&g);
            s = e + 1;
        }
    }
}
END_TEST

static const char *rule_file(const char *text)
{
    char *path = apr_pstrdup(pool, "/tmp/bw_test_compat_XXXXXX");
    apr_file_t *f;
    ck_assert_int_eq(apr_file_mktemp(&f, path, APR_CREATE | APR_READ | APR_WRITE | APR_EXCL, pool),
                     APR_SUCCESS);
    apr_file_write_full(f, text, strlen(text), NULL);
    apr_file_close(f);
    return path;
}

static const char *const config_text =
    "SecCookieFormat 0\n"
    "SecCookieFormat 1\n"
    "SecDebugLog /dev/null\n"
    "SecRule PATH_INFO|ARGS|!PATH_INFO|PATH_INFO \"@rbl bl.example.org\" "
    "\"id:1,phase:2,pass,t:none,t:lowercase,pause:10,ctl:debugLogLevel=3,ctl:ruleEngine=Off\"\n"
    "SecRule ARGS \"@rx x\" \"id:2,phase:2,pass,chain\"\n"
    "    SecRule REMOTE_HOST \"@detectSQLi\" \"t:none,append:x\"\n"
    "SecDefaultAction \"phase:2,pass,log,prepend:y\"\n"
    "SecRuleUpdateTargetById 2 SCRIPT_FILENAME\n"
    "SecRuleUpdateActionById 2 \"xmlns:x=http://example.com/\"\n"
    "SecAction \"id:3,phase:1,pass,nolog,setvar:tx.a=1\"\n";

static const char *const expected[] = {
    ":2: warning: directive SecCookieFormat differs from mod_security2: cookies are always parsed",
    ":3: warning: directive SecDebugLog differs from mod_security2: accepted and ignored",
    ":4: warning: variable PATH_INFO differs from mod_security2: always empty",
    ":4: warning: operator @rbl differs from mod_security2: IPv4 only",
    ":4: warning: action pause differs from mod_security2: accepted and ignored: the response",
    ":4: warning: action ctl:debugLogLevel differs from mod_security2: accepted and ignored",
    ":6: warning: variable REMOTE_HOST differs from mod_security2: the client's address",
    ":6: warning: operator @detectSQLi differs from mod_security2: Bulwark's own SQL tokenizer",
    ":6: warning: action append differs from mod_security2: accepted and ignored: content injection",
    ":7: warning: action prepend differs from mod_security2: accepted and ignored: content injection",
    ":8: warning: variable SCRIPT_FILENAME differs from mod_security2: always empty",
    ":9: warning: action xmlns differs from mod_security2: accepted and ignored: XPath",
    NULL
};

START_TEST(one_warning_per_use_at_its_line)
{
    const char *path = rule_file(config_text);
    bw_config_t *cfg = bw_config_create(pool);
    const apr_array_header_t *notes;
    const char *err;
    int i;

    bw_config_note_compat(cfg);
    err = bw_config_load_file(cfg, path);
    unlink(path);
    ck_assert_msg(err == NULL, "%s", err);
    notes = bw_config_compat_notes(cfg);
    for (i = 0; expected[i]; i++) {
        const char *want = apr_pstrcat(pool, path, expected[i], NULL);
        ck_assert_msg(i < notes->nelts, "missing warning %s", want);
        ck_assert_msg(!strncmp(((const char **)notes->elts)[i], want, strlen(want)),
                      "warning %d is \"%s\", expected \"%s...\"", i, ((const char **)notes->elts)[i], want);
    }
    ck_assert_int_eq(notes->nelts, i);
}
END_TEST

START_TEST(no_warnings_unless_asked)
{
    const char *path = rule_file(config_text);
    bw_config_t *cfg = bw_config_create(pool);
    const char *err = bw_config_load_file(cfg, path);
    unlink(path);
    ck_assert_msg(err == NULL, "%s", err);
    ck_assert_ptr_null(bw_config_compat_notes(cfg));
}
END_TEST

START_TEST(lookup_by_kind_name_and_argument)
{
    ck_assert_ptr_nonnull(bw_compat_find(BW_COMPAT_DIRECTIVE, "secstatusengine", 15, "on"));
    ck_assert_ptr_null(bw_compat_find(BW_COMPAT_DIRECTIVE, "SecStatusEngine", 15, "Off"));
    ck_assert_ptr_null(bw_compat_find(BW_COMPAT_DIRECTIVE, "SecStatusEngine", 15, NULL));
    ck_assert_ptr_nonnull(bw_compat_find(BW_COMPAT_DIRECTIVE, "SecDebugLog", 11, NULL));
    ck_assert_ptr_null(bw_compat_find(BW_COMPAT_DIRECTIVE, "SecDebugLogLevelX", 17, NULL));
    ck_assert_ptr_null(bw_compat_find(BW_COMPAT_VARIABLE, "SecDebugLog", 11, NULL));
    ck_assert_ptr_null(bw_compat_find(BW_COMPAT_VARIABLE, "ARGS", 4, NULL));
    ck_assert_ptr_nonnull(bw_compat_find(BW_COMPAT_OPERATOR, "rbl", 3, NULL));
    ck_assert_str_eq(bw_compat_display(pool, bw_compat_find(BW_COMPAT_OPERATOR, "rbl", 3, NULL)), "@rbl");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("compat");
    TCase *tc = tcase_create("compat");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, every_entry_has_its_row);
    tcase_add_test(tc, every_differently_row_is_in_the_table);
    tcase_add_test(tc, named_tests_exist);
    tcase_add_test(tc, one_warning_per_use_at_its_line);
    tcase_add_test(tc, no_warnings_unless_asked);
    tcase_add_test(tc, lookup_by_kind_name_and_argument);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;
    apr_initialize();
    sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_terminate();
    return failed ? 1 : 0;
}
