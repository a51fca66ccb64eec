/*
 * The @rx literal prefilter in the engine: which rules can possibly match,
 * found with one Aho-Corasick pass per (value, transformation chain) instead
 * of one PCRE2 run per rule and value.
 *
 * Start-up. The first time a configuration context is built into a program,
 * every @rx rule of that context (chain links too) whose regex yields a
 * literal set (apache2/prefilter) joins a group keyed by its transformation
 * chain and case handling; each group is one automaton holding the literals
 * of all its rules, a rule being one bit. The rule records (group, bit).
 *
 * Run time. Before a rule collects its values, for each of its targets the
 * transaction computes, once per phase, the bits of the group: every value
 * of that variable (superset: exclusions ignored) is transformed by the
 * group's chain (the shared transformation cache) and scanned once. A rule
 * none of whose targets has its bit set cannot match: it is skipped without
 * running PCRE2 or even collecting values.
 *
 * When it must not guess, it does not: negated operators, multiMatch,
 * macro parameters, and targets whose values change inside a phase (TX,
 * MATCHED_*, counts…) always run the rule. The invariant is the
 * prefilter's: "no" only when no match is possible.
 */
#include <string.h>
#include "program/bw_prog.h"
#include "operators/bw_acmatch.h"
#include "prefilter/bw_prefilter.h"

#define PF_MIN_LITERAL 2


/* Variables whose values stay the same for a whole phase. */
static int stable_var(const bw_var_def_t *v)
{
    static const char *const names[] = {
        "ARGS", "ARGS_NAMES", "ARGS_GET", "ARGS_GET_NAMES", "ARGS_POST", "ARGS_POST_NAMES",
        "REQUEST_HEADERS", "REQUEST_HEADERS_NAMES", "REQUEST_COOKIES", "REQUEST_COOKIES_NAMES",
        "REQUEST_FILENAME", "REQUEST_BASENAME", "REQUEST_URI", "REQUEST_URI_RAW", "REQUEST_LINE",
        "REQUEST_METHOD", "REQUEST_PROTOCOL", "QUERY_STRING", "REQUEST_BODY", "XML", "FILES",
        "FILES_NAMES", "MULTIPART_PART_HEADERS", "RESPONSE_BODY", "RESPONSE_HEADERS",
        "RESPONSE_HEADERS_NAMES", NULL
    };
    int i;
    for (i = 0; names[i]; i++)
        if (!strcmp(v->name, names[i]))
            return 1;
    return 0;
}

/* Can the rule's values be scanned once per phase? (no counts, no
 * macro selectors, only variables that stay put within a phase) */
int bw_rxfilter_targets_stable(const bw_rule_t *r)
{
    const bw_target_t *t = (const bw_target_t *)r->targets->elts;
    int i;
    for (i = 0; i < r->targets->nelts; i++)
        if (!t[i].is_exclusion && (t[i].is_count || t[i].selector_macro || !stable_var(t[i].var)))
            return 0;
    return 1;
}

static int same_chain(const bw_pf_group_t *g, const bw_rule_t *r, int nocase)
{
    int i;
    if (g->ntfns != r->ntfns || g->nocase != nocase)
        return 0;
    for (i = 0; i < r->ntfns; i++)
        if (g->tfns[i] != r->tfns[i])
            return 0;
    return 1;
}

static void add_rule(apr_pool_t *p, apr_array_header_t *groups, bw_rule_t *r)
{
    apr_array_header_t *lits;
    bw_pf_group_t *g = NULL;
    int nocase = 0, i;

    if (!r->op.def || strcmp(r->op.def->name, "rx") || r->op_macro || r->op_negated || r->multi_match)
        return;
    if (!bw_prefilter_extract(p, r->op.param, r->op.param_len, 0, PF_MIN_LITERAL, &lits, &nocase))
        return;
    for (i = 0; i < groups->nelts; i++) {
        bw_pf_group_t *c = ((bw_pf_group_t **)groups->elts)[i];
        if (same_chain(c, r, nocase)) {
            g = c;
            break;
        }
    }
    if (!g) {
        g = apr_pcalloc(p, sizeof(*g));
        g->nodes = r->tfn_nodes;
        g->tfns = r->tfns;
        g->ntfns = r->ntfns;
        g->nocase = nocase;
        g->ac = bw_ac_create(p, nocase);
        *(bw_pf_group_t **)apr_array_push(groups) = g;
    }
    for (i = 0; i < lits->nelts; i++)
        bw_ac_add(g->ac, ((bw_str_t *)lits->elts)[i], g->nbits);
    r->pf_group = g;
    r->pf_bit = g->nbits++;
    r->pf_stable = bw_rxfilter_targets_stable(r);
}

void bw_rxfilter_prepare(bw_config_t *cfg)
{
    apr_array_header_t *groups;
    apr_hash_t *trie;
    int i;
    if (cfg->compiled)
        return;
    cfg->compiled = 1;
    groups = apr_array_make(cfg->pool, 8, sizeof(bw_pf_group_t *));
    trie = apr_hash_make(cfg->pool);
    for (i = 0; i < cfg->items->nelts; i++) {
        const bw_item_t *it = &((const bw_item_t *)cfg->items->elts)[i];
        bw_rule_t *r;
        if (it->kind != BW_ITEM_RULE)
            continue;
        for (r = it->rule; r; r = r->chain_next) {
            /* equal transformation chains share nodes: one cache entry
             * per value and chain prefix, whichever rule asks */
            r->tfn_nodes = bw_tfn_intern(cfg->pool, trie, r->tfns, r->ntfns);
            add_rule(cfg->pool, groups, r);
        }
    }
    for (i = 0; i < groups->nelts; i++)
        bw_ac_compile(((bw_pf_group_t **)groups->elts)[i]->ac);
}

void bw_program_set_prefilter(bw_program_t *prog, int on)
{
    prog->pf_disabled = !on;
}
