/*
 * Streaming JSON parser: the grammar, events and error messages of yajl
 * 2.1 with its default flags (see body_json_parse.h), at a fraction of its
 * cost per byte.
 *
 * Where it spends its time: the bytes of strings. A string's plain bytes
 * (0x20-0x7f but '"' and '\\') are skipped 16 at a time with SSE2 where
 * the build has it; escapes and UTF-8 sequences are checked one by one.
 * Strings without escapes are handed out in place; the others are decoded
 * into one buffer reused for every string. The tokens most of a document
 * is made of (a comma, a key and its colon, a string or number value in
 * the state that wants it) skip the general lexer and parser switches
 * (run); the lexer's pieces are inlined into it.
 *
 * yajl's behaviour kept on purpose, as the oracle tests check it:
 *   - whitespace is also \v and \f; top-level scalars are documents;
 *   - UTF-8 is checked by form only (a lead byte and its continuation
 *     bytes): overlong forms and encoded surrogates pass;
 *   - \u escapes: a high surrogate takes the next \u escape as its low
 *     half whatever it is; a high surrogate not followed by "\u" becomes
 *     '?'; \u0000 is a NUL byte;
 *   - after the value, any token (or lexical error) is "trailing garbage",
 *     but a token cut by the end of the body is not;
 *   - the end of the body is read as one more space, so "tru" at the end
 *     is "invalid string in json text." and "1." a malformed number.
 *
 * A token cut by the end of a chunk: its bytes so far are kept in `carry`
 * and the next chunk's bytes are added to it piece by piece (at least as
 * many as it holds, so copying stays linear) until the token ends; a
 * string's or number's reading resumes where it stopped, so a long token
 * cut into many chunks is read once (yajl reads it again from its start
 * for every chunk).
 */
#include <pthread.h>
#include <string.h>
#include "body_internal.h"
#include "body_json_parse.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef unsigned char uchar;

typedef enum {
    ST_VALUE,       /* the document's value */
    ST_DONE,        /* after it: only whitespace */
    ST_MAP_FIRST,   /* after '{': a key or '}' */
    ST_MAP_KEY,     /* after ',' in an object: a key */
    ST_MAP_COLON,   /* after a key */
    ST_MAP_VALUE,   /* after ':' */
    ST_MAP_NEXT,    /* after a member: ',' or '}' */
    ST_ARR_FIRST,   /* after '[': a value or ']' */
    ST_ARR_VALUE,   /* after ',' in an array */
    ST_ARR_NEXT,    /* after an element: ',' or ']' */
    ST_FAILED
} state_t;

/* where a number's reading stands */
typedef enum {
    N_BEGIN, N_FIRST, N_DIGITS, N_WHOLE, N_POINT, N_FRACTION, N_EXP, N_EXP_FIRST, N_EXP_DIGITS
} num_t;

typedef enum {
    T_MORE, T_ERROR, T_LBRACE, T_RBRACE, T_LBRACKET, T_RBRACKET, T_COMMA, T_COLON,
    T_STRING, T_NUMBER, T_TRUE, T_FALSE, T_NULL
} tok_t;

struct bw_jp_s {
    apr_pool_t *pool;
    const bw_jp_events_t *ev;
    void *ctx;
    state_t state;
    bw_buf_t stack;         /* one byte per open container: 'm' or 'a' */
    bw_buf_t carry;         /* the cut token's bytes */
    bw_buf_t dec;           /* a string with escapes, decoded */
    size_t resume;          /* a cut string or number: where its reading goes on,
                             * from its first byte (0: from the start) */
    int escapes;            /* a cut string: it has escapes so far */
    num_t num;              /* a cut number: what comes next */
    const char *error;
};

/* What the lexer found: the token's end, and a string's content. */
typedef struct {
    const uchar *end;
    const uchar *s;
    size_t len;
    int escapes;
} lexed_t;

/* 1: a byte a string holds as it is */
static uchar plain[256];
/* 1: whitespace between tokens (yajl's set) */
static uchar space[256];
/* the byte an escape stands for, or 0: no such escape ('u' aside) */
static uchar unescape[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void make_tables(void)
{
    int c;
    for (c = 0x20; c < 0x80; c++)
        plain[c] = 1;
    plain['"'] = plain['\\'] = 0;
    space[' '] = space['\t'] = space['\n'] = space['\r'] = space['\v'] = space['\f'] = 1;
    unescape['"'] = '"';
    unescape['\\'] = '\\';
    unescape['/'] = '/';
    unescape['b'] = '\b';
    unescape['f'] = '\f';
    unescape['n'] = '\n';
    unescape['r'] = '\r';
    unescape['t'] = '\t';
}

static int hexval(uchar c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int fail(bw_jp_t *jp, const char *why)
{
    jp->state = ST_FAILED;
    jp->error = why;
    return -1;
}

static tok_t lex_fail(bw_jp_t *jp, const char *why)
{
    fail(jp, why);
    return T_ERROR;
}

/* The first byte from p on that is not plain, or end. */
static inline __attribute__((always_inline)) const uchar *skip_plain(const uchar *p, const uchar *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i low = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* signed: below 0x20 is a control byte or one of 0x80-0xff */
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                              _mm_cmpeq_epi8(v, backslash)),
                                 _mm_cmplt_epi8(v, low));
        int bits = _mm_movemask_epi8(m);
        if (bits)
            return p + __builtin_ctz((unsigned)bits);
        p += 16;
    }
#endif
    while (p < end && plain[*p])
        p++;
    return p;
}

/* A string from its opening quote q: T_STRING, T_MORE (cut: jp->resume
 * says where to go on) or T_ERROR (jp->error set). resumed: q is a cut
 * token's kept bytes and jp->resume may be set; 0 (a constant in run's
 * fast paths) when it is known not to be. */
static inline __attribute__((always_inline)) tok_t lex_string(bw_jp_t *jp, const uchar *q, const uchar *end, lexed_t *t, const int resumed)
{
    const uchar *p = q + (resumed && jp->resume ? jp->resume : 1);
    int escapes = resumed && jp->resume ? jp->escapes : 0;
    for (;;) {
        uchar c;
        int n, i;
        p = skip_plain(p, end);
        if (p == end)
            goto cut;
        c = *p;
        if (c == '"')
            break;
        if (c == '\\') {
            if (p + 1 == end)
                goto cut;
            if (p[1] == 'u') {
                for (i = 2; i < 6; i++) {
                    if (p + i == end)
                        goto cut;
                    if (hexval(p[i]) < 0)
                        return lex_fail(jp, "lexical error: invalid (non-hex) character occurs "
                                        "after '\\u' inside string.");
                }
                p += 6;
            } else if (unescape[p[1]]) {
                p += 2;
            } else {
                return lex_fail(jp, "lexical error: inside a string, '\\' occurs before a "
                                "character which it may not.");
            }
            escapes = 1;
            continue;
        }
        if (c < 0x20)
            return lex_fail(jp, "lexical error: invalid character inside string.");
        /* 0x80 and up: a lead byte and its continuation bytes, by form */
        n = (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
        if (n < 0)
            return lex_fail(jp, "lexical error: invalid bytes in UTF8 string.");
        for (i = 1; i <= n; i++) {
            if (p + i == end)
                goto cut;
            if ((p[i] >> 6) != 0x2)
                return lex_fail(jp, "lexical error: invalid bytes in UTF8 string.");
        }
        p += n + 1;
    }
    if (resumed)
        jp->resume = 0;
    t->s = q + 1;
    t->len = (size_t)(p - q - 1);
    t->escapes = escapes;
    t->end = p + 1;
    return T_STRING;
cut:
    jp->resume = (size_t)(p - q);
    jp->escapes = escapes;
    return T_MORE;
}

/* A number from q (a '-' or a digit) in yajl's form: T_NUMBER, T_MORE
 * (cut: jp->resume and jp->num say where it stopped) or T_ERROR. resumed
 * as for lex_string. */
static inline __attribute__((always_inline)) tok_t lex_number(bw_jp_t *jp, const uchar *q, const uchar *end, lexed_t *t, const int resumed)
{
    const uchar *p = q + (resumed ? jp->resume : 0);
    num_t st = resumed && jp->resume ? jp->num : N_BEGIN;
#define DIGIT(c) ((c) >= '0' && (c) <= '9')
    if (!resumed || !jp->resume) {
        /* most numbers, whole in the chunk: -?(0|[1-9][0-9]*)(.[0-9]+)?
         * and a byte that ends them; anything else (an exponent, an
         * error, the end of the chunk) is read by the states below */
        const uchar *r = q + (*q == '-');
        if (r < end && *r >= '1' && *r <= '9')
            while (++r < end && DIGIT(*r))
                ;
        else if (r < end && *r == '0')
            r++;
        else
            r = NULL;
        if (r && r < end && *r == '.') {
            if (r + 1 < end && DIGIT(r[1]))
                for (r += 2; r < end && DIGIT(*r); r++)
                    ;
            else
                r = NULL;
        }
        if (r && r < end && *r != 'e' && *r != 'E') {
            t->end = r;
            return T_NUMBER;
        }
    }
    for (;;) {
        if (p == end) {
            jp->resume = (size_t)(p - q);
            jp->num = st;
            return T_MORE;
        }
        switch (st) {
        case N_BEGIN:              /* an optional '-' */
            st = N_FIRST;
            if (*p == '-')
                p++;
            break;
        case N_FIRST:              /* '0', or the first of the digits */
            if (*p == '0')
                st = N_WHOLE;
            else if (*p >= '1' && *p <= '9')
                st = N_DIGITS;
            else
                return lex_fail(jp, "lexical error: malformed number, a digit is required "
                                    "after the minus sign.");
            p++;
            break;
        case N_DIGITS:
            while (p < end && DIGIT(*p))
                p++;
            if (p < end)
                st = N_WHOLE;
            break;
        case N_WHOLE:              /* the integer part is read */
            if (*p == '.') {
                st = N_POINT;
                p++;
            } else if (*p == 'e' || *p == 'E') {
                st = N_EXP;
                p++;
            } else {
                goto done;
            }
            break;
        case N_POINT:
            if (!DIGIT(*p))
                return lex_fail(jp, "lexical error: malformed number, a digit is required "
                                    "after the decimal point.");
            st = N_FRACTION;
            break;
        case N_FRACTION:
            while (p < end && DIGIT(*p))
                p++;
            if (p < end) {
                if (*p != 'e' && *p != 'E')
                    goto done;
                st = N_EXP;
                p++;
            }
            break;
        case N_EXP:                /* after 'e': an optional sign */
            st = N_EXP_FIRST;
            if (*p == '+' || *p == '-')
                p++;
            break;
        case N_EXP_FIRST:
            if (!DIGIT(*p))
                return lex_fail(jp, "lexical error: malformed number, a digit is required "
                                    "after the exponent.");
            st = N_EXP_DIGITS;
            break;
        case N_EXP_DIGITS:
            while (p < end && DIGIT(*p))
                p++;
            if (p < end)
                goto done;
            break;
        }
    }
done:
    if (resumed)
        jp->resume = 0;
    t->end = p;
    return T_NUMBER;
#undef DIGIT
}

/* true, false or null from p, whose first byte chose w. */
static tok_t lex_word(bw_jp_t *jp, const uchar *p, const uchar *end, const char *w, size_t n,
                      tok_t kind, lexed_t *t)
{
    size_t i;
    for (i = 1; i < n; i++) {
        if (p + i == end)
            return T_MORE;
        if (p[i] != (uchar)w[i])
            return lex_fail(jp, "lexical error: invalid string in json text.");
    }
    t->end = p + n;
    return kind;
}

/* The token at p (not whitespace, p < end). */
static tok_t lex(bw_jp_t *jp, const uchar *p, const uchar *end, lexed_t *t)
{
    t->end = p + 1;
    switch (*p) {
    case '{': return T_LBRACE;
    case '}': return T_RBRACE;
    case '[': return T_LBRACKET;
    case ']': return T_RBRACKET;
    case ',': return T_COMMA;
    case ':': return T_COLON;
    case '"': return lex_string(jp, p, end, t, 1);
    case 't': return lex_word(jp, p, end, "true", 4, T_TRUE, t);
    case 'f': return lex_word(jp, p, end, "false", 5, T_FALSE, t);
    case 'n': return lex_word(jp, p, end, "null", 4, T_NULL, t);
    case '/':
        return lex_fail(jp, "lexical error: probable comment found in input text, comments are "
                        "not enabled.");
    default:
        if (*p == '-' || (*p >= '0' && *p <= '9'))
            return lex_number(jp, p, end, t, 1);
        return lex_fail(jp, "lexical error: invalid char in json text.");
    }
}

static unsigned long hex4(const uchar *h)
{
    return (unsigned long)(hexval(h[0]) << 12 | hexval(h[1]) << 8 | hexval(h[2]) << 4
                           | hexval(h[3]));
}

/* A checked string's content with its escapes decoded, into jp->dec. */
static void decode(bw_jp_t *jp, const uchar *s, size_t len)
{
    size_t i = 0;
    jp->dec.len = 0;
    while (i < len) {
        const uchar *bs = memchr(s + i, '\\', len - i);
        size_t run = bs ? (size_t)(bs - (s + i)) : len - i;
        unsigned long cp;
        char utf8[4];
        bw_buf_append(jp->pool, &jp->dec, (const char *)s + i, run);
        i += run;
        if (i == len)
            break;
        if (s[i + 1] != 'u') {
            char c = (char)unescape[s[i + 1]];
            bw_buf_append(jp->pool, &jp->dec, &c, 1);
            i += 2;
            continue;
        }
        cp = hex4(s + i + 2);
        i += 6;
        if ((cp & 0xfc00) == 0xd800) {
            if (i + 1 < len && s[i] == '\\' && s[i + 1] == 'u') {
                unsigned long low = hex4(s + i + 2);
                cp = ((cp & 0x3f) << 10) | ((((cp >> 6) & 0xf) + 1) << 16) | (low & 0x3ff);
                i += 6;
            } else {
                /* a lone high surrogate */
                bw_buf_append(jp->pool, &jp->dec, "?", 1);
                continue;
            }
        }
        bw_buf_append(jp->pool, &jp->dec, utf8, bw_body_utf8_put(utf8, cp));
    }
}

/* The state once a value has ended. */
static state_t after_value(const bw_jp_t *jp)
{
    if (jp->stack.len == 0)
        return ST_DONE;
    return jp->stack.data[jp->stack.len - 1] == 'm' ? ST_MAP_NEXT : ST_ARR_NEXT;
}

static int cancelled(bw_jp_t *jp)
{
    return fail(jp, "parse error: client cancelled parse via callback return value");
}

/* A string's content as the events get it. */
static void content(bw_jp_t *jp, const lexed_t *t, const char **s, size_t *len)
{
    if (!t->escapes) {
        *s = (const char *)t->s;
        *len = t->len;
        return;
    }
    decode(jp, t->s, t->len);
    *s = jp->dec.len ? jp->dec.data : "";
    *len = jp->dec.len;
}

/* A value's token in a state that wants one: 0, or -1. */
static inline __attribute__((always_inline)) int value(bw_jp_t *jp, tok_t tok, const lexed_t *t, const uchar *start)
{
    const bw_jp_events_t *ev = jp->ev;
    const char *s;
    size_t len;
    int ok;
    switch (tok) {
    case T_STRING:
        content(jp, t, &s, &len);
        ok = ev->string(jp->ctx, s, len);
        break;
    case T_NUMBER:
        ok = ev->number(jp->ctx, (const char *)start, (size_t)(t->end - start));
        break;
    case T_TRUE:
    case T_FALSE:
        ok = ev->boolean(jp->ctx, tok == T_TRUE);
        break;
    case T_NULL:
        ok = ev->null(jp->ctx);
        break;
    case T_LBRACE:
    case T_LBRACKET:
        bw_buf_append(jp->pool, &jp->stack, tok == T_LBRACE ? "m" : "a", 1);
        jp->state = tok == T_LBRACE ? ST_MAP_FIRST : ST_ARR_FIRST;
        ok = tok == T_LBRACE ? ev->start_map(jp->ctx) : ev->start_array(jp->ctx);
        return ok ? 0 : cancelled(jp);
    case T_RBRACKET:
        if (jp->state == ST_ARR_FIRST) {
            jp->stack.len--;
            jp->state = after_value(jp);
            return ev->end_array(jp->ctx) ? 0 : cancelled(jp);
        }
        /* fall through */
    default:
        return fail(jp, "parse error: unallowed token at this point in JSON text");
    }
    jp->state = after_value(jp);
    return ok ? 0 : cancelled(jp);
}

/* The fast paths' tokens (run): a key in a map, and a string or number
 * value whose state after it the path knows (inside a map or an array),
 * so the stack is not read. What step and value do with them. */
static inline __attribute__((always_inline)) int fast_key(bw_jp_t *jp, const lexed_t *t)
{
    const char *s;
    size_t len;
    content(jp, t, &s, &len);
    jp->state = ST_MAP_COLON;
    return jp->ev->map_key(jp->ctx, s, len) ? 0 : cancelled(jp);
}

static inline __attribute__((always_inline)) int fast_value(bw_jp_t *jp, tok_t tok,
                                                            const lexed_t *t, const uchar *start,
                                                            state_t next)
{
    const char *s;
    size_t len;
    int ok;
    if (tok == T_STRING) {
        content(jp, t, &s, &len);
        ok = jp->ev->string(jp->ctx, s, len);
    } else {
        ok = jp->ev->number(jp->ctx, (const char *)start, (size_t)(t->end - start));
    }
    jp->state = next;
    return ok ? 0 : cancelled(jp);
}

/* One token in the current state: 0, or -1. */
static inline __attribute__((always_inline)) int step(bw_jp_t *jp, tok_t tok, const lexed_t *t, const uchar *start)
{
    const char *s;
    size_t len;
    switch (jp->state) {
    case ST_VALUE:
    case ST_MAP_VALUE:
    case ST_ARR_FIRST:
    case ST_ARR_VALUE:
        return value(jp, tok, t, start);
    case ST_MAP_FIRST:
    case ST_MAP_KEY:
        if (tok == T_STRING) {
            content(jp, t, &s, &len);
            jp->state = ST_MAP_COLON;
            return jp->ev->map_key(jp->ctx, s, len) ? 0 : cancelled(jp);
        }
        if (tok == T_RBRACE && jp->state == ST_MAP_FIRST) {
            jp->stack.len--;
            jp->state = after_value(jp);
            return jp->ev->end_map(jp->ctx) ? 0 : cancelled(jp);
        }
        return fail(jp, "parse error: invalid object key (must be a string)");
    case ST_MAP_COLON:
        if (tok == T_COLON) {
            jp->state = ST_MAP_VALUE;
            return 0;
        }
        return fail(jp, "parse error: object key and value must be separated by a colon (':')");
    case ST_MAP_NEXT:
        if (tok == T_COMMA) {
            jp->state = ST_MAP_KEY;
            return 0;
        }
        if (tok == T_RBRACE) {
            jp->stack.len--;
            jp->state = after_value(jp);
            return jp->ev->end_map(jp->ctx) ? 0 : cancelled(jp);
        }
        return fail(jp, "parse error: after key and value, inside map, I expect ',' or '}'");
    case ST_ARR_NEXT:
        if (tok == T_COMMA) {
            jp->state = ST_ARR_VALUE;
            return 0;
        }
        if (tok == T_RBRACKET) {
            jp->stack.len--;
            jp->state = after_value(jp);
            return jp->ev->end_array(jp->ctx) ? 0 : cancelled(jp);
        }
        return fail(jp, "parse error: after array element, I expect ',' or ']'");
    default:
        return -1;
    }
}

/* A string or a number starts with c (the values the fast path reads). */
#define STARTS_VALUE(c) ((c) == '"' || (c) == '-' || ((c) >= '0' && (c) <= '9'))

/* The tokens of [buf, buf + len): how many bytes were used (the rest is a
 * cut token), or -1.
 *
 * Most tokens of a document are a key, its colon, a value and a comma,
 * each in the one state that takes it: those go straight to what step()
 * would do with them (a comma, a key and the colon right after it, a
 * string or number value), and from one to the next when no space is
 * between them; any other token, or one of those in another state, goes
 * the general way (lex, step), which decides its error. */
static long run(bw_jp_t *jp, const uchar *buf, size_t len)
{
    const uchar *p = buf, *end = buf + len;
    /* a cut token goes on the general way; after it none is (a token cut
     * again ends this call), so the fast paths read fresh tokens only */
    int resuming = jp->resume != 0;
    for (;;) {
        lexed_t t;
        tok_t tok;
        state_t next;
        int done;
        while (p < end && space[*p])
            p++;
        if (p == end)
            return (long)len;
        switch (resuming ? -1 : (int)jp->state) {
        case ST_MAP_NEXT:
            if (*p != ',')
                break;
            jp->state = ST_MAP_KEY;
            if (++p < end && *p == '"')
                goto key;
            continue;
        case ST_ARR_NEXT:
            if (*p != ',')
                break;
            jp->state = ST_ARR_VALUE;
            if (++p < end && STARTS_VALUE(*p))
                goto value;
            continue;
        case ST_MAP_FIRST:
        case ST_MAP_KEY:
            if (*p != '"')
                break;
        key:
            tok = lex_string(jp, p, end, &t, 0);
            if (tok == T_MORE)
                return (long)(p - buf);
            if (tok == T_ERROR || fast_key(jp, &t) < 0)
                return -1;
            p = t.end;
            if (p == end || *p != ':')
                continue;
            jp->state = ST_MAP_VALUE;
            if (++p < end && STARTS_VALUE(*p))
                goto value;
            continue;
        case ST_MAP_VALUE:
        case ST_ARR_VALUE:
        case ST_ARR_FIRST:
            if (!STARTS_VALUE(*p))
                break;
        value:
            /* in a map's value the map is the innermost container, else an array */
            next = jp->state == ST_MAP_VALUE ? ST_MAP_NEXT : ST_ARR_NEXT;
            tok = *p == '"' ? lex_string(jp, p, end, &t, 0) : lex_number(jp, p, end, &t, 0);
            if (tok == T_MORE)
                return (long)(p - buf);
            if (tok == T_ERROR || fast_value(jp, tok, &t, p, next) < 0)
                return -1;
            p = t.end;
            if (p < end && *p == ',' && next == ST_MAP_NEXT) {
                jp->state = ST_MAP_KEY;
                if (++p < end && *p == '"')
                    goto key;
            }
            continue;
        default:
            break;
        }
        resuming = 0;
        done = jp->state == ST_DONE;
        tok = lex(jp, p, end, &t);
        if (tok == T_MORE)
            return (long)(p - buf);
        /* after the value even a lexical error is yajl's trailing garbage */
        if (done)
            return fail(jp, "parse error: trailing garbage");
        if (tok == T_ERROR || step(jp, tok, &t, p) < 0)
            return -1;
        p = t.end;
    }
}

bw_jp_t *bw_jp_create(apr_pool_t *pool, const bw_jp_events_t *ev, void *ctx)
{
    bw_jp_t *jp = apr_pcalloc(pool, sizeof(*jp));
    pthread_once(&tables_once, make_tables);
    jp->pool = pool;
    jp->ev = ev;
    jp->ctx = ctx;
    jp->state = ST_VALUE;
    return jp;
}

int bw_jp_feed(bw_jp_t *jp, const char *data, size_t len)
{
    const uchar *d = (const uchar *)data;
    long used;
    if (jp->state == ST_FAILED)
        return -1;
    /* a cut token first: add bytes to it until it ends */
    while (jp->carry.len && len) {
        size_t had = jp->carry.len, take = had < 64 ? 64 : had;
        if (take > len)
            take = len;
        bw_buf_append(jp->pool, &jp->carry, (const char *)d, take);
        used = run(jp, (const uchar *)jp->carry.data, jp->carry.len);
        if (used < 0)
            return -1;
        if ((size_t)used < had) {      /* still cut: it starts the carry */
            d += take;
            len -= take;
            continue;
        }
        /* it ended; what follows it is read from the chunk itself */
        jp->carry.len = 0;
        d += (size_t)used - had;
        len -= (size_t)used - had;
    }
    if (len == 0)
        return 0;
    used = run(jp, d, len);
    if (used < 0)
        return -1;
    if ((size_t)used < len)
        bw_buf_append(jp->pool, &jp->carry, (const char *)d + used, len - (size_t)used);
    return 0;
}

int bw_jp_finish(bw_jp_t *jp)
{
    /* as yajl: the end reads as one more space, which ends a number */
    if (bw_jp_feed(jp, " ", 1) < 0)
        return -1;
    if (jp->state == ST_DONE)
        return 0;
    return fail(jp, "parse error: premature EOF");
}

const char *bw_jp_error(const bw_jp_t *jp)
{
    return jp->error;
}
