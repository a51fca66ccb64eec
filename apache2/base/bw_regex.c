/*
 * PCRE2 helpers for the engine's own regexes (selectors, SecRuleRemoveByTag,
 * SecAuditLogRelevantStatus…). Compiled once with JIT; the code is freed
 * with the pool that owns it. Operators have their own compile in op_rx.c.
 */
#include <string.h>
#include <ctype.h>
#include "base/bw_regex.h"

static apr_status_t free_code(void *data)
{
    pcre2_code_free((pcre2_code *)data);
    return APR_SUCCESS;
}

pcre2_code *bw_regex_compile(apr_pool_t *p, const char *pattern, int caseless, char **err)
{
    int ec;
    PCRE2_SIZE off;
    uint32_t opts = PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY | (caseless ? PCRE2_CASELESS : 0);
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &ec, &off, NULL);
    if (!re) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(ec, buf, sizeof buf);
        *err = apr_psprintf(p, "%s at offset %lu of \"%s\"", (char *)buf, (unsigned long)off, pattern);
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    apr_pool_cleanup_register(p, re, free_code, apr_pool_cleanup_null);
    return re;
}

int bw_regex_match(const pcre2_code *re, bw_str_t s, pcre2_match_data *md)
{
    int rc;
    pcre2_match_data *own = NULL;
    if (!md)
        md = own = pcre2_match_data_create(1, NULL);
    rc = pcre2_match(re, (PCRE2_SPTR)(s.data ? s.data : ""), s.len, 0, 0, md, NULL);
    if (own)
        pcre2_match_data_free(own);
    return rc >= 0 ? 1 : (rc == PCRE2_ERROR_NOMATCH ? 0 : -1);
}

/* ---- literal regexes ------------------------------------------------------ */

/* One atom of a pattern: a byte (or any byte, for '.') and how often. */
typedef struct {
    int ch;                     /* -1: '.' */
    char quant;                 /* 1, '*' or '?' */
} atom_t;

/* pattern as atoms, or -1 when it holds anything else: a class, a group,
 * an alternation, a counted or '+' repeat, an escape that is no byte. */
static int atoms_of(const char *s, atom_t *a, int max, int *head, int *tail)
{
    int n = 0;
    *head = *s == '^';
    *tail = 0;
    s += *head;
    while (*s) {
        unsigned char c = (unsigned char)*s;
        if (c == '*' || c == '?') {
            if (!n || a[n - 1].quant != 1)
                return -1;
            a[n - 1].quant = (char)c;
            s++;
            continue;
        }
        if (c == '$') {
            if (s[1])
                return -1;
            *tail = 1;
            break;
        }
        if (n == max)
            return -1;
        if (c == '\\') {
            c = (unsigned char)s[1];
            if (!c || (c < 128 && isalnum(c)))
                return -1;   /* \d, \x41, \1…: no single byte */
            a[n].ch = c;
            s += 2;
        } else if (c == '.') {
            a[n].ch = -1;
            s++;
        } else if (strchr("[](){}|+^", c)) {
            return -1;
        } else {
            a[n].ch = c;
            s++;
        }
        a[n].quant = 1;
        n++;
    }
    return n;
}

const bw_relit_t *bw_relit_compile(apr_pool_t *p, const char *pattern, int caseless)
{
    atom_t a[256];
    int head, tail, n = atoms_of(pattern, a, 256, &head, &tail), lo = 0, i;
    bw_relit_t *l;
    char *buf;
    if (n < 0)
        return NULL;
    /* an optional atom at an end nothing anchors matches nothing: drop it */
    while (!tail && n > lo && a[n - 1].quant != 1)
        n--;
    while (!head && lo < n && a[lo].quant != 1)
        lo++;
    for (i = lo; i < n; i++)
        if (a[i].quant != 1 || a[i].ch < 0)
            return NULL;
    l = apr_pcalloc(p, sizeof(*l));
    buf = apr_palloc(p, (size_t)(n - lo) + 1);
    for (i = lo; i < n; i++)
        buf[i - lo] = (char)(caseless ? bw_lower1((unsigned char)a[i].ch) : a[i].ch);
    buf[n - lo] = '\0';
    l->lit = bw_str_n(buf, (size_t)(n - lo));
    l->head = head;
    l->tail = tail;
    l->caseless = caseless;
    /* a punctuation byte if there is one (rarer in names than letters:
     * the '_' of a paramcounter_ selector), else any that case leaves alone */
    l->key = -1;
    for (i = 0; i < n - lo; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (caseless && isalpha(c))
            continue;
        if (l->key < 0 || !isalnum(c))
            l->key = i;
        if (!isalnum(c))
            break;
    }
    return l;
}

/* The literal at s? */
static int same_at(const bw_relit_t *l, const char *s)
{
    return l->caseless ? bw_mem_eq_ci(s, l->lit.data, l->lit.len)
                       : !memcmp(s, l->lit.data, l->lit.len);
}

int bw_relit_match(const bw_relit_t *l, bw_str_t s)
{
    size_t n = l->lit.len, i;
    if (s.len < n)
        return 0;
    if (l->head && l->tail)
        return s.len == n && same_at(l, s.data);
    if (l->head)
        return same_at(l, s.data);
    if (l->tail)
        return same_at(l, s.data + s.len - n);
    if (!n)
        return 1;
    if (l->key >= 0) {
        /* where the key byte is, the literal may start key bytes before */
        const char *p = s.data + l->key, *q, *lim = s.data + (s.len - n) + l->key + 1;
        while (p < lim && (q = memchr(p, l->lit.data[l->key], (size_t)(lim - p)))) {
            if (same_at(l, q - l->key))
                return 1;
            p = q + 1;
        }
        return 0;
    }
    /* the first byte decides most places */
    for (i = 0; i + n <= s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if ((l->caseless ? bw_lower1(c) : c) == (unsigned char)l->lit.data[0] && same_at(l, s.data + i))
            return 1;
    }
    return 0;
}
