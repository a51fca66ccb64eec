/*
 * @rbl — real-time block list (DNSBL) lookup.
 *
 * Description: For an IPv4 address a.b.c.d, resolves "d.c.b.a.<zone>"; the
 *   address is listed when the name resolves (any A record). Other values
 *   (host names, IPv6) do not match. This is the one operator that does I/O
 *   and allocates (the resolver's result, from run->pool) when it does not
 *   match; the lookup takes as long as DNS does.
 * Arguments: the DNSBL zone, e.g. "sbl-xbl.spamhaus.org" (letters, digits,
 *   '-' and '.').
 * Returns: 1 when the reversed address resolves in the zone, 0 otherwise.
 * Example: SecRule REMOTE_ADDR "@rbl sbl-xbl.spamhaus.org" "id:1,deny"
 *   logs: RBL lookup of 2.0.0.127.sbl-xbl.spamhaus.org succeeded at REMOTE_ADDR.
 */
#include <string.h>
#include <arpa/inet.h>
#include <apr_network_io.h>
#include "op_internal.h"

#define RBL_ZONE_MAX 200   /* keeps reversed address + zone under 255 */

static int rbl_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    bw_str_t zone = bw_str_trim(bw_str_n(op->param, op->param_len));
    size_t i;

    while (zone.len && zone.data[zone.len - 1] == '.')
        zone.len--;
    if (zone.len == 0 || zone.len > RBL_ZONE_MAX || zone.data[0] == '.' || zone.data[0] == '-') {
        *err = apr_psprintf(env->pool, "@rbl: invalid DNS zone \"%s\"",
                            bw_op_log_escape(env->pool, bw_str_n(op->param, op->param_len), 0));
        return -1;
    }
    for (i = 0; i < zone.len; i++) {
        char c = zone.data[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '-' || c == '.')) {
            *err = apr_psprintf(env->pool, "@rbl: invalid DNS zone \"%s\"",
                                bw_op_log_escape(env->pool, zone, 0));
            return -1;
        }
    }
    op->data = bw_str_pdup(env->pool, zone);
    return 0;
}

/* "d.c.b.a.zone" into buf when value is an IPv4 address; 0 otherwise. */
static int rbl_name(bw_str_t value, const char *zone, char *buf, size_t size)
{
    char ip[16];
    unsigned char a[4];

    if (value.len == 0 || value.len >= sizeof(ip) || memchr(value.data, '\0', value.len))
        return 0;
    memcpy(ip, value.data, value.len);
    ip[value.len] = '\0';
    if (inet_pton(AF_INET, ip, a) != 1)
        return 0;
    apr_snprintf(buf, size, "%u.%u.%u.%u.%s", a[3], a[2], a[1], a[0], zone);
    return 1;
}

static int rbl_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    char name[RBL_ZONE_MAX + 20];
    apr_sockaddr_t *sa = NULL;

    if (!rbl_name(value, (const char *)op->data, name, sizeof(name)))
        return 0;
    if (apr_sockaddr_info_get(&sa, name, APR_INET, 0, 0, run->pool) != APR_SUCCESS)
        return 0;
    if (!run->no_msg)
        run->msg = apr_psprintf(run->pool, "RBL lookup of %s succeeded at %s.", name, run->var_name);
    return 1;
}

const bw_op_def_t bw_op_rbl = {
    "rbl", BW_OP_PARAM_REQUIRED, rbl_compile, rbl_execute, NULL, NULL
};
