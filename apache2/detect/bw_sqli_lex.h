/*
 * The SQL tokenizer behind @detectSQLi (internal to apache2/detect/).
 *
 * It cuts a value into tokens the way a permissive SQL server would (MySQL
 * first, with the MSSQL, PostgreSQL, Oracle and SQLite details attackers use)
 * and gives each token one of the classes below. The grammar walker in
 * bw_sqli.c then decides, from the sequence of classes and a few keyword ids,
 * whether the value closes a literal and goes on as SQL.
 *
 * Token classes (the letter is what the logged fingerprint shows):
 *   n  number: 12, -is an operator-, 1.5e3, .5, 0x4f, 0b101
 *   s  string: '..' ".." with '' / "" doubling and backslash escapes,
 *      N'..' X'..' B'..' E'..' _utf8'..' introducers
 *   i  quoted identifier: `..` (MySQL backticks)
 *   w  bare word: an identifier or a keyword the grammar does not care about
 *   v  variable: @x @@version @'x' @`x` (@@ system variables are "sensitive")
 *   t  literal keyword usable as an operand: NULL TRUE FALSE DEFAULT
 *      CURRENT_USER ... and MySQL's \N (USER, CURRENT_USER .. are "sensitive")
 *   f  function call: a word followed by "(" (after blanks or comments);
 *      flags say whether we know it and whether it is "sensitive" (delays,
 *      files, server introspection, error-based extraction)
 *   U  set operator: UNION EXCEPT INTERSECT
 *   S  SELECT
 *   Q  statement keyword: INSERT UPDATE DELETE DROP EXEC WAITFOR ...
 *   k  other keyword with a grammatical role: FROM WHERE ORDER BY AS CASE ..
 *   L  logical operator: AND OR XOR && ||
 *   N  negation: NOT !
 *   =  comparison: = <> != < > <= >= <=> == := LIKE RLIKE REGEXP IS IN
 *      BETWEEN SOUNDS GLOB, and the postfix NOTNULL / ISNULL (PostgreSQL,
 *      SQLite)
 *   o  arithmetic / bitwise operator: + - * / % ^ & | ~ << >> DIV MOD, and
 *      PostgreSQL's cast "::" (followed by a type name)
 *   ( ) , ; .  themselves
 *   c  a comment that runs to the end of the value (--, #, unclosed slash-star)
 *   ?  anything SQL has no use for here ({ } [ ] \ : ? $ and friends)
 *
 * Comments that end inside the value are blanks. A MySQL versioned comment
 * (slash-star-bang with optional version digits) is not a comment: its body
 * is tokenized as SQL, which is exactly why attackers use it.
 * "--" always starts a comment (MSSQL, PostgreSQL, Oracle, SQLite), even
 * without MySQL's required blank after it.
 */
#ifndef BW_SQLI_LEX_H
#define BW_SQLI_LEX_H

#include <stddef.h>

/* Token classes: the fingerprint letters. */
#define SQ_NUM    'n'
#define SQ_STR    's'
#define SQ_QIDENT 'i'
#define SQ_WORD   'w'
#define SQ_VAR    'v'
#define SQ_LIT    't'
#define SQ_FUNC   'f'
#define SQ_UNION  'U'
#define SQ_SELECT 'S'
#define SQ_STMT   'Q'
#define SQ_KW     'k'
#define SQ_LOGIC  'L'
#define SQ_NOT    'N'
#define SQ_CMP    '='
#define SQ_OP     'o'
#define SQ_LPAR   '('
#define SQ_RPAR   ')'
#define SQ_COMMA  ','
#define SQ_SEMI   ';'
#define SQ_DOT    '.'
#define SQ_CMT    'c'
#define SQ_BAD    '?'

/* Token flags. */
#define SQF_UNCLOSED  0x0001  /* string / identifier / comment reaches the end */
#define SQF_UNARY     0x0002  /* operator that may also be a prefix: - + ~ */
#define SQF_KNOWN     0x0004  /* function we know */
#define SQF_SENSITIVE 0x0008  /* function attackers call: sleep, load_file, ... */
#define SQF_STAR      0x0010  /* the "*" operator */
#define SQF_HASH      0x0020  /* comment started by '#' */
#define SQF_CMTWORD   0x0040  /* -- or # glued to a word: --force, #tag */
#define SQF_PIPE      0x0080  /* single '|' */
#define SQF_NAMEOK    0x0100  /* keyword that may also name a column (time, table) */
#define SQF_PAREN     0x0200  /* keyword directly followed by "(" (like(..) in SQLite) */
#define SQF_CAST      0x0400  /* PostgreSQL's "::" cast operator */

/* Keyword ids, for the tokens whose grammar role needs more than a class. */
enum {
    KW_NONE = 0,
    /* k: clauses and helpers */
    KW_FROM, KW_WHERE, KW_GROUP, KW_ORDER, KW_BY, KW_HAVING, KW_LIMIT,
    KW_OFFSET, KW_INTO, KW_OUTFILE, KW_PROCEDURE, KW_AS, KW_ON, KW_JOIN,
    KW_ASC, KW_ALL, KW_DISTINCT, KW_CASE, KW_WHEN, KW_THEN, KW_ELSE, KW_END,
    KW_EXISTS, KW_INTERVAL, KW_BINARY, KW_ESCAPE, KW_COLLATE, KW_OBJECT,
    KW_SET, KW_DELAY, KW_TOP, KW_VALUES, KW_WITH, KW_TRUE, KW_FALSE,
    /* =: comparisons spelt as words, the ones that need special follow-ups */
    KW_IS, KW_IN, KW_BETWEEN, KW_SOUNDS, KW_POSTFIX,
    /* Q: statements */
    KW_INSERT, KW_UPDATE, KW_DELETE, KW_DROP, KW_CREATE, KW_ALTER,
    KW_TRUNCATE, KW_EXEC, KW_DECLARE, KW_SHUTDOWN, KW_WAITFOR, KW_GRANT,
    KW_REPLACE, KW_CALL, KW_SHOW, KW_USE, KW_LOAD, KW_KILL, KW_RENAME,
    KW_HANDLER, KW_COPY
};

typedef struct {
    unsigned char cls;       /* one of the SQ_* letters */
    unsigned char kw;        /* KW_* for k, =, Q, U, S tokens; else 0 */
    unsigned short flags;    /* SQF_* */
    size_t pos, len;         /* bytes of the value this token covers */
} sq_tok_t;

typedef struct {
    const unsigned char *s;
    size_t len;
    size_t pos;
    int in_vcomment;         /* inside a MySQL versioned comment */
} sq_lex_t;

/* Start tokenizing s[pos..len). */
void sq_lex_init(sq_lex_t *lx, const unsigned char *s, size_t len, size_t pos);

/* The next token; 0 at the end of the value. Never reads past len. */
int sq_lex_next(sq_lex_t *lx, sq_tok_t *t);

/* The literal that starts a quote context: the bytes up to the first quote
 * q that is not doubled (qq). Returns the offset just past the closing
 * quote, or len when the value never closes it. */
size_t sq_lex_skip_quoted(const unsigned char *s, size_t len, size_t pos,
                          unsigned char q);

/* Entry i of the keyword table (its class and keyword id), NULL past the
 * end: the fast path's keyword list is checked against it. */
const char *sq_lex_keyword(size_t i, unsigned char *cls, unsigned char *kw);

#endif /* BW_SQLI_LEX_H */
