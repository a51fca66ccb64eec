/*
 * Scratch pools for start-up work (folding, scan planning) whose memory is
 * given back when the work is done. A subpool's nodes return to its
 * parent's allocator, which keeps every free node for the life of the
 * process (APR's default: no free limit); a start-up that needs 15 MB of
 * scratch would keep 15 MB resident in every Apache process. A scratch pool
 * has its own allocator, destroyed with it.
 */
#ifndef BW_POOL_H
#define BW_POOL_H

#include <apr_pools.h>

/* A pool under parent (destroyed with it at the latest) with an allocator
 * of its own; apr_pool_destroy() returns its memory to the system. */
apr_status_t bw_pool_create_scratch(apr_pool_t **out, apr_pool_t *parent);

#endif
