/*
 * Unit tests for the transformations (apache2/transformations/):
 *  - every transformation against its vectors in data/tfn/<name>.txt (format
 *    in data/tfn/README): exact output, the return value (1 if and only if
 *    the bytes changed) and, when unchanged, that the input itself came back
 *    and nothing was allocated;
 *  - the same invariants over generated inputs made of the bytes decoders
 *    care about, each in a malloc'd buffer of exactly its length so that
 *    ASan catches any read past it;
 *  - the trigger sets: inputs without a trigger byte come back untouched,
 *    and every trigger byte alone changes some input; bw_byteset_of and
 *    the compile-time byte sets;
 *  - the registry (every ModSecurity 2.9 name, case-insensitive lookup) and
 *    the unicode map loader.
 * Data directory: $BW_TEST_DATA/tfn, else tests/unit/data/tfn beside this
 * file.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <apr_general.h>
#include "transformations/bw_tfn.h"

#define MAX_LINE 65536

static apr_pool_t *root_pool;

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */

static const char *data_dir(void)
{
    static char dir[4096];
    const char *env = getenv("BW_TEST_DATA");
    const char *slash;

    if (env != NULL && *env != '\0') {
        snprintf(dir, sizeof(dir), "%s/tfn", env);
        return dir;
    }
    slash = strrchr(__FILE__, '/');
    snprintf(dir, sizeof(dir), "%.*s/data/tfn",
             slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".");
    return dir;
}

/* Printable form of s for failure messages (pool memory). */
static const char *show(apr_pool_t *p, bw_str_t s)
{
    char *buf = apr_palloc(p, s.len * 4 + 3), *d = buf;
    size_t i;

    *d++ = '"';
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (c == '\\' || c == '"' || c < 0x20 || c >= 0x7F)
            d += sprintf(d, "\\x%02x", c);
        else
            *d++ = (char)c;
    }
    *d++ = '"';
    *d = '\0';
    return buf;
}

/* Decode a vector payload: \\ \xHH \n \r \t \s (space). Returns -1 on an
 * unknown or truncated escape, so a typo in a data file fails loudly. */
static int unescape(const char *src, size_t n, char *dst, size_t *out_len)
{
    size_t i = 0, len = 0;
    int hi, lo;

    while (i < n) {
        if (src[i] != '\\') {
            dst[len++] = src[i++];
            continue;
        }
        if (i + 1 >= n)
            return -1;
        switch (src[i + 1]) {
        case '\\': dst[len++] = '\\'; break;
        case 'n': dst[len++] = '\n'; break;
        case 'r': dst[len++] = '\r'; break;
        case 't': dst[len++] = '\t'; break;
        case 's': dst[len++] = ' '; break;
        case 'x':
            if (n - i < 4 || (hi = bw_hexval(src[i + 2])) < 0
                || (lo = bw_hexval(src[i + 3])) < 0)
                return -1;
            dst[len++] = (char)(hi * 16 + lo);
            i += 2;
            break;
        default:
            return -1;
        }
        i += 2;
    }
    *out_len = len;
    return 0;
}

/* One call of a transformation, as observed by the test. */
typedef struct {
    int ret;
    bw_str_t out;
    int allocated;
    int returned_input; /* out is exactly the buffer that was passed in */
} run_t;

/* Runs def on a malloc'd copy of in (exact size: ASan sees over-reads) in a
 * cleared pool and reports whether the pool was allocated from (r.out
 * stays valid until the next run on the same pool). APR hands out
 * pool memory by bumping a pointer, so after apr_pool_clear() the next
 * apr_palloc() returns the same address unless something was allocated in
 * between (test_alloc_probe checks that this really detects allocations). */
static run_t run_tfn(const bw_tfn_def_t *def, const bw_tfn_env_t *env,
                     apr_pool_t *pool, bw_str_t in)
{
    run_t r;
    char *copy = malloc(in.len ? in.len : 1);
    bw_str_t arg;
    void *mark, *after;

    ck_assert_ptr_nonnull(copy);
    if (in.len)
        memcpy(copy, in.data, in.len);
    arg = bw_str_n(copy, in.len);
    apr_pool_clear(pool);
    mark = apr_palloc(pool, 1);
    apr_pool_clear(pool);
    r.ret = def->fn(env, pool, arg, &r.out);
    after = apr_palloc(pool, 1);
    r.allocated = after != mark;
    r.returned_input = r.out.data == arg.data && r.out.len == arg.len;
    /* Copy the output out of the malloc'd input before freeing it. */
    if (r.out.len) {
        char *keep = apr_palloc(pool, r.out.len);
        memcpy(keep, r.out.data, r.out.len);
        r.out.data = keep;
    }
    free(copy);
    return r;
}

/* The contract every transformation shares, whatever the input. */
static void check_contract(const bw_tfn_def_t *def, bw_str_t in, run_t r,
                           const char *where, apr_pool_t *p)
{
    int changed = !bw_str_eq(in, r.out);
    ck_assert_msg(r.ret == changed, "%s: %s(%s) returned %d but output %s %s",
                  where, def->name, show(p, in), r.ret, show(p, r.out),
                  changed ? "differs" : "is unchanged");
    if (!changed) {
        ck_assert_msg(r.returned_input, "%s: %s(%s) unchanged but not the "
                      "input buffer", where, def->name, show(p, in));
        ck_assert_msg(!r.allocated, "%s: %s(%s) unchanged but allocated",
                      where, def->name, show(p, in));
    }
}

/* ------------------------------------------------------------------------ */
/* vectors                                                                  */

typedef struct {
    const char *path;
    unsigned lineno;
    const int *map; /* from @map, NULL for none */
} vec_ctx_t;

static const int *test_map(unsigned codepage)
{
    char *err = NULL;
    const char *path = apr_pstrcat(root_pool, data_dir(), "/unicode.mapping",
                                   NULL);
    const int *map = bw_tfn_unicode_map_load(root_pool, path, codepage, &err);
    ck_assert_msg(map != NULL, "loading %s: %s", path, err ? err : "?");
    return map;
}

/* Handle one "@..." directive line. */
static void directive(vec_ctx_t *ctx, const char *line)
{
    if (strcmp(line, "@map none") == 0)
        ctx->map = NULL;
    else if (strncmp(line, "@map ", 5) == 0)
        ctx->map = test_map((unsigned)strtoul(line + 5, NULL, 10));
    else
        ck_abort_msg("%s:%u: unknown directive %s", ctx->path, ctx->lineno,
                     line);
}

static void run_vector(const bw_tfn_def_t *def, vec_ctx_t *ctx, bw_str_t in,
                       bw_str_t want, apr_pool_t *pool)
{
    bw_tfn_env_t env;
    char where[4200];
    run_t r;

    env.unicode_map = ctx->map;
    snprintf(where, sizeof(where), "%s:%u", ctx->path, ctx->lineno);
    r = run_tfn(def, &env, pool, in);
    ck_assert_msg(bw_str_eq(r.out, want), "%s: %s(%s) = %s, want %s", where,
                  def->name, show(root_pool, in), show(root_pool, r.out),
                  show(root_pool, want));
    check_contract(def, in, r, where, root_pool);
}

/* Read "<name>.txt" and run every vector; returns how many ran. */
static int run_vector_file(const bw_tfn_def_t *def)
{
    static char line[MAX_LINE], inbuf[MAX_LINE], outbuf[MAX_LINE];
    vec_ctx_t ctx = { NULL, 0, NULL };
    size_t inlen = 0, outlen, n;
    int have_in = 0, count = 0;
    apr_pool_t *pool;
    FILE *f;

    ctx.path = apr_psprintf(root_pool, "%s/%s.txt", data_dir(), def->name);
    f = fopen(ctx.path, "rb");
    ck_assert_msg(f != NULL, "missing vector file %s", ctx.path);
    apr_pool_create(&pool, root_pool);
    while (fgets(line, sizeof(line), f) != NULL) {
        ctx.lineno++;
        n = strcspn(line, "\r\n");
        line[n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        if (line[0] == '@') {
            directive(&ctx, line);
            continue;
        }
        ck_assert_msg((line[0] == '<' || line[0] == '>')
                      && (n == 1 || line[1] == ' ')
                      && (line[0] == '<') == !have_in,
                      "%s:%u: expected a '%c ' line", ctx.path, ctx.lineno,
                      have_in ? '>' : '<');
        ck_assert_msg(unescape(line + 2, n > 1 ? n - 2 : 0,
                               line[0] == '<' ? inbuf : outbuf,
                               line[0] == '<' ? &inlen : &outlen) == 0,
                      "%s:%u: bad escape", ctx.path, ctx.lineno);
        have_in = line[0] == '<';
        if (!have_in) {
            run_vector(def, &ctx, bw_str_n(inbuf, inlen),
                       bw_str_n(outbuf, outlen), pool);
            count++;
        }
    }
    ck_assert_msg(!have_in, "%s: '<' line without its '>'", ctx.path);
    fclose(f);
    apr_pool_destroy(pool);
    return count;
}

/* The first registry entry with the same function: aliases such as
 * normalisePath share normalizePath's vectors. */
static const bw_tfn_def_t *canonical(const bw_tfn_def_t *def)
{
    size_t i;
    for (i = 0; bw_tfn_registry[i] != NULL; i++)
        if (bw_tfn_registry[i]->fn == def->fn)
            return bw_tfn_registry[i];
    return def;
}

START_TEST(test_vectors)
{
    const bw_tfn_def_t *def = bw_tfn_registry[_i];
    int count;

    if (canonical(def) != def)
        return; /* an alias: test_aliases checks it shares the function */
    count = run_vector_file(def);
    ck_assert_msg(count >= 5, "%s: only %d vectors", def->name, count);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* generated inputs                                                         */

/* Fragments that decoders, path and comment handling react to, plus plain
 * text and the byte classes of UTF-8. Inputs are random concatenations. */
static const char *const fragments[] = {
    "%", "%u", "%U", "ff", "FF", "0", "41", "3c", "e", "7", "8", "9", "+",
    "&", "&#", "&#x", "&#X", ";", "&lt", "&amp;", "&QUOT", "&nbsp;", "&apos",
    "\\", "\\u", "\\x", "\\n", "\\\n", "/*", "*/", "--", "#", "<!--", "-->",
    "0x", "0X", "..", ".", "/", "//", "a", "Z", "'", "\"", "^", ",", "(",
    "=", " ", "\t", "\r\n", "\f", "\v", "\xA0", "\x80", "\xBF", "\xC0",
    "\xC3", "\xA9", "\xE2\x82", "\xED\xA0", "\xF0\x9F\x98", "\xF4\x90",
    "\xFF",
};
#define N_FRAGMENTS (sizeof(fragments) / sizeof(fragments[0]))

static unsigned long lcg_next(unsigned long *state)
{
    *state = *state * 6364136223846793005UL + 1442695040888963407UL;
    return *state >> 33;
}

/* An input of up to 48 bytes; NUL bytes come from fragment 0 with "\0". */
static bw_str_t generate(unsigned long *state, char *buf)
{
    size_t target = lcg_next(state) % 49, len = 0;
    while (len < target) {
        unsigned long pick = lcg_next(state) % (N_FRAGMENTS + 1);
        const char *frag = pick == N_FRAGMENTS ? "" : fragments[pick];
        size_t n = pick == N_FRAGMENTS ? 1 : strlen(frag); /* "" = NUL */
        if (len + n > 48)
            break;
        memcpy(buf + len, pick == N_FRAGMENTS ? "\0" : frag, n);
        len += n;
    }
    return bw_str_n(buf, len);
}

/* Normalizers for which applying twice must equal applying once. */
static int is_idempotent(const char *name)
{
    static const char *const names[] = {
        "lowercase", "uppercase", "removeNulls", "replaceNulls",
        "removeWhitespace", "compressWhitespace", "trim", "trimLeft",
        "trimRight", "parityEven7bit", "parityOdd7bit", "parityZero7bit",
        "normalizePath", "normalizePathWin", "cmdLine",
    };
    size_t i;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

START_TEST(test_generated)
{
    const bw_tfn_def_t *def = bw_tfn_registry[_i];
    const int *map = test_map(20127);
    unsigned long state = 0x5eed0000UL + (unsigned long)_i;
    char buf[64];
    apr_pool_t *pool;
    bw_tfn_env_t env;
    int k;

    apr_pool_create(&pool, root_pool);
    for (k = 0; k < 4000; k++) {
        bw_str_t in = generate(&state, buf), first;
        bw_byteset_t present;
        run_t r, again;
        env.unicode_map = (k & 1) ? map : NULL;
        r = run_tfn(def, &env, pool, in);
        check_contract(def, in, r, "generated", root_pool);
        bw_byteset_of(in, &present);
        ck_assert_msg(bw_tfn_may_change(def, &present) || r.ret == 0,
                      "%s(%s) changed it without a trigger byte", def->name,
                      show(root_pool, in));
        ck_assert_msg(bw_tfn_may_change_value(def, &present, in) || r.ret == 0,
                      "%s(%s) changed it although unchanged() said it would not",
                      def->name, show(root_pool, in));
        if (def->bytes && r.ret) {
            /* the output's bytes told from the input's: a superset of
             * what the output holds (lowercase: exactly it) */
            bw_byteset_t told, got;
            int w;
            def->bytes(&present, &told);
            bw_byteset_of(r.out, &got);
            for (w = 0; w < 4; w++)
                ck_assert_msg((got.w[w] & ~told.w[w]) == 0, "%s(%s) = %s holds bytes its "
                              "bytes() does not tell (word %d)", def->name,
                              show(root_pool, in), show(root_pool, r.out), w);
            if (strcmp(def->name, "lowercase") == 0)
                ck_assert_msg(memcmp(&got, &told, sizeof(got)) == 0, "lowercase(%s): "
                              "bytes() is not exact", show(root_pool, in));
        }
        first = bw_str_n(apr_pmemdup(root_pool, r.out.data, r.out.len),
                         r.out.len);
        again = run_tfn(def, &env, pool, in);
        ck_assert_msg(bw_str_eq(first, again.out), "%s not deterministic on "
                      "%s", def->name, show(root_pool, in));
        if (is_idempotent(def->name)) {
            again = run_tfn(def, &env, pool, first);
            ck_assert_msg(again.ret == 0, "%s(%s) = %s is not stable: %s",
                          def->name, show(root_pool, in),
                          show(root_pool, first), show(root_pool, again.out));
        }
    }
    apr_pool_destroy(pool);
}
END_TEST

/* decode(encode(x)) == x for the encoder/decoder pairs. */
START_TEST(test_round_trips)
{
    static const char *const pairs[][2] = {
        { "hexEncode", "hexDecode" }, { "base64Encode", "base64Decode" },
        { "base64Encode", "base64DecodeExt" }, { "urlEncode", "urlDecode" },
        { "urlEncode", "urlDecodeUni" },
    };
    unsigned long state = 0xabcdefUL;
    char buf[64];
    size_t p;
    int k;

    for (k = 0; k < 2000; k++) {
        bw_str_t in = generate(&state, buf), enc, dec;
        for (p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++) {
            bw_tfn_lookup(pairs[p][0])->fn(NULL, root_pool, in, &enc);
            bw_tfn_lookup(pairs[p][1])->fn(NULL, root_pool, enc, &dec);
            ck_assert_msg(bw_str_eq(in, dec), "%s then %s: %s -> %s -> %s",
                          pairs[p][0], pairs[p][1], show(root_pool, in),
                          show(root_pool, enc), show(root_pool, dec));
        }
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* trigger sets (bw_tfn_def_t.triggers, bw_byteset_of)                      */

/* Encodings to strip of a transformation's trigger bytes, with fragments[],
 * for inputs that look like them ("%u0041" -> "u0041" for urlDecodeUni). */
static const char *const lookalikes[] = {
    "%u0041", "%uFF1C", "%41", "\\x41", "\\u0041", "\\101", "\\3c ", "&#x41;",
    "&#65;", "&amp;", "0x4142", "0X4a", "/**/", "<!--x-->", "/../", "./",
    "\\..\\", "c:\\x", "\xC2\x80", "\xE2\x82\xAC", "\xF4\x8F\xBF\xBF", "\x00",
    "ABC", "xyz", "  ", "\r\n\t", "\xA0\xA0", "^\"'",
};
#define N_LOOKALIKES (sizeof(lookalikes) / sizeof(lookalikes[0]))

/* Fragment k of fragments[] then lookalikes[] ("" is the NUL byte), without
 * def's trigger bytes, at dst; returns its length. */
static size_t stripped_fragment(const bw_tfn_def_t *def, size_t k, char *dst)
{
    const char *f = k < N_FRAGMENTS ? fragments[k]
                                    : lookalikes[k - N_FRAGMENTS];
    size_t i, n = f[0] == '\0' ? 1 : strlen(f), len = 0;

    for (i = 0; i < n; i++)
        if (!bw_byteset_has(&def->triggers, (unsigned char)f[i]))
            dst[len++] = f[i];
    return len;
}

/* in holds no trigger byte of def: with a unicode map, without one and
 * with no env at all (as bulwark op passes), def must hand back in itself,
 * unchanged, allocating nothing. */
static void check_untouched(const bw_tfn_def_t *def, const int *map,
                            apr_pool_t *pool, bw_str_t in)
{
    static const char *const how[] = { "", " with a map", " (env NULL)" };
    bw_tfn_env_t env;
    run_t r;
    int pass;

    for (pass = 0; pass < 3; pass++) {
        env.unicode_map = pass == 1 ? map : NULL;
        r = run_tfn(def, pass == 2 ? NULL : &env, pool, in);
        ck_assert_msg(r.ret == 0 && r.returned_input && !r.allocated,
                      "%s(%s)%s: no trigger byte, yet it returned %d, %s "
                      "(add a byte to its trigger set)", def->name,
                      show(root_pool, in), how[pass], r.ret,
                      show(root_pool, r.out));
    }
}

/* (a) Inputs made only of non-trigger bytes never change: every stripped
 * fragment alone and followed by every other one, then random strings of
 * 0 to 64 non-trigger bytes and random runs of stripped fragments. */
START_TEST(test_triggers_contract)
{
    const bw_tfn_def_t *def = bw_tfn_registry[_i];
    const size_t nfrag = N_FRAGMENTS + N_LOOKALIKES;
    const int *map = test_map(20127);
    const bw_byteset_t none = { { 0, 0, 0, 0 } };
    unsigned long state = 0x7a1e0000UL + (unsigned long)_i;
    unsigned char allowed[256];
    size_t a, b, len, target, nallowed = 0;
    char buf[160];
    apr_pool_t *pool;
    int c, k, tries;

    ck_assert_msg((memcmp(&def->triggers, &none, sizeof(none)) == 0)
                  == def->always,
                  "%s: a trigger set must be empty if and only if always is "
                  "set", def->name);
    ck_assert(bw_tfn_may_change(def, &none) == def->always);
    for (c = 0; c < 256; c++)
        if (!bw_byteset_has(&def->triggers, (unsigned char)c))
            allowed[nallowed++] = (unsigned char)c;
    apr_pool_create(&pool, root_pool);
    for (a = 0; a < nfrag && !def->always; a++)
        for (b = 0; b <= nfrag; b++) {
            len = stripped_fragment(def, a, buf);
            if (b < nfrag)
                len += stripped_fragment(def, b, buf + len);
            check_untouched(def, map, pool, bw_str_n(buf, len));
        }
    for (k = 0; k < 4000 && !def->always; k++) {
        target = lcg_next(&state) % 65;
        for (len = 0, tries = 0; len < target && tries < 100; tries++)
            if (k & 1)
                buf[len++] = (char)allowed[lcg_next(&state) % nallowed];
            else
                len += stripped_fragment(def, lcg_next(&state) % nfrag,
                                         buf + len);
        check_untouched(def, map, pool, bw_str_n(buf, len));
    }
    apr_pool_destroy(pool);
}
END_TEST

/* Trigger bytes kept on purpose although no input whose only trigger byte
 * they are changes (a conservative superset), each with the reason. None
 * today; a listed byte found to be needed fails the test, so the list
 * cannot go stale. */
static const struct { const char *name; int byte; } superset_ok[] = {
    { NULL, -1 },
};

/* Inputs one trigger byte may change on its own; 0x01 marks where it goes
 * ("/\x01" is "/" "*" for removeComments, "0\x01" "41" is "0x41"). */
static const char *const witness_shapes[] = {
    "\x01", "\x01\x01", "\x01z", "\x01" "amp;", "/\x01", "0\x01" "41",
    "\x01" "41", "\x01\x80", "\x01\x80\x80", "\x01\xA0\x80",
    "\x01\x90\x80\x80", "\x01\x80\x80\x80",
};
#define N_SHAPES (sizeof(witness_shapes) / sizeof(witness_shapes[0]))

/* 1 when some shape, filled with c, has no other trigger byte of def and
 * def changes it (with or without a map). */
static int find_witness(const bw_tfn_def_t *def, const int *map,
                        apr_pool_t *pool, unsigned char c)
{
    bw_tfn_env_t env;
    size_t s, i, n;
    char buf[16];
    int other, pass;

    for (s = 0; s < N_SHAPES; s++) {
        n = strlen(witness_shapes[s]);
        for (i = 0, other = 0; i < n; i++) {
            buf[i] = witness_shapes[s][i] == '\x01' ? (char)c
                                                    : witness_shapes[s][i];
            other |= (unsigned char)buf[i] != c
                     && bw_byteset_has(&def->triggers, (unsigned char)buf[i]);
        }
        for (pass = 0; pass < 2 && !other; pass++) {
            env.unicode_map = pass ? map : NULL;
            if (run_tfn(def, &env, pool, bw_str_n(buf, n)).ret)
                return 1;
        }
    }
    return 0;
}

/* (b) No trigger byte is there for nothing: for each one, an input whose
 * only trigger byte it is changes, so without it the set would break its
 * contract. */
START_TEST(test_triggers_needed)
{
    const bw_tfn_def_t *def = bw_tfn_registry[_i];
    const int *map = test_map(20127);
    apr_pool_t *pool;
    int c, found, listed;
    size_t i;

    apr_pool_create(&pool, root_pool);
    for (c = 0; c < 256; c++) {
        if (!bw_byteset_has(&def->triggers, (unsigned char)c))
            continue;
        found = find_witness(def, map, pool, (unsigned char)c);
        for (i = 0, listed = 0; superset_ok[i].name != NULL; i++)
            listed |= superset_ok[i].byte == c
                      && strcmp(superset_ok[i].name, def->name) == 0;
        ck_assert_msg(found != listed, found ? "%s: 0x%02x is needed, yet "
                      "listed in superset_ok" : "%s: no input whose only "
                      "trigger byte is 0x%02x changes: drop it from the set, "
                      "or list it in superset_ok with the reason", def->name,
                      c);
    }
    apr_pool_destroy(pool);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* byte sets                                                                */

/* BW_BYTESET and its terms: a range across every word boundary, the first
 * and last byte, a char constant above 0x7F. */
#define MACRO_TEST_SET(k)                                                    \
    (BW_BS_RANGE(k, 0x3E, 0xC1) | BW_BS_BYTE(k, 0) | BW_BS_BYTE(k, '\xFF')   \
     | BW_BS_BYTE(k, '\xE0'))
static const bw_byteset_t macro_test_set = BW_BYTESET(MACRO_TEST_SET);

/* bw_byteset_of against a byte-by-byte loop, with lengths across its
 * switches between loops (0 to 299 bytes) and alphabets of 1 to 256 bytes;
 * and the compile-time set above. */
START_TEST(test_byteset)
{
    static const unsigned spans[] = { 1, 3, 26, 64, 128, 256 };
    unsigned long state = 0xb17e5e7UL;
    bw_byteset_t got, want;
    unsigned char buf[300];
    unsigned base, span;
    size_t len, i;
    int k, c;

    for (k = 0; k < 20000; k++) {
        len = lcg_next(&state) % sizeof(buf);
        span = spans[lcg_next(&state) % 6];
        base = (unsigned)lcg_next(&state) % 256;
        memset(&want, 0, sizeof(want));
        for (i = 0; i < len; i++) {
            buf[i] = (unsigned char)(base + lcg_next(&state) % span);
            want.w[buf[i] / 64] |= (uint64_t)1 << (buf[i] % 64);
        }
        memset(&got, 0xA5, sizeof(got));
        bw_byteset_of(bw_str_n((const char *)buf, len), &got);
        ck_assert_msg(memcmp(&got, &want, sizeof(got)) == 0, "set of %s",
                      show(root_pool, bw_str_n((const char *)buf, len)));
    }
    for (c = 0; c < 256; c++)
        ck_assert_msg(bw_byteset_has(&macro_test_set, (unsigned char)c)
                      == ((c >= 0x3E && c <= 0xC1) || c == 0 || c == 0xFF
                          || c == 0xE0), "BW_BYTESET: byte 0x%02x", c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* large inputs                                                             */

/* times copies of the n bytes at unit, NUL-terminated. */
static bw_str_t repeat_n(const char *unit, size_t n, size_t times)
{
    char *buf = apr_palloc(root_pool, n * times + 1);
    size_t i;
    for (i = 0; i < times; i++)
        memcpy(buf + i * n, unit, n);
    buf[n * times] = '\0';
    return bw_str_n(buf, n * times);
}

static bw_str_t repeat(const char *unit, size_t times)
{
    return repeat_n(unit, strlen(unit), times);
}

static bw_str_t apply(const char *name, bw_str_t in, int *ret)
{
    bw_str_t out;
    *ret = bw_tfn_lookup(name)->fn(NULL, root_pool, in, &out);
    return out;
}

START_TEST(test_large_inputs)
{
    bw_str_t in, out;
    int ret;

    out = apply("urlDecode", repeat("%41", 300000), &ret);
    ck_assert(ret == 1 && bw_str_eq(out, repeat("A", 300000)));

    in = bw_str_make(apr_pstrcat(root_pool, "/", repeat("seg/", 50000).data,
                                 repeat("../", 50001).data, "x", NULL));
    out = apply("normalizePath", in, &ret);
    ck_assert(ret == 1 && bw_str_eq(out, bw_str_make("/x")));

    out = apply("length", repeat_n("\0", 1, 1000000), &ret);
    ck_assert(ret == 1 && bw_str_eq(out, bw_str_make("1000000")));

    in = repeat("already lower case ", 50000);
    out = apply("lowercase", in, &ret);
    ck_assert(ret == 0 && out.data == in.data && out.len == in.len);

    out = apply("utf8toUnicode", repeat("\xC3\xA9", 100000), &ret);
    ck_assert(ret == 1 && bw_str_eq(out, repeat("%u00e9", 100000)));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* registry                                                                 */

/* Every transformation name of the ModSecurity 2.9 reference manual. */
static const char *const modsec_names[] = {
    "base64Decode", "base64DecodeExt", "base64Encode", "cmdLine",
    "compressWhitespace", "cssDecode", "escapeSeqDecode", "hexDecode",
    "hexEncode", "htmlEntityDecode", "jsDecode", "length", "lowercase", "md5",
    "normalisePath", "normalizePath", "normalisePathWin", "normalizePathWin",
    "parityEven7bit", "parityOdd7bit", "parityZero7bit", "removeComments",
    "removeCommentsChar", "removeNulls", "removeWhitespace", "replaceComments",
    "replaceNulls", "sha1", "sqlHexDecode", "trim", "trimLeft", "trimRight",
    "uppercase", "urlDecode", "urlDecodeUni", "urlEncode", "utf8toUnicode",
};
#define N_MODSEC (sizeof(modsec_names) / sizeof(modsec_names[0]))

START_TEST(test_registry)
{
    size_t i, j, count = 0;

    for (i = 0; bw_tfn_registry[i] != NULL; i++) {
        count++;
        ck_assert_ptr_nonnull(bw_tfn_registry[i]->fn);
        for (j = 0; j < i; j++)
            ck_assert_msg(!bw_str_eq_ci(bw_str_make(bw_tfn_registry[i]->name),
                                        bw_str_make(bw_tfn_registry[j]->name)),
                          "%s registered twice", bw_tfn_registry[i]->name);
    }
    ck_assert_uint_eq(count, N_MODSEC);
    for (i = 0; i < N_MODSEC; i++) {
        const bw_tfn_def_t *def = bw_tfn_lookup(modsec_names[i]);
        bw_str_t lower = bw_str_lower(root_pool, bw_str_make(modsec_names[i]));
        char *upper = apr_pstrdup(root_pool, modsec_names[i]);
        for (j = 0; upper[j]; j++)
            if (upper[j] >= 'a' && upper[j] <= 'z')
                upper[j] = (char)(upper[j] - 32);
        ck_assert_msg(def != NULL, "%s not found", modsec_names[i]);
        ck_assert_str_eq(def->name, modsec_names[i]);
        ck_assert_ptr_eq(bw_tfn_lookup(lower.data), def);
        ck_assert_ptr_eq(bw_tfn_lookup(upper), def);
    }
    ck_assert_ptr_null(bw_tfn_lookup("none"));
    ck_assert_ptr_null(bw_tfn_lookup(""));
    ck_assert_ptr_null(bw_tfn_lookup(NULL));
    ck_assert_ptr_null(bw_tfn_lookup("urlDecodeUnix"));
    ck_assert_ptr_null(bw_tfn_lookup("urlDecod"));
    ck_assert_ptr_null(bw_tfn_lookup("lowercase "));
}
END_TEST

START_TEST(test_aliases)
{
    ck_assert_ptr_eq(bw_tfn_lookup("normalisePath")->fn,
                     bw_tfn_lookup("normalizePath")->fn);
    ck_assert_ptr_eq(bw_tfn_lookup("normalisePathWin")->fn,
                     bw_tfn_lookup("normalizePathWin")->fn);
    ck_assert_ptr_ne(bw_tfn_lookup("normalizePath")->fn,
                     bw_tfn_lookup("normalizePathWin")->fn);
}
END_TEST

/* The allocation check used everywhere must be able to fail. */
START_TEST(test_alloc_probe)
{
    apr_pool_t *pool;
    void *mark;

    apr_pool_create(&pool, root_pool);
    mark = apr_palloc(pool, 1);
    apr_pool_clear(pool);
    ck_assert_ptr_eq(apr_palloc(pool, 1), mark);
    apr_pool_clear(pool);
    (void)apr_palloc(pool, 1);
    ck_assert_ptr_ne(apr_palloc(pool, 1), mark);
    apr_pool_destroy(pool);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* unicode map                                                              */

static const int *load_map(const char *file, unsigned cp, char **err)
{
    const char *path = file[0] == '/' ? file
                       : apr_pstrcat(root_pool, data_dir(), "/", file, NULL);
    *err = NULL;
    return bw_tfn_unicode_map_load(root_pool, path, cp, err);
}

START_TEST(test_unicode_map)
{
    char *err;
    const int *map = load_map("unicode.mapping", 20127, &err);

    ck_assert_msg(map != NULL, "%s", err ? err : "?");
    ck_assert_int_eq(map[0xFF21], 'Z'); /* the map beats the full-width rule */
    ck_assert_int_eq(map[0x1234], 0x7E);
    ck_assert_int_eq(map[0x00A0], ' ');
    ck_assert_int_eq(map[0x0100], 'A'); /* from the block's second line */
    ck_assert_int_eq(map[0x0141], -1);  /* only in code page 1250 */
    ck_assert_int_eq(map[0x0041], -1);
    ck_assert_int_eq(map[0xFFFF], -1);
    ck_assert_int_eq(map[0x3002], '.'); /* RFC 3490 full stops */
    ck_assert_int_eq(map[0xFF0E], '.');
    ck_assert_int_eq(map[0xFF61], '.');

    map = load_map("unicode.mapping", 1250, &err);
    ck_assert_msg(map != NULL, "%s", err ? err : "?");
    ck_assert_int_eq(map[0x0141], 'L');
    ck_assert_int_eq(map[0xFF21], -1);

    ck_assert_ptr_null(load_map("unicode.mapping", 99999, &err));
    ck_assert_msg(err && strstr(err, "code page 99999 not found"), "%s", err);
    ck_assert_ptr_null(load_map("no-such.mapping", 20127, &err));
    ck_assert_msg(err && strstr(err, "cannot open unicode map"), "%s", err);
    ck_assert_ptr_null(load_map("unicode-bad.mapping", 20127, &err));
    ck_assert_msg(err && strstr(err, ":4: bad unicode mapping \"zz:41\""),
                  "%s", err);
}
END_TEST

/* rules/unicode.mapping, the map Bulwark ships and its recommended
 * configuration names (made by tools/unicode/gen-unicode-map.py). */
START_TEST(test_unicode_map_shipped)
{
    char *err;
    const int *map = load_map("../../../../rules/unicode.mapping", 20127, &err);
    int cp, mapped = 0;

    ck_assert_msg(map != NULL, "%s", err ? err : "?");
    for (cp = 0; cp < 0x10000; cp++) {
        if (map[cp] < 0)
            continue;
        mapped++;
        ck_assert_msg(map[cp] >= 0x20 && map[cp] <= 0x7E,
                      "U+%04X maps to 0x%02X, not printable ASCII", cp, map[cp]);
        ck_assert_msg(cp >= 0x80 || cp == '.', "U+%04X is ASCII and mapped", cp);
    }
    /* Full-width ASCII, accented letters, spaces; spacing accents and
     * fractions have no one ASCII character. */
    for (cp = 0xFF01; cp <= 0xFF5E; cp++)
        ck_assert_int_eq(map[cp], cp - 0xFF01 + 0x21);
    ck_assert_int_eq(map[0x00C0], 'A');
    ck_assert_int_eq(map[0x00E9], 'e');
    ck_assert_int_eq(map[0x2002], ' ');
    ck_assert_int_eq(map[0x00A0], ' ');
    ck_assert_int_eq(map[0x00A8], -1);
    ck_assert_int_eq(map[0x00BD], -1);
    ck_assert_int_eq(map[0x4E00], -1);
    ck_assert_int_gt(mapped, 500);
    ck_assert_ptr_null(load_map("../../../../rules/unicode.mapping", 1252, &err));
}
END_TEST

/* The file Debian's libapache2-mod-security2 installs, when present. */
START_TEST(test_unicode_map_debian)
{
    static const char path[] = "/etc/modsecurity/unicode.mapping";
    static const unsigned pages[] = { 20127, 1252, 28591, 437, 37, 950 };
    char *err;
    size_t i;

    if (access(path, R_OK) != 0) {
        printf("test_unicode_map_debian: %s not installed, not tested\n",
               path);
        return;
    }
    for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
        ck_assert_msg(load_map(path, pages[i], &err) != NULL, "%s", err);
    ck_assert_int_eq(load_map(path, 20127, &err)[0xFF21], 'A');
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *tfn_suite(void)
{
    Suite *s = suite_create("transformations");
    TCase *tc = tcase_create("core");
    int n = 0;

    while (bw_tfn_registry[n] != NULL)
        n++;
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_alloc_probe);
    tcase_add_test(tc, test_registry);
    tcase_add_test(tc, test_aliases);
    tcase_add_loop_test(tc, test_vectors, 0, n);
    tcase_add_loop_test(tc, test_generated, 0, n);
    tcase_add_test(tc, test_round_trips);
    tcase_add_test(tc, test_byteset);
    tcase_add_loop_test(tc, test_triggers_contract, 0, n);
    tcase_add_loop_test(tc, test_triggers_needed, 0, n);
    tcase_add_test(tc, test_large_inputs);
    tcase_add_test(tc, test_unicode_map);
    tcase_add_test(tc, test_unicode_map_shipped);
    tcase_add_test(tc, test_unicode_map_debian);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    apr_initialize();
    apr_pool_create(&root_pool, NULL);
    sr = srunner_create(tfn_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_pool_destroy(root_pool);
    apr_terminate();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
