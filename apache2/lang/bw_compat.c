/*
 * The one list of what Bulwark accepts from a mod_security2 configuration
 * but does differently, and the notes `bulwark check` prints for it.
 *
 * Why one table: the facts are stated three times (docs/compatibility.md,
 * the warnings, the code that behaves so), and two of the three come from
 * here; tests/unit/test_compat.c fails when the docs and the table disagree.
 * Refusals are not listed: a refused item stops start-up with its own
 * reason, and the docs say why.
 */
#include <string.h>
#include <strings.h>
#include "lang/bw_compat.h"

#define D BW_COMPAT_DIRECTIVE
#define V BW_COMPAT_VARIABLE
#define O BW_COMPAT_OPERATOR
#define A BW_COMPAT_ACTION

#define HASH_IN_PLACE "links are signed in the page as written (relative links stay relative, the " \
                      "parameter goes before a fragment) and without SecContentInjection or " \
                      "SecStreamOutBodyInspection, which mod_security2 needs to sign a page"
#define NO_DEBUG_LOG "accepted and ignored: Bulwark writes no debug log"
#define NO_STATE_LIMIT "accepted and ignored: limit slow clients with mod_reqtimeout and the MPM"
#define NO_INJECTION "accepted and ignored: content injection is not implemented"
#define NO_PERF "always 0: Bulwark does not time phases or rules"
#define NO_SCRIPT "always empty: Bulwark does not look at the file a request maps to"
#define PROGRAM "the program must exist at start-up, runs without a shell and is killed after " \
                "SecExternalProgramTimeout; a .lua script runs in Lua 5.4"

#define E(kind, name, when, how) { kind, name, when, how }

/* Sorted by kind, then name, as the docs are. */
const bw_compat_t bw_compat_table[] = {
    E(D, "SecCacheTransformations", NULL,
      "accepted and ignored: a transformation chain is always computed once per value"),
    E(D, "SecConnEngine", NULL, "accepted and ignored: there are no connection rules"),
    E(D, "SecConnReadStateLimit", NULL, NO_STATE_LIMIT),
    E(D, "SecConnWriteStateLimit", NULL, NO_STATE_LIMIT),
    E(D, "SecContentInjection", "On",
      "lets @rsub edit STREAM_OUTPUT_BODY, as in mod_security2; the append and prepend actions "
      "it also enables are not implemented"),
    E(D, "SecCookieFormat", "1", "cookies are always parsed as version 0 cookies"),
    E(D, "SecCookieV0Separator", NULL, "accepted and ignored: cookies are separated by ';'"),
    E(D, "SecDebugLog", NULL, NO_DEBUG_LOG),
    E(D, "SecDebugLogLevel", NULL, NO_DEBUG_LOG),
    E(D, "SecDisableBackendCompression", "On",
      "accepted and ignored: the backend may compress, and a compressed response body is not inspected"),
    E(D, "SecGeoLookupDb", NULL,
      "reads a MaxMind DB (.mmdb); a legacy GeoIP .dat file is refused at start-up"),
    E(D, "SecGsbLookupDb", NULL,
      "a list line that is not +HASH, -HASH, a [header] or a #comment stops start-up (mod_security2 skips it)"),
    E(D, "SecGuardianLog", NULL, "accepted and ignored (deprecated by mod_security2)"),
    E(D, "SecHashEngine", "On", HASH_IN_PLACE),
    E(D, "SecHttpBlKey", NULL, "accepted and ignored: @rbl does not send an http:BL access key"),
    E(D, "SecInterceptOnError", "On",
      "accepted and ignored: a rule that fails logs the error and does not match"),
    E(D, "SecReadStateLimit", NULL, NO_STATE_LIMIT),
    E(D, "SecRemoteRules", NULL,
      "downloaded at start-up over https:// only, the certificate verified; the crypto option is refused"),
    E(D, "SecRulePerfTime", NULL, "accepted and ignored: rules are not timed"),
    E(D, "SecRuleScript", NULL,
      "Lua 5.4 in a sandbox, bounded in instructions and memory; Lua 5.1 scripts may need changes"),
    E(D, "SecSensorId", NULL, "accepted and ignored: no record carries a sensor id"),
    E(D, "SecServerSignature", NULL,
      "names the server in audit records only; the Server response header stays httpd's"),
    E(D, "SecStatusEngine", "On", "accepted and ignored: Bulwark never reports its status"),
    E(D, "SecUnicodeCodePage", NULL,
      "accepted and ignored: the code page is the one SecUnicodeMapFile names"),
    E(D, "SecWriteStateLimit", NULL, NO_STATE_LIMIT),
    E(D, "SecXmlExternalEntity", "On", "accepted and ignored: external entities are never loaded"),

    E(V, "FULL_REQUEST", NULL,
      "the request line and every header line, CRLF-ended (mod_security2 2.9.7 loses header lines)"),
    E(V, "GEO", NULL, "filled from a MaxMind DB record: AREA_CODE is never set"),
    E(V, "PATH_INFO", NULL, "always empty"),
    E(V, "PERF_ALL", NULL, NO_PERF),
    E(V, "PERF_COMBINED", NULL, NO_PERF),
    E(V, "PERF_GC", NULL, NO_PERF),
    E(V, "PERF_LOGGING", NULL, NO_PERF),
    E(V, "PERF_PHASE1", NULL, NO_PERF),
    E(V, "PERF_PHASE2", NULL, NO_PERF),
    E(V, "PERF_PHASE3", NULL, NO_PERF),
    E(V, "PERF_PHASE4", NULL, NO_PERF),
    E(V, "PERF_PHASE5", NULL, NO_PERF),
    E(V, "PERF_RULES", NULL, "always empty: Bulwark does not time rules"),
    E(V, "PERF_SREAD", NULL, NO_PERF),
    E(V, "PERF_SWRITE", NULL, NO_PERF),
    E(V, "REMOTE_HOST", NULL, "the client's address, never a name (HostnameLookups is not used)"),
    E(V, "SCRIPT_BASENAME", NULL, NO_SCRIPT),
    E(V, "SCRIPT_FILENAME", NULL, NO_SCRIPT),
    E(V, "SCRIPT_GID", NULL, NO_SCRIPT),
    E(V, "SCRIPT_GROUPNAME", NULL, NO_SCRIPT),
    E(V, "SCRIPT_MODE", NULL, NO_SCRIPT),
    E(V, "SCRIPT_UID", NULL, NO_SCRIPT),
    E(V, "SCRIPT_USERNAME", NULL, NO_SCRIPT),
    E(V, "SDBM_DELETE_ERROR", NULL, "never set: persistent records are files, not an SDBM database"),
    E(V, "TIME", NULL, "hh:mm:ss as the manual says (mod_security2 2.9.7 gives YYYYMMDDhhmmss)"),
    E(V, "WEBSERVER_ERROR_LOG", NULL, "always empty: httpd's messages are not collected"),

    E(O, "detectSQLi", NULL,
      "Bulwark's own SQL tokenizer, not libinjection: verdicts and fingerprints differ on some inputs"),
    E(O, "detectXSS", NULL,
      "Bulwark's own HTML and JavaScript detector, not libinjection: verdicts differ on some inputs"),
    E(O, "geoLookup", NULL, "a MaxMind DB lookup of an IPv4 or IPv6 address; host names are not resolved"),
    E(O, "gsbLookup", NULL,
      "listed URLs match, with their host suffixes and path prefixes (mod_security2 2.9.7 loads the list but matched none in our tests)"),
    E(O, "inspectFile", NULL, PROGRAM),
    E(O, "rbl", NULL, "IPv4 only; any answer is a listing (no http:BL key, no threat score)"),
    E(O, "rsub", NULL,
      "an empty replacement deletes (mod_security2 2.9.7 inserts \"/\"), an empty match moves on "
      "(mod_security2 loops forever), a malformed hex-byte block stays literal text"),
    E(O, "validateDTD", NULL,
      "the file is compiled at start-up, never fetched, a relative name taken from the rule file's directory"),
    E(O, "validateSchema", NULL,
      "the file is compiled at start-up, never fetched, a relative name taken from the rule file's directory"),

    E(A, "append", NULL, NO_INJECTION),
    E(A, "ctl:debugLogLevel", NULL, NO_DEBUG_LOG),
    E(A, "exec", NULL, PROGRAM),
    E(A, "pause", NULL, "accepted and ignored: the response is not delayed"),
    E(A, "prepend", NULL, NO_INJECTION),
    E(A, "xmlns", NULL, "accepted and ignored: XPath in XML targets cannot use namespace prefixes"),
    E(D, NULL, NULL, NULL)
};

const char *bw_compat_kind_name(bw_compat_kind_t kind)
{
    static const char *const names[] = { "directive", "variable", "operator", "transformation",
                                         "action" };
    return kind < BW_COMPAT__KINDS ? names[kind] : "?";
}

const char *bw_compat_display(apr_pool_t *p, const bw_compat_t *c)
{
    return c->kind == BW_COMPAT_OPERATOR ? apr_pstrcat(p, "@", c->name, NULL) : c->name;
}

const bw_compat_t *bw_compat_find(bw_compat_kind_t kind, const char *name, size_t len,
                                  const char *arg)
{
    const bw_compat_t *c;
    for (c = bw_compat_table; c->name; c++) {
        if (c->kind != kind || strlen(c->name) != len || strncasecmp(c->name, name, len))
            continue;
        if (c->when && (!arg || strcasecmp(c->when, arg)))
            return NULL;
        return c;
    }
    return NULL;
}

/* One note per use; the same item twice on one line (ARGS|ARGS, a repeated
 * action) is one use. Notes of a line are pushed together, so looking back
 * while the line's prefix lasts finds every earlier note of that line. */
static void note(bw_config_t *cfg, const bw_compat_t *c, const char *file, int line)
{
    const char *prefix = apr_psprintf(cfg->pool, "%s:%d: ", file ? file : "(none)", line);
    const char *text = apr_pstrcat(cfg->pool, prefix, "warning: ", bw_compat_kind_name(c->kind), " ",
                                   bw_compat_display(cfg->pool, c), " differs from mod_security2: ",
                                   c->how, NULL);
    size_t plen = strlen(prefix);
    int i;
    for (i = cfg->compat->nelts - 1; i >= 0; i--) {
        const char *old = ((const char **)cfg->compat->elts)[i];
        if (strncmp(old, prefix, plen))
            break;
        if (!strcmp(old, text))
            return;
    }
    *(const char **)apr_array_push(cfg->compat) = text;
}

static void note_name(bw_config_t *cfg, bw_compat_kind_t kind, const char *name, size_t len,
                      const char *arg, const char *file, int line)
{
    const bw_compat_t *c = bw_compat_find(kind, name, len, arg);
    if (c)
        note(cfg, c, file, line);
}

void bw_compat_note_directive(bw_config_t *cfg, const char *name, const char *args,
                              const char *file, int line)
{
    char *first = NULL;
    const char *s = args ? args : "";
    if (!cfg->compat)
        return;
    if (bw_conf_getword(cfg->pool, &s, &first))
        first = NULL;
    note_name(cfg, BW_COMPAT_DIRECTIVE, name, strlen(name), first, file, line);
}

static void note_targets(bw_config_t *cfg, const apr_array_header_t *targets, const char *file,
                         int line)
{
    int i;
    for (i = 0; targets && i < targets->nelts; i++) {
        const bw_target_t *t = &((const bw_target_t *)targets->elts)[i];
        if (!t->is_exclusion)
            note_name(cfg, BW_COMPAT_VARIABLE, t->var->name, strlen(t->var->name), NULL, file, line);
    }
}

void bw_compat_note_targets(bw_config_t *cfg, const apr_array_header_t *targets,
                            const char *file, int line)
{
    if (cfg->compat)
        note_targets(cfg, targets, file, line);
}

/* t:NAME is a transformation, ctl:NAME=… is looked up as "ctl:NAME", any
 * other action by its name. */
static void note_action(bw_config_t *cfg, const bw_action_t *a, const char *file, int line)
{
    const char *name = a->def->name;
    if (!strcmp(name, "t")) {
        note_name(cfg, BW_COMPAT_TRANSFORMATION, a->param, strlen(a->param), NULL, file, line);
    } else if (!strcmp(name, "ctl")) {
        size_t n = strcspn(a->param, "=");
        const char *full = apr_pstrcat(cfg->pool, "ctl:", apr_pstrndup(cfg->pool, a->param, n), NULL);
        note_name(cfg, BW_COMPAT_ACTION, full, strlen(full), NULL, file, line);
    } else {
        note_name(cfg, BW_COMPAT_ACTION, name, strlen(name), NULL, file, line);
    }
}

void bw_compat_note_rule(bw_config_t *cfg, const bw_rule_t *r, const char *file, int line)
{
    int i;
    if (!cfg->compat)
        return;
    note_targets(cfg, r->targets, file, line);
    if (r->kind == BW_RULE_SECRULE && r->op.def)
        note_name(cfg, BW_COMPAT_OPERATOR, r->op.def->name, strlen(r->op.def->name), NULL, file, line);
    for (i = 0; r->actions && i < r->actions->nelts; i++)
        note_action(cfg, &((const bw_action_t *)r->actions->elts)[i], file, line);
}
