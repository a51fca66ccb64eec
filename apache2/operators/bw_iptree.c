/*
 * IP prefix set (see bw_iptree.h). Each tree node holds a whole prefix
 * (address bytes + length), so a chain of single-child nodes never exists:
 * n blocks make at most 2n nodes whatever the prefix lengths, which keeps
 * large IP lists (@ipMatchFromFile) small. A node is "terminal" when its
 * own prefix was added; a lookup succeeds at the first terminal node whose
 * prefix covers the address.
 */
#include <string.h>
#include <arpa/inet.h>
#include "bw_iptree.h"

#define IP_MAXBYTES 16
#define IP_TEXT_MAX 64      /* longer text cannot be an address */

typedef struct ip_node_s {
    unsigned char key[IP_MAXBYTES];  /* bits past plen are zero */
    unsigned plen;
    int terminal;
    struct ip_node_s *child[2];
} ip_node_t;

struct bw_iptree_s {
    apr_pool_t *pool;
    ip_node_t *root[2];     /* [0] IPv4 (32 bits), [1] IPv6 (128 bits) */
    size_t count;
};

bw_iptree_t *bw_iptree_create(apr_pool_t *pool)
{
    bw_iptree_t *t = apr_pcalloc(pool, sizeof(*t));
    t->pool = pool;
    t->root[0] = apr_pcalloc(pool, sizeof(ip_node_t));
    t->root[1] = apr_pcalloc(pool, sizeof(ip_node_t));
    return t;
}

size_t bw_iptree_count(const bw_iptree_t *t)
{
    return t->count;
}

static unsigned bit_at(const unsigned char *a, unsigned i)
{
    return (a[i / 8] >> (7 - i % 8)) & 1u;
}

/* Number of leading bits a and b share, at most max. */
static unsigned common_bits(const unsigned char *a, const unsigned char *b, unsigned max)
{
    unsigned i = 0;
    while (i < max) {
        unsigned char x = (unsigned char)(a[i / 8] ^ b[i / 8]);
        if (i % 8 == 0 && x == 0) {
            i += 8;
            continue;
        }
        if (bit_at(a, i) != bit_at(b, i))
            break;
        i++;
    }
    return i < max ? i : max;
}

static void mask_bits(unsigned char *a, unsigned plen)
{
    unsigned i;
    for (i = plen; i < IP_MAXBYTES * 8; i++)
        a[i / 8] &= (unsigned char)~(0x80u >> (i % 8));
}

static ip_node_t *new_node(apr_pool_t *p, const unsigned char *key, unsigned plen, int term)
{
    ip_node_t *n = apr_pcalloc(p, sizeof(*n));
    memcpy(n->key, key, IP_MAXBYTES);
    mask_bits(n->key, plen);
    n->plen = plen;
    n->terminal = term;
    return n;
}

/* Insert key/klen below root; see the file comment for the invariants. */
static void tree_insert(apr_pool_t *p, ip_node_t *node, const unsigned char *key, unsigned klen)
{
    for (;;) {
        unsigned b, cp;
        ip_node_t *c, *m;

        if (node->plen == klen) {
            node->terminal = 1;
            return;
        }
        b = bit_at(key, node->plen);
        c = node->child[b];
        if (c == NULL) {
            node->child[b] = new_node(p, key, klen, 1);
            return;
        }
        cp = common_bits(key, c->key, klen < c->plen ? klen : c->plen);
        if (cp == c->plen) {
            node = c;
            continue;
        }
        /* Split: a new node for the shared part takes c's place. */
        m = new_node(p, key, cp, cp == klen);
        m->child[bit_at(c->key, cp)] = c;
        if (cp < klen)
            m->child[bit_at(key, cp)] = new_node(p, key, klen, 1);
        node->child[b] = m;
        return;
    }
}

int bw_ip_parse(bw_str_t s, unsigned char out[16])
{
    char buf[IP_TEXT_MAX];

    if (s.len == 0 || s.len >= sizeof(buf) || memchr(s.data, '\0', s.len))
        return -1;
    memcpy(buf, s.data, s.len);
    buf[s.len] = '\0';
    memset(out, 0, IP_MAXBYTES);
    if (memchr(buf, ':', s.len))
        return inet_pton(AF_INET6, buf, out) == 1 ? 1 : -1;
    return inet_pton(AF_INET, buf, out) == 1 ? 0 : -1;
}

/* Strict decimal prefix length, 0..max. */
static int parse_plen(bw_str_t s, unsigned max, unsigned *out)
{
    unsigned v = 0;
    size_t i;

    if (s.len == 0 || s.len > 3)
        return -1;
    for (i = 0; i < s.len; i++) {
        if (s.data[i] < '0' || s.data[i] > '9')
            return -1;
        v = v * 10 + (unsigned)(s.data[i] - '0');
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

int bw_iptree_add(bw_iptree_t *t, bw_str_t spec, const char **why)
{
    unsigned char key[IP_MAXBYTES];
    const char *slash = memchr(spec.data, '/', spec.len);
    bw_str_t addr = spec;
    unsigned bits, plen;
    int fam;

    if (slash)
        addr.len = (size_t)(slash - spec.data);
    fam = bw_ip_parse(addr, key);
    if (fam < 0) {
        *why = "invalid IP address";
        return -1;
    }
    bits = fam == 0 ? 32 : 128;
    plen = bits;
    if (slash) {
        bw_str_t pl = bw_str_n(slash + 1, spec.len - addr.len - 1);
        if (parse_plen(pl, bits, &plen) < 0) {
            *why = fam == 0 ? "invalid IPv4 prefix length (0-32)"
                            : "invalid IPv6 prefix length (0-128)";
            return -1;
        }
    }
    mask_bits(key, plen);
    tree_insert(t->pool, t->root[fam], key, plen);
    t->count++;
    return 0;
}

int bw_iptree_contains(const bw_iptree_t *t, bw_str_t addr)
{
    unsigned char key[IP_MAXBYTES];
    const ip_node_t *n;
    unsigned bits;
    int fam = bw_ip_parse(addr, key);

    if (fam < 0)
        return -1;
    bits = fam == 0 ? 32 : 128;
    n = t->root[fam];
    while (n) {
        if (n->terminal)
            return 1;
        if (n->plen >= bits)
            return 0;
        n = n->child[bit_at(key, n->plen)];
        if (n && common_bits(key, n->key, n->plen) < n->plen)
            return 0;
    }
    return 0;
}
