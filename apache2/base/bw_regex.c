/*
 * PCRE2 helpers for the engine's own regexes (selectors, SecRuleRemoveByTag,
 * SecAuditLogRelevantStatus…). Compiled once with JIT; the code is freed
 * with the pool that owns it. Operators have their own compile in op_rx.c.
 */
#include "base/bw_regex.h"

static apr_status_t free_code(void *data)
{
    pcre2_code_free((pcre2_code *)data);
    return APR_SUCCESS;
}

pcre2_code *bw_regex_compile(apr_pool_t *p, const char *pattern, int caseless, char **err)
{
    int ec;
    PCRE2_SIZE off;
    uint32_t opts = PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY | (caseless ? PCRE2_CASELESS : 0);
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &ec, &off, NULL);
    if (!re) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(ec, buf, sizeof buf);
        *err = apr_psprintf(p, "%s at offset %lu of \"%s\"", (char *)buf, (unsigned long)off, pattern);
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    apr_pool_cleanup_register(p, re, free_code, apr_pool_cleanup_null);
    return re;
}

int bw_regex_match(const pcre2_code *re, bw_str_t s, pcre2_match_data *md)
{
    int rc;
    pcre2_match_data *own = NULL;
    if (!md)
        md = own = pcre2_match_data_create(1, NULL);
    rc = pcre2_match(re, (PCRE2_SPTR)(s.data ? s.data : ""), s.len, 0, 0, md, NULL);
    if (own)
        pcre2_match_data_free(own);
    return rc >= 0 ? 1 : (rc == PCRE2_ERROR_NOMATCH ? 0 : -1);
}
