/*
 * Google Safe Browsing hash lists for SecGsbLookupDb and @gsbLookup.
 *
 * The file is a GSB list as mod_security2's GsbMalware.dat: MD5 digests of
 * URL expressions ("evil.example/", "evil.example/a/b.html"), one a line.
 * It is read once at start-up into a sorted array of 16-byte digests, so a
 * lookup is a binary search over memory shared read-only by every worker,
 * and a bad line stops start-up with the file and line.
 */
#ifndef BW_GSB_H
#define BW_GSB_H

#include "base/bw_types.h"

typedef struct bw_gsb_db_s bw_gsb_db_t;

/* Read path for the life of pool. The file's lines:
 *   +HEX     add the digest (32 hex digits, either case)
 *   -HEX     remove it again (a list update), in the order of the lines
 *   [...]    a list header such as "[goog-malware-hash 1.1234]": skipped
 *   #...     a comment; empty lines and trailing white space are ignored.
 * NULL with *err (from pool: "FILE:LINE: reason", or the path and the
 * system's reason when it cannot be read) on anything else. */
bw_gsb_db_t *bw_gsb_open(apr_pool_t *pool, const char *path, const char **err);

/* The path the list was read from, and how many digests it holds. */
const char *bw_gsb_path(const bw_gsb_db_t *db);
size_t bw_gsb_count(const bw_gsb_db_t *db);

/* 1 when the list holds digest (16 bytes). */
int bw_gsb_has(const bw_gsb_db_t *db, const unsigned char digest[16]);

/* Look a URL up as Safe Browsing clients do, with no allocation: url is
 * host[:port][/path][?query], a leading "http://" or "https://" and a
 * "user@" dropped, compared lowercase. Tried, first hit wins: url as given;
 * url + "/" (no '/' and no '?' in it); then each host suffix (the host,
 * and the last 2..5 labels of a name, never of an IPv4 address) joined to
 * each path prefix (the path with its query, without it, "/" and the first
 * up to 4 directories, each ending in '/'). Returns 1 on a hit, with
 * *host the host part of url (pointing into it, as written), 0 otherwise
 * or when url has no host with a '.' in it. */
int bw_gsb_lookup_url(const bw_gsb_db_t *db, bw_str_t url, bw_str_t *host);

#endif /* BW_GSB_H */
