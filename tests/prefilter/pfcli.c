/*
 * Development driver for the @rx literal prefilter: prints the literal set
 * (or the reason there is none) of each regex given as an argument, or of
 * each line of standard input. Options: -i (caseless), -m N (min length).
 * Not part of the test command.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prefilter/bw_prefilter.h"

static void show(apr_pool_t *p, const char *pat, size_t len, int caseless, size_t min_len)
{
    apr_array_header_t *lits = NULL;
    int nocase = 0, i;
    const char *why = NULL;

    if (!bw_prefilter_extract_ex(p, pat, len, caseless, min_len, &lits, &nocase, &why)) {
        printf("ALWAYS (%s)\t%.*s\n", why, (int)(len > 200 ? 200 : len), pat);
        return;
    }
    printf("%d%s:", lits->nelts, nocase ? " nocase" : "");
    for (i = 0; i < lits->nelts; i++) {
        bw_str_t s = APR_ARRAY_IDX(lits, i, bw_str_t);
        size_t k;
        printf(" \"");
        for (k = 0; k < s.len; k++) {
            unsigned char c = (unsigned char)s.data[k];
            printf(c < 0x20 || c >= 0x7f || c == '\\' || c == '"' ? "\\x%02x" : "%c", c);
        }
        printf("\"");
    }
    printf("\t%.*s\n", (int)(len > 200 ? 200 : len), pat);
}

int main(int argc, char **argv)
{
    apr_pool_t *p;
    int i, caseless = 0;
    size_t min_len = 1;
    char line[65536];

    apr_initialize();
    apr_pool_create(&p, NULL);
    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "-i"))
            caseless = 1;
        else if (!strcmp(argv[i], "-m") && i + 1 < argc)
            min_len = (size_t)atoi(argv[++i]);
    }
    if (i < argc) {
        for (; i < argc; i++)
            show(p, argv[i], strlen(argv[i]), caseless, min_len);
    } else {
        while (fgets(line, sizeof line, stdin)) {
            size_t n = strlen(line);
            if (n && line[n - 1] == '\n')
                line[--n] = '\0';
            show(p, line, n, caseless, min_len);
        }
    }
    apr_pool_destroy(p);
    apr_terminate();
    return 0;
}
