/*
 * The differential test of the detectors' fast paths (detect_diff.c), its
 * random inputs (detect_gen.c) and its benchmark mode (detect_bench.c).
 */
#ifndef DETECT_DIFF_H
#define DETECT_DIFF_H

#include <stdint.h>
#include "base/bw_types.h"

/* One detector under test: its fast path, the detector as the operator
 * calls it (on) and without the fast path (off); res points to a result
 * of res_size bytes. */
typedef struct {
    const char *name;
    int (*fast)(bw_str_t v);
    int (*on)(bw_str_t v, void *res);
    int (*off)(bw_str_t v, void *res);
    size_t res_size;
} dd_detector_t;

#define DD_NDETECTORS 2
#define DD_RES_MAX 64           /* bytes; at least the largest res_size */
extern const dd_detector_t dd_detectors[DD_NDETECTORS];

/* The random generator: splitmix64, fixed seed, same stream everywhere. */
typedef struct {
    uint64_t s;
} dd_rng_t;

uint64_t dd_rand(dd_rng_t *r);

/* One random value into buf (at most cap bytes), its length returned:
 * words, numbers and separators the fast paths accept with one or two
 * bytes that they do not slipped in, mutations of a corpus value (corpus:
 * bw_str_t), or plain random bytes. */
size_t dd_gen(dd_rng_t *r, const apr_array_header_t *corpus, unsigned char *buf, size_t cap);

/* Every line of each file of the benign corpus (the .txt files of tests/detect/benign),
 * appended to out (bw_str_t, pool memory). Returns the files read. */
int dd_load_benign(apr_pool_t *p, const char *srcdir, apr_array_header_t *out);

/* The benchmark: ns per value with and without the fast paths on the
 * benign corpus and on the arguments of a 27 KB JSON request body, and
 * the share of values the fast paths settle. Returns 0, 1 on missing data. */
int dd_bench(apr_pool_t *p, const char *srcdir, int rounds);

#endif /* DETECT_DIFF_H */
