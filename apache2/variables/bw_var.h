/*
 * Variable tables and the generator helpers they share. Each table file
 * (var_request.c, var_misc.c) exports a NULL-terminated bw_var_def_t array;
 * var_registry.c looks names up across them.
 */
#ifndef BW_VAR_H
#define BW_VAR_H

#include "bw_internal.h"

typedef int (*bw_var_scalar_fn)(bw_tx_t *tx, bw_str_t *out);

/* generate() for scalars: def->data is a bw_var_scalar_fn; nothing is
 * produced when it returns 0 (variable not available). */
void bw_var_gen_scalar(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t sel, apr_array_header_t *out);

/* Emit the entries of an array of bw_kv_t, filtered by a literal selector. */
void bw_var_gen_kv(const bw_var_def_t *def, const apr_array_header_t *arr, bw_str_t sel,
                   int names_only, apr_array_header_t *out);

extern const bw_var_def_t bw_vars_request[];
extern const bw_var_def_t bw_vars_misc[];

#endif
