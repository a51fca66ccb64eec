/*
 * The hash engine's directives: SecHashKey, SecHashParam, SecHashMethodRx
 * and SecHashMethodPm (SecHashEngine is a plain On/Off in the directive
 * table). Each fills the context's bw_hash_conf_t (base/bw_hmac.h); the
 * regexes and phrases are compiled here, once, so a bad one stops start-up
 * at its line. Values mod_security2 loads although they mean nothing (an
 * unknown key mode or kind) load with a warning.
 */
#include <string.h>
#include <strings.h>
#include <apr_general.h>
#include "lang/bw_lang.h"
#include "base/bw_regex.h"

#define RAND_KEY_BYTES 32

/* "Rand": a key of random bytes, drawn when the configuration is read, so
 * every child of one start-up signs with the same key and a restart
 * invalidates what an earlier one signed (as with mod_security2). */
static const char *random_key(apr_pool_t *p, bw_str_t *key)
{
    unsigned char b[RAND_KEY_BYTES];
    char *k = apr_palloc(p, 2 * RAND_KEY_BYTES + 1);
    if (apr_generate_random_bytes(b, sizeof(b)) != APR_SUCCESS)
        return "SecHashKey Rand: the system gave no random bytes";
    bw_hex_encode(b, sizeof(b), k);
    *key = bw_str_n(k, 2 * RAND_KEY_BYTES);
    return NULL;
}

/* A value mod_security2 loads without a word although it means nothing:
 * loaded here too, with a warning at start-up. */
static void warn(bw_config_t *cfg, const char *file, int line, const char *what)
{
    *(const char **)apr_array_push(cfg->warnings) =
        apr_psprintf(cfg->pool, "%s:%d: %s", file ? file : "-", line, what);
}

const char *bw_dir_hash_key(bw_config_t *cfg, const char *args, const char *file, int line)
{
    static const char *const modes[] = { "KeyOnly", "SessionID", "RemoteIP" };
    apr_array_header_t *w;
    const char *err = bw_dir_words(cfg->pool, args, &w), *key;
    int mode = BW_HASH_KEY_ONLY;
    if (err)
        return err;
    if (w->nelts < 1 || w->nelts > 2 || !*((char **)w->elts)[0])
        return "SecHashKey takes a key (or Rand) and optionally KeyOnly, SessionID or RemoteIP";
    key = ((char **)w->elts)[0];
    if (w->nelts == 2) {
        const char *m = ((char **)w->elts)[1];
        for (mode = 0; mode < 3 && strcasecmp(m, modes[mode]) != 0; mode++)
            ;
        if (mode == 3) {
            warn(cfg, file, line, apr_psprintf(cfg->pool, "SecHashKey: unknown key mode \"%s\" "
                                               "(KeyOnly, SessionID or RemoteIP): KeyOnly used", m));
            mode = BW_HASH_KEY_ONLY;
        }
    }
    if (strcasecmp(key, "Rand") == 0) {
        err = random_key(cfg->pool, &cfg->settings.hash.key);
        if (err)
            return err;
    } else {
        cfg->settings.hash.key = bw_str_make(key);
    }
    cfg->settings.hash.mode = mode;
    return NULL;
}

const char *bw_dir_hash_param(bw_config_t *cfg, const char *args)
{
    apr_array_header_t *w;
    const char *err = bw_dir_words(cfg->pool, args, &w), *name;
    if (err)
        return err;
    if (w->nelts != 1 || !*((char **)w->elts)[0])
        return "SecHashParam takes one parameter name";
    name = ((char **)w->elts)[0];
    cfg->settings.hash.param = bw_str_make(name);
    return NULL;
}

/* SecHashMethodPm's phrases: the words of its second argument, lower case. */
static void split_phrases(apr_pool_t *p, const char *list, bw_hash_method_t *m)
{
    apr_array_header_t *a = apr_array_make(p, 4, sizeof(bw_str_t));
    const char *s = list;
    while (*s) {
        size_t n;
        while (*s == ' ' || *s == '\t')
            s++;
        n = strcspn(s, " \t");
        if (n)
            *(bw_str_t *)apr_array_push(a) = bw_str_lower(p, bw_str_n(s, n));
        s += n;
    }
    m->phrases = (const bw_str_t *)a->elts;
    m->nphrases = a->nelts;
}

/* SecHashMethodRx / SecHashMethodPm KIND ARG: methods add up in order; a
 * context with its own replaces its parent's list. */
const char *bw_dir_hash_method(bw_config_t *cfg, int pm, const char *args, const char *file,
                               int line)
{
    const char *dname = pm ? "SecHashMethodPm" : "SecHashMethodRx";
    apr_array_header_t *w, *list;
    bw_hash_method_t *m;
    char *why = NULL;
    const char *err = bw_dir_words(cfg->pool, args, &w), *kind, *arg;
    if (err)
        return err;
    if (w->nelts != 2 || !*((char **)w->elts)[1])
        return apr_psprintf(cfg->pool, "%s takes a kind (HashHref, HashFormAction, HashIframeSrc, "
                            "HashFrameSrc or HashLocation) and %s", dname,
                            pm ? "a list of phrases" : "a regex");
    kind = ((char **)w->elts)[0];
    arg = ((char **)w->elts)[1];
    if (bw_hash_kind(kind) < 0) {
        warn(cfg, file, line, apr_psprintf(cfg->pool, "%s: unknown kind \"%s\" (HashHref, "
                                           "HashFormAction, HashIframeSrc, HashFrameSrc or "
                                           "HashLocation): ignored", dname, kind));
        return NULL;
    }
    list = (apr_array_header_t *)cfg->settings.hash.methods;
    if (!list)
        cfg->settings.hash.methods = list = apr_array_make(cfg->pool, 4, sizeof(bw_hash_method_t));
    m = apr_array_push(list);
    memset(m, 0, sizeof(*m));
    m->kind = bw_hash_kind(kind);
    if (pm) {
        split_phrases(cfg->pool, arg, m);
    } else {
        m->re = bw_regex_compile(cfg->pool, arg, 0, &why);
        if (!m->re)
            return apr_psprintf(cfg->pool, "%s: %s", dname, why);
    }
    return NULL;
}
