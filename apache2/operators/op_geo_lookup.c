/*
 * @geoLookup — GeoIP lookup of an address (not available yet).
 *
 * Description: In ModSecurity this looks the value up in the database named
 *   by SecGeoLookupDB and fills the GEO collection. Bulwark has no GeoIP
 *   database support yet: rules using it load, and every evaluation is an
 *   error saying why, so the gap shows in the log instead of passing
 *   silently as "no match".
 * Arguments: none.
 * Returns: -1 with run->error, always.
 * Example: SecRule REMOTE_ADDR "@geoLookup" "id:1,chain,..."
 */
#include "op_internal.h"

static int geo_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    run->error = "@geoLookup: no GeoIP database is configured (SecGeoLookupDB)";
    return -1;
}

const bw_op_def_t bw_op_geo_lookup = {
    "geoLookup", BW_OP_PARAM_NONE, NULL, geo_execute, NULL, NULL
};
