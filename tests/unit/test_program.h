/*
 * For the unit tests of external programs (test_spawn.c, test_engine.c):
 * writing a small shell script to run. Check tests only.
 */
#ifndef BW_TEST_PROGRAM_H
#define BW_TEST_PROGRAM_H

#include <check.h>
#include <stdio.h>
#include <sys/stat.h>
#include <apr_strings.h>

/* dir/name holding "#!/bin/sh" and body, executable; returns its path. */
static inline const char *test_program(apr_pool_t *p, const char *dir, const char *name,
                                       const char *body)
{
    const char *path = apr_pstrcat(p, dir, "/", name, NULL);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    ck_assert_int_eq(chmod(path, 0755), 0);
    return path;
}

#endif /* BW_TEST_PROGRAM_H */
