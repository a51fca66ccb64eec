/*
 * Audit records: the decision to log (SecAuditEngine, RelevantOnly and
 * SecAuditLogRelevantStatus, ctl:auditEngine), the parts in force
 * (SecAuditLogParts, ctl:auditLogParts), the record context both formats
 * read, and the Concurrent-mode file names and index lines.
 *
 * The record is built whole in memory so that the writer can emit it with a
 * single write(2): that is what keeps records whole under concurrency
 * without a lock held for long.
 */
#include <string.h>
#include <ctype.h>
#include "audit/bw_audit_int.h"

/* Record order of the parts, as mod_security2 2.9 writes them. D and G are
 * reserved by ModSecurity and never written. */
static const char part_order[] = "ABCIFEHJKZ";

static const char *const month_names[12] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};

void bw_audit_config_logs(const bw_config_t *cfg, apr_array_header_t *out)
{
    if (cfg && cfg->settings.audit_log)
        *(const char **)apr_array_push(out) = cfg->settings.audit_log;
    if (cfg && cfg->settings.audit_log2)
        *(const char **)apr_array_push(out) = cfg->settings.audit_log2;
}

const bw_settings_t *bw_audit_settings(const bw_tx_t *tx)
{
    return tx->cfg;
}

static int status_relevant(const bw_tx_t *tx, int status)
{
    const pcre2_code *re = tx->cfg->audit_relevant_status_re;
    char num[16];
    if (!re || status <= 0)
        return 0;
    apr_snprintf(num, sizeof num, "%d", status);
    return bw_regex_match(re, bw_str_make(num), tx->md) > 0;
}

/* A logged match of a rule that is not noauditlog. (noauditlog only keeps
 * a match from making the transaction relevant: mod_security2 still lists
 * its message in a record written for another reason.) */
static int audit_match(const bw_tx_t *tx)
{
    int i;
    for (i = 0; i < tx->matches->nelts; i++) {
        const bw_rule_t *r = ((const bw_match_record_t *)tx->matches->elts)[i].rule;
        if (r && r->auditlog != 0)
            return 1;
    }
    return 0;
}

int bw_audit_wanted(const bw_tx_t *tx, int status)
{
    /* mod_security2 does nothing at all, audit log included, for a
     * transaction whose rule engine is off */
    if (tx->engine_mode == BW_ENGINE_OFF)
        return 0;
    switch (tx->audit_engine) {
    case BW_AUDIT_ON:
        return 1;
    case BW_AUDIT_RELEVANT_ONLY:
        return audit_match(tx) || status_relevant(tx, status);
    default:
        return 0;
    }
}

const char *bw_audit_parts(apr_pool_t *p, const bw_tx_t *tx)
{
    const char *spec = tx->audit_parts ? tx->audit_parts : tx->cfg->audit_parts;
    char out[sizeof(part_order)];
    size_t n = 0, i;
    for (i = 0; part_order[i]; i++) {
        char c = part_order[i];
        if (c == 'A' || c == 'Z' || (spec && (strchr(spec, c) || strchr(spec, tolower((unsigned char)c)))))
            out[n++] = c;
    }
    return apr_pstrndup(p, out, n);
}

const char *bw_audit_time_text(apr_pool_t *p, apr_time_t t)
{
    apr_time_exp_t xt;
    long off;
    apr_time_exp_lt(&xt, t);
    off = xt.tm_gmtoff;
    return apr_psprintf(p, "%02d/%s/%04d:%02d:%02d:%02d.%06d %c%02ld%02ld", xt.tm_mday,
                        month_names[xt.tm_mon % 12], xt.tm_year + 1900, xt.tm_hour, xt.tm_min,
                        xt.tm_sec, xt.tm_usec, off < 0 ? '-' : '+', (off < 0 ? -off : off) / 3600,
                        ((off < 0 ? -off : off) % 3600) / 60);
}

int bw_audit_has_part(const bw_audit_rec_t *r, char part)
{
    return strchr(r->parts, part) != NULL;
}

/* Part C is the raw body. ModSecurity writes part I in its place for a
 * body that is not multipart (I only differs for multipart), and writes it
 * once when both are asked for. */
int bw_audit_want_c(const bw_audit_rec_t *r)
{
    if (!r->body.len)
        return 0;
    return bw_audit_has_part(r, 'C') || (bw_audit_has_part(r, 'I') && !r->multipart);
}

int bw_audit_want_i(const bw_audit_rec_t *r)
{
    return r->multipart && r->body.len && bw_audit_has_part(r, 'I');
}

const char *bw_audit_engine_mode(const bw_tx_t *tx)
{
    switch (tx->engine_mode) {
    case BW_ENGINE_ON: return "ENABLED";
    case BW_ENGINE_DETECTION_ONLY: return "DETECTION_ONLY";
    default: return "DISABLED";
    }
}

const char *bw_audit_action_message(const bw_tx_t *tx)
{
    int i;
    if (!tx->intercepted || !tx->iv.rule)
        return NULL;
    for (i = tx->matches->nelts - 1; i >= 0; i--) {
        const bw_match_record_t *m = &((const bw_match_record_t *)tx->matches->elts)[i];
        if (m->rule == tx->iv.rule)
            return m->op_msg;
    }
    return NULL;
}

const char *bw_audit_producer(apr_pool_t *p, const bw_tx_t *tx, int json_list,
                              apr_array_header_t *out)
{
    const apr_array_header_t *cs = tx->cfg->component_signatures;
    const char *text = "Bulwark/" BW_VERSION;
    int i;
    if (out)
        *(const char **)apr_array_push(out) = text;
    for (i = 0; cs && i < cs->nelts; i++) {
        const char *c = ((const char **)cs->elts)[i];
        if (out)
            *(const char **)apr_array_push(out) = c;
        if (!json_list)
            text = apr_pstrcat(p, text, "; ", c, NULL);
    }
    return text;
}

/* An audit message as the error log has it, without the [hostname] [uri]
 * [unique_id] tail that ModSecurity leaves out of audit records. Field
 * values are escaped ('"' never appears raw inside one), so the last
 * ' [hostname "' is the real one. */
static bw_str_t strip_tail(const char *msg)
{
    static const char tail[] = " [hostname \"";
    bw_str_t s = bw_str_make(msg);
    const char *at = NULL, *f = s.data;
    while ((f = bw_memmem(f, s.len - (size_t)(f - s.data), tail, sizeof(tail) - 1)) != NULL)
        at = f++;
    if (at)
        s.len = (size_t)(at - s.data);
    return s;
}

static void collect(bw_audit_rec_t *r)
{
    const bw_tx_t *tx = r->tx;
    apr_hash_t *seen = apr_hash_make(r->pool);
    int i;
    r->messages = apr_array_make(r->pool, 4, sizeof(bw_str_t));
    for (i = 0; tx->audit_msgs && i < tx->audit_msgs->nelts; i++)
        *(bw_str_t *)apr_array_push(r->messages) = strip_tail(((const char **)tx->audit_msgs->elts)[i]);
    r->rules = apr_array_make(r->pool, 4, sizeof(const bw_rule_t *));
    for (i = 0; i < tx->matches->nelts; i++) {
        const bw_rule_t *rule = ((const bw_match_record_t *)tx->matches->elts)[i].rule;
        if (!rule || apr_hash_get(seen, &rule, sizeof(rule)))
            continue;
        apr_hash_set(seen, apr_pmemdup(r->pool, &rule, sizeof(rule)), sizeof(rule), "");
        *(const bw_rule_t **)apr_array_push(r->rules) = rule;
    }
}

static int is_multipart(const bw_tx_t *tx)
{
    int i;
    if (tx->reqbody_processor)
        return !strcmp(tx->reqbody_processor, "MULTIPART");
    for (i = 0; i < tx->req.headers->nelts; i++) {
        const bw_kv_t *h = &((const bw_kv_t *)tx->req.headers->elts)[i];
        if (bw_str_eq_cstr_ci(h->name, "Content-Type"))
            return h->value.len >= 19 && !strncasecmp(h->value.data, "multipart/form-data", 19);
    }
    return 0;
}

static void random_boundary(bw_audit_rec_t *r)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[4];
    char *out = apr_palloc(r->pool, 9);
    int i;
    if (apr_generate_random_bytes(raw, sizeof raw) != APR_SUCCESS) {
        apr_uint32_t v = (apr_uint32_t)apr_time_now() ^ (apr_uint32_t)(apr_uintptr_t)r;
        memcpy(raw, &v, sizeof raw);
    }
    for (i = 0; i < 4; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[8] = '\0';
    r->boundary = out;
}

static void rec_init(bw_audit_rec_t *r, apr_pool_t *p, const bw_tx_t *tx, const bw_audit_final_t *fin)
{
    bw_str_t body;
    memset(r, 0, sizeof(*r));
    r->pool = p;
    r->tx = tx;
    r->parts = bw_audit_parts(p, tx);
    bw_audit_san_build(p, tx, &r->san);
    r->request_line = bw_audit_san_request_line(p, tx, &r->san, tx->req.request_line);
    r->multipart = is_multipart(tx);
    body = fin->request_body.data ? fin->request_body
         : bw_str_n(tx->reqbody ? tx->reqbody : "", tx->reqbody_len);
    if (body.len && (strchr(r->parts, 'C') || strchr(r->parts, 'I')))
        body = bw_audit_san_body(p, tx, &r->san, body);
    r->body = body;
    r->status = fin->status ? fin->status : tx->res.status;
    r->protocol = fin->protocol.len ? fin->protocol
                : tx->res.protocol.len ? tx->res.protocol : tx->req.protocol;
    r->status_line = fin->status_line;
    if (!r->status_line.len && tx->res.status_line.len) {
        /* the engine's copy may or may not start with the protocol */
        bw_str_t sl = tx->res.status_line;
        const char *sp = memchr(sl.data, ' ', sl.len);
        if (sl.len > 5 && !memcmp(sl.data, "HTTP/", 5) && sp)
            sl = bw_str_n(sp + 1, sl.len - (size_t)(sp + 1 - sl.data));
        r->status_line = sl;
    }
    r->res_headers = fin->headers ? fin->headers : tx->res.headers;
    r->handler = fin->handler;
    r->server = tx->cfg->server_signature ? tx->cfg->server_signature : fin->server;
    r->start = tx->req.start;
    r->end = fin->end ? fin->end : apr_time_now();
    r->time_text = bw_audit_time_text(p, r->start);
    r->boundary = fin->boundary;
    if (!r->boundary)
        random_boundary(r);
    collect(r);
}

bw_str_t bw_audit_record(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_final_t *fin, int format)
{
    bw_audit_rec_t r;
    bw_abuf_t b;
    bw_audit_final_t none;
    if (!fin) {
        memset(&none, 0, sizeof(none));
        fin = &none;
    }
    rec_init(&r, p, tx, fin);
    bw_abuf_init(&b, p, 4096 + r.body.len + (tx->resbody ? tx->resbody_len : 0));
    if (format < 0)
        format = tx->cfg->audit_format;
    if (format == BW_AUDIT_JSON)
        bw_audit_json(&r, &b);
    else
        bw_audit_native(&r, &b);
    return bw_str_n(b.data, b.len);
}

/* ---- Concurrent mode ------------------------------------------------------------ */

const char *bw_audit_file_name(apr_pool_t *p, const bw_tx_t *tx, const char **dir)
{
    apr_time_exp_t xt;
    char *id = bw_str_pdup(p, tx->req.unique_id), *c;
    const char *d;
    /* the unique id becomes part of a path: keep it to safe bytes */
    for (c = id; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '@' && *c != '-' && *c != '_')
            *c = '_';
    apr_time_exp_lt(&xt, tx->req.start);
    d = apr_psprintf(p, "/%04d%02d%02d/%04d%02d%02d-%02d%02d", xt.tm_year + 1900, xt.tm_mon + 1,
                     xt.tm_mday, xt.tm_year + 1900, xt.tm_mon + 1, xt.tm_mday, xt.tm_hour, xt.tm_min);
    if (dir)
        *dir = d;
    return apr_psprintf(p, "%s/%04d%02d%02d-%02d%02d%02d-%s", d, xt.tm_year + 1900, xt.tm_mon + 1,
                        xt.tm_mday, xt.tm_hour, xt.tm_min, xt.tm_sec, *id ? id : "-");
}

static const char *header_or_dash(apr_pool_t *p, const bw_tx_t *tx, const char *name)
{
    int i;
    for (i = 0; i < tx->req.headers->nelts; i++) {
        const bw_kv_t *h = &((const bw_kv_t *)tx->req.headers->elts)[i];
        if (bw_str_eq_cstr_ci(h->name, name))
            return bw_op_log_escape(p, h->value, 8192);
    }
    return "-";
}

/* An unquoted index field: escaped, never empty, no space inside. */
static const char *bare_field(apr_pool_t *p, bw_str_t s)
{
    char *e, *c;
    if (!s.len)
        return "-";
    e = bw_op_log_escape(p, s, 1024);
    for (c = e; *c; c++)
        if (*c == ' ')
            *c = '_';
    return e;
}

const char *bw_audit_index_line(apr_pool_t *p, const bw_tx_t *tx, const bw_audit_final_t *fin,
                                const char *file_name, apr_size_t size, const unsigned char md5[16])
{
    char hex[33];
    int i, status = fin && fin->status ? fin->status : tx->res.status;
    bw_audit_san_t san;
    bw_str_t line;
    for (i = 0; i < 16; i++)
        apr_snprintf(hex + 2 * i, 3, "%02x", md5[i]);
    bw_audit_san_build(p, tx, &san);
    line = bw_audit_san_request_line(p, tx, &san, tx->req.request_line);
    return apr_psprintf(p, "%s %s %s - [%s] \"%s\" %d %" APR_OFF_T_FMT " \"%s\" \"%s\" %s \"-\" %s 0 %"
                        APR_SIZE_T_FMT " md5:%s \n",
                        bare_field(p, tx->req.server_name), bare_field(p, tx->req.remote_addr),
                        bare_field(p, tx->req.remote_user), bw_audit_time_text(p, tx->req.start),
                        bw_op_log_escape(p, line, 8192), status, fin ? fin->bytes_sent : 0,
                        header_or_dash(p, tx, "Referer"), header_or_dash(p, tx, "User-Agent"),
                        bare_field(p, tx->req.unique_id), file_name, size, hex);
}
