/*
 * The audit log writer's hooks, called from bw_httpd_hooks.c:
 *   post_config      open every SecAuditLog / SecAuditLog2 (files, pipes)
 *                    while still privileged; create the pipe mutex
 *   child_init       attach the pipe mutex in each child
 *   log_transaction  after phase 5: write the transaction's record
 */
#ifndef BW_HTTPD_AUDIT_H
#define BW_HTTPD_AUDIT_H

#include "httpd/bw_httpd.h"

int bw_httpd_audit_post_config(apr_pool_t *pconf, apr_pool_t *plog, server_rec *s);
void bw_httpd_audit_child_init(apr_pool_t *p, server_rec *s);
void bw_httpd_audit_transaction(request_rec *r, bw_httpd_req_t *st);

#endif /* BW_HTTPD_AUDIT_H */
