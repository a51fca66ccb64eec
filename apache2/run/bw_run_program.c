/*
 * External programs for a transaction (@inspectFile, exec): the limits and
 * the environment they run with, and the exec action itself. The runner
 * is base/bw_spawn.c; the start-up checks are in the operator, the action
 * and the program builder (SecExternalPrograms).
 *
 * The environment is what ModSecurity documents for exec ("all the usual
 * CGI environment variables"), made from the transaction, since the engine
 * does not see httpd's request:
 *   PATH (Apache's own, or a default), GATEWAY_INTERFACE=CGI/1.1,
 *   SERVER_PROTOCOL, REQUEST_METHOD, REQUEST_URI, QUERY_STRING,
 *   REMOTE_ADDR, REMOTE_PORT, SERVER_ADDR, SERVER_PORT, SERVER_NAME,
 *   REMOTE_USER and AUTH_TYPE (when known), SCRIPT_FILENAME (httpd's
 *   file name, when known), UNIQUE_ID, CONTENT_TYPE, CONTENT_LENGTH,
 *   HTTP_<NAME> for every other request header (upper case, other bytes
 *   than letters and digits as '_'; Authorization and
 *   Proxy-Authorization left out, as httpd does for CGI),
 *   then every entry of the ENV collection (Apache's SetEnv, mod_unique_id,
 *   the rules' setenv), which wins over the above.
 * A name or value with a NUL byte, or a name with '=', is left out: an
 * environment string cannot hold it.
 */
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include "run/bw_run.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

typedef struct {
    apr_pool_t *pool;
    apr_array_header_t *names;   /* const char*, in order */
    apr_hash_t *vals;            /* name (exact case) -> "NAME=value" */
} env_t;

static void env_put(env_t *e, const char *name, size_t nlen, bw_str_t val)
{
    char *n;
    if (!nlen || memchr(name, '=', nlen) || memchr(name, '\0', nlen)
        || (val.len && memchr(val.data, '\0', val.len)))
        return;
    n = apr_pstrmemdup(e->pool, name, nlen);
    if (!apr_hash_get(e->vals, n, APR_HASH_KEY_STRING))
        *(const char **)apr_array_push(e->names) = n;
    apr_hash_set(e->vals, n, APR_HASH_KEY_STRING,
                 apr_pstrcat(e->pool, n, "=", bw_str_pdup(e->pool, val), NULL));
}

static void env_str(env_t *e, const char *name, bw_str_t val, int always)
{
    if (always || val.len)
        env_put(e, name, strlen(name), val);
}

/* HTTP_USER_AGENT from User-Agent; the CGI names of the two body headers. */
static void env_header(env_t *e, const bw_kv_t *h)
{
    char *n;
    size_t i;
    if (bw_str_eq_cstr_ci(h->name, "Authorization")
        || bw_str_eq_cstr_ci(h->name, "Proxy-Authorization"))
        return;
    if (bw_str_eq_cstr_ci(h->name, "Content-Type")) {
        env_str(e, "CONTENT_TYPE", h->value, 1);
        return;
    }
    if (bw_str_eq_cstr_ci(h->name, "Content-Length")) {
        env_str(e, "CONTENT_LENGTH", h->value, 1);
        return;
    }
    n = apr_palloc(e->pool, h->name.len + 6);
    memcpy(n, "HTTP_", 5);
    for (i = 0; i < h->name.len; i++) {
        unsigned char c = (unsigned char)h->name.data[i];
        n[5 + i] = isalnum(c) ? (char)toupper(c) : '_';
    }
    env_put(e, n, h->name.len + 5, h->value);
}

static void env_request(env_t *e, const bw_tx_t *tx)
{
    const bw_request_t *q = &tx->req;
    const char *path = getenv("PATH");
    int i;
    env_str(e, "PATH", bw_str_make(path && *path ? path : DEFAULT_PATH), 1);
    env_str(e, "GATEWAY_INTERFACE", bw_str_make("CGI/1.1"), 1);
    env_str(e, "SERVER_PROTOCOL", q->protocol, 1);
    env_str(e, "REQUEST_METHOD", q->method, 1);
    env_str(e, "REQUEST_URI", q->uri, 1);
    env_str(e, "QUERY_STRING", tx->query_string, 1);
    env_str(e, "REMOTE_ADDR", q->remote_addr, 1);
    env_str(e, "REMOTE_PORT", bw_str_make(apr_itoa(e->pool, q->remote_port)), 1);
    env_str(e, "SERVER_ADDR", q->server_addr, 1);
    env_str(e, "SERVER_PORT", bw_str_make(apr_itoa(e->pool, q->server_port)), 1);
    env_str(e, "SERVER_NAME", q->server_name, 1);
    env_str(e, "REMOTE_USER", q->remote_user, 0);
    env_str(e, "AUTH_TYPE", q->auth_type, 0);
    env_str(e, "SCRIPT_FILENAME", q->request_filename, 0);
    env_str(e, "UNIQUE_ID", q->unique_id, 0);
    for (i = 0; i < q->headers->nelts; i++)
        env_header(e, &((const bw_kv_t *)q->headers->elts)[i]);
}

/* The environment of a program run now (bw_spawn_ctx_t.env). */
static const char *const *tx_env(void *baton)
{
    bw_tx_t *tx = baton;
    env_t e;
    const char **out;
    int i;

    e.pool = tx->pool;
    e.names = apr_array_make(tx->pool, 32, sizeof(const char *));
    e.vals = apr_hash_make(tx->pool);
    env_request(&e, tx);
    if (tx->env) {
        const apr_array_header_t *arr = apr_table_elts(tx->env);
        for (i = 0; i < arr->nelts; i++) {
            const apr_table_entry_t *t = &((const apr_table_entry_t *)arr->elts)[i];
            if (t->key)
                env_put(&e, t->key, strlen(t->key), bw_str_make(t->val ? t->val : ""));
        }
    }
    out = apr_palloc(tx->pool, sizeof(*out) * (size_t)(e.names->nelts + 1));
    for (i = 0; i < e.names->nelts; i++)
        out[i] = apr_hash_get(e.vals, ((const char **)e.names->elts)[i], APR_HASH_KEY_STRING);
    out[i] = NULL;
    return out;
}

void bw_tx_spawn_setup(bw_tx_t *tx)
{
    tx->spawn.lim.timeout = apr_time_from_sec(tx->cfg->external_program_timeout > 0
                                              ? tx->cfg->external_program_timeout
                                              : BW_SPAWN_DEFAULT_TIMEOUT);
    tx->spawn.lim.max_output = BW_SPAWN_MAX_OUTPUT;
    tx->spawn.env = tx_env;
    tx->spawn.baton = tx;
}

/* exec: run the program; its output goes to the debug log, a failure to
 * the error log as a warning. The rule's outcome does not depend on it. */
void bw_run_exec(bw_tx_t *tx, const bw_rule_t *rule, const bw_action_t *a)
{
    const bw_rule_t *h = rule->chain_head;
    const char *argv[2], *err = NULL;
    bw_spawn_result_t res;

    argv[0] = bw_action_program(a);
    argv[1] = NULL;
    if (!argv[0])
        return;
    if (bw_spawn_run(tx->pool, argv, tx_env(tx), &tx->spawn.lim, &res, &err) != 0) {
        bw_tx_log_message(tx, 1, "Rule %s [file \"%s\"] [line \"%d\"]: exec: %s",
                          h->id_str ? h->id_str : "-", rule->file, rule->line, err);
        return;
    }
    if (res.output.len == 0 || res.timed_out || res.truncated) {
        bw_tx_log_message(tx, 1, "Rule %s [file \"%s\"] [line \"%d\"]: exec \"%s\": %s",
                          h->id_str ? h->id_str : "-", rule->file, rule->line, argv[0],
                          res.output.len ? bw_spawn_describe(tx->pool, &res, &tx->spawn.lim)
                                         : "the program wrote nothing (failed?)");
        if (!res.output.len)
            return;
    }
    bw_tx_log_message(tx, 3, "Rule %s: exec \"%s\" (%s): %s", h->id_str ? h->id_str : "-",
                      argv[0], bw_spawn_describe(tx->pool, &res, &tx->spawn.lim),
                      bw_op_log_escape(tx->pool, res.output, 1024));
}
