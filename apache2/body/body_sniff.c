/*
 * What a body or an uploaded file is, by its content.
 *
 * A backend reads what it is sent, whatever the label: most JSON APIs parse
 * a body without a Content-Type, and an uploaded "text/plain" note or an
 * "application/octet-stream" file with script text in it is text to the
 * application that stores and later shows it. The engine uses these two
 * tests to inspect such content as what it is (SecRequestBodyProcessorGuess,
 * SecUploadTextLimit). Both only look: they decide which processor runs, or
 * whether a file part's first bytes become a value; the processor itself
 * then proves the guess (a body that looked like JSON and is not fails as
 * JSON).
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include "body_internal.h"

static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Index of the first byte after a UTF-8 byte order mark and white space. */
static size_t skip_lead(bw_str_t b, size_t i)
{
    if (i == 0 && b.len >= 3 && !memcmp(b.data, "\xEF\xBB\xBF", 3))
        i = 3;
    while (i < b.len && is_ws((unsigned char)b.data[i]))
        i++;
    return i;
}

/* A JSON text starts with an object or an array. The byte after the
 * bracket must be what JSON allows there, so that prose which happens to
 * start with one ("[citation needed] ...", "{draft}") is not taken for
 * JSON. The end of the data there still counts: a prefix may stop anywhere. */
static int looks_json(bw_str_t b, size_t i)
{
    char open = b.data[i];
    i = skip_lead(b, i + 1);
    if (i >= b.len)
        return 1;
    if (open == '{')
        return b.data[i] == '"' || b.data[i] == '}';
    return strchr("{[\"-0123456789tfn]", b.data[i]) != NULL && b.data[i] != '\0';
}

/* XML: a declaration, a doctype or comment, or an element name. */
static int looks_xml(bw_str_t b, size_t i)
{
    unsigned char c;
    if (++i >= b.len)
        return 1;
    c = (unsigned char)b.data[i];
    return c == '?' || c == '!' || c == '_' || c == ':' || isalpha(c) || c >= 0x80;
}

/* Bytes a form field name is made of (as browsers and scripts write them:
 * %-escapes, '+', PHP's brackets); white space, quotes and markup are not. */
static int name_byte(unsigned char c)
{
    return isalnum(c) || c >= 0x80 || strchr("_-.[]%+*~:@/,!$()|^", c) != NULL;
}

/* URL-encoded: no control bytes but line ends and tabs, and a first field
 * "name=" whose name is made of name bytes. */
static int looks_urlencoded(bw_str_t b, size_t i)
{
    size_t k, eq = 0;
    for (k = i; k < b.len; k++) {
        unsigned char c = (unsigned char)b.data[k];
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
            return 0;
    }
    for (k = i; k < b.len && b.data[k] != '&' && b.data[k] != ';'; k++) {
        if (b.data[k] == '=') {
            eq = k;
            break;
        }
        if (!name_byte((unsigned char)b.data[k]))
            return 0;
    }
    return eq > i;
}

const char *bw_body_sniff(bw_str_t b)
{
    size_t i;
    if (!b.data)
        return NULL;
    i = skip_lead(b, 0);
    if (i >= b.len)
        return NULL;
    if ((b.data[i] == '{' || b.data[i] == '[') && looks_json(b, i))
        return "JSON";
    if (b.data[i] == '<' && looks_xml(b, i))
        return "XML";
    if (looks_urlencoded(b, i))
        return "URLENCODED";
    return NULL;
}

/* ---- uploaded files ----------------------------------------------------- */

/* Signatures of common binary formats: an image that happens to have no
 * NUL in its first bytes is still not text. */
static int binary_signature(bw_str_t c)
{
    static const struct { const char *magic; size_t len; } sigs[] = {
        { "\x89PNG", 4 }, { "GIF87a", 6 }, { "GIF89a", 6 }, { "\xFF\xD8\xFF", 3 },
        { "%PDF-", 5 }, { "PK\x03\x04", 4 }, { "\x1F\x8B", 2 }, { "\x7F" "ELF", 4 },
        { "RIFF", 4 }, { "\xD0\xCF\x11\xE0", 4 }, { "7z\xBC\xAF", 4 }, { "BZh", 3 },
        { "\xFD" "7zXZ", 5 }, { "\x00\x00\x01\x00", 4 }, { "OggS", 4 }, { "ID3", 3 },
        { "fLaC", 4 }, { "wOFF", 4 }, { "wOF2", 4 }, { "\x28\xB5\x2F\xFD", 4 },
    };
    size_t k;
    for (k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
        if (c.len >= sigs[k].len && !memcmp(c.data, sigs[k].magic, sigs[k].len))
            return 1;
    return 0;
}

/* Declared types whose content is text to the application. */
static int text_type(bw_str_t ct)
{
    static const char *const kinds[] = {
        "json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded", "x-sh",
        "x-php", "x-httpd-php", "sql", "csv", "yaml", "x-python", "x-perl", "x-ruby",
        "x-java-source", "html", "svg", NULL,
    };
    size_t n = ct.len;
    char buf[128];
    int k;
    if (n >= 5 && !strncasecmp(ct.data, "text/", 5))
        return 1;
    if (n >= sizeof(buf))
        n = sizeof(buf) - 1;
    for (k = 0; k < (int)n; k++)
        buf[k] = (char)tolower((unsigned char)ct.data[k]);
    buf[n] = '\0';
    for (k = 0; kinds[k]; k++)
        if (strstr(buf, kinds[k]))
            return 1;
    return 0;
}

/* Valid UTF-8 without control bytes but white space; a sequence cut by the
 * end of the data (a prefix may stop inside one) is accepted. */
static int utf8_text(bw_str_t c)
{
    size_t i = 0, k, n;
    while (i < c.len) {
        unsigned char b = (unsigned char)c.data[i];
        if (b < 0x80) {
            if ((b < 0x20 && !strchr("\t\n\r\f\v", b)) || b == 0x7f || b == 0)
                return 0;
            i++;
            continue;
        }
        if (b >= 0xC2 && b <= 0xDF)
            n = 1;
        else if (b >= 0xE0 && b <= 0xEF)
            n = 2;
        else if (b >= 0xF0 && b <= 0xF4)
            n = 3;
        else
            return 0;
        for (k = 1; k <= n; k++) {
            if (i + k >= c.len)
                return 1;
            if (((unsigned char)c.data[i + k] & 0xC0) != 0x80)
                return 0;
        }
        i += n + 1;
    }
    return 1;
}

int bw_body_text_like(bw_str_t content_type, bw_str_t content)
{
    if (!content.data || binary_signature(content))
        return 0;
    if (content_type.data && text_type(content_type))
        return memchr(content.data, '\0', content.len) == NULL;
    return utf8_text(content);
}
