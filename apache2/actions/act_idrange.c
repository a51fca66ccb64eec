/* Rule id lists ("1-9,12,100-200"): SecRuleRemoveById, ctl:ruleRemoveById… */
#include <ctype.h>
#include <stdlib.h>
#include "actions/bw_action.h"

const char *bw_idranges_parse(apr_pool_t *p, const char *text, apr_array_header_t *out)
{
    const char *s = text;
    while (*s) {
        char *end;
        bw_idrange_t rg;
        while (*s == ',' || isspace((unsigned char)*s))
            s++;
        if (!*s)
            break;
        rg.lo = strtol(s, &end, 10);
        if (end == s)
            return apr_psprintf(p, "invalid rule id or range \"%s\"", text);
        rg.hi = rg.lo;
        s = end;
        if (*s == '-') {
            s++;
            rg.hi = strtol(s, &end, 10);
            if (end == s || rg.hi < rg.lo)
                return apr_psprintf(p, "invalid rule id range \"%s\"", text);
            s = end;
        }
        if (*s && *s != ',' && !isspace((unsigned char)*s))
            return apr_psprintf(p, "invalid rule id or range \"%s\"", text);
        *(bw_idrange_t *)apr_array_push(out) = rg;
    }
    return NULL;
}

int bw_idranges_match(const apr_array_header_t *ranges, long id)
{
    int i;
    for (i = 0; i < ranges->nelts; i++) {
        const bw_idrange_t *rg = &((const bw_idrange_t *)ranges->elts)[i];
        if (id >= rg->lo && id <= rg->hi)
            return 1;
    }
    return 0;
}
