/*
 * libxml2's error output, caught for one call at a time.
 *
 * libxml2 reports some errors through handlers of the calling thread
 * (xmlStructuredError, xmlGenericError) rather than through the context at
 * hand; by default they print to stderr, which in Apache is the error log,
 * where a client could flood it. Around each libxml2 call that may report
 * so, bw_xmlerr_catch() points this thread's handlers at a catcher that
 * keeps the first message (or nothing), and bw_xmlerr_release() puts the
 * previous handlers back. Both are per thread: no other thread is affected.
 */
#ifndef BW_XMLERR_H
#define BW_XMLERR_H

#include <libxml/parser.h>   /* before xmlerror.h, which needs its types */

typedef struct bw_xmlerr_s {
    /* the first error reported while caught: its message without the
     * trailing line end, and its line (0 when libxml2 gave none) */
    char first[256];
    int line;
    int count;
    /* the thread's handlers before bw_xmlerr_catch() */
    xmlStructuredErrorFunc saved_s;
    void *saved_sctx;
    xmlGenericErrorFunc saved_g;
    void *saved_gctx;
} bw_xmlerr_t;

/* Route this thread's libxml2 error output into e (first[] emptied). */
void bw_xmlerr_catch(bw_xmlerr_t *e);

/* Put back the handlers bw_xmlerr_catch() replaced. */
void bw_xmlerr_release(const bw_xmlerr_t *e);

/* The structured handler itself, for contexts that take one directly
 * (xmlSchemaSetValidStructuredErrors, a SAX block's serror): ctx is a
 * bw_xmlerr_t, or NULL to drop the error. */
void bw_xmlerr_structured(void *ctx, xmlErrorPtr err);

#endif /* BW_XMLERR_H */
