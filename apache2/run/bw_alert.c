/*
 * The error-log text of a rule match, in ModSecurity's format so that CRS's
 * test tooling and users' log parsers read it unchanged:
 *   ModSecurity: Warning. <operator message> [file "…"] [line "…"] [id "…"]
 *   [rev "…"] [msg "…"] [data "…"] [severity "…"] [ver "…"] [maturity "…"]
 *   [accuracy "…"] [tag "…"]… [hostname "…"] [uri "…"] [unique_id "…"]
 *   and, Bulwark's own, [reqbody_guessed "JSON"] when the request body's
 *   processor was chosen by its content (SecRequestBodyProcessorGuess)
 * Field values are escaped (", \ and non-printable bytes) so a value can
 * never forge another field.
 */
#include <string.h>
#include "run/bw_run.h"

#define FIELD_MAX 1024

static void field(apr_pool_t *p, apr_array_header_t *parts, const char *name, const char *value)
{
    if (!value)
        return;
    *(const char **)apr_array_push(parts) =
        apr_psprintf(p, " [%s \"%s\"]", name, bw_op_log_escape(p, bw_str_make(value), FIELD_MAX));
}

const char *bw_alert_format(apr_pool_t *p, const bw_tx_t *tx, const bw_alert_t *a)
{
    apr_array_header_t *parts = apr_array_make(p, 24, sizeof(char *));
    int i;
    *(const char **)apr_array_push(parts) = apr_pstrcat(p, "ModSecurity: ", a->prefix,
                                                       a->op_msg && *a->op_msg ? " " : "",
                                                       a->op_msg ? a->op_msg : "", NULL);
    field(p, parts, "file", a->file);
    field(p, parts, "line", apr_itoa(p, a->line));
    field(p, parts, "id", a->id);
    field(p, parts, "rev", a->rev);
    field(p, parts, "msg", a->msg);
    field(p, parts, "data", a->data);
    field(p, parts, "severity", bw_severity_name(a->severity));
    field(p, parts, "ver", a->ver);
    if (a->maturity >= 0)
        field(p, parts, "maturity", apr_itoa(p, a->maturity));
    if (a->accuracy >= 0)
        field(p, parts, "accuracy", apr_itoa(p, a->accuracy));
    for (i = 0; a->tags && i < a->tags->nelts; i++)
        field(p, parts, "tag", ((const char **)a->tags->elts)[i]);
    if (tx) {
        field(p, parts, "hostname", bw_str_pdup(p, tx->req.server_name));
        field(p, parts, "uri", bw_str_pdup(p, tx->filename));
        field(p, parts, "unique_id", bw_str_pdup(p, tx->req.unique_id));
        field(p, parts, "reqbody_guessed", tx->reqbody_guessed);
    }
    return apr_array_pstrcat(p, parts, 0);
}
