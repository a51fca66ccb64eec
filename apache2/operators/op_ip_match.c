/*
 * @ipMatch — IP address / network match.
 *
 * Description: Checks whether the value, a textual IPv4 or IPv6 address,
 *   lies in one of the listed addresses or CIDR blocks. The list is compiled
 *   once into a compact prefix tree (bw_iptree.c).
 * Arguments: comma-separated IPv4/IPv6 addresses and CIDR blocks, e.g.
 *   "127.0.0.1,::1,10.0.0.0/8,2001:db8::/32" (spaces around items allowed).
 *   A malformed address or prefix length is a configuration error.
 * Returns: 1 when the address is in the set, 0 when not, -1 (run->error)
 *   when the value is not an IP address.
 * Example: SecRule REMOTE_ADDR "@ipMatch 127.0.0.1,::1" "id:1,..."
 *   logs: IPmatch: "127.0.0.1" matched at REMOTE_ADDR.
 */
#include <string.h>
#include "op_internal.h"

static int ip_match_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    bw_str_t rest = bw_str_n(op->param, op->param_len);
    bw_iptree_t *t = bw_iptree_create(env->pool);

    if (bw_str_trim(rest).len == 0) {
        *err = apr_pstrdup(env->pool, "@ipMatch: no address in the parameter");
        return -1;
    }
    for (;;) {
        const char *comma = memchr(rest.data, ',', rest.len);
        size_t n = comma ? (size_t)(comma - rest.data) : rest.len;
        bw_str_t item = bw_str_trim(bw_str_n(rest.data, n));
        const char *why = NULL;

        if (item.len == 0)
            why = "empty entry in the list";
        else
            bw_iptree_add(t, item, &why);
        if (why) {
            *err = apr_psprintf(env->pool, "@ipMatch: %s \"%s\"", why,
                                bw_op_log_escape(env->pool, item, 0));
            return -1;
        }
        if (comma == NULL)
            break;
        rest.data += n + 1;
        rest.len -= n + 1;
    }
    op->data = t;
    return 0;
}

int bw_op_ip_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value,
                     const char *label)
{
    int rc = bw_iptree_contains((const bw_iptree_t *)op->data, value);

    if (rc == 0)
        return 0;
    if (rc < 0) {
        run->error = apr_psprintf(run->pool, "%s: \"%s\" is not an IP address at %s.", label,
                                  bw_op_log_escape(run->pool, value, 64), run->var_name);
        return -1;
    }
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "%s: \"%s\" matched at %s.", label,
                                bw_op_log_escape(run->pool, value, 0), run->var_name);
    return 1;
}

static int ip_match_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    return bw_op_ip_execute(op, run, value, "IPmatch");
}

const bw_op_def_t bw_op_ip_match = {
    "ipMatch", BW_OP_PARAM_REQUIRED, ip_match_compile, ip_match_execute, NULL, NULL
};
