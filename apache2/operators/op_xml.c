/*
 * What @validateDTD and @validateSchema share: loading their file at
 * start-up without network access, and their messages (op_xml.h).
 */
#include "op_xml.h"

void bw_op_xml_load_begin(bw_xmlerr_t *e, xmlExternalEntityLoader *saved)
{
    *saved = xmlGetExternalEntityLoader();
    xmlSetExternalEntityLoader(xmlNoNetExternalEntityLoader);
    bw_xmlerr_catch(e);
}

void bw_op_xml_load_end(bw_xmlerr_t *e, xmlExternalEntityLoader saved)
{
    bw_xmlerr_release(e);
    xmlSetExternalEntityLoader(saved);
}

char *bw_op_xml_load_error(apr_pool_t *p, const char *opname, const char *what,
                           const char *path, const bw_xmlerr_t *e)
{
    const char *why = e->first[0] ? e->first : "it does not parse";
    if (e->line > 0)
        return apr_psprintf(p, "@%s: %s \"%s\" line %d: %s", opname, what, path, e->line, why);
    return apr_psprintf(p, "@%s: %s \"%s\": %s", opname, what, path, why);
}

const char *bw_op_xml_invalid_msg(bw_op_run_t *run, const char *what, const bw_xmlerr_t *e)
{
    if (run->no_msg)
        return NULL;
    if (!e->first[0])
        return apr_psprintf(run->pool, "XML: %s validation failed.", what);
    return apr_psprintf(run->pool, "XML: %s validation failed. %s (line %d)", what,
                        bw_op_log_escape(run->pool, bw_str_make(e->first), 0), e->line);
}
