/*
 * Part K (and JSON matched_rules[].unparsed): a matched rule written back
 * as configuration text, rebuilt from the compiled rule — targets as
 * written ("ARGS:q|!ARGS:x|&TX:y", regex selectors keep their /…/), the
 * operator with its parameter, the actions as written with parameters
 * quoted where the rule language needs quotes.
 */
#include <string.h>
#include "audit/bw_audit_int.h"

const char *bw_audit_rule_targets(apr_pool_t *p, const bw_rule_t *r)
{
    bw_abuf_t b;
    int i;
    bw_abuf_init(&b, p, 64);
    for (i = 0; r->targets && i < r->targets->nelts; i++) {
        const bw_target_t *t = &((const bw_target_t *)r->targets->elts)[i];
        if (i)
            bw_abuf_byte(&b, '|');
        if (t->is_exclusion)
            bw_abuf_byte(&b, '!');
        if (t->is_count)
            bw_abuf_byte(&b, '&');
        bw_abuf_cstr(&b, t->var ? t->var->name : "?");
        if (t->selector.len) {
            bw_abuf_byte(&b, ':');
            bw_abuf_str(&b, t->selector);
        }
    }
    bw_abuf_byte(&b, '\0');
    return b.data;
}

/* Inside "…": '"' and '\' escaped with '\'. */
static void quoted(bw_abuf_t *b, const char *s, size_t n)
{
    size_t i;
    bw_abuf_byte(b, '"');
    for (i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            bw_abuf_byte(b, '\\');
        bw_abuf_byte(b, s[i]);
    }
    bw_abuf_byte(b, '"');
}

/* An action parameter needs '…' when it holds a separator or a quote. */
static int needs_quotes(const char *s)
{
    return !*s || strpbrk(s, ", '\t") != NULL;
}

static const char *actions_text(apr_pool_t *p, const bw_rule_t *r)
{
    bw_abuf_t b;
    int i;
    bw_abuf_init(&b, p, 128);
    for (i = 0; r->actions && i < r->actions->nelts; i++) {
        const bw_action_t *a = &((const bw_action_t *)r->actions->elts)[i];
        if (i)
            bw_abuf_byte(&b, ',');
        bw_abuf_cstr(&b, a->def ? a->def->name : "?");
        /* actions without a parameter carry an empty one */
        if (!a->param || (!*a->param && (!a->def || a->def->param != 1)))
            continue;
        bw_abuf_byte(&b, ':');
        if (!needs_quotes(a->param)) {
            bw_abuf_cstr(&b, a->param);
            continue;
        }
        bw_abuf_byte(&b, '\'');
        {
            const char *c;
            for (c = a->param; *c; c++) {
                if (*c == '\'')
                    bw_abuf_byte(&b, '\\');
                bw_abuf_byte(&b, *c);
            }
        }
        bw_abuf_byte(&b, '\'');
    }
    bw_abuf_byte(&b, '\0');
    return b.data;
}

const char *bw_audit_rule_text(apr_pool_t *p, const bw_rule_t *r)
{
    bw_abuf_t b;
    const char *acts = actions_text(p, r);
    bw_abuf_init(&b, p, 256);
    if (r->kind == BW_RULE_SECACTION) {
        bw_abuf_cstr(&b, "SecAction ");
    } else {
        const char *t = bw_audit_rule_targets(p, r);
        char *op;
        bw_abuf_cstr(&b, "SecRule ");
        quoted(&b, t, strlen(t));
        bw_abuf_byte(&b, ' ');
        op = apr_pstrcat(p, r->op_negated ? "!@" : "@", r->op.def ? r->op.def->name : "?",
                         r->op.param && *r->op.param ? " " : "", r->op.param ? r->op.param : "", NULL);
        quoted(&b, op, strlen(op));
        bw_abuf_byte(&b, ' ');
    }
    quoted(&b, acts, strlen(acts));
    bw_abuf_byte(&b, '\0');
    return b.data;
}
