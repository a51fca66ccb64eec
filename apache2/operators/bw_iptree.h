/*
 * A set of IPv4 and IPv6 addresses and CIDR blocks, stored as two
 * path-compressed binary prefix trees (one per family), for @ipMatch and
 * @ipMatchFromFile. Built once at start-up; a lookup walks at most one node
 * per distinct prefix on the address's path and allocates nothing.
 */
#ifndef BW_IPTREE_H
#define BW_IPTREE_H

#include "base/bw_types.h"

typedef struct bw_iptree_s bw_iptree_t;

bw_iptree_t *bw_iptree_create(apr_pool_t *pool);

/* Add "1.2.3.4", "10.0.0.0/8", "::1", "2001:db8::/32". Host bits beyond the
 * prefix are ignored. Returns 0, or -1 with *why set to a static reason. */
int bw_iptree_add(bw_iptree_t *t, bw_str_t spec, const char **why);

/* 1 when addr (a textual IPv4 or IPv6 address, no prefix) lies in a block,
 * 0 when not, -1 when addr is not an IP address. */
int bw_iptree_contains(const bw_iptree_t *t, bw_str_t addr);

/* A textual IPv4 or IPv6 address (no prefix, no surrounding space) to its
 * bytes in network order, zero-padded to 16: 0 for IPv4 (4 bytes), 1 for
 * IPv6, -1 when s is not an address. Shared with the GeoIP lookup. */
int bw_ip_parse(bw_str_t s, unsigned char out[16]);

/* Number of blocks added. */
size_t bw_iptree_count(const bw_iptree_t *t);

#endif /* BW_IPTREE_H */
