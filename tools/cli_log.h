/* bulwark log: read Native or JSON audit logs, filter, print (cli_log.c). */
#ifndef BW_CLI_LOG_H
#define BW_CLI_LOG_H

#include "base/bw_types.h"

/* argv[0] is "log". Exit status: 0 records printed, 1 none matched,
 * 2 usage error or unreadable input. */
int bw_cli_log(apr_pool_t *pool, int argc, const char *const *argv);

/* argv[0] is "explain" (cli_explain.c): each record's matched rules, their
 * variables and the narrowest exclusion of each. Exit status: 0 a record
 * explained, 1 none found, 2 usage error or unreadable input. */
int bw_cli_explain(apr_pool_t *pool, int argc, const char *const *argv);

#endif /* BW_CLI_LOG_H */
