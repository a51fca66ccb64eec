/*
 * Helpers shared by several operator files but not part of the operator
 * interface (bw_op.h): data-file reading, the ModSecurity atoi rules, the
 * PCRE2 compile/limit handling used by @rx and the @verify* family, and the
 * execute halves shared by @pm/@pmFromFile and @ipMatch/@ipMatchFromFile.
 * Only files in apache2/operators/ include this header.
 */
#ifndef BW_OP_INTERNAL_H
#define BW_OP_INTERNAL_H

#include "bw_op.h"
#include "bw_acmatch.h"
#include "bw_iptree.h"

/* Every operator definition, for op_registry.c (and so each op_*.c file
 * defines its symbol against a declaration). detectSQLi/detectXSS live in
 * op_detect_sqli.c / op_detect_xss.c. */
extern const bw_op_def_t bw_op_begins_with, bw_op_contains, bw_op_contains_word,
    bw_op_detect_sqli, bw_op_detect_xss, bw_op_ends_with, bw_op_eq, bw_op_fuzzy_hash,
    bw_op_ge, bw_op_geo_lookup, bw_op_gsb_lookup, bw_op_gt, bw_op_inspect_file, bw_op_ip_match,
    bw_op_ip_match_f, bw_op_ip_match_from_file, bw_op_le, bw_op_lt, bw_op_ne, bw_op_no_match,
    bw_op_pm, bw_op_pm_from_file, bw_op_pmf, bw_op_rbl, bw_op_rsub, bw_op_rx, bw_op_streq, bw_op_strmatch,
    bw_op_unconditional_match, bw_op_validate_byte_range, bw_op_validate_dtd, bw_op_validate_hash,
    bw_op_validate_schema, bw_op_validate_url_encoding, bw_op_validate_utf8_encoding,
    bw_op_verify_cc, bw_op_verify_cpf, bw_op_verify_ssn,
    bw_op_within;

/* --- op_common.c ---------------------------------------------------------- */

/* Read a whole data file into p. On failure returns -1 and sets *err to
 * "@<opname>: cannot read <what> \"<path>\": <reason>" (allocated from p). */
int bw_op_read_file(apr_pool_t *p, const char *opname, const char *what,
                    const char *path, bw_str_t *content, char **err);

/* Split off the next line of *rest into *line (without "\n" or "\r\n").
 * Returns 0 when *rest is exhausted. NUL bytes are ordinary data. */
int bw_op_next_line(bw_str_t *rest, bw_str_t *line);

/* Split off the next token of *rest separated by any byte in seps (leading
 * separators skipped). Returns 0 when no token is left. */
int bw_op_next_token(bw_str_t *rest, const char *seps, bw_str_t *tok);

/* 1 when s starts with http:// or https:// (case-insensitive): ModSecurity
 * can download data files; Bulwark refuses to at start-up. */
int bw_op_is_url(bw_str_t s);

/* One data file named in a parameter: refuses an empty name, a NUL byte
 * and a URL (no network access from the configuration), then resolves the
 * name against the rule file's directory. 0 with *path, or -1 with *err
 * (from p) naming what (e.g. "schema"). */
int bw_op_data_file(apr_pool_t *p, const bw_op_cenv_t *env, const char *opname,
                    const char *what, bw_str_t name, const char **path, char **err);

/* The integer conversion ModSecurity applies to both sides of @eq..@le:
 * leading white space, an optional sign, then decimal digits up to the
 * first non-digit; no digits gives 0. Saturates at INT_MIN/INT_MAX. */
int bw_op_atoi(bw_str_t s);

/* "<head> \"<escaped parameter>\" at <var_name>." from run->pool: the
 * message of the string operators and the @verify* family. */
const char *bw_op_param_msg(bw_op_run_t *run, const bw_op_t *op, const char *head);

/* --- op_regex.c ----------------------------------------------------------- */

/* Compile op->param with PCRE2_DOTALL|PCRE2_DOLLAR_ENDONLY and JIT, memory
 * from env->pool (JIT code freed by a cleanup on that pool). NULL on error
 * with *err = "@<opname>: <PCRE2 message> at offset N". */
pcre2_code *bw_op_regex_compile(const bw_op_t *op, const bw_op_cenv_t *env,
                                const char *opname, char **err);

/* The same for a regex that is only part of the parameter (@rsub), with
 * extra compile options (PCRE2_CASELESS). */
pcre2_code *bw_op_regex_compile_re(bw_str_t re, uint32_t extra, const bw_op_cenv_t *env,
                                   const char *opname, char **err);

/* Turn a negative pcre2_match() result other than NOMATCH into the -1
 * result: run->error names the limit and run->limit_hit is set for the
 * match, depth, heap and JIT-stack limits. Returns -1. */
int bw_op_regex_error(bw_op_run_t *run, const char *opname, int rc);

/* @verifyCC / @verifyCPF / @verifySSN: find each regex match (from every
 * start offset, as ModSecurity does) and accept the first one whose digits
 * pass check(). label is the message head, e.g. "CC# match". */
typedef int (*bw_op_digits_check_t)(const unsigned char *digits, size_t n);
int bw_op_verify_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value,
                         const char *opname, const char *label,
                         bw_op_digits_check_t check);

/* --- op_pm.c -------------------------------------------------------------- */

/* Shared execute for @pm and @pmFromFile: op->data is a compiled bw_ac_t. */
int bw_op_pm_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value);

/* --- op_script.c ---------------------------------------------------------- */

/* Run Lua script s (main(arg), or main() when arg is NULL) through the
 * transaction's run->script: the execute half of SecRuleScript and of
 * @inspectFile with a .lua script. */
int bw_op_script_run(const struct bw_lua_script_s *s, bw_op_run_t *run, const bw_str_t *arg);

/* Compile op->param, a Lua script path relative to the rule file, into
 * op->data. */
int bw_op_script_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err);

/* --- op_ip_match.c -------------------------------------------------------- */

/* Shared execute for @ipMatch and @ipMatchFromFile: op->data is a
 * bw_iptree_t; label is "IPmatch" or "IPmatchFromFile". */
int bw_op_ip_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value,
                     const char *label);

#endif /* BW_OP_INTERNAL_H */
