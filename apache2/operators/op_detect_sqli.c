/*
 * @detectSQLi — SQL-injection detection from SQL syntax.
 *
 * Description: reads the value as the continuation of an SQL number,
 *   '..', ".." or `..` literal, tokenizes it as SQL and matches when it
 *   leaves the literal and goes on as SQL with concrete evidence (UNION
 *   SELECT, a stacked statement, a tautology, a sensitive call, a comment
 *   cutting the query off...). The tokenizer, the grammar and the rules are
 *   Bulwark's own: apache2/detect/bw_sqli.c and bw_sqli_lex.c.
 * Arguments: none.
 * Returns: 1 on an injection, 0 otherwise; never -1. Nothing is allocated
 *   unless it matches.
 * Example: SecRule ARGS "@detectSQLi" "id:942100,phase:2,capture,
 *     logdata:'Matched Data: %{TX.0} found within %{MATCHED_VAR_NAME}'"
 *   logs: detected SQLi using Bulwark's SQL tokenizer with fingerprint
 *   'sLn=n' at ARGS:id.   (TX.0 = sLn=n: the token classes of ' or 1=1)
 */
#include <string.h>
#include "bw_op.h"
#include "detect/bw_sqli.h"

static int detect_sqli_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    bw_sqli_result_t res;

    if (!bw_sqli_detect(value, &res))
        return 0;
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool,
                                "detected SQLi using Bulwark's SQL tokenizer with fingerprint '%s' at %s.",
                                res.fingerprint, run->var_name ? run->var_name : "");
    if (run->capture) {
        size_t n = strlen(res.fingerprint);
        run->captures[0] = bw_str_n(apr_pstrmemdup(run->pool, res.fingerprint, n), n);
        run->ncaptures = 1;
    }
    return 1;
}

const bw_op_def_t bw_op_detect_sqli = {
    "detectSQLi", BW_OP_PARAM_NONE, NULL, detect_sqli_execute, NULL, NULL
};
