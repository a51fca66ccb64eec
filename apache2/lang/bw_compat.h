/*
 * What Bulwark supports differently from mod_security2, in one table
 * (bw_compat.c). docs/compatibility.md has one "supported differently" row
 * per entry, with the entry's text (tests/unit/test_compat.c checks both
 * directions), and `bulwark check` prints a warning at each use of an entry
 * in the configuration it reads.
 */
#ifndef BW_COMPAT_H
#define BW_COMPAT_H

#include "lang/bw_lang.h"

typedef enum {
    BW_COMPAT_DIRECTIVE,
    BW_COMPAT_VARIABLE,
    BW_COMPAT_OPERATOR,
    BW_COMPAT_TRANSFORMATION,
    BW_COMPAT_ACTION,
    BW_COMPAT__KINDS
} bw_compat_kind_t;

typedef struct bw_compat_s {
    bw_compat_kind_t kind;
    const char *name;   /* as the language spells it: "SecDebugLog", "PATH_INFO",
                           "rbl", "pause", "ctl:debugLogLevel" */
    const char *when;   /* a directive's first argument that makes the
                           difference ("On"); NULL: every use */
    const char *how;    /* the difference, one sentence, as the docs print it */
} bw_compat_t;

/* Every entry, ended by one with name NULL. */
extern const bw_compat_t bw_compat_table[];

/* "directive", "variable", ... : the word the docs' section and a warning use. */
const char *bw_compat_kind_name(bw_compat_kind_t kind);

/* The name as written in a rule and in the docs: "@rbl" for an operator,
 * the name itself otherwise. */
const char *bw_compat_display(apr_pool_t *p, const bw_compat_t *c);

/* The entry for (kind, name), names compared without regard to case; arg is
 * a directive's first argument (NULL otherwise). NULL when Bulwark does
 * what mod_security2 does. */
const bw_compat_t *bw_compat_find(bw_compat_kind_t kind, const char *name, size_t len,
                                  const char *arg);

/* Note, when cfg collects them, each use of an entry. A directive is noted
 * with its arguments; a rule (SecRule, SecAction, SecDefaultAction, a chain
 * link, the probe of SecRuleUpdateActionById) with its targets, operator and
 * the actions written on it; SecRuleUpdateTargetBy… with its targets. */
void bw_compat_note_directive(bw_config_t *cfg, const char *name, const char *args,
                              const char *file, int line);
void bw_compat_note_rule(bw_config_t *cfg, const bw_rule_t *r, const char *file, int line);
void bw_compat_note_targets(bw_config_t *cfg, const apr_array_header_t *targets,
                            const char *file, int line);

#endif /* BW_COMPAT_H */
