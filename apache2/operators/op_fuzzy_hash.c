/*
 * @fuzzyHash — ssdeep similarity of the value to a list of known hashes.
 *
 * Description: The value's ssdeep (context-triggered piecewise) hash is
 *   computed with libfuzzy and compared with every hash of the list; the
 *   operator matches when one comparison scores at least the threshold.
 *   The list is read and checked once at start-up.
 * Arguments: "FILE THRESHOLD". FILE holds one hash a line, either as the
 *   ssdeep tool writes it (a header line "ssdeep,1.1--blocksize:hash:hash,
 *   filename", then "96:hash:hash,\"name\"") or bare ("96:hash:hash");
 *   empty lines and lines starting with '#' are skipped. A relative FILE
 *   is resolved against the directory of the rule file; a URL is refused.
 *   THRESHOLD is the lowest score (0-100) that matches. An unreadable
 *   file, a line that is not a hash, a file with no hash or a bad
 *   threshold is a configuration error naming the file and line.
 * Returns: 1 on a match (message names the hash, its file and the score),
 *   0 otherwise.
 * Example: SecRule REQUEST_BODY "@fuzzyHash known-webshells.ssdeep 80" "id:1,phase:2,deny"
 */
#include <stdint.h>
#include <string.h>
#include <fuzzy.h>
#include "op_internal.h"

typedef struct {
    const char *path;
    int threshold;
    int n;
    const char **hashes;   /* "blocksize:hash:hash", NUL-terminated */
} fuzzy_t;

static int is_b64(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
        || c == '+' || c == '/';
}

/* Length of the signature that starts line ("bs:h1:h2"), or 0 when the line
 * is not one; what may follow it is ",filename". */
static size_t signature_len(bw_str_t line)
{
    size_t i = 0, start;
    int part;
    while (i < line.len && i < 20 && line.data[i] >= '0' && line.data[i] <= '9')
        i++;
    if (i == 0 || i == 20 || i == line.len || line.data[i] != ':')
        return 0;
    for (part = 0; part < 2; part++) {
        if (i >= line.len || line.data[i] != ':')
            return 0;
        start = ++i;
        while (i < line.len && is_b64((unsigned char)line.data[i]))
            i++;
        if (i - start > SPAMSUM_LENGTH)
            return 0;
    }
    return i == line.len || line.data[i] == ',' ? i : 0;
}

/* Every hash of the file's content into f; -1 with *err on a bad line. */
static int read_hashes(apr_pool_t *p, fuzzy_t *f, bw_str_t content, char **err)
{
    apr_array_header_t *a = apr_array_make(p, 16, sizeof(const char *));
    bw_str_t line;
    int lineno = 0;
    while (bw_op_next_line(&content, &line)) {
        size_t len;
        lineno++;
        line = bw_str_trim(line);
        if (line.len == 0 || line.data[0] == '#')
            continue;
        if (lineno == 1 && line.len >= 6 && memcmp(line.data, "ssdeep", 6) == 0)
            continue;   /* the ssdeep tool's header */
        if ((len = signature_len(line)) == 0) {
            *err = apr_psprintf(p, "@fuzzyHash: not an ssdeep hash in \"%s\" line %d: \"%s\"",
                                f->path, lineno, bw_op_log_escape(p, line, 80));
            return -1;
        }
        *(const char **)apr_array_push(a) = apr_pstrmemdup(p, line.data, len);
    }
    if (a->nelts == 0) {
        *err = apr_psprintf(p, "@fuzzyHash: no ssdeep hash in \"%s\"", f->path);
        return -1;
    }
    f->n = a->nelts;
    f->hashes = (const char **)a->elts;
    return 0;
}

/* THRESHOLD: a whole number from 0 to 100. */
static int parse_threshold(bw_str_t t, int *out)
{
    size_t i;
    int v = 0;
    if (t.len == 0 || t.len > 3)
        return -1;
    for (i = 0; i < t.len; i++) {
        if (t.data[i] < '0' || t.data[i] > '9')
            return -1;
        v = v * 10 + (t.data[i] - '0');
    }
    *out = v;
    return v <= 100 ? 0 : -1;
}

static int fuzzy_compile(bw_op_t *op, const bw_op_cenv_t *env, char **err)
{
    fuzzy_t *f = apr_pcalloc(env->pool, sizeof(*f));
    bw_str_t rest = bw_str_n(op->param, op->param_len), file = bw_str_n("", 0), thr, extra;
    bw_str_t content;

    bw_op_next_token(&rest, " \t", &file);
    if (!bw_op_next_token(&rest, " \t", &thr) || bw_op_next_token(&rest, " \t", &extra)
        || parse_threshold(thr, &f->threshold) < 0) {
        *err = apr_psprintf(env->pool, "@fuzzyHash: the parameter must be \"FILE THRESHOLD\" "
                            "with THRESHOLD from 0 to 100 (got \"%s\")", op->param);
        return -1;
    }
    if (bw_op_data_file(env->pool, env, "fuzzyHash", "hash file", file, &f->path, err) < 0
        || bw_op_read_file(env->temp_pool ? env->temp_pool : env->pool, "fuzzyHash",
                           "hash file", f->path, &content, err) < 0
        || read_hashes(env->pool, f, content, err) < 0)
        return -1;
    op->data = f;
    return 0;
}

static int fuzzy_execute(const bw_op_t *op, bw_op_run_t *run, bw_str_t value)
{
    const fuzzy_t *f = op->data;
    char sig[FUZZY_MAX_RESULT];
    int i, score;

    if (value.len > UINT32_MAX) {
        run->error = "value too long for a fuzzy hash";
        return -1;
    }
    if (fuzzy_hash_buf((const unsigned char *)value.data, (uint32_t)value.len, sig) != 0) {
        run->error = "fuzzy hash of the value could not be computed";
        return -1;
    }
    for (i = 0; i < f->n; i++) {
        score = fuzzy_compare(sig, f->hashes[i]);
        if (score < f->threshold)
            continue;
        if (!run->no_msg)
            run->msg = apr_psprintf(run->pool, "Fuzzy hash of %s matched with %s (from: %s). "
                                    "Score: %d.", run->var_name, f->hashes[i], f->path, score);
        return 1;
    }
    return 0;
}

const bw_op_def_t bw_op_fuzzy_hash = {
    "fuzzyHash", BW_OP_PARAM_REQUIRED, fuzzy_compile, fuzzy_execute, NULL, NULL
};
