/*
 * Scan plans: which pattern operators look at a value source, and how a
 * value of that source is scanned once for all of them.
 *
 * For each value source (a variable and literal selector, bw_compile.c),
 * the pattern rules (@rx, the phrase operators @pm, @pmFromFile, @pmf, and
 * the string comparisons @contains, @beginsWith, @endsWith, @streq as the
 * regexes they amount to)
 * a program can still run once folded (bw_fold.c) and that target the
 * source form the source's plan; sources with the same rules share one
 * (ARGS, ARGS_NAMES, REQUEST_COOKIES… in CRS). In a plan each rule is one
 * bit, and the rules' transformation chains are the plan's slots. A value
 * is transformed through every slot (most chains leave most values as
 * they are), and each distinct string that comes out is scanned once, by
 * up to five matchers; a regex goes to the first of these it qualifies for:
 *   - gated: it has a byte gate that benign data rarely contains
 *     (prefilter/: every match contains one of a few bytes such as
 *     ( < ; ' =). Scanned only when the string has a byte of the plan's
 *     gate: most values have none, and most CRS regexes have such a gate.
 *     The check costs nothing: a value's bytes are known (run/bw_values.c).
 *   - bytes: its matches are decided by the string's bytes, known before
 *     any scan (matcher/matcher_decided.c): one atom matching one byte
 *     (921170's "." on every argument name, CRS PL3), at least n bytes of
 *     a class (942420-942432), n of them in a row (942460's \W{4}); or
 *     every string (".*"). Never scanned, and never a reason to scan: as
 *     open regexes they made every JSON name and most values scan the open
 *     database, and the counts were its costliest patterns (PL4 27.7 KB
 *     JSON: 11.99 M -> 10.94 M instructions). A string is read for them
 *     only when it has a byte of a class its slots need (src_slot_gate).
 *     One with a rare class is gated instead (the gated matcher decides it
 *     from the bytes the same way).
 *   - triggered: it has a literal set that benign data rarely contains
 *     (every match contains "select" or "union"…: SQL, PHP, Java and shell
 *     keywords). The literals go to the lits matcher as the trigger bit of
 *     the rule's slot, and the triggered matcher is scanned only when a
 *     string has a trigger of a slot that made it.
 *   - open: neither; scanned every time, except a string that has no byte
 *     of any open regex's gate where all of its slots' open regexes have
 *     one, however common (930100 needs one of "%.?0", 932150 a blank or
 *     one of ";|&<>": a JSON name or word has neither).
 * Before all of these, in a source of one value (REQUEST_METHOD,
 * REQUEST_LINE, a header by name), a regex that matches a small set of
 * whole values ("^(?:GET|HEAD)$", 905110's request lines, @streq) goes to
 * the bytes matcher, which compares the value with the set: no scan, where
 * its literals as triggers called for a triggered scan of every GET. Among
 * many values (argument names) the triggers stay: one joined literal scan
 * costs less than a comparison per value.
 * Gates and triggers are per slot: a chain that makes odd strings of most
 * values (base64Decode makes bytes of anything) calls for a scan only
 * with its own rules' bytes and literals.
 * Phrase operators (@pm, @pmFromFile) are literals themselves and go to the
 * lits matcher, exact: a pure literal database is the cheapest scan there is.
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
 * is too common to spare a scan: the regex tries a trigger. */
#define GATE_MAX_WEIGHT 200
/* The same for a trigger's literal set: heavier, the regex goes to the open
 * matcher. A trigger costs a literal scan that runs anyway, so it may be
 * commoner than a gate: the SQL patterns of CRS's higher paranoia levels
 * (942300, 942310, 942340…) weigh 290-360 and are far cheaper triggered than
 * open (bulwark bench json-1k at PL4: -5%). */
#define TRIGGER_MAX_WEIGHT 500
/* A triggered regex whose literal set weighs more than this is split into
 * its alternatives when it has some (add_regex): CRS's SQL patterns need
 * "or", "and" or "if" in one alternative and a quote or an operator in
 * the others, and as one regex every "orange" or "knife" in a JSON body
 * scanned the whole triggered database (PL4 27.7 KB JSON: 13.73 M -> 12.02
 * M instructions; 12.13 M splitting every triggered regex, 12.50 M from
 * 100 up, 13.13 M from 200 up). */
#define TRIGGER_SPLIT_WEIGHT 30
/* A source shares a plan of up to twice its own rules and this many more
 * (fits). */
#define PLAN_SLACK 8
/* A cached database no start-up has read for this long is removed. */
#define CACHE_MAX_AGE apr_time_from_sec(14 * 24 * 3600)

/* Where a bit went: matcher k; for a gated regex its gate, for an open
 * one its gate when it has one (any weight; all bytes when none), for a
 * triggered one its literals. */
typedef struct {
    int bit, slot, k, nocase;
    uint64_t gate[4];
    const apr_array_header_t *lits;
} placed_t;

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

/* The key of r's operator over the first n transformations of its chain. */
static void key_of(const bw_rule_t *r, int n, scan_key_t *k)
{
    memset(k, 0, sizeof(*k));
    /* a string comparison has no compiled form: its parameter is as shared */
    k->op_data = r->op.data ? r->op.data : (const void *)r->op.param;
    k->tfns = r->tfns;
    k->ntfns = n;
}

int bw_scannable(const bw_rule_t *r)
{
    unsigned f = r->op.def ? r->op.def->flags : 0;
    if (r->kind != BW_RULE_SECRULE || r->op_macro)
        return 0;
    if (r->op.def && r->op.def->scan_regex)
        return 1;
    return r->op.data && (f & (BW_OP_SCAN_REGEX | BW_OP_SCAN_PHRASES)) != 0;
}

/* The regex a matcher takes for r: @rx's own, or a string comparison's. */
static const char *regex_of(apr_pool_t *p, const bw_rule_t *r, size_t *len)
{
    const char *re = r->op.def->scan_regex ? r->op.def->scan_regex(&r->op, p) : r->op.param;
    *len = r->op.def->scan_regex ? strlen(re) : r->op.param_len;
    return re;
}

static int member(const bw_plan_t *pl, const bw_rule_t *r, int n, int *bit, int *slot)
{
    scan_key_t k;
    const member_t *m;
    key_of(r, n, &k);
    m = apr_hash_get(pl->members, &k, sizeof(k));
    if (!m)
        return 0;
    *bit = m->bit;
    *slot = m->slot;
    return 1;
}

int bw_plan_member(const bw_plan_t *pl, const bw_rule_t *r, int *bit, int *slot)
{
    return member(pl, r, r->ntfns, bit, slot);
}

int bw_plan_member_prefix(const bw_plan_t *pl, const bw_rule_t *r, int k, int *bit, int *slot)
{
    return k >= 0 && k < r->ntfns && member(pl, r, k, bit, slot);
}

/* Does pl hold r (with every prefix, for multiMatch)? */
static int holds(const bw_plan_t *pl, const bw_rule_t *r)
{
    int bit, slot, k;
    if (!bw_plan_member(pl, r, &bit, &slot))
        return 0;
    for (k = 0; r->multi_match && k < r->ntfns; k++)
        if (!member(pl, r, k, &bit, &slot))
            return 0;
    return 1;
}

/* ---- building a plan ----------------------------------------------------------- */

static int same_chain(const bw_tfn_def_t *const *a, int na, const bw_tfn_def_t *const *b, int nb)
{
    return na == nb && (!na || !memcmp(a, b, sizeof(*a) * (size_t)na));
}

static int slot_of(apr_array_header_t *slots, const bw_tfn_def_t *const *tfns, int n)
{
    int i;
    bw_chain_ref_t *c;
    for (i = 0; i < slots->nelts; i++) {
        const bw_chain_ref_t *o = &((const bw_chain_ref_t *)slots->elts)[i];
        if (same_chain(o->tfns, o->n, tfns, n))
            return i;
    }
    c = apr_array_push(slots);
    c->tfns = tfns;
    c->n = n;
    return slots->nelts - 1;
}

static bw_matcher_t *matcher(apr_pool_t *p, bw_plan_t *pl, int k, int bit, int slot)
{
    placed_t *pc = apr_array_push(pl->placed);
    memset(pc, 0, sizeof(*pc));
    pc->bit = bit;
    pc->slot = slot;
    pc->k = k;
    if (!pl->m[k]) {
        pl->m[k] = bw_matcher_create(p);
        if (k == BW_PM_BYTES)   /* where add_regex puts a source's sets */
            bw_matcher_compare_sets(pl->m[k]);
    }
    pl->own[k][bit / 64] |= (uint64_t)1 << (bit % 64);
    return pl->m[k];
}

/* Put regex re (bit, slot) into the matcher it qualifies for; split into
 * its alternatives when the whole would be open and top is set. */
static void add_regex(apr_pool_t *p, bw_plan_t *pl, const char *re, size_t len, int bit, int slot,
                      int top)
{
    apr_array_header_t *lits, *alts = NULL;
    uint64_t gate[4], cls[4];
    unsigned weight = 0;
    int nocase = 0, i, gated;
    placed_t *pc;
    /* a small set of whole values ("^(?:GET|HEAD)$", @streq) is compared
     * with a source's one value, never scanned, whatever its gate or
     * literals; among many values (argument names) its literals as
     * triggers cost less, and the triggered matcher compares it too */
    if (pl->one_value && bw_matcher_regex_set(p, re, len, cls)) {
        bw_matcher_add_regex_as(matcher(p, pl, BW_PM_BYTES, bit, slot), re, len, bit);
        pc = &APR_ARRAY_IDX(pl->placed, pl->placed->nelts - 1, placed_t);
        memcpy(pc->gate, cls, sizeof(cls));
        return;
    }
    gated = bw_prefilter_gate(p, re, len, 0, gate, &weight);
    /* (a byte pattern with a rare gate is decided by the gated matcher,
     * which reads the string's bytes as this one does: one gate less to
     * check per string) */
    if (gated && weight <= GATE_MAX_WEIGHT) {
        bw_matcher_add_regex_as(matcher(p, pl, BW_PM_GATED, bit, slot), re, len, bit);
        pc = &APR_ARRAY_IDX(pl->placed, pl->placed->nelts - 1, placed_t);
        memcpy(pc->gate, gate, sizeof(gate));
        return;
    }
    if (bw_matcher_regex_decided(p, re, len, cls)) {
        bw_matcher_add_regex_as(matcher(p, pl, BW_PM_BYTES, bit, slot), re, len, bit);
        pc = &APR_ARRAY_IDX(pl->placed, pl->placed->nelts - 1, placed_t);
        memcpy(pc->gate, cls, sizeof(cls));
        return;
    }
    if (bw_prefilter_trigger(p, re, len, &lits, &nocase, &weight) && weight <= TRIGGER_MAX_WEIGHT
        && !(top && weight > TRIGGER_SPLIT_WEIGHT && bw_prefilter_alternatives(p, re, len, &alts))) {
        bw_matcher_add_regex_as(matcher(p, pl, BW_PM_TRIGGERED, bit, slot), re, len, bit);
        pc = &APR_ARRAY_IDX(pl->placed, pl->placed->nelts - 1, placed_t);
        pc->lits = lits;
        pc->nocase = nocase;
        return;
    }
    /* an alternative that can be gated or triggered need not make the
     * whole regex open (942330's eight: a quote, an "@",
     * "information_schema"… and one anchored at the start), nor one with
     * common literals triggered (TRIGGER_SPLIT_WEIGHT): each goes where
     * it qualifies, with the same bit */
    if (top && (alts || bw_prefilter_alternatives(p, re, len, &alts))) {
        for (i = 0; i < alts->nelts; i++) {
            bw_str_t a = APR_ARRAY_IDX(alts, i, bw_str_t);
            add_regex(p, pl, a.data, a.len, bit, slot, 0);
        }
        return;
    }
    /* a gate too common to be worth a matcher of its own still spares the
     * open scan of a string that has none of its bytes (open_gate) */
    if (!gated)
        memset(gate, 0xff, sizeof(gate));
    bw_matcher_add_regex_as(matcher(p, pl, BW_PM_OPEN, bit, slot), re, len, bit);
    pc = &APR_ARRAY_IDX(pl->placed, pl->placed->nelts - 1, placed_t);
    memcpy(pc->gate, gate, sizeof(gate));
}

/* Put rule r (bit, slot) into the matcher it qualifies for. */
static void add_pattern(apr_pool_t *p, bw_plan_t *pl, const bw_rule_t *r, int bit, int slot)
{
    size_t len;
    const char *re;
    if (r->op.def->flags & BW_OP_SCAN_PHRASES) {
        bw_matcher_add_phrases_as(matcher(p, pl, BW_PM_LITS, bit, slot),
                                  (const bw_ac_t *)r->op.data, bit);
        return;
    }
    re = regex_of(p, r, &len);
    add_regex(p, pl, re, len, bit, slot, 1);
}

/* A bit for r's operator over the first n transformations of its chain,
 * unless pl has one. */
static void add_member(apr_pool_t *p, bw_plan_t *pl, const bw_rule_t *r, int n)
{
    member_t *m;
    scan_key_t k;
    key_of(r, n, &k);
    if (apr_hash_get(pl->members, &k, sizeof(k)))
        return;
    m = apr_palloc(p, sizeof(*m));
    m->bit = pl->nbits++;
    m->slot = slot_of(pl->slots, r->tfns, n);
    apr_hash_set(pl->members, apr_pmemdup(p, &k, sizeof(k)), sizeof(k), m);
    add_pattern(p, pl, r, m->bit, m->slot);
}

/* Add the rules pl does not hold yet (a plan is open until compiled). */
static void plan_add(apr_pool_t *p, bw_plan_t *pl, const apr_array_header_t *rules, int one)
{
    int i, k;
    pl->one_value = one;
    for (i = 0; i < rules->nelts; i++) {
        const bw_rule_t *r = ((const bw_rule_t **)rules->elts)[i];
        add_member(p, pl, r, r->ntfns);
        for (k = 0; r->multi_match && k < r->ntfns; k++)
            add_member(p, pl, r, k);
    }
    pl->nslots = pl->slots->nelts;
    pl->slot_chain = (const bw_chain_ref_t *)pl->slots->elts;
    pl->trigger_base = pl->nbits;
    pl->nwords = (pl->nbits + pl->nslots + 63) / 64;
}

static bw_plan_t *plan_new(apr_pool_t *p, int max_rules)
{
    bw_plan_t *pl = apr_pcalloc(p, sizeof(*pl));
    int k;
    pl->members = apr_hash_make(p);
    for (k = 0; k < BW_PM_N; k++)
        pl->own[k] = apr_pcalloc(p, sizeof(uint64_t) * (size_t)(max_rules / 32 + 2));
    pl->slots = apr_array_make(p, 8, sizeof(bw_chain_ref_t));
    pl->placed = apr_array_make(p, 16, sizeof(placed_t));
    return pl;
}

/* Per slot, what its rules need; the trigger literals, each with its
 * slot's trigger bit. */
static void plan_slots(apr_pool_t *p, bw_plan_t *pl)
{
    int i, j, w;
    pl->slot_need = apr_pcalloc(p, (size_t)pl->nslots + 1);
    pl->slot_gate = apr_pcalloc(p, sizeof(uint64_t) * 4 * (size_t)(pl->nslots + 1));
    pl->trigger_mask = apr_pcalloc(p, sizeof(uint64_t) * (size_t)pl->nwords);
    for (i = pl->trigger_base; i < pl->trigger_base + pl->nslots; i++)
        pl->trigger_mask[i / 64] |= (uint64_t)1 << (i % 64);
    for (i = 0; i < pl->placed->nelts; i++) {
        const placed_t *pc = &APR_ARRAY_IDX(pl->placed, i, placed_t);
        pl->slot_need[pc->slot] |= (unsigned char)(1u << pc->k);
        for (w = 0; pc->k == BW_PM_GATED && w < 4; w++)
            pl->slot_gate[4 * (size_t)pc->slot + (size_t)w] |= pc->gate[w];
        if (pc->k != BW_PM_TRIGGERED)
            continue;
        pl->slot_need[pc->slot] |= 1u << BW_PM_LITS;
        if (!pl->m[BW_PM_LITS])
            pl->m[BW_PM_LITS] = bw_matcher_create(p);
        for (j = 0; j < pc->lits->nelts; j++)
            bw_matcher_add_literal_as(pl->m[BW_PM_LITS], APR_ARRAY_IDX(pc->lits, j, bw_str_t),
                                      pc->nocase, pl->trigger_base + pc->slot);
    }
}

/* Compile the matchers and combine what their bits mean. */
static void plan_compile(apr_pool_t *p, bw_plan_t *pl, const char *dir, apr_array_header_t *warnings)
{
    int k, w;
    uint64_t *inexact = apr_pcalloc(p, sizeof(uint64_t) * (size_t)pl->nwords);
    pl->exact = apr_pcalloc(p, sizeof(uint64_t) * (size_t)pl->nwords);
    pl->line = apr_pcalloc(p, sizeof(uint64_t) * (size_t)pl->nwords);
    pl->all = apr_pcalloc(p, sizeof(uint64_t) * (size_t)pl->nwords);
    plan_slots(p, pl);
    for (k = 0; k < BW_PM_N; k++) {
        const char *warning = NULL;
        const uint64_t *ex, *ln, *al, *un;
        if (!pl->m[k])
            continue;
        bw_matcher_compile(pl->m[k], dir, &warning);
        if (bw_matcher_byte_patterns(pl->m[k]))
            pl->byte_patterns = 1;
        if (warning && warnings)
            *(const char **)apr_array_push(warnings) = warning;
        /* a bit is as the matcher that owns it says (another calls a bit
         * it has no pattern for exact, and never sets it); the trigger
         * bits of the literal matcher are its own too */
        ex = bw_matcher_exact(pl->m[k]);
        ln = bw_matcher_line(pl->m[k]);
        al = bw_matcher_always(pl->m[k]);
        un = bw_matcher_universal(pl->m[k]);
        for (w = 0; w < bw_matcher_words(pl->m[k]) && w < pl->nwords; w++) {
            uint64_t own = pl->own[k][w] | (k == BW_PM_LITS ? pl->trigger_mask[w] : 0);
            pl->exact[w] |= ex[w] & own;
            inexact[w] |= ~ex[w] & own;
            pl->line[w] |= ln[w] & own;
            pl->all[w] |= (al[w] | un[w]) & own;
        }
    }
    /* a bit split among matchers (a regex's alternatives) is exact only
     * where every one of them is */
    for (w = 0; w < pl->nwords; w++)
        pl->exact[w] &= ~inexact[w];
    for (w = 0; w < pl->nwords; w++) {
        pl->all_triggers |= (pl->all[w] & pl->trigger_mask[w]) != 0;
        pl->any_all |= pl->all[w] != 0;
    }
}

/* ---- a program's plans --------------------------------------------------------- */

/* Where compiled databases are kept across restarts: SecScanCacheDir, else
 * a folder in SecDataDir (a mod_security2 configuration has one, and the
 * server can write there), else nowhere ("Off"). Made when missing, for
 * the server's user only: a database read back is trusted. Databases no
 * start-up has used for CACHE_MAX_AGE are removed (a rule set edited many
 * times leaves one set of files per version). */
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


/* The bits rule r takes in a plan: one, and one per prefix of a
 * multiMatch rule's chain (add_member). */
static int bits_of(const bw_rule_t *r)
{
    return 1 + (r->multi_match ? r->ntfns : 0);
}

/* How many of rules pl holds. */
static int held(const bw_plan_t *pl, const apr_array_header_t *rules)
{
    int i, n = 0;
    for (i = 0; i < rules->nelts; i++)
        n += holds(pl, ((const bw_rule_t **)rules->elts)[i]);
    return n;
}

/* Whether pl is not much more than these rules need. A value is scanned
 * with every pattern of its plan's databases, needed or not: a source of a
 * few rules (REQUEST_BODY's at paranoia level 4, a header's) scanned with
 * a plan of many (ARGS') pays for all of them on each of its values, a
 * 1 KB form body ~150 K cycles where its own rules take a few. Counted in
 * bits, as the plan's members are (a multiMatch rule has one per prefix of
 * its chain too). */
static int fits(const bw_plan_t *pl, const apr_array_header_t *rules)
{
    unsigned need = 0;
    int i;
    for (i = 0; i < rules->nelts; i++)
        need += (unsigned)bits_of(((const bw_rule_t **)rules->elts)[i]);
    return apr_hash_count(pl->members) <= 2 * need + PLAN_SLACK;
}

/* The plan for a source with these rules: one of this program's that holds
 * them all and fits them, or a parent's that holds them all (a <Location>
 * compiles nothing); else one of this program's new plans that holds most
 * of them and would fit them (ARGS, ARGS_NAMES and REQUEST_COOKIES have
 * almost the same rules in CRS: one database, compiled once, serves them
 * all; the bits a source does not need are never read); else a new one. */
static int plan_for(bw_program_t *prog, const apr_array_header_t *rules, int max_rules, int one,
                    int *fresh)
{
    const bw_program_t *anc;
    int i;
    *fresh = 0;
    for (i = 0; i < prog->plans->nelts; i++) {
        const bw_plan_t *pl = ((bw_plan_t **)prog->plans->elts)[i];
        if (held(pl, rules) == rules->nelts && fits(pl, rules))
            return i;
    }
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
        if (!pl->exact && 4 * held(pl, rules) >= 3 * rules->nelts && fits(pl, rules)) {
            plan_add(prog->pool, pl, rules, one);
            return i;
        }
    }
    *(bw_plan_t **)apr_array_push(prog->plans) = plan_new(prog->pool, max_rules);
    plan_add(prog->pool, APR_ARRAY_IDX(prog->plans, prog->plans->nelts - 1, bw_plan_t *), rules,
             one);
    return prog->plans->nelts - 1;
}

/* Does source s yield one value (as a rule is written for it): a
 * variable that is not a collection, or one picked by a literal name (a
 * header, a cookie), not an XPath's? */
static int one_value(const bw_source_t *s)
{
    unsigned f = s->var->flags;
    return !(f & BW_VAR_COLLECTION) || (s->sel.len && !(f & BW_VAR_SELECTOR_REQ));
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

/* One placement of a bit of a rule of source k: its slot needs the
 * matcher (and the literal one, for a triggered regex's triggers) and its
 * gate (a gated or an open regex's, a decided one's class: src_slot_gate). */
static void need_placed(bw_program_t *prog, int k, const placed_t *pc, int slot)
{
    int w;
    prog->src_slot_need[k][slot] |= (unsigned char)(1u << pc->k);
    if (pc->k == BW_PM_TRIGGERED)
        prog->src_slot_need[k][slot] |= 1u << BW_PM_LITS;
    for (w = 0; ((1u << pc->k) & BW_PM_GATES) && w < 4; w++)
        prog->src_slot_gate[k][BW_SLOT_GATE(slot, pc->k) + (size_t)w] |= pc->gate[w];
}

/* A bit of a rule of source k: what each of its placements needs (a regex
 * split into alternatives was placed once per alternative). */
static void need_bit(bw_program_t *prog, int k, const bw_plan_t *pl, int bit, int slot)
{
    int i;
    prog->src_want[k][bit / 64] |= (uint64_t)1 << (bit % 64);
    for (i = 0; i < pl->placed->nelts; i++)
        if (APR_ARRAY_IDX(pl->placed, i, placed_t).bit == bit)
            need_placed(prog, k, &APR_ARRAY_IDX(pl->placed, i, placed_t), slot);
}

/* Per source, the slots of its plan its own rules use (bw_prog.h). */
static void source_needs(bw_program_t *prog, apr_array_header_t **by)
{
    int k, i, n;
    prog->src_slot_need = apr_pcalloc(prog->pool, sizeof(unsigned char *) * (size_t)(prog->nsrc + 1));
    prog->src_slot_gate = apr_pcalloc(prog->pool, sizeof(uint64_t *) * (size_t)(prog->nsrc + 1));
    prog->src_slots = apr_pcalloc(prog->pool, sizeof(int *) * (size_t)(prog->nsrc + 1));
    prog->src_nslots = apr_pcalloc(prog->pool, sizeof(int) * (size_t)(prog->nsrc + 1));
    prog->src_want = apr_pcalloc(prog->pool, sizeof(uint64_t *) * (size_t)(prog->nsrc + 1));
    for (k = 0; k < prog->nsrc; k++) {
        const bw_plan_t *pl;
        if (prog->src_plan[k] < 0)
            continue;
        pl = ((const bw_plan_t **)prog->plans->elts)[prog->src_plan[k]];
        prog->src_slot_need[k] = apr_pcalloc(prog->pool, (size_t)pl->nslots + 1);
        prog->src_slot_gate[k] = apr_pcalloc(prog->pool, sizeof(uint64_t) * BW_SLOT_GATE(pl->nslots + 1, 0));
        prog->src_want[k] = apr_pcalloc(prog->pool, sizeof(uint64_t) * (size_t)pl->nwords);
        for (i = 0; by[k] && i < by[k]->nelts; i++) {
            const bw_rule_t *r = ((const bw_rule_t **)by[k]->elts)[i];
            int bit, slot;
            if (bw_plan_member(pl, r, &bit, &slot))
                need_bit(prog, k, pl, bit, slot);
            for (n = 0; r->multi_match && n < r->ntfns; n++)
                if (bw_plan_member_prefix(pl, r, n, &bit, &slot))
                    need_bit(prog, k, pl, bit, slot);
        }
        prog->src_slots[k] = apr_palloc(prog->pool, sizeof(int) * (size_t)(pl->nslots + 1));
        for (i = 0; i < pl->nslots; i++)
            if (prog->src_slot_need[k][i])
                prog->src_slots[k][prog->src_nslots[k]++] = i;
    }
}

void bw_scan_build(bw_program_t *prog, apr_array_header_t *warnings)
{
    apr_array_header_t **by = rules_by_source(prog);
    const char *dir = NULL;
    int k, i, fresh = 0, first_new = -1, max_rules = 0;
    prog->plans = apr_array_make(prog->pool, 8, sizeof(bw_plan_t *));
    prog->src_plan = apr_palloc(prog->pool, sizeof(int) * (size_t)(prog->nsrc + 1));
    for (k = 0; k < prog->nsrc; k++)
        for (i = 0; by[k] && i < by[k]->nelts; i++)
            max_rules += bits_of(((const bw_rule_t **)by[k]->elts)[i]);
    for (k = 0; k < prog->nsrc; k++) {
        fresh = 0;
        prog->src_plan[k] = by[k] ? plan_for(prog, by[k], max_rules, one_value(&prog->srcs[k]),
                                             &fresh)
                                  : -1;
        if (fresh && first_new < 0)
            first_new = prog->src_plan[k];
    }
    if (first_new >= 0) {
        dir = cache_dir(prog);
        for (k = first_new; k < prog->plans->nelts; k++) {
            bw_plan_t *pl = ((bw_plan_t **)prog->plans->elts)[k];
            if (!pl->exact)
                plan_compile(prog->pool, pl, dir, warnings);
        }
        bw_matcher_cache_prune(prog->pool, dir, CACHE_MAX_AGE);
    }
    source_needs(prog, by);
}
