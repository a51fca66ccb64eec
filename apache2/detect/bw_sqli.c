/*
 * The decision of @detectSQLi: a token-level SQL grammar and the evidence
 * rules. Where the reading starts (as-is, after a closing quote, around a
 * comment that glues SQL to text) is bw_sqli_ctx.c; the tokenizer is
 * bw_sqli_lex.c.
 *
 * Grammar. From the breakout on, tokens are walked with a small state
 * machine that knows what may follow what in SQL: an operand (number,
 * string, name, variable, call, parenthesised expression) must be followed
 * by an operator, a comparison, AND/OR, ")", ",", ";", a clause keyword
 * (FROM, WHERE, ORDER BY, LIMIT, ...), UNION, an alias where SQL allows one
 * (select lists, FROM), or a comment; an operator must be followed by an
 * operand. The first token that SQL would reject ends the walk: ordinary
 * text stops there within a token or two ("O'Brien" stops at "Brien" right
 * after the breakout, "rock and roll" at "roll"), which is what keeps false
 * positives down. Parentheses, CASE..END and function calls nest on a
 * bounded stack; a ")" that closes a parenthesis the application opened is
 * allowed as long as the value opened none itself.
 *
 * Evidence. Validity is not enough (a lone number is valid SQL); a match
 * needs one of these, found while the walk is still valid:
 *   union     UNION [ALL|DISTINCT] SELECT with a select list that is not
 *             plain words (1,2 / NULL / * / a call), or whose FROM names a
 *             table that is followed by the end, a comment or a clause;
 *             in the comment-glued context also a number followed by
 *             UNION ALL / DISTINCT / SELECT (or EXCEPT, INTERSECT), whatever
 *             comes next (the head of a set operation, cut off by the rest
 *             of a path)
 *   stack     ";" then a statement head (DROP TABLE x, DELETE FROM x,
 *             UPDATE x SET, EXEC xp_.., WAITFOR DELAY '..', DECLARE @v,
 *             SELECT ..); MSSQL also runs a statement without ";" (' waitfor
 *             delay '0:0:5'), for the heads marked strong below (in the
 *             as-is context only after a number, except WAITFOR DELAY)
 *   subquery  "(" SELECT with a select list as above
 *   call      a call of a sensitive function with an argument (sleep(5),
 *             benchmark(..), load_file(..), extractvalue(..)); version(),
 *             user() ... and @@version count when nested, after the
 *             breakout, or when they are the whole value
 *   cond      AND/OR/XOR/&&/|| together with a completed comparison
 *             (= < LIKE IN IS BETWEEN ...) or a known function call
 *   clause    ORDER BY / GROUP BY / HAVING / LIMIT + operand, INTO OUTFILE
 *             '..' (after anything: it writes files), PROCEDURE f(..)
 *   comment   a quoted context: the literal closes, valid SQL follows and a
 *             comment runs to the end, cutting the application's query off
 *             ("admin'--", "x') #"); not "'--force'" or "'#tag" (a comment
 *             glued to a word right at the breakout)
 *   sandwich  (bw_sqli_ctx.c) a quoted context: an expression spliced
 *             into the literal ("' + sleep(1) + '")
 * A value that is a whole statement ("SELECT name FROM t", "DROP TABLE x")
 * breaks out of nothing: in an operand position it is a syntax error in
 * every dialect, so it is not reported (it may well be a code sample).
 * In the as-is context (and the comment-glued one, read the same way from
 * its restart point), cond, clause, comment, statements without ";" and
 * the weak statements (USE, SHOW, SET, CALL ...) count only when the value
 * starts with a number, string, variable or NULL/TRUE-like literal, i.e. a
 * real numeric injection ("1 or 1=1"), never for text that happens to
 * start with a word ("x = 1 or y = 2").
 * t:urlDecodeUni turns a "+" into a blank before the operator sees the
 * value, so right at the breakout a blank before "(", a call or a variable
 * stands for an operator ("'+(select 1)+'" arrives as "' (select 1) '").
 *
 * Everything is on the stack with fixed bounds (paren depth 32, 15
 * fingerprint letters); each context is one left-to-right pass.
 */
#include <string.h>
#include "bw_sqli.h"
#include "bw_sqli_int.h"
#include "bw_sqli_lex.h"

#define MAXDEPTH 32
#define EV_WEAK  0x8000u          /* internal: needs a numeric as-is start */
#define EV_FORCE 0x4000u          /* internal: counts whatever the start */
#define EV_NEEDS_NUMERIC (BW_SQLI_EV_COND | BW_SQLI_EV_CLAUSE | BW_SQLI_EV_COMMENT | EV_WEAK)

/* What the walker expects next. */
enum {
    G_OPERAND, G_AFTER, G_FUNC, G_STMT, G_UNION, G_BY, G_ALIAS, G_DOT,
    G_NEEDCMP, G_INTO, G_INTOFILE, G_PROC, G_JOIN, G_CAST
};
enum { LV_PAREN = 1, LV_FUNC, LV_SUBQ, LV_CASE };       /* nesting kinds */
enum { CL_EXPR = 0, CL_SELECT, CL_FROM, CL_LIST };      /* where aliases are legal */
enum { SEL_NONE = 0, SEL_FIRST, SEL_WORDS, SEL_FROM, SEL_TABLE };

typedef struct {
    unsigned char kind, clause, sens, first;
} sq_level_t;

typedef struct {
    const unsigned char *s;
    int ctx, st, depth;
    sq_level_t lvl[MAXDEPTH];
    unsigned char clause, opened, closers, just_opened, alias_used;
    unsigned char prev, prev_kw;
    unsigned char logic, cmp_pending, cmp_done, numeric_start, first_seen;
    unsigned char clause_ev, sens_arg, sel, sens_start, union_num;
    unsigned short func_flags;
    unsigned sel_ev, stmt_ev, ntok, ev;
    const char *stmt_seq;        /* statement head still to match, see stmts[] */
    char fp[BW_SQLI_FP_MAX + 1];
    unsigned fplen;
} sq_gram_t;

/* Statement heads: what must follow the keyword for it to count.
 *   I name (or a call-like "name(": a column list follows)
 *   O object keyword (TABLE, DATABASE ..)   T INTO   S SET   F FROM
 *   D DELAY/TIME   s string   V variable   f call   n number
 *   A name, ALL or a statement keyword (GRANT SELECT ..)   C name or "("
 *   E end (";", a comment, WITH .. or the end of the value)
 *   X exec target: a variable, "(", a string, a call, xp_../sp_.. or a.b
 * strong: may also follow a literal without ";" (MSSQL); weak heads count
 * only after ";", and like cond in the as-is context. */
static const struct {
    unsigned char kw, strong;
    const char *seq;
} stmts[] = {
    {KW_INSERT, 1, "TI"}, {KW_REPLACE, 1, "TI"}, {KW_UPDATE, 1, "IS"},
    {KW_DELETE, 1, "FI"}, {KW_DROP, 1, "OI"}, {KW_CREATE, 1, "OI"},
    {KW_ALTER, 1, "OI"}, {KW_TRUNCATE, 1, "OI"}, {KW_RENAME, 1, "OI"},
    {KW_EXEC, 1, "X"}, {KW_DECLARE, 1, "V"}, {KW_WAITFOR, 1, "Ds"},
    {KW_SHUTDOWN, 0, "E"}, {KW_GRANT, 0, "A"}, {KW_CALL, 0, "f"},
    {KW_SHOW, 0, "I"}, {KW_USE, 0, "I"}, {KW_LOAD, 0, "I"}, {KW_KILL, 0, "n"},
    {KW_HANDLER, 0, "I"}, {KW_COPY, 0, "C"}, {KW_SET, 0, "V"},
};

/* The contexts where the value itself must look like SQL from its first
 * token on (no quote to break out of). */
static int asis(const sq_gram_t *g)
{
    return g->ctx == BW_SQLI_CTX_ASIS || g->ctx == BW_SQLI_CTX_GLUED;
}

static int ev(sq_gram_t *g, unsigned bit)
{
    if (asis(g) && (bit & EV_NEEDS_NUMERIC) && !(bit & EV_FORCE)
        && !g->numeric_start)
        return 0;
    g->ev = bit & ~(EV_WEAK | EV_FORCE);
    return 1;
}

static void fp_push(sq_gram_t *g, unsigned char cls)
{
    if (g->fplen < BW_SQLI_FP_MAX)
        g->fp[g->fplen++] = (char)cls;
}

static int push(sq_gram_t *g, unsigned char kind)
{
    if (g->depth >= MAXDEPTH)
        return -1;
    g->lvl[g->depth].kind = kind;
    g->lvl[g->depth].clause = g->clause;
    g->lvl[g->depth].sens = 0;
    g->lvl[g->depth].first = 0;
    g->depth++;
    g->opened = 1;
    g->clause = CL_EXPR;
    g->st = G_OPERAND;
    return 0;
}

static unsigned char top_kind(const sq_gram_t *g)
{
    return g->depth > 0 ? g->lvl[g->depth - 1].kind : 0;
}

static int is_name(const sq_tok_t *t)
{
    return t->cls == SQ_WORD || t->cls == SQ_QIDENT
        || (t->cls == SQ_KW && (t->flags & SQF_NAMEOK));
}

/* An operand that is true on its own right after AND/OR: TRUE, NOT FALSE,
 * or the literal the application's own closing quote completes when it
 * starts with a non-zero digit (' or '1 -> 'x' or '1'). ("true or false"
 * is English: FALSE right after OR is not a tautology.) */
static int truthy(const sq_gram_t *g, const sq_tok_t *t)
{
    if (t->cls == SQ_LIT && t->kw == KW_TRUE && g->prev == SQ_LOGIC)
        return 1;
    if (t->cls == SQ_LIT && t->kw == KW_FALSE && g->prev == SQ_NOT)
        return 1;
    if (g->prev != SQ_LOGIC)
        return 0;
    return t->cls == SQ_STR && (t->flags & SQF_UNCLOSED) && t->len > 1
        && g->s[t->pos + 1] >= '1' && g->s[t->pos + 1] <= '9';
}

/* An operand was consumed: comparisons, conditions and clauses complete. */
static int operand(sq_gram_t *g, const sq_tok_t *t)
{
    g->st = G_AFTER;
    g->alias_used = 0;
    if (!g->first_seen) {
        g->first_seen = 1;
        g->numeric_start = t->cls == SQ_NUM || t->cls == SQ_STR
            || t->cls == SQ_VAR || t->cls == SQ_LIT;
        g->sens_start = t->cls == SQ_VAR && (t->flags & SQF_SENSITIVE);
    }
    if (g->cmp_pending) {
        g->cmp_pending = 0;
        g->cmp_done = 1;
    }
    if (g->logic && (g->cmp_done || truthy(g, t)) && ev(g, BW_SQLI_EV_COND))
        return 1;
    if (g->clause_ev) {
        g->clause_ev = 0;
        if (ev(g, BW_SQLI_EV_CLAUSE))
            return 1;
    }
    return 0;
}

static int start_select(sq_gram_t *g, unsigned evbit)
{
    g->sel = SEL_FIRST;
    g->sel_ev = evbit;
    g->clause = CL_SELECT;
    g->st = G_OPERAND;
    g->first_seen = 1;
    return 0;
}

/* juxtaposed: a statement without ";" (MSSQL), strong heads only. */
static int begin_stmt(sq_gram_t *g, const sq_tok_t *t, unsigned evbit, int juxtaposed)
{
    size_t i;
    for (i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++) {
        if (stmts[i].kw != t->kw)
            continue;
        if (juxtaposed && !stmts[i].strong)
            return -1;
        g->stmt_seq = stmts[i].seq;
        g->stmt_ev = (stmts[i].strong && (!juxtaposed || t->kw == KW_WAITFOR))
            ? evbit : (evbit | EV_WEAK);
        g->first_seen = 1;
        return 0;
    }
    return -1;
}

/* EXEC's target: exec xp_cmdshell / exec sp_.. / exec @v / exec('..'). */
static int exec_target(sq_gram_t *g, const sq_tok_t *t)
{
    const unsigned char *w = g->s + t->pos;
    if (t->cls == SQ_VAR || t->cls == SQ_LPAR || t->cls == SQ_STR || t->cls == SQ_FUNC)
        return 1;
    if (t->cls != SQ_WORD && t->cls != SQ_QIDENT)
        return 0;
    if (t->len > 3 && ((w[0] | 0x20) == 'x' || (w[0] | 0x20) == 's')
        && (w[1] | 0x20) == 'p' && w[2] == '_')
        return 1;
    g->stmt_seq = ".";           /* a plain name must be qualified: master..xp */
    return 2;
}

static int stmt_step(sq_gram_t *g, const sq_tok_t *t)
{
    int ok = 0;
    switch (*g->stmt_seq) {
    case 'I': ok = is_name(t) || t->cls == SQ_FUNC; break;
    case 'A': ok = is_name(t) || (t->cls == SQ_KW && t->kw == KW_ALL)
                  || t->cls == SQ_SELECT || t->cls == SQ_STMT; break;
    case 'C': ok = is_name(t) || t->cls == SQ_LPAR; break;
    case 'O': ok = t->cls == SQ_KW && (t->kw == KW_OBJECT || t->kw == KW_PROCEDURE); break;
    case 'T': ok = t->cls == SQ_KW && t->kw == KW_INTO; break;
    case 'S': ok = t->cls == SQ_STMT && t->kw == KW_SET; break;
    case 'F': ok = t->cls == SQ_KW && t->kw == KW_FROM; break;
    case 'D': ok = t->cls == SQ_KW && t->kw == KW_DELAY; break;
    case 's': ok = t->cls == SQ_STR; break;
    case 'V': ok = t->cls == SQ_VAR; break;
    case 'f': ok = t->cls == SQ_FUNC; break;
    case 'n': ok = t->cls == SQ_NUM; break;
    case '.': ok = t->cls == SQ_DOT; break;
    case 'E': ok = t->cls == SQ_CMT || t->cls == SQ_SEMI
                  || (t->cls == SQ_KW && t->kw == KW_WITH); break;
    case 'X':
        ok = exec_target(g, t);
        if (ok == 2)
            return 0;
        break;
    default: break;
    }
    if (!ok)
        return -1;
    g->stmt_seq++;
    if (*g->stmt_seq != '\0')
        return 0;
    g->stmt_seq = NULL;
    return ev(g, g->stmt_ev) ? 1 : -1;
}

/* Follows a SELECT until its select list proves to be SQL (see header). */
static int sel_step(sq_gram_t *g, const sq_tok_t *t)
{
    switch (g->sel) {
    case SEL_FIRST:
        if (t->cls == SQ_KW && (t->kw == KW_DISTINCT || t->kw == KW_ALL || t->kw == KW_TOP))
            return 0;
        if (t->cls == SQ_WORD || t->cls == SQ_QIDENT) {
            g->sel = SEL_WORDS;
            return 0;
        }
        if (strchr("nsvtf(N", t->cls) != NULL || (t->cls == SQ_KW && t->kw == KW_CASE)
            || (t->cls == SQ_OP && (t->flags & (SQF_STAR | SQF_UNARY))))
            break;
        g->sel = SEL_NONE;
        return 0;
    case SEL_WORDS:
        if (t->cls == SQ_KW && t->kw == KW_FROM)
            g->sel = SEL_FROM;
        return 0;
    case SEL_FROM:
        if (t->cls == SQ_LPAR)
            break;
        g->sel = is_name(t) ? SEL_TABLE : SEL_NONE;
        return 0;
    default:
        if (t->cls == SQ_DOT) {
            g->sel = SEL_FROM;
            return 0;
        }
        if (strchr("c;),U", t->cls) != NULL
            || (t->cls == SQ_KW && (t->kw == KW_WHERE || t->kw == KW_LIMIT || t->kw == KW_ORDER
                                    || t->kw == KW_GROUP || t->kw == KW_JOIN || t->kw == KW_HAVING
                                    || t->kw == KW_INTO || t->kw == KW_PROCEDURE)))
            break;
        g->sel = SEL_NONE;
        return 0;
    }
    g->sel = SEL_NONE;
    return ev(g, g->sel_ev);
}

/* ")" right after "(": only an empty argument list. */
static int empty_call(sq_gram_t *g)
{
    sq_level_t *lv;
    if (!g->just_opened || top_kind(g) != LV_FUNC)
        return -1;
    lv = &g->lvl[--g->depth];
    g->clause = lv->clause;
    g->st = G_AFTER;
    g->alias_used = 0;
    if (lv->sens && (!asis(g) || g->depth > 0 || !lv->first))
        return ev(g, BW_SQLI_EV_CALL);
    if (lv->sens)
        g->sens_start = 1;        /* version(): counts if the walk stays valid */
    return 0;
}

static int operand_keyword(sq_gram_t *g, const sq_tok_t *t)
{
    switch (t->kw) {
    case KW_CASE:
        g->first_seen = 1;
        return push(g, LV_CASE);
    case KW_WHEN:
        return (g->prev == SQ_KW && g->prev_kw == KW_CASE) ? 0 : -1;
    case KW_EXISTS: case KW_INTERVAL: case KW_BINARY: case KW_DISTINCT:
    case KW_ALL: case KW_TOP:
        return 0;
    default:
        return (t->flags & SQF_NAMEOK) ? operand(g, t) : -1;
    }
}

static int st_operand(sq_gram_t *g, const sq_tok_t *t)
{
    switch (t->cls) {
    case SQ_NUM: case SQ_STR: case SQ_QIDENT: case SQ_WORD: case SQ_VAR: case SQ_LIT:
        return operand(g, t);
    case SQ_FUNC:
        g->func_flags = t->flags;
        g->st = G_FUNC;
        g->first_seen = 1;
        return 0;
    case SQ_LPAR:
        return push(g, LV_PAREN);
    case SQ_OP:
        if (t->flags & SQF_UNARY)
            return 0;
        if ((t->flags & SQF_STAR) && (g->clause == CL_SELECT || g->just_opened))
            return operand(g, t);
        return -1;
    case SQ_NOT:
        return 0;
    case SQ_CMP:
        if (!(t->flags & SQF_PAREN))
            return -1;
        g->func_flags = SQF_KNOWN;    /* like(..), glob(..): SQLite functions */
        g->st = G_FUNC;
        return 0;
    case SQ_SELECT:
        if (!g->just_opened || top_kind(g) != LV_PAREN)
            return -1;
        g->lvl[g->depth - 1].kind = LV_SUBQ;
        return start_select(g, BW_SQLI_EV_SUBQUERY);
    case SQ_KW:
        return operand_keyword(g, t);
    case SQ_RPAR:
        return empty_call(g);
    default:
        return -1;
    }
}

static int close_paren(sq_gram_t *g)
{
    if (g->depth > 0) {
        sq_level_t *lv = &g->lvl[--g->depth];
        if (lv->kind == LV_CASE)
            return -1;
        g->clause = lv->clause;
        g->st = G_AFTER;
        g->alias_used = 0;
        return 0;
    }
    if (g->opened)
        return -1;
    if (g->closers < 255)
        g->closers++;             /* closes a parenthesis of the application */
    return 0;
}

/* A comment running to the end, in a state where the SQL is complete. */
static int comment_end(sq_gram_t *g, const sq_tok_t *t)
{
    if (asis(g)) {
        if (g->sens_start)
            return ev(g, BW_SQLI_EV_CALL) ? 1 : -1;
        if (!(g->logic || g->cmp_done || g->closers))
            return -1;
    } else if ((t->flags & SQF_CMTWORD) && g->ntok == g->closers) {
        return -1;                /* '--force', '#tag': text, not a cut */
    }
    return ev(g, BW_SQLI_EV_COMMENT) ? 1 : -1;
}

static int after_keyword(sq_gram_t *g, const sq_tok_t *t)
{
    g->st = G_OPERAND;
    switch (t->kw) {
    case KW_FROM: g->clause = CL_FROM; return 0;
    case KW_WHERE: case KW_ON: g->clause = CL_EXPR; return 0;
    case KW_HAVING: g->clause = CL_EXPR; g->clause_ev = 1; return 0;
    case KW_LIMIT: case KW_OFFSET: g->clause_ev = 1; return 0;
    case KW_ESCAPE: return 0;
    case KW_GROUP: case KW_ORDER: g->st = G_BY; return 0;
    case KW_INTO: g->st = G_INTO; return 0;
    case KW_PROCEDURE: g->st = G_PROC; return 0;
    case KW_AS: case KW_COLLATE: g->st = G_ALIAS; return 0;
    case KW_ASC: g->st = G_AFTER; return 0;
    case KW_JOIN: g->clause = CL_FROM; g->st = G_JOIN; return 0;
    case KW_WHEN: case KW_THEN: case KW_ELSE:
        return top_kind(g) == LV_CASE ? 0 : -1;
    case KW_END:
        if (top_kind(g) != LV_CASE)
            return -1;
        g->clause = g->lvl[--g->depth].clause;
        g->st = G_AFTER;
        return 0;
    default:
        return -1;
    }
}

/* Right at the breakout (after the closing quote and any ")", or after the
 * first operand of the as-is context), a blank before "(", a call or a
 * variable stands for an operator: t:urlDecodeUni turns the "+" of
 * "'+(select 1)+'" into a blank before the value reaches the operator. */
static int implicit_op(const sq_gram_t *g, const sq_tok_t *t)
{
    unsigned at = asis(g) ? 1u : g->closers;
    if (g->ntok != at || t->pos == 0)
        return 0;
    if (t->cls != SQ_LPAR && t->cls != SQ_FUNC && t->cls != SQ_VAR)
        return 0;
    return g->s[t->pos - 1] == ' ';
}

static int st_after(sq_gram_t *g, const sq_tok_t *t)
{
    if (implicit_op(g, t)) {
        g->st = G_OPERAND;
        return st_operand(g, t);
    }
    switch (t->cls) {
    case SQ_CMP:
        if (t->kw == KW_POSTFIX) {            /* x NOTNULL: complete already */
            g->cmp_done = 1;
            return (g->logic && ev(g, BW_SQLI_EV_COND)) ? 1 : 0;
        }
        g->st = t->kw == KW_SOUNDS ? G_NEEDCMP : G_OPERAND;
        g->cmp_pending = t->kw != KW_SOUNDS;
        return 0;
    case SQ_OP:
        g->st = (t->flags & SQF_CAST) ? G_CAST : G_OPERAND;
        return 0;
    case SQ_LOGIC: g->logic = 1; g->st = G_OPERAND; return 0;
    case SQ_NOT: g->st = G_NEEDCMP; return 0;
    case SQ_RPAR: return close_paren(g);
    case SQ_COMMA: g->st = G_OPERAND; return 0;
    case SQ_SEMI: g->st = G_STMT; return 0;
    case SQ_UNION:
        g->st = G_UNION;
        g->union_num = g->prev == SQ_NUM;
        return 0;
    case SQ_CMT: return comment_end(g, t);
    case SQ_DOT:
        if (g->prev != SQ_WORD && g->prev != SQ_QIDENT && g->prev != SQ_VAR)
            return -1;
        g->st = G_DOT;
        return 0;
    case SQ_STR:
        if (g->prev == SQ_STR)
            return 0;             /* 'a' 'b' is one string in SQL */
        /* fall through */
    case SQ_WORD: case SQ_QIDENT:
        if ((g->clause == CL_SELECT || g->clause == CL_FROM) && !g->alias_used) {
            g->alias_used = 1;
            return 0;
        }
        return -1;
    case SQ_KW: return after_keyword(g, t);
    case SQ_STMT: return begin_stmt(g, t, BW_SQLI_EV_STACK, 1);
    case SQ_FUNC:
        /* x" sleep(10) ": a sensitive call right where the literal closed */
        if (!(t->flags & SQF_SENSITIVE) || g->ntok != g->closers)
            return -1;
        g->func_flags = t->flags;
        g->st = G_FUNC;
        return 0;
    default:
        return -1;
    }
}

static int st_func(sq_gram_t *g, const sq_tok_t *t)
{
    if (t->cls != SQ_LPAR || push(g, LV_FUNC) < 0)
        return -1;
    g->lvl[g->depth - 1].sens = (g->func_flags & SQF_SENSITIVE) != 0;
    g->lvl[g->depth - 1].first = g->ntok == 1;
    g->sens_arg = g->lvl[g->depth - 1].sens;
    if (g->logic && (g->func_flags & SQF_KNOWN))
        return ev(g, BW_SQLI_EV_COND);
    return 0;
}

/* After UNION (EXCEPT, INTERSECT). Behind a comment (the comment-glued
 * context) a number, the set operator and ALL, DISTINCT or SELECT are the
 * head of a set operation already: the rest of a path may cut off what
 * follows ("/x/" comment "2 union all/bar"). */
static int st_union(sq_gram_t *g, const sq_tok_t *t)
{
    int all = t->cls == SQ_KW && (t->kw == KW_ALL || t->kw == KW_DISTINCT);

    if ((all || t->cls == SQ_SELECT) && g->ctx == BW_SQLI_CTX_GLUED && g->union_num
        && g->prev == SQ_UNION && ev(g, BW_SQLI_EV_UNION | EV_WEAK))
        return 1;
    if (all)
        return 0;
    if (t->cls == SQ_SELECT)
        return start_select(g, BW_SQLI_EV_UNION);
    return t->cls == SQ_LPAR ? push(g, LV_PAREN) : -1;
}

/* The small states: one or two tokens each. */
static int st_misc(sq_gram_t *g, const sq_tok_t *t)
{
    switch (g->st) {
    case G_STMT:
        if (t->cls == SQ_SELECT)
            return start_select(g, BW_SQLI_EV_STACK);
        if (t->cls == SQ_STMT)
            return begin_stmt(g, t, BW_SQLI_EV_STACK, 0);
        if (t->cls == SQ_CMT)
            return comment_end(g, t);
        return t->cls == SQ_SEMI ? 0 : -1;
    case G_UNION:
        return st_union(g, t);
    case G_BY:
        if (t->cls != SQ_KW || t->kw != KW_BY)
            return -1;
        g->clause = CL_LIST;
        g->clause_ev = 1;
        g->st = G_OPERAND;
        return 0;
    case G_ALIAS: case G_DOT: case G_JOIN: case G_CAST:
        if (is_name(t) || t->cls == SQ_STR || (g->st == G_DOT && (t->flags & SQF_STAR))) {
            g->alias_used = g->st == G_ALIAS;
            g->st = G_AFTER;
            return 0;
        }
        if (g->st == G_DOT && t->cls == SQ_FUNC)
            return st_operand(g, t);
        if (g->st == G_JOIN && t->cls == SQ_KW && t->kw == KW_JOIN)
            return 0;
        return (g->st == G_JOIN && t->cls == SQ_LPAR) ? push(g, LV_PAREN) : -1;
    case G_NEEDCMP:
        return t->cls == SQ_CMP ? st_after(g, t) : -1;
    case G_INTO:
        if (t->cls == SQ_KW && t->kw == KW_OUTFILE) {
            g->st = G_INTOFILE;
            return 0;
        }
        return (t->cls == SQ_VAR || is_name(t)) ? (g->st = G_AFTER, 0) : -1;
    case G_INTOFILE:       /* INTO OUTFILE '..' writes files: any start */
        return t->cls == SQ_STR && ev(g, BW_SQLI_EV_CLAUSE | EV_FORCE) ? 1 : -1;
    default:  /* G_PROC */
        if (t->cls != SQ_FUNC)
            return -1;
        return ev(g, BW_SQLI_EV_CLAUSE) ? 1 : st_operand(g, t);
    }
}

/* One token: 1 = evidence found, 0 = still valid SQL, -1 = not SQL here. */
static int step(sq_gram_t *g, const sq_tok_t *t)
{
    int r, was_sens = g->sens_arg;

    g->sens_arg = 0;
    fp_push(g, t->cls);
    if (t->cls == SQ_BAD)
        return -1;
    if (g->sel != SEL_NONE && (r = sel_step(g, t)) != 0)
        return r;
    if (g->stmt_seq != NULL)
        r = stmt_step(g, t);
    else if (g->st == G_OPERAND)
        r = st_operand(g, t);
    else if (g->st == G_AFTER)
        r = st_after(g, t);
    else if (g->st == G_FUNC)
        r = st_func(g, t);
    else
        r = st_misc(g, t);
    if (r == 0 && was_sens && t->cls != SQ_RPAR && ev(g, BW_SQLI_EV_CALL))
        r = 1;
    g->just_opened = t->cls == SQ_LPAR;
    g->prev = t->cls;
    g->prev_kw = t->kw;
    g->ntok++;
    return r;
}

/* The value ended while the walk was still valid. */
static int finish(sq_gram_t *g)
{
    if (g->stmt_seq != NULL && g->stmt_seq[0] == 'E' && g->stmt_seq[1] == '\0')
        return ev(g, g->stmt_ev);
    if (g->sel == SEL_TABLE)
        return ev(g, g->sel_ev);
    if (g->sens_start && g->ntok > 0)
        return ev(g, BW_SQLI_EV_CALL);  /* exactly version(), @@version */
    return 0;
}

int sq_walk(const unsigned char *s, size_t len, size_t start, int ctx,
            bw_sqli_result_t *res)
{
    sq_gram_t g;
    sq_lex_t lx;
    sq_tok_t t;
    int r = 0;

    memset(&g, 0, sizeof(g));
    g.s = s;
    g.ctx = ctx;
    if (asis(&g)) {
        g.st = G_OPERAND;
    } else {
        g.st = G_AFTER;
        g.first_seen = 1;
        g.prev = ctx == BW_SQLI_CTX_BACKTICK ? SQ_QIDENT : SQ_STR;
        fp_push(&g, g.prev);
    }
    sq_lex_init(&lx, s, len, start);
    while (r == 0 && sq_lex_next(&lx, &t))
        r = step(&g, &t);
    if (r == 0)
        r = finish(&g);
    if (r != 1)
        return 0;
    if (res != NULL) {
        memcpy(res->fingerprint, g.fp, g.fplen);
        res->fingerprint[g.fplen] = '\0';
        res->context = ctx;
        res->evidence = g.ev;
    }
    return 1;
}
