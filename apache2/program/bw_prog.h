/*
 * Programs: the effective rule set and settings of one configuration
 * context over its parent, built once at start-up (or at a context's first
 * request) and then shared read-only by every transaction. The builder
 * compiles what the executor needs: transformation chains interned into a
 * trie, the @rx literal prefilter groups.
 */
#ifndef BW_PROG_H
#define BW_PROG_H

#include "lang/bw_lang.h"
#include "operators/bw_acmatch.h"

typedef struct bw_tfn_node_s bw_tfn_node_t;
typedef struct bw_pf_group_s bw_pf_group_t;

struct bw_program_s {
    apr_pool_t *pool;
    bw_settings_t settings;
    apr_array_header_t *phase[BW_PHASES + 1];  /* bw_rule_t* starters and markers */
    apr_hash_t *by_id;               /* long -> rule (starter) */
    int nrules;
    int pf_disabled;                 /* benchmarks and differential tests */
};

/* ---- transformation chains (bw_tfn_trie.c) ------------------------------- */

struct bw_tfn_node_s {
    const bw_tfn_node_t *parent;
    const bw_tfn_def_t *tfn;
    uint64_t hash;
};

/* Intern a chain into trie: one node per prefix, equal prefixes share
 * nodes. NULL for an empty chain. */
const bw_tfn_node_t *const *bw_tfn_intern(apr_pool_t *p, apr_hash_t *trie,
                                           const bw_tfn_def_t *const *tfns, int n);

/* ---- @rx literal prefilter (bw_rxfilter.c) -------------------------------- */

/* The @rx rules of one context that share a transformation chain and case
 * handling: one automaton, a rule is one bit. */
struct bw_pf_group_s {
    const bw_tfn_node_t *const *nodes;
    const bw_tfn_def_t *const *tfns;
    int ntfns;
    int nocase;
    bw_ac_t *ac;
    int nbits;
    apr_array_header_t *pending;  /* literals per bit until compiled */
};

/* Group the @rx rules of a context by transformation chain (once). */
void bw_rxfilter_prepare(bw_config_t *cfg);
/* Can the rule's values be scanned once per phase? */
int bw_rxfilter_targets_stable(const bw_rule_t *r);

#endif /* BW_PROG_H */
