/*
 * @detectXSS — cross-site-scripting detection with an HTML5-style tokenizer.
 *
 * Description: reads the value as markup from each place a page may echo
 *   it (between tags, inside an unquoted / quoted attribute value, as the
 *   attribute list of a tag, as a whole URL, inside a style attribute) and
 *   matches on script-capable constructs: <script> and other active tags,
 *   event handlers, javascript:/vbscript:/active data: URLs, CSS that runs
 *   script, attributes that send the document or a form elsewhere. The
 *   tokenizer and the checks are Bulwark's own: apache2/detect/bw_xss.c and
 *   bw_xss_check.c.
 * Arguments: none.
 * Returns: 1 on XSS, 0 otherwise; never -1. Nothing is allocated unless it
 *   matches.
 * Example: SecRule ARGS "@detectXSS" "id:941100,phase:2,..."
 *   logs: detected XSS using Bulwark's HTML tokenizer at ARGS:q.
 *   With capture, TX.0 is the construct found (e.g. "onerror=alert(1)").
 */
#include "bw_op.h"
#include "detect/bw_xss.h"

static int detect_xss_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    bw_xss_result_t res;

    if (!bw_xss_detect(value, &res))
        return 0;
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "detected XSS using Bulwark's HTML tokenizer at %s.",
                                run->var_name ? run->var_name : "");
    if (run->capture) {
        run->captures[0] = bw_str_n(apr_pstrmemdup(run->pool, value.data + res.off, res.len),
                                    res.len);
        run->ncaptures = 1;
    }
    return 1;
}

/* The detector's fast path finds every value without these bytes clean. */
static int detect_xss_gate(const bw_op_t *op, uint64_t gate[4])
{
    (void)op;
    bw_xss_fast_gate(gate);
    return BW_OP_GATE_NEEDS;
}

const bw_op_def_t bw_op_detect_xss = {
    "detectXSS", BW_OP_PARAM_NONE, NULL, detect_xss_execute, detect_xss_gate, NULL
};
