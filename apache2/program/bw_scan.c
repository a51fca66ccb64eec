/*
 * Scan groups: per configuration context, the pattern operators (@rx, and
 * the phrase operators @pm, @pmFromFile, @pmf) of rules that share a
 * transformation chain go into one multi-pattern matcher, a rule being one
 * bit. The executor then transforms a value once per chain and scans it
 * once per group, and only rules whose bit is set look at the value.
 *
 * Groups belong to the context that defined the rules, not to programs:
 * a <Location> program that inherits the server's rules shares the
 * server's groups (and their compiled databases) and adds groups only for
 * its own rules. An operator whose parameter has a macro is compiled per
 * transaction and joins no group.
 */
#include <string.h>
#include "program/bw_prog.h"

static int same_chain(const bw_scan_group_t *g, const bw_rule_t *r)
{
    int i;
    if (g->ntfns != r->ntfns)
        return 0;
    for (i = 0; i < r->ntfns; i++)
        if (g->tfns[i] != r->tfns[i])
            return 0;
    return 1;
}

static bw_scan_group_t *group_for(apr_pool_t *p, apr_array_header_t *groups, const bw_rule_t *r)
{
    bw_scan_group_t *g;
    int i;
    for (i = 0; i < groups->nelts; i++) {
        g = ((bw_scan_group_t **)groups->elts)[i];
        if (same_chain(g, r))
            return g;
    }
    g = apr_pcalloc(p, sizeof(*g));
    g->tfns = r->tfns;
    g->ntfns = r->ntfns;
    g->m = bw_matcher_create(p);
    *(bw_scan_group_t **)apr_array_push(groups) = g;
    return g;
}

static void add_rule(apr_pool_t *p, apr_array_header_t *groups, bw_rule_t *r)
{
    unsigned f = r->op.def ? r->op.def->flags : 0;
    bw_scan_group_t *g;
    if (r->op_macro || !(f & (BW_OP_SCAN_REGEX | BW_OP_SCAN_PHRASES)))
        return;
    if ((f & BW_OP_SCAN_PHRASES) && !r->op.data)
        return;
    g = group_for(p, groups, r);
    r->scan_group = g;
    r->scan_bit = (f & BW_OP_SCAN_REGEX)
                ? bw_matcher_add_regex(g->m, r->op.param, r->op.param_len)
                : bw_matcher_add_phrases(g->m, (const bw_ac_t *)r->op.data);
}

void bw_scan_prepare(bw_config_t *cfg, const char *cache_dir)
{
    apr_array_header_t *groups;
    int i;
    if (cfg->compiled)
        return;
    cfg->compiled = 1;
    groups = apr_array_make(cfg->pool, 8, sizeof(bw_scan_group_t *));
    for (i = 0; i < cfg->items->nelts; i++) {
        const bw_item_t *it = &((const bw_item_t *)cfg->items->elts)[i];
        bw_rule_t *r;
        if (it->kind != BW_ITEM_RULE)
            continue;
        for (r = it->rule; r; r = r->chain_next)
            add_rule(cfg->pool, groups, r);
    }
    for (i = 0; i < groups->nelts; i++) {
        const char *warning = NULL;
        bw_matcher_compile(((bw_scan_group_t **)groups->elts)[i]->m, cache_dir, &warning);
        if (warning)
            *(const char **)apr_array_push(cfg->warnings) = warning;
    }
}
