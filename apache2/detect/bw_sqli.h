/*
 * Bulwark's SQL-injection detector (the engine behind @detectSQLi).
 *
 * A value is an injection when, read as the continuation of an SQL literal
 * or number that an application pasted it into, it leaves that literal and
 * goes on as SQL. bw_sqli_ctx.c tries each place a value can be pasted
 * (as-is / numeric, inside '..', inside "..", inside `..`) and each place
 * where a comment glues SQL onto text; bw_sqli.c tokenizes from there with
 * the SQL tokenizer (bw_sqli_lex.h), walks the tokens with a small SQL grammar and
 * reports a match only on concrete evidence (a UNION SELECT, a stacked
 * statement, a tautology, a sensitive function call, a comment that cuts the
 * rest of the query off ...). The reasons are listed below.
 *
 * Before all of that, a fast path (bw_sqli_fast.c) settles most benign
 * values in one pass over the bytes, without changing any answer.
 *
 * No allocation, no global state, linear time, never reads past value.len.
 */
#ifndef BW_SQLI_H
#define BW_SQLI_H

#include "base/bw_types.h"

#define BW_SQLI_FP_MAX 15     /* fingerprint letters kept */

/* Where the value was assumed to be pasted. */
enum {
    BW_SQLI_CTX_NONE = 0,
    BW_SQLI_CTX_ASIS,         /* as-is: a number or an identifier position */
    BW_SQLI_CTX_SQUOTE,       /* inside '...' */
    BW_SQLI_CTX_DQUOTE,       /* inside "..." */
    BW_SQLI_CTX_BACKTICK,     /* inside `...` */
    BW_SQLI_CTX_GLUED         /* as-is, from a closed block comment that glues
                                 SQL onto text (a path: "/x/" + comment + "2 union all") */
};

/* The evidence that decided (one bit). */
#define BW_SQLI_EV_UNION    0x0001  /* UNION [ALL] SELECT with a real select list */
#define BW_SQLI_EV_STACK    0x0002  /* ";" (or MSSQL juxtaposition) + a statement */
#define BW_SQLI_EV_SUBQUERY 0x0004  /* (SELECT ...) */
#define BW_SQLI_EV_CALL     0x0008  /* call of a sensitive function (sleep, load_file...) */
#define BW_SQLI_EV_COND     0x0010  /* AND/OR/XOR joined with a comparison or a call */
#define BW_SQLI_EV_CLAUSE   0x0020  /* ORDER/GROUP BY, HAVING, LIMIT, INTO OUTFILE, PROCEDURE */
#define BW_SQLI_EV_COMMENT  0x0040  /* literal closed, valid SQL, then a comment to the end */
#define BW_SQLI_EV_SANDWICH 0x0080  /* ' op expression op ' : an expression spliced into a literal */

typedef struct {
    char fingerprint[BW_SQLI_FP_MAX + 1];   /* token-class letters, NUL-terminated */
    int context;                            /* BW_SQLI_CTX_* */
    unsigned evidence;                      /* BW_SQLI_EV_* */
} bw_sqli_result_t;

/* 1 when value is an SQL injection (res filled if not NULL), 0 otherwise. */
int bw_sqli_detect(bw_str_t value, bw_sqli_result_t *res);

/* For the differential tests and benchmarks only: bw_sqli_detect() is
 * bw_sqli_fast_clean() (bw_sqli_fast.c: one pass that proves a value clean
 * or says "maybe") and, on "maybe", bw_sqli_detect_full(). The two answer
 * alike for every value, fingerprint included. */
int bw_sqli_detect_full(bw_str_t value, bw_sqli_result_t *res);
int bw_sqli_fast_clean(bw_str_t value);

/* 1 when the fast path's keyword list is exactly the set of the
 * tokenizer's keywords that can lead to evidence; for the unit tests. */
int bw_sqli_fast_words_ok(void);

/* Short names for logs and tests: "union", "single-quote", ... */
const char *bw_sqli_evidence_name(unsigned evidence);
const char *bw_sqli_context_name(int context);

/* 1 when the tokenizer's keyword and function tables are sorted (their
 * lookups are binary searches); for the unit tests. */
int bw_sqli_tables_sorted(void);

#endif /* BW_SQLI_H */
