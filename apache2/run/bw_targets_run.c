/* The values a rule target stands for in a transaction. */
#include <string.h>
#include "run/bw_run.h"

void bw_var_generate(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t sel, apr_array_header_t *out)
{
    const bw_var_gen_t *g = &bw_var_gens_request[def->id];
    if (!g->fn)
        g = &bw_var_gens_misc[def->id];
    if (g->fn)
        g->fn(tx, def, g->data, sel, out);
}

void bw_var_gen_scalar(bw_tx_t *tx, const bw_var_def_t *def, const void *data, bw_str_t sel,
                       apr_array_header_t *out)
{
    bw_var_scalar_fn fn = (bw_var_scalar_fn)data;
    bw_str_t v;
    if (fn(tx, &v))
        bw_var_emit(out, def, bw_str_n("", 0), v);
}

/* Produce the values of t (an inclusion) into out, applying /regex/
 * selectors; &counts become one value holding the count. */
void bw_target_values(bw_tx_t *tx, const bw_target_t *t, apr_array_header_t *out)
{
    int start = out->nelts, i, k;
    bw_str_t sel = t->selector;

    if (t->selector_macro)
        sel = bw_macro_expand(tx, t->selector_macro);
    bw_var_generate(tx, t->var, t->selector_re ? bw_str_n("", 0) : sel, out);
    if (t->selector_re) {
        bw_varval_t *v = (bw_varval_t *)out->elts;
        for (i = k = start; i < out->nelts; i++)
            if (bw_regex_match(t->selector_re, v[i].key, tx->md) > 0)
                v[k++] = v[i];
        out->nelts = k;
    }
    if (t->is_count) {
        int n = out->nelts - start;
        bw_varval_t *c;
        char *buf = apr_psprintf(tx->pool, "%d", n);
        out->nelts = start;
        c = apr_array_push(out);
        c->var = t->var;
        c->key = t->selector.len ? t->selector : bw_str_n("", 0);
        c->value = bw_str_make(buf);
        c->is_count = 1;
    }
}
