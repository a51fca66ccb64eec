/*
 * Macro expansion: %{VAR} / %{VAR.key} parts of a compiled macro
 * (variables/var_macro.c) replaced by the first value of each variable in
 * this transaction.
 */
#include <string.h>
#include "run/bw_run.h"

static bw_str_t part_value(bw_tx_t *tx, const bw_macro_part_t *mp)
{
    apr_array_header_t *vals = tx->macro_vals;
    bw_str_t v;
    if (mp->var->flags & BW_VAR_TX_COLL) {
        bw_coll_t *c = bw_tx_collection(tx, mp->var->name, 0);
        bw_key_t k;
        const bw_kv_t *kv;
        k.name = mp->key;
        k.hash = mp->key_hash;
        k.sel = NULL;
        kv = c ? bw_coll_find(c, &k) : NULL;
        return kv ? kv->value : bw_str_n("", 0);
    }
    /* a scalar variable's one value, straight from its getter */
    switch (bw_var_scalar(tx, mp->var, &v)) {
    case 1:
        return v;
    case 0:
        return bw_str_n("", 0);
    default:
        break;
    }
    /* scratch the transaction reuses: only the first value is wanted */
    if (!vals)
        vals = tx->macro_vals = apr_array_make(tx->pool, 4, sizeof(bw_varval_t));
    vals->nelts = 0;
    bw_var_generate(tx, mp->var, mp->key, vals);
    if (!vals->nelts)
        return bw_str_n("", 0);
    return ((bw_varval_t *)vals->elts)[0].value;
}

bw_str_t bw_macro_expand(bw_tx_t *tx, const bw_macro_t *m)
{
    bw_str_t vals[16], *v = vals;
    size_t total = 0;
    int i;
    char *buf, *o;

    if (!m->has_vars)
        return m->nparts ? m->parts[0].literal : bw_str_n("", 0);
    if (m->nparts == 1)
        return part_value(tx, &m->parts[0]);
    if (m->nparts > 16)
        v = apr_palloc(tx->pool, sizeof(bw_str_t) * (size_t)m->nparts);
    for (i = 0; i < m->nparts; i++) {
        v[i] = m->parts[i].var ? part_value(tx, &m->parts[i]) : m->parts[i].literal;
        total += v[i].len;
    }
    o = buf = bw_tx_alloc(tx, total + 1);
    for (i = 0; i < m->nparts; i++) {
        if (v[i].len)
            memcpy(o, v[i].data, v[i].len);
        o += v[i].len;
    }
    *o = '\0';
    return bw_str_n(buf, total);
}
