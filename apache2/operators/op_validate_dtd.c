/*
 * @validateDTD — validate the request's XML document against a DTD.
 *
 * Description: The XML body processor's document (the value itself is
 *   ignored; the rule usually names XML) is validated against the DTD,
 *   whatever DOCTYPE the document declares. The DTD is parsed once at
 *   start-up without network access and without substituting entities;
 *   the content model of every element is built then too, because libxml2
 *   would otherwise build it lazily on first use, writing into the DTD that
 *   every thread shares. Each call makes its own validation context.
 * Arguments: the DTD file; a relative name is resolved against the
 *   directory of the rule file. A file that cannot be read, does not parse
 *   or draws a warning (an external entity naming a URL is one) is a
 *   configuration error naming the file, line and reason.
 * Returns: 1 when the document is not valid (message "XML: DTD validation
 *   failed." and libxml2's first complaint), 0 when it is, and -1 when
 *   there is no document (the body was not parsed as XML), as
 *   mod_security2, which neither matches nor passes then.
 * Example: SecRule XML "@validateDTD /etc/bulwark/order.dtd" "id:1,phase:2,deny"
 */
#include "op_xml.h"
#include <libxml/valid.h>
#include <libxml/hash.h>

typedef struct {
    xmlValidCtxtPtr vc;
    int failed;
} build_t;

static apr_status_t dtd_free(void *data)
{
    xmlDtdPtr *dtd = data;
    if (*dtd)
        xmlFreeDtd(*dtd);
    *dtd = NULL;
    return APR_SUCCESS;
}

static void build_one(void *payload, void *data, const xmlChar *name)
{
    build_t *b = data;
    xmlElementPtr el = payload;
    (void)name;
    if (el->etype == XML_ELEMENT_TYPE_ELEMENT && el->contModel == NULL
        && !xmlValidBuildContentModel(b->vc, el))
        b->failed = 1;
}

/* Every element's content model, built now (see the top of the file). */
static int build_models(xmlDtdPtr dtd)
{
    build_t b = { xmlNewValidCtxt(), 0 };
    if (b.vc == NULL)
        return -1;
    b.vc->error = NULL;
    b.vc->warning = NULL;
    if (dtd->elements)
        xmlHashScan(dtd->elements, build_one, &b);
    xmlFreeValidCtxt(b.vc);
    return b.failed ? -1 : 0;
}

static int dtd_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    xmlDtdPtr *dtd = apr_pcalloc(env->pool, sizeof(*dtd));
    const char *path;
    xmlExternalEntityLoader saved;
    bw_xmlerr_t e;
    bw_str_t text;
    int rc = -1;

    /* read once here for a clear "cannot read"; libxml2 reads it again by
     * name so that relative parameter entities resolve beside it */
    if (bw_op_data_file(env->pool, env, "validateDTD", "DTD",
                        bw_str_trim(bw_str_n(op->param, op->param_len)), &path, err) < 0
        || bw_op_read_file(env->temp_pool ? env->temp_pool : env->pool, "validateDTD", "DTD",
                           path, &text, err) < 0)
        return -1;
    apr_pool_cleanup_register(env->pool, dtd, dtd_free, apr_pool_cleanup_null);
    bw_op_xml_load_begin(&e, &saved);
    *dtd = xmlParseDTD(NULL, (const xmlChar *)path);
    /* libxml2 only warns where it skipped something (a parameter entity
     * naming a URL...): a DTD that is not all there is refused too */
    if (*dtd && e.count == 0)
        rc = build_models(*dtd);
    bw_op_xml_load_end(&e, saved);
    if (rc < 0) {
        *err = bw_op_xml_load_error(env->pool, "validateDTD", "DTD", path, &e);
        return -1;
    }
    op->data = *dtd;
    return 0;
}

static int dtd_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    xmlValidCtxtPtr vc;
    bw_xmlerr_t e;
    int valid;

    (void)value;
    if (run->xml_doc == NULL) {
        run->error = "XML document tree could not be found for DTD validation";
        return -1;
    }
    bw_xmlerr_catch(&e);
    vc = xmlNewValidCtxt();
    if (vc == NULL) {
        bw_xmlerr_release(&e);
        run->error = "XML: cannot create a DTD validation context";
        return -1;
    }
    /* no printf-style callbacks: errors reach this thread's caught handlers */
    vc->error = NULL;
    vc->warning = NULL;
    valid = xmlValidateDtd(vc, run->xml_doc, op->data);
    xmlFreeValidCtxt(vc);
    bw_xmlerr_release(&e);
    if (valid == 1)
        return 0;
    run->msg = bw_op_xml_invalid_msg(run, "DTD", &e);
    return 1;
}

const bw_op_def_t bw_op_validate_dtd = {
    "validateDTD", BW_OP_PARAM_REQUIRED, dtd_compile, dtd_execute, NULL, NULL
};
