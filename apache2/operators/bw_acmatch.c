/*
 * Aho-Corasick automaton (see bw_acmatch.h for the contract).
 *
 * Layout chosen for memory and cache: a full DFA (256 transitions a state)
 * would cost ~1 KB per state and the CRS phrase files alone make tens of
 * thousands of states, so each state keeps only its goto edges, sorted, in
 * one flat array, plus a failure link. The root, where a scan spends most of
 * its time, has a full 256-entry table. Case folding is a 256-byte table
 * applied to both patterns and text, so nocase costs one lookup per byte.
 *
 * While patterns are added, the trie is kept as first-child/next-sibling
 * lists in APR arrays; bw_ac_compile() turns it into the flat form.
 */
#include <string.h>
#include "bw_acmatch.h"

#define AC_ROOT 0
#define AC_NONE (-1)
#define AC_LINEAR_EDGES 8   /* below this many edges a linear scan wins */

/* Trie node while building. */
typedef struct {
    int32_t first_child;
    int32_t next_sibling;
    int32_t out;            /* first pattern ending here, or AC_NONE */
    unsigned char byte;
} ac_bnode_t;

/* Compiled state. */
typedef struct {
    int32_t fail;           /* longest proper suffix that is a state */
    int32_t dict;           /* nearest state on the fail chain with output */
    int32_t out;            /* first pattern ending here, or AC_NONE */
    uint32_t edge_start;    /* edges[edge_start .. edge_start+nedges) */
    uint32_t nedges;
} ac_state_t;

typedef struct {
    bw_str_t str;           /* as added */
    int id;
    int32_t next_same;      /* next pattern ending in the same state */
} ac_pattern_t;

struct bw_ac_s {
    apr_pool_t *pool;
    int compiled;
    unsigned char fold[256];
    apr_array_header_t *bnodes;     /* ac_bnode_t, build phase */
    apr_array_header_t *patterns;   /* ac_pattern_t */
    /* compiled form */
    ac_state_t *states;
    unsigned char *edge_byte;
    int32_t *edge_target;
    int32_t root_next[256];
};

bw_ac_t *bw_ac_create(apr_pool_t *pool, int nocase)
{
    bw_ac_t *ac = apr_pcalloc(pool, sizeof(*ac));
    ac_bnode_t *root;
    int c;

    ac->pool = pool;
    for (c = 0; c < 256; c++)
        ac->fold[c] = (unsigned char)((nocase && c >= 'A' && c <= 'Z') ? c + 32 : c);
    ac->bnodes = apr_array_make(pool, 64, sizeof(ac_bnode_t));
    ac->patterns = apr_array_make(pool, 16, sizeof(ac_pattern_t));
    root = apr_array_push(ac->bnodes);
    root->first_child = AC_NONE;
    root->next_sibling = AC_NONE;
    root->out = AC_NONE;
    root->byte = 0;
    return ac;
}

size_t bw_ac_count(const bw_ac_t *ac)
{
    return (size_t)ac->patterns->nelts;
}

bw_str_t bw_ac_pattern(const bw_ac_t *ac, size_t i)
{
    return ((const ac_pattern_t *)ac->patterns->elts)[i].str;
}

int bw_ac_nocase(const bw_ac_t *ac)
{
    return ac->fold['A'] == 'a';
}

/* Child of node n on byte c, creating it when create is set. */
static int32_t build_child(bw_ac_t *ac, int32_t n, unsigned char c)
{
    ac_bnode_t *nodes = (ac_bnode_t *)ac->bnodes->elts;
    int32_t k, id;
    ac_bnode_t *nn;

    for (k = nodes[n].first_child; k != AC_NONE; k = nodes[k].next_sibling)
        if (nodes[k].byte == c)
            return k;
    id = ac->bnodes->nelts;
    nn = apr_array_push(ac->bnodes);   /* may move elts */
    nodes = (ac_bnode_t *)ac->bnodes->elts;
    nn->first_child = AC_NONE;
    nn->next_sibling = nodes[n].first_child;
    nn->out = AC_NONE;
    nn->byte = c;
    nodes[n].first_child = id;
    return id;
}

int bw_ac_add(bw_ac_t *ac, bw_str_t pattern, int id)
{
    int32_t n = AC_ROOT, pi, *link;
    ac_pattern_t *pat, *pats;
    size_t i;

    if (ac->compiled || pattern.len == 0)
        return -1;
    for (i = 0; i < pattern.len; i++)
        n = build_child(ac, n, ac->fold[(unsigned char)pattern.data[i]]);

    pi = ac->patterns->nelts;
    pat = apr_array_push(ac->patterns);
    pat->str = bw_str_n(bw_str_pdup(ac->pool, pattern), pattern.len);
    pat->id = id;
    pat->next_same = AC_NONE;

    /* Append, so that equal patterns are reported in the order added. */
    pats = (ac_pattern_t *)ac->patterns->elts;
    link = &((ac_bnode_t *)ac->bnodes->elts)[n].out;
    while (*link != AC_NONE)
        link = &pats[*link].next_same;
    *link = pi;
    return 0;
}

/* Goto edge of compiled state s on byte c, or AC_NONE. */
static int32_t find_edge(const bw_ac_t *ac, int32_t s, unsigned char c)
{
    const ac_state_t *st = &ac->states[s];
    const unsigned char *b = ac->edge_byte + st->edge_start;
    uint32_t lo = 0, hi = st->nedges;

    if (hi < AC_LINEAR_EDGES) {
        for (; lo < hi; lo++)
            if (b[lo] == c)
                return ac->edge_target[st->edge_start + lo];
        return AC_NONE;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b[mid] == c)
            return ac->edge_target[st->edge_start + mid];
        if (b[mid] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return AC_NONE;
}

/* The full transition function: follow failure links until an edge exists. */
static int32_t step(const bw_ac_t *ac, int32_t s, unsigned char c)
{
    for (;;) {
        int32_t t;
        if (s == AC_ROOT)
            return ac->root_next[c];
        t = find_edge(ac, s, c);
        if (t != AC_NONE)
            return t;
        s = ac->states[s].fail;
    }
}

/* Write node n's children as sorted edges at *next_edge; queue them. */
static void flatten_node(bw_ac_t *ac, int32_t n, uint32_t *next_edge,
                         int32_t *queue, int32_t *qtail)
{
    const ac_bnode_t *nodes = (const ac_bnode_t *)ac->bnodes->elts;
    uint32_t start = *next_edge, cnt = 0, i;
    int32_t k;

    for (k = nodes[n].first_child; k != AC_NONE; k = nodes[k].next_sibling) {
        /* insertion sort by byte: nodes rarely have many children */
        i = start + cnt;
        while (i > start && ac->edge_byte[i - 1] > nodes[k].byte) {
            ac->edge_byte[i] = ac->edge_byte[i - 1];
            ac->edge_target[i] = ac->edge_target[i - 1];
            i--;
        }
        ac->edge_byte[i] = nodes[k].byte;
        ac->edge_target[i] = k;
        cnt++;
        queue[(*qtail)++] = k;
    }
    ac->states[n].edge_start = start;
    ac->states[n].nedges = cnt;
    ac->states[n].out = nodes[n].out;
    *next_edge = start + cnt;
}

int bw_ac_compile(bw_ac_t *ac)
{
    int32_t nstates = ac->bnodes->nelts, qhead = 0, qtail = 0, *queue;
    uint32_t next_edge = 0, e;
    int c;

    if (ac->compiled)
        return -1;
    ac->states = apr_pcalloc(ac->pool, sizeof(ac_state_t) * (size_t)nstates);
    ac->edge_byte = apr_palloc(ac->pool, (size_t)nstates);
    ac->edge_target = apr_palloc(ac->pool, sizeof(int32_t) * (size_t)nstates);
    queue = apr_palloc(ac->pool, sizeof(int32_t) * (size_t)nstates);

    /* Breadth-first, so every state's failure target (shallower) is done
     * before the state itself. */
    queue[qtail++] = AC_ROOT;
    while (qhead < qtail)
        flatten_node(ac, queue[qhead++], &next_edge, queue, &qtail);

    for (c = 0; c < 256; c++)
        ac->root_next[c] = AC_ROOT;
    for (e = 0; e < ac->states[AC_ROOT].nedges; e++)
        ac->root_next[ac->edge_byte[e]] = ac->edge_target[e];
    ac->states[AC_ROOT].fail = AC_ROOT;
    ac->states[AC_ROOT].dict = AC_NONE;

    for (qhead = 0; qhead < qtail; qhead++) {
        int32_t u = queue[qhead];
        const ac_state_t *su = &ac->states[u];
        for (e = su->edge_start; e < su->edge_start + su->nedges; e++) {
            int32_t v = ac->edge_target[e], f;
            f = (u == AC_ROOT) ? AC_ROOT : step(ac, su->fail, ac->edge_byte[e]);
            ac->states[v].fail = f;
            ac->states[v].dict = ac->states[f].out != AC_NONE ? f : ac->states[f].dict;
        }
    }
    ac->compiled = 1;
    return 0;
}

void bw_ac_iter_init(bw_ac_iter_t *it, const bw_ac_t *ac, bw_str_t text)
{
    it->ac = ac;
    it->text = text;
    it->pos = 0;
    it->state = AC_ROOT;
    it->out_state = AC_NONE;
    it->out_pat = AC_NONE;
}

/* Report pattern it->out_pat (ending at it->pos) and advance the cursor
 * through the same-state list, then along the dictionary chain. */
static void emit(bw_ac_iter_t *it, bw_ac_match_t *m)
{
    const bw_ac_t *ac = it->ac;
    const ac_pattern_t *p = &((const ac_pattern_t *)ac->patterns->elts)[it->out_pat];

    m->id = p->id;
    m->len = p->str.len;
    m->offset = it->pos - p->str.len;
    m->pattern = p->str;
    it->out_pat = p->next_same;
    if (it->out_pat == AC_NONE) {
        it->out_state = ac->states[it->out_state].dict;
        if (it->out_state != AC_NONE)
            it->out_pat = ac->states[it->out_state].out;
    }
}

int bw_ac_next(bw_ac_iter_t *it, bw_ac_match_t *m)
{
    const bw_ac_t *ac = it->ac;
    const unsigned char *t = (const unsigned char *)it->text.data;

    if (!ac->compiled)
        return 0;
    for (;;) {
        if (it->out_pat != AC_NONE) {
            emit(it, m);
            return 1;
        }
        if (it->pos >= it->text.len)
            return 0;
        it->state = step(ac, it->state, ac->fold[t[it->pos]]);
        it->pos++;
        it->out_state = ac->states[it->state].out != AC_NONE
                        ? it->state : ac->states[it->state].dict;
        if (it->out_state != AC_NONE)
            it->out_pat = ac->states[it->out_state].out;
    }
}

int bw_ac_search(const bw_ac_t *ac, bw_str_t text, bw_ac_match_t *m)
{
    bw_ac_iter_t it;
    bw_ac_iter_init(&it, ac, text);
    return bw_ac_next(&it, m);
}
