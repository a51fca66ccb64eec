/*
 * SecRemoteRules KEY https://URL: rules downloaded once, while the
 * configuration is read, and parsed as if the file were included there.
 * Never at request time: the download happens in the directive itself, so
 * by the time a worker serves a request the rules are ordinary compiled
 * rules of the context.
 *
 * As in mod_security2 the key goes to the server in a "ModSec-key" header,
 * and SecRemoteRulesFailAction (Abort, the default, or Warn) says what a
 * failed download does: a start-up error, or a warning and no rules. It
 * applies to the SecRemoteRules lines after it in the same context.
 * What we add, because rules that decide what reaches an application must
 * come from the server named and nowhere else: only https:// (also after a
 * redirect, which is not followed), the peer's certificate and host name
 * verified, bounded connect and total times so a server that is down or
 * hangs cannot hold start-up, and a size limit. SecRemoteRulesCAFile and
 * SecRemoteRulesTimeout (Bulwark's own) set the CA bundle and the times.
 * A syntax error in downloaded rules is a start-up error whatever the fail
 * action: the server answered, and what it said is wrong.
 */
#include <string.h>
#include <curl/curl.h>
#include "lang/bw_lang.h"

#define BW_REMOTE_MAX_BYTES (32L * 1024 * 1024)

/* What arrived, as the chunks libcurl handed over (joined once at the end,
 * so no buffer is copied again as it grows). */
typedef struct {
    apr_pool_t *pool;
    apr_array_header_t *chunks;   /* bw_str_t */
    size_t len;
    int too_big;
} fetch_buf_t;

/* libcurl's write callback; past the limit it stops the transfer
 * (returning less than it was given makes libcurl fail it). */
static size_t on_data(char *data, size_t size, size_t n, void *baton)
{
    fetch_buf_t *b = baton;
    size_t add = size * n;
    if (b->len + add > (size_t)BW_REMOTE_MAX_BYTES) {
        b->too_big = 1;
        return 0;
    }
    *(bw_str_t *)apr_array_push(b->chunks) = bw_str_n(apr_pmemdup(b->pool, data, add), add);
    b->len += add;
    return add;
}

/* The chunks as one NUL-terminated text. */
static const char *joined(const fetch_buf_t *b)
{
    char *out = apr_palloc(b->pool, b->len + 1), *o = out;
    int i;
    for (i = 0; i < b->chunks->nelts; i++) {
        const bw_str_t *c = &((const bw_str_t *)b->chunks->elts)[i];
        memcpy(o, c->data, c->len);
        o += c->len;
    }
    *o = '\0';
    return out;
}

/* The options of one download: https only, verified, bounded in time. */
static void set_options(bw_config_t *cfg, CURL *c, const char *url,
                        struct curl_slist *hdrs, fetch_buf_t *b, char *errbuf)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (cfg->remote_ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, cfg->remote_ca_file);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)cfg->remote_connect_timeout);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)cfg->remote_timeout);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);   /* no SIGALRM in httpd */
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "Bulwark (SecRemoteRules)");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
}

/* Download url into *out / *out_len. Returns NULL or why it failed. */
static const char *fetch(bw_config_t *cfg, const char *key, const char *url,
                         const char **out, size_t *out_len)
{
    char errbuf[CURL_ERROR_SIZE] = "";
    fetch_buf_t b = { cfg->pool, apr_array_make(cfg->pool, 8, sizeof(bw_str_t)), 0, 0 };
    struct curl_slist *hdrs;
    const char *err = NULL;
    long status = 0;
    CURLcode rc;
    CURL *c;

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(c = curl_easy_init()))
        return "libcurl could not be initialised";
    hdrs = curl_slist_append(NULL, apr_pstrcat(cfg->pool, "ModSec-key: ", key, NULL));
    set_options(cfg, c, url, hdrs, &b, errbuf);
    rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (b.too_big)
        err = apr_psprintf(cfg->pool, "the rules are larger than %ld bytes", BW_REMOTE_MAX_BYTES);
    else if (rc != CURLE_OK)
        err = apr_pstrdup(cfg->pool, *errbuf ? errbuf : curl_easy_strerror(rc));
    else if (status != 200)
        err = apr_psprintf(cfg->pool, "the server answered HTTP %ld", status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    curl_global_cleanup();
    *out = joined(&b);
    *out_len = b.len;
    return err;
}

/* Errors of the downloaded text, taken back from cfg->errors (where the
 * reader files them) and returned as this directive's one error. */
static const char *take_errors(bw_config_t *cfg, int from)
{
    apr_array_header_t *mine;
    int i;
    if (cfg->errors->nelts <= from)
        return NULL;
    mine = apr_array_make(cfg->pool, cfg->errors->nelts - from, sizeof(char *));
    for (i = from; i < cfg->errors->nelts; i++)
        *(const char **)apr_array_push(mine) = ((const char **)cfg->errors->elts)[i];
    cfg->errors->nelts = from;
    /* one line: httpd prints a directive's error with "\n" escaped */
    return apr_psprintf(cfg->pool, "SecRemoteRules: the downloaded rules have errors: %s",
                        apr_array_pstrcat(cfg->pool, mine, ';'));
}

const char *bw_dir_remote_rules(bw_config_t *cfg, const char *args, const char *file, int line)
{
    char *key, *url, *extra;
    const char *s = args, *text, *err;
    size_t len;
    int before;

    bw_conf_getword(cfg->pool, &s, &key);
    bw_conf_getword(cfg->pool, &s, &url);
    bw_conf_getword(cfg->pool, &s, &extra);
    if (!strcasecmp(key, "crypto") && *extra)
        return "SecRemoteRules: the crypto option (rules encrypted with the key) is not supported; "
               "serve the rules over https:// without it";
    if (!*key || !*url || *extra)
        return "SecRemoteRules takes a key and an https:// URL";
    if (strncasecmp(url, "https://", 8))
        return apr_psprintf(cfg->pool, "SecRemoteRules: only https:// URLs are accepted, not \"%s\"", url);
    err = fetch(cfg, key, url, &text, &len);
    if (err && !cfg->remote_fail_warn)
        return apr_psprintf(cfg->pool, "SecRemoteRules: cannot download %s: %s "
                            "(SecRemoteRulesFailAction Warn would start without these rules)", url, err);
    if (err) {
        *(const char **)apr_array_push(cfg->warnings) =
            apr_psprintf(cfg->pool, "%s:%d: SecRemoteRules: cannot download %s: %s; "
                         "starting without these rules (SecRemoteRulesFailAction Warn)",
                         file ? file : "(none)", line, url, err);
        return NULL;
    }
    before = cfg->errors->nelts;
    err = bw_config_load_text(cfg, url, text, len);
    if (err)
        *(const char **)apr_array_push(cfg->errors) = err;
    return take_errors(cfg, before);
}

const char *bw_dir_remote_fail_action(bw_config_t *cfg, const char *args)
{
    char *w, *extra;
    const char *s = args;
    bw_conf_getword(cfg->pool, &s, &w);
    bw_conf_getword(cfg->pool, &s, &extra);
    if (*extra || (strcasecmp(w, "Abort") && strcasecmp(w, "Warn")))
        return apr_psprintf(cfg->pool, "SecRemoteRulesFailAction: invalid value \"%s\" "
                            "(expected Abort or Warn)", args);
    cfg->remote_fail_warn = !strcasecmp(w, "Warn");
    return NULL;
}

/* SecRemoteRulesTimeout CONNECT [TOTAL], in seconds */
const char *bw_dir_remote_timeout(bw_config_t *cfg, const char *args)
{
    char *w1, *w2, *extra, *e1, *e2 = NULL;
    const char *s = args;
    long c, t;
    bw_conf_getword(cfg->pool, &s, &w1);
    bw_conf_getword(cfg->pool, &s, &w2);
    bw_conf_getword(cfg->pool, &s, &extra);
    c = strtol(w1, &e1, 10);
    t = *w2 ? strtol(w2, &e2, 10) : c;
    if (!*w1 || *e1 || (e2 && *e2) || *extra || c < 1 || t < 1 || c > 3600 || t > 3600)
        return apr_psprintf(cfg->pool, "SecRemoteRulesTimeout: invalid value \"%s\" "
                            "(CONNECT [TOTAL] seconds, 1 to 3600)", args);
    cfg->remote_connect_timeout = (int)c;
    cfg->remote_timeout = (int)(t < c ? c : t);
    return NULL;
}
