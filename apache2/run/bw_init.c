/* Process-wide start-up of the libraries the engine uses. */
#include <libxml/parser.h>
#include "bw_engine.h"
#include "matcher/bw_matcher.h"

static apr_status_t engine_release(void *unused)
{
    (void)unused;
    bw_matcher_release();
    return APR_SUCCESS;
}

void bw_engine_init(apr_pool_t *life)
{
    /* libxml2 must be initialised once, before threads parse documents;
     * it is never cleaned up (other modules may share it). */
    xmlInitParser();
    apr_pool_cleanup_register(life, NULL, engine_release, apr_pool_cleanup_null);
}
