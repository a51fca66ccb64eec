/*
 * Directives that define or modify rules: SecRule, SecAction, SecMarker,
 * SecDefaultAction, SecRuleRemoveBy*, SecRuleUpdateTargetBy*,
 * SecRuleUpdateActionById. Parsing a rule compiles everything it can at
 * start-up: targets, operator (PCRE2 JIT, automata…), transformations,
 * macros. Modifiers are recorded as items and applied in order when a
 * program is built (bw_program.c), so they work on rules of the same context
 * and on inherited ones alike.
 */
#include <string.h>
#include <ctype.h>
#include "lang/bw_lang.h"
#include "operators/bw_lua.h"
#include "lang/bw_compat.h"

static bw_rule_t *rule_new(apr_pool_t *p, bw_rule_kind_t kind, const char *file, int line)
{
    bw_rule_t *r = apr_pcalloc(p, sizeof(*r));
    r->kind = kind;
    r->file = file ? file : "(none)";
    r->line = line;
    r->severity = -1;
    r->maturity = -1;
    r->accuracy = -1;
    r->log = -1;
    r->auditlog = -1;
    r->targets = apr_array_make(p, 4, sizeof(bw_target_t));
    r->actions = apr_array_make(p, 8, sizeof(bw_action_t));
    r->run_actions = apr_array_make(p, 4, sizeof(bw_action_t));
    r->tags = apr_array_make(p, 4, sizeof(const char *));
    r->chain_head = r;
    return r;
}

/* "@rx foo", "!@eq 0", "foo" (implicit @rx). */
static const char *parse_operator(apr_pool_t *p, bw_rule_t *r, const char *text)
{
    const char *s = text, *name_start;
    char *name;
    const bw_op_def_t *def;

    while (isspace((unsigned char)*s))
        s++;
    if (*s == '!') {
        r->op_negated = 1;
        s++;
        while (isspace((unsigned char)*s))
            s++;
    }
    if (*s == '@') {
        name_start = ++s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        name = apr_pstrndup(p, name_start, (apr_size_t)(s - name_start));
        while (isspace((unsigned char)*s))
            s++;
    } else {
        name = "rx";
    }
    def = bw_op_lookup(name);
    if (!def)
        return apr_psprintf(p, "unknown operator \"@%s\"", name);
    r->op.def = def;
    r->op.param = apr_pstrdup(p, s);
    r->op.param_len = strlen(s);
    r->lua = !strcmp(def->name, "inspectFile") && bw_lua_is_script(s);
    if ((def->flags & BW_OP_PARAM_REQUIRED) && !*s)
        return apr_psprintf(p, "operator @%s needs a parameter", def->name);
    if ((def->flags & BW_OP_PARAM_NONE) && *s)
        return apr_psprintf(p, "operator @%s takes no parameter (got \"%s\")", def->name, s);
    if ((def->flags & BW_OP_MACROS) && bw_macro_text_has_vars(s)) {
        char *err = NULL;
        r->op_macro = bw_macro_compile(p, s, &err);
        if (!r->op_macro)
            return apr_psprintf(p, "@%s: %s", def->name, err);
        return NULL;   /* compiled per transaction */
    }
    if (def->compile) {
        bw_op_cenv_t env;
        char *err = NULL;
        apr_pool_t *tmp;
        int rc;
        apr_pool_create(&tmp, p);
        env.pool = p;
        env.temp_pool = tmp;
        env.file = r->file;
        env.line = r->line;
        env.runtime = 0;
        rc = def->compile(&r->op, &env, &err);
        apr_pool_destroy(tmp);
        if (rc != 0)
            return err ? err : apr_psprintf(p, "@%s: invalid parameter", def->name);
    }
    return NULL;
}

static const char *check_starter(apr_pool_t *p, bw_rule_t *r, int is_link)
{
    if (is_link) {
        if (r->id)
            return "a chained rule cannot have an id (only the chain starter does)";
        if (r->disruptive != BW_DA_UNSET)
            return "disruptive actions can only be specified by the chain starter rule";
        if (r->phase)
            return "a chained rule cannot have a phase (only the chain starter does)";
        if (r->skip || r->skip_after)
            return "skip and skipAfter can only be specified by the chain starter rule";
        return NULL;
    }
    if (!r->id)
        return "rule has no id: every rule must have an id action";
    return NULL;
}

static const char *register_id(bw_config_t *cfg, bw_rule_t *r)
{
    bw_rule_t *prev = apr_hash_get(cfg->ids, &r->id, sizeof(long));
    if (prev)
        return apr_psprintf(cfg->pool, "duplicate rule id %ld (first defined at %s:%d)",
                            r->id, prev->file, prev->line);
    apr_hash_set(cfg->ids, &r->id, sizeof(long), r);
    return NULL;
}

static const char *add_rule(bw_config_t *cfg, bw_rule_t *r, const char *file, int line)
{
    bw_rule_t *pending = cfg->pending_chain;
    const char *err = check_starter(cfg->pool, r, pending != NULL);
    bw_item_t *it;

    if (err)
        return err;
    if (pending)
        r->chain_head = pending->chain_head;
    bw_rule_apply_defaults(r, cfg->defaults[0]);
    err = bw_rule_forbidden_program(cfg->pool, r, &cfg->settings);
    if (err)
        return err;
    if (pending) {
        r->phase = r->chain_head->phase;
        pending->chain_next = r;
        cfg->pending_chain = r->chained ? r : NULL;
        return NULL;
    }
    err = register_id(cfg, r);
    if (err)
        return err;
    cfg->pending_chain = r->chained ? r : NULL;
    it = apr_array_push(cfg->items);
    memset(it, 0, sizeof(*it));
    it->kind = BW_ITEM_RULE;
    it->rule = r;
    it->file = file;
    it->line = line;
    return NULL;
}

static const char *args3(apr_pool_t *p, const char *args, char **a, char **b, char **c, int *n)
{
    const char *s = args;
    char *w[4];
    int i;
    for (i = 0; i < 4; i++) {
        const char *err = bw_conf_getword(p, &s, &w[i]);
        if (err)
            return err;
    }
    *n = !*w[0] ? 0 : !*w[1] ? 1 : !*w[2] ? 2 : !*w[3] ? 3 : 4;
    *a = w[0];
    *b = w[1];
    *c = w[2];
    return NULL;
}

const char *bw_dir_secrule(bw_config_t *cfg, const char *args, const char *file, int line)
{
    char *targets, *op, *actions;
    int n;
    bw_rule_t *r;
    const char *err = args3(cfg->pool, args, &targets, &op, &actions, &n);

    if (err)
        return err;
    if (n < 2 || n > 3)
        return apr_psprintf(cfg->pool, "SecRule takes two or three arguments (targets, operator, "
                            "actions), got %d", n);
    r = rule_new(cfg->pool, BW_RULE_SECRULE, file, line);
    err = bw_targets_parse(cfg->pool, targets, r->targets);
    if (err)
        return err;
    if (n == 3) {
        err = bw_rule_apply_actions(cfg->pool, r, actions, r->actions);
        if (err)
            return err;
    }
    err = parse_operator(cfg->pool, r, op);
    if (err)
        return err;
    err = add_rule(cfg, r, file, line);
    if (!err)
        bw_compat_note_rule(cfg, r, file, line);
    return err;
}

const char *bw_dir_secaction(bw_config_t *cfg, const char *args, const char *file, int line)
{
    char *actions, *x, *y;
    int n;
    bw_rule_t *r;
    const char *err = args3(cfg->pool, args, &actions, &x, &y, &n);

    if (err)
        return err;
    if (n != 1)
        return apr_psprintf(cfg->pool, "SecAction takes one argument (the actions), got %d", n);
    r = rule_new(cfg->pool, BW_RULE_SECACTION, file, line);
    err = bw_rule_apply_actions(cfg->pool, r, actions, r->actions);
    if (err)
        return err;
    r->op.def = bw_op_lookup("unconditionalMatch");
    r->op.param = "";
    err = add_rule(cfg, r, file, line);
    if (!err)
        bw_compat_note_rule(cfg, r, file, line);
    return err;
}

/* SecRuleScript PATH [ACTIONS]: a rule without targets whose operator runs
 * the Lua script, compiled here (a syntax error stops start-up). */
const char *bw_dir_secrulescript(bw_config_t *cfg, const char *args, const char *file, int line)
{
    char *path, *actions, *x;
    int n;
    bw_rule_t *r;
    bw_op_cenv_t env;
    char *why = NULL;
    const char *err = args3(cfg->pool, args, &path, &actions, &x, &n);

    if (err)
        return err;
    if (n < 1 || n > 2)
        return apr_psprintf(cfg->pool, "SecRuleScript takes one or two arguments (a Lua script "
                            "and actions), got %d", n);
    if (!bw_lua_is_script(path))
        return apr_psprintf(cfg->pool, "SecRuleScript: \"%s\" is not a Lua script (the name must "
                            "end in .lua)", path);
    r = rule_new(cfg->pool, BW_RULE_SECACTION, file, line);
    if (n == 2) {
        err = bw_rule_apply_actions(cfg->pool, r, actions, r->actions);
        if (err)
            return err;
    }
    memset(&env, 0, sizeof(env));
    env.pool = cfg->pool;
    env.file = r->file;
    env.line = line;
    r->op.def = &bw_op_script;
    r->op.param = path;
    r->op.param_len = strlen(path);
    if (bw_op_script.compile(&r->op, &env, &why) != 0)
        return apr_psprintf(cfg->pool, "SecRuleScript: %s", why);
    r->lua = 1;
    err = add_rule(cfg, r, file, line);
    if (!err)
        bw_compat_note_rule(cfg, r, file, line);
    return err;
}

const char *bw_dir_secmarker(bw_config_t *cfg, const char *args, const char *file, int line)
{
    char *name, *x, *y;
    int n;
    bw_rule_t *r;
    bw_item_t *it;
    const char *err = args3(cfg->pool, args, &name, &x, &y, &n);

    if (err)
        return err;
    if (n != 1)
        return "SecMarker takes one argument, the marker name";
    if (cfg->pending_chain)
        return "SecMarker cannot follow a rule with the chain action";
    r = rule_new(cfg->pool, BW_RULE_MARKER, file, line);
    r->marker = name;
    it = apr_array_push(cfg->items);
    memset(it, 0, sizeof(*it));
    it->kind = BW_ITEM_RULE;
    it->rule = r;
    it->file = file;
    it->line = line;
    return NULL;
}

const char *bw_dir_default_action(bw_config_t *cfg, const char *args, const char *file, int line)
{
    char *actions, *x, *y;
    int n;
    bw_rule_t *r;
    const char *err = args3(cfg->pool, args, &actions, &x, &y, &n);

    if (err)
        return err;
    if (n != 1)
        return "SecDefaultAction takes one argument, an action list";
    r = rule_new(cfg->pool, BW_RULE_SECACTION, file, line);
    err = bw_rule_apply_actions(cfg->pool, r, actions, r->actions);
    if (err)
        return err;
    if (!r->phase)
        return "SecDefaultAction must specify a phase";
    /* block means "the default's action", so it cannot be the default's */
    if (r->disruptive == BW_DA_UNSET || r->disruptive == BW_DA_BLOCK)
        return "SecDefaultAction must specify a disruptive action (block is not one here)";
    /* mod_security2's list: tag, severity and logdata are allowed, and
     * every rule after it inherits them */
    if (r->id || r->msg || r->rev || r->ver || r->maturity != -1 || r->accuracy != -1)
        return "SecDefaultAction cannot use metadata actions (id, rev, msg, ver, maturity, accuracy)";
    if (r->chained || r->skip || r->skip_after)
        return "SecDefaultAction cannot use chain, skip or skipAfter";
    /* As in mod_security2, the last SecDefaultAction of a context is the one
     * rules defined after it inherit from (its phase included). */
    cfg->defaults[0] = r;
    cfg->defaults[r->phase] = r;
    bw_compat_note_rule(cfg, r, file, line);
    return NULL;
}

static bw_item_t *new_item(bw_config_t *cfg, bw_item_kind_t kind, const char *file, int line)
{
    bw_item_t *it = apr_array_push(cfg->items);
    memset(it, 0, sizeof(*it));
    it->kind = kind;
    it->file = file;
    it->line = line;
    return it;
}

const char *bw_dir_remove(bw_config_t *cfg, bw_item_kind_t kind, const char *args,
                          const char *file, int line)
{
    const char *s = args;
    int count = 0;
    for (;;) {
        char *w, *err2 = NULL;
        const char *err = bw_conf_getword(cfg->pool, &s, &w);
        bw_item_t *it;
        if (err)
            return err;
        if (!*w)
            break;
        count++;
        it = new_item(cfg, kind, file, line);
        it->text = w;
        if (kind == BW_ITEM_REMOVE_ID) {
            it->ranges = apr_array_make(cfg->pool, 2, sizeof(bw_idrange_t));
            err = bw_idranges_parse(cfg->pool, w, it->ranges);
            if (err)
                return apr_psprintf(cfg->pool, "SecRuleRemoveById: %s", err);
        } else {
            it->re = bw_regex_compile(cfg->pool, w, 0, &err2);
            if (!it->re)
                return apr_psprintf(cfg->pool, "%s: %s",
                                    kind == BW_ITEM_REMOVE_TAG ? "SecRuleRemoveByTag"
                                                               : "SecRuleRemoveByMsg", err2);
        }
    }
    if (!count)
        return "SecRuleRemoveBy…: at least one argument is required";
    return NULL;
}

const char *bw_dir_update_target(bw_config_t *cfg, bw_item_kind_t kind, const char *args,
                                 const char *file, int line)
{
    char *which, *targets, *replaced, *err2 = NULL;
    int n;
    bw_item_t *it;
    const char *err = args3(cfg->pool, args, &which, &targets, &replaced, &n);

    if (err)
        return err;
    if (n < 2 || n > 3)
        return "SecRuleUpdateTargetBy… takes a rule selector, targets and optionally the target to replace";
    it = new_item(cfg, kind, file, line);
    it->text = which;
    if (kind == BW_ITEM_UPDATE_TARGET_ID) {
        it->ranges = apr_array_make(cfg->pool, 2, sizeof(bw_idrange_t));
        err = bw_idranges_parse(cfg->pool, which, it->ranges);
        if (err)
            return err;
    } else {
        it->re = bw_regex_compile(cfg->pool, which, 0, &err2);
        if (!it->re)
            return err2;
    }
    it->targets = apr_array_make(cfg->pool, 2, sizeof(bw_target_t));
    err = bw_targets_parse(cfg->pool, targets, it->targets);
    if (err)
        return err;
    if (n == 3) {
        it->replaced = apr_array_make(cfg->pool, 1, sizeof(bw_target_t));
        err = bw_targets_parse(cfg->pool, replaced, it->replaced);
        if (err)
            return err;
    }
    bw_compat_note_targets(cfg, it->targets, file, line);
    return NULL;
}

const char *bw_dir_update_action(bw_config_t *cfg, const char *args, const char *file, int line)
{
    char *which, *actions, *x, *colon;
    int n;
    bw_item_t *it;
    bw_rule_t probe;
    const char *err = args3(cfg->pool, args, &which, &actions, &x, &n);

    if (err)
        return err;
    if (n != 2)
        return "SecRuleUpdateActionById takes a rule id and an action list";
    colon = strchr(which, ':');   /* id:offset (chain link) is accepted, offset 0 only */
    if (colon)
        *colon = '\0';
    it = new_item(cfg, BW_ITEM_UPDATE_ACTION_ID, file, line);
    it->ranges = apr_array_make(cfg->pool, 1, sizeof(bw_idrange_t));
    err = bw_idranges_parse(cfg->pool, which, it->ranges);
    if (err)
        return err;
    /* Validate the action list now so errors carry this file and line. */
    memset(&probe, 0, sizeof(probe));
    probe.file = file;
    probe.severity = probe.maturity = probe.accuracy = probe.log = probe.auditlog = -1;
    probe.tags = apr_array_make(cfg->pool, 2, sizeof(char *));
    probe.run_actions = apr_array_make(cfg->pool, 2, sizeof(bw_action_t));
    probe.actions = apr_array_make(cfg->pool, 2, sizeof(bw_action_t));
    err = bw_rule_apply_actions(cfg->pool, &probe, actions, probe.actions);
    if (err)
        return err;
    if (probe.id)
        return "SecRuleUpdateActionById cannot change a rule's id";
    it->actions_text = actions;
    bw_compat_note_rule(cfg, &probe, file, line);
    return NULL;
}

/* Arrays a + b, a's elements first, in a new array of p. */
static apr_array_header_t *concat(apr_pool_t *p, const apr_array_header_t *a,
                                  const apr_array_header_t *b)
{
    apr_array_header_t *out = apr_array_copy(p, a);
    apr_array_cat(out, b);
    return out;
}

/* What mod_security2 merges from the default action set into every rule,
 * chain links included: severity and logdata where the rule has none, the
 * default's tags and its non-disruptive actions (setvar, ctl, initcol…)
 * before the rule's own, capture and multiMatch. */
static void inherit_metadata(bw_rule_t *r, const bw_rule_t *def)
{
    apr_pool_t *p = r->actions->pool;
    if (r->severity == -1)
        r->severity = def->severity;
    if (!r->logdata)
        r->logdata = def->logdata;
    if (def->tags->nelts)
        r->tags = concat(p, def->tags, r->tags);
    if (def->run_actions->nelts)
        r->run_actions = concat(p, def->run_actions, r->run_actions);
    r->capture |= def->capture;
    r->multi_match |= def->multi_match;
}

/* Defaults: mod_security2's merge of the default action set under a rule. */
void bw_rule_apply_defaults(bw_rule_t *r, const bw_rule_t *def)
{
    if (!def) {
        if (!r->phase && r->chain_head == r)
            r->phase = 2;
        if (r->disruptive == BW_DA_UNSET && r->chain_head == r)
            r->disruptive = BW_DA_PASS;
        r->default_set = NULL;
        return;
    }
    r->default_set = def;
    inherit_metadata(r, def);
    if (!r->phase && r->chain_head == r)
        r->phase = def->phase;
    if (r->log == -1)
        r->log = def->log;
    if (r->auditlog == -1)
        r->auditlog = def->auditlog;
    if (r->disruptive == BW_DA_UNSET && r->chain_head == r) {
        r->disruptive = def->disruptive;
        if (def->disruptive == BW_DA_REDIRECT || def->disruptive == BW_DA_PROXY)
            r->redirect = def->redirect;
    }
    if (!r->status && def->status && r->chain_head == r)
        r->status = def->status;
    if (!r->tfn_none && def->ntfns) {
        const bw_tfn_def_t **t = apr_palloc(r->actions->pool,
                                            sizeof(*t) * (size_t)(def->ntfns + r->ntfns));
        memcpy(t, def->tfns, sizeof(*t) * (size_t)def->ntfns);
        if (r->ntfns)
            memcpy(t + def->ntfns, r->tfns, sizeof(*t) * (size_t)r->ntfns);
        r->tfns = t;
        r->ntfns += def->ntfns;
    }
}

int bw_rule_has_tag_matching(const bw_rule_t *r, const pcre2_code *re, pcre2_match_data *md)
{
    int i;
    for (i = 0; i < r->tags->nelts; i++)
        if (bw_regex_match(re, bw_str_make(((const char **)r->tags->elts)[i]), md) > 0)
            return 1;
    return 0;
}

int bw_rule_msg_matches(const bw_rule_t *r, const pcre2_code *re, pcre2_match_data *md)
{
    return r->msg && bw_regex_match(re, bw_str_make(r->msg->text), md) > 0;
}
