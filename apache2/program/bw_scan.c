/*
 * Scan groups: the pattern operators (@rx, and the phrase operators @pm,
 * @pmFromFile, @pmf) of the rules a program can still run once folded
 * (bw_fold.c), grouped by transformation chain into one multi-pattern
 * matcher each, a rule being one bit. The executor then transforms a value
 * once per chain and scans it once per group, and only rules whose bit is
 * set look at the value. Rules folding decided, or that no path reaches,
 * stay out: at paranoia level 1 that is most of CRS.
 *
 * A program built over a parent (a <Location> over its server) reuses the
 * parent's groups for every rule it inherits, including rules it changed
 * with SecRuleUpdateTargetBy… (same operator, same chain), and compiles
 * groups only for rules the parent has no bit for: a <Location> that only
 * removes rules or excludes targets compiles nothing.
 *
 * An operator whose parameter has a macro is compiled per transaction and
 * joins no group.
 */
#include <string.h>
#include <apr_file_io.h>
#include "program/bw_prog.h"

/* What identifies a rule's pattern for sharing: its compiled operator and
 * its chain (a rule's chain array is its own, shared only by copies). */
typedef struct {
    const void *op_data;
    const bw_tfn_def_t *const *tfns;
    int ntfns;
} scan_key_t;

static void key_of(const bw_rule_t *r, scan_key_t *k)
{
    memset(k, 0, sizeof(*k));
    k->op_data = r->op.data;
    k->tfns = r->tfns;
    k->ntfns = r->ntfns;
}

static int scannable(const bw_rule_t *r)
{
    unsigned f = r->op.def ? r->op.def->flags : 0;
    if (r->kind != BW_RULE_SECRULE || r->op_macro || !r->op.data)
        return 0;
    return (f & (BW_OP_SCAN_REGEX | BW_OP_SCAN_PHRASES)) != 0;
}

const bw_scan_ref_t *bw_scan_lookup(const bw_program_t *prog, const bw_rule_t *r)
{
    scan_key_t k;
    key_of(r, &k);
    for (; prog; prog = prog->parent) {
        const bw_scan_ref_t *ref = prog->scan_map ? apr_hash_get(prog->scan_map, &k, sizeof(k)) : NULL;
        if (ref)
            return ref;
    }
    return NULL;
}

static int same_chain(const bw_scan_ref_t *g, const bw_rule_t *r)
{
    int i;
    if (g->ntfns != r->ntfns)
        return 0;
    for (i = 0; i < r->ntfns; i++)
        if (g->tfns[i] != r->tfns[i])
            return 0;
    return 1;
}

/* A new rule joins the group of its chain (created on first use). */
static void add_rule(bw_program_t *prog, apr_array_header_t *groups, const bw_rule_t *r)
{
    bw_scan_ref_t *g = NULL, *ref;
    scan_key_t k;
    int i;
    key_of(r, &k);
    if (apr_hash_get(prog->scan_map, &k, sizeof(k)) || bw_scan_lookup(prog->parent, r))
        return;
    for (i = 0; i < groups->nelts && !g; i++)
        if (same_chain(((bw_scan_ref_t **)groups->elts)[i], r))
            g = ((bw_scan_ref_t **)groups->elts)[i];
    if (!g) {
        g = apr_pcalloc(prog->pool, sizeof(*g));
        g->tfns = r->tfns;
        g->ntfns = r->ntfns;
        g->m = bw_matcher_create(prog->pool);
        *(bw_scan_ref_t **)apr_array_push(groups) = g;
    }
    ref = apr_pmemdup(prog->pool, g, sizeof(*g));
    ref->bit = (r->op.def->flags & BW_OP_SCAN_REGEX)
             ? bw_matcher_add_regex(g->m, r->op.param, r->op.param_len)
             : bw_matcher_add_phrases(g->m, (const bw_ac_t *)r->op.data);
    apr_hash_set(prog->scan_map, apr_pmemdup(prog->pool, &k, sizeof(k)), sizeof(k), ref);
}

/* Where compiled databases are kept across restarts: SecScanCacheDir, else
 * a folder in SecDataDir (a mod_security2 configuration has one, and the
 * server can write there), else nowhere ("Off"). Made when missing, for
 * the server's user only: a database read back is trusted. */
static const char *cache_dir(bw_program_t *prog)
{
    const bw_settings_t *s = &prog->settings;
    const char *dir = s->scan_cache_dir;
    if (dir && !strcasecmp(dir, "Off"))
        return NULL;
    if (!dir && s->data_dir && *s->data_dir)
        dir = apr_pstrcat(prog->pool, s->data_dir, "/bulwark-scan-cache", NULL);
    if (dir && apr_dir_make_recursive(dir, APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE,
                                      prog->pool) != APR_SUCCESS)
        return NULL;
    return dir;
}

void bw_scan_build(bw_program_t *prog, apr_array_header_t *warnings)
{
    apr_array_header_t *groups = apr_array_make(prog->pool, 8, sizeof(bw_scan_ref_t *));
    const char *dir = NULL;
    int ph, i;
    prog->scan_map = apr_hash_make(prog->pool);
    for (ph = 1; ph <= BW_PHASES; ph++) {
        const bw_code_t *code = &prog->code[ph];
        for (i = 0; i < code->n; i++) {
            const bw_crule_t *c;
            if (code->slots[i].kind != BW_SLOT_RUN)
                continue;
            for (c = code->slots[i].cr; c; c = c->next)
                if (scannable(c->r))
                    add_rule(prog, groups, c->r);
        }
    }
    if (groups->nelts)
        dir = cache_dir(prog);
    for (i = 0; i < groups->nelts; i++) {
        const char *warning = NULL;
        bw_matcher_compile(((bw_scan_ref_t **)groups->elts)[i]->m, dir, &warning);
        if (warning && warnings)
            *(const char **)apr_array_push(warnings) = warning;
    }
}
