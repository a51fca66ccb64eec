/*
 * XML body processor on libxml2's push parser, plus the XPath evaluation
 * behind XML:/xpath targets.
 *
 * Safety: XML_PARSE_NONET; never XML_PARSE_NOENT, DTDLOAD, DTDATTR,
 * DTDVALID, XINCLUDE or HUGE, and the context's fields that those options
 * (or libxml2's per-thread defaults) would switch on are forced off. The
 * per-context SAX block also refuses to resolve any external entity or
 * external subset, so an XXE reference stays an empty reference and no
 * file or URL is read.
 *
 * Entities: without NOENT the tree keeps entity references, and libxml2
 * expands them later, when an XML target asks for a node's text. Its own
 * amplification checks (on, since XML_PARSE_HUGE is off) stop "billion
 * laughs" while parsing, but not one large entity referenced many times
 * (100 KB of body becoming 1 GB of text). So once the document is parsed
 * we compute the size of its fully expanded text in one memoised walk and
 * refuse the document when it exceeds BW_XML_TEXT_MIN + BW_XML_TEXT_FACTOR
 * times the body size.
 *
 * Threads: nothing here touches libxml2's process-wide state. Parser
 * errors go to a per-context structured handler and are read back from the
 * context. A few errors (input encoding conversion, I/O) are raised with no
 * context, through libxml2's per-thread handlers, which print to stderr,
 * i.e. Apache's error log, where a client could flood it: those handlers
 * are caught around each libxml2 call and then restored (base/bw_xmlerr.h;
 * they are thread-local, so no other thread is affected). The glue must call
 * xmlInitParser() once before threads start (post_config or child_init)
 * and never xmlCleanupParser() while requests run.
 *
 * Memory: libxml2 mallocs. The parser context and the document are freed by
 * a cleanup on the pool, on every path; the context goes as soon as the
 * body ends, the document (res->xml_doc) with the pool.
 */
#include <string.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include "base/bw_xmlerr.h"
#include "body_internal.h"

/* libxml2 is given the body in blocks of this size whatever pieces it
 * arrives in: its push parser reads some documents differently when a
 * piece ends inside a character of a multi-byte encoding (UCS-4, UTF-16;
 * found by fuzz_body_xml), and what the rules see must not depend on how
 * the network split the body. */
#define XML_BLOCK 8192
#define BW_XML_TEXT_MIN (1u << 20)
#define BW_XML_TEXT_FACTOR 16

typedef struct {
    bw_body_parser_t *bp;
    xmlParserCtxtPtr ctxt;
    xmlDocPtr doc;
    apr_off_t total;
    char *block;                /* the block being filled (XML_BLOCK bytes) */
    size_t held;                /* bytes in it */
} xml_t;

/* Errors are read from the context afterwards; printing them is not ours. */
static void quiet_error(void *ctx, xmlErrorPtr err)
{
    (void)ctx;
    (void)err;
}

/* xmlParseChunk with this thread's context-less error output silenced. */
static int parse_chunk(xmlParserCtxtPtr c, const char *data, int len, int terminate)
{
    bw_xmlerr_t q;
    int rc;
    bw_xmlerr_catch(&q);
    rc = xmlParseChunk(c, data, len, terminate);
    bw_xmlerr_release(&q);
    return rc;
}

static xmlParserInputPtr no_external(void *ctx, const xmlChar *public_id,
                                     const xmlChar *system_id)
{
    (void)ctx;
    (void)public_id;
    (void)system_id;
    return NULL;
}

static void no_external_subset(void *ctx, const xmlChar *name, const xmlChar *external_id,
                               const xmlChar *system_id)
{
    (void)ctx;
    (void)name;
    (void)external_id;
    (void)system_id;
}

static apr_status_t xml_cleanup(void *data)
{
    xml_t *x = data;
    if (x->ctxt) {
        if (x->ctxt->myDoc && x->ctxt->myDoc != x->doc)
            xmlFreeDoc(x->ctxt->myDoc);
        x->ctxt->myDoc = NULL;
        xmlFreeParserCtxt(x->ctxt);
        x->ctxt = NULL;
    }
    if (x->doc)
        xmlFreeDoc(x->doc);
    x->doc = NULL;
    return APR_SUCCESS;
}

/* libxml2's message for the error that stopped the parse. */
static int xml_error(xml_t *x)
{
    const xmlError *e = xmlCtxtGetLastError(x->ctxt);
    const char *msg = e && e->message ? e->message : "document is not well-formed";
    size_t len = strlen(msg);
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
        len--;
    return bw_body_fail(x->bp->res, x->bp->pool, "XML parsing error: %.*s at line %d",
                        (int)len, msg, e ? e->line : 0);
}

/* n bytes to libxml2; 0, or the parse error. */
static int push(xml_t *x, const char *data, size_t n, int terminate)
{
    if (parse_chunk(x->ctxt, data, (int)n, terminate) != 0 || !x->ctxt->wellFormed)
        return xml_error(x);
    return 0;
}

/* Whole blocks go to libxml2, straight from data when none is partly
 * filled; the rest waits in the block for more or for the end. */
static int xml_feed(bw_body_parser_t *bp, const char *data, size_t len)
{
    xml_t *x = bp->impl;
    if (x->ctxt == NULL)
        return bw_body_fail(bp->res, bp->pool, "XML: parser could not be created");
    x->total += (apr_off_t)len;
    while (len > 0) {
        size_t n;
        if (x->held == 0 && len >= XML_BLOCK) {
            if (push(x, data, XML_BLOCK, 0) != 0)
                return -1;
            data += XML_BLOCK;
            len -= XML_BLOCK;
            continue;
        }
        if (x->block == NULL)
            x->block = apr_palloc(bp->pool, XML_BLOCK);
        n = XML_BLOCK - x->held < len ? XML_BLOCK - x->held : len;
        memcpy(x->block + x->held, data, n);
        x->held += n;
        data += n;
        len -= n;
        if (x->held == XML_BLOCK) {
            x->held = 0;
            if (push(x, x->block, XML_BLOCK, 0) != 0)
                return -1;
        }
    }
    return 0;
}

/* Text size of the children of a node with every entity reference
 * expanded, saturating at cap. Each entity is measured once (memo), so the
 * walk is linear in the tree; recursion depth is bounded by libxml2's
 * limits on element depth (256) and entity nesting (40). */
static apr_uint64_t text_size(apr_hash_t *memo, xmlDocPtr doc, xmlNodePtr n, apr_uint64_t cap)
{
    apr_uint64_t total = 0, *m;
    for (; n && total < cap; n = n->next) {
        if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
            total += n->content ? strlen((const char *)n->content) : 0;
        } else if (n->type == XML_ENTITY_REF_NODE) {
            xmlEntityPtr ent = xmlGetDocEntity(doc, n->name);
            if (ent == NULL)
                continue;
            m = apr_hash_get(memo, &ent, sizeof(ent));
            if (m == NULL) {
                m = apr_palloc(apr_hash_pool_get(memo), sizeof(*m));
                *m = cap; /* a reference loop reads as "too big" */
                apr_hash_set(memo, apr_pmemdup(apr_hash_pool_get(memo), &ent, sizeof(ent)),
                             sizeof(ent), m);
                *m = text_size(memo, doc, ent->children, cap);
            }
            total += *m;
        } else if (n->type == XML_ELEMENT_NODE) {
            total += text_size(memo, doc, (xmlNodePtr)n->properties, cap);
            total += text_size(memo, doc, n->children, cap);
        } else if (n->type == XML_ATTRIBUTE_NODE) {
            total += text_size(memo, doc, n->children, cap);
        }
    }
    return total < cap ? total : cap;
}

static int check_expansion(xml_t *x, xmlDocPtr doc)
{
    apr_uint64_t cap = BW_XML_TEXT_MIN + (apr_uint64_t)BW_XML_TEXT_FACTOR * (apr_uint64_t)x->total;
    apr_pool_t *scratch;
    apr_uint64_t size;
    apr_pool_create(&scratch, x->bp->pool);
    size = text_size(apr_hash_make(scratch), doc, doc->children, cap + 1);
    apr_pool_destroy(scratch);
    if (size > cap)
        return bw_body_fail(x->bp->res, x->bp->pool,
                            "XML: entity expansion too large (over %" APR_UINT64_T_FMT
                            " bytes of text from a %" APR_OFF_T_FMT "-byte body)",
                            cap, x->total);
    return 0;
}

static int xml_finish(bw_body_parser_t *bp)
{
    xml_t *x = bp->impl;
    int rc = 0;
    /* An empty body is no document, and no error either (as multipart). */
    if (x->ctxt && !bp->res->error && x->total > 0) {
        if ((x->held && push(x, x->block, x->held, 0) != 0) || push(x, NULL, 0, 1) != 0)
            rc = -1;
        else if (x->ctxt->myDoc == NULL)
            rc = bw_body_fail(bp->res, bp->pool, "XML parsing error: no document");
        else if ((rc = check_expansion(x, x->ctxt->myDoc)) == 0) {
            x->doc = x->ctxt->myDoc;
            x->ctxt->myDoc = NULL;
            bp->res->xml_doc = x->doc;
        }
    }
    if (x->ctxt) {
        if (x->ctxt->myDoc)
            xmlFreeDoc(x->ctxt->myDoc);
        x->ctxt->myDoc = NULL;
        xmlFreeParserCtxt(x->ctxt);
        x->ctxt = NULL;
    }
    return rc;
}

static const bw_body_ops_t xml_ops = { "XML", xml_feed, xml_finish };

/* Options and SAX hooks that keep the parser from reaching outside the
 * body or expanding entities into the tree. */
static void harden(xmlParserCtxtPtr c)
{
    xmlCtxtUseOptions(c, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    c->replaceEntities = 0;
    c->loadsubset = 0;
    c->validate = 0;
    c->sax->serror = quiet_error;
    c->sax->resolveEntity = no_external;
    c->sax->externalSubset = no_external_subset;
}

bw_body_parser_t *bw_body_xml_create(apr_pool_t *pool, const bw_body_limits_t *limits,
                                     const bw_body_sink_t *sink, bw_body_result_t *res)
{
    xml_t *x = apr_pcalloc(pool, sizeof(*x));
    x->bp = bw_body_parser_new(pool, &xml_ops, limits, sink, res, x);
    bw_xmlerr_t q;
    bw_xmlerr_catch(&q);
    x->ctxt = xmlCreatePushParserCtxt(NULL, NULL, NULL, 0, NULL);
    bw_xmlerr_release(&q);
    if (x->ctxt)
        harden(x->ctxt);
    apr_pool_cleanup_register(pool, x, xml_cleanup, apr_pool_cleanup_null);
    return x->bp;
}

/* XPath errors are read back from the context. */
static void quiet_xpath_error(void *ctx, xmlErrorPtr err)
{
    (void)ctx;
    (void)err;
}

static void push_content(apr_pool_t *pool, apr_array_header_t *out, const char *expr,
                         xmlNodePtr node)
{
    xmlChar *content = xmlNodeGetContent(node);
    bw_kv_t *kv = apr_array_push(out);
    kv->name = bw_str_make(expr);
    kv->value = bw_str_make(content ? apr_pstrdup(pool, (const char *)content) : "");
    if (content)
        xmlFree(content);
}

int bw_body_xml_xpath(apr_pool_t *pool, void *xml_doc, const char *expr,
                      apr_array_header_t *out, char **err)
{
    xmlXPathContextPtr xc;
    xmlXPathObjectPtr obj;
    bw_xmlerr_t q;
    int i;
    if (xml_doc == NULL)
        return 0;
    if ((xc = xmlXPathNewContext((xmlDocPtr)xml_doc)) == NULL) {
        *err = apr_pstrdup(pool, "XPath: cannot create a context");
        return -1;
    }
    xc->error = quiet_xpath_error;
    bw_xmlerr_catch(&q);
    obj = xmlXPathEvalExpression((const xmlChar *)expr, xc);
    bw_xmlerr_release(&q);
    if (obj == NULL) {
        /* libxml2 leaves lastError.message empty for XPath: give the code
         * (xmlerror.h XML_XPATH_*) and where in the expression it stopped. */
        *err = apr_psprintf(pool, "XPath: invalid expression \"%s\" (libxml2 error %d at offset %d)",
                            expr, xc->lastError.code, xc->lastError.int1);
        xmlResetError(&xc->lastError);
        xmlXPathFreeContext(xc);
        return -1;
    }
    /* As ModSecurity: only node sets give values (count(...) gives none). */
    if (obj->type == XPATH_NODESET && obj->nodesetval)
        for (i = 0; i < obj->nodesetval->nodeNr; i++)
            push_content(pool, out, expr, obj->nodesetval->nodeTab[i]);
    xmlXPathFreeObject(obj);
    xmlXPathFreeContext(xc);
    return 0;
}
