/*
 * Signing a response's links for the hash engine (see bw_hash_html.h). A
 * small tag scanner, not an HTML parser: it finds the start tags of a,
 * form, iframe and frame outside comments, scripts and styles, reads
 * their attributes (quoted or not) and notes where each selected link
 * gets its parameter; the page is then copied once with the insertions.
 */
#include <string.h>
#include <strings.h>
#include "body/bw_hash_html.h"

typedef struct {
    size_t at;          /* offset in the page */
    const char *text;   /* inserted there */
    size_t len;
} edit_t;

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static bw_str_t trim(bw_str_t s)
{
    while (s.len && is_space(s.data[0])) {
        s.data++;
        s.len--;
    }
    while (s.len && is_space(s.data[s.len - 1]))
        s.len--;
    return s;
}

/* Length of "scheme:" at the start of s, or 0 when s has none. */
static size_t scheme_len(bw_str_t s)
{
    size_t i;
    for (i = 0; i < s.len; i++) {
        char c = s.data[i];
        if (c == ':')
            return i > 0 ? i + 1 : 0;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i && ((c >= '0' && c <= '9')
              || c == '+' || c == '-' || c == '.'))))
            return 0;
    }
    return 0;
}

/* s after "//host": from the path on ("/" when there is none). */
static bw_str_t after_authority(apr_pool_t *p, bw_str_t s)
{
    size_t i = 2;
    while (i < s.len && s.data[i] != '/' && s.data[i] != '?')
        i++;
    if (i < s.len && s.data[i] == '/')
        return bw_str_n(s.data + i, s.len - i);
    return bw_str_make(apr_pstrcat(p, "/", bw_str_pdup(p, bw_str_n(s.data + i, s.len - i)), NULL));
}

/* The path of target with "." and ".." segments resolved (RFC 3986, 5.2.4);
 * the query is kept as it is. */
static bw_str_t remove_dots(apr_pool_t *p, bw_str_t t)
{
    const char *q = memchr(t.data, '?', t.len);
    size_t plen = q ? (size_t)(q - t.data) : t.len, i = 0, o = 0;
    char *out = apr_palloc(p, t.len + 2);
    while (i < plen) {
        size_t j = i + 1, seg;
        while (j < plen && t.data[j] != '/')
            j++;
        seg = j - i - 1;            /* t.data[i] is '/' */
        if (seg == 1 && t.data[i + 1] == '.') {
            if (j == plen)
                out[o++] = '/';
        } else if (seg == 2 && t.data[i + 1] == '.' && t.data[i + 2] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            if (j == plen)
                out[o++] = '/';
        } else {
            memcpy(out + o, t.data + i, j - i);
            o += j - i;
        }
        i = j;
    }
    if (o == 0)
        out[o++] = '/';
    memcpy(out + o, t.data + plen, t.len - plen);
    return bw_str_n(out, o + t.len - plen);
}

int bw_hash_link_target(apr_pool_t *p, bw_str_t page_path, bw_str_t link, bw_str_t *target)
{
    const char *hash;
    size_t sl;
    bw_str_t t, l = trim(link);
    hash = memchr(l.data, '#', l.len);
    if (hash)
        l.len = (size_t)(hash - l.data);
    if (l.len == 0)
        return 0;
    sl = scheme_len(l);
    if (sl) {
        if (!((sl == 5 && !strncasecmp(l.data, "http:", 5)) || (sl == 6 && !strncasecmp(l.data, "https:", 6)))
            || l.len < sl + 2 || memcmp(l.data + sl, "//", 2) != 0)
            return 0;
        t = after_authority(p, bw_str_n(l.data + sl, l.len - sl));
    } else if (l.len >= 2 && l.data[0] == '/' && l.data[1] == '/') {
        t = after_authority(p, l);
    } else if (l.data[0] == '/') {
        t = l;
    } else {
        /* relative: from the page's directory, or the page itself for "?q" */
        const char *q = memchr(page_path.data, '?', page_path.len);
        size_t n = q ? (size_t)(q - page_path.data) : page_path.len;
        if (l.data[0] != '?')
            while (n > 0 && page_path.data[n - 1] != '/')
                n--;
        t = bw_str_make(apr_pstrcat(p, n ? "" : "/", bw_str_pdup(p, bw_str_n(page_path.data, n)),
                                    bw_str_pdup(p, l), NULL));
    }
    *target = remove_dots(p, t);
    return 1;
}

/* The link as the browser reads it: "&amp;" (and &#38; / &#x26;) are '&'. */
static bw_str_t decode_amp(apr_pool_t *p, bw_str_t raw)
{
    static const char *const forms[] = { "&amp;", "&#38;", "&#x26;" };
    char *out;
    size_t i = 0, o = 0, k;
    if (!memchr(raw.data, '&', raw.len))
        return raw;
    out = apr_palloc(p, raw.len + 1);
    while (i < raw.len) {
        for (k = 0; k < 3; k++) {
            size_t n = strlen(forms[k]);
            if (raw.len - i >= n && !strncasecmp(raw.data + i, forms[k], n))
                break;
        }
        out[o++] = raw.data[i];
        i += k < 3 ? strlen(forms[k]) : 1;
    }
    return bw_str_n(out, o);
}

/* The parameter to insert into raw (the link as written) and where: before
 * its fragment; amp is how '&' is written there ("&amp;" in HTML). NULL
 * when the link is not signed. */
static const char *insertion(apr_pool_t *p, const bw_hash_conf_t *hc, bw_str_t key, bw_str_t page,
                             int kind, bw_str_t raw, bw_str_t link, const char *amp,
                             pcre2_match_data *md, size_t *at)
{
    char sig[BW_HMAC_HEX_LEN + 1];
    bw_str_t target;
    bw_str_t t = trim(raw);
    const char *hash;
    bw_str_t l = trim(link);
    if (!hc->param.len || !bw_hash_link_target(p, page, link, &target))
        return NULL;
    /* a relative link is selected by the path it leads to, as mod_security2
     * selects it; a link written with its path or URL, as written */
    if (!bw_hash_selects(hc, kind, (l.data[0] == '/' || scheme_len(l)) ? l : target, md))
        return NULL;
    bw_hmac_sha1_hex(key, bw_str_n(target.data + 1, target.len - 1), sig);
    hash = memchr(raw.data, '#', raw.len);
    *at = hash ? (size_t)(hash - raw.data) : (size_t)(t.data + t.len - raw.data);
    return apr_pstrcat(p, memchr(raw.data, '?', *at) ? amp : "?",
                       bw_str_pdup(p, hc->param), "=", sig, NULL);
}

const char *bw_hash_sign_location(apr_pool_t *p, const bw_hash_conf_t *hc, bw_str_t key,
                                  bw_str_t page_path, bw_str_t link, pcre2_match_data *md)
{
    size_t at = 0;
    const char *ins = insertion(p, hc, key, page_path, BW_HASH_LOCATION, link, link, "&", md, &at);
    if (!ins)
        return NULL;
    return apr_pstrcat(p, bw_str_pdup(p, bw_str_n(link.data, at)), ins,
                       bw_str_pdup(p, bw_str_n(link.data + at, link.len - at)), NULL);
}

/* Where the text of s from i on contains needle (any case), or s.len. */
static size_t find_ci(bw_str_t s, size_t i, const char *needle)
{
    size_t n = strlen(needle);
    for (; i + n <= s.len; i++)
        if (!strncasecmp(s.data + i, needle, n))
            return i;
    return s.len;
}

/* The signed attribute of a tag: its kind and name, or -1. */
static int tag_kind(bw_str_t name, const char **attr)
{
    static const struct { const char *tag, *attr; int kind; } tags[] = {
        { "a", "href", BW_HASH_HREF }, { "form", "action", BW_HASH_FORM_ACTION },
        { "iframe", "src", BW_HASH_IFRAME_SRC }, { "frame", "src", BW_HASH_FRAME_SRC },
    };
    size_t k;
    for (k = 0; k < sizeof(tags) / sizeof(tags[0]); k++)
        if (name.len == strlen(tags[k].tag) && !strncasecmp(name.data, tags[k].tag, name.len)) {
            *attr = tags[k].attr;
            return tags[k].kind;
        }
    return -1;
}

typedef struct {
    apr_pool_t *p;
    const bw_hash_conf_t *hc;
    bw_str_t key, page, html;
    pcre2_match_data *md;
    apr_array_header_t *edits;     /* edit_t, in page order */
} scan_t;

/* One attribute value at html[v, v + n) of a tag of kind: signed or not. */
static void attribute(scan_t *s, int kind, size_t v, size_t n)
{
    bw_str_t raw = bw_str_n(s->html.data + v, n);
    size_t at = 0;
    const char *ins = insertion(s->p, s->hc, s->key, s->page, kind, raw, decode_amp(s->p, raw),
                                "&amp;", s->md, &at);
    edit_t *e;
    if (!ins)
        return;
    e = apr_array_push(s->edits);
    e->at = v + at;
    e->text = ins;
    e->len = strlen(ins);
}

/* The attributes of a start tag from i (after its name) to its '>'; the
 * offset after the tag. Each step consumes at least one byte. */
static size_t attributes(scan_t *s, size_t i, int kind, const char *want)
{
    bw_str_t h = s->html;
    int done = 0;
    while (i < h.len && h.data[i] != '>') {
        size_t name, name_len, v, vlen;
        if (is_space(h.data[i]) || h.data[i] == '/') {
            i++;
            continue;
        }
        name = i;
        while (i < h.len && !is_space(h.data[i]) && h.data[i] != '=' && h.data[i] != '>'
               && h.data[i] != '/')
            i++;
        name_len = i - name;
        while (i < h.len && is_space(h.data[i]))
            i++;
        if (i >= h.len || h.data[i] != '=')
            continue;               /* an attribute without a value */
        for (i++; i < h.len && is_space(h.data[i]); i++)
            ;
        if (i < h.len && (h.data[i] == '"' || h.data[i] == '\'')) {
            const char *end = memchr(h.data + i + 1, h.data[i], h.len - i - 1);
            if (!end)
                return h.len;       /* unterminated: leave the rest alone */
            v = i + 1;
            vlen = (size_t)(end - h.data) - v;
            i = (size_t)(end - h.data) + 1;
        } else {
            for (v = i; i < h.len && !is_space(h.data[i]) && h.data[i] != '>'; i++)
                ;
            vlen = i - v;
        }
        if (!done && kind >= 0 && name_len == strlen(want)
            && !strncasecmp(h.data + name, want, name_len)) {
            attribute(s, kind, v, vlen);
            done = 1;
        }
    }
    return i < h.len ? i + 1 : h.len;
}

/* The tag that starts at html[i] ('<'): the offset after it, and after
 * the raw text of a script or style. */
static size_t tag(scan_t *s, size_t i)
{
    bw_str_t h = s->html, name;
    const char *attr = NULL;
    size_t n = i + 1, end;
    int kind;
    if (h.len - i >= 4 && !memcmp(h.data + i, "<!--", 4)) {
        end = find_ci(h, i + 4, "-->");
        return end < h.len ? end + 3 : h.len;
    }
    while (n < h.len && ((h.data[n] >= 'a' && h.data[n] <= 'z') || (h.data[n] >= 'A' && h.data[n] <= 'Z')
                         || (n > i + 1 && h.data[n] >= '0' && h.data[n] <= '9')))
        n++;
    name = bw_str_n(h.data + i + 1, n - i - 1);
    if (name.len == 0)
        return i + 1;
    kind = tag_kind(name, &attr);
    end = attributes(s, n, kind, attr);
    if ((name.len == 6 && !strncasecmp(name.data, "script", 6))
        || (name.len == 5 && !strncasecmp(name.data, "style", 5))) {
        /* raw text: a "<a href" inside a script is not a link */
        end = find_ci(h, end, name.len == 6 ? "</script" : "</style");
    }
    return end;
}

int bw_hash_sign_html(apr_pool_t *p, const bw_hash_conf_t *hc, bw_str_t key, bw_str_t page_path,
                      bw_str_t html, pcre2_match_data *md, bw_str_t *out)
{
    scan_t s;
    size_t i = 0, o = 0, extra = 0, from = 0;
    char *buf;
    int k;
    memset(&s, 0, sizeof(s));
    s.p = p;
    s.hc = hc;
    s.key = key;
    s.page = page_path;
    s.html = html;
    s.md = md;
    s.edits = apr_array_make(p, 8, sizeof(edit_t));
    *out = html;
    while (i < html.len) {
        const char *lt = memchr(html.data + i, '<', html.len - i);
        if (!lt)
            break;
        i = tag(&s, (size_t)(lt - html.data));
    }
    if (s.edits->nelts == 0)
        return 0;
    for (k = 0; k < s.edits->nelts; k++)
        extra += ((edit_t *)s.edits->elts)[k].len;
    buf = apr_palloc(p, html.len + extra + 1);
    for (k = 0; k < s.edits->nelts; k++) {
        const edit_t *e = &((edit_t *)s.edits->elts)[k];
        memcpy(buf + o, html.data + from, e->at - from);
        o += e->at - from;
        memcpy(buf + o, e->text, e->len);
        o += e->len;
        from = e->at;
    }
    memcpy(buf + o, html.data + from, html.len - from);
    o += html.len - from;
    buf[o] = '\0';
    *out = bw_str_n(buf, o);
    return s.edits->nelts;
}
