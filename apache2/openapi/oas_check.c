/*
 * Checks of one scalar against a schema's own keywords: type, enum/const,
 * string length and pattern, numeric bounds and multipleOf, and the formats
 * (RFC 3339 date-time, date and time, uuid, email, ipv4, ipv6, uri, int32,
 * int64, byte). Used for parameters and for every scalar of a JSON body;
 * nothing here allocates unless a check fails (the reason is then made).
 */
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include <math.h>
#include <arpa/inet.h>
#include "openapi/oas_int.h"

#define NUM_TEXT_MAX 128

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A number's text that the short way cannot take: strtod, out of the
 * usual path (its buffer would make every call set up a stack frame). */
static __attribute__((noinline)) double long_number(bw_str_t t)
{
    char buf[NUM_TEXT_MAX];
    memcpy(buf, t.data, t.len);
    buf[t.len] = '\0';
    return strtod(buf, NULL);
}

/* The number a JSON number's text says. Up to 15 significant digits and no
 * exponent (prices, counts: nearly every number a body carries) it is the
 * digits as an integer divided by a power of ten, both exact in a double,
 * so the one rounding is the division's, as strtod's; longer ones go to
 * strtod. */
int oas_number(bw_str_t t, double *num, unsigned *type)
{
    static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                    1e11, 1e12, 1e13, 1e14, 1e15 };
    size_t i = 0;
    int integral = 1, neg = 0, digits = 0, frac = 0, exp = 0, frac_nonzero = 0;
    uint64_t mant = 0;
    if (!t.len || t.len >= NUM_TEXT_MAX)
        return 0;
    if (t.data[i] == '-') {
        neg = 1;
        i++;
    }
    if (i < t.len && t.data[i] == '0')
        i++;
    else if (i < t.len && digit(t.data[i]))
        for (; i < t.len && digit(t.data[i]); i++, digits++)
            mant = mant * 10 + (uint64_t)(t.data[i] - '0');
    else
        return 0;
    if (i < t.len && t.data[i] == '.') {
        integral = 0;
        if (++i >= t.len || !digit(t.data[i]))
            return 0;
        for (; i < t.len && digit(t.data[i]); i++, frac++) {
            frac_nonzero |= t.data[i] != '0';
            if (digits + frac < 19)
                mant = mant * 10 + (uint64_t)(t.data[i] - '0');
        }
    }
    if (i < t.len && (t.data[i] == 'e' || t.data[i] == 'E')) {
        integral = 0;
        exp = 1;
        i++;
        if (i < t.len && (t.data[i] == '+' || t.data[i] == '-'))
            i++;
        if (i >= t.len || !digit(t.data[i]))
            return 0;
        while (i < t.len && digit(t.data[i]))
            i++;
    }
    if (i != t.len)
        return 0;
    if (!exp && digits + frac <= 15) {
        *num = (double)mant / pow10[frac];
        if (neg)
            *num = -*num;
        /* 1.0 is an integer to JSON Schema */
        integral |= !frac_nonzero;
    } else {
        *num = long_number(t);
        /* and so is 1e2 */
        if (!integral && isfinite(*num) && *num == floor(*num))
            integral = 1;
    }
    *type = OAS_T_NUM | (integral ? OAS_T_INT : 0);
    return 1;
}

const char *oas_type_names(apr_pool_t *p, unsigned types)
{
    static const char *const names[] = { "null", "boolean", "integer", "number", "string",
                                         "array", "object" };
    const char *out = NULL;
    int i;
    if ((types & (OAS_T_NUM | OAS_T_INT)) == (OAS_T_NUM | OAS_T_INT))
        types &= ~(unsigned)OAS_T_INT;
    for (i = 0; i < 7; i++)
        if (types & (1u << i))
            out = out ? apr_pstrcat(p, out, " or ", names[i], NULL) : names[i];
    return out ? out : "nothing";
}

/* ---- formats ------------------------------------------------------------------ */

static const struct { const char *name; int f; } formats[] = {
    { "date-time", OAS_F_DATE_TIME }, { "date", OAS_F_DATE }, { "time", OAS_F_TIME },
    { "uuid", OAS_F_UUID }, { "email", OAS_F_EMAIL }, { "ipv4", OAS_F_IPV4 },
    { "ipv6", OAS_F_IPV6 }, { "uri", OAS_F_URI }, { "int32", OAS_F_INT32 },
    { "int64", OAS_F_INT64 }, { "byte", OAS_F_BYTE }, { "float", OAS_F_ANNOTATION },
    { "double", OAS_F_ANNOTATION }, { "binary", OAS_F_ANNOTATION },
    { "password", OAS_F_ANNOTATION }, { NULL, 0 }
};

int oas_format_lookup(const char *name)
{
    int i;
    for (i = 0; formats[i].name; i++)
        if (!strcmp(formats[i].name, name))
            return formats[i].f;
    return -1;
}

static const char *format_name(int f)
{
    int i;
    for (i = 0; formats[i].name; i++)
        if (formats[i].f == f)
            return formats[i].name;
    return "?";
}

/* n digits at s, as a number; -1 if not all digits. */
static int num_at(const char *s, int n)
{
    int v = 0, i;
    for (i = 0; i < n; i++) {
        if (!digit(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int full_date(const char *s, size_t n)
{
    static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int y, m, d;
    if (n != 10 || s[4] != '-' || s[7] != '-')
        return 0;
    y = num_at(s, 4);
    m = num_at(s + 5, 2);
    d = num_at(s + 8, 2);
    if (y < 0 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
        return 0;
    if (m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 0;
    return 1;
}

/* HH:MM:SS[.frac](Z|+HH:MM|-HH:MM) */
static int full_time(const char *s, size_t n)
{
    size_t i = 8;
    if (n < 9 || s[2] != ':' || s[5] != ':')
        return 0;
    if (num_at(s, 2) < 0 || num_at(s, 2) > 23 || num_at(s + 3, 2) < 0 || num_at(s + 3, 2) > 59
        || num_at(s + 6, 2) < 0 || num_at(s + 6, 2) > 60)
        return 0;
    if (s[i] == '.') {
        if (++i >= n || !digit(s[i]))
            return 0;
        while (i < n && digit(s[i]))
            i++;
    }
    if (i == n - 1 && (s[i] == 'Z' || s[i] == 'z'))
        return 1;
    if (i + 6 != n || (s[i] != '+' && s[i] != '-') || s[i + 3] != ':')
        return 0;
    return num_at(s + i + 1, 2) >= 0 && num_at(s + i + 1, 2) <= 23 && num_at(s + i + 4, 2) >= 0
        && num_at(s + i + 4, 2) <= 59;
}

static int is_hex(char c)
{
    return bw_hexval(c) >= 0;
}

static int uuid(const char *s, size_t n)
{
    size_t i;
    if (n != 36)
        return 0;
    for (i = 0; i < n; i++)
        if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-' : !is_hex(s[i]))
            return 0;
    return 1;
}

static int ipv4(const char *s, size_t n)
{
    int parts = 0;
    size_t i = 0;
    while (parts < 4) {
        size_t start = i;
        int v = 0;
        while (i < n && digit(s[i]) && i - start < 3)
            v = v * 10 + (s[i++] - '0');
        if (i == start || v > 255 || (i - start > 1 && s[start] == '0'))
            return 0;
        if (++parts < 4 && (i >= n || s[i++] != '.'))
            return 0;
    }
    return i == n;
}

static int ipv6(const char *s, size_t n)
{
    char buf[64];
    unsigned char out[16];
    if (n == 0 || n >= sizeof(buf) || memchr(s, '%', n))
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return inet_pton(AF_INET6, buf, out) == 1;
}

static int atext(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || digit(c)
        || (c && strchr("!#$%&'*+-/=?^_`{|}~", c)) || (unsigned char)c >= 0x80;
}

/* dot-atom local part @ a domain of letter-digit-hyphen labels or an
 * address literal ([1.2.3.4], [IPv6:...]). */
static int email(const char *s, size_t n)
{
    const char *at = n ? memchr(s, '@', n) : NULL;
    size_t i, local, label = 0;
    if (!at || n > 254)
        return 0;
    local = (size_t)(at - s);
    if (!local || local > 64 || s[0] == '.' || s[local - 1] == '.')
        return 0;
    for (i = 0; i < local; i++)
        if (!(atext(s[i]) || (s[i] == '.' && s[i + 1] != '.')))
            return 0;
    s = at + 1;
    n -= local + 1;
    if (n > 2 && s[0] == '[' && s[n - 1] == ']')
        return n > 7 && !memcmp(s + 1, "IPv6:", 5) ? ipv6(s + 6, n - 7) : ipv4(s + 1, n - 2);
    if (!n || s[0] == '.' || s[0] == '-' || s[n - 1] == '.' || s[n - 1] == '-')
        return 0;
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            if (!label || s[i - 1] == '-' || s[i + 1] == '-')
                return 0;
            label = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || digit(c) || c == '-') {
            if (++label > 63)
                return 0;
        } else {
            return 0;
        }
    }
    return 1;
}

/* An absolute URI (RFC 3986): scheme ":" and characters a URI may hold. */
static int uri(const char *s, size_t n)
{
    size_t i = 0;
    if (!n || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    while (i < n && s[i] != ':') {
        char c = s[i++];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || digit(c) || c == '+' || c == '-'
              || c == '.'))
            return 0;
    }
    if (i >= n)
        return 0;
    for (i++; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n || !is_hex(s[i + 1]) || !is_hex(s[i + 2]))
                return 0;
            i += 2;
        } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || digit(c)
                     || (c && strchr("-._~:/?#[]@!$&'()*+,;=", c)))) {
            return 0;
        }
    }
    return 1;
}

static int base64(const char *s, size_t n)
{
    size_t i, pad = 0;
    if (n % 4)
        return 0;
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (c == '=') {
            if (i < n - 2)
                return 0;
            pad++;
        } else if (pad || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || digit(c)
                            || c == '+' || c == '/')) {
            return 0;
        }
    }
    return 1;
}

int oas_format_check(int f, bw_str_t v)
{
    const char *s = v.data;
    size_t n = v.len;
    switch (f) {
    case OAS_F_DATE_TIME:
        return n > 11 && (s[10] == 'T' || s[10] == 't') && full_date(s, 10)
            && full_time(s + 11, n - 11);
    case OAS_F_DATE: return full_date(s, n);
    case OAS_F_TIME: return full_time(s, n);
    case OAS_F_UUID: return uuid(s, n);
    case OAS_F_EMAIL: return email(s, n);
    case OAS_F_IPV4: return ipv4(s, n);
    case OAS_F_IPV6: return ipv6(s, n);
    case OAS_F_URI: return uri(s, n);
    case OAS_F_BYTE: return base64(s, n);
    default: return 1;
    }
}

/* ---- one scalar ------------------------------------------------------------------ */

/* A reason, or "" when p is NULL: the caller wants the verdict only
 * (a branch of anyOf, or violations no longer kept), and nothing is
 * formatted or allocated. */
static const char *why(apr_pool_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *why(apr_pool_t *p, const char *fmt, ...)
{
    va_list ap;
    const char *r;
    if (!p)
        return "";
    va_start(ap, fmt);
    r = apr_pvsprintf(p, fmt, ap);
    va_end(ap);
    return r;
}

/* A bound for a message, as the description would write it. */
static const char *num_text(apr_pool_t *p, double d)
{
    char buf[40];
    snprintf(buf, sizeof(buf), "%.15g", d);
    return apr_pstrdup(p, buf);
}

static size_t code_points(bw_str_t s)
{
    size_t i, n = 0;
    for (i = 0; i < s.len; i++)
        n += ((unsigned char)s.data[i] & 0xc0) != 0x80;
    return n;
}

/* Whether the first w and the last w of n bytes (w <= n) at a and b are
 * the same: all of them when n <= 2w. */
static inline int ends_equal(const char *a, const char *b, size_t n, size_t w)
{
    uint64_t x = 0, y = 0, u = 0, z = 0;
    memcpy(&x, a, w);
    memcpy(&y, b, w);
    memcpy(&u, a + n - w, w);
    memcpy(&z, b + n - w, w);
    return x == y && u == z;
}

/* Whether n bytes at a and b are the same: up to 16 as words that may
 * overlap (an enum's values are short, and a memcmp call per value and
 * literal was a percent of a body's time). */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
    size_t i;
    if (n >= 8 && n <= 16)
        return ends_equal(a, b, n, 8);
    if (n >= 4 && n < 8)
        return ends_equal(a, b, n, 4);
    if (n < 4) {
        for (i = 0; i < n; i++)
            if (a[i] != b[i])
                return 0;
        return 1;
    }
    return !memcmp(a, b, n);
}

static int lit_equal(const oas_lit_t *l, const oas_value_t *v)
{
    if (l->type == OAS_T_NUM)
        return (v->type & OAS_T_NUM) && l->num == v->num;
    if (!(l->type & v->type))
        return 0;
    return l->type == OAS_T_NULL
        || (l->text.len == v->text.len && same_bytes(l->text.data, v->text.data, l->text.len));
}

/* What a string breaks first (OAS_X_), or OAS_PASS. */
static int string_fault(const oas_schema_t *s, const oas_value_t *v, pcre2_match_data *md,
                        pcre2_match_context *mctx, int *rc)
{
    /* a character is one to four bytes: count them only when the byte
     * length alone cannot decide */
    if ((s->max_len >= 0 && v->text.len > (size_t)s->max_len)
        || (s->min_len >= 0 && v->text.len < 4 * (size_t)s->min_len)) {
        size_t n = code_points(v->text);
        if (s->min_len >= 0 && n < (size_t)s->min_len)
            return OAS_X_MIN_LEN;
        if (s->max_len >= 0 && n > (size_t)s->max_len)
            return OAS_X_MAX_LEN;
    }
    if (s->format != OAS_F_NONE && (s->format < OAS_F_INT32 || s->format == OAS_F_BYTE)
        && !oas_format_check(s->format, v->text))
        return OAS_X_FORMAT;
    if (s->pattern_fast) {
        if (!oas_pat_match(s->pattern_fast, v->text.data, v->text.len)) {
            *rc = PCRE2_ERROR_NOMATCH;
            return OAS_X_PATTERN;
        }
    } else if (s->pattern) {
        /* the pattern was compiled with PCRE2_MATCH_INVALID_UTF, so the
         * JIT's fast entry (no checks of the subject) is as exact */
        *rc = (s->pattern_jit ? pcre2_jit_match : pcre2_match)(
            s->pattern, (PCRE2_SPTR)v->text.data, v->text.len, 0, 0, md, mctx);
        if (*rc < 0)
            return OAS_X_PATTERN;
    }
    return OAS_PASS;
}

/* What a number breaks first (OAS_X_), or OAS_PASS. */
static int number_fault(const oas_schema_t *s, const oas_value_t *v)
{
    double x = v->num;
    if (s->has_min && (s->excl_min ? x <= s->min : x < s->min))
        return OAS_X_MIN;
    if (s->has_max && (s->excl_max ? x >= s->max : x > s->max))
        return OAS_X_MAX;
    if (s->multiple_of > 0) {
        double q = x / s->multiple_of;
        if (!isfinite(q) || fabs(q - nearbyint(q)) > 1e-9 * fmax(1.0, fabs(q)))
            return OAS_X_MULTIPLE;
    }
    if (s->format == OAS_F_INT32 && (!(v->type & OAS_T_INT) || x < -2147483648.0 || x > 2147483647.0))
        return OAS_X_FORMAT;
    if (s->format == OAS_F_INT64 && (!(v->type & OAS_T_INT) || x < -9223372036854775808.0
                                     || x >= 9223372036854775808.0))
        return OAS_X_FORMAT;
    return OAS_PASS;
}

int oas_scalar_fault(const oas_schema_t *s, const oas_value_t *v, pcre2_match_data *md,
                     pcre2_match_context *mctx, int *rc)
{
    int i;
    if (!(s->types & v->type))
        return OAS_X_TYPE;
    if (s->n_lits >= 0) {
        for (i = 0; i < s->n_lits; i++)
            if (lit_equal(&s->lits[i], v))
                break;
        if (i == s->n_lits)
            return OAS_X_ENUM;
    }
    if (v->type == OAS_T_STR)
        return string_fault(s, v, md, mctx, rc);
    if (v->type & OAS_T_NUM)
        return number_fault(s, v);
    return OAS_PASS;
}

/* The reason for a fault, as the description would say it. */
static const char *fault_reason(apr_pool_t *p, const oas_schema_t *s, const oas_value_t *v,
                                int fault, int rc)
{
    switch (fault) {
    case OAS_X_TYPE:
        return why(p, "expected %s, got %s", p ? oas_type_names(p, s->types) : "",
                   p ? oas_type_names(p, v->type & OAS_T_INT ? OAS_T_INT : v->type) : "");
    case OAS_X_ENUM:
        return s->n_lits == 1 ? "not the constant the schema allows" : "not one of the enum values";
    case OAS_X_MIN_LEN:
        return why(p, "shorter than minLength %ld", s->min_len);
    case OAS_X_MAX_LEN:
        return why(p, "longer than maxLength %ld", s->max_len);
    case OAS_X_FORMAT:
        if (s->format == OAS_F_BYTE)
            return "not valid base64 (format byte)";
        if (s->format == OAS_F_INT32)
            return "not a 32-bit integer (format int32)";
        if (s->format == OAS_F_INT64)
            return "not a 64-bit integer (format int64)";
        return why(p, "not a valid %s", format_name(s->format));
    case OAS_X_PATTERN:
        if (rc == PCRE2_ERROR_NOMATCH)
            return why(p, "does not match pattern %s", s->pattern_src);
        return why(p, "pattern %s could not be matched (PCRE2 error %d)", s->pattern_src, rc);
    case OAS_X_MIN:
        return why(p, "%s %s", s->excl_min ? "not above the exclusive minimum" : "below the minimum",
                   p ? num_text(p, s->min) : "");
    case OAS_X_MAX:
        return why(p, "%s %s", s->excl_max ? "not below the exclusive maximum" : "above the maximum",
                   p ? num_text(p, s->max) : "");
    default:
        return why(p, "not a multiple of %s", p ? num_text(p, s->multiple_of) : "");
    }
}

const char *oas_check_scalar(apr_pool_t *p, const oas_schema_t *s, const oas_value_t *v,
                             pcre2_match_data *md, pcre2_match_context *mctx)
{
    int rc = 0, fault = oas_scalar_fault(s, v, md, mctx, &rc);
    return fault == OAS_PASS ? NULL : fault_reason(p, s, v, fault, rc);
}
