/*
 * htmlEntityDecode
 *
 * Description: decodes HTML character references into one byte each:
 *   &#DDD and &#xHH (x or X; the ';' is optional), and the named entities
 *   &quot; &amp; &lt; &gt; &nbsp; (0xA0) and &apos; (names matched without
 *   regard to case, ';' optional). A numeric reference keeps only the low
 *   byte of its value; a value beyond 2^63-1 saturates (as ModSecurity's
 *   strtol does), giving 0xFF. Anything else, including "&#;", "&#x;" and
 *   unknown names, is left as it is.
 * Example: "&lt;a&#x41;&#66&QUOT;&foo;&#;" -> "<aAB\"&foo;&#;"
 */
#include <stdint.h>
#include "tfn_internal.h"

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Digits of base 10 or 16 in [*pos, len) as one byte; advances *pos past
 * them. Returns -1 when there is no digit. */
static int numeric_ref(bw_str_t in, size_t *pos, unsigned base)
{
    uint64_t v = 0;
    size_t j = *pos;
    int d;

    while (j < in.len) {
        unsigned char c = (unsigned char)in.data[j];
        d = base == 16 ? bw_hexval((char)c) : (is_digit(c) ? c - '0' : -1);
        if (d < 0)
            break;
        if (v > (INT64_MAX - (uint64_t)d) / base)
            v = INT64_MAX; /* saturate, keep consuming digits */
        else
            v = v * base + (uint64_t)d;
        j++;
    }
    if (j == *pos)
        return -1;
    *pos = j;
    return (int)(v & 0xFF);
}

/* The byte a named entity stands for, or -1 for a name we do not decode. */
static int named_ref(bw_str_t name)
{
    static const struct { const char *name; unsigned char byte; } known[] = {
        { "quot", '"' }, { "amp", '&' }, { "lt", '<' }, { "gt", '>' },
        { "nbsp", 0xA0 }, { "apos", '\'' },
    };
    size_t k;
    for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
        if (bw_str_eq_cstr_ci(name, known[k].name))
            return known[k].byte;
    return -1;
}

/* Decode the reference whose '&' is at in.data[i]. Returns the byte and sets
 * *end past the reference (and its ';'), or -1 when it is not one. */
static int decode_ref(bw_str_t in, size_t i, size_t *end)
{
    size_t j = i + 1;
    int byte;

    if (j < in.len && in.data[j] == '#') {
        unsigned base = 10;
        j++;
        if (j < in.len && (in.data[j] | 0x20) == 'x') {
            base = 16;
            j++;
        }
        byte = numeric_ref(in, &j, base);
    } else {
        size_t k = j;
        while (j < in.len && bw_is_alnum((unsigned char)in.data[j]))
            j++;
        byte = j > k ? named_ref(bw_str_n(in.data + k, j - k)) : -1;
    }
    if (byte < 0)
        return -1;
    if (j < in.len && in.data[j] == ';')
        j++;
    *end = j;
    return byte;
}

TFN_PRED(ampersand)
{
    return tfn_v_eq(v, '&');
}

/* Runs between '&' are copied whole; nothing is written before the first
 * reference that decodes. */
static int html_entity_decode(const bw_tfn_env_t *env, apr_pool_t *pool,
                              bw_str_t in, bw_str_t *out)
{
    tfn_out_t o;
    size_t i = tfn_find(in.data, 0, in.len, ampersand), end;
    int byte;

    if (i == in.len) {
        *out = in;
        return 0;
    }
    tfn_out_init_at(&o, pool, in, in.len, i);
    while (i < in.len) {
        if (in.data[i] != '&') {
            i = tfn_out_run_until(&o, i, ampersand);
        } else if ((byte = decode_ref(in, i, &end)) >= 0) {
            tfn_out_byte(&o, (unsigned char)byte);
            i = end;
        } else {
            tfn_out_byte(&o, '&');
            i++;
        }
    }
    return tfn_out_finish(&o, out);
}

/* Triggers: every reference starts with '&'; other bytes are copied. */
#define HTML_TRIGGERS(k) BW_BS_BYTE(k, '&')

const bw_tfn_def_t bw_tfn_html_entity_decode =
    TFN_DEF("htmlEntityDecode", html_entity_decode, HTML_TRIGGERS);
