/*
 * Programs: the effective rule set and settings of one configuration
 * context over its parent, built once (at start-up, or at a <Location>'s
 * first request) and then shared read-only by every transaction.
 *
 * Building compiles everything the executor (run/) needs so that a
 * transaction does no lookup by name and no work per rule that could be
 * done per value:
 *  - scan groups (bw_scan.c): per configuration context, the pattern
 *    operators of the rules that share a transformation chain, in one
 *    multi-pattern matcher each; a rule holds (group, bit);
 *  - per program (bw_compile.c): every rule link compiled (bw_crule_t):
 *    its chain as a node of the program's chain trie, its targets as value
 *    sources (a variable and literal selector whose values a phase builds
 *    once), its scan group as a unit index; every phase as an array of
 *    slots with skip and skipAfter resolved to slot indices;
 *  - folding (bw_fold.c): what the configuration alone decides.
 */
#ifndef BW_PROG_H
#define BW_PROG_H

#include "lang/bw_lang.h"
#include "matcher/bw_matcher.h"
#include "base/bw_coll.h"

/* ---- scan plans (bw_scan.c) --------------------------------------------- */

/* The pattern rules that look at a value source, scanned together: a rule
 * is a bit, its transformation chain a slot; each distinct string the
 * slots make of a value is scanned by the plan's matchers (bw_scan.c says
 * which rule goes to which), each only when one of the slots that made the
 * string has a pattern there:
 *   open       regexes without a cheap trigger: always;
 *   gated      regexes with a rare byte gate: when the string has a byte
 *              of the gate of one of those slots;
 *   lits       phrase operators, and the trigger literals of the
 *              triggered regexes (bit trigger_base + slot): always;
 *   triggered  regexes with a rare literal set: when lits reported the
 *              trigger bit of one of those slots;
 *   bytes      regexes the string's bytes decide (".", "\w", ".*"): never
 *              scanned, their matcher only reads the bytes. */
enum { BW_PM_OPEN, BW_PM_GATED, BW_PM_BYTES, BW_PM_LITS, BW_PM_TRIGGERED, BW_PM_N };
/* The matchers a string needs a byte of a gate for (bw_program_t.src_slot_gate):
 * the first BW_PM_NGATES. */
#define BW_PM_NGATES 3
#define BW_PM_GATES ((1u << BW_PM_NGATES) - 1)
#define BW_SLOT_GATE(slot, k) (4 * ((size_t)(slot) * BW_PM_NGATES + (size_t)(k)))

/* A transformation chain: the first n of tfns. */
typedef struct {
    const bw_tfn_def_t *const *tfns;
    int n;
} bw_chain_ref_t;

typedef struct bw_plan_s {
    int nbits, nwords, nslots;     /* nwords also holds the trigger bits */
    const bw_chain_ref_t *slot_chain; /* per slot: its transformation chain */
    apr_array_header_t *slots;     /* the same, while the plan is built */
    bw_matcher_t *m[BW_PM_N];      /* each NULL when it has no pattern */
    uint64_t *own[BW_PM_N];        /* the bits each matcher decides */
    unsigned char *slot_need;      /* per slot: 1 << BW_PM_… of its matchers */
    uint64_t *slot_gate;           /* per slot: 4 words, its gated regexes' bytes */
    int trigger_base;              /* nbits: the first slot's trigger bit */
    uint64_t *trigger_mask;        /* nwords: every slot's trigger bit */
    apr_array_header_t *placed;    /* while built: where each bit went */
    int one_value;                 /* while built: the source adding rules yields one
                                    * value (REQUEST_METHOD, a header by name) */
    uint64_t *exact;               /* bits whose hit is a match */
    uint64_t *line;                /* of those, bits whose hit in a string
                                    * with a newline is only maybe */
    uint64_t *all;                 /* bits every string hits: regexes that
                                    * match anything (exact) or that no
                                    * matcher could take (maybe) */
    int all_triggers;              /* some of them are trigger bits */
    int any_all;                   /* all has a bit set */
    int byte_patterns;             /* a matcher has regexes a string's bytes decide:
                                    * it is handed the strings' bytes */
    apr_hash_t *members;           /* rule -> bit and slot */
} bw_plan_t;

/* Can rule r join a plan (a pattern operator with a constant parameter)? */
int bw_scannable(const bw_rule_t *r);
/* r's bit and slot in pl: 1, or 0 when r is not in pl. A multiMatch rule
 * has one more bit per prefix of its chain (the operator sees the value
 * after each step): bw_plan_member_prefix gives the one of the first k
 * transformations (0 <= k < r->ntfns). */
int bw_plan_member(const bw_plan_t *pl, const bw_rule_t *r, int *bit, int *slot);
int bw_plan_member_prefix(const bw_plan_t *pl, const bw_rule_t *r, int k, int *bit, int *slot);
/* Give each value source of prog its plan (new ones compiled; a parent's
 * reused when it holds every rule needed). Warnings (a database that could
 * not be built) go to warnings (may be NULL). */
void bw_scan_build(bw_program_t *prog, apr_array_header_t *warnings);

/* ---- compiled programs (bw_compile.c) ------------------------------------- */

typedef struct bw_crule_s bw_crule_t;

#define BW_CR_EXCL      0x02   /* the rule has !exclusion targets */
#define BW_CR_SCAN      0x04   /* values can be skipped by the scan (per target: tscan) */
#define BW_CR_SCAN_NOT  0x08   /* a negated operator the scan decides where its hit is
                                * exact (the operator matches: the rule does not) */
#define BW_CR_OTHER     0x10   /* a target without a value source (built on each use) */
#define BW_CR_ACTION    0x20   /* a SecAction: no targets, one empty value */
#define BW_CR_MULTI     0x40   /* multiMatch */
#define BW_CR_OP_MACRO  0x80   /* the operator's parameter has %{…}: compiled per run */
#define BW_CR_NEGATED   0x100  /* !@operator */
#define BW_CR_CAPTURE   0x200  /* capture */
#define BW_CR_QUIET     0x400  /* the chain's starter has nolog */
#define BW_CR_NO_MSG    0x800  /* the operator's message is never logged: QUIET, a
                                * link before the last, or NEGATED */

/* A target's place in its source's plan. */
typedef struct bw_tscan_s {
    int bit, slot;               /* bit -1: no plan covers this target */
    int exact;                   /* a hit of the bit is a match */
    int line;                    /* ... unless the string has a newline */
    const struct bw_tscan_s *prefix; /* multiMatch: bit and slot of each
                                  * prefix of the chain (r->ntfns of them) */
} bw_tscan_t;

/* One rule link as the executor runs it. What the executor reads of a
 * link that does not match is here, not in the rule: the fields first,
 * then, in the same block, tscan and tsrc; and the program's links are
 * laid out one after the other in the order the phases run them
 * (bw_compile.c, link_block), so a transaction's cold caches fetch the
 * links it reaches in a few consecutive lines each. */
struct bw_crule_s {
    const bw_rule_t *r;
    const bw_crule_t *next;      /* next link of the chain, or NULL */
    const bw_target_t *targets;  /* r's targets (nt of them) */
    const bw_tscan_t *tscan;     /* per target: its bit in its source's plan */
    const int *tsrc;             /* per target: value source, or -1 (built on each use) */
    int nt;
    int node;                    /* program chain node (-1: no transformation) */
    unsigned flags;              /* BW_CR_* */
    int gate_kind;               /* the operator's byte gate (BW_OP_GATE_…), with the scan */
    bw_op_t op;                  /* r->op, copied (without BW_CR_OP_MACRO) */
    uint64_t gate[4];
    uint64_t excl_vars[4];       /* BW_CR_EXCL: the ids of the variables the
                                  * !targets name, a bit each */
};

/* A slot a source's scan needs (bw_program_t.src_sslots): what the
 * scan's grouping reads of it, in one entry, the gates shared. */
typedef struct bw_sslot_s {
    int slot;                    /* in the source's plan */
    int local;                   /* the source's number of its chain node (-1: raw) */
    unsigned need;               /* 1 << BW_PM_… */
    uint32_t gate[BW_PM_NGATES]; /* per gated matcher it needs: gates + 4 * gate[m] */
} bw_sslot_t;

/* A chain node as a source's scan computes it: its number in the program
 * and the source's own numbers of it and of its parent (-1: the raw
 * values), and its transformation. */
typedef struct bw_snode_s {
    int node, local, plocal;
    const bw_tfn_def_t *tfn;
} bw_snode_t;

/* A value source: a variable with a literal selector (or none) whose
 * values cannot change inside a phase. */
typedef struct bw_source_s {
    const bw_var_def_t *var;
    bw_str_t sel;
} bw_source_t;

/* A node of the program's chain trie: its last transformation and the
 * prefix before it. */
typedef struct bw_pnode_s {
    int parent;                  /* -1 for the first transformation */
    const bw_tfn_def_t *tfn;
} bw_pnode_t;

enum {
    BW_SLOT_RUN,      /* evaluate the chain */
    BW_SLOT_NOP,      /* folded: cannot match; go on with the next slot */
    BW_SLOT_APPLY,    /* folded: matches; apply fx and MATCHED_VAR, go on at next */
    BW_SLOT_DEAD      /* folded: no path reaches it */
};

/* A TX change a folded rule makes, computed at start-up. */
typedef struct bw_fold_fx_s {
    int unset;
    bw_key_t key;                /* the name, hashed */
    bw_str_t value;
} bw_fold_fx_t;

/* One starter of a phase. */
/* One target of a slot's first link as the scan sees it: the link can
 * match through this target only if the source's scan set this bit in
 * this slot of its plan for some value. */
typedef struct bw_skipref_s {
    int src, slot, word;
    uint64_t mask;
} bw_skipref_t;

typedef struct bw_slot_s {
    const bw_crule_t *cr;
    int kind;                    /* BW_SLOT_* */
    /* RUN slots whose first link only reads scanned sources: the bits that
     * decide, without touching the rule, that it cannot match (nskip 0:
     * evaluate) */
    int nskip;
    const bw_skipref_t *skip;
    int next_on_match;           /* where a matching chain goes on (skip / skipAfter) */
    /* folded slots (bw_fold.c) */
    int next;                    /* where execution goes on */
    int nfx;
    const bw_fold_fx_t *fx;      /* APPLY: TX changes, in order */
    int replay_mv;               /* APPLY: the chain matched: MATCHED_VAR is mv */
    int has_mv;
    bw_varval_t mv;
} bw_slot_t;

/* TX changes of a folded slot (nfx of them), in order, into c (the
 * program's strings are kept as they are: they outlive every
 * transaction). */
static inline void bw_fold_fx_apply(apr_pool_t *p, bw_coll_t *c, const bw_fold_fx_t *fx, int nfx)
{
    int k;
    for (k = 0; k < nfx; k++) {
        if (fx[k].unset)
            bw_coll_remove(c, &fx[k].key);
        else
            bw_coll_put(p, c, &fx[k].key, fx[k].value, BW_COLL_KEEP_NAME | BW_COLL_KEEP_VALUE);
    }
}

/* An APPLY slot's TX changes, in order, into c. */
static inline void bw_slot_apply_fx(apr_pool_t *p, bw_coll_t *c, const bw_slot_t *s)
{
    bw_fold_fx_apply(p, c, s->fx, s->nfx);
}

/* What the executor reads of an APPLY slot, one line; equal ones are one
 * entry (bw_compile.c, build_steps): CRS's paranoia-level gates, which
 * match below their level, change nothing and leave one of a few
 * MATCHED_VARs, so a phase's gates share a few entries. */
typedef struct bw_apply_s {
    const bw_fold_fx_t *fx;
    int nfx;
    uint8_t replay_mv;
    uint8_t has_mv;
    bw_varval_t mv;
} bw_apply_t;

/* The executor's walk of a phase: one small entry per slot (built last,
 * bw_compile.c), so that passing the rules the folding decided or the scan
 * rules out (most of them in CRS) reads a step and its skip refs, not the
 * slot, its rule and its targets. */
typedef struct bw_skip_s {
    uint32_t src;                /* a source of the slot's first link */
    uint32_t off;                /* a word of its any[] (plan slot * nwords + word) */
    uint64_t mask;               /* the bit there */
} bw_skip_t;

typedef struct bw_step_s {
    uint8_t kind;                /* the slot's BW_SLOT_* */
    uint8_t pad;
    uint16_t nskip;              /* RUN: how many skip refs, at skips[skip] */
    uint32_t skip;
    int32_t next;                /* NOP, APPLY: the slot's next; RUN: its next_on_match */
    uint32_t link;               /* RUN: the slot's chain, at prog->links + link;
                                  * APPLY: its entry in applies (neither reads the
                                  * slot: one line fewer per step passed) */
} bw_step_t;

typedef struct bw_code_s {
    int n;
    bw_slot_t *slots;
    bw_step_t *steps;            /* n + 1 entries */
    bw_skip_t *skips;            /* the steps' skip refs, in slot order */
    const bw_apply_t *applies;   /* the APPLY steps' entries, equal ones shared */
} bw_code_t;

typedef struct bw_cc_s bw_cc_t;

struct bw_program_s {
    apr_pool_t *pool;
    const bw_program_t *parent;
    bw_settings_t settings;
    unsigned flags;                  /* BW_PROG_NO_SCAN, BW_PROG_NO_FOLD */
    apr_array_header_t *phase[BW_PHASES + 1];  /* bw_rule_t* starters and markers */
    apr_hash_t *by_id;               /* long -> rule (starter) */
    int nrules;
    /* compiled (bw_compile.c) */
    bw_code_t code[BW_PHASES + 1];
    const char *links;           /* every rule link, in one block (bw_compile.c) */
    int nsrc, nnodes;
    bw_source_t *srcs;
    bw_pnode_t *nodes;
    /* per source: the chain nodes its values go through (a rule's chain on
     * it, a slot of its plan it needs, and their prefixes) numbered from 0
     * (src_local[k][node], -1 for a node it never needs), and how many */
    int **src_local;
    int *src_nlocal;
    /* per source with a plan: the nodes its scan's slots need, each after
     * its parent, ended by node -1 (computed in one pass before the scan) */
    const bw_snode_t **src_scan_nodes;
    /* per node: the other nodes with the same transformation, ended by -1
     * (NULL: none). Chains that differ before a transformation often hand
     * it the same string (a step that changed nothing passes its input
     * on): a value's result at one of them is the result at the others. */
    const int **tfn_peers;
    bw_cc_t *cc;                     /* the compiler's tables, for bw_program_link_scan */
    /* scan plans (bw_scan.c): per source its plan (index in plans, or -1),
     * per plan the program node of each slot */
    apr_array_header_t *plans;       /* bw_plan_t* */
    int *src_plan;
    int **plan_nodes;
    /* per source with a plan: per slot of the plan, what the source's own
     * rules there need (1 << BW_PM_…, 0: the slot is not scanned for this
     * source): a plan shared with a source that has more rules is scanned
     * only as far as this one needs; and per slot and matcher the gate of
     * those rules' patterns there (4 words at BW_SLOT_GATE(slot, k)): a
     * string with no byte of it needs no scan by that matcher. The gated
     * regexes' gates; the open ones' (all bytes where one has none); the
     * classes of those the bytes decide. */
    unsigned char **src_slot_need;
    uint64_t **src_slot_gate;
    /* the same, as the scan reads it: per source, its src_nslots slots in
     * order, each with its need, the source's number of its chain node and
     * its gates as indices into gates (4 words each, equal ones shared) */
    const struct bw_sslot_s **src_sslots;
    const uint64_t *gates;
    int **src_slots;                 /* per source: the slots it needs (need != 0) */
    int *src_nslots;
    uint64_t **src_want;             /* per source: the plan's bits its rules read
                                      * (nwords; bw_matcher_buf_t.want) */
    /* folded (bw_fold.c): phase 1 starts at phase1_start with TX loaded
     * from tx_image (and MATCHED_VAR from start_mv's). The image also
     * holds the TX changes of the APPLY slots from phase1_start to
     * image_end, past rules that neither read nor write TX: there they
     * only set MATCHED_VAR. image_path: every APPLY slot whose changes
     * the image holds, in order (to rebuild TX if one of those rules
     * adds TX:MSC_PCRE_LIMITS_EXCEEDED after all). */
    int phase1_start;
    int image_end;
    const int *image_path;
    int image_npath;
    const bw_coll_image_t *tx_image;
    const bw_slot_t *start_mv;
    int folded, dead;            /* decided and unreachable slots, all phases */
    bw_key_t capture_keys[10];   /* TX:0 .. TX:9, hashed once (captures are set often) */
    /* no link reads the request body's arguments but by counting them all
     * (&ARGS, &ARGS_POST): a JSON body's are counted, not made */
    int body_args_counted;
};

/* Compile prog's phases (after the rule lists are final). */
const char *bw_program_compile(bw_program_t *prog);
/* Give compiled rule links their bits in their sources' plans (after
 * bw_scan_build). */
void bw_program_link_scan(bw_program_t *prog);

/* Fold what the configuration decides (bw_fold.c); parent: the program
 * prog was built over, or NULL. */
void bw_program_fold(bw_program_t *prog, const bw_program_t *parent);

#endif /* BW_PROG_H */
