/*
 * Transactions: everything the engine knows about one request and its
 * response. Request data is split once (path, query string, ARGS_GET,
 * cookies); the body goes, as it arrives and within the configured limits,
 * to the processor chosen by Content-Type or ctl:requestBodyProcessor, and
 * is kept whole only where ModSecurity needs it (URLENCODED, REQUEST_BODY);
 * phases are run in order by bw_tx_run_phase().
 */
#include <string.h>
#include <ctype.h>
#include <apr_file_io.h>
#include "run/bw_run.h"

static apr_status_t tx_cleanup(void *data)
{
    bw_tx_t *tx = data;
    if (tx->md)
        pcre2_match_data_free(tx->md);
    if (tx->mctx)
        pcre2_match_context_free(tx->mctx);
    tx->md = NULL;
    tx->mctx = NULL;
    return APR_SUCCESS;
}

void bw_tx_log_message(bw_tx_t *tx, int level, const char *fmt, ...)
{
    va_list ap;
    char *text;
    if (!tx->cb || !tx->cb->message)
        return;
    va_start(ap, fmt);
    text = apr_pvsprintf(tx->pool, fmt, ap);
    va_end(ap);
    tx->cb->message(tx->cb->baton, tx, level, text);
}

bw_coll_t *bw_tx_collection(bw_tx_t *tx, const char *name, int create)
{
    bw_coll_t *c;
    if (tx->tx_coll && name[0] == 'T' && name[1] == 'X' && !name[2])
        return tx->tx_coll;   /* most of the lookups, without hashing */
    c = apr_hash_get(tx->colls, name, APR_HASH_KEY_STRING);
    if (!c && create) {
        c = bw_coll_create(tx->pool, name);
        apr_hash_set(tx->colls, name, APR_HASH_KEY_STRING, c);
    }
    return c;
}

/* ---- request line and headers -------------------------------------------- */

static int arg_sink_add(void *ctx, bw_str_t name, bw_str_t value);
static void choose_processor(bw_tx_t *tx);

static int count_args(const bw_tx_t *tx)
{
    return (tx->args_get ? tx->args_get->nelts : 0) + (tx->args_post ? tx->args_post->nelts : 0)
        + tx->args_post_counted;
}

/* sink for ARGS_GET: the limit counts both collections, as ModSecurity does */
static int get_sink_add(void *ctx, bw_str_t name, bw_str_t value)
{
    bw_tx_t *tx = ctx;
    bw_kv_t *kv;
    if (count_args(tx) >= tx->cfg->args_limit)
        return -1;
    kv = apr_array_push(tx->args_get);
    kv->name = name;
    kv->value = value;
    return 0;
}

void bw_tx_parse_request_line(bw_tx_t *tx)
{
    const char *u = tx->req.uri.data ? tx->req.uri.data : "";
    size_t len = tx->req.uri.len, start = 0, q, i;
    bw_body_result_t res;
    bw_body_sink_t sink;

    /* absolute-form: scheme://authority/path — REQUEST_FILENAME starts at the path */
    for (i = 0; i + 2 < len && (isalnum((unsigned char)u[i]) || u[i] == '+' || u[i] == '-' || u[i] == '.'); i++)
        ;
    if (i > 0 && i + 2 < len && u[i] == ':' && u[i + 1] == '/' && u[i + 2] == '/') {
        start = i + 3;
        while (start < len && u[start] != '/' && u[start] != '?')
            start++;
    }
    for (q = start; q < len && u[q] != '?' && u[q] != '#'; q++)
        ;
    tx->uri_path = bw_str_n(u + start, q - start);
    /* REQUEST_FILENAME is the path %-decoded as httpd decodes r->uri, as in
     * mod_security2 (CRS rules match on it without t:urlDecode) */
    tx->filename = bw_str_pct_decode(tx->pool, tx->uri_path);
    tx->query_string = bw_str_n("", 0);
    if (q < len && u[q] == '?') {
        size_t e = q + 1;
        while (e < len && u[e] != '#')
            e++;
        tx->query_string = bw_str_n(u + q + 1, e - q - 1);
    }
    for (i = tx->filename.len; i > 0 && tx->filename.data[i - 1] != '/'; i--)
        ;
    tx->basename = bw_str_n(tx->filename.data + i, tx->filename.len - i);

    tx->args_get = apr_array_make(tx->pool, 8, sizeof(bw_kv_t));
    memset(&res, 0, sizeof(res));
    memset(&sink, 0, sizeof(sink));
    sink.ctx = tx;
    sink.add_arg = get_sink_add;
    if (tx->query_string.len)
        bw_body_urlencoded(tx->pool, tx->query_string, (char)tx->cfg->arg_separator, &sink, &res);
    tx->urlencoded_error_get = res.urlencoded_error;
}

/* Cookie: a=b; c=d — version 0 format (SecCookieFormat 0). Names and values
 * are kept as sent (quotes included); a part without '=' is a name with an
 * empty value. */
static void parse_cookie_header(bw_tx_t *tx, bw_str_t h)
{
    size_t i = 0;
    while (i < h.len) {
        size_t s, e, eq;
        bw_kv_t *kv;
        while (i < h.len && (h.data[i] == ' ' || h.data[i] == '\t' || h.data[i] == ';'))
            i++;
        if (i >= h.len)
            break;
        s = i;
        while (i < h.len && h.data[i] != ';')
            i++;
        e = i;
        while (e > s && (h.data[e - 1] == ' ' || h.data[e - 1] == '\t'))
            e--;
        for (eq = s; eq < e && h.data[eq] != '='; eq++)
            ;
        kv = apr_array_push(tx->cookies);
        if (eq < e) {
            size_t ne = eq;
            while (ne > s && h.data[ne - 1] == ' ')
                ne--;
            kv->name = bw_str_n(h.data + s, ne - s);
            kv->value = bw_str_n(h.data + eq + 1, e - eq - 1);
        } else {
            kv->name = bw_str_n(h.data + s, e - s);
            kv->value = bw_str_n("", 0);
        }
    }
}

void bw_tx_build_cookies(bw_tx_t *tx)
{
    int i;
    tx->cookies = apr_array_make(tx->pool, 4, sizeof(bw_kv_t));
    if (!tx->req.headers)
        return;
    for (i = 0; i < tx->req.headers->nelts; i++) {
        const bw_kv_t *h = &((const bw_kv_t *)tx->req.headers->elts)[i];
        if (bw_str_eq_cstr_ci(h->name, "Cookie"))
            parse_cookie_header(tx, h->value);
    }
}

static void apply_settings(bw_tx_t *tx)
{
    tx->cfg = &tx->prog->settings;
    tx->engine_mode = tx->cfg->rule_engine;
    tx->reqbody_access = tx->cfg->reqbody_access;
    tx->resbody_access = tx->cfg->resbody_access;
    tx->reqbody_limit = tx->cfg->reqbody_limit;
    tx->resbody_limit = tx->cfg->resbody_limit;
    tx->audit_engine = tx->cfg->audit_engine;
    tx->hash_engine = tx->hash_enforcement = tx->cfg->hash_engine == 1;
    tx->tfn_env.unicode_map = tx->cfg->unicode_map;
    bw_tx_spawn_setup(tx);
    if (tx->mctx) {
        pcre2_set_match_limit(tx->mctx, (uint32_t)tx->cfg->pcre_match_limit);
        pcre2_set_depth_limit(tx->mctx, (uint32_t)tx->cfg->pcre_recursion_limit);
    }
}

/* bw_tx_alloc past the end of its block: a larger piece gets memory of
 * its own (the block keeps what it has left), a smaller one a new block. */
#define TX_MEM_BLOCK 8192

void *bw_tx_alloc_more(bw_tx_t *tx, size_t n)
{
    void *r;
    if (n > TX_MEM_BLOCK / 4)
        return apr_palloc(tx->pool, n);
    tx->mem.p = apr_palloc(tx->pool, TX_MEM_BLOCK);
    tx->mem.left = TX_MEM_BLOCK - n;
    r = tx->mem.p;
    tx->mem.p += n;
    return r;
}

/* An array for values the executor fills and refills: every element is
 * written before it is read, so its room is not zeroed (apr_array_make
 * would, 3 KB per array and transaction). */
apr_array_header_t *bw_scratch_array(apr_pool_t *p, int n, int size)
{
    apr_array_header_t *a = apr_palloc(p, sizeof(*a));
    a->pool = p;
    a->elt_size = size;
    a->nelts = 0;
    a->nalloc = n;
    a->elts = apr_palloc(p, (size_t)n * (size_t)size);
    return a;
}

bw_tx_t *bw_tx_create(apr_pool_t *pool, const bw_program_t *prog,
                      const bw_request_t *req, const bw_callbacks_t *cb)
{
    bw_tx_t *tx = apr_pcalloc(pool, sizeof(*tx));
    tx->pool = pool;
    tx->prog = prog;
    tx->req = *req;
    if (!tx->req.headers)
        tx->req.headers = apr_array_make(pool, 1, sizeof(bw_kv_t));
    if (!tx->req.start)
        tx->req.start = apr_time_now();
    tx->cb = cb;
    tx->md = pcre2_match_data_create(32, NULL);
    tx->mctx = pcre2_match_context_create(NULL);
    apr_pool_cleanup_register(pool, tx, tx_cleanup, apr_pool_cleanup_null);
    apply_settings(tx);
    apr_pool_create(&tx->scratch, pool);
    tx->colls = apr_hash_make(pool);
    tx->tx_coll = bw_tx_collection(tx, "TX", 1);
    tx->args_post = apr_array_make(pool, 8, sizeof(bw_kv_t));
    tx->files = apr_array_make(pool, 1, sizeof(bw_body_file_t));
    tx->part_headers = apr_array_make(pool, 1, sizeof(bw_kv_t));
    tx->removals = apr_array_make(pool, 4, sizeof(bw_removal_t));
    tx->matches = apr_array_make(pool, 8, sizeof(bw_match_record_t));
    tx->audit_msgs = apr_array_make(pool, 4, sizeof(const char *));
    tx->vals = bw_scratch_array(pool, 64, sizeof(bw_varval_t));
    tx->vals_tmp = bw_scratch_array(pool, 64, sizeof(bw_varval_t));
    bw_src_reset(tx);
    tx->matched_vars = apr_array_make(pool, 8, sizeof(bw_varval_t));
    tx->cur_matched = apr_array_make(pool, 8, sizeof(bw_varval_t));
    tx->highest_severity = 255;
    bw_tx_parse_request_line(tx);
    bw_tx_build_cookies(tx);
    /* REQBODY_PROCESSOR is known from the headers, before phase 1 */
    choose_processor(tx);
    return tx;
}

void bw_tx_set_program(bw_tx_t *tx, const bw_program_t *prog)
{
    /* what a ctl: of phase 1 changed stays changed under the new settings */
    bw_tx_t before = *tx;
    const bw_settings_t *old = tx->cfg;
    int same = prog == tx->prog;
    tx->prog = prog;
    if (!same)   /* sources, nodes and units are the program's own */
        bw_src_reset(tx);
    apply_settings(tx);
    if (before.engine_mode != old->rule_engine)
        tx->engine_mode = before.engine_mode;
    if (before.audit_engine != old->audit_engine)
        tx->audit_engine = before.audit_engine;
    if (before.reqbody_access != old->reqbody_access)
        tx->reqbody_access = before.reqbody_access;
    if (before.resbody_access != old->resbody_access)
        tx->resbody_access = before.resbody_access;
    if (before.reqbody_limit != old->reqbody_limit)
        tx->reqbody_limit = before.reqbody_limit;
    if (before.resbody_limit != old->resbody_limit)
        tx->resbody_limit = before.resbody_limit;
    if (before.hash_engine != (old->hash_engine == 1))
        tx->hash_engine = before.hash_engine;
    if (before.hash_enforcement != (old->hash_engine == 1))
        tx->hash_enforcement = before.hash_enforcement;
}

void bw_tx_set_env(bw_tx_t *tx, apr_table_t *env)
{
    tx->env = env;
}

void bw_tx_set_identity(bw_tx_t *tx, const char *remote_user, const char *auth_type)
{
    tx->req.remote_user = bw_str_make(remote_user ? apr_pstrdup(tx->pool, remote_user) : NULL);
    tx->req.auth_type = bw_str_make(auth_type ? apr_pstrdup(tx->pool, auth_type) : NULL);
}

int bw_tx_engine_mode(const bw_tx_t *tx)
{
    return tx->engine_mode;
}

int bw_tx_request_body_access(const bw_tx_t *tx)
{
    return tx->reqbody_access == 1;
}

const apr_array_header_t *bw_tx_matches(const bw_tx_t *tx)
{
    return tx->matches;
}

void bw_tx_collection_dump(const bw_tx_t *tx, const char *collection, apr_array_header_t *out)
{
    bw_coll_t *c = apr_hash_get(tx->colls, collection, APR_HASH_KEY_STRING);
    int i;
    if (!c)
        return;
    for (i = 0; i < c->order->nelts; i++) {
        const bw_kv_t *kv = ((const bw_kv_t **)c->order->elts)[i];
        if (kv->name.data)
            *(bw_kv_t *)apr_array_push(out) = *kv;
    }
}

/* ---- request body --------------------------------------------------------- */

static const char *header_value(const bw_tx_t *tx, const char *name)
{
    int i;
    for (i = 0; i < tx->req.headers->nelts; i++) {
        const bw_kv_t *h = &((const bw_kv_t *)tx->req.headers->elts)[i];
        if (bw_str_eq_cstr_ci(h->name, name))
            return bw_str_pdup(tx->pool, h->value);
    }
    return NULL;
}

/* The next element of an array of bw_kv_t, doubled when full without
 * apr_array_push's zeroing of the new half (a body's thousands of
 * arguments, each written whole at once). */
static bw_kv_t *kv_push(apr_array_header_t *a)
{
    if (a->nelts == a->nalloc) {
        int cap = a->nalloc ? 2 * a->nalloc : 8;
        char *e = apr_palloc(a->pool, sizeof(bw_kv_t) * (size_t)cap);
        if (a->nelts)
            memcpy(e, a->elts, sizeof(bw_kv_t) * (size_t)a->nelts);
        a->elts = e;
        a->nalloc = cap;
    }
    return &((bw_kv_t *)a->elts)[a->nelts++];
}

static int arg_sink_add(void *ctx, bw_str_t name, bw_str_t value)
{
    bw_tx_t *tx = ctx;
    bw_kv_t *kv;
    if (count_args(tx) >= tx->cfg->args_limit)
        return -1;
    kv = kv_push(tx->args_post);
    kv->name = name;
    kv->value = value;
    return 0;
}

static int file_sink_add(void *ctx, const bw_body_file_t *f)
{
    bw_tx_t *tx = ctx;
    *(bw_body_file_t *)apr_array_push(tx->files) = *f;
    return 0;
}

static int part_header_add(void *ctx, bw_str_t part, bw_str_t header)
{
    bw_tx_t *tx = ctx;
    bw_kv_t *kv = apr_array_push(tx->part_headers);
    kv->name = part;
    kv->value = header;
    return 0;
}

static void choose_processor(bw_tx_t *tx)
{
    const char *ct;
    if (tx->reqbody_processor_set)
        return;
    ct = header_value(tx, "Content-Type");
    if (!ct)
        return;
    if (!strncasecmp(ct, "application/x-www-form-urlencoded", 33))
        tx->reqbody_processor = "URLENCODED";
    else if (!strncasecmp(ct, "multipart/form-data", 19))
        tx->reqbody_processor = "MULTIPART";
}

/* What the request body needs between chunks. The sink and the limits live
 * here, not on a stack, because a streaming processor keeps pointers to
 * them from the first chunk to bw_body_finish. */
struct bw_reqbody_s {
    bw_body_sink_t sink;
    bw_body_limits_t lim;
    bw_body_parser_t *parser;    /* MULTIPART, JSON or XML, fed as data arrives */
    int started;                 /* the first chunk came: processor fixed */
    int keep;                    /* tx->reqbody collects the body */
    int external;                /* the caller keeps the raw body */
    int uploads_done;            /* bw_tx_finish_uploads ran */
    const char *limit_name;      /* the limit the body went past, or NULL */
    apr_int64_t limit_value;
    int announced;               /* Content-Length said so before any byte */
    bw_charset_dec_t *dec;       /* UTF-16/32 to UTF-8 for the processors, or NULL */
    int guess;                   /* no processor: the content chooses one at the end */
    int guess_raw;               /* ... but past SecRequestBodyNoFilesLimit it was no
                                    text format: REQUEST_BODY keeps the first bytes */
    /* BulwarkOpenAPI without the JSON processor: a JSON parser that makes
     * no arguments, only the events the validator reads */
    bw_body_parser_t *oas_parser;
    bw_body_sink_t oas_sink;
    bw_body_result_t oas_res;
};

static struct bw_reqbody_s *reqbody_state(bw_tx_t *tx)
{
    if (!tx->rb)
        tx->rb = apr_pcalloc(tx->pool, sizeof(*tx->rb));
    return tx->rb;
}

static int processor_is(const bw_tx_t *tx, const char *name)
{
    return tx->reqbody_processor && !strcmp(tx->reqbody_processor, name);
}

/* SecRequestBodyNoFilesLimit bounds what a processor holds as arguments or
 * text: every processor but MULTIPART (whose file parts go to disk, so it is
 * checked at the end without them), and a body kept for REQUEST_BODY. A
 * body no processor reads is bounded by SecRequestBodyLimit alone, as in
 * mod_security2. */
static int nofiles_applies(const bw_tx_t *tx)
{
    if (processor_is(tx, "MULTIPART"))
        return 0;
    if (tx->rb && tx->rb->guess && !tx->rb->guess_raw)
        return 1;
    return tx->reqbody_processor != NULL || tx->force_reqbody_var;
}

/* Record the first limit hit and what it means: refuse the request (413),
 * or inspect what fitted. SecRequestBodyLimitAction ProcessPartial applies
 * to SecRequestBodyLimit only; past SecRequestBodyNoFilesLimit the request
 * is refused whatever the action, as in mod_security2. DetectionOnly never
 * disrupts: it inspects what fitted. Returns -1. */
static int reqbody_limit_hit(bw_tx_t *tx, const char *name, apr_int64_t value, int announced)
{
    struct bw_reqbody_s *rb = reqbody_state(tx);
    int partial = tx->cfg->reqbody_limit_action != 0 && !strcmp(name, "SecRequestBodyLimit");
    if (!rb->limit_name) {
        rb->limit_name = name;
        rb->limit_value = value;
        rb->announced = announced;
    }
    if (!partial && tx->engine_mode != BW_ENGINE_DETECTION_ONLY)
        tx->reqbody_rejected = 413;
    else
        tx->reqbody_truncated = 1;
    return -1;
}

/* Where stored file parts go, or NULL: not stored. */
static const char *upload_dir(const bw_tx_t *tx)
{
    if (tx->cfg->upload_keep_files <= 0 && tx->cfg->tmp_save_uploaded_files != 1)
        return NULL;
    return tx->cfg->upload_dir ? tx->cfg->upload_dir : tx->cfg->tmp_dir;
}

/* The first chunk fixes the processor (phase 1's ctl: actions have run):
 * create the streaming one, decide whether the body is kept. */
static void reqbody_start(bw_tx_t *tx)
{
    struct bw_reqbody_s *rb = reqbody_state(tx);
    const bw_settings_t *c = tx->cfg;
    const bw_json_observer_t *ob;

    rb->started = 1;
    rb->sink.ctx = tx;
    rb->sink.add_arg = arg_sink_add;
    rb->sink.add_file = file_sink_add;
    rb->sink.add_part_header = part_header_add;
    rb->lim.json_depth = c->json_depth_limit;
    rb->lim.args_limit = c->args_limit;
    rb->lim.upload_file_limit = c->upload_file_limit;
    rb->lim.upload_dir = upload_dir(tx);
    rb->lim.upload_file_mode = c->upload_file_mode;
    rb->lim.arg_separator = (char)c->arg_separator;
    rb->lim.upload_text_limit = c->upload_text_limit > 0 ? (apr_size_t)c->upload_text_limit : 0;
    /* SecRequestBodyProcessorGuess: a body no processor claims is kept,
     * and its content chooses one when it is complete */
    rb->guess = !tx->reqbody_processor && c->reqbody_guess == 1;
    /* BulwarkOpenAPI: the JSON body's events go to the validator, from the
     * JSON processor when it reads the body, else from a parser of its own */
    if (processor_is(tx, "JSON") && tx->prog->body_args_counted) {
        rb->sink.add_arg = NULL;
        /* counted as arg_sink_add would keep them: the limit counts ARGS_GET too */
        rb->sink.arg_count = &tx->args_post_counted;
        rb->sink.arg_room = tx->cfg->args_limit - count_args(tx);
    }
    if ((ob = bw_tx_openapi_observer(tx))) {
        if (processor_is(tx, "JSON")) {
            rb->sink.json = ob;
        } else {
            rb->oas_sink.json = ob;
            rb->oas_parser = bw_body_json_create(tx->pool, &rb->lim, &rb->oas_sink, &rb->oas_res);
        }
    }
    tx->reqbody_guess_kept = rb->guess;
    rb->keep = !rb->external || processor_is(tx, "URLENCODED") || tx->force_reqbody_var
        || rb->guess;
    /* a UTF-16/32 JSON or form body reaches the processor as UTF-8; XML
     * declares its own encoding, which libxml2 reads */
    if (processor_is(tx, "JSON") || processor_is(tx, "URLENCODED") || rb->guess || rb->oas_parser)
        rb->dec = bw_charset_dec_create(tx->pool,
                                        bw_body_charset_param(tx->pool, header_value(tx, "Content-Type")));
    if (processor_is(tx, "MULTIPART"))
        rb->parser = bw_body_multipart_create(tx->pool, header_value(tx, "Content-Type"),
                                              &rb->lim, &rb->sink, &tx->body_res);
    else if (processor_is(tx, "JSON"))
        rb->parser = bw_body_json_create(tx->pool, &rb->lim, &rb->sink, &tx->body_res);
    else if (processor_is(tx, "XML"))
        rb->parser = bw_body_xml_create(tx->pool, &rb->lim, &rb->sink, &tx->body_res);
}

static void reqbody_keep(bw_tx_t *tx, const char *data, apr_size_t len)
{
    if (tx->reqbody_len + len > tx->reqbody_cap) {
        apr_size_t cap = tx->reqbody_cap ? tx->reqbody_cap : 8192;
        char *n;
        while (cap < tx->reqbody_len + len)
            cap *= 2;
        n = apr_palloc(tx->pool, cap + 1);
        if (tx->reqbody_len)
            memcpy(n, tx->reqbody, tx->reqbody_len);
        tx->reqbody = n;
        tx->reqbody_cap = cap;
    }
    memcpy(tx->reqbody + tx->reqbody_len, data, len);
    tx->reqbody_len += len;
    tx->reqbody[tx->reqbody_len] = '\0';
}

void bw_tx_request_body_external(bw_tx_t *tx)
{
    reqbody_state(tx)->external = 1;
}

int bw_tx_request_body_expect(bw_tx_t *tx, apr_int64_t length)
{
    if (tx->reqbody_access != 1 || length <= tx->reqbody_limit
        || tx->cfg->reqbody_limit_action != 0 || tx->engine_mode != BW_ENGINE_ON)
        return 0;
    reqbody_limit_hit(tx, "SecRequestBodyLimit", tx->reqbody_limit, 1);
    return tx->reqbody_rejected;
}

/* Whether a guessed body that outgrew SecRequestBodyNoFilesLimit is in a
 * text format (then the limit holds, as for a declared one): judged on what
 * was kept so far, or on this chunk when it is the first. */
static int guess_is_text(bw_tx_t *tx, const char *data, apr_size_t len)
{
    if (tx->reqbody_len)
        return bw_body_sniff(bw_str_n(tx->reqbody, tx->reqbody_len)) != NULL;
    return bw_body_sniff(bw_str_n(data, len)) != NULL;
}

static void reqbody_decode_error(bw_tx_t *tx, const char *err)
{
    if (!tx->body_res.error) {
        tx->body_res.error = 1;
        tx->body_res.error_msg = err;
    }
}

/* Bytes of the body, as the processors are to read them (decoded from
 * UTF-16/32 when that is what they are): kept, fed to the streaming
 * processor. A guessed body of no text format keeps only its first
 * SecRequestBodyNoFilesLimit bytes. */
static void reqbody_consume(bw_tx_t *tx, const char *data, apr_size_t len)
{
    struct bw_reqbody_s *rb = tx->rb;
    const char *err = NULL;
    size_t n = len;
    if (rb->dec && bw_charset_dec_feed(rb->dec, data, len, &data, &n, &err) < 0) {
        reqbody_decode_error(tx, err);
        return;
    }
    if (rb->keep) {
        apr_size_t k = n;
        if (rb->guess_raw) {
            apr_size_t cap = (apr_size_t)tx->cfg->reqbody_nofiles_limit;
            k = tx->reqbody_len >= cap ? 0 : (cap - tx->reqbody_len < n ? cap - tx->reqbody_len : n);
        }
        if (k)
            reqbody_keep(tx, data, k);
    }
    if (rb->parser && n)
        bw_body_feed(rb->parser, data, n);
    if (rb->oas_parser && n)
        bw_body_feed(rb->oas_parser, data, n);
}

int bw_tx_request_body_append(bw_tx_t *tx, const char *data, apr_size_t len)
{
    struct bw_reqbody_s *rb = reqbody_state(tx);
    const char *name = "SecRequestBodyLimit";
    apr_int64_t limit = tx->reqbody_limit;
    apr_size_t room;

    if (tx->reqbody_rejected || tx->reqbody_truncated || tx->reqbody_done)
        return -1;
    if (len == 0)
        return 0;
    if (!rb->started)
        reqbody_start(tx);
    if (nofiles_applies(tx) && tx->cfg->reqbody_nofiles_limit < limit) {
        name = "SecRequestBodyNoFilesLimit";
        limit = tx->cfg->reqbody_nofiles_limit;
    }
    room = limit > tx->reqbody_seen ? (apr_size_t)(limit - tx->reqbody_seen) : 0;
    if (len > room && rb->guess && !guess_is_text(tx, data, len)) {
        /* not a text format after all: a body of any size may pass, as
         * without guessing; REQUEST_BODY shows its first bytes */
        rb->guess_raw = 1;
        name = "SecRequestBodyLimit";
        limit = tx->reqbody_limit;
        room = limit > tx->reqbody_seen ? (apr_size_t)(limit - tx->reqbody_seen) : 0;
    }
    if (len > room) {
        reqbody_limit_hit(tx, name, limit, 0);
        if (tx->reqbody_rejected)
            return -1;
        len = room;
    }
    tx->reqbody_seen += (apr_off_t)len;
    reqbody_consume(tx, data, len);
    return tx->reqbody_truncated ? -1 : 0;
}

int bw_tx_request_body_rejected(const bw_tx_t *tx)
{
    return tx->reqbody_rejected;
}

const char *bw_tx_request_body_limit(const bw_tx_t *tx, apr_int64_t *value, int *announced)
{
    if (!tx->rb || !tx->rb->limit_name)
        return NULL;
    if (value)
        *value = tx->rb->limit_value;
    if (announced)
        *announced = tx->rb->announced;
    return tx->rb->limit_name;
}

/* A multipart body's file parts are on disk, so SecRequestBodyNoFilesLimit
 * counts the rest (boundaries, part headers, fields); the file sizes are
 * only known once the parts are parsed. */
static void multipart_nofiles_check(bw_tx_t *tx)
{
    apr_off_t files = 0;
    int i;
    for (i = 0; i < tx->files->nelts; i++)
        files += ((const bw_body_file_t *)tx->files->elts)[i].size;
    if (tx->reqbody_seen - files > tx->cfg->reqbody_nofiles_limit)
        reqbody_limit_hit(tx, "SecRequestBodyNoFilesLimit", tx->cfg->reqbody_nofiles_limit, 0);
}

/* The end of the body: the streaming processor finishes, a URLENCODED body
 * (whole, as ModSecurity parses it) is split. */
/* Runs processor name over the kept body, into tx's arguments. An XML
 * guess that fails is not an error: markup-like prose (an HTML note) is no
 * XML document and is inspected raw; JSON and URL-encoded guesses stand,
 * so a body shaped like JSON that the parser refuses is refused like a
 * declared one (a lenient backend may read it). Returns 1 when the
 * processor took the body. */
static int run_guessed(bw_tx_t *tx, const char *name)
{
    struct bw_reqbody_s *rb = tx->rb;
    bw_str_t body = bw_str_n(tx->reqbody ? tx->reqbody : "", tx->reqbody_len);
    bw_body_result_t xr;
    bw_body_parser_t *bp;
    if (!strcmp(name, "URLENCODED")) {
        bw_body_urlencoded(tx->pool, body, rb->lim.arg_separator, &rb->sink, &tx->body_res);
        return 1;
    }
    if (!strcmp(name, "JSON")) {
        bp = bw_body_json_create(tx->pool, &rb->lim, &rb->sink, &tx->body_res);
        bw_body_feed(bp, body.data, body.len);
        bw_body_finish(bp);
        return 1;
    }
    memset(&xr, 0, sizeof(xr));
    bp = bw_body_xml_create(tx->pool, &rb->lim, &rb->sink, &xr);
    bw_body_feed(bp, body.data, body.len);
    bw_body_finish(bp);
    if (xr.error)
        return 0;
    tx->body_res.xml_doc = xr.xml_doc;
    return 1;
}

/* SecRequestBodyProcessorGuess at the end of the body: a body no processor
 * claimed gets the one its content calls for (REQBODY_PROCESSOR and
 * REQBODY_PROCESSOR_GUESSED name it); a URL-encoded body that carries JSON
 * or XML is read as that too, its form arguments kept. */
static void guess_processor(bw_tx_t *tx)
{
    struct bw_reqbody_s *rb = tx->rb;
    const char *name;
    if (tx->body_res.error || (rb->guess && rb->guess_raw))
        return;
    if (!rb->guess && !(tx->cfg->reqbody_guess == 1 && processor_is(tx, "URLENCODED")))
        return;
    name = bw_body_sniff(bw_str_n(tx->reqbody, tx->reqbody_len));
    if (!name || (!rb->guess && !strcmp(name, "URLENCODED")))
        return;
    if (!run_guessed(tx, name))
        return;
    tx->reqbody_guessed = name;
    if (rb->guess)
        tx->reqbody_processor = name;
}

void bw_tx_process_request_body(bw_tx_t *tx)
{
    struct bw_reqbody_s *rb = reqbody_state(tx);
    if (rb->dec) {
        const char *rest, *err = NULL;
        size_t n = 0;
        if (bw_charset_dec_finish(rb->dec, &rest, &n, &err) < 0)
            reqbody_decode_error(tx, err);
        else if (n) {
            /* a body shorter than a byte order mark was held back */
            if (rb->keep)
                reqbody_keep(tx, rest, n);
            if (rb->parser)
                bw_body_feed(rb->parser, rest, n);
            if (rb->oas_parser)
                bw_body_feed(rb->oas_parser, rest, n);
        }
    }
    if (rb->oas_parser)
        bw_body_finish(rb->oas_parser);
    if (rb->parser) {
        bw_body_finish(rb->parser);
        if (processor_is(tx, "MULTIPART"))
            multipart_nofiles_check(tx);
    } else if (processor_is(tx, "URLENCODED")) {
        bw_body_urlencoded(tx->pool, bw_str_n(tx->reqbody ? tx->reqbody : "", tx->reqbody_len),
                           rb->lim.arg_separator, &rb->sink, &tx->body_res);
    }
    guess_processor(tx);
    if (tx->body_res.error && !tx->body_res.error_msg)
        tx->body_res.error_msg = "request body processor failed";
}

/* Why the JSON the validator read is no JSON document, or NULL. */
static const char *openapi_parse_error(const bw_tx_t *tx)
{
    const struct bw_reqbody_s *rb = tx->rb;
    if (rb->oas_parser)
        return rb->oas_res.error ? rb->oas_res.error_msg : NULL;
    return processor_is(tx, "JSON") && tx->body_res.error ? tx->body_res.error_msg : NULL;
}

void bw_tx_request_body_end(bw_tx_t *tx)
{
    if (tx->reqbody_done)
        return;
    tx->reqbody_done = 1;
    tx->cls_gen[BW_SRC_BODY]++;    /* ARGS, REQUEST_BODY, XML… are made of it from now on */
    bw_src_stale(tx);
    if (tx->reqbody_access != 1 || tx->reqbody_rejected || !tx->rb || !tx->rb->started) {
        if (tx->reqbody_access == 1 && !tx->reqbody_rejected)
            bw_tx_openapi_body_end(tx, 0, NULL);
        return;
    }
    bw_tx_process_request_body(tx);
    bw_tx_openapi_body_end(tx, tx->reqbody_seen > 0, openapi_parse_error(tx));
}

void bw_tx_finish_uploads(bw_tx_t *tx)
{
    int keep, i;
    if (!tx->rb || tx->rb->uploads_done)
        return;
    tx->rb->uploads_done = 1;
    keep = tx->cfg->upload_keep_files == 1
        || (tx->cfg->upload_keep_files == 2 && tx->matches->nelts > 0);
    for (i = 0; !keep && i < tx->files->nelts; i++) {
        bw_body_file_t *f = &((bw_body_file_t *)tx->files->elts)[i];
        if (f->tmp_name && apr_file_remove(f->tmp_name, tx->pool) != APR_SUCCESS)
            bw_tx_log_message(tx, 1, "cannot remove the uploaded file %s", f->tmp_name);
        f->tmp_name = NULL;
    }
}

/* ---- response --------------------------------------------------------------- */

void bw_tx_set_response(bw_tx_t *tx, const bw_response_t *res)
{
    tx->cls_gen[BW_SRC_RESPONSE]++;
    bw_src_stale(tx);
    tx->res = *res;
    if (!tx->res.headers)
        tx->res.headers = apr_array_make(tx->pool, 1, sizeof(bw_kv_t));
    tx->have_response = 1;
}

int bw_tx_wants_response_body(bw_tx_t *tx, const char *content_type)
{
    static const char *const defaults[] = { "text/plain", "text/html", NULL };
    const apr_array_header_t *types = tx->cfg->resbody_mime_types;
    size_t n;
    int i;
    if (tx->resbody_access != 1 || tx->engine_mode == BW_ENGINE_OFF || !content_type)
        return 0;
    n = strcspn(content_type, "; \t");
    if (!types) {
        for (i = 0; defaults[i]; i++)
            if (strlen(defaults[i]) == n && !strncasecmp(defaults[i], content_type, n))
                return 1;
        return 0;
    }
    for (i = 0; i < types->nelts; i++) {
        const char *t = ((const char **)types->elts)[i];
        if (strlen(t) == n && !strncasecmp(t, content_type, n))
            return 1;
    }
    return 0;
}

int bw_tx_response_body_append(bw_tx_t *tx, const char *data, apr_size_t len)
{
    if (tx->resbody_truncated)
        return -1;
    if ((apr_int64_t)(tx->resbody_len + len) > tx->resbody_limit) {
        tx->resbody_truncated = 1;
        len = (apr_size_t)(tx->resbody_limit - (apr_int64_t)tx->resbody_len);
    }
    if (tx->resbody_len + len + 1 > tx->resbody_cap) {
        apr_size_t cap = tx->resbody_cap ? tx->resbody_cap : 8192;
        char *n;
        while (cap < tx->resbody_len + len + 1)
            cap *= 2;
        n = apr_palloc(tx->pool, cap);
        if (tx->resbody_len)
            memcpy(n, tx->resbody, tx->resbody_len);
        tx->resbody = n;
        tx->resbody_cap = cap;
    }
    if (len)
        memcpy(tx->resbody + tx->resbody_len, data, len);
    tx->resbody_len += len;
    tx->resbody[tx->resbody_len] = '\0';
    if (tx->resbody_truncated)
        return tx->cfg->resbody_limit_action == 0 ? -1 : 0;
    return 0;
}

/* ---- phases --------------------------------------------------------------------- */

int bw_tx_run_phase(bw_tx_t *tx, int phase, bw_intervention_t *iv)
{
    int rc;
    memset(iv, 0, sizeof(*iv));
    if (phase < 1 || phase > BW_PHASES || tx->phase_done[phase])
        return 0;
    tx->phase_done[phase] = 1;
    if (tx->engine_mode == BW_ENGINE_OFF)
        return 0;
    if (phase == BW_PHASE_REQUEST_BODY && !tx->reqbody_done)
        bw_tx_request_body_end(tx);
    if (phase == BW_PHASE_RESPONSE_BODY)
        bw_tx_stream_response(tx);
    if (tx->intercepted && phase != BW_PHASE_LOGGING)
        return 0;
    if (tx->allow_level == 3 && phase != BW_PHASE_LOGGING)
        return 0;
    if (tx->allow_level == 2 && phase <= BW_PHASE_REQUEST_BODY)
        return 0;
    rc = bw_tx_exec_phase(tx, phase);
    if (phase == BW_PHASE_LOGGING && !tx->persisted) {
        tx->persisted = 1;
        bw_persist_store_all(tx);
    }
    if (rc && tx->intercepted) {
        *iv = tx->iv;
        return 1;
    }
    return 0;
}
