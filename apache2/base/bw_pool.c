/*
 * Scratch pools with an allocator of their own (see bw_pool.h).
 */
#include <apr_allocator.h>
#include "base/bw_pool.h"

apr_status_t bw_pool_create_scratch(apr_pool_t **out, apr_pool_t *parent)
{
    apr_allocator_t *alloc;
    apr_status_t rv = apr_allocator_create(&alloc);
    if (rv != APR_SUCCESS)
        return apr_pool_create(out, parent);
    rv = apr_pool_create_ex(out, parent, NULL, alloc);
    if (rv != APR_SUCCESS) {
        apr_allocator_destroy(alloc);
        return rv;
    }
    /* the pool owns the allocator: destroying the pool frees every node */
    apr_allocator_owner_set(alloc, *out);
    return APR_SUCCESS;
}
