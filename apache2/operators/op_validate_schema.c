/*
 * @validateSchema — validate the request's XML document against an XML
 * Schema.
 *
 * Description: The XML body processor's document (the value itself is
 *   ignored; the rule usually names XML) is validated against the schema.
 *   The schema is read and compiled once at start-up, without network
 *   access: an xs:import or xs:include may name a local file, never a URL.
 *   libxml2 validation contexts are not thread-safe, so each call makes its
 *   own over the shared, read-only compiled schema.
 * Arguments: the schema file; a relative name is resolved against the
 *   directory of the rule file. A file that cannot be read or is not a
 *   valid schema is a configuration error naming the file, line and reason.
 * Returns: 1 when the document is not valid (message "XML: Schema
 *   validation failed." and libxml2's first complaint), 0 when it is, and
 *   -1 when there is no document (the body was not parsed as XML), as
 *   mod_security2, which neither matches nor passes then.
 * Example: SecRule XML "@validateSchema /etc/bulwark/order.xsd" "id:1,phase:2,deny"
 */
#include <limits.h>
#include "op_xml.h"
#include <libxml/xmlschemas.h>

typedef struct {
    xmlDocPtr doc;        /* the schema document: the compiled schema points into it */
    xmlSchemaPtr schema;
} schema_t;

static apr_status_t schema_free(void *data)
{
    schema_t *s = data;
    if (s->schema)
        xmlSchemaFree(s->schema);
    if (s->doc)
        xmlFreeDoc(s->doc);
    s->schema = NULL;
    s->doc = NULL;
    return APR_SUCCESS;
}

/* Parse and compile the schema at path into s; 0, or -1 with e filled. */
static int schema_load(schema_t *s, const char *path, bw_str_t text, bw_xmlerr_t *e)
{
    xmlSchemaParserCtxtPtr pc;
    if (text.len > (size_t)INT_MAX)
        return -1;
    /* no NOENT: entities are not substituted; NONET: no URL is fetched */
    s->doc = xmlReadMemory(text.data, (int)text.len, path, NULL,
                           XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (s->doc == NULL)
        return -1;
    pc = xmlSchemaNewDocParserCtxt(s->doc);
    if (pc == NULL)
        return -1;
    xmlSchemaSetParserStructuredErrors(pc, bw_xmlerr_structured, e);
    s->schema = xmlSchemaParse(pc);
    xmlSchemaFreeParserCtxt(pc);
    return s->schema ? 0 : -1;
}

static int schema_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    schema_t *s = apr_pcalloc(env->pool, sizeof(*s));
    const char *path;
    xmlExternalEntityLoader saved;
    bw_xmlerr_t e;
    bw_str_t text;
    int rc;

    if (bw_op_data_file(env->pool, env, "validateSchema", "schema",
                        bw_str_trim(bw_str_n(op->param, op->param_len)), &path, err) < 0
        || bw_op_read_file(env->pool, "validateSchema", "schema", path, &text, err) < 0)
        return -1;
    apr_pool_cleanup_register(env->pool, s, schema_free, apr_pool_cleanup_null);
    bw_op_xml_load_begin(&e, &saved);
    rc = schema_load(s, path, text, &e);
    bw_op_xml_load_end(&e, saved);
    if (rc < 0) {
        *err = bw_op_xml_load_error(env->pool, "validateSchema", "schema", path, &e);
        return -1;
    }
    op->data = s;
    return 0;
}

static int schema_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    const schema_t *s = op->data;
    xmlSchemaValidCtxtPtr vc;
    bw_xmlerr_t e;
    int rc;

    (void)value;
    if (run->xml_doc == NULL) {
        run->error = "XML document tree could not be found for schema validation";
        return -1;
    }
    bw_xmlerr_catch(&e);
    vc = xmlSchemaNewValidCtxt(s->schema);
    if (vc == NULL) {
        bw_xmlerr_release(&e);
        run->error = "XML: cannot create a schema validation context";
        return -1;
    }
    xmlSchemaSetValidStructuredErrors(vc, bw_xmlerr_structured, &e);
    /* without XML_SCHEMA_VAL_VC_I_CREATE validation only reads the document */
    rc = xmlSchemaValidateDoc(vc, run->xml_doc);
    xmlSchemaFreeValidCtxt(vc);
    bw_xmlerr_release(&e);
    /* rc < 0 is libxml2 giving up (an entity reference it cannot follow...):
     * a document it cannot call valid is not, as in mod_security2 */
    if (rc == 0)
        return 0;
    run->msg = bw_op_xml_invalid_msg(run, "Schema", &e);
    return 1;
}

const bw_op_def_t bw_op_validate_schema = {
    "validateSchema", BW_OP_PARAM_REQUIRED, schema_compile, schema_execute, NULL, NULL
};
