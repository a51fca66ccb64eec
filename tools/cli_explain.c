/*
 * bulwark explain — why a request was flagged, and the narrowest way to
 * stop a false positive: for each rule that matched in an audit record,
 * the variable and value it matched, and an exclusion of that one
 * variable from that one rule on that one path, as the CRS documentation
 * recommends (a run-time `ctl:ruleRemoveTargetById` in a rule scoped to
 * the request's path, loaded before the CRS rules), with the start-up
 * alternative for every path (`SecRuleUpdateTargetById`, after them).
 *
 * The output is a configuration file: every line that is not a comment
 * can be included as it is. Rules that matched the transaction's own
 * variables (TX: the anomaly score) only count what other rules found:
 * excluding the variable from the rule that found it is the fix, so they
 * get no exclusion of their own.
 *
 * The record's text is request data: what is printed in a comment has its
 * control bytes escaped, and a variable whose name could not be written
 * safely into a ctl: action is said so rather than printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_lib.h>
#include "cli.h"
#include "cli_log.h"
#include "audit/bw_audit.h"

/* Collections of request data an exclusion can name a member of. */
static const char *const keyed[] = {
    "ARGS", "ARGS_GET", "ARGS_POST", "ARGS_NAMES", "ARGS_GET_NAMES", "ARGS_POST_NAMES",
    "REQUEST_COOKIES", "REQUEST_COOKIES_NAMES", "REQUEST_HEADERS", "REQUEST_HEADERS_NAMES",
    "FILES", "FILES_NAMES", "XML", "MULTIPART_PART_HEADERS", NULL
};
/* Request variables without members, excluded whole. */
static const char *const whole[] = {
    "REQUEST_BODY", "REQUEST_URI", "REQUEST_URI_RAW", "REQUEST_FILENAME", "REQUEST_BASENAME",
    "QUERY_STRING", "REQUEST_LINE", "REQUEST_METHOD", "REQUEST_PROTOCOL", NULL
};

typedef struct {
    const char *uid;      /* --unique-id, or NULL: every record */
    long next_id;         /* the id of the next exclusion rule */
    int found;
} explain_opts_t;

static void explain_usage(FILE *out)
{
    fprintf(out,
            "Usage: bulwark explain [--unique-id ID] [--first-id N] FILE...\n"
            "For each audit record (or the one with unique id ID) of the audit logs (Native or\n"
            "JSON, Serial; '-' is standard input): which rules\n"
            "matched, on which variable and value, and for each the narrowest exclusion: that\n"
            "variable removed from that rule on that path only, at run time, in a rule to load\n"
            "before the CRS rules (the CRS documentation's recommendation), with the start-up\n"
            "form for every path in a comment. The output is a configuration file.\n\n"
            "  --unique-id ID  only the record of this unique id\n"
            "  --first-id N    the id of the first exclusion rule (default 10000)\n\n"
            "Exit status: 0 if a record was explained, 1 if none was found, 2 on a usage\n"
            "error or an unreadable input.\n"
            "Example: bulwark explain --unique-id aGVsbG8 /var/log/apache2/modsec_audit.log\n");
}

/* The text of a bracketed field `[name "…"]` of a message, or NULL. */
static const char *field(apr_pool_t *p, const char *m, const char *name)
{
    const char *open = apr_pstrcat(p, "[", name, " \"", NULL), *at = strstr(m, open), *end;
    if (!at)
        return NULL;
    at += strlen(open);
    end = strstr(at, "\"]");
    return end ? apr_pstrndup(p, at, (apr_size_t)(end - at)) : NULL;
}

/* The variable the operator's message names ("... at ARGS:q."), or NULL. */
static const char *matched_var(apr_pool_t *p, const char *m)
{
    const char *stop = strstr(m, " [file \""), *at = NULL, *s;
    size_t n;
    if (!stop)
        stop = m + strlen(m);
    for (s = m; (s = strstr(s, " at ")) && s < stop; s += 4)
        at = s + 4;
    if (!at)
        return NULL;
    n = (size_t)(stop - at);
    if (n && at[n - 1] == '.')
        n--;
    return n ? apr_pstrndup(p, at, n) : NULL;
}

/* The value the rule's logdata shows for var ("found within VAR: value"). */
static const char *matched_value(apr_pool_t *p, const char *data, const char *var)
{
    const char *key = apr_pstrcat(p, "found within ", var, ": ", NULL), *at;
    if (!data || !(at = strstr(data, key)))
        return NULL;
    return at + strlen(key);
}

static int listed(const char *const *list, const char *s, size_t n)
{
    int i;
    for (i = 0; list[i]; i++)
        if (strlen(list[i]) == n && !strncmp(list[i], s, n))
            return 1;
    return 0;
}

/* Can var be named in a ctl: action and a target list as it is? */
static int nameable(const char *var)
{
    const char *colon = strchr(var, ':'), *s;
    for (s = var; *s; s++)
        if (*s == ',' || *s == ';' || *s == '"' || *s == '\'' || *s == '\\' || *s == '|'
            || (unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
            return 0;
    if (colon)
        return listed(keyed, var, (size_t)(colon - var)) && colon[1] != '/';
    return listed(whole, var, strlen(var));
}

/* s for a comment line: control bytes and non-ASCII as \xHH, at most max bytes. */
static const char *printable(apr_pool_t *p, const char *s, size_t max)
{
    size_t n = strlen(s), i, o = 0;
    char *out = apr_palloc(p, (n < max ? n : max) * 4 + 4);
    for (i = 0; i < n && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f)
            o += (size_t)sprintf(out + o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    if (n > max) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

/* The path of a request URI (no query string), %XX decoded as
 * REQUEST_FILENAME shows it; NULL when it cannot be written in a rule. */
static const char *path_of(apr_pool_t *p, const char *uri)
{
    size_t n = strcspn(uri, "?#"), i, o = 0;
    char *out = apr_palloc(p, n + 1);
    for (i = 0; i < n; i++) {
        char c = uri[i];
        if (c == '%' && i + 2 < n && apr_isxdigit(uri[i + 1]) && apr_isxdigit(uri[i + 2])) {
            char hex[3] = { uri[i + 1], uri[i + 2], 0 };
            c = (char)strtol(hex, NULL, 16);
            i += 2;
        }
        if (c == '"' || c == '\\' || (unsigned char)c <= ' ' || (unsigned char)c >= 0x7f)
            return NULL;
        out[o++] = c;
    }
    out[o] = '\0';
    return o ? out : NULL;
}

static void explain_message(apr_pool_t *p, explain_opts_t *o, const bw_audit_entry_t *e,
                            const char *m)
{
    const char *id = field(p, m, "id"), *msg = field(p, m, "msg"), *var = matched_var(p, m);
    const char *path = e->uri ? path_of(p, e->uri) : NULL, *val;
    if (!strncmp(m, "Message: ", 9))
        m += 9;
    if (!id) {
        printf("# a message without a rule id: %s\n", printable(p, m, 200));
        return;
    }
    printf("# rule %s%s%s%s matched %s", id, msg ? " (" : "", msg ? printable(p, msg, 120) : "",
           msg ? ")" : "", var ? printable(p, var, 120) : "(no variable named)");
    val = var ? matched_value(p, field(p, m, "data"), var) : NULL;
    if (val)
        printf(" = \"%s\"", printable(p, val, 120));
    printf("\n");
    if (!var || !nameable(var)) {
        if (var && (!strncmp(var, "TX:", 3) || !strcmp(var, "TX")))
            printf("#   it counts what other rules found (the transaction's own TX): exclude "
                   "those instead\n");
        else
            printf("#   no exclusion: this variable cannot be named safely in a ctl: action\n");
        return;
    }
    if (!path) {
        printf("#   no path to scope an exclusion to; everywhere, at start-up (after the CRS rules):\n"
               "#   SecRuleUpdateTargetById %s \"!%s\"\n", id, var);
        return;
    }
    printf("#   narrowest: only this variable, only for this rule, only on %s (load before the "
           "CRS rules)\n", path);
    printf("SecRule REQUEST_FILENAME \"@streq %s\" \"id:%ld,phase:1,pass,t:none,nolog,"
           "ctl:ruleRemoveTargetById=%s;%s\"\n", path, o->next_id++, id, var);
    printf("#   on every path, at start-up (after the CRS rules):\n"
           "#   SecRuleUpdateTargetById %s \"!%s\"\n", id, var);
}

static void explain_entry(apr_pool_t *p, explain_opts_t *o, const bw_audit_entry_t *e)
{
    int i;
    if (o->uid && (!e->unique_id || strcmp(e->unique_id, o->uid)))
        return;
    o->found++;
    printf("# record %s: %s, status %d, client %s\n", e->unique_id ? e->unique_id : "-",
           e->request_line ? printable(p, e->request_line, 200) : "-", e->status,
           e->client ? printable(p, e->client, 60) : "-");
    if (!e->messages->nelts)
        printf("# no rule matched\n");
    for (i = 0; i < e->messages->nelts; i++)
        explain_message(p, o, e, ((const char **)e->messages->elts)[i]);
    printf("\n");
}

static int explain_file(apr_pool_t *pool, explain_opts_t *o, const char *path)
{
    apr_pool_t *p;
    bw_str_t *text;
    char *err = NULL;
    bw_audit_reader_t *rd;
    bw_audit_entry_t e;
    const char *rerr = NULL;
    int rc;
    apr_pool_create(&p, pool);
    text = bw_cli_read_all(p, path, &err);
    if (!text) {
        fprintf(stderr, "bulwark explain: %s\n", err);
        apr_pool_destroy(p);
        return 2;
    }
    rd = bw_audit_reader_create(p, *text, -1);
    while ((rc = bw_audit_reader_next(rd, p, &e, &rerr)) != 0) {
        if (rc < 0)
            fprintf(stderr, "bulwark explain: %s: %s\n", path, rerr ? rerr : "broken record");
        else
            explain_entry(p, o, &e);
    }
    apr_pool_destroy(p);
    return 0;
}

int bw_cli_explain(apr_pool_t *pool, int argc, const char *const *argv)
{
    explain_opts_t o;
    int i, rc = 0;
    memset(&o, 0, sizeof(o));
    o.next_id = 10000;
    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            explain_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--unique-id") && i + 1 < argc) {
            o.uid = argv[++i];
        } else if (!strcmp(argv[i], "--first-id") && i + 1 < argc && atol(argv[i + 1]) > 0) {
            o.next_id = atol(argv[++i]);
        } else {
            fprintf(stderr, "bulwark explain: invalid option: %s\n", argv[i]);
            explain_usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        explain_usage(stderr);
        return 2;
    }
    for (; i < argc; i++)
        if (explain_file(pool, &o, argv[i]) == 2)
            rc = 2;
    fflush(stdout);
    return rc ? 2 : o.found ? 0 : 1;
}
