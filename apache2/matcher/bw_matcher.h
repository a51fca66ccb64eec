/*
 * The multi-pattern matcher: every pattern operator of a group of rules
 * (@rx and the phrase operators @pm, @pmFromFile, @pmf, with a constant
 * parameter) scanned in one pass over a value, instead of one operator run
 * per rule. A pattern is one bit; a scan sets the bits of the
 * patterns that may match.
 *
 * The invariant, shared with the literal prefilter: a clear bit means the
 * pattern cannot match the value. A set bit means "maybe", unless the bit
 * is in the exact set, where it means "matches" (the operator still runs
 * when the rule wants captures or a message). Bits in the always set are
 * patterns the matcher cannot decide; they are set after every scan.
 *
 * Two implementations, chosen by the build as a whole file:
 *  - matcher_hs.c: Vectorscan (or Hyperscan). Regexes Vectorscan compiles
 *    exactly are exact, except where its semantics differ from PCRE2's as
 *    @rx compiles (a '$' that would match before a final newline);
 *    regexes it can only approximate join in prefilter mode (maybe);
 *    the rest are always. Phrases are exact. Compiled databases
 *    can be kept in a cache directory across restarts.
 *  - matcher_ac.c: the literal prefilter (apache2/prefilter) and
 *    Aho-Corasick, for platforms without Vectorscan.
 *
 * Life: create, add patterns, compile once (start-up), then scan from any
 * number of threads; a scan allocates nothing.
 */
#ifndef BW_MATCHER_H
#define BW_MATCHER_H

#include "base/bw_types.h"
#include "operators/bw_acmatch.h"

typedef struct bw_matcher_s bw_matcher_t;

bw_matcher_t *bw_matcher_create(apr_pool_t *pool);

/* Add one pattern; each returns its bit. A regex (PCRE2 syntax, compiled
 * as @rx compiles: DOTALL, DOLLAR_ENDONLY); the phrases of an automaton,
 * any of which occurring anywhere is a match, with the automaton's case
 * folding (@pm). */
int bw_matcher_add_regex(bw_matcher_t *m, const char *re, size_t len);
int bw_matcher_add_phrases(bw_matcher_t *m, const bw_ac_t *phrases);
/* The same with the bit chosen by the caller (several matchers can share
 * one bit numbering; a pattern may share a bit with others: the bit is as
 * weak as its weakest pattern). */
int bw_matcher_add_regex_as(bw_matcher_t *m, const char *re, size_t len, int bit);
int bw_matcher_add_phrases_as(bw_matcher_t *m, const bw_ac_t *phrases, int bit);
/* One literal (ASCII case-insensitive when nocase) with the caller's bit:
 * exact, as a phrase. */
int bw_matcher_add_literal_as(bw_matcher_t *m, bw_str_t lit, int nocase, int bit);

/* Compile. cache_dir (may be NULL) keeps compiled databases across
 * restarts. Never fails the configuration: what cannot be compiled is put
 * in the always set (the operator runs), and a warning goes to *warning
 * (NULL when all is well). */
void bw_matcher_compile(bw_matcher_t *m, const char *cache_dir, const char **warning);
/* Remove the databases of cache_dir that no start-up has used for
 * max_age (a database read from the cache counts as used), and temporary
 * files left by a writer that died. At most once an hour per directory
 * and process. */
void bw_matcher_cache_prune(apr_pool_t *pool, const char *cache_dir, apr_interval_time_t max_age);

int bw_matcher_bits(const bw_matcher_t *m);
/* How many of its regexes a value's bytes decide (one atom matching one
 * byte: ".", "\w", "[^;]"…): bw_matcher_scan_many reads the values' bytes
 * for them when given. */
int bw_matcher_byte_patterns(const bw_matcher_t *m);
/* Would a matcher decide regex re without a scan: does it match every
 * value (bw_matcher_universal), or do a value's bytes decide it (a byte
 * pattern, a count or a run of a class: matcher_decided.c)? The answer
 * bw_matcher_add_regex_as acts on; gate: the bytes a value needs one of
 * to be read for it (the class; none for a universal regex, whose bit is
 * always set). */
int bw_matcher_regex_decided(apr_pool_t *pool, const char *re, size_t len, uint64_t gate[4]);
/* Is regex re a small finite set of whole values ("^(?:GET|HEAD)$",
 * @streq), which a comparison decides in a matcher that compares sets?
 * gate: the bytes one of which each of its strings starts with. */
int bw_matcher_regex_set(apr_pool_t *pool, const char *re, size_t len, uint64_t gate[4]);
/* Regexes added to m from now on that are such sets are compared with
 * each value, not scanned: where a value is read anyway and would
 * otherwise cost a scan of its own (a source of one value), not where
 * many values share one scan. */
void bw_matcher_compare_sets(bw_matcher_t *m);
int bw_matcher_words(const bw_matcher_t *m);      /* uint64_t words per bit vector */
const uint64_t *bw_matcher_exact(const bw_matcher_t *m);
const uint64_t *bw_matcher_always(const bw_matcher_t *m);

/* Bits whose hit is exact only in a value with neither a newline nor the
 * byte BW_MATCHER_SEP: regexes with a ^ or $ anchor (see
 * bw_matcher_scan_many). */
#define BW_MATCHER_SEP 0xff
const uint64_t *bw_matcher_line(const bw_matcher_t *m);
/* Bits of regexes that match every value (^.*$, .*): set by every scan,
 * exact, and never scanned for. */
const uint64_t *bw_matcher_universal(const bw_matcher_t *m);

/* Scan one value: set in hits (bw_matcher_words() words, not cleared
 * here) the bits that may match, the always and universal sets included.
 * Returns 1; or 0 when the value could not be scanned: then every bit is
 * set and none of them is exact. */
int bw_matcher_scan(const bw_matcher_t *m, bw_str_t value, uint64_t *hits);

/* Scan many values at once, as bw_matcher_scan scans each. Scanning has a
 * fixed cost per call that most values (a few bytes each) do not repay,
 * so the values are joined, BW_MATCHER_SEP between two, and scanned in
 * one call, each regex's ^ and $ also matching that byte (which is
 * neither space nor word, so \b and \s see it as they see the ends of a
 * value): every match a value has alone is then a match in the joined
 * text, ending inside that value. A call that finds nothing clears every
 * value at once; a match stops the call, and the value it ended in is
 * scanned alone (so its bits are what bw_matcher_scan gives) while the
 * values before and after it are joined and scanned again. A matcher of
 * phrases only needs no second look: every occurrence is reported, and a
 * phrase lies inside the value it ends in. The few regexes whose meaning
 * depends on where the whole text starts or ends (\A, \z, \Z, \G, an
 * inline (?m)), and those that would match across the separator between
 * common values where neither value has a match, are scanned value by
 * value. When matches are so many that this costs more than a few passes
 * over the joined text, the rest is scanned value by value.
 *
 * present (NULL: unknown) gives each value's bytes, 256 bits in 4 words
 * (present[i] NULL: unknown), from which the regexes of one byte-class
 * atom (bw_matcher_byte_patterns) are decided; unknown bytes are read
 * from the value.
 *
 * For each value that has a hit, hit(ctx, i, bits) is called with the
 * bits to add to its hits (maybe more than once for one value); the
 * always and universal sets are not included (they are the same for
 * every value). Returns 1, or 0 when some value could not be scanned
 * (hit() then had every bit for it, none exact). buf is scratch memory the
 * caller keeps (zeroed before first use) and pool where it grows; its
 * `want`, when set, holds the bits the caller will read: a pattern decided
 * from the values' bytes whose bit is not among them may be skipped (a
 * count or a run is a pass over the value). */
typedef struct bw_matcher_buf_s {
    char *data;
    size_t cap;
    size_t *off;
    int offcap;
    uint64_t *bits;
    int bitscap;
    int *stack;
    int stackcap;
    unsigned long calls;            /* scans run (for bulwark bench) */
    const uint64_t *want;           /* NULL: every bit */
    void *md;                       /* PCRE2 match data of a lone regex's runs */
} bw_matcher_buf_t;
typedef void (*bw_matcher_hit_fn)(void *ctx, int i, const uint64_t *bits);
int bw_matcher_scan_many(const bw_matcher_t *m, const bw_str_t *values,
                         const uint64_t *const *present, int n, apr_pool_t *pool,
                         bw_matcher_buf_t *buf, bw_matcher_hit_fn hit, void *ctx);

/* Free the process-wide scan state (the scratch prototype, the calling
 * thread's scratch, the thread key): before the code that owns it goes
 * (Apache unloads the module at each restart; the static pointers to that
 * state go with it). Scanning afterwards starts that state afresh. */
void bw_matcher_release(void);

/* What the build uses ("vectorscan 5.4.9" / "literal prefilter") and how the
 * bits of m came out. */
const char *bw_matcher_engine(void);
typedef struct bw_matcher_info_s {
    int exact, maybe, always;       /* bits by kind */
    int from_cache;                 /* the database came from cache_dir */
    double compile_ms;
    size_t db_bytes;
} bw_matcher_info_t;
void bw_matcher_info(const bw_matcher_t *m, bw_matcher_info_t *info);

#endif /* BW_MATCHER_H */
