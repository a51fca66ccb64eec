/*
 * @gsbLookup — URLs in the value looked up in a Google Safe Browsing list.
 *
 * Description: Every match of REGEX in the value names a URL: the text of
 *   its capture groups when it has any (each group that is set, in
 *   turn), else the whole match. Each URL (an "http://" or "https://" in
 *   front dropped, compared lowercase) is looked up in the list named by
 *   SecGsbLookupDb as bw_gsb_lookup_url describes: as written, then the
 *   Safe Browsing host-suffix / path-prefix expressions. The first URL
 *   found is a match.
 * Arguments: REGEX (PCRE2, compiled once at start-up, as @rx). An empty
 *   REGEX is accepted, as by mod_security2, and never finds a URL.
 * Returns: 1 when a URL is in the list; with capture, TX:0 is that URL and
 *   TX:1 its host, both lowercase. 0 otherwise; -1 (run->error) when no
 *   list is configured for the rule's context or a PCRE2 limit is hit.
 * Example: SecGsbLookupDb GsbMalware.dat
 *          SecRule ARGS "@gsbLookup https?://([^\s\"'<>]+)" \
 *              "id:1,phase:2,capture,deny,logdata:'%{tx.0}'"
 *   logs: Gsb lookup for "evil.example/x" succeeded at ARGS:u.
 */
#include <string.h>
#include "op_internal.h"
#include "bw_gsb.h"

static int gsb_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    op->data = bw_op_regex_compile(op, env, "gsbLookup", err);
    return op->data ? 0 : -1;
}

static bw_str_t lower_copy(apr_pool_t *p, bw_str_t s)
{
    char *out = apr_palloc(p, s.len + 1);
    size_t i;
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        out[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    out[s.len] = '\0';
    return bw_str_n(out, s.len);
}

/* The match's outputs: only here, on a hit, is anything allocated. */
static int gsb_found(bw_op_run_t *run, bw_str_t url, bw_str_t host)
{
    bw_str_t lurl = lower_copy(run->pool, url);
    if (run->capture) {
        run->captures[0] = lurl;
        run->captures[1] = lower_copy(run->pool, host);
        run->ncaptures = 2;
    }
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "Gsb lookup for \"%s\" succeeded at %s.",
                                bw_op_log_escape(run->pool, lurl, 0), run->var_name);
    return 1;
}

/* The URLs one regex match names: its set groups, else the whole match. */
static int gsb_try_match(bw_op_run_t *run, bw_str_t value, int rc)
{
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(run->md);
    int n = rc > 0 ? rc : (int)pcre2_get_ovector_count(run->md), i;
    bw_str_t host;

    for (i = n > 1 ? 1 : 0; i < n; i++) {
        bw_str_t url;
        if (ov[2 * i] == PCRE2_UNSET)
            continue;
        url = bw_str_n(value.data + ov[2 * i], ov[2 * i + 1] - ov[2 * i]);
        if (bw_gsb_lookup_url(run->gsb, url, &host))
            return gsb_found(run, url, host);
    }
    return 0;
}

static int gsb_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    size_t start = 0;

    if (!run->gsb) {
        run->error = "@gsbLookup: no Safe Browsing list is configured (SecGsbLookupDb)";
        return -1;
    }
    if (run->md == NULL) {
        run->error = "@gsbLookup: no PCRE2 match data";
        return -1;
    }
    while (start <= value.len) {
        PCRE2_SIZE *ov;
        int rc = pcre2_match((const pcre2_code *)op->data, (PCRE2_SPTR)value.data, value.len,
                             start, 0, run->md, run->mctx);
        if (rc == PCRE2_ERROR_NOMATCH)
            return 0;
        if (rc < 0)
            return bw_op_regex_error(run, "gsbLookup", rc);
        if (gsb_try_match(run, value, rc))
            return 1;
        /* on after this match; an empty one moves on by a byte */
        ov = pcre2_get_ovector_pointer(run->md);
        start = ov[1] > start ? ov[1] : start + 1;
    }
    return 0;
}

const bw_op_def_t bw_op_gsb_lookup = {
    "gsbLookup", BW_OP_PARAM_OPTIONAL, gsb_compile, gsb_execute, NULL, NULL
};
