/*
 * The table of transformations, resolved once at configuration time: the
 * rule parser turns each t:NAME into a bw_tfn_def_t with bw_tfn_lookup().
 * The list itself lives in tfn_internal.h (BW_TFN_LIST) so that each
 * definition is declared in exactly one place.
 */
#include "tfn_internal.h"

#define BW_TFN_ENTRY(sym) &bw_tfn_##sym,
const bw_tfn_def_t *const bw_tfn_registry[] = {
    BW_TFN_LIST(BW_TFN_ENTRY)
    NULL
};
#undef BW_TFN_ENTRY

/* Names are compared without regard to ASCII case, as ModSecurity does
 * ("t:urldecodeuni" in CRS). A linear scan: ~40 names, config time only. */
const bw_tfn_def_t *bw_tfn_lookup(const char *name)
{
    size_t i;

    if (name == NULL)
        return NULL;
    for (i = 0; bw_tfn_registry[i] != NULL; i++)
        if (bw_str_eq_cstr_ci(bw_str_make(name), bw_tfn_registry[i]->name))
            return bw_tfn_registry[i];
    return NULL;
}
