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

/* ---- scan groups (bw_scan.c) -------------------------------------------- */

/* A rule's place in a scan group: the group's matcher and chain, its bit. */
typedef struct bw_scan_ref_s {
    bw_matcher_t *m;
    const bw_tfn_def_t *const *tfns;
    int ntfns;
    int bit;
} bw_scan_ref_t;

/* Group the pattern rules prog can still run (after folding) that its
 * parent has no bit for, and compile the groups' matchers. Warnings (a
 * database that could not be built) go to warnings (may be NULL). */
void bw_scan_build(bw_program_t *prog, apr_array_header_t *warnings);
/* The scan group and bit of a rule link, in prog or its parents; or NULL. */
const bw_scan_ref_t *bw_scan_lookup(const bw_program_t *prog, const bw_rule_t *r);

/* ---- compiled programs (bw_compile.c) ------------------------------------- */

typedef struct bw_crule_s bw_crule_t;

#define BW_CR_EXACT     0x01   /* a scan hit of this rule's bit is a match */
#define BW_CR_EXCL      0x02   /* the rule has !exclusion targets */
#define BW_CR_SCAN      0x04   /* values can be skipped by the rule's scan bit */

/* One rule link as the executor runs it. */
struct bw_crule_s {
    const bw_rule_t *r;
    const bw_crule_t *next;      /* next link of the chain, or NULL */
    int node;                    /* program chain node (-1: no transformation) */
    int unit, bit;               /* scan unit and bit, or -1 */
    unsigned flags;
    const int *tsrc;             /* per target: value source, or -1 (built on each use) */
};

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

/* A scan unit: one group's matcher and the chain its values go through. */
typedef struct bw_unit_s {
    const bw_matcher_t *m;
    int node;
    int nwords;
} bw_unit_t;

enum {
    BW_SLOT_RUN,      /* evaluate the chain */
    BW_SLOT_NOP,      /* folded: cannot match; go on with the next slot */
    BW_SLOT_APPLY,    /* folded: matches; apply fx and MATCHED_VAR, go on at next */
    BW_SLOT_DEAD      /* folded: no path reaches it */
};

/* A TX change a folded rule makes, computed at start-up. */
typedef struct bw_fold_fx_s {
    int unset;
    bw_str_t name, value;
} bw_fold_fx_t;

/* One starter of a phase. */
typedef struct bw_slot_s {
    const bw_crule_t *cr;
    int kind;                    /* BW_SLOT_* */
    int next_on_match;           /* where a matching chain goes on (skip / skipAfter) */
    /* folded slots (bw_fold.c) */
    int next;                    /* where execution goes on */
    int nfx;
    const bw_fold_fx_t *fx;      /* APPLY: TX changes, in order */
    int replay_mv;               /* APPLY: the chain matched: MATCHED_VAR is mv */
    int has_mv;
    bw_varval_t mv;
} bw_slot_t;

typedef struct bw_code_s {
    int n;
    bw_slot_t *slots;
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
    int nsrc, nnodes, nunits;
    bw_source_t *srcs;
    bw_pnode_t *nodes;
    bw_unit_t *units;
    bw_cc_t *cc;                     /* the compiler's tables, for bw_program_link_scan */
    apr_hash_t *scan_map;            /* the rules this program gave a scan bit (bw_scan.c) */
    /* folded (bw_fold.c): phase 1 starts at phase1_start with TX loaded
     * from tx_image (and MATCHED_VAR from start_mv's) */
    int phase1_start;
    const bw_coll_image_t *tx_image;
    const bw_slot_t *start_mv;
    int folded, dead;            /* decided and unreachable slots, all phases */
};

/* Compile prog's phases (after the rule lists are final). */
const char *bw_program_compile(bw_program_t *prog);
/* Give compiled rule links their scan units and bits (after bw_scan_build). */
void bw_program_link_scan(bw_program_t *prog);

/* Fold what the configuration decides (bw_fold.c); parent: the program
 * prog was built over, or NULL. */
void bw_program_fold(bw_program_t *prog, const bw_program_t *parent);

#endif /* BW_PROG_H */
