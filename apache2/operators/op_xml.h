/*
 * What @validateDTD and @validateSchema share (op_xml.c): loading their
 * file at start-up without network access, and their messages. Only those
 * two operator files include this header (and so libxml2's).
 */
#ifndef BW_OP_XML_H
#define BW_OP_XML_H

#include <libxml/parser.h>
#include "base/bw_xmlerr.h"
#include "op_internal.h"

/* What @validateDTD and @validateSchema share. bw_op_xml_load_begin/_end
 * bracket the start-up parse of a DTD or schema: libxml2's errors are
 * caught into e, and the process-wide external entity loader is the no-network
 * one, so an import, include or external entity the file names can be a
 * local file but never a URL (start-up runs before any thread, so changing
 * the loader for a while is safe). */
void bw_op_xml_load_begin(bw_xmlerr_t *e, xmlExternalEntityLoader *saved);
void bw_op_xml_load_end(bw_xmlerr_t *e, xmlExternalEntityLoader saved);

/* "@<opname>: <what> \"<path>\" line N: <libxml2 message>" from p. */
char *bw_op_xml_load_error(apr_pool_t *p, const char *opname, const char *what,
                           const char *path, const bw_xmlerr_t *e);

/* The match message "XML: <what> validation failed. <reason>" (reason
 * escaped, it quotes the client's element names), or NULL when run->no_msg. */
const char *bw_op_xml_invalid_msg(bw_op_run_t *run, const char *what, const bw_xmlerr_t *e);

#endif /* BW_OP_XML_H */
