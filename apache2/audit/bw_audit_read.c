/*
 * Reading audit logs back (bulwark log, the unit tests): Native records
 * (mod_security2's --BOUNDARY-A-- … --BOUNDARY-Z--) and JSON records (one
 * object per line), from Bulwark or from mod_security2 itself.
 *
 * A Native record is complete only when its own boundary's Z line is
 * reached before any other record starts: a record that was cut, or into
 * which another was written, is reported as broken and reading goes on at
 * the next A line. Only what `bulwark log` shows is extracted: time,
 * unique id, client, request line, status, messages and rule ids.
 */
#include <string.h>
#include <ctype.h>
#include <yajl/yajl_tree.h>
#include "audit/bw_audit_int.h"

struct bw_audit_reader_s {
    bw_str_t text;
    size_t pos;
    int format;         /* -1 until the first record tells */
};

bw_audit_reader_t *bw_audit_reader_create(apr_pool_t *p, bw_str_t text, int format)
{
    bw_audit_reader_t *rd = apr_pcalloc(p, sizeof(*rd));
    rd->text = text;
    rd->format = format;
    return rd;
}

/* The line at *pos (without its newline); advances *pos past it. */
static int next_line(const bw_str_t *t, size_t *pos, bw_str_t *line)
{
    const char *s, *nl;
    if (*pos >= t->len)
        return 0;
    s = t->data + *pos;
    nl = memchr(s, '\n', t->len - *pos);
    line->data = s;
    line->len = nl ? (size_t)(nl - s) : t->len - *pos;
    *pos += line->len + (nl ? 1 : 0);
    if (line->len && line->data[line->len - 1] == '\r')
        line->len--;
    return 1;
}

/* "--BOUNDARY-X--": 1 with *boundary and *part set. */
static int section_line(bw_str_t l, bw_str_t *boundary, char *part)
{
    size_t i;
    if (l.len < 7 || l.data[0] != '-' || l.data[1] != '-' || l.data[l.len - 1] != '-'
        || l.data[l.len - 2] != '-' || l.data[l.len - 4] != '-')
        return 0;
    for (i = 2; i < l.len - 4; i++)
        if (!isalnum((unsigned char)l.data[i]))
            return 0;
    if (!isupper((unsigned char)l.data[l.len - 3]))
        return 0;
    *boundary = bw_str_n(l.data + 2, l.len - 6);
    *part = l.data[l.len - 3];
    return 1;
}

/* Offset of an "--BOUNDARY-A--" marker that ends line l after other text
 * (a record appended to one that was cut mid-line), or 0 when none. */
static size_t tail_a_marker(bw_str_t l)
{
    size_t e;
    bw_str_t b;
    char part;
    if (l.len < 8 || memcmp(l.data + l.len - 4, "-A--", 4))
        return 0;
    for (e = l.len - 4; e > 0 && isalnum((unsigned char)l.data[e - 1]); e--)
        ;
    if (e < 3 || e == l.len - 4 || l.data[e - 1] != '-' || l.data[e - 2] != '-')
        return 0;
    return section_line(bw_str_n(l.data + e - 2, l.len - e + 2), &b, &part) ? e - 2 : 0;
}

/* Is the line at pos the content of a part A ("[time] id …")? A marker of
 * another record is believed only when it is: request data inside a body
 * may hold a line that looks like a marker. */
static int a_content_at(const bw_str_t *t, size_t pos)
{
    bw_str_t l;
    const char *close;
    if (!next_line(t, &pos, &l) || l.len < 3 || l.data[0] != '[')
        return 0;
    close = memchr(l.data, ']', l.len);
    return close && bw_audit_parse_time(bw_str_n(l.data + 1, (size_t)(close - l.data - 1))) != 0;
}

static void add_id(apr_pool_t *p, bw_audit_entry_t *e, const char *s, size_t n)
{
    int i;
    for (i = 0; i < e->rule_ids->nelts; i++) {
        const char *have = ((const char **)e->rule_ids->elts)[i];
        if (strlen(have) == n && !memcmp(have, s, n))
            return;
    }
    *(const char **)apr_array_push(e->rule_ids) = apr_pstrmemdup(p, s, n);
}

/* Every [id "…"] of a message. */
static void ids_of_message(apr_pool_t *p, bw_audit_entry_t *e, bw_str_t m)
{
    const char *f = m.data, *end = m.data + m.len;
    while ((f = bw_memmem(f, (size_t)(end - f), "[id \"", 5)) != NULL) {
        const char *q;
        f += 5;
        q = memchr(f, '"', (size_t)(end - f));
        if (!q)
            return;
        add_id(p, e, f, (size_t)(q - f));
        f = q;
    }
}

static void split_request_line(apr_pool_t *p, bw_audit_entry_t *e)
{
    const char *l = e->request_line, *sp = strchr(l, ' '), *sp2;
    if (!sp)
        return;
    e->method = apr_pstrndup(p, l, (apr_size_t)(sp - l));
    sp2 = strrchr(sp + 1, ' ');
    e->uri = sp2 ? apr_pstrndup(p, sp + 1, (apr_size_t)(sp2 - sp - 1)) : apr_pstrdup(p, sp + 1);
}

static void entry_init(apr_pool_t *p, bw_audit_entry_t *e, int format)
{
    memset(e, 0, sizeof(*e));
    e->format = format;
    e->status = -1;
    e->rule_ids = apr_array_make(p, 4, sizeof(char *));
    e->messages = apr_array_make(p, 4, sizeof(char *));
}

/* ---- Native ----------------------------------------------------------------- */

static void native_a(apr_pool_t *p, bw_audit_entry_t *e, bw_str_t l)
{
    const char *close = memchr(l.data, ']', l.len);
    char *rest, *tok, *last;
    if (!close || l.data[0] != '[')
        return;
    e->time = bw_audit_parse_time(bw_str_n(l.data + 1, (size_t)(close - l.data - 1)));
    rest = apr_pstrmemdup(p, close + 1, l.len - (size_t)(close + 1 - l.data));
    if ((tok = apr_strtok(rest, " ", &last)) != NULL)
        e->unique_id = tok;
    if ((tok = apr_strtok(NULL, " ", &last)) != NULL)
        e->client = tok;
    if ((tok = apr_strtok(NULL, " ", &last)) != NULL)
        e->client_port = atoi(tok);
}

/* One line of a section: pick what the entry needs. first: the section's
 * first line. */
static void native_line(apr_pool_t *p, bw_audit_entry_t *e, char part, int first, bw_str_t l)
{
    if (part == 'A' && first) {
        native_a(p, e, l);
    } else if (part == 'B' && first) {
        e->request_line = apr_pstrmemdup(p, l.data, l.len);
        split_request_line(p, e);
    } else if (part == 'F' && first) {
        const char *sp = memchr(l.data, ' ', l.len);
        if (sp)
            e->status = atoi(apr_pstrmemdup(p, sp + 1, l.len - (size_t)(sp + 1 - l.data)));
    } else if (part == 'H' && l.len > 9 && !memcmp(l.data, "Message: ", 9)) {
        *(const char **)apr_array_push(e->messages) = apr_pstrmemdup(p, l.data + 9, l.len - 9);
        ids_of_message(p, e, l);
    } else if (part == 'K') {
        const char *f = bw_memmem(l.data, l.len, "\"id:", 4);
        if (!f)
            f = bw_memmem(l.data, l.len, ",id:", 4);
        if (f) {
            size_t s = (size_t)(f + 4 - l.data), n = s;
            while (n < l.len && isdigit((unsigned char)l.data[n]))
                n++;
            if (n > s)
                add_id(p, e, l.data + s, n - s);
        }
    }
}

/* Move to the next "--BOUNDARY-A--" line: 1 with *bnd and *start set, 0 at
 * the end, -1 (with *err) after skipping text that belongs to no record. */
static int find_record(bw_audit_reader_t *rd, bw_str_t *bnd, size_t *start, const char **err)
{
    bw_str_t l, b2;
    size_t mark, off;
    char part;
    for (;;) {
        *start = rd->pos;
        if (!next_line(&rd->text, &rd->pos, &l))
            return 0;
        if (section_line(l, bnd, &part) && part == 'A')
            return 1;
        if (!l.len)
            continue;
        if ((off = tail_a_marker(l)) != 0) {
            rd->pos = *start + off;
        } else {
            while ((mark = rd->pos), next_line(&rd->text, &rd->pos, &l)) {
                if ((section_line(l, &b2, &part) && part == 'A') || (off = tail_a_marker(l)) != 0) {
                    rd->pos = mark + off;
                    break;
                }
            }
        }
        *err = "text outside a record (no --BOUNDARY-A-- line before it)";
        return -1;
    }
}

static int native_next(bw_audit_reader_t *rd, apr_pool_t *p, bw_audit_entry_t *e, const char **err)
{
    bw_str_t l, bnd, b2;
    size_t start, mark;
    char part, cur = 'A';
    int first = 1, rc = find_record(rd, &bnd, &start, err);

    if (rc != 1)
        return rc;
    entry_init(p, e, BW_AUDIT_NATIVE);
    while ((mark = rd->pos), next_line(&rd->text, &rd->pos, &l)) {
        if (section_line(l, &b2, &part)) {
            if (bw_str_eq(b2, bnd) && part != 'A') {
                if (part == 'Z') {
                    /* the blank line that closes a record belongs to it */
                    size_t after = rd->pos;
                    if (next_line(&rd->text, &after, &l) && !l.len)
                        rd->pos = after;
                    e->raw = bw_str_n(rd->text.data + start, rd->pos - start);
                    return 1;
                }
                cur = part;
                first = 1;
                continue;
            }
            if (part == 'A' && a_content_at(&rd->text, rd->pos)) {
                /* another record starts before this one ended */
                rd->pos = mark;
                *err = apr_psprintf(p, "record %.*s is cut: record %.*s starts before its Z part",
                                    (int)bnd.len, bnd.data, (int)b2.len, b2.data);
                return -1;
            }
        }
        if (tail_a_marker(l) && a_content_at(&rd->text, rd->pos)) {
            rd->pos = mark + tail_a_marker(l);
            *err = apr_psprintf(p, "record %.*s is cut: another record starts inside its part %c",
                                (int)bnd.len, bnd.data, cur);
            return -1;
        }
        native_line(p, e, cur, first, l);
        first = 0;
    }
    *err = apr_psprintf(p, "record %.*s is cut: the input ends before its Z part", (int)bnd.len, bnd.data);
    return -1;
}

/* ---- JSON --------------------------------------------------------------------- */

static yajl_val jget(yajl_val v, const char *a, const char *b)
{
    const char *path[3] = { a, b, NULL };
    return yajl_tree_get(v, path, yajl_t_any);
}

static const char *jstr(apr_pool_t *p, yajl_val v)
{
    return YAJL_IS_STRING(v) ? apr_pstrdup(p, YAJL_GET_STRING(v)) : NULL;
}

static void json_rules(apr_pool_t *p, bw_audit_entry_t *e, yajl_val root)
{
    yajl_val mr = jget(root, "matched_rules", NULL);
    size_t i, j;
    if (!YAJL_IS_ARRAY(mr))
        return;
    for (i = 0; i < mr->u.array.len; i++) {
        yajl_val rules = jget(mr->u.array.values[i], "rules", NULL);
        if (!YAJL_IS_ARRAY(rules))
            continue;
        for (j = 0; j < rules->u.array.len; j++) {
            const char *id = YAJL_GET_STRING(jget(rules->u.array.values[j], "actionset", "id"));
            if (id)
                add_id(p, e, id, strlen(id));
        }
    }
}

static void json_fill(apr_pool_t *p, bw_audit_entry_t *e, yajl_val root)
{
    yajl_val v = jget(root, "transaction", "time"), msgs;
    size_t i;
    if (YAJL_IS_STRING(v))
        e->time = bw_audit_parse_time(bw_str_make(YAJL_GET_STRING(v)));
    e->unique_id = jstr(p, jget(root, "transaction", "transaction_id"));
    e->client = jstr(p, jget(root, "transaction", "remote_address"));
    v = jget(root, "transaction", "remote_port");
    if (YAJL_IS_INTEGER(v))
        e->client_port = (int)YAJL_GET_INTEGER(v);
    e->request_line = jstr(p, jget(root, "request", "request_line"));
    if (e->request_line)
        split_request_line(p, e);
    v = jget(root, "response", "status");
    if (YAJL_IS_INTEGER(v))
        e->status = (int)YAJL_GET_INTEGER(v);
    msgs = jget(root, "audit_data", "messages");
    for (i = 0; YAJL_IS_ARRAY(msgs) && i < msgs->u.array.len; i++) {
        const char *m = YAJL_GET_STRING(msgs->u.array.values[i]);
        if (!m)
            continue;
        *(const char **)apr_array_push(e->messages) = apr_pstrdup(p, m);
        ids_of_message(p, e, bw_str_make(m));
    }
    json_rules(p, e, root);
}

static int json_next(bw_audit_reader_t *rd, apr_pool_t *p, bw_audit_entry_t *e, const char **err)
{
    bw_str_t l;
    size_t start;
    char ebuf[256];
    yajl_val root;
    do {
        start = rd->pos;
        if (!next_line(&rd->text, &rd->pos, &l))
            return 0;
    } while (!l.len);
    entry_init(p, e, BW_AUDIT_JSON);
    e->raw = bw_str_n(rd->text.data + start, rd->pos - start);
    if (memchr(l.data, '\0', l.len)) {
        *err = "a NUL byte inside a JSON record";
        return -1;
    }
    ebuf[0] = '\0';
    root = yajl_tree_parse(apr_pstrmemdup(p, l.data, l.len), ebuf, sizeof ebuf);
    if (!YAJL_IS_OBJECT(root)) {
        char *nl = strchr(ebuf, '\n');
        if (nl)
            *nl = '\0';
        if (root)
            yajl_tree_free(root);
        *err = apr_psprintf(p, "not a JSON record: %s", ebuf[0] ? ebuf : "not an object");
        return -1;
    }
    json_fill(p, e, root);
    yajl_tree_free(root);
    return 1;
}

int bw_audit_reader_next(bw_audit_reader_t *rd, apr_pool_t *p, bw_audit_entry_t *e, const char **err)
{
    *err = NULL;
    if (rd->format < 0) {
        size_t i = rd->pos;
        while (i < rd->text.len && isspace((unsigned char)rd->text.data[i]))
            i++;
        if (i >= rd->text.len)
            return 0;
        rd->format = rd->text.data[i] == '{' ? BW_AUDIT_JSON : BW_AUDIT_NATIVE;
    }
    return rd->format == BW_AUDIT_JSON ? json_next(rd, p, e, err) : native_next(rd, p, e, err);
}

/* ---- time ------------------------------------------------------------------------ */

static int num(const char *s, int n)
{
    int v = 0, i;
    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

apr_time_t bw_audit_parse_time(bw_str_t s)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    apr_time_exp_t xt;
    apr_time_t t;
    const char *d = s.data, *m;
    size_t i = 20, frac = 0;
    int sign, off;
    /* dd/Mon/yyyy:hh:mm:ss[.ffffff] +zzzz */
    if (s.len < 26 || d[2] != '/' || d[6] != '/' || d[11] != ':' || d[14] != ':' || d[17] != ':')
        return 0;
    memset(&xt, 0, sizeof(xt));
    m = bw_memmem(months, 36, d + 3, 3);
    xt.tm_mday = num(d, 2);
    xt.tm_year = num(d + 7, 4) - 1900;
    xt.tm_hour = num(d + 12, 2);
    xt.tm_min = num(d + 15, 2);
    xt.tm_sec = num(d + 18, 2);
    if (!m || (m - months) % 3 || xt.tm_mday < 1 || xt.tm_year < 0 || xt.tm_hour < 0 || xt.tm_min < 0
        || xt.tm_sec < 0)
        return 0;
    xt.tm_mon = (int)((m - months) / 3);
    if (d[i] == '.') {
        for (i++; i < s.len && isdigit((unsigned char)d[i]); i++, frac++)
            if (frac < 6)
                xt.tm_usec = xt.tm_usec * 10 + (d[i] - '0');
        for (; frac < 6; frac++)
            xt.tm_usec *= 10;
    }
    if (i + 6 > s.len || d[i] != ' ' || (d[i + 1] != '+' && d[i + 1] != '-'))
        return 0;
    sign = d[i + 1] == '-' ? -1 : 1;
    off = num(d + i + 2, 2) * 3600 + num(d + i + 4, 2) * 60;
    if (num(d + i + 2, 4) < 0)
        return 0;
    xt.tm_gmtoff = sign * off;
    /* apr_time_exp_gmt_get takes tm_gmtoff off */
    if (apr_time_exp_gmt_get(&t, &xt) != APR_SUCCESS)
        return 0;
    return t;
}
