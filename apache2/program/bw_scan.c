/*
 * Scan plans: which pattern operators look at a value source, and how a
 * value of that source is scanned once for all of them.
 *
 * For each value source (a variable and literal selector, bw_compile.c),
 * the pattern rules (@rx, and the phrase operators @pm, @pmFromFile, @pmf)
 * a program can still run once folded (bw_fold.c) and that target the
 * source form the source's plan; sources with the same rules share one
 * (ARGS, ARGS_NAMES, REQUEST_COOKIES… in CRS). In a plan each rule is one
 * bit, and the rules' transformation chains are the plan's slots. A value
 * is transformed through every slot (most chains leave most values as
 * they are), and each distinct string that comes out is scanned once:
 *   - by the open matcher, every time;
 *   - by the gated matcher only when the string has a byte of the plan's
 *     gate. A regex goes there when it has a byte gate that benign data
 *     rarely contains (prefilter/: every match contains one of a few bytes
 *     such as ( < ; ' =); most values have none of them, and most CRS
 *     regexes have such a gate.
 * A rule reads its bit from the hits of the string its own chain made.
 *
 * A program built over a parent (a <Location> over its server) reuses a
 * parent's plan whenever the parent's plan holds every rule it needs for
 * the source (extra bits are never read): a <Location> that removes rules
 * or excludes targets compiles nothing.
 */
#include <string.h>
#include <apr_file_io.h>
#include "program/bw_prog.h"
#include "prefilter/bw_prefilter.h"

/* A gate weighing more than this (in 1/10000 of benign bytes, pf_weights.c)
 * is too common to spare a scan: the regex goes to the open matcher. */
#define GATE_MAX_WEIGHT 200

/* What identifies a pattern rule for sharing between programs: its
 * compiled operator and its chain (a rule's chain array is its own,
 * shared only by copies SecRuleUpdateTargetBy… makes). */
typedef struct {
    const void *op_data;
    const bw_tfn_def_t *const *tfns;
    int ntfns;
} scan_key_t;

typedef struct {
    int bit, slot;
} member_t;

static void key_of(const bw_rule_t *r, scan_key_t *k)
{
    memset(k, 0, sizeof(*k));
    k->op_data = r->op.data;
    k->tfns = r->tfns;
    k->ntfns = r->ntfns;
}

int bw_scannable(const bw_rule_t *r)
{
    unsigned f = r->op.def ? r->op.def->flags : 0;
    if (r->kind != BW_RULE_SECRULE || r->op_macro || !r->op.data)
        return 0;
    return (f & (BW_OP_SCAN_REGEX | BW_OP_SCAN_PHRASES)) != 0;
}

int bw_plan_member(const bw_plan_t *pl, const bw_rule_t *r, int *bit, int *slot)
{
    scan_key_t k;
    const member_t *m;
    key_of(r, &k);
    m = apr_hash_get(pl->members, &k, sizeof(k));
    if (!m)
        return 0;
    *bit = m->bit;
    *slot = m->slot;
    return 1;
}

/* ---- building a plan ----------------------------------------------------------- */

static int same_chain(const bw_tfn_def_t *const *a, int na, const bw_tfn_def_t *const *b, int nb)
{
    return na == nb && (!na || !memcmp(a, b, sizeof(*a) * (size_t)na));
}

static int slot_of(apr_array_header_t *slots, const bw_rule_t *r)
{
    int i;
    for (i = 0; i < slots->nelts; i++) {
        const bw_rule_t *o = ((const bw_rule_t **)slots->elts)[i];
        if (same_chain(o->tfns, o->ntfns, r->tfns, r->ntfns))
            return i;
    }
    *(const bw_rule_t **)apr_array_push(slots) = r;
    return slots->nelts - 1;
}

/* Put rule r (bit) into the open or the gated matcher. */
static void add_pattern(apr_pool_t *p, bw_plan_t *pl, const bw_rule_t *r, int bit)
{
    uint64_t gate[4];
    unsigned weight = 0;
    int w;
    if (r->op.def->flags & BW_OP_SCAN_PHRASES) {
        if (!pl->open)
            pl->open = bw_matcher_create(p);
        bw_matcher_add_phrases_as(pl->open, (const bw_ac_t *)r->op.data, bit);
        return;
    }
    if (bw_prefilter_gate(p, r->op.param, r->op.param_len, 0, gate, &weight)
        && weight <= GATE_MAX_WEIGHT) {
        if (!pl->gated)
            pl->gated = bw_matcher_create(p);
        bw_matcher_add_regex_as(pl->gated, r->op.param, r->op.param_len, bit);
        pl->gated_bits[bit / 64] |= (uint64_t)1 << (bit % 64);
        for (w = 0; w < 4; w++)
            pl->gate[w] |= gate[w];
        return;
    }
    if (!pl->open)
        pl->open = bw_matcher_create(p);
    bw_matcher_add_regex_as(pl->open, r->op.param, r->op.param_len, bit);
}

/* Add the rules pl does not hold yet (a plan is open until compiled). */
static void plan_add(apr_pool_t *p, bw_plan_t *pl, apr_array_header_t *slots,
                     const apr_array_header_t *rules)
{
    int i;
    for (i = 0; i < rules->nelts; i++) {
        const bw_rule_t *r = ((const bw_rule_t **)rules->elts)[i];
        member_t *m;
        scan_key_t k;
        key_of(r, &k);
        if (apr_hash_get(pl->members, &k, sizeof(k)))
            continue;
        m = apr_palloc(p, sizeof(*m));
        m->bit = pl->nbits++;
        m->slot = slot_of(slots, r);
        apr_hash_set(pl->members, apr_pmemdup(p, &k, sizeof(k)), sizeof(k), m);
        add_pattern(p, pl, r, m->bit);
    }
    pl->nwords = pl->nbits ? (pl->nbits + 63) / 64 : 1;
    pl->nslots = slots->nelts;
    pl->slot_rule = (const bw_rule_t **)slots->elts;
}

static bw_plan_t *plan_new(apr_pool_t *p, int max_rules)
{
    bw_plan_t *pl = apr_pcalloc(p, sizeof(*pl));
    pl->members = apr_hash_make(p);
    pl->gated_bits = apr_pcalloc(p, sizeof(uint64_t) * (size_t)(max_rules / 64 + 1));
    pl->slots = apr_array_make(p, 8, sizeof(const bw_rule_t *));
    return pl;
}

/* Compile the matchers and combine what their bits mean. */
static void plan_compile(apr_pool_t *p, bw_plan_t *pl, const char *dir, apr_array_header_t *warnings)
{
    bw_matcher_t *ms[2];
    int k, w;
    ms[0] = pl->open;
    ms[1] = pl->gated;
    pl->exact = apr_pcalloc(p, sizeof(uint64_t) * (size_t)pl->nwords);
    for (k = 0; k < 2; k++) {
        const char *warning = NULL;
        const uint64_t *ex;
        if (!ms[k])
            continue;
        bw_matcher_compile(ms[k], dir, &warning);
        if (warning && warnings)
            *(const char **)apr_array_push(warnings) = warning;
        /* a bit is exact as the matcher that owns it says (the other one
         * calls a bit it has no pattern for exact, and never sets it) */
        ex = bw_matcher_exact(ms[k]);
        for (w = 0; w < bw_matcher_words(ms[k]) && w < pl->nwords; w++)
            pl->exact[w] |= ex[w] & (k ? pl->gated_bits[w] : ~pl->gated_bits[w]);
    }
}

/* ---- a program's plans --------------------------------------------------------- */

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


/* How many of rules pl holds. */
static int held(const bw_plan_t *pl, const apr_array_header_t *rules)
{
    int i, n = 0, bit, slot;
    for (i = 0; i < rules->nelts; i++)
        n += bw_plan_member(pl, ((const bw_rule_t **)rules->elts)[i], &bit, &slot);
    return n;
}

/* The plan for a source with these rules: one of this program's or a
 * parent's that holds them all; else one of this program's new plans that
 * holds most of them (ARGS, ARGS_NAMES and REQUEST_COOKIES have almost the
 * same rules in CRS: one database, compiled once, serves them all; the
 * bits a source does not need are never read); else a new one. */
static int plan_for(bw_program_t *prog, const apr_array_header_t *rules, int max_rules, int *fresh)
{
    const bw_program_t *anc;
    int i;
    *fresh = 0;
    for (i = 0; i < prog->plans->nelts; i++)
        if (held(((bw_plan_t **)prog->plans->elts)[i], rules) == rules->nelts)
            return i;
    for (anc = prog->parent; anc; anc = anc->parent)
        for (i = 0; anc->plans && i < anc->plans->nelts; i++) {
            bw_plan_t *pl = ((bw_plan_t **)anc->plans->elts)[i];
            if (held(pl, rules) == rules->nelts) {
                *(bw_plan_t **)apr_array_push(prog->plans) = pl;
                return prog->plans->nelts - 1;
            }
        }
    *fresh = 1;
    for (i = 0; i < prog->plans->nelts; i++) {
        bw_plan_t *pl = ((bw_plan_t **)prog->plans->elts)[i];
        if (!pl->exact && 4 * held(pl, rules) >= 3 * rules->nelts) {
            plan_add(prog->pool, pl, pl->slots, rules);
            return i;
        }
    }
    *(bw_plan_t **)apr_array_push(prog->plans) = plan_new(prog->pool, max_rules);
    plan_add(prog->pool, APR_ARRAY_IDX(prog->plans, prog->plans->nelts - 1, bw_plan_t *),
             APR_ARRAY_IDX(prog->plans, prog->plans->nelts - 1, bw_plan_t *)->slots, rules);
    return prog->plans->nelts - 1;
}

/* The live pattern rules of each source, in program order. */
static apr_array_header_t **rules_by_source(bw_program_t *prog)
{
    apr_array_header_t **by = apr_pcalloc(prog->pool, sizeof(*by) * (size_t)(prog->nsrc + 1));
    int ph, i, t;
    for (ph = 1; ph <= BW_PHASES; ph++) {
        const bw_code_t *code = &prog->code[ph];
        for (i = 0; i < code->n; i++) {
            const bw_crule_t *c;
            if (code->slots[i].kind != BW_SLOT_RUN)
                continue;
            for (c = code->slots[i].cr; c; c = c->next) {
                if (!bw_scannable(c->r))
                    continue;
                for (t = 0; t < c->r->targets->nelts; t++) {
                    int k = c->tsrc[t];
                    if (k < 0)
                        continue;
                    if (!by[k])
                        by[k] = apr_array_make(prog->pool, 16, sizeof(const bw_rule_t *));
                    *(const bw_rule_t **)apr_array_push(by[k]) = c->r;
                }
            }
        }
    }
    return by;
}

void bw_scan_build(bw_program_t *prog, apr_array_header_t *warnings)
{
    apr_array_header_t **by = rules_by_source(prog);
    const char *dir = NULL;
    int k, fresh = 0, first_new = -1, max_rules = 0;
    prog->plans = apr_array_make(prog->pool, 8, sizeof(bw_plan_t *));
    prog->src_plan = apr_palloc(prog->pool, sizeof(int) * (size_t)(prog->nsrc + 1));
    for (k = 0; k < prog->nsrc; k++)
        max_rules += by[k] ? by[k]->nelts : 0;
    for (k = 0; k < prog->nsrc; k++) {
        fresh = 0;
        prog->src_plan[k] = by[k] ? plan_for(prog, by[k], max_rules, &fresh) : -1;
        if (fresh && first_new < 0)
            first_new = prog->src_plan[k];
    }
    if (first_new < 0)
        return;
    dir = cache_dir(prog);
    for (k = first_new; k < prog->plans->nelts; k++) {
        bw_plan_t *pl = ((bw_plan_t **)prog->plans->elts)[k];
        if (!pl->exact)
            plan_compile(prog->pool, pl, dir, warnings);
    }
}
