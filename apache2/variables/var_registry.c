/* Variable lookup by name across the variable tables (start-up only). */
#include <string.h>
#include "variables/bw_var.h"

void bw_var_gen_scalar(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t sel, apr_array_header_t *out)
{
    bw_var_scalar_fn fn = (bw_var_scalar_fn)def->data;
    bw_str_t v;
    if (fn(tx, &v))
        bw_var_emit(out, def, bw_str_n("", 0), v);
}

const bw_var_def_t *bw_var_lookup(const char *name, size_t len)
{
    const bw_var_def_t *tables[2];
    int t;
    tables[0] = bw_vars_request;
    tables[1] = bw_vars_misc;
    for (t = 0; t < 2; t++) {
        const bw_var_def_t *d;
        for (d = tables[t]; d->name; d++)
            if (strlen(d->name) == len && !strncasecmp(d->name, name, len))
                return d;
    }
    return NULL;
}
