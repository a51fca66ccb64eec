/*
 * UTF-16 and UTF-32 request bodies, decoded to UTF-8 for inspection.
 *
 * The JSON and URL-encoded processors read ASCII-compatible bytes; a body
 * in UTF-16 is NUL bytes between letters to them, so it failed to parse
 * (and was refused) although browsers and API clients may legitimately
 * send it, and a backend that honours the charset reads its text. Decoding
 * keeps such clients working and lets the rules see what the backend will
 * see. Only the inspected copy is decoded: the bytes forwarded to the
 * backend are the client's.
 *
 * Charsets that are ASCII-compatible (UTF-8, US-ASCII, ISO-8859-*, the
 * Windows code pages) need no decoder; an unknown charset is left as it
 * was (the rule set's charset policy, CRS 920480, refuses it).
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include "body_internal.h"

typedef enum { CS_BOM_WAIT, CS_PASS, CS_16LE, CS_16BE, CS_32LE, CS_32BE } cs_mode_t;

struct bw_charset_dec_s {
    apr_pool_t *pool;
    cs_mode_t mode;
    int bom_default;          /* the mode when no byte order mark comes (utf-16: BE) */
    int first;                /* a leading U+FEFF is a byte order mark: dropped */
    unsigned char pend[4];    /* a code unit cut by the end of a chunk */
    size_t npend;
    unsigned long high;       /* a high surrogate waiting for its low half, or 0 */
    char *out;
    size_t cap;
    const char *err;
};

static const char *const mode_names[] = {
    NULL, NULL, "UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE",
};

const char *bw_body_charset_param(apr_pool_t *pool, const char *ct)
{
    const char *p;
    size_t n, k;
    char *v;
    if (!ct)
        return NULL;
    for (p = strchr(ct, ';'); p; p = strchr(p + 1, ';')) {
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncasecmp(q, "charset", 7))
            continue;
        q += 7;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '=')
            continue;
        q++;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '"')
            q++;
        n = strcspn(q, "\"; \t");
        v = apr_pstrmemdup(pool, q, n);
        for (k = 0; k < n; k++)
            v[k] = (char)tolower((unsigned char)v[k]);
        return v;
    }
    return NULL;
}

bw_charset_dec_t *bw_charset_dec_create(apr_pool_t *pool, const char *cs)
{
    static const struct { const char *name; cs_mode_t mode; int bom; } known[] = {
        { "utf-16le", CS_16LE, 0 }, { "utf-16be", CS_16BE, 0 }, { "utf-16", CS_BOM_WAIT, CS_16BE },
        { "utf-32le", CS_32LE, 0 }, { "utf-32be", CS_32BE, 0 }, { "utf-32", CS_BOM_WAIT, CS_32BE },
        { "ucs-2", CS_BOM_WAIT, CS_16BE }, { "ucs-4", CS_BOM_WAIT, CS_32BE },
    };
    bw_charset_dec_t *dc;
    size_t k;
    cs_mode_t mode = CS_BOM_WAIT;
    int bom = CS_PASS;
    if (cs) {
        for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
            if (!strcmp(cs, known[k].name))
                break;
        if (k == sizeof(known) / sizeof(known[0]))
            return NULL;
        mode = known[k].mode;
        bom = known[k].bom;
    }
    dc = apr_pcalloc(pool, sizeof(*dc));
    dc->pool = pool;
    dc->mode = mode;
    dc->bom_default = bom;
    dc->first = 1;
    return dc;
}

const char *bw_charset_dec_name(const bw_charset_dec_t *dc)
{
    return dc ? mode_names[dc->mode] : NULL;
}

/* The byte order mark decides, once four bytes (or the end) are there. A
 * UTF-32LE mark starts like a UTF-16LE one: four bytes are needed. */
static void pick_mode(bw_charset_dec_t *dc, int at_end)
{
    const unsigned char *b = dc->pend;
    size_t n = dc->npend;
    if (n >= 4 && !memcmp(b, "\xFF\xFE\0\0", 4))
        dc->mode = CS_32LE;
    else if (n >= 4 && !memcmp(b, "\0\0\xFE\xFF", 4))
        dc->mode = CS_32BE;
    else if (n >= 2 && !memcmp(b, "\xFF\xFE", 2) && (n >= 4 || at_end))
        dc->mode = CS_16LE;
    else if (n >= 2 && !memcmp(b, "\xFE\xFF", 2))
        dc->mode = CS_16BE;
    else if (n >= 4 || at_end)
        dc->mode = (cs_mode_t)dc->bom_default;
}

static int bad(bw_charset_dec_t *dc, const char *why)
{
    dc->err = apr_psprintf(dc->pool, "%s body: %s", mode_names[dc->mode], why);
    return -1;
}

/* One code unit (2 or 4 bytes) into UTF-8 at o; returns the bytes written
 * or (size_t)-1 on an invalid unit. */
static size_t unit(bw_charset_dec_t *dc, const unsigned char *u, char *o)
{
    unsigned long cp;
    switch (dc->mode) {
    case CS_16LE: cp = (unsigned long)u[0] | ((unsigned long)u[1] << 8); break;
    case CS_16BE: cp = ((unsigned long)u[0] << 8) | u[1]; break;
    case CS_32LE: cp = u[0] | ((unsigned long)u[1] << 8) | ((unsigned long)u[2] << 16)
                       | ((unsigned long)u[3] << 24); break;
    default: cp = ((unsigned long)u[0] << 24) | ((unsigned long)u[1] << 16)
                  | ((unsigned long)u[2] << 8) | u[3]; break;
    }
    if (dc->mode == CS_16LE || dc->mode == CS_16BE) {
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (dc->high)
                return (size_t)-1;
            dc->high = cp;
            return 0;
        }
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            if (!dc->high)
                return (size_t)-1;
            cp = 0x10000 + ((dc->high - 0xD800) << 10) + (cp - 0xDC00);
            dc->high = 0;
        } else if (dc->high) {
            return (size_t)-1;
        }
    } else if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return (size_t)-1;
    }
    if (dc->first) {
        dc->first = 0;
        if (cp == 0xFEFF)
            return 0;
    }
    return bw_body_utf8_put(o, cp);
}

static int decode(bw_charset_dec_t *dc, const unsigned char *d, size_t len, size_t *olen)
{
    size_t w = (dc->mode == CS_16LE || dc->mode == CS_16BE) ? 2 : 4, n;
    size_t need = (len + dc->npend) / w * 4 + 4;
    if (need > dc->cap) {
        dc->cap = need * 2;
        dc->out = apr_palloc(dc->pool, dc->cap);
    }
    *olen = 0;
    while (len > 0) {
        size_t take = w - dc->npend < len ? w - dc->npend : len;
        memcpy(dc->pend + dc->npend, d, take);
        dc->npend += take;
        d += take;
        len -= take;
        if (dc->npend < w)
            break;
        dc->npend = 0;
        if ((n = unit(dc, dc->pend, dc->out + *olen)) == (size_t)-1)
            return bad(dc, w == 2 ? "unpaired surrogate" : "not a Unicode code point");
        *olen += n;
    }
    return 0;
}

/* The bytes held while the byte order mark was awaited, then rest: both
 * decoded (or passed through) into one piece. */
static int flush_held(bw_charset_dec_t *dc, const char *rest, size_t len,
                      const char **out, size_t *out_len)
{
    unsigned char held[4];
    size_t nh = dc->npend, o1 = 0, o2 = 0;
    char *all;
    memcpy(held, dc->pend, nh);
    dc->npend = 0;
    if (dc->mode == CS_PASS) {
        all = apr_palloc(dc->pool, nh + len + 1);
        memcpy(all, held, nh);
        if (len)
            memcpy(all + nh, rest, len);
        *out = all;
        *out_len = nh + len;
        return 0;
    }
    if (decode(dc, held, nh, &o1) < 0)
        return -1;
    all = apr_pmemdup(dc->pool, dc->out, o1 + 1);
    if (decode(dc, (const unsigned char *)rest, len, &o2) < 0)
        return -1;
    if (o1) {
        char *both = apr_palloc(dc->pool, o1 + o2 + 1);
        memcpy(both, all, o1);
        memcpy(both + o1, dc->out, o2);
        *out = both;
    } else {
        *out = dc->out;
    }
    *out_len = o1 + o2;
    return 0;
}

int bw_charset_dec_feed(bw_charset_dec_t *dc, const char *data, size_t len,
                        const char **out, size_t *out_len, const char **err)
{
    *out = data;
    *out_len = len;
    if (dc->err)
        goto fail;
    if (dc->mode == CS_PASS)
        return 0;
    if (dc->mode == CS_BOM_WAIT) {
        size_t take = 4 - dc->npend < len ? 4 - dc->npend : len;
        int all_here = dc->npend == 0;   /* every held byte is from data */
        memcpy(dc->pend + dc->npend, data, take);
        dc->npend += take;
        pick_mode(dc, 0);
        if (dc->mode == CS_BOM_WAIT) {
            *out_len = 0;
            return 0;
        }
        if (dc->mode == CS_PASS && all_here) {
            /* no BOM, nothing held from before: the chunk as it came */
            dc->npend = 0;
            return 0;
        }
        if (flush_held(dc, data + take, len - take, out, out_len) < 0)
            goto fail;
        return 0;
    }
    if (decode(dc, (const unsigned char *)data, len, out_len) < 0)
        goto fail;
    *out = dc->out;
    return 0;
fail:
    *err = dc->err;
    *out_len = 0;
    return -1;
}

int bw_charset_dec_finish(bw_charset_dec_t *dc, const char **out, size_t *out_len,
                          const char **err)
{
    *out = "";
    *out_len = 0;
    if (dc->err)
        goto fail;
    if (dc->mode == CS_BOM_WAIT) {
        /* a body shorter than a byte order mark */
        pick_mode(dc, 1);
        if (dc->mode == CS_BOM_WAIT)
            dc->mode = CS_PASS;
        if (flush_held(dc, "", 0, out, out_len) < 0)
            goto fail;
    }
    if (dc->mode == CS_PASS)
        return 0;
    if (dc->npend || dc->high) {
        bad(dc, dc->high ? "unpaired surrogate at the end" : "incomplete code unit at the end");
        goto fail;
    }
    return 0;
fail:
    *err = dc->err;
    *out_len = 0;
    return -1;
}
