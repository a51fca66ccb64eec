/*
 * The seam between the two halves of @detectSQLi (internal to apache2/detect/):
 * bw_sqli_ctx.c decides where in a value an injection may start (the
 * contexts), bw_sqli.c reads the SQL from there and weighs the evidence.
 */
#ifndef BW_SQLI_INT_H
#define BW_SQLI_INT_H

#include <stddef.h>
#include "bw_sqli.h"

/* Reads s[start..len) as SQL that continues context ctx (BW_SQLI_CTX_*):
 * in the quote contexts start is just past the quote that closed the
 * application's literal, in the as-is and comment-glued contexts it is where
 * an operand is expected. Returns 1 on evidence (res filled when not NULL),
 * 0 otherwise. One left-to-right pass, nothing allocated. */
int sq_walk(const unsigned char *s, size_t len, size_t start, int ctx,
            bw_sqli_result_t *res);

#endif /* BW_SQLI_INT_H */
