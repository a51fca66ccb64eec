/*
 * Programs: the effective rule set and settings of one configuration
 * context over its parent, built once and then shared read-only by every
 * transaction. Rules are inherited (unless SecRuleInheritance Off), then the
 * context's items apply in the order they were written: rules are appended
 * to their phase (SecMarker to every phase), removals drop rules, target and
 * action updates replace a rule by a modified copy — the parent's program is
 * never changed.
 */
#include <string.h>
#include "program/bw_prog.h"

static bw_program_t *program_new(apr_pool_t *pool)
{
    bw_program_t *prog = apr_pcalloc(pool, sizeof(*prog));
    int ph;
    prog->pool = pool;
    for (ph = 1; ph <= BW_PHASES; ph++)
        prog->phase[ph] = apr_array_make(pool, 64, sizeof(bw_rule_t *));
    prog->by_id = apr_hash_make(pool);
    return prog;
}

static int rule_matches_item(const bw_rule_t *r, const bw_item_t *it)
{
    if (r->kind == BW_RULE_MARKER)
        return 0;
    switch (it->kind) {
    case BW_ITEM_REMOVE_ID:
    case BW_ITEM_UPDATE_TARGET_ID:
    case BW_ITEM_UPDATE_ACTION_ID:
        return r->id && bw_idranges_match(it->ranges, r->id);
    case BW_ITEM_REMOVE_TAG:
    case BW_ITEM_UPDATE_TARGET_TAG:
        return bw_rule_has_tag_matching(r, it->re, NULL);
    default:
        return bw_rule_msg_matches(r, it->re, NULL);
    }
}

/* A copy of r whose target list can be changed. */
static bw_rule_t *clone_rule(apr_pool_t *p, const bw_rule_t *r)
{
    bw_rule_t *c = apr_pmemdup(p, r, sizeof(*r));
    c->targets = apr_array_copy(p, r->targets);
    c->run_actions = apr_array_copy(p, r->run_actions);
    c->tags = apr_array_copy(p, r->tags);
    c->actions = apr_array_copy(p, r->actions);
    c->chain_head = c;
    return c;
}

static void update_targets(apr_pool_t *p, bw_rule_t *r, const bw_item_t *it)
{
    int i, j;
    if (it->replaced) {
        /* drop the replaced targets (same variable and selector) */
        for (j = 0; j < it->replaced->nelts; j++) {
            const bw_target_t *old = &((const bw_target_t *)it->replaced->elts)[j];
            bw_target_t *t = (bw_target_t *)r->targets->elts;
            int k = 0;
            for (i = 0; i < r->targets->nelts; i++)
                if (!(t[i].var == old->var && bw_str_eq_ci(t[i].selector, old->selector)
                      && t[i].is_count == old->is_count && !t[i].is_exclusion))
                    t[k++] = t[i];
            r->targets->nelts = k;
        }
    }
    for (i = 0; i < it->targets->nelts; i++)
        *(bw_target_t *)apr_array_push(r->targets) = ((const bw_target_t *)it->targets->elts)[i];
}

static const char *update_actions(apr_pool_t *p, bw_rule_t *r, const bw_item_t *it)
{
    const char *err = bw_rule_apply_actions(p, r, it->actions_text, r->actions);
    return err ? apr_psprintf(p, "%s:%d: SecRuleUpdateActionById: %s", it->file, it->line, err) : NULL;
}

/* Apply a modifier item to every matching rule of every phase. */
static const char *apply_item(bw_program_t *prog, const bw_item_t *it)
{
    int ph, i;
    apr_hash_t *done = apr_hash_make(prog->pool);
    for (ph = 1; ph <= BW_PHASES; ph++) {
        apr_array_header_t *arr = prog->phase[ph];
        bw_rule_t **rules = (bw_rule_t **)arr->elts;
        int k = 0;
        for (i = 0; i < arr->nelts; i++) {
            bw_rule_t *r = rules[i];
            if (!rule_matches_item(r, it)) {
                rules[k++] = r;
                continue;
            }
            if (it->kind == BW_ITEM_REMOVE_ID || it->kind == BW_ITEM_REMOVE_TAG
                || it->kind == BW_ITEM_REMOVE_MSG) {
                apr_hash_set(prog->by_id, &r->id, sizeof(long), NULL);
                continue;
            }
            {
                bw_rule_t *c = apr_hash_get(done, &r, sizeof(r));
                if (!c) {
                    const char *err = NULL;
                    c = clone_rule(prog->pool, r);
                    if (it->kind == BW_ITEM_UPDATE_ACTION_ID) {
                        err = update_actions(prog->pool, c, it);
                    } else {
                        update_targets(prog->pool, c, it);
                    }
                    if (err)
                        return err;
                    apr_hash_set(done, apr_pmemdup(prog->pool, &r, sizeof(r)), sizeof(r), c);
                    apr_hash_set(prog->by_id, apr_pmemdup(prog->pool, &c->id, sizeof(long)),
                                 sizeof(long), c);
                }
                rules[k++] = c;
            }
        }
        arr->nelts = k;
    }
    return NULL;
}

static void add_rule(bw_program_t *prog, bw_rule_t *r)
{
    int ph;
    if (r->kind == BW_RULE_MARKER) {
        for (ph = 1; ph <= BW_PHASES; ph++)
            *(bw_rule_t **)apr_array_push(prog->phase[ph]) = r;
        return;
    }
    *(bw_rule_t **)apr_array_push(prog->phase[r->phase]) = r;
    apr_hash_set(prog->by_id, &r->id, sizeof(long), r);
    prog->nrules++;
}

/* SecExternalPrograms Off: the first rule link that would run a program,
 * as "file:line: reason", or NULL. On the merged settings, so a directive
 * after the rule or in an enclosing context counts too. */
static char *forbidden_program(const bw_program_t *prog)
{
    int ph, i;
    for (ph = 1; ph <= BW_PHASES; ph++) {
        const apr_array_header_t *arr = prog->phase[ph];
        for (i = 0; i < arr->nelts; i++) {
            const bw_rule_t *r;
            for (r = ((bw_rule_t **)arr->elts)[i]; r; r = r->chain_next) {
                const char *why = bw_rule_forbidden_program(prog->pool, r, &prog->settings);
                if (why)
                    return apr_psprintf(prog->pool, "%s:%d: %s", r->file, r->line, why);
            }
        }
    }
    return NULL;
}

bw_program_t *bw_program_build_ex(apr_pool_t *pool, const bw_program_t *parent,
                                  bw_config_t *cfg, unsigned flags, char **err)
{
    bw_program_t *prog = program_new(pool);
    bw_settings_t unset;
    int ph, i;

    prog->flags = flags;
    prog->parent = parent;
    bw_settings_init_unset(&unset);
    bw_settings_merge(&prog->settings, parent ? &parent->settings : &unset, &cfg->settings);
    if (parent && prog->settings.rule_inheritance != 0) {
        for (ph = 1; ph <= BW_PHASES; ph++) {
            const apr_array_header_t *src = parent->phase[ph];
            for (i = 0; i < src->nelts; i++)
                *(bw_rule_t **)apr_array_push(prog->phase[ph]) = ((bw_rule_t **)src->elts)[i];
        }
        prog->by_id = apr_hash_copy(pool, parent->by_id);
        prog->nrules = parent->nrules;
    }
    for (i = 0; i < cfg->items->nelts; i++) {
        const bw_item_t *it = &((const bw_item_t *)cfg->items->elts)[i];
        if (it->kind == BW_ITEM_RULE) {
            if (it->rule->kind != BW_RULE_MARKER && apr_hash_get(prog->by_id, &it->rule->id, sizeof(long))
                && parent && apr_hash_get(parent->by_id, &it->rule->id, sizeof(long))) {
                const bw_rule_t *old = apr_hash_get(parent->by_id, &it->rule->id, sizeof(long));
                *err = apr_psprintf(pool, "%s:%d: duplicate rule id %ld (inherited from %s:%d)",
                                    it->rule->file, it->rule->line, it->rule->id, old->file, old->line);
                return NULL;
            }
            add_rule(prog, it->rule);
        } else {
            const char *e = apply_item(prog, it);
            if (e) {
                *err = apr_pstrdup(pool, e);
                return NULL;
            }
        }
    }
    bw_settings_finalize(&prog->settings);
    *err = forbidden_program(prog);
    if (*err)
        return NULL;
    *err = (char *)bw_program_compile(prog);
    if (*err)
        return NULL;
    if (!(flags & BW_PROG_NO_FOLD))
        bw_program_fold(prog, parent);
    if (!(flags & BW_PROG_NO_SCAN))
        bw_scan_build(prog, cfg->warnings);
    bw_program_link_scan(prog);
    return prog;
}

bw_program_t *bw_program_build(apr_pool_t *pool, const bw_program_t *parent,
                               bw_config_t *cfg, char **err)
{
    return bw_program_build_ex(pool, parent, cfg, 0, err);
}

const bw_settings_t *bw_program_settings(const bw_program_t *prog)
{
    return &prog->settings;
}

static void count(apr_pool_t *p, apr_hash_t *h, const char *name)
{
    int *n = apr_hash_get(h, name, APR_HASH_KEY_STRING);
    if (!n) {
        n = apr_pcalloc(p, sizeof(int));
        apr_hash_set(h, apr_pstrdup(p, name), APR_HASH_KEY_STRING, n);
    }
    (*n)++;
}

static void stats_rule(const bw_rule_t *r, apr_pool_t *p, bw_program_stats_t *st)
{
    int i;
    count(p, st->operators, r->op.def ? r->op.def->name : "?");
    for (i = 0; i < r->actions->nelts; i++)
        count(p, st->actions, ((bw_action_t *)r->actions->elts)[i].def->name);
    for (i = 0; i < r->ntfns; i++)
        count(p, st->tfns, r->tfns[i]->name);
    for (i = 0; i < r->targets->nelts; i++)
        count(p, st->variables, ((bw_target_t *)r->targets->elts)[i].var->name);
}

void bw_program_stats(const bw_program_t *prog, apr_pool_t *pool, bw_program_stats_t *st)
{
    int ph, i;
    memset(st, 0, sizeof(*st));
    st->operators = apr_hash_make(pool);
    st->actions = apr_hash_make(pool);
    st->tfns = apr_hash_make(pool);
    st->variables = apr_hash_make(pool);
    for (ph = 1; ph <= BW_PHASES; ph++) {
        const apr_array_header_t *arr = prog->phase[ph];
        for (i = 0; i < arr->nelts; i++) {
            const bw_rule_t *r = ((bw_rule_t **)arr->elts)[i];
            if (r->kind == BW_RULE_MARKER) {
                if (ph == 1)
                    st->markers++;
                continue;
            }
            st->rules_per_phase[ph]++;
            st->total_rules++;
            for (; r; r = r->chain_next) {
                stats_rule(r, pool, st);
                if (r != r->chain_head)
                    st->chained_rules++;
            }
        }
    }
}

const char *bw_rule_file(const bw_rule_t *r)
{
    return r->file;
}

int bw_rule_line(const bw_rule_t *r)
{
    return r->line;
}

long bw_rule_id(const bw_rule_t *r)
{
    return r->id;
}

int bw_rule_logs(const bw_rule_t *r)
{
    return r->log != 0;     /* unset (-1) logs, as the executor reads it */
}

const bw_rule_t *bw_program_rule(const bw_program_t *prog, long id)
{
    return apr_hash_get(prog->by_id, &id, sizeof(long));
}
