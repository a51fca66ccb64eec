/*
 * The operator registry: every operator Bulwark knows, by the name used
 * after '@' in a SecRule (ModSecurity's spelling), resolved once when the
 * rules are parsed. Aliases (pmf, ipMatchF) are separate definitions that
 * share their original's functions.
 */
#include <strings.h>
#include "op_internal.h"

const bw_op_def_t *const bw_op_registry[] = {
    &bw_op_begins_with,
    &bw_op_contains,
    &bw_op_contains_word,
    &bw_op_detect_sqli,
    &bw_op_detect_xss,
    &bw_op_ends_with,
    &bw_op_eq,
    &bw_op_fuzzy_hash,
    &bw_op_ge,
    &bw_op_geo_lookup,
    &bw_op_gsb_lookup,
    &bw_op_gt,
    &bw_op_inspect_file,
    &bw_op_ip_match,
    &bw_op_ip_match_f,
    &bw_op_ip_match_from_file,
    &bw_op_le,
    &bw_op_lt,
    &bw_op_ne,
    &bw_op_no_match,
    &bw_op_pm,
    &bw_op_pm_from_file,
    &bw_op_pmf,
    &bw_op_rbl,
    &bw_op_rsub,
    &bw_op_rx,
    &bw_op_streq,
    &bw_op_strmatch,
    &bw_op_unconditional_match,
    &bw_op_validate_byte_range,
    &bw_op_validate_dtd,
    &bw_op_validate_hash,
    &bw_op_validate_schema,
    &bw_op_validate_url_encoding,
    &bw_op_validate_utf8_encoding,
    &bw_op_verify_cc,
    &bw_op_verify_cpf,
    &bw_op_verify_ssn,
    &bw_op_within,
    NULL
};

const bw_op_def_t *bw_op_lookup(const char *name)
{
    const bw_op_def_t *const *d;

    if (name == NULL)
        return NULL;
    for (d = bw_op_registry; *d; d++)
        if (strcasecmp((*d)->name, name) == 0)
            return *d;
    return NULL;
}
