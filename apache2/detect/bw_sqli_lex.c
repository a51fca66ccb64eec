/*
 * SQL tokenizer for @detectSQLi: bytes -> classed tokens (classes and the
 * dialect rules are described in bw_sqli_lex.h). Linear in the value: every
 * byte is looked at a bounded number of times (a word looks ahead over the
 * blanks and comments before a possible "(", which the next call skips
 * again, so twice at most). Never reads past the value's length; NUL bytes
 * are ordinary (bad) characters.
 */
#include <string.h>
#include "bw_sqli_lex.h"
#include "bw_sqli.h"

/* Keyword flags (table only). */
#define KF_FUNC 0x01   /* followed by "(" it is a function call instead */
#define KF_NAME 0x02   /* in operand position it is just a column name */

typedef struct {
    const char *name;       /* lower case */
    unsigned char cls, kw, kf;
} sq_kw_t;

/* Words with a grammatical role, sorted by name (bw_sqli_tables_sorted()
 * checks the order in the unit tests). */
static const sq_kw_t keywords[] = {
    {"all", SQ_KW, KW_ALL, 0},               {"alter", SQ_STMT, KW_ALTER, 0},
    {"and", SQ_LOGIC, 0, 0},                 {"as", SQ_KW, KW_AS, 0},
    {"asc", SQ_KW, KW_ASC, 0},               {"between", SQ_CMP, KW_BETWEEN, 0},
    {"binary", SQ_KW, KW_BINARY, 0},         {"by", SQ_KW, KW_BY, 0},
    {"call", SQ_STMT, KW_CALL, 0},           {"case", SQ_KW, KW_CASE, 0},
    {"collate", SQ_KW, KW_COLLATE, 0},       {"copy", SQ_STMT, KW_COPY, 0},
    {"create", SQ_STMT, KW_CREATE, 0},       {"cross", SQ_KW, KW_JOIN, 0},
    {"current_date", SQ_LIT, 0, KF_FUNC},    {"current_time", SQ_LIT, 0, KF_FUNC},
    {"current_timestamp", SQ_LIT, 0, KF_FUNC}, {"current_user", SQ_LIT, 0, KF_FUNC},
    {"database", SQ_KW, KW_OBJECT, KF_FUNC | KF_NAME},
    {"declare", SQ_STMT, KW_DECLARE, 0},     {"default", SQ_LIT, 0, 0},
    {"delay", SQ_KW, KW_DELAY, KF_NAME},     {"delete", SQ_STMT, KW_DELETE, 0},
    {"desc", SQ_KW, KW_ASC, 0},              {"distinct", SQ_KW, KW_DISTINCT, 0},
    {"distinctrow", SQ_KW, KW_DISTINCT, 0},  {"div", SQ_OP, 0, 0},
    {"drop", SQ_STMT, KW_DROP, 0},           {"dumpfile", SQ_KW, KW_OUTFILE, 0},
    {"else", SQ_KW, KW_ELSE, 0},             {"end", SQ_KW, KW_END, 0},
    {"escape", SQ_KW, KW_ESCAPE, 0},         {"except", SQ_UNION, 0, 0},
    {"exec", SQ_STMT, KW_EXEC, 0},           {"execute", SQ_STMT, KW_EXEC, 0},
    {"exists", SQ_KW, KW_EXISTS, 0},         {"false", SQ_LIT, KW_FALSE, 0},
    {"from", SQ_KW, KW_FROM, 0},             {"function", SQ_KW, KW_OBJECT, KF_NAME},
    {"glob", SQ_CMP, 0, 0},                  {"grant", SQ_STMT, KW_GRANT, 0},
    {"group", SQ_KW, KW_GROUP, 0},           {"handler", SQ_STMT, KW_HANDLER, 0},
    {"having", SQ_KW, KW_HAVING, 0},         {"ilike", SQ_CMP, 0, 0},
    {"in", SQ_CMP, KW_IN, 0},                {"index", SQ_KW, KW_OBJECT, KF_NAME},
    {"inner", SQ_KW, KW_JOIN, 0},            {"insert", SQ_STMT, KW_INSERT, KF_FUNC},
    {"intersect", SQ_UNION, 0, 0},           {"interval", SQ_KW, KW_INTERVAL, 0},
    {"into", SQ_KW, KW_INTO, 0},             {"is", SQ_CMP, KW_IS, 0},
    {"isnull", SQ_CMP, KW_POSTFIX, KF_FUNC},
    {"join", SQ_KW, KW_JOIN, 0},             {"kill", SQ_STMT, KW_KILL, 0},
    {"left", SQ_KW, KW_JOIN, KF_FUNC},       {"like", SQ_CMP, 0, 0},
    {"limit", SQ_KW, KW_LIMIT, 0},           {"load", SQ_STMT, KW_LOAD, 0},
    {"localtime", SQ_LIT, 0, KF_FUNC},       {"localtimestamp", SQ_LIT, 0, KF_FUNC},
    {"login", SQ_KW, KW_OBJECT, KF_NAME},    {"mod", SQ_OP, 0, KF_FUNC},
    {"natural", SQ_KW, KW_JOIN, 0},          {"not", SQ_NOT, 0, 0},
    {"notnull", SQ_CMP, KW_POSTFIX, 0},
    {"null", SQ_LIT, 0, 0},                  {"offset", SQ_KW, KW_OFFSET, 0},
    {"on", SQ_KW, KW_ON, 0},                 {"or", SQ_LOGIC, 0, 0},
    {"order", SQ_KW, KW_ORDER, 0},           {"outer", SQ_KW, KW_JOIN, 0},
    {"outfile", SQ_KW, KW_OUTFILE, 0},       {"procedure", SQ_KW, KW_PROCEDURE, 0},
    {"regexp", SQ_CMP, 0, 0},                {"rename", SQ_STMT, KW_RENAME, 0},
    {"replace", SQ_STMT, KW_REPLACE, KF_FUNC}, {"revoke", SQ_STMT, KW_GRANT, 0},
    {"right", SQ_KW, KW_JOIN, KF_FUNC},      {"rlike", SQ_CMP, 0, 0},
    {"schema", SQ_KW, KW_OBJECT, KF_FUNC | KF_NAME},
    {"select", SQ_SELECT, 0, 0},             {"session_user", SQ_LIT, 0, KF_FUNC},
    {"set", SQ_STMT, KW_SET, 0},             {"show", SQ_STMT, KW_SHOW, 0},
    {"shutdown", SQ_STMT, KW_SHUTDOWN, 0},   {"sounds", SQ_CMP, KW_SOUNDS, 0},
    {"straight_join", SQ_KW, KW_JOIN, 0},    {"system_user", SQ_LIT, 0, KF_FUNC},
    {"table", SQ_KW, KW_OBJECT, KF_NAME},    {"then", SQ_KW, KW_THEN, 0},
    {"time", SQ_KW, KW_DELAY, KF_FUNC | KF_NAME}, {"top", SQ_KW, KW_TOP, 0},
    {"trigger", SQ_KW, KW_OBJECT, KF_NAME},  {"true", SQ_LIT, KW_TRUE, 0},
    {"truncate", SQ_STMT, KW_TRUNCATE, KF_FUNC}, {"union", SQ_UNION, 0, 0},
    {"unknown", SQ_LIT, 0, 0},               {"update", SQ_STMT, KW_UPDATE, 0},
    {"use", SQ_STMT, KW_USE, 0},             {"user", SQ_LIT, 0, KF_FUNC},
    {"using", SQ_KW, KW_ON, 0},              {"values", SQ_KW, KW_VALUES, KF_FUNC},
    {"view", SQ_KW, KW_OBJECT, KF_NAME},     {"waitfor", SQ_STMT, KW_WAITFOR, 0},
    {"when", SQ_KW, KW_WHEN, 0},             {"where", SQ_KW, KW_WHERE, 0},
    {"with", SQ_KW, KW_WITH, KF_NAME},       {"xor", SQ_LOGIC, 0, 0},
};

typedef struct {
    const char *name;       /* lower case */
    unsigned short flags;   /* SQF_KNOWN, optionally SQF_SENSITIVE */
} sq_fn_t;

#define FK SQF_KNOWN
#define FS (SQF_KNOWN | SQF_SENSITIVE)

/* Functions. "Sensitive" ones have no business in ordinary input: time
 * delays, file and network access, server introspection and the functions
 * used to leak data through error messages. Sorted by name. */
static const sq_fn_t functions[] = {
    {"abs", FK}, {"aes_decrypt", FK}, {"aes_encrypt", FK}, {"ascii", FK},
    {"benchmark", FS}, {"bin", FK}, {"bit_length", FK}, {"cast", FK}, {"ceil", FK},
    {"ceiling", FK}, {"char", FK}, {"char_length", FK}, {"charindex", FK},
    {"chr", FK}, {"coalesce", FK}, {"compress", FK}, {"concat", FK},
    {"concat_ws", FK}, {"connection_id", FS}, {"conv", FK}, {"convert", FK},
    {"count", FK}, {"crc32", FK}, {"curdate", FK}, {"current_database", FS},
    {"current_date", FK}, {"current_schema", FS}, {"current_time", FK},
    {"current_timestamp", FK}, {"current_user", FS}, {"curtime", FK},
    {"database", FS}, {"datalength", FK}, {"db_name", FS}, {"dblink", FS},
    {"decode", FK}, {"elt", FK}, {"encode", FK}, {"exp", FK}, {"export_set", FK},
    {"extractvalue", FS}, {"field", FK}, {"find_in_set", FK}, {"floor", FK},
    {"format", FK}, {"found_rows", FS}, {"from_base64", FK},
    {"geometrycollection", FS}, {"get_host_address", FS}, {"get_host_name", FS},
    {"get_lock", FS}, {"group_concat", FS}, {"has_dbaccess", FS}, {"hex", FK},
    {"host_name", FS}, {"if", FK}, {"ifnull", FK}, {"iif", FK}, {"insert", FK},
    {"instr", FK}, {"is_srvrolemember", FS}, {"isnull", FK}, {"json", FK},
    {"json_extract", FK}, {"json_keys", FK}, {"json_valid", FK},
    {"last_insert_id", FS}, {"lcase", FK}, {"left", FK}, {"len", FK},
    {"length", FK}, {"likelihood", FK}, {"likely", FK}, {"linestring", FS},
    {"lo_export", FS}, {"lo_get", FS}, {"lo_import", FS}, {"load_extension", FS},
    {"load_file", FS}, {"localtime", FK}, {"localtimestamp", FK}, {"locate", FK},
    {"lower", FK}, {"lpad", FK}, {"ltrim", FK}, {"make_set", FK},
    {"master_pos_wait", FS}, {"md5", FK}, {"mid", FK}, {"mod", FK},
    {"multilinestring", FS}, {"multipoint", FS}, {"multipolygon", FS},
    {"name_const", FS}, {"nchar", FK}, {"now", FK}, {"nullif", FK}, {"nvl", FK},
    {"object_id", FS}, {"oct", FK}, {"opendatasource", FS}, {"openquery", FS},
    {"openrowset", FS}, {"ord", FK}, {"overlay", FK}, {"pg_ls_dir", FS},
    {"pg_read_binary_file", FS}, {"pg_read_file", FS}, {"pg_sleep", FS},
    {"pg_sleep_for", FS}, {"polygon", FS}, {"position", FK}, {"pow", FK},
    {"power", FK}, {"query_to_xml", FS}, {"quote", FK}, {"rand", FK},
    {"randomblob", FS}, {"receive_message", FS}, {"repeat", FK}, {"replace", FK},
    {"reverse", FK}, {"right", FK}, {"round", FK}, {"row_count", FS}, {"rpad", FK},
    {"rtrim", FK}, {"schema", FS}, {"session_user", FS}, {"sha1", FK}, {"sha2", FK},
    {"sleep", FS}, {"soundex", FK}, {"space", FK},
    {"sqlite_compileoption_used", FS}, {"sqlite_version", FS}, {"sqrt", FK},
    {"starts_with", FK}, {"str", FK}, {"strcmp", FK}, {"substr", FK},
    {"substring", FK}, {"substring_index", FK}, {"suser_name", FS},
    {"suser_sname", FS}, {"sys_context", FS}, {"sys_eval", FS}, {"sys_exec", FS},
    {"sysdate", FK}, {"system_user", FS}, {"time", FK}, {"to_base64", FK},
    {"trim", FK}, {"truncate", FK}, {"ucase", FK}, {"uncompress", FK},
    {"unhex", FK}, {"unicode", FK}, {"unistr", FK}, {"unlikely", FK},
    {"updatexml", FS}, {"upper", FK}, {"user", FS}, {"user_name", FS},
    {"utl_inaddr", FS}, {"uuid", FK}, {"values", FK}, {"version", FS},
    {"xmltype", FS}, {"xp_cmdshell", FS}, {"xp_dirtree", FS},
};

#undef FK
#undef FS

#define NKW (sizeof(keywords) / sizeof(keywords[0]))
#define NFN (sizeof(functions) / sizeof(functions[0]))
#define WORD_MAX 24     /* longer words are never keywords or known functions */

int bw_sqli_tables_sorted(void)
{
    size_t i;
    for (i = 1; i < NKW; i++)
        if (strcmp(keywords[i - 1].name, keywords[i].name) >= 0)
            return 0;
    for (i = 1; i < NFN; i++)
        if (strcmp(functions[i - 1].name, functions[i].name) >= 0)
            return 0;
    return 1;
}

const char *sq_lex_keyword(size_t i, unsigned char *cls, unsigned char *kw)
{
    if (i >= NKW)
        return NULL;
    *cls = keywords[i].cls;
    *kw = keywords[i].kw;
    return keywords[i].name;
}

/* strcmp()'s order; most probes of a lookup differ in the first two
 * bytes, which are compared here without a call. */
static int name_cmp(const char *w, const char *name)
{
    int c = (unsigned char)w[0] - (unsigned char)name[0];
    if (c != 0 || w[0] == '\0')
        return c;
    c = (unsigned char)w[1] - (unsigned char)name[1];
    return c != 0 || w[1] == '\0' ? c : strcmp(w + 2, name + 2);
}

static const sq_kw_t *find_keyword(const char *w)
{
    size_t lo = 0, hi = NKW;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = name_cmp(w, keywords[mid].name);
        if (c == 0)
            return &keywords[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static unsigned short function_flags(const char *w)
{
    size_t lo = 0, hi = NFN;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = name_cmp(w, functions[mid].name);
        if (c == 0)
            return functions[mid].flags;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

/* Blank: space, \t \n \v \f \r (9 to 13). */
static int is_blank(unsigned char c)
{
    return c == ' ' || (unsigned char)(c - '\t') <= '\r' - '\t';
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Identifier bytes: MySQL allows $ and any non-ASCII byte (UTF-8 names). */
static int is_ident(unsigned char c)
{
    return (unsigned char)((c | 0x20) - 'a') <= 'z' - 'a' || is_digit(c)
        || c == '_' || c == '$' || c >= 0x80;
}

static int is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void sq_lex_init(sq_lex_t *lx, const unsigned char *s, size_t len, size_t pos)
{
    lx->s = s;
    lx->len = len;
    lx->pos = pos;
    lx->in_vcomment = 0;
}

size_t sq_lex_skip_quoted(const unsigned char *s, size_t len, size_t pos,
                          unsigned char q)
{
    while (pos < len) {
        const unsigned char *p = memchr(s + pos, q, len - pos);
        if (p == NULL)
            return len;
        pos = (size_t)(p - s) + 1;
        if (pos < len && s[pos] == q)
            pos++;               /* doubled quote: still inside */
        else
            return pos;
    }
    return len;
}

/* Past a quoted run starting at the quote at pos: doubling and backslash
 * escapes (MySQL) stay inside. Sets *closed. */
static size_t skip_literal(const unsigned char *s, size_t len, size_t pos,
                           unsigned char q, int *closed)
{
    pos++;
    while (pos < len) {
        unsigned char c = s[pos];
        if (c == '\\' && q != '`') {
            pos += 2;
        } else if (c == q) {
            if (pos + 1 < len && s[pos + 1] == q) {
                pos += 2;
            } else {
                *closed = 1;
                return pos + 1;
            }
        } else {
            pos++;
        }
    }
    *closed = 0;
    return len;
}

static void set_tok(sq_tok_t *t, unsigned char cls, size_t pos, size_t end)
{
    t->cls = cls;
    t->kw = 0;
    t->flags = 0;
    t->pos = pos;
    t->len = end - pos;
}

static int lex_quoted(sq_lex_t *lx, sq_tok_t *t, size_t start, size_t qpos,
                      unsigned char cls)
{
    int closed;
    size_t end = skip_literal(lx->s, lx->len, qpos, lx->s[qpos], &closed);
    set_tok(t, cls, start, end);
    if (!closed)
        t->flags |= SQF_UNCLOSED;
    lx->pos = end;
    return 1;
}

/* Numbers: 0x.. 0b.. and decimal with fraction and exponent. */
static int lex_number(sq_lex_t *lx, sq_tok_t *t)
{
    const unsigned char *s = lx->s;
    size_t p = lx->pos, len = lx->len;

    if (p + 2 < len && s[p] == '0' && (s[p + 1] == 'x' || s[p + 1] == 'X')
        && is_hex(s[p + 2])) {
        p += 2;
        while (p < len && is_hex(s[p]))
            p++;
    } else if (s[p] == '0' && p + 2 < len && (s[p + 1] == 'b' || s[p + 1] == 'B')
               && (s[p + 2] == '0' || s[p + 2] == '1')) {
        p += 2;
        while (p < len && (s[p] == '0' || s[p] == '1'))
            p++;
    } else {
        while (p < len && is_digit(s[p]))
            p++;
        if (p < len && s[p] == '.') {
            p++;
            while (p < len && is_digit(s[p]))
                p++;
        }
        if (p + 1 < len && (s[p] == 'e' || s[p] == 'E')
            && (is_digit(s[p + 1])
                || ((s[p + 1] == '+' || s[p + 1] == '-') && p + 2 < len && is_digit(s[p + 2])))) {
            p += 2;
            while (p < len && is_digit(s[p]))
                p++;
        }
    }
    set_tok(t, SQ_NUM, lx->pos, p);
    lx->pos = p;
    return 1;
}

/* @name, @@name, @'name', @`name`. */
static int lex_variable(sq_lex_t *lx, sq_tok_t *t)
{
    size_t start = lx->pos, p = lx->pos + 1;
    int closed;

    if (p < lx->len && lx->s[p] == '@')
        p++;
    if (p < lx->len && (lx->s[p] == '\'' || lx->s[p] == '"' || lx->s[p] == '`')) {
        p = skip_literal(lx->s, lx->len, p, lx->s[p], &closed);
    } else {
        while (p < lx->len && (is_ident(lx->s[p]) || lx->s[p] == '.'))
            p++;
    }
    set_tok(t, SQ_VAR, start, p);
    if (p - start > 2 && lx->s[start + 1] == '@')
        t->flags = SQF_SENSITIVE;        /* @@version, @@datadir ... */
    lx->pos = p;
    return 1;
}

/* Is the next significant byte after p an opening parenthesis? Skips blanks
 * and ordinary block comments ("sleep/ * * /(5)" is a call). */
static int paren_follows(const sq_lex_t *lx, size_t p)
{
    const unsigned char *s = lx->s;
    for (;;) {
        while (p < lx->len && is_blank(s[p]))
            p++;
        if (p + 1 < lx->len && s[p] == '/' && s[p + 1] == '*'
            && !(p + 2 < lx->len && s[p + 2] == '!')) {
            const unsigned char *e = p + 2 < lx->len
                ? (const unsigned char *)memmem(s + p + 2, lx->len - p - 2, "*/", 2) : NULL;
            if (e == NULL)
                return 0;
            p = (size_t)(e - s) + 2;
            continue;
        }
        return p < lx->len && s[p] == '(';
    }
}

/* A bare word: string introducer, keyword, function call or identifier. */
static int lex_word(sq_lex_t *lx, sq_tok_t *t)
{
    const unsigned char *s = lx->s;
    size_t start = lx->pos, p = lx->pos, n, i;
    char w[WORD_MAX + 1];
    const sq_kw_t *kw = NULL;
    int paren;

    while (p < lx->len && is_ident(s[p]))
        p++;
    n = p - start;
    if (p < lx->len && s[p] == '\'' && (s[start] == '_' || (n == 1 && strchr("nNxXbBeE", s[start]))))
        return lex_quoted(lx, t, start, p, SQ_STR);
    set_tok(t, SQ_WORD, start, p);
    lx->pos = p;
    if (n > WORD_MAX)
        return 1;
    for (i = 0; i < n; i++)
        w[i] = (char)((s[start + i] >= 'A' && s[start + i] <= 'Z') ? s[start + i] + 32 : s[start + i]);
    w[n] = '\0';
    kw = find_keyword(w);
    paren = paren_follows(lx, p);
    if ((kw == NULL || (kw->kf & KF_FUNC)) && paren) {
        t->cls = SQ_FUNC;
        t->flags = function_flags(w);
        return 1;
    }
    if (kw != NULL) {
        t->cls = kw->cls;
        t->kw = kw->kw;
        if (kw->kf & KF_NAME)
            t->flags |= SQF_NAMEOK;
        if (kw->cls == SQ_LIT)
            t->flags |= function_flags(w) & SQF_SENSITIVE;
        if (paren)
            t->flags |= SQF_PAREN;
    }
    return 1;
}

/* Line comments (-- and #) and block comments. Returns 1 when a token
 * (a comment reaching the end) was produced, 0 to continue scanning. */
static int lex_comment(sq_lex_t *lx, sq_tok_t *t, int *skipped)
{
    const unsigned char *s = lx->s;
    size_t p = lx->pos, len = lx->len;

    *skipped = 1;
    if (s[p] == '/' && p + 1 < len && s[p + 1] == '*') {
        const unsigned char *e;
        if (p + 2 < len && s[p + 2] == '!') {
            p += 3;
            while (p < len && is_digit(s[p]))
                p++;
            lx->in_vcomment = 1;
            lx->pos = p;
            return 0;
        }
        e = p + 2 < len ? (const unsigned char *)memmem(s + p + 2, len - p - 2, "*/", 2) : NULL;
        if (e != NULL) {
            lx->pos = (size_t)(e - s) + 2;
            return 0;
        }
    } else if (s[p] == '-' || s[p] == '#') {
        const unsigned char *nl = memchr(s + p, '\n', len - p);
        if (nl != NULL) {
            lx->pos = (size_t)(nl - s) + 1;
            return 0;
        }
    } else {
        *skipped = 0;
        return 0;
    }
    set_tok(t, SQ_CMT, p, len);
    t->flags = SQF_UNCLOSED;
    if (s[p] == '#')
        t->flags |= SQF_HASH;
    if (s[p] != '/') {
        size_t body = p + (s[p] == '#' ? 1 : 2);
        if (body < len && is_ident(s[body]))
            t->flags |= SQF_CMTWORD;
    }
    lx->pos = len;
    return 1;
}

/* Comparisons starting with < > ! (and the shifts): sets *cls, returns
 * the length. */
static size_t lex_compare(const sq_lex_t *lx, unsigned char *cls)
{
    const unsigned char *s = lx->s;
    size_t p = lx->pos, len = lx->len;
    unsigned char c = s[p], d = p + 1 < len ? s[p + 1] : 0;

    *cls = SQ_CMP;
    if (c == '<') {
        if (d == '=' && p + 2 < len && s[p + 2] == '>')
            return 3;                      /* <=> */
        if (d == '<')
            *cls = SQ_OP;                  /* << */
        return (d == '=' || d == '>' || d == '<') ? 2 : 1;
    }
    if (c == '>') {
        if (d == '>')
            *cls = SQ_OP;                  /* >> */
        return (d == '=' || d == '>') ? 2 : 1;
    }
    if (d == '=' || d == '<' || d == '>')
        return 2;                          /* != !< !> */
    *cls = SQ_NOT;                         /* ! */
    return 1;
}

/* One- to three-byte operators and punctuation. */
static int lex_punct(sq_lex_t *lx, sq_tok_t *t)
{
    const unsigned char *s = lx->s;
    size_t p = lx->pos, len = lx->len, n = 1;
    unsigned char c = s[p], d = p + 1 < len ? s[p + 1] : 0, cls = SQ_BAD;
    unsigned short fl = 0;

    switch (c) {
    case '(': case ')': case ',': case ';': case '.':
        cls = c;
        break;
    case '=':
        cls = SQ_CMP;
        n = d == '=' ? 2 : 1;
        break;
    case '<': case '>': case '!':
        n = lex_compare(lx, &cls);
        break;
    case '|': case '&':
        if (d == c)
            cls = SQ_LOGIC, n = 2;         /* || && */
        else
            cls = SQ_OP, fl = c == '|' ? SQF_PIPE : 0;
        break;
    case ':':
        if (d == '=')
            cls = SQ_CMP, n = 2;
        else if (d == ':')
            cls = SQ_OP, n = 2, fl = SQF_CAST;
        break;
    case '+': case '-': case '~':
        cls = SQ_OP, fl = SQF_UNARY;
        break;
    case '*':
        cls = SQ_OP, fl = SQF_STAR;
        break;
    case '/': case '%': case '^':
        cls = SQ_OP;
        break;
    case '\\':
        if (d == 'N')
            cls = SQ_LIT, n = 2;           /* MySQL's \N is NULL */
        break;
    default:
        break;
    }
    set_tok(t, cls, p, p + n);
    t->flags = fl;
    lx->pos = p + n;
    return 1;
}

int sq_lex_next(sq_lex_t *lx, sq_tok_t *t)
{
    const unsigned char *s = lx->s;

    for (;;) {
        int skipped;
        unsigned char c;

        while (lx->pos < lx->len && is_blank(s[lx->pos]))
            lx->pos++;
        if (lx->pos >= lx->len)
            return 0;
        c = s[lx->pos];
        if (c == '*' && lx->in_vcomment && lx->pos + 1 < lx->len && s[lx->pos + 1] == '/') {
            lx->in_vcomment = 0;
            lx->pos += 2;
            continue;
        }
        if ((c == '/' || c == '-') && !(lx->pos + 1 < lx->len && s[lx->pos + 1] == (c == '/' ? '*' : '-')))
            return lex_punct(lx, t);
        if (c == '/' || c == '-' || c == '#') {
            if (lex_comment(lx, t, &skipped))
                return 1;
            if (skipped)
                continue;
        }
        if (c == '\'' || c == '"')
            return lex_quoted(lx, t, lx->pos, lx->pos, SQ_STR);
        if (c == '`')
            return lex_quoted(lx, t, lx->pos, lx->pos, SQ_QIDENT);
        if (c == '@')
            return lex_variable(lx, t);
        if (is_digit(c) || (c == '.' && lx->pos + 1 < lx->len && is_digit(s[lx->pos + 1])))
            return lex_number(lx, t);
        if (is_ident(c))
            return lex_word(lx, t);
        return lex_punct(lx, t);
    }
}
