/*
 * How common each byte is in benign request data, for choosing byte gates
 * (bw_prefilter_gate): the rarer a gate's bytes, the fewer values a scan
 * has to look at. Counted by us over the benign corpora of this repository
 * (tests/detect/benign/, tests/prefilter/benign.txt: prose, code, URLs,
 * JSON, names, numbers), in 1/10000 of all bytes and rounded, then raised
 * for what names and values of APIs are made of: letters, digits, space,
 * '.', '_' and '-' are in almost every value, so a gate made of them spares
 * nothing and they count 1000. A byte never seen counts 1. Only the order
 * matters: a wrong weight makes a gate less useful, never wrong.
 */
#include "pf_internal.h"

#define ALWAYS 1000   /* in almost every value */

static unsigned short weight[256];

static const struct { unsigned char c; unsigned short w; } seen[] = {
    { '\t', 20 }, { '\n', 20 }, { '\r', 5 }, { '!', 11 }, { '"', 91 }, { '#', 5 }, { '$', 3 },
    { '%', 9 }, { '&', 6 }, { '\'', 69 }, { '(', 19 }, { ')', 19 }, { '*', 5 }, { '+', 16 },
    { ',', 91 }, { '/', 129 }, { ':', 58 }, { ';', 22 }, { '<', 17 }, { '=', 37 }, { '>', 19 },
    { '?', 22 }, { '@', 18 }, { '[', 5 }, { '\\', 5 }, { ']', 5 }, { '^', 2 }, { '`', 4 },
    { '{', 17 }, { '|', 2 }, { '}', 17 }, { '~', 1 }
};

/* The table, filled on first use (idempotent: threads racing write the
 * same values). */
static void fill(void)
{
    unsigned c;
    size_t i;
    for (c = 0; c < 256; c++)
        weight[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                    || c == ' ' || c == '.' || c == '_' || c == '-' ? ALWAYS
                  : c >= 0x80 ? 20 : 1;
    for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
        weight[seen[i].c] = seen[i].w;
}

unsigned pf_byte_weight(unsigned char c, int fold)
{
    if (!weight['a'])
        fill();
    return weight[c];
}
