/*
 * libxml2's error output caught per call (see bw_xmlerr.h for why).
 */
#include <string.h>
#include "bw_xmlerr.h"

/* Keep the first message; a later one says less about what went wrong. */
static void keep(bw_xmlerr_t *e, const char *msg, int line)
{
    size_t len;
    if (e->count++ > 0 || msg == NULL)
        return;
    len = strlen(msg);
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r' || msg[len - 1] == ' '))
        len--;
    if (len >= sizeof(e->first))
        len = sizeof(e->first) - 1;
    memcpy(e->first, msg, len);
    e->first[len] = '\0';
    e->line = line;
}

void bw_xmlerr_structured(void *ctx, xmlErrorPtr err)
{
    if (ctx && err)
        keep(ctx, err->message, err->line);
}

/* Generic (printf-style) output comes in pieces with no structure: it only
 * counts, so a caller knows something was said. */
static void generic(void *ctx, const char *msg, ...)
{
    bw_xmlerr_t *e = ctx;
    (void)msg;
    if (e && e->count++ == 0)
        strcpy(e->first, "libxml2 error");
}

void bw_xmlerr_catch(bw_xmlerr_t *e)
{
    e->first[0] = '\0';
    e->line = 0;
    e->count = 0;
    e->saved_s = xmlStructuredError;
    e->saved_sctx = xmlStructuredErrorContext;
    e->saved_g = xmlGenericError;
    e->saved_gctx = xmlGenericErrorContext;
    xmlSetStructuredErrorFunc(e, bw_xmlerr_structured);
    xmlSetGenericErrorFunc(e, generic);
}

void bw_xmlerr_release(const bw_xmlerr_t *e)
{
    xmlSetStructuredErrorFunc(e->saved_sctx, e->saved_s);
    xmlSetGenericErrorFunc(e->saved_gctx, e->saved_g);
}
