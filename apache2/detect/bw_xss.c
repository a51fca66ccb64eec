/*
 * The HTML tokenizer behind @detectXSS and the contexts it is started in
 * (what counts as dangerous is in bw_xss_check.c).
 *
 * The states follow HTML5's tokenizer, reduced to what decides whether
 * markup is created:
 *   data            text up to "<"; "<" starts markup only before a letter,
 *                   "/", "!" or "?" ("a < b", "<3" stay text)
 *   tag open/name   "<" letter: the name runs to a blank, "/" or ">"
 *                   (so "<svg/onload=..." is tag "svg" then an attribute)
 *   attributes      before-name (blanks and "/" skipped), name (to blank,
 *                   "/", ">" or "="; a leading "=" belongs to the name),
 *                   after-name, before-value, then a "..." / '...' value to
 *                   the matching quote or an unquoted value to a blank or
 *                   ">"; after a quoted value anything but a blank, "/" or
 *                   ">" starts the next attribute, as browsers do
 *   end tags        "</" letter: read like a start tag, attributes ignored
 *   comments        "<!--" to "-->" or "--!>" ("<!-->" and "<!--->" are
 *                   empty); "<!", "<?" and "</" + non-letter are bogus
 *                   comments to the next ">" (but <?import and
 *                   <?xml-stylesheet count as tags); an IE conditional comment
 *                   ("<!--[if ...]>") is read as markup, as IE read it
 *   raw text        the text of <style> up to "</style" is CSS
 * A value cut off in the middle of a tag still counts: the page's own markup
 * after the echo would complete it. Markup inside an attribute value is
 * read once more as markup (see markup_in_value()).
 *
 * Contexts (where the page echoes the value):
 *   data       as-is between tags
 *   url        the whole value as a URL attribute (javascript:..., data:...)
 *   css        the whole value inside a style attribute
 *   unquoted   inside <x a=VALUE>: the value ends at the first blank or ">",
 *              the rest is read as attributes of that tag, then as markup
 *   attributes inside <x VALUE>: read as attributes from the start
 *   "  '       inside a quoted value: it ends at the first matching quote,
 *              the rest is read as attributes, then as markup
 * The attribute contexts run only when the value has an "=" or a "<"; the
 * quote contexts only when it has that quote.
 */
#include <stdint.h>
#include <string.h>
#include "bw_xss.h"
#include "bw_xss_int.h"

static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static int is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* One attribute from p: name, optional value. Returns the offset after it. */
static size_t one_attr(const xs_t *x, size_t p, size_t v[4], int *has_val)
{
    const unsigned char *s = x->s;
    size_t len = x->len;

    v[0] = p++;                       /* a leading "=" is part of the name */
    while (p < len && !is_ws(s[p]) && s[p] != '/' && s[p] != '>' && s[p] != '=')
        p++;
    v[1] = p - v[0];
    v[2] = v[3] = 0;
    *has_val = 0;
    while (p < len && is_ws(s[p]))
        p++;
    if (p >= len || s[p] != '=')
        return p;
    p++;
    while (p < len && is_ws(s[p]))
        p++;
    *has_val = 1;
    if (p < len && (s[p] == '"' || s[p] == '\'')) {
        const unsigned char *e = memchr(s + p + 1, s[p], len - p - 1);
        size_t end = e ? (size_t)(e - s) : len;
        v[2] = p + 1;
        v[3] = end - v[2];
        return e ? end + 1 : len;
    }
    v[2] = p;
    while (p < len && !is_ws(s[p]) && s[p] != '>')
        p++;
    v[3] = p - v[2];
    return p;
}

static int data(xs_t *x);

/* Markup inside an attribute value is read as markup once more (not
 * deeper): it goes live when a page echoes the value unquoted, when
 * innerHTML serialisation re-parses it (mutation XSS) and in old IE, which
 * also quoted values with backticks. */
static int markup_in_value(xs_t *x, size_t off, size_t n)
{
    xs_t in;

    memset(&in, 0, sizeof(in));
    in.s = x->s + off;
    in.len = n;
    in.nested = 1;
    if (!data(&in))
        return 0;
    return xs_hit(x, in.reason, off + in.off, in.n);
}

/* The attribute list from x->pos to ">" (*closed = 1, x->pos after it) or
 * the end of the value. check: attributes of a start tag are checked. */
static int attrs(xs_t *x, int check, int *closed)
{
    size_t p = x->pos, v[4];
    int has_val;

    for (;;) {
        while (p < x->len && (is_ws(x->s[p]) || x->s[p] == '/'))
            p++;
        if (p >= x->len) {
            x->pos = p;
            *closed = 0;
            return 0;
        }
        if (x->s[p] == '>') {
            x->pos = p + 1;
            *closed = 1;
            return 0;
        }
        p = one_attr(x, p, v, &has_val);
        if (check && xs_check_attr(x, v[0], v[1], v[2], v[3], has_val))
            return 1;
        if (has_val && !x->nested && v[3] > 1 && memchr(x->s + v[2], '<', v[3]) != NULL
            && markup_in_value(x, v[2], v[3]))
            return 1;
    }
}

/* The text of a <style> element, up to "</style" (any case). */
static int style_text(xs_t *x)
{
    const unsigned char *s = x->s;
    size_t start = x->pos, p = start, end = x->len;

    while (p < x->len) {
        const unsigned char *lt = memchr(s + p, '<', x->len - p);
        if (lt == NULL)
            break;
        p = (size_t)(lt - s);
        if (x->len - p >= 7 && s[p + 1] == '/' && (s[p + 2] | 0x20) == 's'
            && (s[p + 3] | 0x20) == 't' && (s[p + 4] | 0x20) == 'y'
            && (s[p + 5] | 0x20) == 'l' && (s[p + 6] | 0x20) == 'e') {
            end = p;
            break;
        }
        p++;
    }
    x->pos = end;
    if (xs_css_danger(s + start, end - start, 0))
        return xs_hit(x, BW_XSS_STYLE, start, end - start);
    return 0;
}

/* "<" at lt followed by a letter or "/" + letter. */
static int tag(xs_t *x, size_t lt)
{
    const unsigned char *s = x->s;
    size_t p = lt + 1, name;
    int end = 0, closed, kind;

    if (s[p] == '/') {
        end = 1;
        p++;
    }
    name = p;
    while (p < x->len && !is_ws(s[p]) && s[p] != '/' && s[p] != '>')
        p++;
    kind = xs_tag_kind(s + name, p - name);
    if (!end && kind == XT_ACTIVE)
        return xs_hit(x, BW_XSS_TAG, lt, p - lt);
    x->tag = end ? XT_OTHER : kind;
    x->real = 1;
    x->pos = p;
    if (attrs(x, !end, &closed))
        return 1;
    if (closed && !end && kind == XT_STYLE)
        return style_text(x);
    return 0;
}

/* Comments and other "<!", "<?", "</" markup at lt: the offset after it. */
static size_t markup(const xs_t *x, size_t lt)
{
    const unsigned char *s = x->s;
    size_t len = x->len, p;

    if (len - lt >= 4 && s[lt + 1] == '!' && s[lt + 2] == '-' && s[lt + 3] == '-') {
        p = lt + 4;
        if (len - p >= 3 && s[p] == '[' && (s[p + 1] | 0x20) == 'i' && (s[p + 2] | 0x20) == 'f')
            return p;                 /* IE conditional comment: markup inside */
        if (p < len && s[p] == '>')
            return p + 1;
        if (len - p >= 2 && s[p] == '-' && s[p + 1] == '>')
            return p + 2;
        while (p + 2 < len) {
            const unsigned char *d = memmem(s + p, len - p, "--", 2);
            if (d == NULL)
                break;
            p = (size_t)(d - s);
            if (p + 2 < len && s[p + 2] == '>')
                return p + 3;
            if (p + 3 < len && s[p + 2] == '!' && s[p + 3] == '>')
                return p + 4;
            p++;
        }
        return len;
    }
    {
        const unsigned char *gt = memchr(s + lt + 1, '>', len - lt - 1);
        return gt ? (size_t)(gt - s) + 1 : len;
    }
}

/* <?import ...> (IE behaviours) and <?xml-stylesheet ...> (XSLT, which may
 * carry script, in XML documents) load active content. */
static int active_pi(const xs_t *x, size_t lt)
{
    static const char *const pis[] = { "import", "xml-stylesheet" };
    size_t k, j, p = lt + 2;
    for (k = 0; k < sizeof(pis) / sizeof(pis[0]); k++) {
        size_t L = strlen(pis[k]);
        if (x->len - p < L)
            continue;
        for (j = 0; j < L && (x->s[p + j] | 0x20) == pis[k][j]; j++)
            ;
        if (j == L && (p + L == x->len || !is_alpha(x->s[p + L])))
            return 1;
    }
    return 0;
}

/* The data state from x->pos to the end of the value. */
static int data(xs_t *x)
{
    const unsigned char *s = x->s;

    while (x->pos < x->len) {
        const unsigned char *lt = memchr(s + x->pos, '<', x->len - x->pos);
        size_t i;
        unsigned char c;

        if (lt == NULL)
            break;
        i = (size_t)(lt - s);
        if (i + 1 >= x->len)
            break;
        c = s[i + 1];
        if (is_alpha(c) || (c == '/' && i + 2 < x->len && is_alpha(s[i + 2]))) {
            if (tag(x, i))
                return 1;
        } else if (c == '!' || c == '?' || c == '/') {
            if (c == '?' && active_pi(x, i))
                return xs_hit(x, BW_XSS_TAG, i, x->len - i);
            x->pos = markup(x, i);
        } else {
            x->pos = i + 1;
        }
    }
    return 0;
}

/* One context: from start, first as attributes of an unknown tag when
 * in_attrs, then as markup. */
static int run(xs_t *x, int ctx, size_t start, int in_attrs)
{
    int closed = 1;

    x->ctx = ctx;
    x->pos = start;
    x->tag = XT_OTHER;
    x->real = 0;
    if (in_attrs && attrs(x, 1, &closed))
        return 1;
    return closed ? data(x) : 0;
}

static int contexts(xs_t *x)
{
    const unsigned char *s = x->s, *q;
    size_t n = x->len, i;
    int has_lt = memchr(s, '<', n) != NULL;

    if (has_lt && run(x, BW_XSS_CTX_DATA, 0, 0))
        return 1;
    x->ctx = BW_XSS_CTX_URL;
    if (xs_url_danger(s, n))
        return xs_hit(x, BW_XSS_URL, 0, n);
    x->ctx = BW_XSS_CTX_CSS;
    if ((memchr(s, '(', n) != NULL || memchr(s, ':', n) != NULL) && xs_css_value_danger(s, n))
        return xs_hit(x, BW_XSS_STYLE, 0, n);
    if (!has_lt && memchr(s, '=', n) == NULL)
        return 0;
    for (i = 0; i < n && !is_ws(s[i]) && s[i] != '>'; i++)
        ;
    if (i < n && run(x, BW_XSS_CTX_UNQUOTED, i, 1))
        return 1;
    if (run(x, BW_XSS_CTX_ATTRS, 0, 1))
        return 1;
    if ((q = memchr(s, '"', n)) != NULL && run(x, BW_XSS_CTX_DQUOTE, (size_t)(q - s) + 1, 1))
        return 1;
    if ((q = memchr(s, '\'', n)) != NULL && run(x, BW_XSS_CTX_SQUOTE, (size_t)(q - s) + 1, 1))
        return 1;
    return 0;
}

/* The fast path: 1 when none of "<" "=" ":" "&" and backslash is in the
 * value, which proves that contexts() finds nothing:
 *  - the data context runs only on a "<", the attribute contexts (unquoted,
 *    attributes, quotes) only on a "<" or an "=";
 *  - the url context needs a ":" from next_char() (bw_xss_check.c), which
 *    returns one only for a ":" byte or a character reference ("&...");
 *  - every pattern of the css context (xs_css_value_danger) holds a ":",
 *    and css_scan() reads one only from a ":" byte, a CSS escape (a
 *    backslash) or a character reference.
 * Every other byte, NUL included, is fine: one pass, no state. Eight
 * bytes are tested at a time in a 64-bit word, the last eight overlapping
 * the eight before (values shorter than that byte by byte). */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Non-zero when one of the eight bytes of x is zero (exact as a yes/no). */
static uint64_t has_zero(uint64_t x)
{
    return (x - ONES) & ~x & HIGHS;
}

/* The fast path's stop bytes: the table and the word-at-a-time test below
 * must name the same five. */
static const unsigned char fast_stop[256] = {
    ['<'] = 1, ['='] = 1, [':'] = 1, ['&'] = 1, ['\\'] = 1,
};

void bw_xss_fast_gate(uint64_t gate[4])
{
    unsigned c;
    memset(gate, 0, sizeof(uint64_t) * 4);
    for (c = 0; c < 256; c++)
        if (fast_stop[c])
            gate[c / 64] |= (uint64_t)1 << (c % 64);
}

int bw_xss_fast_clean(bw_str_t value)
{
    const unsigned char *stop = fast_stop;
    const unsigned char *s = (const unsigned char *)value.data;
    size_t i;

    if (value.len < 8) {
        for (i = 0; i < value.len; i++)
            if (stop[s[i]])
                return 0;
        return 1;
    }
    for (i = 0;; i += 8) {
        uint64_t x;
        if (i + 8 > value.len)
            i = value.len - 8;       /* the last eight, overlapping */
        memcpy(&x, s + i, 8);
        if (has_zero(x ^ (ONES * '<')) | has_zero(x ^ (ONES * '=')) | has_zero(x ^ (ONES * ':'))
            | has_zero(x ^ (ONES * '&')) | has_zero(x ^ (ONES * '\\')))
            return 0;
        if (i + 8 == value.len)
            return 1;
    }
}

int bw_xss_detect(bw_str_t value, bw_xss_result_t *res)
{
    return !bw_xss_fast_clean(value) && bw_xss_detect_full(value, res);
}

int bw_xss_detect_full(bw_str_t value, bw_xss_result_t *res)
{
    xs_t x;

    if (value.len == 0)
        return 0;
    memset(&x, 0, sizeof(x));
    x.s = (const unsigned char *)value.data;
    x.len = value.len;
    if (!contexts(&x))
        return 0;
    if (res != NULL) {
        res->off = x.off;
        res->len = x.n;
        res->context = x.ctx;
        res->reason = x.reason;
    }
    return 1;
}

const char *bw_xss_context_name(int context)
{
    static const char *const names[] = {
        "none", "data", "unquoted", "attributes", "double-quote", "single-quote", "url", "css"
    };
    return (context >= 0 && context <= BW_XSS_CTX_CSS) ? names[context] : "none";
}

const char *bw_xss_reason_name(int reason)
{
    static const char *const names[] = { "none", "tag", "event", "url", "style", "attribute" };
    return (reason >= 0 && reason <= BW_XSS_ATTR) ? names[reason] : "none";
}
