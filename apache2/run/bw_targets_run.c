/* The values a rule target stands for in a transaction. */
#include <string.h>
#include "run/bw_run.h"

static const bw_var_gen_t *gen_of(const bw_var_def_t *def)
{
    const bw_var_gen_t *g = &bw_var_gens_request[def->id];
    return g->fn ? g : &bw_var_gens_misc[def->id];
}

int bw_var_count(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t sel)
{
    const bw_var_gen_t *g = gen_of(def);
    return g->count ? g->count(tx, sel) : -1;
}

void bw_var_generate(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t sel, apr_array_header_t *out)
{
    const bw_var_gen_t *g = gen_of(def);
    if (g->fn)
        g->fn(tx, def, g->data, sel, out);
}

int bw_var_scalar(bw_tx_t *tx, const bw_var_def_t *def, bw_str_t *v)
{
    const bw_var_gen_t *g = gen_of(def);
    if (g->fn != bw_var_gen_scalar)
        return -1;
    return ((bw_var_scalar_fn)g->data)(tx, v) ? 1 : 0;
}

void bw_var_gen_scalar(bw_tx_t *tx, const bw_var_def_t *def, const void *data, bw_str_t sel,
                       apr_array_header_t *out)
{
    bw_var_scalar_fn fn = (bw_var_scalar_fn)data;
    bw_str_t v;
    if (fn(tx, &v))
        bw_var_emit(out, def, bw_str_n("", 0), v);
}

/* A keyed collection's entries as t names them: one key (hashed when the
 * rule was compiled, unless the selector is a macro), those a /regex/
 * selector matches (each name matched once per transaction, the names of
 * the program's TX image once at start-up: bw_coll_select), or all, in
 * insertion order. */
static void coll_values(bw_tx_t *tx, const bw_target_t *t, bw_str_t sel, apr_array_header_t *out)
{
    bw_coll_t *c = bw_tx_collection(tx, t->var->name, 0);
    bw_kv_t **ord;
    int i;
    if (!c)
        return;
    ord = (bw_kv_t **)c->order->elts;
    if (t->selector_re) {
        const bw_coll_sel_t *s = bw_coll_select(tx->pool, c, t->selector_re, t->selector_lit, tx->md);
        for (i = 0; i < s->n; i++) {
            const bw_kv_t *kv = ord[s->idx[i]];
            if (kv->name.data)   /* not unset since */
                bw_var_emit(out, t->var, kv->name, kv->value);
        }
    } else if (sel.len) {
        bw_key_t k;
        const bw_kv_t *kv;
        k.name = sel;
        k.hash = t->selector_macro ? bw_key_hash(sel) : t->selector_hash;
        k.sel = NULL;
        kv = bw_coll_find(c, &k);
        if (kv)
            bw_var_emit(out, t->var, kv->name, kv->value);
    } else {
        for (i = 0; i < c->order->nelts; i++)
            if (ord[i]->name.data)
                bw_var_emit(out, t->var, ord[i]->name, ord[i]->value);
    }
}

/* Produce the values of t (an inclusion) into out, applying /regex/
 * selectors; &counts become one value holding the count (counted without
 * making the values where the variable knows how). */
void bw_target_values(bw_tx_t *tx, const bw_target_t *t, apr_array_header_t *out)
{
    int start = out->nelts, i, k, n = -1;
    bw_str_t sel = t->selector;

    if (t->selector_macro)
        sel = bw_macro_expand(tx, t->selector_macro);
    if (t->is_count && !t->selector_re && !(t->var->flags & BW_VAR_TX_COLL))
        n = bw_var_count(tx, t->var, sel);
    if (n >= 0) {
        /* counted without its values */
    } else if (t->var->flags & BW_VAR_TX_COLL) {
        coll_values(tx, t, sel, out);
    } else {
        bw_var_generate(tx, t->var, t->selector_re ? bw_str_n("", 0) : sel, out);
        if (t->selector_re) {
            bw_varval_t *v = (bw_varval_t *)out->elts;
            for (i = k = start; i < out->nelts; i++)
                if (bw_target_selects(t, v[i].key, tx->md))
                    v[k++] = v[i];
            out->nelts = k;
        }
    }
    if (t->is_count) {
        bw_varval_t *c;
        if (n < 0)
            n = out->nelts - start;
        out->nelts = start;
        c = apr_array_push(out);
        c->var = t->var;
        c->key = t->selector.len ? t->selector : bw_str_n("", 0);
        c->value = bw_num_str(tx->pool, n);
        c->is_count = 1;
    }
}
