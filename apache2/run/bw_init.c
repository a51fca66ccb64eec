/* Process-wide start-up of the libraries the engine uses. */
#include <libxml/parser.h>
#include "bw_engine.h"

void bw_engine_init(void)
{
    /* libxml2 must be initialised once, before threads parse documents;
     * it is never cleaned up (other modules may share it). */
    xmlInitParser();
}
