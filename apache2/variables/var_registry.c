/* The table of variables and its lookups (start-up only). */
#include <string.h>
#include "variables/bw_var.h"

static const bw_var_def_t vars[] = {
#define BW_VAR_DEF(sym, name, flags) { name, flags, BW_V_##sym },
    BW_VAR_LIST(BW_VAR_DEF)
#undef BW_VAR_DEF
};

const bw_var_def_t *bw_var_lookup(const char *name, size_t len)
{
    size_t i;
    for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        if (strlen(vars[i].name) == len && !strncasecmp(vars[i].name, name, len))
            return &vars[i];
    return NULL;
}

const bw_var_def_t *bw_var_by_id(bw_var_id_t id)
{
    return (unsigned)id < BW_V__COUNT ? &vars[id] : NULL;
}
