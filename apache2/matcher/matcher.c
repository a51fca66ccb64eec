/*
 * The part of the matcher both implementations share: collecting patterns
 * as bits, the exact and always sets, scanning a value into a bit vector;
 * pruning the cache directory the Vectorscan matcher writes.
 */
#include <string.h>
#include <pthread.h>
#include <apr_time.h>
#include <apr_file_io.h>
#include <apr_hash.h>
#include "matcher/matcher_int.h"
#include "base/bw_regex.h"
#include "transformations/bw_tfn.h"   /* bw_byteset_of */

bw_matcher_t *bw_matcher_create(apr_pool_t *pool)
{
    bw_matcher_t *m = apr_pcalloc(pool, sizeof(*m));
    m->pool = pool;
    m->pats = apr_array_make(pool, 16, sizeof(mx_pat_t));
    return m;
}

/* ---- what a regex's text says ------------------------------------------------ */

/* After an option group's "(?": how many option characters (letters, -, ^)
 * follow, and does one of them name the m option? */
static size_t option_run(const char *s, size_t n, int *multiline)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (s[i] == 'm')
            *multiline = 1;
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '-'
              || s[i] == '^'))
            break;
    }
    return i;
}

/* Walk a regex's text: its MX_T_LINE and MX_T_WHOLE traits, and (out not
 * NULL) the text with each ^, $, \A, \z and \Z anchor also matching the
 * byte that separates joined values: (?:^|\xff), (?:$|\xff), (?:\A|\xff),
 * (?:\z|\xff), (?:\Z|\n?\xff). Errs only towards
 * more traits (one too many costs speed, one too few a missed match): an
 * escape that may be an absolute anchor counts even inside a class. */
static unsigned walk_anchors(bw_str_t re, char *out, size_t *outlen)
{
    const char *s = re.data;
    size_t n = re.len, i = 0, o = 0, class_start = 0, k;
    int in_class = 0, ml = 0;
    unsigned t = 0;
#define EMIT(p, len) do { if (out) memcpy(out + o, (p), (len)); o += (len); } while (0)
    while (i < n) {
        char c = s[i];
        if (c == '\\' && i + 1 < n) {
            char d = s[i + 1];
            if (d == 'Q') {               /* \Q...\E: literal */
                for (k = i + 2; k + 1 < n && !(s[k] == '\\' && s[k + 1] == 'E'); k++)
                    ;
                k = k + 2 < n ? k + 2 : n;
                EMIT(s + i, k - i);
                i = k;
                continue;
            }
            /* \A, \z and \Z also match at the separator, as ^ and $ do
             * (\Z before a final newline too); \G has nothing to match there */
            if (!in_class && d == 'A') {
                t |= MX_T_LINE;
                EMIT("(?:\\A|\\xff)", 11);
            } else if (!in_class && d == 'z') {
                t |= MX_T_LINE;
                EMIT("(?:\\z|\\xff)", 11);
            } else if (!in_class && d == 'Z') {
                t |= MX_T_LINE;
                EMIT("(?:\\Z|\\n?\\xff)", 14);
            } else {
                if (d == 'A' || d == 'z' || d == 'Z' || d == 'G')
                    t |= MX_T_WHOLE;
                EMIT(s + i, 2);
            }
            i += 2;
            continue;
        }
        if (in_class) {
            if (c == ']' && i > class_start)
                in_class = 0;
            EMIT(s + i, 1);
            i++;
            continue;
        }
        if (c == '[') {
            in_class = 1;
            /* a ']' first in a class is a member */
            class_start = i + 1 < n && s[i + 1] == '^' ? i + 2 : i + 1;
            EMIT(s + i, 1);
            i++;
            continue;
        }
        if (c == '(' && i + 1 < n && s[i + 1] == '?') {
            /* (?i), (?-s:…), (?^): options, never anchors */
            k = 2 + option_run(s + i + 2, n - i - 2, &ml);
            EMIT(s + i, k);
            i += k;
            if (ml)
                t |= MX_T_WHOLE;
            continue;
        }
        if (c == '^') {
            t |= MX_T_LINE;
            EMIT("(?:^|\\xff)", 10);
        } else if (c == '$') {
            t |= MX_T_LINE;
            EMIT("(?:$|\\xff)", 10);
        } else {
            EMIT(s + i, 1);
        }
        i++;
    }
#undef EMIT
    if (outlen)
        *outlen = o;
    return t;
}

/* Does the regex (compiled as @rx compiles: DOTALL) match every value?
 * Only the forms rule sets use for "any value": an optional ^, .* in at
 * most one group, an optional $; or nothing at all. */
static int universal(bw_str_t re)
{
    const char *s = re.data;
    size_t n = re.len;
    int head = 0, tail = 0;
    if (n && s[0] == '^') {
        s++;
        n--;
        head = 1;
    }
    if (n && s[n - 1] == '$' && (n < 2 || s[n - 2] != '\\')) {
        n--;
        tail = 1;
    }
    if (n == 0)   /* ^ or $ alone match every value, ^$ only the empty one */
        return !(head && tail);
    if (n >= 4 && s[0] == '(' && s[n - 1] == ')') {
        if (n >= 6 && s[1] == '?' && s[2] == ':') {
            s += 3;
            n -= 4;
        } else if (s[1] != '?') {
            s += 1;
            n -= 2;
        }
    }
    return (n == 2 && !memcmp(s, ".*", 2)) || (n == 3 && !memcmp(s, ".*?", 3));
}

/* The traits add() gives regex text: its anchors, universal, a pattern
 * its bytes decide (with the bytes of its class and n), or, asked with
 * set, a small set of whole values (MX_T_SET, the set in *set). */
static unsigned regex_traits(apr_pool_t *pool, bw_str_t text, uint64_t bytes[4], int *min,
                             size_t *jlen, const mx_set_t **set)
{
    unsigned t = walk_anchors(text, NULL, jlen) | (universal(text) ? MX_T_UNIVERSAL : 0);
    if (set)
        *set = NULL;
    if (!t)
        t = mx_decided_shape(pool, text, bytes, min);
    else if (set && (t & MX_T_LINE) && !(t & MX_T_UNIVERSAL) && (*set = mx_set_shape(pool, text)))
        t = MX_T_SET;   /* compared whole: no anchor is left to a scan */
    return t;
}

/* The bytes one of which every string of st starts with. */
static void set_gate(const mx_set_t *st, uint64_t gate[4])
{
    int i;
    memset(gate, 0, sizeof(uint64_t) * 4);
    for (i = 0; i < st->n; i++) {
        int c = (unsigned char)st->v[i].data[0];
        gate[c / 64] |= (uint64_t)1 << (c % 64);
        if (st->nocase && (c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
            c ^= 0x20;
            gate[c / 64] |= (uint64_t)1 << (c % 64);
        }
    }
}

int bw_matcher_regex_set(apr_pool_t *pool, const char *re, size_t len, uint64_t gate[4])
{
    size_t n = 0;
    int min = 0;
    const mx_set_t *st = NULL;
    if (regex_traits(pool, bw_str_n(re, len), gate, &min, &n, &st) != MX_T_SET)
        return 0;
    set_gate(st, gate);
    return 1;
}

void bw_matcher_compare_sets(bw_matcher_t *m)
{
    m->compare_sets = 1;
}

int bw_matcher_regex_decided(apr_pool_t *pool, const char *re, size_t len, uint64_t gate[4])
{
    size_t n = 0;
    int min = 0;
    unsigned t = regex_traits(pool, bw_str_n(re, len), gate, &min, &n, NULL);
    if (!(t & MX_T_BY_BYTES))   /* universal (always set), or not decided */
        memset(gate, 0, sizeof(uint64_t) * 4);
    return (t & MX_T_DECIDED) != 0;
}


static void add(bw_matcher_t *m, int kind, int bit, bw_str_t text, int nocase)
{
    mx_pat_t *p = apr_array_push(m->pats);
    p->kind = kind;
    p->bit = bit;
    {   /* the text need not be terminated: copy its bytes, then end it */
        char *c = apr_palloc(m->pool, text.len + 1);
        if (text.len)
            memcpy(c, text.data, text.len);
        c[text.len] = '\0';
        p->text = bw_str_n(c, text.len);
    }
    p->nocase = nocase;
    p->jtext = p->text;
    if (kind == MX_REGEX) {
        size_t n = 0;
        p->traits = regex_traits(m->pool, p->text, p->bytes, &p->min, &n,
                                 m->compare_sets ? &p->set : NULL);
        if (p->traits & MX_T_LINE) {
            char *j = apr_palloc(m->pool, n + 1);
            walk_anchors(p->text, j, &n);
            j[n] = '\0';
            p->jtext = bw_str_n(j, n);
        }
    } else {   /* an empty phrase is everywhere, one with the separator spans values */
        p->traits = !text.len || memchr(p->text.data, MX_SEP, text.len) ? MX_T_WHOLE : 0;
    }
}

/* ---- regexes that join badly ----------------------------------------------------- */

/* Values benign requests are full of (header values, JSON and form
 * fields, words a shell or SQL also knows), for bw_mx_joins_badly. */
static const char *const probe_values[] = {
    "0", "1", "42", "3.14", "-7", "true", "false", "null", "yes", "no", "on", "off", "id",
    "name", "type", "value", "page", "sort", "time", "date", "test", "echo", "en", "en-GB",
    "en-US,en;q=0.9", "gzip, deflate, br", "text/html,application/xhtml+xml", "application/json",
    "keep-alive", "max-age=0", "no-cache", "same-origin", "navigate", "document", "?1", "u=0, i",
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "https://shop.example.com/catalog/garden?page=1", "/catalog/garden", "shop.example.com",
    "sessionid", "3f9a0c2e7b1d4a6f8e5c01d2", "rec_0001.sku", "grey_plate", "John Smith",
    "john.smith@example.com", "2024-05-01T12:00:00Z", "SKU858734", "EUR", "index.html",
    "Hello world, this is a note.", "x=1&y=2", "a b c", "image/png", ""
};
/* Pairs of these are joined too: words that end or start many a match. */
static const char *const probe_words[] = { "false", "true", "id", "name", "en", "ls", "page",
                                           "1", "time", "a b" };

static int probe(pcre2_code *re, pcre2_match_data *md, pcre2_match_context *mc, const char *s,
                 size_t n)
{
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, md, mc);
    return rc >= 0 || rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT;
}

int bw_mx_joins_badly(const mx_pat_t *p)
{
    int ec, bad = 0;
    PCRE2_SIZE eo;
    size_t i, j;
    char buf[512];
    /* alone as @rx compiles it; joined as the joined scan has it (with
     * anchors that also match the separator) */
    pcre2_code *alone = pcre2_compile((PCRE2_SPTR)p->text.data, p->text.len,
                                      PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY, &ec, &eo, NULL);
    pcre2_code *joined = pcre2_compile((PCRE2_SPTR)p->jtext.data, p->jtext.len,
                                       PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY, &ec, &eo, NULL);
    pcre2_match_data *md = NULL;
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    if (!alone || !joined || !mc || !(md = pcre2_match_data_create(1, NULL))) {
        bad = 1;   /* whatever PCRE2 cannot say, scan alone */
        goto done;
    }
    pcre2_set_match_limit(mc, 100000);
    pcre2_set_depth_limit(mc, 1000);
    for (i = 0; i < sizeof(probe_values) / sizeof(probe_values[0]) && !bad; i++) {
        const char *v = probe_values[i];
        size_t n = strlen(v);
        if (probe(alone, md, mc, v, n))
            continue;
        buf[0] = (char)MX_SEP;
        memcpy(buf + 1, v, n);
        buf[n + 1] = (char)MX_SEP;
        bad = probe(joined, md, mc, buf, n + 2);
    }
    for (i = 0; i < sizeof(probe_words) / sizeof(probe_words[0]) && !bad; i++) {
        size_t n = strlen(probe_words[i]);
        if (probe(alone, md, mc, probe_words[i], n))
            continue;
        for (j = 0; j < sizeof(probe_words) / sizeof(probe_words[0]) && !bad; j++) {
            size_t m = strlen(probe_words[j]);
            if (probe(alone, md, mc, probe_words[j], m))
                continue;
            memcpy(buf, probe_words[i], n);
            buf[n] = (char)MX_SEP;
            memcpy(buf + n + 1, probe_words[j], m);
            bad = probe(joined, md, mc, buf, n + 1 + m);
        }
    }
done:
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    pcre2_code_free(alone);
    pcre2_code_free(joined);
    return bad;
}

int bw_matcher_add_regex_as(bw_matcher_t *m, const char *re, size_t len, int bit)
{
    if (m->compiled || bit < 0)
        return -1;
    add(m, MX_REGEX, bit, bw_str_n(re, len), 0);
    if (bit >= m->nbits)
        m->nbits = bit + 1;
    return bit;
}

int bw_matcher_add_phrases_as(bw_matcher_t *m, const bw_ac_t *phrases, int bit)
{
    size_t i, n = bw_ac_count(phrases);
    if (m->compiled || bit < 0)
        return -1;
    for (i = 0; i < n; i++)
        add(m, MX_PHRASE, bit, bw_ac_pattern(phrases, i), bw_ac_nocase(phrases));
    if (bit >= m->nbits)
        m->nbits = bit + 1;
    return bit;
}

int bw_matcher_add_literal_as(bw_matcher_t *m, bw_str_t lit, int nocase, int bit)
{
    if (m->compiled || bit < 0)
        return -1;
    add(m, MX_PHRASE, bit, lit, nocase);
    if (bit >= m->nbits)
        m->nbits = bit + 1;
    return bit;
}

int bw_matcher_add_regex(bw_matcher_t *m, const char *re, size_t len)
{
    return bw_matcher_add_regex_as(m, re, len, m->nbits);
}

int bw_matcher_add_phrases(bw_matcher_t *m, const bw_ac_t *phrases)
{
    return bw_matcher_add_phrases_as(m, phrases, m->nbits);
}

/* ---- a lone regex, a few phrases ----------------------------------------------- */

/* A matcher whose scans look for one regex (a plan's group with one rule,
 * e.g. the request line's format check) pays a database scan's fixed cost
 * and its cold engine for one pattern. On one value of at most
 * LONE_MAX_LEN bytes, PCRE2 runs it instead, with a step limit: a limit
 * hit (or any error) and the value is scanned by the database as before,
 * so a hostile value costs LONE_STEPS steps more, never a backtracking
 * run. A matcher of at most FEW_PHRASES phrases (and nothing else to
 * scan for) searches one such value for each (docs/design-notes.md, *A
 * lone regex on one short value*). */
#define LONE_MAX_LEN 256
#define LONE_STEPS 10000
#define FEW_PHRASES 8

static apr_status_t free_mc(void *data)
{
    pcre2_match_context_free(data);
    return APR_SUCCESS;
}

/* Does a database scan look for pattern p (not decided from the value's
 * bytes, not matching every value, not always set)? */
static int scanned(const bw_matcher_t *m, const mx_pat_t *p)
{
    return !(p->traits & MX_T_DECIDED) && m->kind[p->bit] != MX_ALWAYS;
}

/* After compiling: when the scans look for one regex, or for at most
 * FEW_PHRASES phrases (none empty) and nothing else, keep what one short
 * value is matched with instead (the regex compiled as @rx compiles it,
 * with its step limit; the phrases, the case-insensitive ones lowercase). */
static void short_value_path(bw_matcher_t *m)
{
    const mx_pat_t *pats = (const mx_pat_t *)m->pats->elts, *lone = NULL;
    mx_pat_t *few;
    char *err = NULL;
    int b, nre = 0, nph = 0, n = 0;
    size_t i;
    for (b = 0; b < m->pats->nelts; b++) {
        if (!scanned(m, &pats[b]))
            continue;
        if (pats[b].kind == MX_REGEX) {
            lone = &pats[b];
            nre++;
        } else if (!pats[b].text.len) {
            return;
        } else {
            nph++;
        }
    }
    if (nre == 1 && !nph) {
        /* @rx's own compilation (bw_regex_compile) reads a C string */
        if (memchr(lone->text.data, 0, lone->text.len))
            return;
        m->lone = bw_regex_compile(m->pool, apr_pstrndup(m->pool, lone->text.data, lone->text.len),
                                   0, &err);
        if (!m->lone || !(m->lone_mc = pcre2_match_context_create(NULL))) {
            m->lone = NULL;
            return;
        }
        apr_pool_cleanup_register(m->pool, m->lone_mc, free_mc, apr_pool_cleanup_null);
        pcre2_set_match_limit(m->lone_mc, LONE_STEPS);
        m->lone_bit = lone->bit;
        return;
    }
    if (nre || !nph || nph > FEW_PHRASES)
        return;
    few = apr_palloc(m->pool, sizeof(*few) * (size_t)nph);
    for (b = 0; b < m->pats->nelts; b++) {
        if (!scanned(m, &pats[b]))
            continue;
        few[n] = pats[b];
        if (pats[b].nocase) {
            char *t = apr_pmemdup(m->pool, pats[b].text.data, pats[b].text.len);
            for (i = 0; i < pats[b].text.len; i++)
                t[i] = (char)bw_lower1((unsigned char)t[i]);
            few[n].text = bw_str_n(t, pats[b].text.len);
        }
        n++;
    }
    m->few = few;
    m->nfew = n;
}

static void *pool_malloc(PCRE2_SIZE n, void *pool)
{
    return apr_palloc(pool, n);
}

static void pool_free(void *p, void *pool)
{
}

/* The few phrases in value v (at most LONE_MAX_LEN bytes): their bits in
 * bits; nonzero when one occurs. */
static int few_run(const bw_matcher_t *m, bw_str_t v, uint64_t *bits)
{
    char lower[LONE_MAX_LEN];
    int k, any = 0, low = 0;
    size_t i;
    for (k = 0; k < m->nfew; k++) {
        const mx_pat_t *p = &m->few[k];
        const char *hay = v.data;
        if (p->nocase) {
            if (!low) {
                for (i = 0; i < v.len; i++)
                    lower[i] = (char)bw_lower1((unsigned char)v.data[i]);
                low = 1;
            }
            hay = lower;
        }
        if (p->text.len <= v.len && bw_memmem(hay, v.len, p->text.data, p->text.len)) {
            bits[p->bit / 64] |= (uint64_t)1 << (p->bit % 64);
            any = 1;
        }
    }
    return any;
}

/* The lone regex on value v, its bit in buf->bits: 1 it matches, 0 it
 * does not, -1 PCRE2 could not say (the step limit): scan the value. */
static int lone_run(const bw_matcher_t *m, bw_str_t v, apr_pool_t *pool, bw_matcher_buf_t *buf)
{
    int rc;
    if (!buf->md) {   /* the buffer's pool holds it, as it holds the rest */
        pcre2_general_context *gc = pcre2_general_context_create(pool_malloc, pool_free, pool);
        if (!gc || !(buf->md = pcre2_match_data_create(1, gc)))
            return -1;
    }
    rc = pcre2_match(m->lone, (PCRE2_SPTR)(v.data ? v.data : ""), v.len, 0, 0, buf->md,
                     m->lone_mc);
    if (rc >= 0)
        buf->bits[m->lone_bit / 64] |= (uint64_t)1 << (m->lone_bit % 64);
    return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

void bw_matcher_compile(bw_matcher_t *m, const char *cache_dir, const char **warning)
{
    apr_time_t t0 = apr_time_now();
    int b;
    if (warning)
        *warning = NULL;
    if (m->compiled)
        return;
    m->compiled = 1;
    m->nwords = m->nbits ? (m->nbits + 63) / 64 : 1;
    /* a bit no pattern was added for (bits are the caller's) never hits */
    m->kind = apr_pcalloc(m->pool, (size_t)m->nbits + 1);
    m->exact = apr_pcalloc(m->pool, sizeof(uint64_t) * (size_t)m->nwords);
    m->always = apr_pcalloc(m->pool, sizeof(uint64_t) * (size_t)m->nwords);
    m->line = apr_pcalloc(m->pool, sizeof(uint64_t) * (size_t)m->nwords);
    m->univ = apr_pcalloc(m->pool, sizeof(uint64_t) * (size_t)m->nwords);
    for (b = 0; b < m->pats->nelts; b++) {
        const mx_pat_t *p = &((const mx_pat_t *)m->pats->elts)[b];
        uint64_t bit = (uint64_t)1 << (p->bit % 64);
        if (p->traits & MX_T_UNIVERSAL)
            m->univ[p->bit / 64] |= bit;
        if (p->traits & MX_T_LINE)
            m->line[p->bit / 64] |= bit;
    }
    if (m->nbits)
        bw_mx_compile(m, cache_dir, warning);
    for (b = 0; b < m->nbits; b++) {
        uint64_t bit = (uint64_t)1 << (b % 64);
        if (m->univ[b / 64] & bit) {    /* matches every value, whatever else the bit has */
            m->kind[b] = MX_EXACT;
            m->line[b / 64] &= ~bit;
        }
        if (m->kind[b] == MX_EXACT) {
            m->exact[b / 64] |= bit;
            m->info.exact++;
        } else if (m->kind[b] == MX_MAYBE) {
            m->info.maybe++;
        } else {
            m->always[b / 64] |= bit;
            m->info.always++;
        }
    }
    for (b = 0; b < m->pats->nelts; b++) {
        const mx_pat_t *p = &((const mx_pat_t *)m->pats->elts)[b];
        if (scanned(m, p))
            m->scans = 1;
    }
    short_value_path(m);
    mx_decided_gather(m);
    m->info.compile_ms = (double)(apr_time_now() - t0) / 1000.0;
}

int bw_matcher_byte_patterns(const bw_matcher_t *m)
{
    return m->nbyte;
}

int bw_matcher_bits(const bw_matcher_t *m)
{
    return m->nbits;
}

int bw_matcher_words(const bw_matcher_t *m)
{
    return m->nwords;
}

const uint64_t *bw_matcher_exact(const bw_matcher_t *m)
{
    return m->exact;
}

const uint64_t *bw_matcher_always(const bw_matcher_t *m)
{
    return m->always;
}

const uint64_t *bw_matcher_line(const bw_matcher_t *m)
{
    return m->line;
}

const uint64_t *bw_matcher_universal(const bw_matcher_t *m)
{
    return m->univ;
}

int bw_matcher_scan(const bw_matcher_t *m, bw_str_t value, uint64_t *hits)
{
    int w, ok = m->nbits ? bw_mx_scan(m, value, hits, MX_SCAN_ALL) : 1;
    if (m->nbyte) {
        bw_byteset_t set;
        bw_byteset_of(value, &set);
        mx_decided_hits(m, value, set.w, NULL, hits);
    }
    for (w = 0; w < m->nwords; w++)
        hits[w] |= ok ? m->always[w] | m->univ[w] : ~(uint64_t)0;
    return ok;
}



/* ---- many values at once ------------------------------------------------------ */

/* Grow an array of the buffer to hold n elements of size sz. */
static void *room(apr_pool_t *pool, void *arr, int *cap, int n, size_t sz)
{
    void *fresh;
    if (n <= *cap)
        return arr;
    *cap = n < 64 ? 64 : n + n / 2;
    fresh = apr_palloc(pool, sz * (size_t)*cap);
    return fresh;
}

/* Scan value i alone with the patterns of `which`; its bits to hit(). */
static int one(const bw_matcher_t *m, bw_str_t v, int i, int which, uint64_t *bits,
               bw_matcher_hit_fn hit, void *ctx, bw_matcher_buf_t *buf)
{
    int w, ok, any = 0;
    buf->calls++;
    memset(bits, 0, sizeof(uint64_t) * (size_t)m->nwords);
    ok = bw_mx_scan(m, v, bits, which);
    if (!ok)
        memset(bits, 0xff, sizeof(uint64_t) * (size_t)m->nwords);
    for (w = 0; w < m->nwords; w++)
        any |= bits[w] != 0;
    if (any)
        hit(ctx, i, bits);
    return ok;
}

/* The value of [a, b) that offset `at` of the joined text falls in. */
static int value_at(const size_t *off, int a, int b, size_t at)
{
    while (b - a > 1) {
        int mid = a + (b - a) / 2;
        if (off[mid] <= at)
            a = mid;
        else
            b = mid;
    }
    return a;
}

/* A joined scan in progress. */
typedef struct {
    const bw_matcher_t *m;
    const bw_matcher_buf_t *buf;
    size_t base;            /* where the scanned part starts in buf->data */
    int a, b;               /* the values it covers */
    size_t to;              /* a regex matcher's match: where it ended */
    bw_matcher_hit_fn hit;
    void *ctx;
    uint64_t *bits;
} joined_t;

/* A regex matcher: the first match stops the scan. */
static int on_first(void *ctx, int bit, size_t to)
{
    ((joined_t *)ctx)->to = to;
    return 1;
}

/* A literal matcher: every occurrence is a hit of the value it ends in
 * (a phrase has no newline, so it lies inside that value). */
static int on_phrase(void *ctx, int bit, size_t to)
{
    joined_t *j = ctx;
    int i = value_at(j->buf->off, j->a, j->b, j->base + to - 1);
    memset(j->bits, 0, sizeof(uint64_t) * (size_t)j->m->nwords);
    j->bits[bit / 64] |= (uint64_t)1 << (bit % 64);
    j->hit(j->ctx, i, j->bits);
    return 0;
}

/* Join values [0, n) into buf, a newline after each. */
static void join(const bw_str_t *v, int n, apr_pool_t *pool, bw_matcher_buf_t *buf)
{
    size_t total = 0, at = 0;
    int i;
    for (i = 0; i < n; i++)
        total += v[i].len + 1;
    if (total > buf->cap) {
        buf->cap = total + total / 2;
        buf->data = apr_palloc(pool, buf->cap);
    }
    buf->off = room(pool, buf->off, &buf->offcap, n + 1, sizeof(size_t));
    for (i = 0; i < n; i++) {
        buf->off[i] = at;
        if (v[i].len)
            memcpy(buf->data + at, v[i].data, v[i].len);
        at += v[i].len;
        buf->data[at++] = (char)MX_SEP;
    }
    buf->off[n] = at;
}

/* Regex matchers: a call clears its range of values or names the value a
 * match ended in, which is scanned alone, the rest of the range split
 * around it (matches are not reported in order, so the values before it
 * are not known to be clear). Past three passes' worth of bytes (matches
 * in most values), value by value. */
static int partition(joined_t *j, const bw_str_t *v, int n, apr_pool_t *pool,
                     bw_matcher_buf_t *buf)
{
    const bw_matcher_t *m = j->m;
    size_t total = buf->off[n], spent = 0;
    int ok = 1, sp = 0;
    buf->stack = room(pool, buf->stack, &buf->stackcap, 2 * n + 2, sizeof(int));
    buf->stack[sp++] = 0;
    buf->stack[sp++] = n;
    while (sp) {
        int b = buf->stack[--sp], a = buf->stack[--sp], k, rc;
        size_t len;
        if (a >= b)
            continue;
        len = buf->off[b] - 1 - buf->off[a];
        rc = -1;
        if (spent + len <= 3 * total) {
            spent += len;
            j->a = a;
            j->b = b;
            j->base = buf->off[a];
            rc = bw_mx_scan_joined(m, buf->data + buf->off[a], len, on_first, j);
            buf->calls++;
        }
        if (rc == 0)
            continue;
        if (rc < 0) {
            for (k = a; k < b; k++)
                ok &= one(m, v[k], k, MX_SCAN_JOINED, j->bits, j->hit, j->ctx, buf);
            continue;
        }
        k = value_at(buf->off, a, b, buf->off[a] + j->to);
        ok &= one(m, v[k], k, MX_SCAN_JOINED, j->bits, j->hit, j->ctx, buf);
        buf->stack[sp++] = k + 1;
        buf->stack[sp++] = b;
        buf->stack[sp++] = a;
        buf->stack[sp++] = k;
    }
    return ok;
}

/* The decided patterns' bits of values [0, n), from their bytes. */
static void byte_pass(const bw_matcher_t *m, const bw_str_t *v, const uint64_t *const *present,
                      int n, apr_pool_t *pool, bw_matcher_buf_t *buf, bw_matcher_hit_fn hit,
                      void *ctx)
{
    bw_byteset_t set;
    int i;
    buf->bits = room(pool, buf->bits, &buf->bitscap, m->nwords, sizeof(uint64_t));
    for (i = 0; i < n; i++) {
        const uint64_t *ps = present ? present[i] : NULL;
        if (!ps) {
            bw_byteset_of(v[i], &set);
            ps = set.w;
        }
        memset(buf->bits, 0, sizeof(uint64_t) * (size_t)m->nwords);
        if (mx_decided_hits(m, v[i], ps, buf->want, buf->bits))
            hit(ctx, i, buf->bits);
    }
}

int bw_matcher_scan_many(const bw_matcher_t *m, const bw_str_t *v,
                         const uint64_t *const *present, int n, apr_pool_t *pool,
                         bw_matcher_buf_t *buf, bw_matcher_hit_fn hit, void *ctx)
{
    joined_t j;
    int ok = 1, i;
    if (n <= 0)
        return 1;
    if (m->nbyte)
        byte_pass(m, v, present, n, pool, buf, hit, ctx);
    /* nothing a scan could add to the bits every value has */
    if (!m->scans)
        return 1;
    buf->bits = room(pool, buf->bits, &buf->bitscap, m->nwords, sizeof(uint64_t));
    if ((m->lone || m->nfew) && n == 1 && v[0].len <= LONE_MAX_LEN) {
        int rc;
        memset(buf->bits, 0, sizeof(uint64_t) * (size_t)m->nwords);
        rc = m->lone ? lone_run(m, v[0], pool, buf) : few_run(m, v[0], buf->bits);
        if (rc == 1)
            hit(ctx, 0, buf->bits);
        if (rc >= 0)
            return 1;
    }
    if (!bw_mx_joins(m) || n == 1) {
        for (i = 0; i < n; i++)
            ok &= one(m, v[i], i, MX_SCAN_ALL, buf->bits, hit, ctx, buf);
        return ok;
    }
    join(v, n, pool, buf);
    memset(&j, 0, sizeof(j));
    j.m = m;
    j.buf = buf;
    j.hit = hit;
    j.ctx = ctx;
    j.bits = buf->bits;
    if (m->literal) {
        j.a = 0;
        j.b = n;
        buf->calls++;
        if (bw_mx_scan_joined(m, buf->data, buf->off[n] - 1, on_phrase, &j) < 0)
            for (i = 0; i < n; i++)
                ok &= one(m, v[i], i, MX_SCAN_JOINED, buf->bits, hit, ctx, buf);
    } else {
        ok = partition(&j, v, n, pool, buf);
    }
    if (bw_mx_has_whole(m))
        for (i = 0; i < n; i++)
            ok &= one(m, v[i], i, MX_SCAN_WHOLE, buf->bits, hit, ctx, buf);
    return ok;
}

void bw_matcher_info(const bw_matcher_t *m, bw_matcher_info_t *info)
{
    *info = m->info;
}

/* ---- the cache directory ---------------------------------------------------- */

static pthread_mutex_t prune_lock = PTHREAD_MUTEX_INITIALIZER;
/* directories this process pruned and when: a fixed table, no allocation that
 * outlives the call (a process has one or two cache directories) */
#define PRUNED_DIRS 16
static struct { uint64_t key; apr_time_t last; } pruned[PRUNED_DIRS];

static uint64_t dir_key(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h | 1;                               /* 0 marks a free entry */
}

void bw_matcher_cache_prune(apr_pool_t *pool, const char *cache_dir, apr_interval_time_t max_age)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_time_t now = apr_time_now();
    uint64_t key;
    int due = 1, i;
    if (!cache_dir || !*cache_dir)
        return;
    key = dir_key(cache_dir);
    /* every program built calls this; a directory is read once an hour */
    pthread_mutex_lock(&prune_lock);
    for (i = 0; i < PRUNED_DIRS; i++) {
        if (pruned[i].key == key) {
            due = now - pruned[i].last > apr_time_from_sec(3600);
            break;
        }
        if (!pruned[i].key) {
            pruned[i].key = key;
            break;
        }
    }
    if (due && i < PRUNED_DIRS)
        pruned[i].last = now;
    pthread_mutex_unlock(&prune_lock);
    if (!due || apr_dir_open(&d, cache_dir, pool) != APR_SUCCESS)
        return;
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_MTIME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        size_t n = fi.name ? strlen(fi.name) : 0;
        int db = n > 13 && !strncmp(fi.name, "bulwark-", 8) && !strcmp(fi.name + n - 5, ".hsdb");
        int tmp = n > 12 && !strncmp(fi.name, "bulwark-", 8) && !strcmp(fi.name + n - 4, ".tmp");
        if (fi.filetype != APR_REG || !(db || tmp))
            continue;
        /* a temporary file older than an hour belongs to no live writer */
        if (now - fi.mtime > (db ? max_age : apr_time_from_sec(3600)))
            apr_file_remove(apr_pstrcat(pool, cache_dir, "/", fi.name, NULL), pool);
    }
    apr_dir_close(d);
}
