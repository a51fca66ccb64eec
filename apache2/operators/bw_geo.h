/*
 * GeoIP databases in the MaxMind DB format (.mmdb: GeoLite2 / GeoIP2 City
 * and Country), read with libmaxminddb, for SecGeoLookupDb and @geoLookup.
 *
 * A database is opened once at start-up, memory-mapped read-only, and
 * shared by every thread and child afterwards (libmaxminddb's lookups do
 * not write to it); a cleanup on the opening pool closes it, so a graceful
 * restart that drops the configuration unmaps it.
 */
#ifndef BW_GEO_H
#define BW_GEO_H

#include "base/bw_types.h"

typedef struct bw_geo_db_s bw_geo_db_t;

/* The most GEO fields one lookup yields (see bw_geo_lookup). */
#define BW_GEO_MAX_FIELDS 11

/* Open path for the life of pool. NULL with *err (from pool: the path and
 * libmaxminddb's reason) when the file is missing, unreadable, not a MaxMind
 * DB, or its search tree is damaged where a probe lookup walks it. */
bw_geo_db_t *bw_geo_open(apr_pool_t *pool, const char *path, const char **err);

/* The path the database was opened from. */
const char *bw_geo_path(const bw_geo_db_t *db);

/* Look value up as a textual IPv4 or IPv6 address (an IPv4-mapped IPv6
 * address is looked up as the IPv4 one). Host names are not resolved.
 * Returns 1 when the database has a record for the address, with out[0..*n-1]
 * set to the GEO fields the record has, in ModSecurity's order
 * (COUNTRY_CODE, COUNTRY_CODE3, COUNTRY_NAME, COUNTRY_CONTINENT, REGION,
 * CITY, POSTAL_CODE, LATITUDE, LONGITUDE, DMA_CODE); names are static,
 * strings point into the database, numbers are formatted in pool. Returns 0
 * when value is not an address, is an IPv6 address and the database has
 * IPv4 only, or the database has no record: nothing is allocated then.
 * Returns -1 with *err (static) when the database is damaged. */
int bw_geo_lookup(const bw_geo_db_t *db, bw_str_t value, apr_pool_t *pool,
                  bw_kv_t out[BW_GEO_MAX_FIELDS], int *n, const char **err);

/* The ISO 3166-1 alpha-3 code of an alpha-2 code ("FR" -> "FRA"), or NULL
 * when the code is not assigned (bw_iso3166.c). MaxMind DB files carry only
 * the alpha-2 code; ModSecurity's GEO:COUNTRY_CODE3 needs the other. */
const char *bw_iso3166_alpha3(bw_str_t alpha2);

#endif /* BW_GEO_H */
