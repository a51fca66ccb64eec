/*
 * What @detectXSS flags, given the tags and attributes the HTML tokenizer
 * (bw_xss.c) finds:
 *  - tags that run or load active content on their own: script, iframe,
 *    frame, frameset, object, embed, applet, base, portal, handler, import,
 *    layer / ilayer, vmlframe (looked up by local name: x:script counts),
 *    and the processing instructions <?import (IE behaviours) and
 *    <?xml-stylesheet (XSLT with script in XML documents);
 *  - event handlers: an attribute "on" + letters with a value, when the
 *    letters name an event a browser fires (171 of them, old IE and WebKit
 *    ones included), or, on a tag the value opened itself, the value looks
 *    like code ( ( ` = { ); an unknown "on..." name with a plain value
 *    (online=1) is not one;
 *    SVG animation of a handler (attributeName=on...);
 *  - URLs: a javascript:/vbscript:/livescript:/mocha: value in any
 *    attribute, read as a browser reads a URL (leading blanks and control
 *    bytes dropped, tab/CR/LF inside ignored, character references decoded);
 *    a data: URL in an attribute that holds a URL, unless it is a raster
 *    image; a whole value read as a URL (the url context) needs code after
 *    the scheme ( ( ` = { [ ) and a data: URL of an active type;
 *  - CSS that runs script, in style="" or a <style> element: expression(),
 *    javascript:, vbscript:, behavior:, -moz-binding, @import (comments,
 *    escapes and blanks looked through: exp/ * * /ression, \65xpression);
 *    and for a value echoed inside a style attribute (the css context) the
 *    declaration forms only: ":expression(", "url(javascript:",
 *    "url(vbscript:", "behavior:url(", "-moz-binding:" (prose such as
 *    "JavaScript: The Good Parts" or "an expression (x + 1)" is not CSS);
 *  - attributes that hand the document or a form to someone else: srcdoc,
 *    formaction, <form action> to another site, <meta http-equiv>,
 *    <link href>.
 * Everything here reads a bounded prefix or walks once; nothing allocates.
 */
#include <string.h>
#include "bw_xss.h"
#include "bw_xss_int.h"

#define NAME_MAX_LC   48     /* longer names are never in the tables */
#define SCHEME_SCAN  512     /* bytes read to find a URL scheme */
#define CAPTURE_MAX   64     /* bytes of the construct kept for the log */

static const struct { const char *name; int kind; } tags[] = {
    {"applet", XT_ACTIVE}, {"base", XT_ACTIVE}, {"embed", XT_ACTIVE},
    {"form", XT_FORM}, {"frame", XT_ACTIVE}, {"frameset", XT_ACTIVE},
    {"handler", XT_ACTIVE}, {"iframe", XT_ACTIVE}, {"ilayer", XT_ACTIVE},
    {"import", XT_ACTIVE}, {"layer", XT_ACTIVE}, {"link", XT_LINK},
    {"meta", XT_META}, {"object", XT_ACTIVE}, {"portal", XT_ACTIVE},
    {"script", XT_ACTIVE}, {"style", XT_STYLE}, {"vmlframe", XT_ACTIVE},
};

/* Event names without the leading "on", sorted. */
static const char *const events[] = {
    "abort", "activate", "afterprint", "afterscriptexecute", "animationcancel",
    "animationend", "animationiteration", "animationstart", "auxclick",
    "beforeactivate", "beforecopy", "beforecut", "beforedeactivate",
    "beforeeditfocus", "beforeinput", "beforepaste", "beforeprint",
    "beforescriptexecute", "beforetoggle", "beforeunload", "begin", "blur",
    "bounce", "cancel", "canplay", "canplaythrough", "change", "click", "close",
    "contentvisibilityautostatechange", "contextlost", "contextmenu",
    "contextrestored", "controlselect", "copy", "cuechange", "cut", "dataavailable",
    "datasetchanged", "datasetcomplete", "dblclick", "deactivate", "drag",
    "dragend", "dragenter", "dragexit", "dragleave", "dragover", "dragstart",
    "drop", "durationchange", "emptied", "end", "ended", "error", "errorupdate",
    "filterchange", "finish", "focus", "focusin", "focusout", "formdata",
    "fullscreenchange", "fullscreenerror", "gesturechange", "gestureend",
    "gesturestart", "hashchange", "help", "input", "invalid", "keydown", "keypress",
    "keyup", "layoutcomplete", "load", "loadeddata", "loadedmetadata", "loadend",
    "loadstart", "losecapture", "message", "messageerror", "mousedown",
    "mouseenter", "mouseleave", "mousemove", "mouseout", "mouseover", "mouseup",
    "mousewheel", "move", "moveend", "movestart", "mozfullscreenchange", "offline",
    "online", "pagehide", "pagereveal", "pageshow", "pageswap", "paste", "pause",
    "play", "playing", "pointercancel", "pointerdown", "pointerenter",
    "pointerleave", "pointermove", "pointerout", "pointerover", "pointerrawupdate",
    "pointerup", "popstate", "progress", "propertychange", "ratechange",
    "readystatechange", "rejectionhandled", "repeat", "reset", "resize", "rowenter",
    "rowexit", "rowsdelete", "rowsinserted", "scroll", "scrollend",
    "scrollsnapchange", "scrollsnapchanging", "search", "securitypolicyviolation",
    "seeked", "seeking", "select", "selectionchange", "selectstart", "show",
    "slotchange", "stalled", "start", "stop", "storage", "submit", "suspend",
    "timeupdate", "toggle", "touchcancel", "touchend", "touchmove", "touchstart",
    "transitioncancel", "transitionend", "transitionrun", "transitionstart",
    "unhandledrejection", "unload", "volumechange", "waiting", "webkitanimationend",
    "webkitanimationiteration", "webkitanimationstart", "webkitmouseforcechanged",
    "webkitmouseforcedown", "webkitmouseforceup", "webkitmouseforcewillbegin",
    "webkitplaybacktargetavailabilitychanged", "webkittransitionend", "wheel",
    "zoom",
};

/* Attributes whose value is a URL the browser loads or navigates to. */
static const char *const url_attrs[] = {
    "action", "archive", "background", "cite", "classid", "codebase", "data",
    "dynsrc", "folder", "formaction", "from", "href", "icon", "longdesc",
    "lowsrc", "manifest", "ping", "poster", "profile", "src", "srcset", "to",
    "usemap", "values", "xlink:href", "xml:base",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Lower-case copy of p[0..n) as a C string; 0 when it does not fit. */
static int lower_copy(const unsigned char *p, size_t n, char *buf, size_t cap)
{
    size_t i;
    if (n == 0 || n >= cap)
        return 0;
    for (i = 0; i < n; i++)
        buf[i] = (char)bw_lower1(p[i]);
    buf[n] = '\0';
    return 1;
}

static int in_list(const char *const *list, size_t n, const char *w)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(w, list[mid]);
        if (c == 0)
            return 1;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

int bw_xss_tables_sorted(void)
{
    size_t i;
    for (i = 1; i < NELEM(tags); i++)
        if (strcmp(tags[i - 1].name, tags[i].name) >= 0)
            return 0;
    for (i = 1; i < NELEM(events); i++)
        if (strcmp(events[i - 1], events[i]) >= 0)
            return 0;
    for (i = 1; i < NELEM(url_attrs); i++)
        if (strcmp(url_attrs[i - 1], url_attrs[i]) >= 0)
            return 0;
    return 1;
}

int xs_hit(xs_t *x, int reason, size_t off, size_t n)
{
    x->reason = reason;
    x->off = off;
    x->n = n > CAPTURE_MAX ? CAPTURE_MAX : n;
    return 1;
}

int xs_tag_kind(const unsigned char *name, size_t n)
{
    char buf[NAME_MAX_LC];
    size_t i, start = 0;
    for (i = 0; i < n; i++)
        if (name[i] == ':' || name[i] == '<')
            start = i + 1;
    if (!lower_copy(name + start, n - start, buf, sizeof(buf)))
        return XT_OTHER;
    for (i = 0; i < NELEM(tags); i++)
        if (strcmp(buf, tags[i].name) == 0)
            return tags[i].kind;
    return XT_OTHER;
}

/* One character of an attribute value with character references decoded
 * (&#106; &#x6A; &#0000106 without ";", &colon; &Tab; &NewLine;). Returns
 * the code point (capped) and advances *i. */
static unsigned long next_char(const unsigned char *p, size_t n, size_t *i)
{
    static const struct { const char *name; unsigned char c; } named[] = {
        {"colon;", ':'}, {"Tab;", '\t'}, {"NewLine;", '\n'}, {"lpar;", '('},
        {"rpar;", ')'}, {"sol;", '/'}, {"amp;", '&'}, {"quot;", '"'},
    };
    size_t j = *i + 1, k;
    unsigned long v = 0;
    int hex, digits = 0;

    if (p[*i] != '&' || j >= n) {
        return p[(*i)++];
    }
    if (p[j] == '#') {
        j++;
        hex = j < n && (p[j] == 'x' || p[j] == 'X');
        j += (size_t)hex;
        for (; j < n; j++, digits++) {
            unsigned char c = bw_lower1(p[j]);
            unsigned d = (c >= '0' && c <= '9') ? (unsigned)(c - '0')
                : (hex && c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10) : 99;
            if (d == 99)
                break;
            v = v * (hex ? 16 : 10) + d;
            if (v > 0x10ffff)
                v = 0x110000;    /* saturate: stays invalid, never wraps */
        }
        if (digits == 0)
            return p[(*i)++];
        *i = (j < n && p[j] == ';') ? j + 1 : j;
        return v;
    }
    for (k = 0; k < NELEM(named); k++) {
        size_t L = strlen(named[k].name);
        if (n - j >= L && memcmp(p + j, named[k].name, L) == 0) {
            *i = j + L;
            return named[k].c;
        }
    }
    return p[(*i)++];
}

enum { SCH_NONE = 0, SCH_SCRIPT, SCH_DATA };

/* The scheme at the start of a URL value, read as a browser does; *after
 * is set to the offset just past the ":" (for the data: type). */
static int read_scheme(const unsigned char *p, size_t n, size_t *after)
{
    char buf[16];
    size_t i = 0, bl = 0, lim = n < SCHEME_SCAN ? n : SCHEME_SCAN;
    int leading = 1;

    /* A first byte that is neither blank, control nor "&" is the scheme's
     * first letter as read below: none of the schemes that matter can
     * start with anything but j, v, l, m or d. */
    if (n > 0 && p[0] > 0x20 && p[0] != '&') {
        unsigned char c = bw_lower1(p[0]);
        if (c != 'j' && c != 'v' && c != 'l' && c != 'm' && c != 'd')
            return SCH_NONE;
    }

    while (i < lim) {
        unsigned long c = next_char(p, lim, &i);
        if (leading && c <= 0x20)
            continue;
        leading = 0;
        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == ':') {
            buf[bl] = '\0';
            *after = i;
            if (strcmp(buf, "javascript") == 0 || strcmp(buf, "vbscript") == 0
                || strcmp(buf, "livescript") == 0 || strcmp(buf, "mocha") == 0)
                return SCH_SCRIPT;
            return strcmp(buf, "data") == 0 ? SCH_DATA : SCH_NONE;
        }
        if (c > 0x7f || bl + 1 >= sizeof(buf)
            || !(is_alpha((unsigned char)c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'))
            return SCH_NONE;
        buf[bl++] = (char)bw_lower1((unsigned char)c);
    }
    return SCH_NONE;
}

/* The media type of a data: URL, lower-cased, up to ";" or ",". */
static size_t data_type(const unsigned char *p, size_t n, char *buf, size_t cap)
{
    size_t i, o = 0;
    for (i = 0; i < n && p[i] != ';' && p[i] != ','; i++) {
        if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')
            continue;
        if (o + 1 >= cap)
            break;
        buf[o++] = (char)bw_lower1(p[i]);
    }
    buf[o] = '\0';
    return i < n ? o : (size_t)-1;    /* no ";" or ",": not a data URL */
}

static int raster_image(const unsigned char *p, size_t n)
{
    char t[32];
    if (data_type(p, n, t, sizeof(t)) == (size_t)-1)
        return 0;
    return strncmp(t, "image/", 6) == 0 && strncmp(t, "image/svg", 9) != 0;
}

/* Script after "javascript:" calls, assigns or indexes something; a whole
 * value like "JavaScript: The Good Parts" is a book title, not a URL. */
static int code_like(const unsigned char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] == '(' || p[i] == '`' || p[i] == '=' || p[i] == '{' || p[i] == '[')
            return 1;
    return 0;
}

int xs_url_danger(const unsigned char *p, size_t n)
{
    static const char *const active[] = {
        "", "application/ecmascript", "application/javascript",
        "application/x-javascript", "application/xhtml+xml", "application/xml",
        "text/ecmascript", "text/html", "text/javascript",
        "text/vbscript", "text/xml",
    };
    size_t after = 0;
    char t[32];
    int sch = read_scheme(p, n, &after);

    if (sch == SCH_SCRIPT)
        return code_like(p + after, n - after);
    if (sch != SCH_DATA || data_type(p + after, n - after, t, sizeof(t)) == (size_t)-1)
        return 0;
    /* image/svg: "svg+xml" may have lost its "+" to URL decoding */
    return in_list(active, NELEM(active), t) || strncmp(t, "image/svg", 9) == 0;
}

/* "on" + letters with a value that a browser would run (see the header).
 * An unknown name counts only on a tag the value itself opened: text read
 * as the attributes of the page's tag (code like "onlineCount = f();")
 * would otherwise look like handlers. */
static int is_event(const unsigned char *name, size_t n, const unsigned char *val,
                    size_t vn, int has_val, int real_tag)
{
    char buf[NAME_MAX_LC];
    size_t run = 2, i;

    if (n < 5 || bw_lower1(name[0]) != 'o' || bw_lower1(name[1]) != 'n')
        return 0;
    while (run < n && is_alpha(name[run]))
        run++;
    if (run - 2 < 3)
        return 0;
    if (lower_copy(name + 2, run - 2, buf, sizeof(buf)) && in_list(events, NELEM(events), buf))
        return has_val || run < n;
    if (run < n || !has_val || !real_tag)
        return 0;
    for (i = 0; i < vn; i++)
        if (val[i] == '(' || val[i] == '`' || val[i] == '=' || val[i] == '{')
            return 1;
    return 0;
}

/* A URL that leaves the page's site: a scheme ("https:", "javascript:")
 * or a protocol-relative "//host". A form posting to "/search" is the
 * site's own business; one posting to another host collects what the
 * victim types. */
static int offsite(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n && p[i] <= 0x20)
        i++;
    if (n - i >= 2 && (p[i] == '/' || p[i] == '\\') && (p[i + 1] == '/' || p[i + 1] == '\\'))
        return 1;
    for (; i < n && i < 32; i++) {
        if (p[i] == ':')
            return 1;
        if (!(is_alpha(p[i]) || (p[i] >= '0' && p[i] <= '9') || p[i] == '+' || p[i] == '-' || p[i] == '.'))
            return 0;
    }
    return 0;
}

int xs_check_attr(xs_t *x, size_t no, size_t nn, size_t vo, size_t vn, int has_val)
{
    const unsigned char *name = x->s + no, *val = x->s + vo;
    char ln[NAME_MAX_LC];
    size_t after = 0;
    int known, sch;

    if (is_event(name, nn, val, vn, has_val, x->real))
        return xs_hit(x, BW_XSS_EVENT, no, (has_val ? vo + vn : no + nn) - no);
    if (!has_val)
        return 0;
    known = lower_copy(name, nn, ln, sizeof(ln));
    if (known) {
        if (strcmp(ln, "style") == 0 && xs_css_danger(val, vn, 1))
            return xs_hit(x, BW_XSS_STYLE, no, vo + vn - no);
        if (strcmp(ln, "srcdoc") == 0 || strcmp(ln, "formaction") == 0
            || (x->tag == XT_FORM && strcmp(ln, "action") == 0 && offsite(val, vn))
            || (x->tag == XT_META && strcmp(ln, "http-equiv") == 0)
            || (x->tag == XT_LINK && strcmp(ln, "href") == 0))
            return xs_hit(x, BW_XSS_ATTR, no, vo + vn - no);
        if (strcmp(ln, "attributename") == 0 && vn >= 2 && bw_lower1(val[0]) == 'o' && bw_lower1(val[1]) == 'n')
            return xs_hit(x, BW_XSS_EVENT, no, vo + vn - no);
    }
    sch = read_scheme(val, vn, &after);
    if (sch == SCH_SCRIPT
        || (sch == SCH_DATA && known && in_list(url_attrs, NELEM(url_attrs), ln)
            && !raster_image(val + after, vn - after)))
        return xs_hit(x, BW_XSS_URL, vo, vn);
    return 0;
}

/* CSS escapes: "\" + up to six hex digits (+ one blank), or "\" + a byte. */
static unsigned long css_escape(const unsigned char *p, size_t n, size_t *i)
{
    size_t j = *i + 1, k = 0;
    unsigned long v = 0;
    while (j < n && k < 6) {
        unsigned char c = bw_lower1(p[j]);
        if (c >= '0' && c <= '9')
            v = v * 16 + (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = v * 16 + (unsigned)(c - 'a' + 10);
        else
            break;
        j++, k++;
    }
    if (k == 0) {
        *i = j < n ? j + 1 : j;
        return j < n ? p[j] : ' ';
    }
    if (j < n && (p[j] == ' ' || p[j] == '\t' || p[j] == '\n' || p[j] == '\r' || p[j] == '\f'))
        j++;
    *i = j;
    return v;
}

/* The patterns with their lengths (computed once, by the compiler). */
typedef struct {
    const char *s;
    size_t n;
} css_pat_t;

#define PAT(s) { s, sizeof(s) - 1 }
static const css_pat_t css_any[] = {
    PAT("expression("), PAT("javascript:"), PAT("vbscript:"), PAT("livescript:"),
    PAT("behavior:"), PAT("-moz-binding"), PAT("@import"),
};
static const css_pat_t css_decl[] = {
    PAT(":expression("), PAT("url(javascript:"), PAT("url(vbscript:"), PAT("behavior:url("),
    PAT("-moz-binding:"),
};
#undef PAT

/* Normalises CSS (comments, escapes, optional entities, blanks and case)
 * into a 16-byte window and looks for a pattern ending at each byte. */
static int css_scan(const unsigned char *p, size_t n, int entities,
                    const css_pat_t *bad, size_t nbad)
{
    unsigned char ring[16];
    size_t i = 0, k, L;
    unsigned idx = 0;

    memset(ring, 0, sizeof(ring));
    while (i < n) {
        unsigned long c = p[i];
        if (c == '/' && i + 1 < n && p[i + 1] == '*') {
            const unsigned char *e = i + 2 < n ? memmem(p + i + 2, n - i - 2, "*/", 2) : NULL;
            i = e ? (size_t)(e - p) + 2 : n;
            continue;
        }
        if (c == '\\')
            c = css_escape(p, n, &i);
        else if (c == '&' && entities)
            c = next_char(p, n, &i);
        else
            i++;
        if (c <= 0x20 || c > 0x7f)
            continue;
        ring[idx++ & 15] = bw_lower1((unsigned char)c);
        if (c != '(' && c != ':' && c != 'g' && c != 't' && c != 'G' && c != 'T')
            continue;
        for (k = 0; k < nbad; k++) {
            size_t j;
            L = bad[k].n;
            if (idx < L)
                continue;
            for (j = 0; j < L && ring[(idx - L + j) & 15] == (unsigned char)bad[k].s[j]; j++)
                ;
            if (j == L)
                return 1;
        }
    }
    return 0;
}

int xs_css_danger(const unsigned char *p, size_t n, int entities)
{
    return css_scan(p, n, entities, css_any, NELEM(css_any));
}

/* Each css_decl pattern holds a "(" or a "-"; the text css_scan() reads
 * holds only the value's own bytes unless a CSS escape (a backslash) or a
 * character reference ("&") makes others. Without any of the four, the
 * scan cannot match and is skipped. */
int xs_css_value_danger(const unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i] == '(' || p[i] == '-' || p[i] == '\\' || p[i] == '&')
            return css_scan(p, n, 1, css_decl, NELEM(css_decl));
    return 0;
}
