/*
 * The Native audit record, mod_security2 2.9's layout (checked against
 * 2.9.7's output): each part opens with "--BOUNDARY-X--", parts in the
 * order A B C I F E H J K Z, a blank line closing header-like parts.
 *
 *   A  [time] unique_id client_ip client_port server_ip server_port
 *   B  request line and headers        C  request body as received
 *   I  multipart body as urlencoded fields, without files
 *   F  response status line and headers
 *   E  response body (when the engine buffered it)
 *   H  trailer: Message:, Action:, Apache-Handler:, Stopwatch:, Producer:,
 *      Server:, Sanitised-*:, Request-Body-Processor-Guessed: (Bulwark's own,
 *      when SecRequestBodyProcessorGuess chose the processor), Engine-Mode:
 *   J  uploaded files   K  matched rules   Z  end
 *
 * The boundary is 8 random hex digits per record, so request data cannot
 * forge a section line of its record; one-line fields are written with
 * control bytes escaped for the same reason.
 */
#include <string.h>
#include "audit/bw_audit_int.h"

static void section(bw_audit_rec_t *r, bw_abuf_t *b, char part)
{
    bw_abuf_add(b, "--", 2);
    bw_abuf_cstr(b, r->boundary);
    bw_abuf_byte(b, '-');
    bw_abuf_byte(b, part);
    bw_abuf_add(b, "--\n", 3);
}

static void header_lines(bw_abuf_t *b, apr_pool_t *p, const apr_array_header_t *h,
                         const apr_array_header_t *masked)
{
    int i;
    for (i = 0; h && i < h->nelts; i++) {
        const bw_kv_t *kv = &((const bw_kv_t *)h->elts)[i];
        bw_abuf_line_safe(b, kv->name);
        bw_abuf_add(b, ": ", 2);
        bw_abuf_line_safe(b, bw_audit_san_header(p, masked, kv->name, kv->value));
        bw_abuf_byte(b, '\n');
    }
}

static void part_a(bw_audit_rec_t *r, bw_abuf_t *b)
{
    const bw_request_t *q = &r->tx->req;
    bw_abuf_byte(b, '[');
    bw_abuf_cstr(b, r->time_text);
    bw_abuf_add(b, "] ", 2);
    bw_abuf_line_safe(b, q->unique_id.len ? q->unique_id : bw_str_make("-"));
    bw_abuf_byte(b, ' ');
    bw_abuf_line_safe(b, q->remote_addr);
    bw_abuf_byte(b, ' ');
    bw_abuf_num(b, q->remote_port);
    bw_abuf_byte(b, ' ');
    bw_abuf_line_safe(b, q->server_addr);
    bw_abuf_byte(b, ' ');
    bw_abuf_num(b, q->server_port);
    bw_abuf_byte(b, '\n');
}

static void part_f(bw_audit_rec_t *r, bw_abuf_t *b)
{
    bw_abuf_line_safe(b, r->protocol);
    bw_abuf_byte(b, ' ');
    if (r->status_line.len)
        bw_abuf_line_safe(b, r->status_line);
    else
        bw_abuf_num(b, r->status);
    bw_abuf_byte(b, '\n');
    header_lines(b, r->pool, r->res_headers, r->san.res_headers);
    bw_abuf_byte(b, '\n');
}

static void name_list(bw_abuf_t *b, const char *label, const apr_array_header_t *names)
{
    int i;
    if (!names->nelts)
        return;
    bw_abuf_cstr(b, label);
    for (i = 0; i < names->nelts; i++) {
        bw_abuf_add(b, i ? ", \"" : " \"", i ? 3 : 2);
        bw_abuf_line_safe(b, bw_str_make(((const char **)names->elts)[i]));
        bw_abuf_byte(b, '"');
    }
    bw_abuf_add(b, ".\n", 2);
}

static void part_h(bw_audit_rec_t *r, bw_abuf_t *b)
{
    const bw_tx_t *tx = r->tx;
    int i;
    for (i = 0; i < r->messages->nelts; i++) {
        bw_abuf_add(b, "Message: ", 9);
        bw_abuf_line_safe(b, ((bw_str_t *)r->messages->elts)[i]);
        bw_abuf_byte(b, '\n');
    }
    if (tx->intercepted) {
        bw_abuf_cstr(b, "Action: Intercepted (phase ");
        bw_abuf_num(b, tx->iv.phase);
        bw_abuf_add(b, ")\n", 2);
    }
    if (r->handler) {
        bw_abuf_cstr(b, "Apache-Handler: ");
        bw_abuf_line_safe(b, bw_str_make(r->handler));
        bw_abuf_byte(b, '\n');
    }
    bw_abuf_cstr(b, "Stopwatch: ");
    bw_abuf_num(b, r->start);
    bw_abuf_byte(b, ' ');
    bw_abuf_num(b, r->end - r->start);
    bw_abuf_cstr(b, " (- - -)\nProducer: ");
    bw_abuf_line_safe(b, bw_str_make(bw_audit_producer(r->pool, tx, 0, NULL)));
    bw_abuf_add(b, ".\n", 2);
    if (r->server) {
        bw_abuf_cstr(b, "Server: ");
        bw_abuf_line_safe(b, bw_str_make(r->server));
        bw_abuf_byte(b, '\n');
    }
    if (tx->cfg->web_app_id) {
        bw_abuf_cstr(b, "WebApp-Info: \"");
        bw_abuf_line_safe(b, bw_str_make(tx->cfg->web_app_id));
        bw_abuf_cstr(b, "\" \"-\" \"-\"\n");
    }
    name_list(b, "Sanitised-Args:", r->san.arg_names);
    name_list(b, "Sanitised-Request-Headers:", r->san.req_headers);
    name_list(b, "Sanitised-Response-Headers:", r->san.res_headers);
    if (tx->reqbody_guessed) {
        bw_abuf_cstr(b, "Request-Body-Processor-Guessed: ");
        bw_abuf_cstr(b, tx->reqbody_guessed);
        bw_abuf_byte(b, '\n');
    }
    bw_abuf_cstr(b, "Engine-Mode: \"");
    bw_abuf_cstr(b, bw_audit_engine_mode(tx));
    bw_abuf_add(b, "\"\n\n", 3);
}

/* Part J: "N,size,"name","type"" per file, then "Total,size". */
static void part_j(bw_audit_rec_t *r, bw_abuf_t *b)
{
    const apr_array_header_t *f = r->tx->files;
    apr_off_t total = 0;
    int i;
    for (i = 0; i < f->nelts; i++) {
        const bw_body_file_t *bf = &((const bw_body_file_t *)f->elts)[i];
        bw_abuf_num(b, i + 1);
        bw_abuf_byte(b, ',');
        bw_abuf_num(b, bf->size);
        bw_abuf_add(b, ",\"", 2);
        bw_abuf_line_safe(b, bf->file_name);
        bw_abuf_add(b, "\",\"", 3);
        bw_abuf_line_safe(b, bf->content_type.len ? bf->content_type : bw_str_make("<Unknown ContentType>"));
        bw_abuf_add(b, "\"\n", 2);
        total += bf->size;
    }
    bw_abuf_cstr(b, "Total,");
    bw_abuf_num(b, total);
    bw_abuf_add(b, "\n\n", 2);
}

static void part_k(bw_audit_rec_t *r, bw_abuf_t *b)
{
    int i;
    for (i = 0; i < r->rules->nelts; i++) {
        const bw_rule_t *rule;
        for (rule = ((const bw_rule_t **)r->rules->elts)[i]; rule; rule = rule->chain_next) {
            bw_abuf_line_safe(b, bw_str_make(bw_audit_rule_text(r->pool, rule)));
            bw_abuf_add(b, "\n\n", 2);
        }
    }
    bw_abuf_byte(b, '\n');
}

/* C, and I: the multipart summary, or the raw body under C when the body
 * is not multipart and C was not asked for. */
static void body_part(bw_audit_rec_t *r, bw_abuf_t *b, char part)
{
    if (bw_audit_want_c(r) && (part == 'C' || !bw_audit_has_part(r, 'C'))) {
        section(r, b, 'C');
        bw_abuf_str(b, r->body);
        bw_abuf_byte(b, '\n');
    } else if (part == 'I' && bw_audit_want_i(r)) {
        section(r, b, 'I');
        bw_abuf_str(b, bw_audit_fake_body(r->pool, r->tx, &r->san));
        bw_abuf_byte(b, '\n');
    }
}

void bw_audit_native(bw_audit_rec_t *r, bw_abuf_t *b)
{
    const bw_tx_t *tx = r->tx;
    const char *p;
    for (p = r->parts; *p; p++) {
        switch (*p) {
        case 'A':
            section(r, b, 'A');
            part_a(r, b);
            break;
        case 'B':
            section(r, b, 'B');
            bw_abuf_line_safe(b, r->request_line);
            bw_abuf_byte(b, '\n');
            header_lines(b, r->pool, tx->req.headers, r->san.req_headers);
            bw_abuf_byte(b, '\n');
            break;
        case 'C':
        case 'I':
            body_part(r, b, *p);
            break;
        case 'F':
            section(r, b, 'F');
            part_f(r, b);
            break;
        case 'E':
            section(r, b, 'E');
            if (tx->resbody)
                bw_abuf_add(b, tx->resbody, tx->resbody_len);
            bw_abuf_byte(b, '\n');
            break;
        case 'H':
            section(r, b, 'H');
            part_h(r, b);
            break;
        case 'J':
            /* ModSecurity writes J for every multipart body, files or not */
            if (!tx->files->nelts && !r->multipart)
                break;
            section(r, b, 'J');
            part_j(r, b);
            break;
        case 'K':
            section(r, b, 'K');
            part_k(r, b);
            break;
        case 'Z':
            section(r, b, 'Z');
            bw_abuf_byte(b, '\n');
            break;
        default:
            break;
        }
    }
}
