/*
 * What unit tests that read data files share: writing a file the test
 * needs (a rule file, a hash list, a schema) into its temporary directory.
 */
#ifndef TEST_FILES_H
#define TEST_FILES_H

#include <check.h>
#include <stdio.h>
#include <apr_strings.h>

/* Writes text to dir/name (created or truncated) and returns the path, in
 * pool; a file that cannot be written fails the running test. */
static inline const char *tu_write_file(apr_pool_t *pool, const char *dir, const char *name,
                                        const char *text)
{
    const char *path = apr_pstrcat(pool, dir, "/", name, NULL);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#endif /* TEST_FILES_H */
