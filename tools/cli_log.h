/* bulwark log: read Native or JSON audit logs, filter, print (cli_log.c). */
#ifndef BW_CLI_LOG_H
#define BW_CLI_LOG_H

#include "base/bw_types.h"

/* argv[0] is "log". Exit status: 0 records printed, 1 none matched,
 * 2 usage error or unreadable input. */
int bw_cli_log(apr_pool_t *pool, int argc, const char *const *argv);

#endif /* BW_CLI_LOG_H */
