/*
 * Unit tests for @validateDTD and @validateSchema (apache2/operators/
 * op_validate_dtd.c, op_validate_schema.c): documents parsed here stand in
 * for the XML body processor's. The vectors in data/op/misc.vec cover the
 * parameter and file errors; this file covers validation itself, that no URL
 * is fetched while a schema or DTD loads, and that threads can share one
 * compiled DTD or schema.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_files.h"
#include <libxml/parser.h>
#include "operators/op_internal.h"

static apr_pool_t *g_pool;
/* The process's pool: g_pool is a child of it for each test (the checked
 * fixture), so what a test opens (libxml2 documents and schemas, MaxMind
 * DBs: their cleanups free memory APR does not own) is freed before the
 * forked test ends, and LeakSanitizer sees nothing left. */
static apr_pool_t *g_root;

static void per_test_pool(void)
{
    apr_pool_create(&g_pool, g_root);
}

static void per_test_pool_done(void)
{
    apr_pool_destroy(g_pool);
    g_pool = g_root;
}
static const char *g_dir;   /* $BW_TEST_DATA/op */

#define VALID "<order id=\"7\"><item>tea</item><item>milk</item><quantity>2</quantity></order>"
#define NO_QUANTITY "<order id=\"7\"><item>tea</item></order>"
#define BAD_ID "<order id=\"seven\"><item>tea</item><quantity>2</quantity></order>"
#define NO_ID "<order><item>tea</item><quantity>2</quantity></order>"
#define STRANGER "<order id=\"7\"><item>tea</item><quantity>2</quantity><x\"y/></order>"
#define OTHER_ROOT "<invoice/>"

/* Compile @name param with the rule file in data/op/; NULL and *err on failure. */
static bw_op_t *compile(const char *name, const char *param, char **err)
{
    bw_op_t *op = apr_pcalloc(g_pool, sizeof(*op));
    bw_op_cenv_t env;
    memset(&env, 0, sizeof(env));
    op->def = bw_op_lookup(name);
    ck_assert_ptr_nonnull(op->def);
    op->param = param;
    op->param_len = strlen(param);
    env.pool = g_pool;
    env.temp_pool = g_pool;
    env.file = apr_pstrcat(g_pool, g_dir, "/rules.conf", NULL);
    env.line = 1;
    *err = NULL;
    return op->def->compile(op, &env, err) == 0 ? op : NULL;
}

static bw_op_t *must_compile(const char *name, const char *param)
{
    char *err;
    bw_op_t *op = compile(name, param, &err);
    ck_assert_msg(op != NULL, "@%s %s: %s", name, param, err ? err : "?");
    return op;
}

/* Run op over doc (parsed from text as the body processor would: no
 * entity substitution, no network). Returns the operator's result. */
static int run_on(const bw_op_t *op, const char *text, const char **msg)
{
    bw_op_run_t run;
    xmlDocPtr doc = xmlReadMemory(text, (int)strlen(text), "body.xml", NULL, XML_PARSE_NONET);
    int rc;
    ck_assert_ptr_nonnull(doc);
    memset(&run, 0, sizeof(run));
    run.pool = g_pool;
    run.var_name = "XML";
    run.ncaptures = -1;
    run.xml_doc = doc;
    rc = op->def->execute(op, &run, bw_str_make("ignored"));
    if (msg)
        *msg = run.msg;
    xmlFreeDoc(doc);
    return rc;
}

START_TEST(test_schema_validates)
{
    bw_op_t *op = must_compile("validateSchema", "order.xsd");
    const char *msg = NULL;
    ck_assert_int_eq(run_on(op, VALID, &msg), 0);
    ck_assert_ptr_null(msg);
    ck_assert_int_eq(run_on(op, NO_QUANTITY, &msg), 1);
    ck_assert_str_eq(msg, "XML: Schema validation failed. Element 'order': Missing child "
                          "element(s). Expected is ( item ). (line 1)");
    ck_assert_int_eq(run_on(op, BAD_ID, NULL), 1);
    ck_assert_int_eq(run_on(op, NO_ID, NULL), 1);
    ck_assert_int_eq(run_on(op, OTHER_ROOT, NULL), 1);
}
END_TEST

START_TEST(test_dtd_validates)
{
    bw_op_t *op = must_compile("validateDTD", "order.dtd");
    const char *msg = NULL;
    ck_assert_int_eq(run_on(op, VALID, &msg), 0);
    ck_assert_int_eq(run_on(op, BAD_ID, NULL), 0);   /* CDATA: any id will do */
    ck_assert_int_eq(run_on(op, NO_QUANTITY, &msg), 1);
    ck_assert_str_eq(msg, "XML: DTD validation failed. Element order content does not follow "
                          "the DTD, expecting (item+ , quantity), got (item) (line 1)");
    ck_assert_int_eq(run_on(op, NO_ID, NULL), 1);
    ck_assert_int_eq(run_on(op, OTHER_ROOT, NULL), 1);
}
END_TEST

/* The document's own DOCTYPE does not replace the operator's DTD. */
START_TEST(test_dtd_ignores_document_doctype)
{
    bw_op_t *op = must_compile("validateDTD", "order.dtd");
    ck_assert_int_eq(run_on(op, "<!DOCTYPE invoice [<!ELEMENT invoice EMPTY>]><invoice/>", NULL), 1);
}
END_TEST

/* Messages quote the client's names: escaped, and not built for nolog rules. */
START_TEST(test_messages)
{
    bw_op_t *op = must_compile("validateSchema", "order.xsd");
    bw_op_run_t run;
    xmlDocPtr doc = xmlReadMemory("<ord\xc3\xa9r/>", 9, "b.xml", NULL, XML_PARSE_NONET);
    ck_assert_ptr_nonnull(doc);
    memset(&run, 0, sizeof(run));
    run.pool = g_pool;
    run.var_name = "XML";
    run.xml_doc = doc;
    ck_assert_int_eq(op->def->execute(op, &run, bw_str_make("")), 1);
    ck_assert_msg(strstr(run.msg, "'ord\\xc3\\xa9r'") != NULL, "%s", run.msg);
    memset(&run, 0, sizeof(run));
    run.pool = g_pool;
    run.no_msg = 1;
    run.xml_doc = doc;
    ck_assert_int_eq(op->def->execute(op, &run, bw_str_make("")), 1);
    ck_assert_ptr_null(run.msg);
    xmlFreeDoc(doc);
}
END_TEST

/* Write name in the data directory's temporary copy; returns its path. */
/* An include or parameter entity naming a URL fails the load instead of
 * fetching it; one naming a local file beside the schema or DTD is read.
 * Port 9 (discard) on loopback: a fetch would at worst be refused quickly. */
START_TEST(test_no_network_on_load)
{
    char tmpl[] = "/tmp/bw-test-op-xml-XXXXXX", *err;
    const char *dir = mkdtemp(tmpl), *p;
    ck_assert_ptr_nonnull(dir);
    tu_write_file(g_pool, dir, "part.xsd",
               "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\">"
               "<xs:element name=\"part\" type=\"xs:string\"/></xs:schema>");
    p = tu_write_file(g_pool, dir, "local.xsd",
                   "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\">"
                   "<xs:include schemaLocation=\"part.xsd\"/></xs:schema>");
    ck_assert_ptr_nonnull(compile("validateSchema", p, &err));
    p = tu_write_file(g_pool, dir, "remote.xsd",
                   "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\">"
                   "<xs:include schemaLocation=\"http://127.0.0.1:9/part.xsd\"/></xs:schema>");
    ck_assert_ptr_null(compile("validateSchema", p, &err));
    ck_assert_msg(strstr(err, "Attempt to load network entity http://127.0.0.1:9/part.xsd"), "%s", err);
    tu_write_file(g_pool, dir, "names.ent", "<!ELEMENT name (#PCDATA)>");
    p = tu_write_file(g_pool, dir, "local.dtd", "<!ENTITY % n SYSTEM \"names.ent\"> %n;");
    {
        bw_op_t *op = must_compile("validateDTD", p);
        ck_assert_int_eq(run_on(op, "<name>x</name>", NULL), 0);
    }
    p = tu_write_file(g_pool, dir, "remote.dtd", "<!ENTITY % n SYSTEM \"http://127.0.0.1:9/names.ent\"> %n;"
                                      "<!ELEMENT other EMPTY>");
    ck_assert_ptr_null(compile("validateDTD", p, &err));
    ck_assert_msg(strstr(err, "network entity http://127.0.0.1:9/names.ent"), "%s", err);
    /* the loader is the default one again once start-up is done */
    ck_assert_ptr_ne(xmlGetExternalEntityLoader(), xmlNoNetExternalEntityLoader);
    {
        const char *names[] = { "part.xsd", "local.xsd", "remote.xsd", "names.ent", "local.dtd",
                                "remote.dtd", NULL };
        int i;
        for (i = 0; names[i]; i++)
            unlink(apr_pstrcat(g_pool, dir, "/", names[i], NULL));
        rmdir(dir);
    }
}
END_TEST

/* Many threads over one compiled DTD and schema (the content models were
 * built at start-up, so no thread writes into the shared DTD). */
typedef struct {
    const bw_op_t *dtd, *xsd;
    int bad;
} share_t;

static void *validate_many(void *arg)
{
    share_t *s = arg;
    int i;
    for (i = 0; i < 200; i++) {
        const char *text = (i & 1) ? VALID : NO_QUANTITY;
        xmlDocPtr doc = xmlReadMemory(text, (int)strlen(text), "b.xml", NULL, XML_PARSE_NONET);
        bw_op_run_t run;
        memset(&run, 0, sizeof(run));
        run.no_msg = 1;
        run.xml_doc = doc;
        if (s->dtd->def->execute(s->dtd, &run, bw_str_make("")) != !(i & 1)
            || s->xsd->def->execute(s->xsd, &run, bw_str_make("")) != !(i & 1))
            s->bad++;
        xmlFreeDoc(doc);
    }
    return NULL;
}

START_TEST(test_threads_share)
{
    share_t s[4];
    pthread_t t[4];
    int i;
    const bw_op_t *dtd = must_compile("validateDTD", "order.dtd");
    const bw_op_t *xsd = must_compile("validateSchema", "order.xsd");
    for (i = 0; i < 4; i++) {
        s[i].dtd = dtd;
        s[i].xsd = xsd;
        s[i].bad = 0;
        ck_assert_int_eq(pthread_create(&t[i], NULL, validate_many, &s[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(s[i].bad, 0);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("op_xml");
    TCase *tc = tcase_create("validate");
    tcase_add_checked_fixture(tc, per_test_pool, per_test_pool_done);
    SRunner *sr;
    const char *data = getenv("BW_TEST_DATA");
    int failed;

    apr_initialize();
    xmlInitParser();
    apr_pool_create(&g_root, NULL);
    g_pool = g_root;
    g_dir = apr_pstrcat(g_pool, data ? data : "tests/unit/data", "/op", NULL);
    tcase_add_test(tc, test_schema_validates);
    tcase_add_test(tc, test_dtd_validates);
    tcase_add_test(tc, test_dtd_ignores_document_doctype);
    tcase_add_test(tc, test_messages);
    tcase_add_test(tc, test_no_network_on_load);
    tcase_add_test(tc, test_threads_share);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(g_root);
    apr_terminate();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
