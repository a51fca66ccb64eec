/*
 * Unit tests for the external-program runner (apache2/base/bw_spawn.c):
 * exit codes and signals, a program that hangs (killed at the deadline,
 * its process group with it), one that writes megabytes (bounded, killed),
 * a missing program, stdin, the environment, descriptors and signal
 * dispositions the child must not inherit, and the start-up check. The
 * programs are small shell scripts written into a temporary directory.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <apr_strings.h>
#include "base/bw_spawn.h"
#include "test_program.h"

static apr_pool_t *g_pool;
static char g_dir[] = "/tmp/bw-test-spawn-XXXXXX";

/* An executable script in g_dir; returns its path. */
static const char *script(const char *name, const char *body)
{
    return test_program(g_pool, g_dir, name, body);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run argv with a timeout in ms; returns bw_spawn_run's result. */
static int run(const char *const *argv, const char *const *envp, long ms, apr_size_t max,
               bw_spawn_result_t *res, const char **err)
{
    bw_spawn_limits_t lim;
    lim.timeout = (apr_interval_time_t)ms * 1000;
    lim.max_output = max;
    *err = NULL;
    return bw_spawn_run(g_pool, argv, envp, &lim, res, err);
}

/* No child of this process is left to reap (zombie or running). */
static void assert_no_children(void)
{
    pid_t w = waitpid(-1, NULL, WNOHANG);
    ck_assert_msg(w == -1 && errno == ECHILD, "a child was left behind (waitpid: %d)", (int)w);
}

START_TEST(test_exit_code_and_output)
{
    const char *argv[] = { script("exit3.sh", "echo \"arg=$1\"; echo oops >&2; exit 3"), "a b;c",
                           NULL };
    bw_spawn_result_t res;
    const char *err;
    ck_assert_int_eq(run(argv, NULL, 5000, 0, &res, &err), 0);
    ck_assert_int_eq(res.exited, 1);
    ck_assert_int_eq(res.exit_code, 3);
    ck_assert_int_eq(res.timed_out, 0);
    ck_assert_int_eq(res.truncated, 0);
    /* the argument arrives as one word, no shell in between */
    ck_assert_str_eq(res.output.data, "arg=a b;c\noops\n");
    ck_assert_str_eq(bw_spawn_describe(g_pool, &res, NULL), "exit 3");
    assert_no_children();
}
END_TEST

START_TEST(test_killed_by_signal)
{
    const char *argv[] = { script("term.sh", "echo x; kill -TERM $$; sleep 5"), NULL };
    bw_spawn_result_t res;
    const char *err;
    ck_assert_int_eq(run(argv, NULL, 5000, 0, &res, &err), 0);
    ck_assert_int_eq(res.exited, 0);
    ck_assert_int_eq(res.signal, SIGTERM);
    assert_no_children();
}
END_TEST

/* A program that hangs is killed at the deadline, with what it started. */
START_TEST(test_timeout_kills_group)
{
    const char *pidfile = apr_pstrcat(g_pool, g_dir, "/bg.pid", NULL);
    const char *argv[] = { script("hang.sh", apr_psprintf(g_pool,
                               "sleep 60 & echo $! > %s; echo started; sleep 60", pidfile)), NULL };
    bw_spawn_result_t res;
    const char *err;
    double t0 = now_s();
    char buf[32] = "";
    FILE *f;
    long bg;

    ck_assert_int_eq(run(argv, NULL, 300, 0, &res, &err), 0);
    ck_assert_msg(now_s() - t0 < 3.0, "took %.1f s for a 0.3 s limit", now_s() - t0);
    ck_assert_int_eq(res.timed_out, 1);
    ck_assert_int_eq(res.signal, SIGKILL);
    ck_assert_str_eq(res.output.data, "started\n");
    ck_assert_ptr_nonnull(strstr(bw_spawn_describe(g_pool, &res, NULL), "still running"));
    assert_no_children();
    /* the background sleep was in the group: gone (or a zombie of init) */
    f = fopen(pidfile, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
    fclose(f);
    bg = strtol(buf, NULL, 10);
    ck_assert_int_gt(bg, 1);
    {
        int i, alive = 1;
        for (i = 0; i < 100 && alive; i++) {
            char stat[64], line[256] = "";
            FILE *sf;
            snprintf(stat, sizeof(stat), "/proc/%ld/stat", bg);
            sf = fopen(stat, "r");
            if (!sf) {
                alive = 0;
                break;
            }
            if (fgets(line, sizeof(line), sf) && strstr(line, ") Z "))
                alive = 0;
            fclose(sf);
            if (alive)
                usleep(20000);
        }
        ck_assert_msg(!alive, "background child %ld survived the timeout", bg);
    }
}
END_TEST

/* Megabytes of output: the first max_output bytes kept, the rest unread. */
START_TEST(test_output_bounded)
{
    const char *argv[] = { script("flood.sh", "while :; do echo 0123456789abcdef; done"), NULL };
    bw_spawn_result_t res;
    const char *err;
    double t0 = now_s();
    ck_assert_int_eq(run(argv, NULL, 10000, 65536, &res, &err), 0);
    ck_assert_msg(now_s() - t0 < 5.0, "took %.1f s", now_s() - t0);
    ck_assert_int_eq(res.truncated, 1);
    ck_assert_int_eq(res.timed_out, 0);
    ck_assert_uint_eq(res.output.len, 65536);
    ck_assert_int_eq(memcmp(res.output.data, "0123456789abcdef\n", 17), 0);
    ck_assert_ptr_nonnull(strstr(bw_spawn_describe(g_pool, &res, NULL), "more than 65536"));
    assert_no_children();
}
END_TEST

/* Output just under the limit is whole and not an error. */
START_TEST(test_output_at_limit)
{
    const char *argv[] = { "/usr/bin/head", "-c", "1000", "/dev/zero", NULL };
    bw_spawn_result_t res;
    const char *err;
    ck_assert_int_eq(run(argv, NULL, 5000, 1000, &res, &err), 0);
    ck_assert_int_eq(res.truncated, 0);
    ck_assert_int_eq(res.exited, 1);
    ck_assert_uint_eq(res.output.len, 1000);
}
END_TEST

START_TEST(test_missing_program)
{
    const char *path = apr_pstrcat(g_pool, g_dir, "/no-such-program", NULL);
    const char *argv[] = { path, NULL };
    bw_spawn_result_t res;
    const char *err;
    ck_assert_int_eq(run(argv, NULL, 1000, 0, &res, &err), -1);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "No such file") && strstr(err, path), "error: %s", err);
    assert_no_children();
}
END_TEST

/* stdin is /dev/null: a program reading it ends at once. */
START_TEST(test_stdin_is_null)
{
    const char *argv[] = { "/bin/cat", NULL };
    bw_spawn_result_t res;
    const char *err;
    ck_assert_int_eq(run(argv, NULL, 2000, 0, &res, &err), 0);
    ck_assert_int_eq(res.exited, 1);
    ck_assert_int_eq(res.exit_code, 0);
    ck_assert_uint_eq(res.output.len, 0);
}
END_TEST

/* The environment is exactly the one given. */
START_TEST(test_environment)
{
    const char *argv[] = { "/usr/bin/env", NULL };
    const char *envp[] = { "REQUEST_METHOD=POST", "HTTP_X_A=1 2", NULL };
    bw_spawn_result_t res;
    const char *err;
    ck_assert_int_eq(run(argv, envp, 2000, 0, &res, &err), 0);
    ck_assert_str_eq(res.output.data, "REQUEST_METHOD=POST\nHTTP_X_A=1 2\n");
    ck_assert_int_eq(run(argv, NULL, 2000, 0, &res, &err), 0);
    ck_assert_uint_eq(res.output.len, 0);
}
END_TEST

/* Descriptors the server holds (not close-on-exec) stay out of the child. */
START_TEST(test_no_inherited_fds)
{
    const char *argv[] = { "/bin/ls", "/proc/self/fd", NULL };
    bw_spawn_result_t res;
    const char *err;
    int fd = open("/dev/null", O_RDONLY);   /* no O_CLOEXEC, like a listener */
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(dup2(fd, 77), 77);
    ck_assert_int_eq(run(argv, NULL, 2000, 0, &res, &err), 0);
    close(77);
    close(fd);
    /* ls sees 0, 1, 2 and the directory it reads */
    ck_assert_msg(!strstr(res.output.data, "77"), "fd 77 inherited: %s", res.output.data);
    ck_assert_msg(strncmp(res.output.data, "0\n1\n2\n3\n", 8) == 0 && res.output.len == 8,
                  "descriptors: %s", res.output.data);
}
END_TEST

/* Signals ignored or blocked in the server are default and unblocked in
 * the child (an ignored SIGPIPE would survive exec). */
START_TEST(test_signals_reset)
{
    const char *argv[] = { "/bin/grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL };
    bw_spawn_result_t res;
    const char *err;
    sigset_t block, old;
    struct sigaction ign, oldpipe;
    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &oldpipe);
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    ck_assert_int_eq(run(argv, NULL, 2000, 0, &res, &err), 0);
    sigprocmask(SIG_SETMASK, &old, NULL);
    sigaction(SIGPIPE, &oldpipe, NULL);
    /* signals 1-31; glibc's posix_spawn leaves its own two internal
     * real-time signals (32, 33) ignored, which no program uses */
    {
        const char *line = strstr(res.output.data, "SigIgn:\t");
        ck_assert_ptr_nonnull(line);
        ck_assert_int_eq(strncmp(res.output.data, "SigBlk:\t0000000000000000\n", 25), 0);
        ck_assert_msg((strtoull(line + 8, NULL, 16) & 0x7fffffffULL) == 0, "%s", res.output.data);
    }
}
END_TEST

/* The program exits while something it started still holds the pipe:
 * noticed at once, not at the deadline. */
START_TEST(test_exit_with_background_holder)
{
    const char *argv[] = { script("bg.sh", "sleep 3 & echo done"), NULL };
    bw_spawn_result_t res;
    const char *err;
    double t0 = now_s();
    ck_assert_int_eq(run(argv, NULL, 10000, 0, &res, &err), 0);
    ck_assert_msg(now_s() - t0 < 2.0, "took %.1f s", now_s() - t0);
    ck_assert_int_eq(res.timed_out, 0);
    ck_assert_int_eq(res.exited, 1);
    ck_assert_str_eq(res.output.data, "done\n");
}
END_TEST

START_TEST(test_check)
{
    const char *exe = script("ok.sh", "echo 1");
    const char *plain = apr_pstrcat(g_pool, g_dir, "/plain.txt", NULL);
    FILE *f = fopen(plain, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    chmod(plain, 0644);
    ck_assert_ptr_null(bw_spawn_check(g_pool, exe));
    ck_assert_ptr_nonnull(strstr(bw_spawn_check(g_pool, "ok.sh"), "not an absolute path"));
    ck_assert_ptr_nonnull(strstr(bw_spawn_check(g_pool, g_dir), "not a regular file"));
    ck_assert_ptr_nonnull(strstr(bw_spawn_check(g_pool, "/nonexistent/x"), "No such file"));
    ck_assert_ptr_nonnull(strstr(bw_spawn_check(g_pool, plain), "not executable"));
    ck_assert_str_eq(bw_spawn_absolute(g_pool, "/a/b"), "/a/b");
    {
        char cwd[4096];
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
        ck_assert_str_eq(bw_spawn_absolute(g_pool, "sub/x.sh"),
                         apr_pstrcat(g_pool, strcmp(cwd, "/") ? cwd : "", "/sub/x.sh", NULL));
    }
}
END_TEST

static Suite *spawn_suite(void)
{
    Suite *s = suite_create("spawn");
    TCase *tc = tcase_create("runner");
    tcase_add_test(tc, test_exit_code_and_output);
    tcase_add_test(tc, test_killed_by_signal);
    tcase_add_test(tc, test_timeout_kills_group);
    tcase_add_test(tc, test_output_bounded);
    tcase_add_test(tc, test_output_at_limit);
    tcase_add_test(tc, test_missing_program);
    tcase_add_test(tc, test_stdin_is_null);
    tcase_add_test(tc, test_environment);
    tcase_add_test(tc, test_no_inherited_fds);
    tcase_add_test(tc, test_signals_reset);
    tcase_add_test(tc, test_exit_with_background_holder);
    tcase_add_test(tc, test_check);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    apr_initialize();
    apr_pool_create(&g_pool, NULL);
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 2;
    }
    sr = srunner_create(spawn_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    {
        const char *argv[] = { "/bin/rm", "-rf", g_dir, NULL };
        bw_spawn_result_t res;
        const char *err;
        run(argv, NULL, 10000, 0, &res, &err);
    }
    apr_pool_destroy(g_pool);
    apr_terminate();
    return failed ? 1 : 0;
}
