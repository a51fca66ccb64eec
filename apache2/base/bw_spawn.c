/*
 * The external-program runner (bw_spawn.h): one program at a time per
 * caller, no shell, bounded in time and output, always reaped.
 *
 * Why each choice:
 *  - posix_spawn (glibc: clone with CLONE_VFORK) rather than fork: an
 *    Apache worker is a large multithreaded process, and copying its page
 *    tables per uploaded file would cost more than the scan.
 *  - no shell: argv goes to the program as it is, so a file name or
 *    header value can never become a command.
 *  - every descriptor above 2 closed in the child (closefrom file
 *    action): Apache's listening sockets and other requests' connections
 *    are not close-on-exec, and a program holding them would keep ports
 *    and clients alive after a restart.
 *  - a new process group, all signals unblocked and set to their default
 *    (Apache's threads block or ignore several, and an ignored SIGPIPE
 *    would survive exec): on the deadline or past the output limit the
 *    whole group gets SIGKILL, so children the program started go too.
 *  - stdout and stderr share one pipe, read with poll() in slices so that
 *    a program that exits while a background child still holds the pipe
 *    is noticed without waiting for the deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <apr_file_info.h>
#include <apr_strings.h>
#include "base/bw_spawn.h"

/* Longest time between two checks of whether the program has exited. */
#define SLICE_MS 50

typedef struct {
    apr_pool_t *pool;
    char *buf;
    apr_size_t len, cap, max;
    int fd;
    pid_t pid;
    int exited;          /* waitpid has reaped pid */
    int status;          /* its wait status */
} run_t;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Child set-up: stdin /dev/null, stdout+stderr the pipe, nothing else. */
static int file_actions(posix_spawn_file_actions_t *fa, int wfd)
{
    if (posix_spawn_file_actions_init(fa) != 0)
        return -1;
    if (posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0) != 0
        || posix_spawn_file_actions_adddup2(fa, wfd, 1) != 0
        || posix_spawn_file_actions_adddup2(fa, wfd, 2) != 0
        || posix_spawn_file_actions_addclosefrom_np(fa, 3) != 0) {
        posix_spawn_file_actions_destroy(fa);
        return -1;
    }
    return 0;
}

/* Own process group, no blocked signals, every catchable one defaulted. */
static int spawn_attrs(posix_spawnattr_t *at)
{
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    if (posix_spawnattr_init(at) != 0)
        return -1;
    if (posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK
                                         | POSIX_SPAWN_SETSIGDEF) != 0
        || posix_spawnattr_setpgroup(at, 0) != 0
        || posix_spawnattr_setsigmask(at, &none) != 0
        || posix_spawnattr_setsigdefault(at, &all) != 0) {
        posix_spawnattr_destroy(at);
        return -1;
    }
    return 0;
}

/* Reap without blocking; 1 once the program is gone. */
static int reaped(run_t *r)
{
    pid_t w;
    if (r->exited)
        return 1;
    do
        w = waitpid(r->pid, &r->status, WNOHANG);
    while (w < 0 && errno == EINTR);
    if (w == r->pid || (w < 0 && errno == ECHILD)) {
        /* ECHILD: someone set SIGCHLD to SIG_IGN and the kernel reaped it */
        if (w < 0)
            r->status = -1;
        r->exited = 1;
    }
    return r->exited;
}

/* Kill the group and wait: SIGKILL cannot be caught, so this returns. */
static void kill_and_reap(run_t *r)
{
    pid_t w;
    if (r->exited)
        return;
    kill(-r->pid, SIGKILL);
    kill(r->pid, SIGKILL);
    do
        w = waitpid(r->pid, &r->status, 0);
    while (w < 0 && errno == EINTR);
    if (w < 0)
        r->status = -1;
    r->exited = 1;
}

/* Read what is there. Returns 1 at end of output, 2 past the limit, 0
 * when more may come. */
static int drain(run_t *r)
{
    char chunk[4096];
    for (;;) {
        ssize_t n = read(r->fd, chunk, sizeof(chunk));
        if (n == 0)
            return 1;
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : 1;
        if (r->len + (apr_size_t)n > r->max) {
            n = (ssize_t)(r->max - r->len);
            if (n > 0) {
                memcpy(r->buf + r->len, chunk, (size_t)n);
                r->len += (apr_size_t)n;
            }
            return 2;
        }
        if (r->len + (apr_size_t)n > r->cap) {
            apr_size_t cap = r->cap * 2;
            char *nb;
            while (cap < r->len + (apr_size_t)n)
                cap *= 2;
            if (cap > r->max)
                cap = r->max;
            nb = apr_palloc(r->pool, cap + 1);
            memcpy(nb, r->buf, r->len);
            r->buf = nb;
            r->cap = cap;
        }
        memcpy(r->buf + r->len, chunk, (size_t)n);
        r->len += (apr_size_t)n;
    }
}

/* Read until end of output, exit, the deadline or the limit. */
static void collect(run_t *r, long long deadline, bw_spawn_result_t *res)
{
    for (;;) {
        struct pollfd pfd;
        long long left = deadline - now_ms();
        int rc, d;
        if (left <= 0) {
            res->timed_out = 1;
            return;
        }
        pfd.fd = r->fd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        rc = poll(&pfd, 1, (int)(left < SLICE_MS ? left : SLICE_MS));
        if (rc < 0 && errno != EINTR)
            return;
        if (rc > 0) {
            d = drain(r);
            if (d == 2) {
                res->truncated = 1;
                return;
            }
            if (d == 1)
                return;
        } else if (reaped(r)) {
            /* gone while something it started may still hold the pipe */
            if (drain(r) == 2)
                res->truncated = 1;
            return;
        }
    }
}

/* After the output: wait for the exit until the deadline. */
static void await_exit(run_t *r, long long deadline, bw_spawn_result_t *res)
{
    while (!res->timed_out && !res->truncated && !reaped(r)) {
        struct timespec ts = { 0, 5 * 1000000L };
        if (now_ms() >= deadline) {
            res->timed_out = 1;
            break;
        }
        nanosleep(&ts, NULL);
    }
    kill_and_reap(r);
    if (r->status >= 0 && WIFEXITED(r->status)) {
        res->exited = 1;
        res->exit_code = WEXITSTATUS(r->status);
    } else if (r->status >= 0 && WIFSIGNALED(r->status)) {
        res->signal = WTERMSIG(r->status);
    }
}

static int start(run_t *r, const char *const *argv, const char *const *envp, const char **err)
{
    static const char *const no_env[] = { NULL };
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int p[2], rc;

    if (pipe2(p, O_CLOEXEC) != 0) {
        *err = apr_psprintf(r->pool, "cannot run %s: pipe: %s", argv[0], strerror(errno));
        return -1;
    }
    if (file_actions(&fa, p[1]) != 0) {
        close(p[0]);
        close(p[1]);
        *err = apr_psprintf(r->pool, "cannot run %s: spawn set-up failed", argv[0]);
        return -1;
    }
    if (spawn_attrs(&at) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        close(p[0]);
        close(p[1]);
        *err = apr_psprintf(r->pool, "cannot run %s: spawn set-up failed", argv[0]);
        return -1;
    }
    rc = posix_spawn(&r->pid, argv[0], &fa, &at, (char *const *)argv,
                     (char *const *)(envp ? envp : no_env));
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        *err = apr_psprintf(r->pool, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    r->fd = p[0];
    fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) | O_NONBLOCK);
    return 0;
}

int bw_spawn_run(apr_pool_t *pool, const char *const *argv, const char *const *envp,
                 const bw_spawn_limits_t *lim, bw_spawn_result_t *res, const char **err)
{
    run_t r;
    apr_interval_time_t timeout = lim && lim->timeout > 0 ? lim->timeout : apr_time_from_sec(1);
    long long deadline;

    memset(res, 0, sizeof(*res));
    memset(&r, 0, sizeof(r));
    r.pool = pool;
    r.max = lim && lim->max_output ? lim->max_output : BW_SPAWN_MAX_OUTPUT;
    r.cap = r.max < 1024 ? r.max : 1024;
    r.buf = apr_palloc(pool, r.cap + 1);
    if (start(&r, argv, envp, err) != 0)
        return -1;
    deadline = now_ms() + (long long)(timeout / 1000);
    collect(&r, deadline, res);
    close(r.fd);
    await_exit(&r, deadline, res);
    r.buf[r.len] = '\0';
    res->output = bw_str_n(r.buf, r.len);
    return 0;
}

const char *bw_spawn_absolute(apr_pool_t *pool, const char *path)
{
    char *out = NULL;
    if (path[0] == '/' || apr_filepath_merge(&out, NULL, path, APR_FILEPATH_NOTRELATIVE, pool)
                              != APR_SUCCESS)
        return path;
    return out;
}

const char *bw_spawn_check(apr_pool_t *pool, const char *path)
{
    struct stat st;
    if (path[0] != '/')
        return apr_psprintf(pool, "\"%s\" is not an absolute path", path);
    if (stat(path, &st) != 0)
        return apr_psprintf(pool, "cannot use program \"%s\": %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return apr_psprintf(pool, "cannot use program \"%s\": not a regular file", path);
    if (access(path, X_OK) != 0)
        return apr_psprintf(pool, "cannot use program \"%s\": not executable (%s)", path,
                            strerror(errno));
    return NULL;
}

const char *bw_spawn_describe(apr_pool_t *pool, const bw_spawn_result_t *res,
                              const bw_spawn_limits_t *lim)
{
    if (res->timed_out)
        return apr_psprintf(pool, "still running after %" APR_TIME_T_FMT " ms "
                            "(SecExternalProgramTimeout): killed",
                            (lim ? lim->timeout : 0) / 1000);
    if (res->truncated)
        return apr_psprintf(pool, "wrote more than %" APR_SIZE_T_FMT " bytes: killed",
                            lim && lim->max_output ? lim->max_output : BW_SPAWN_MAX_OUTPUT);
    if (res->exited)
        return apr_psprintf(pool, "exit %d", res->exit_code);
    if (res->signal)
        return apr_psprintf(pool, "killed by signal %d", res->signal);
    return "ended, status unknown";
}
