/*
 * @geoLookup — where an IP address is, from the SecGeoLookupDb database.
 *
 * Description: Looks the value, a textual IPv4 or IPv6 address, up in the
 *   MaxMind DB (.mmdb) named by SecGeoLookupDb (bw_geo.c) and, when the
 *   database has a record for it, replaces the GEO collection with what the
 *   record holds (GEO:COUNTRY_CODE, COUNTRY_CODE3, COUNTRY_NAME,
 *   COUNTRY_CONTINENT, REGION, CITY, POSTAL_CODE, LATITUDE, LONGITUDE,
 *   DMA_CODE; the fields the record lacks are not set). A value that is not
 *   an address (a host name is not resolved), or an address the database
 *   does not know, does not match and leaves GEO as it was: as in
 *   ModSecurity, that is an ordinary outcome, not an error.
 * Arguments: none.
 * Returns: 1 when the address was found, 0 when not; -1 (run->error) when no
 *   database is configured for the rule's context or the database is damaged.
 * Example: SecRule REMOTE_ADDR "@geoLookup" "id:1,phase:1,chain,deny"
 *          SecRule GEO:COUNTRY_CODE "@streq XX"
 *   logs: Geo lookup for "192.0.2.1" succeeded at REMOTE_ADDR.
 */
#include <string.h>
#include "op_internal.h"
#include "bw_geo.h"

static int geo_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    bw_kv_t fields[BW_GEO_MAX_FIELDS];
    bw_kv_t *fill;
    const char *why = NULL;
    int n = 0, rc;

    if (!run->geo) {
        run->error = "@geoLookup: no GeoIP database is configured (SecGeoLookupDb)";
        return -1;
    }
    rc = bw_geo_lookup(run->geo, value, run->pool, fields, &n, &why);
    if (rc < 0) {
        run->error = apr_psprintf(run->pool, "@geoLookup: %s: %s", bw_geo_path(run->geo), why);
        return -1;
    }
    if (rc == 0)
        return 0;
    fill = apr_palloc(run->pool, sizeof(*fill) * (size_t)(n ? n : 1));
    memcpy(fill, fields, sizeof(*fill) * (size_t)n);
    run->fill_coll = "GEO";
    run->fill = fill;
    run->nfill = n;
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "Geo lookup for \"%s\" succeeded at %s.",
                                bw_op_log_escape(run->pool, value, 0), run->var_name);
    return 1;
}

const bw_op_def_t bw_op_geo_lookup = {
    "geoLookup", BW_OP_PARAM_NONE, NULL, geo_execute, NULL, NULL
};
