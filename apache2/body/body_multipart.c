/*
 * MULTIPART body processor (multipart/form-data, RFC 2046 and RFC 7578),
 * streaming: input may arrive in chunks of any size, a boundary split
 * across chunks included. Every byte is looked at a bounded number of times
 * and what is held between chunks is bounded (one boundary-sized window at
 * the start of each line, one header line of at most 8 KB), so time is
 * linear and memory is what the body itself puts in fields.
 *
 * Semantics follow ModSecurity 2.9, checked against mod_security2 2.9.7:
 *   - any byte before the first boundary line sets data_before, any byte
 *     after the final one sets data_after (a lone CRLF included);
 *   - a boundary line is "--" boundary, then "--" for the final one, then
 *     CRLF or LF; anything else on that line (transport padding too) is an
 *     error, as are "-- boundary" (whitespace) and "--\"boundary" (quotes);
 *   - lf_line: a part header line, a boundary line or the line end before
 *     a boundary ends in LF alone; crlf_lf_lines: both kinds were seen.
 *     Line ends inside part data are data and are never judged;
 *   - unmatched_boundary: a data line starts with "--", is longer than
 *     "--\n" and is not our boundary (ModSecurity counts "--\r\n" too);
 *   - header folding sets header_folding; folding with whitespace other
 *     than SP/HT also sets invalid_header_folding; folding before any
 *     header is an error; so are a header without ':' or without a name,
 *     a duplicate header, a part without Content-Disposition or without
 *     name; a boundary where part headers were expected, or right after
 *     them with no line end before it, is an error that also sets
 *     invalid_part;
 *   - file_limit_exceeded: more file parts than SecUploadFileLimit would
 *     have to be stored; as in ModSecurity it only applies when files are
 *     stored (upload_dir set). Files past the limit are still reported,
 *     with size and no tmp_name;
 *   - an empty body is no error; a body without any boundary or without
 *     the final boundary is.
 * Bulwark's own hard limits: at most BW_MP_MAX_PARTS parts, part header
 * lines (after folding) of at most BW_MP_HEADER_MAX bytes.
 */
#include <string.h>
#include <apr_file_io.h>
#include "body_internal.h"

#define BW_MP_MAX_PARTS 1000
#define BW_MP_HEADER_MAX 8192
#define WS_MAX 64                     /* whitespace looked through in "--  boundary" */
#define HEAD_MAX (3 + WS_MAX + BW_BODY_MP_BOUNDARY_MAX)
#define TRAILER_MAX 3                 /* "--\r" is the longest valid rest of a boundary line */
#define MSG_MAX 200

typedef enum { R_PREAMBLE, R_HEADERS, R_DATA, R_EPILOGUE } region_t;
typedef enum { L_START, L_BODY, L_TRAILER } lstate_t;
typedef enum { M_PLAIN, M_WS, M_QUOTE } mmode_t;

typedef struct {
    bw_body_parser_t *bp;
    bw_body_result_t *res;
    apr_pool_t *pool;
    bw_str_t boundary;
    char *delim;                  /* "--" boundary */
    size_t dlen;
    region_t region;
    lstate_t ls;
    mmode_t mode;
    char head[HEAD_MAX];          /* start of the line while it may be a boundary */
    size_t hl, bidx;
    char trailer[TRAILER_MAX];
    size_t tl;
    int held_eol;                 /* 0, 1 = LF, 2 = CRLF: line end that may belong to a delimiter */
    int pending_cr;               /* a CR ended the last chunk inside a data line */
    int pre;                      /* something was seen in the preamble */
    int saw_crlf, saw_boundary, complete;
    apr_off_t total;
    int nparts, nstored;
    /* the part being read */
    bw_body_buf_t line;           /* header line being collected */
    bw_body_buf_t curv;           /* value of the header being built (folding appends) */
    bw_str_t curn;
    int have_cur;
    apr_array_header_t *hdrs;     /* bw_kv_t */
    apr_hash_t *seen;             /* lower-cased header names */
    int is_file;
    bw_str_t name, filename, ctype;
    bw_body_buf_t value;
    apr_off_t size;
    apr_file_t *file;
    char *tmp_name;               /* ours until handed to the sink */
} mp_t;

static int fail(mp_t *m, const char *msg)
{
    return bw_body_fail(m->res, m->pool, "Multipart: %s", msg);
}

static int is_fold_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

/* ---- uploads ---------------------------------------------------------- */

static apr_fileperms_t unix_mode_to_perms(int mode)
{
    static const struct { int bit; apr_fileperms_t perm; } map[] = {
        { 0400, APR_FPROT_UREAD }, { 0200, APR_FPROT_UWRITE }, { 0100, APR_FPROT_UEXECUTE },
        { 0040, APR_FPROT_GREAD }, { 0020, APR_FPROT_GWRITE }, { 0010, APR_FPROT_GEXECUTE },
        { 0004, APR_FPROT_WREAD }, { 0002, APR_FPROT_WWRITE }, { 0001, APR_FPROT_WEXECUTE },
    };
    apr_fileperms_t p = 0;
    size_t i;
    for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (mode & map[i].bit)
            p |= map[i].perm;
    return p;
}

static int io_fail(mp_t *m, const char *what, apr_status_t rv)
{
    char buf[120];
    return bw_body_fail(m->res, m->pool, "Multipart: %s %s: %s", what,
                        m->tmp_name ? m->tmp_name : m->bp->limits->upload_dir,
                        apr_strerror(rv, buf, sizeof(buf)));
}

/* A file part that will be stored gets its temporary file now. */
static int open_upload(mp_t *m)
{
    const bw_body_limits_t *lim = m->bp->limits;
    apr_status_t rv;
    if (lim == NULL || lim->upload_dir == NULL)
        return 0;
    if (lim->upload_file_limit > 0 && m->nstored >= lim->upload_file_limit) {
        m->res->mp.file_limit_exceeded = 1;
        return 0;
    }
    m->tmp_name = apr_pstrcat(m->pool, lim->upload_dir, "/bulwark-upload-XXXXXX", NULL);
    rv = apr_file_mktemp(&m->file, m->tmp_name,
                         APR_FOPEN_CREATE | APR_FOPEN_READ | APR_FOPEN_WRITE | APR_FOPEN_EXCL
                             | APR_FOPEN_BINARY | APR_FOPEN_BUFFERED, m->pool);
    if (rv != APR_SUCCESS) {
        m->file = NULL;
        m->tmp_name = NULL;
        return io_fail(m, "cannot create an upload file in", rv);
    }
    m->nstored++;
    if (lim->upload_file_mode > 0) {
        rv = apr_file_perms_set(m->tmp_name, unix_mode_to_perms(lim->upload_file_mode));
        if (rv != APR_SUCCESS)
            return io_fail(m, "cannot set the mode of", rv);
    }
    return 0;
}

/* An upload that was never handed to the sink is incomplete: remove it. */
static void drop_upload(mp_t *m)
{
    if (m->file)
        apr_file_close(m->file);
    if (m->tmp_name)
        apr_file_remove(m->tmp_name, m->pool);
    m->file = NULL;
    m->tmp_name = NULL;
}

/* Pool cleanup: the file's own cleanup (registered later, so run earlier)
 * has closed the descriptor; only the name is left to remove. */
static apr_status_t mp_cleanup(void *data)
{
    mp_t *m = data;
    if (m->tmp_name)
        apr_file_remove(m->tmp_name, m->pool);
    m->tmp_name = NULL;
    return APR_SUCCESS;
}

/* ---- parts ------------------------------------------------------------ */

static int part_data(mp_t *m, const char *d, size_t n)
{
    apr_status_t rv;
    if (n == 0)
        return 0;
    if (m->region == R_PREAMBLE) {
        m->pre = 1;
        return 0;
    }
    if (!m->is_file) {
        bw_body_buf_append(m->pool, &m->value, d, n);
        return 0;
    }
    m->size += (apr_off_t)n;
    if (m->value.len < m->bp->limits->upload_text_limit) {
        /* the first bytes, for FILES_CONTENT if the part turns out text */
        size_t room = m->bp->limits->upload_text_limit - m->value.len;
        bw_body_buf_append(m->pool, &m->value, d, n < room ? n : room);
    }
    if (m->file && (rv = apr_file_write_full(m->file, d, n, NULL)) != APR_SUCCESS)
        return io_fail(m, "cannot write", rv);
    return 0;
}

static int end_part(mp_t *m)
{
    const bw_body_sink_t *sink = m->bp->sink;
    bw_body_file_t f;
    apr_status_t rv;
    if (!m->is_file)
        return bw_body_emit_arg(m->bp, "Multipart", m->name, bw_body_buf_take(m->pool, &m->value));
    if (m->file) {
        rv = apr_file_close(m->file);
        m->file = NULL;
        if (rv != APR_SUCCESS)
            return io_fail(m, "cannot write", rv);
    }
    f.field_name = m->name;
    f.file_name = m->filename;
    f.content_type = m->ctype;
    f.size = m->size;
    f.tmp_name = m->tmp_name;
    f.content = bw_str_n(NULL, 0);
    if (m->value.len) {
        bw_str_t head = bw_str_n(m->value.data, m->value.len);
        if (bw_body_text_like(m->ctype, head))
            f.content = bw_body_buf_take(m->pool, &m->value);
    }
    m->tmp_name = NULL; /* the sink owns it now (SecUploadKeepFiles) */
    if (sink && sink->add_file && sink->add_file(sink->ctx, &f) < 0)
        return fail(m, "file part refused (limit reached)");
    return 0;
}

static int start_part(mp_t *m)
{
    if (++m->nparts > BW_MP_MAX_PARTS)
        return bw_body_fail(m->res, m->pool, "Multipart: too many parts (limit %d)",
                            BW_MP_MAX_PARTS);
    apr_array_clear(m->hdrs);
    apr_hash_clear(m->seen);
    m->have_cur = 0;
    m->line.len = 0;
    m->is_file = 0;
    m->value.len = 0;
    m->size = 0;
    m->ctype = bw_str_n("", 0);
    m->filename = bw_str_n("", 0);
    m->region = R_HEADERS;
    return 0;
}

/* ---- part headers ----------------------------------------------------- */

static int commit_header(mp_t *m)
{
    bw_kv_t *kv;
    bw_str_t lower;
    if (!m->have_cur)
        return 0;
    m->have_cur = 0;
    lower = bw_str_lower(m->pool, m->curn);
    if (apr_hash_get(m->seen, lower.data, (apr_ssize_t)lower.len))
        return bw_body_fail(m->res, m->pool, "Multipart: Duplicate part header: %s",
                            bw_body_escape(m->pool, m->curn, MSG_MAX));
    apr_hash_set(m->seen, lower.data, (apr_ssize_t)lower.len, "");
    kv = apr_array_push(m->hdrs);
    kv->name = m->curn;
    kv->value = bw_body_buf_take(m->pool, &m->curv);
    return 0;
}

static const bw_kv_t *find_header(mp_t *m, const char *name)
{
    int i;
    for (i = 0; i < m->hdrs->nelts; i++) {
        const bw_kv_t *kv = &APR_ARRAY_IDX(m->hdrs, i, bw_kv_t);
        if (bw_str_eq_cstr_ci(kv->name, name))
            return kv;
    }
    return NULL;
}

static int report_headers(mp_t *m)
{
    const bw_body_sink_t *sink = m->bp->sink;
    int i;
    if (sink == NULL || sink->add_part_header == NULL)
        return 0;
    for (i = 0; i < m->hdrs->nelts; i++) {
        const bw_kv_t *kv = &APR_ARRAY_IDX(m->hdrs, i, bw_kv_t);
        size_t len = kv->name.len + 2 + kv->value.len;
        char *line = apr_palloc(m->pool, len + 1);
        memcpy(line, kv->name.data, kv->name.len);
        memcpy(line + kv->name.len, ": ", 2);
        memcpy(line + kv->name.len + 2, kv->value.data, kv->value.len);
        line[len] = '\0';
        if (sink->add_part_header(sink->ctx, m->name, bw_str_n(line, len)) < 0)
            return fail(m, "part header refused (limit reached)");
    }
    return 0;
}

/* The blank line after the part headers: decide what the part is. */
static int end_headers(mp_t *m)
{
    const bw_kv_t *cd, *ct;
    bw_body_mp_disp_t d;
    if (commit_header(m) < 0)
        return -1;
    if ((cd = find_header(m, "Content-Disposition")) == NULL)
        return fail(m, "Part missing Content-Disposition header.");
    if (bw_body_mp_disposition(m->pool, cd->value, &d, m->res) < 0)
        return -1;
    if (!d.has_name)
        return fail(m, "Content-Disposition header missing name field.");
    m->name = d.name;
    m->is_file = d.has_filename;
    if (m->is_file)
        m->filename = d.filename;
    if ((ct = find_header(m, "Content-Type")) != NULL)
        m->ctype = ct->value;
    if (report_headers(m) < 0 || (m->is_file && open_upload(m) < 0))
        return -1;
    m->region = R_DATA;
    m->ls = L_START;
    m->held_eol = 0;
    m->pending_cr = 0;
    return 0;
}

/* A continuation line: joined to the header being built with one space. */
static int fold_header(mp_t *m, const char *s, size_t len)
{
    size_t i = 0;
    m->res->mp.header_folding = 1;
    while (i < len && is_fold_ws(s[i])) {
        if (s[i] != ' ' && s[i] != '\t')
            m->res->mp.invalid_header_folding = 1;
        i++;
    }
    if (!m->have_cur)
        return fail(m, "Invalid part header (folding error).");
    if (m->curn.len + 2 + m->curv.len + 1 + (len - i) > BW_MP_HEADER_MAX)
        return bw_body_fail(m->res, m->pool, "Multipart: part header longer than %d bytes",
                            BW_MP_HEADER_MAX);
    bw_body_buf_append(m->pool, &m->curv, " ", 1);
    bw_body_buf_append(m->pool, &m->curv, s + i, len - i);
    return 0;
}

static int header_line(mp_t *m)
{
    const char *s = m->line.data, *colon;
    size_t len = m->line.len, i;
    if (len && s[len - 1] == '\r') {
        len--;
        m->saw_crlf = 1;
    } else {
        m->res->mp.lf_line = 1;
    }
    if (len == 0)
        return end_headers(m);
    if (len >= m->dlen && memcmp(s, m->delim, m->dlen) == 0) {
        m->res->mp.invalid_part = 1;
        return fail(m, "Invalid part (boundary where part headers were expected).");
    }
    if (is_fold_ws(s[0]))
        return fold_header(m, s, len);
    if ((colon = memchr(s, ':', len)) == NULL)
        return bw_body_fail(m->res, m->pool, "Multipart: Invalid part header (colon missing): %s",
                            bw_body_escape(m->pool, bw_str_n(s, len), MSG_MAX));
    if (colon == s)
        return fail(m, "Invalid part header (header name missing).");
    if (commit_header(m) < 0)
        return -1;
    m->curn = bw_str_n(bw_str_pdup(m->pool, bw_str_n(s, (size_t)(colon - s))), (size_t)(colon - s));
    i = (size_t)(colon - s) + 1;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    m->curv.len = 0;
    bw_body_buf_append(m->pool, &m->curv, s + i, len - i);
    m->have_cur = 1;
    return 0;
}

/* Collects one header line; returns bytes used or -1. */
static long header_bytes(mp_t *m, const char *p, size_t n)
{
    const char *nl = memchr(p, '\n', n);
    size_t take = nl ? (size_t)(nl - p) : n;
    if (m->line.len + take > BW_MP_HEADER_MAX + 1) /* + 1: the CR */
        return bw_body_fail(m->res, m->pool, "Multipart: part header line longer than %d bytes",
                            BW_MP_HEADER_MAX);
    bw_body_buf_append(m->pool, &m->line, p, take);
    if (nl == NULL)
        return (long)n;
    if (header_line(m) < 0)
        return -1;
    m->line.len = 0;
    return (long)take + 1;
}

/* ---- boundary scanning ------------------------------------------------ */

/* The line start held back turned out to be data: release it. */
static int flush_head(mp_t *m)
{
    static const char crlf[] = "\r\n";
    int rc = 0;
    if (m->held_eol)
        rc = part_data(m, m->held_eol == 2 ? crlf : crlf + 1, (size_t)m->held_eol);
    if (rc == 0)
        rc = part_data(m, m->head, m->hl);
    m->held_eol = 0;
    m->hl = 0;
    m->mode = M_PLAIN;
    return rc;
}

static int on_boundary(mp_t *m, int final)
{
    if (m->region == R_PREAMBLE && (m->pre || m->held_eol))
        m->res->mp.data_before = 1;
    if (m->region == R_DATA && end_part(m) < 0)
        return -1;
    m->held_eol = 0;
    m->pending_cr = 0;
    m->hl = 0;
    m->tl = 0;
    m->mode = M_PLAIN;
    m->ls = L_START;
    m->saw_boundary = 1;
    if (final) {
        m->complete = 1;
        m->region = R_EPILOGUE;
        return 0;
    }
    return start_part(m);
}

static int bad_boundary(mp_t *m, const char *more)
{
    char *d = apr_palloc(m->pool, m->dlen + m->tl);
    bw_str_t line = bw_str_n(d, m->dlen + m->tl);
    memcpy(d, m->delim, m->dlen);
    if (m->tl)
        memcpy(d + m->dlen, m->trailer, m->tl);
    return bw_body_fail(m->res, m->pool, "Multipart: Invalid boundary: %s%s",
                        bw_body_escape(m->pool, line, MSG_MAX), more);
}

/* The end of a line that began with "--" boundary: its '\n', or the end
 * of the body (at_eof, where only a final boundary may stand). */
static int boundary_line(mp_t *m, int at_eof)
{
    size_t tl = m->tl;
    int crlf = !at_eof && tl > 0 && m->trailer[tl - 1] == '\r', final;
    if (crlf)
        tl--;
    final = tl == 2 && m->trailer[0] == '-' && m->trailer[1] == '-';
    if (tl != 0 && !final)
        return bad_boundary(m, "");
    if (m->region == R_DATA && m->held_eol == 0) {
        /* RFC 2046 reads this as a part without body, PHP as a part that
         * never ends: ambiguous, so refused, as ModSecurity does. */
        m->res->mp.invalid_part = 1;
        return fail(m, "Invalid part (boundary right after the part headers).");
    }
    if (m->region == R_DATA && m->held_eol == 1)
        m->res->mp.lf_line = 1;
    else if (m->region == R_DATA)
        m->saw_crlf = 1;
    if (crlf)
        m->saw_crlf = 1;
    else if (!at_eof)
        m->res->mp.lf_line = 1;
    return on_boundary(m, final);
}

static long trailer_byte(mp_t *m, char c)
{
    if (c == '\n')
        return boundary_line(m, 0) < 0 ? -1 : 1;
    if (m->tl == TRAILER_MAX)
        return bad_boundary(m, "...");
    m->trailer[m->tl++] = c;
    return 1;
}

/* One byte at the start of a line; returns 1 (used), 0 (the line is data:
 * look at this byte again as data) or -1. */
static long line_start_byte(mp_t *m, char c)
{
    if (m->mode == M_PLAIN) {
        if (c == m->delim[m->hl]) {
            m->head[m->hl++] = c;
            if (m->hl == m->dlen) {
                m->ls = L_TRAILER;
                m->tl = 0;
            }
            return 1;
        }
        if (m->hl == 2 && (c == ' ' || c == '\t' || (c == '"' && m->res->mp.boundary_quoted))) {
            m->mode = c == '"' ? M_QUOTE : M_WS;
            m->bidx = 0;
            m->head[m->hl++] = c;
            return 1;
        }
    } else {
        if (m->mode == M_WS && m->bidx == 0 && (c == ' ' || c == '\t') && m->hl < 2 + WS_MAX) {
            m->head[m->hl++] = c;
            return 1;
        }
        if (c == m->boundary.data[m->bidx]) {
            m->head[m->hl++] = c;
            if (++m->bidx == m->boundary.len)
                return fail(m, m->mode == M_WS ? "Invalid boundary (whitespace)."
                                               : "Invalid boundary (quotes).");
            return 1;
        }
    }
    if (m->hl > 2 || (m->hl == 2 && c != '\n'))
        m->res->mp.unmatched_boundary = 1;
    if (flush_head(m) < 0)
        return -1;
    m->ls = L_BODY;
    return 0;
}

/* Data up to and including the next LF; the line end is held back. */
static long body_run(mp_t *m, const char *p, size_t n)
{
    const char *nl;
    size_t c;
    if (m->pending_cr) {
        m->pending_cr = 0;
        if (p[0] == '\n') {
            m->held_eol = 2;
            m->ls = L_START;
            return 1;
        }
        if (part_data(m, "\r", 1) < 0)
            return -1;
    }
    if ((nl = memchr(p, '\n', n)) != NULL) {
        c = (size_t)(nl - p);
        m->held_eol = 1;
        if (c > 0 && p[c - 1] == '\r') {
            c--;
            m->held_eol = 2;
        }
        m->ls = L_START;
        return part_data(m, p, c) < 0 ? -1 : (long)(nl - p) + 1;
    }
    c = n;
    if (p[n - 1] == '\r') {
        c--;
        m->pending_cr = 1;
    }
    return part_data(m, p, c) < 0 ? -1 : (long)n;
}

static long step(mp_t *m, const char *p, size_t n)
{
    switch (m->region) {
    case R_EPILOGUE:
        m->res->mp.data_after = 1;
        return (long)n;
    case R_HEADERS:
        return header_bytes(m, p, n);
    default:
        break;
    }
    switch (m->ls) {
    case L_START:
        return line_start_byte(m, p[0]);
    case L_TRAILER:
        return trailer_byte(m, p[0]);
    default:
        return body_run(m, p, n);
    }
}

/* ---- driver ----------------------------------------------------------- */

static void settle(mp_t *m)
{
    bw_multipart_flags_t *f = &m->res->mp;
    f->crlf_lf_lines = f->lf_line && m->saw_crlf;
    /* As ModSecurity's MULTIPART_STRICT_ERROR: every flag but
     * unmatched_boundary and crlf_lf_lines (lf_line covers it), plus a
     * processor error. */
    m->res->mp_strict_error = m->res->error || f->boundary_quoted || f->boundary_whitespace
                              || f->data_before || f->data_after || f->header_folding
                              || f->lf_line || f->missing_semicolon || f->invalid_quoting
                              || f->invalid_part || f->invalid_header_folding
                              || f->file_limit_exceeded;
}

static int mp_feed(bw_body_parser_t *bp, const char *data, size_t len)
{
    mp_t *m = bp->impl;
    size_t off = 0;
    m->total += (apr_off_t)len;
    while (off < len) {
        long used = step(m, data + off, len - off);
        if (used < 0)
            break;
        off += (size_t)used;
    }
    settle(m);
    return m->res->error ? -1 : 0;
}

static int mp_finish(bw_body_parser_t *bp)
{
    mp_t *m = bp->impl;
    /* A final boundary may end the body without a line end. */
    if (!m->res->error && m->ls == L_TRAILER && m->region != R_EPILOGUE && m->tl == 2
        && m->trailer[0] == '-' && m->trailer[1] == '-')
        boundary_line(m, 1);
    if (!m->res->error && m->total > 0) {
        if (!m->saw_boundary)
            fail(m, "No boundaries found in payload.");
        else if (!m->complete)
            fail(m, "Final boundary missing.");
    }
    drop_upload(m);
    settle(m);
    return m->res->error ? -1 : 0;
}

static const bw_body_ops_t mp_ops = { "MULTIPART", mp_feed, mp_finish };

bw_body_parser_t *bw_body_multipart_create(apr_pool_t *pool, const char *content_type,
                                           const bw_body_limits_t *limits,
                                           const bw_body_sink_t *sink, bw_body_result_t *res)
{
    mp_t *m = apr_pcalloc(pool, sizeof(*m));
    m->bp = bw_body_parser_new(pool, &mp_ops, limits, sink, res, m);
    m->res = res;
    m->pool = pool;
    m->hdrs = apr_array_make(pool, 8, sizeof(bw_kv_t));
    m->seen = apr_hash_make(pool);
    m->region = R_PREAMBLE;
    m->ls = L_START;
    apr_pool_cleanup_register(pool, m, mp_cleanup, apr_pool_cleanup_null);
    if (bw_body_mp_boundary(pool, content_type ? content_type : "", &m->boundary, res) == 0) {
        m->delim = apr_pstrcat(pool, "--", bw_str_pdup(pool, m->boundary), NULL);
        m->dlen = m->boundary.len + 2;
    }
    settle(m);
    return m->bp;
}
