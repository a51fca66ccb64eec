/*
 * Running an external program the way a rule asks (@inspectFile, exec):
 * posix_spawn without a shell, in a process group of its own, stdin from
 * /dev/null, stdout and stderr through one pipe read with a deadline and
 * a size limit, every other descriptor of the web server closed. The
 * caller always gets the program back reaped: on the deadline or past the
 * limit its whole process group is killed (SIGKILL) and waited for.
 *
 * It sits in base, not run, because @inspectFile runs the program from an
 * operator (a kind, below run) and exec from the executor: both need it,
 * and it needs nothing of the engine but APR pools and bw_str_t.
 */
#ifndef BW_SPAWN_H
#define BW_SPAWN_H

#include "base/bw_types.h"

/* What Bulwark reads of a program's output at most, when the caller does
 * not say: the result line of a scanner is short, and a program that
 * writes more is stopped rather than read without end. */
#define BW_SPAWN_MAX_OUTPUT 65536

/* SecExternalProgramTimeout's default, in seconds (see README). */
#define BW_SPAWN_DEFAULT_TIMEOUT 30

typedef struct bw_spawn_limits_s {
    apr_interval_time_t timeout;   /* wall time from start to exit; <= 0: 1 s */
    apr_size_t max_output;         /* bytes of stdout+stderr kept; 0: BW_SPAWN_MAX_OUTPUT */
} bw_spawn_limits_t;

typedef struct bw_spawn_result_s {
    int exited;            /* 1: exit_code is the program's exit status */
    int exit_code;
    int signal;            /* the signal that ended it (0: none) */
    int timed_out;         /* it was still running at the deadline: killed */
    int truncated;         /* it wrote more than max_output: killed */
    bw_str_t output;       /* what it wrote, at most max_output bytes */
} bw_spawn_result_t;

/* What a transaction hands the code that runs a program for it: the
 * limits in force and the program's environment, built when needed (the
 * transaction's variables change between two runs). */
typedef struct bw_spawn_ctx_s {
    bw_spawn_limits_t lim;
    const char *const *(*env)(void *baton);   /* NULL-terminated "NAME=value" */
    void *baton;
} bw_spawn_ctx_t;

/* Run argv[0] (an absolute path) with argv and envp (NULL-terminated; envp
 * NULL: an empty environment). Memory comes from pool. Returns 0 when the
 * program ran (res filled, whatever its exit), -1 when it could not be
 * started or waited for, *err saying why ("cannot run /x: No such file"). */
int bw_spawn_run(apr_pool_t *pool, const char *const *argv, const char *const *envp,
                 const bw_spawn_limits_t *lim, bw_spawn_result_t *res, const char **err);

/* path made absolute against the current directory, or path itself when it
 * is absolute or the directory is unknown: the CLI reads rule files by the
 * names it is given, where Apache's are absolute. */
const char *bw_spawn_absolute(apr_pool_t *pool, const char *path);

/* Start-up check of a program a rule names: NULL when path is an absolute
 * path to a regular file this process may execute, else the reason. */
const char *bw_spawn_check(apr_pool_t *pool, const char *path);

/* One line describing how a run ended, for logs: "exit 0", "killed by
 * signal 9", "timed out after 2 s (SecExternalProgramTimeout)"… */
const char *bw_spawn_describe(apr_pool_t *pool, const bw_spawn_result_t *res,
                              const bw_spawn_limits_t *lim);

#endif /* BW_SPAWN_H */
