/*
 * Collection stores through the engine (run/bw_store*.c): the shm backend
 * (the default) applies each change at once, so overlapping transactions
 * see each other's counts; lifetimes (TIMEOUT, expirevar); the file
 * backend chosen by directive; processes sharing one block lose no
 * increment; the store directives refuse bad values with a reason; a
 * Redis server that cannot be reached gives the configured failure policy
 * at once, with one warning per interval; a command a stand-in server
 * refuses is named in the warning. The tests with a running Redis
 * server are in tests/shared/.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <signal.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <apr_general.h>
#include <apr_file_io.h>
#include "run/bw_run.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

static bw_config_t *config(const char *text, const char **err)
{
    bw_config_t *cfg = bw_config_create(pool);
    char *path = apr_pstrdup(pool, "/tmp/bw_test_store_XXXXXX");
    apr_file_t *f;
    ck_assert_int_eq(apr_file_mktemp(&f, path, APR_CREATE | APR_READ | APR_WRITE | APR_EXCL, pool),
                     APR_SUCCESS);
    apr_file_write_full(f, text, strlen(text), NULL);
    apr_file_close(f);
    *err = bw_config_load_file(cfg, path);
    unlink(path);
    return cfg;
}

static bw_program_t *load(const char *text)
{
    const char *err = NULL;
    bw_config_t *cfg = config(text, &err);
    char *berr = NULL;
    bw_program_t *prog;
    ck_assert_msg(err == NULL, "%s", err ? err : "");
    prog = bw_program_build(pool, NULL, cfg, &berr);
    ck_assert_msg(prog != NULL, "%s", berr ? berr : "");
    return prog;
}

typedef struct {
    int messages;
    char last[1024];
} sink_t;

static sink_t sink;

static void on_message(void *baton, bw_tx_t *tx, int level, const char *text)
{
    sink.messages++;
    snprintf(sink.last, sizeof sink.last, "%s", text);
}

static const bw_callbacks_t cbs = { NULL, NULL, on_message };

static bw_tx_t *request_uri(const bw_program_t *prog, bw_store_t *st, const char *ip,
                            const char *uri)
{
    bw_request_t req;
    bw_tx_t *tx;
    memset(&req, 0, sizeof(req));
    req.method = bw_str_make("GET");
    req.uri = bw_str_make(uri);
    req.protocol = bw_str_make("HTTP/1.1");
    req.request_line = bw_str_make(apr_pstrcat(pool, "GET ", uri, " HTTP/1.1", NULL));
    req.remote_addr = bw_str_make(ip);
    req.unique_id = bw_str_make("uid");
    tx = bw_tx_create(pool, prog, &req, &cbs);
    bw_tx_set_store(tx, st);
    return tx;
}

static bw_tx_t *request(const bw_program_t *prog, bw_store_t *st, const char *ip)
{
    return request_uri(prog, st, ip, "/");
}

static bw_store_t *store(const bw_program_t *prog, void *base, size_t size)
{
    char *err = NULL;
    bw_store_t *st = bw_store_open(pool, bw_program_settings(prog), base, size, NULL, &err);
    ck_assert_msg(st != NULL, "%s", err ? err : "");
    return st;
}

/* The value of collection coll's variable name in tx, or NULL. */
static const char *var(bw_tx_t *tx, const char *coll, const char *name)
{
    bw_coll_t *c = bw_tx_collection(tx, coll, 0);
    const bw_kv_t *kv = c ? bw_coll_get(c, bw_str_make(name)) : NULL;
    return kv ? bw_str_pdup(pool, kv->value) : NULL;
}

static const char *const counter =
    "SecRuleEngine On\n"
    "SecAction \"id:1,phase:1,pass,nolog,initcol:ip=%{remote_addr},setvar:ip.count=+1\"\n"
    "SecRule IP:count \"@gt 2\" \"id:2,phase:1,deny,status:429\"\n";

/* Overlapping transactions: each increment is applied on the store at
 * once and returns every transaction's count, so the third one is denied
 * although none of the three has ended. */
START_TEST(test_shm_counts_at_once)
{
    bw_program_t *p = load(counter);
    bw_store_t *st = store(p, NULL, 0);
    bw_intervention_t iv;
    bw_tx_t *a = request(p, st, "10.0.0.1"), *b = request(p, st, "10.0.0.1");
    bw_tx_t *c = request(p, st, "10.0.0.1"), *other = request(p, st, "10.0.0.2");
    ck_assert_ptr_nonnull(strstr(bw_store_describe(st), "shm "));
    ck_assert_int_eq(bw_tx_run_phase(a, 1, &iv), 0);
    ck_assert_str_eq(var(a, "IP", "count"), "1");
    ck_assert_str_eq(var(a, "IP", "IS_NEW"), "1");
    ck_assert_int_eq(bw_tx_run_phase(b, 1, &iv), 0);
    ck_assert_str_eq(var(b, "IP", "count"), "2");
    ck_assert_str_eq(var(b, "IP", "IS_NEW"), "0");
    ck_assert_str_eq(var(b, "IP", "UPDATE_COUNTER"), "1");
    ck_assert_int_eq(bw_tx_run_phase(c, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 429);
    ck_assert_int_eq(bw_tx_run_phase(other, 1, &iv), 0);
    ck_assert_str_eq(var(other, "IP", "count"), "1");
    bw_tx_run_phase(a, 5, &iv);
    bw_tx_run_phase(b, 5, &iv);
    /* the record's own fields, as ModSecurity keeps them */
    a = request(p, st, "10.0.0.1");
    bw_tx_run_phase(a, 1, &iv);
    ck_assert_str_eq(var(a, "IP", "count"), "4");
    ck_assert_str_eq(var(a, "IP", "KEY"), "10.0.0.1");
    ck_assert_str_eq(var(a, "IP", "UPDATE_COUNTER"), "3");   /* as loaded: three wrote it */
    ck_assert_str_eq(var(a, "IP", "TIMEOUT"), "3600");
    ck_assert_ptr_nonnull(var(a, "IP", "LAST_UPDATE_TIME"));
}
END_TEST

/* Outright sets, deletions and expirevar reach the store; a variable
 * whose expirevar time has come is gone at the next initcol. */
START_TEST(test_shm_set_delete_expire)
{
    bw_program_t *p = load(
        "SecRuleEngine On\n"
        "SecAction \"id:1,phase:1,pass,nolog,initcol:ip=%{remote_addr}\"\n"
        "SecRule REQUEST_URI \"@streq /set\" \"id:2,phase:1,pass,nolog,setvar:ip.a=alpha,"
        "setvar:ip.b=beta,setvar:ip.gone=x,expirevar:ip.gone=0,setvar:ip.stays=y,expirevar:ip.stays=600\"\n"
        "SecRule REQUEST_URI \"@streq /del\" \"id:3,phase:1,pass,nolog,setvar:!ip.a\"\n");
    bw_store_t *st = store(p, NULL, 0);
    bw_intervention_t iv;
    bw_tx_t *tx = request_uri(p, st, "10.9.9.9", "/set");
    bw_tx_run_phase(tx, 1, &iv);
    tx = request_uri(p, st, "10.9.9.9", "/del");
    bw_tx_run_phase(tx, 1, &iv);
    ck_assert_str_eq(var(tx, "IP", "b"), "beta");
    ck_assert_ptr_null(var(tx, "IP", "gone"));
    ck_assert_ptr_null(var(tx, "IP", "__expire_gone"));
    ck_assert_str_eq(var(tx, "IP", "stays"), "y");
    tx = request(p, st, "10.9.9.9");
    bw_tx_run_phase(tx, 1, &iv);
    ck_assert_ptr_null(var(tx, "IP", "a"));
    ck_assert_str_eq(var(tx, "IP", "b"), "beta");
}
END_TEST

/* A record not updated for TIMEOUT seconds starts afresh. Times are whole
 * seconds: with TIMEOUT 1 a second that ticks between the first two
 * requests (a loaded machine) would already expire the record; with 2 it
 * takes a second of delay between them. */
START_TEST(test_shm_record_timeout)
{
    bw_program_t *p = load(apr_pstrcat(pool, "SecCollectionTimeout 2\n", counter, NULL));
    bw_store_t *st = store(p, NULL, 0);
    bw_intervention_t iv;
    bw_tx_t *tx = request(p, st, "10.0.0.3");
    bw_tx_run_phase(tx, 1, &iv);
    tx = request(p, st, "10.0.0.3");
    bw_tx_run_phase(tx, 1, &iv);
    ck_assert_str_eq(var(tx, "IP", "count"), "2");
    sleep(3);
    tx = request(p, st, "10.0.0.3");
    bw_tx_run_phase(tx, 1, &iv);
    ck_assert_str_eq(var(tx, "IP", "count"), "1");
    ck_assert_str_eq(var(tx, "IP", "IS_NEW"), "1");
}
END_TEST

/* SecCollectionBackend file: one file per record under SecDataDir, the
 * counts merged at the end of the transaction as mod_security2 does. */
START_TEST(test_file_backend)
{
    char dir[] = "/tmp/bw_test_store_data_XXXXXX";
    bw_program_t *p;
    bw_store_t *st;
    bw_intervention_t iv;
    bw_tx_t *a, *b;
    char cmd[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    p = load(apr_pstrcat(pool, "SecCollectionBackend file\nSecDataDir ", dir, "\n", counter, NULL));
    st = store(p, NULL, 0);
    ck_assert_str_eq(bw_store_describe(st), apr_pstrcat(pool, "file ", dir, NULL));
    a = request(p, st, "10.0.0.4");
    b = request(p, st, "10.0.0.4");
    bw_tx_run_phase(a, 1, &iv);
    bw_tx_run_phase(b, 1, &iv);
    ck_assert_str_eq(var(b, "IP", "count"), "1");   /* merged at the end, not at once */
    bw_tx_run_phase(a, 5, &iv);
    bw_tx_run_phase(b, 5, &iv);
    a = request(p, st, "10.0.0.4");
    bw_tx_run_phase(a, 1, &iv);
    ck_assert_str_eq(var(a, "IP", "count"), "3");
    /* sha1("10.0.0.4") names the record */
    ck_assert_int_eq(access(apr_pstrcat(pool, dir, "/bulwark-IP-",
                            "37b53b186ad18448044f9cd1cd105604b2644a0a", NULL), R_OK), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Processes sharing one block (as Apache's workers do) count each
 * request once: 4 processes x 500 transactions on one key make 2000. */
START_TEST(test_shm_processes)
{
    bw_program_t *p = load(counter);
    size_t size = 32 << 20;
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    bw_store_t *st;
    bw_intervention_t iv;
    pid_t pids[4];
    int k, i, status;
    bw_tx_t *tx;
    ck_assert_ptr_ne(base, MAP_FAILED);
    st = store(p, base, size);
    for (k = 0; k < 4; k++) {
        pids[k] = fork();
        ck_assert_int_ge(pids[k], 0);
        if (pids[k] == 0) {
            apr_pool_t *txp;
            apr_pool_create(&txp, pool);
            for (i = 0; i < 500; i++) {
                bw_request_t req;
                memset(&req, 0, sizeof(req));
                req.method = bw_str_make("GET");
                req.uri = bw_str_make("/");
                req.protocol = bw_str_make("HTTP/1.1");
                req.remote_addr = bw_str_make("10.1.1.1");
                tx = bw_tx_create(txp, p, &req, NULL);
                bw_tx_set_store(tx, st);
                bw_tx_run_phase(tx, 1, &iv);
                bw_tx_run_phase(tx, 5, &iv);
                apr_pool_clear(txp);
            }
            _exit(0);
        }
    }
    for (k = 0; k < 4; k++) {
        ck_assert_int_eq(waitpid(pids[k], &status, 0), pids[k]);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    tx = request(p, st, "10.1.1.1");
    bw_tx_run_phase(tx, 1, &iv);
    ck_assert_str_eq(var(tx, "IP", "count"), "2001");
    munmap(base, size);
}
END_TEST

/* A record over SecCollectionShmRecordSize: the change stays in the
 * transaction, with a warning. */
START_TEST(test_shm_record_too_big)
{
    bw_program_t *p = load(
        "SecRuleEngine On\nSecCollectionShmRecordSize 128\n"
        "SecAction \"id:1,phase:1,pass,nolog,initcol:ip=%{remote_addr},"
        "setvar:ip.long=%{request_line}%{request_line}%{request_line}%{request_line}\"\n");
    bw_store_t *st = store(p, NULL, 0);
    bw_intervention_t iv;
    bw_tx_t *tx = request(p, st, "10.0.0.5");
    memset(&sink, 0, sizeof(sink));
    bw_tx_run_phase(tx, 1, &iv);
    ck_assert_ptr_nonnull(var(tx, "IP", "long"));
    ck_assert_int_eq(sink.messages, 1);
    ck_assert_ptr_nonnull(strstr(sink.last, "does not fit SecCollectionShmRecordSize"));
    /* the store kept the record without it */
    p = load("SecRuleEngine On\nSecAction \"id:1,phase:1,pass,nolog,initcol:ip=%{remote_addr}\"\n");
    tx = request(p, st, "10.0.0.5");
    bw_tx_run_phase(tx, 1, &iv);
    ck_assert_ptr_null(var(tx, "IP", "long"));
}
END_TEST

/* Every store directive refuses a bad value, naming the directive and the
 * reason. */
START_TEST(test_directive_errors)
{
    static const char *const bad[][2] = {
        { "SecCollectionBackend memcached", "expected shm, file or redis" },
        { "SecCollectionShmSize 10", "1M to 64G" },
        { "SecCollectionShmSize 12X", "invalid size" },
        { "SecCollectionShmRecordSize 64", "128 to 65536" },
        { "SecCollectionShmFull Sometimes", "expected Evict or Refuse" },
        { "SecCollectionRedisServer :6379", "no host" },
        { "SecCollectionRedisServer redis:99999", "invalid port" },
        { "SecCollectionRedisServer ::1:6379", "in brackets" },
        { "SecCollectionRedisAuth a b c", "a user and a password" },
        { "SecCollectionRedisDatabase -1", "invalid number" },
        { "SecCollectionRedisTimeout 100", "CONNECT COMMAND" },
        { "SecCollectionRedisTimeout 0 100", "1 to 60000" },
        { "SecCollectionRedisPool 0", "1 to 256" },
        { "SecCollectionFailAction Maybe", "expected Open, or Closed" },
        { "SecCollectionFailAction Closed 200", "400 to 599" },
    };
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *err = NULL;
        config(apr_pstrcat(pool, bad[i][0], "\n", NULL), &err);
        ck_assert_msg(err && strstr(err, bad[i][1]) && strstr(err, ":1:"),
                      "%s: got \"%s\"", bad[i][0], err ? err : "(accepted)");
    }
    {
        const char *err = NULL;
        bw_config_t *cfg = config("SecCollectionBackend redis\nSecCollectionRedisServer [::1]:7000\n"
                                  "SecCollectionRedisAuth bw secret\nSecCollectionRedisDatabase 3\n"
                                  "SecCollectionRedisPrefix x:\nSecCollectionRedisTimeout 20 30\n"
                                  "SecCollectionRedisPool 8\nSecCollectionFailAction Closed 429\n"
                                  "SecCollectionShmSize 64M\n", &err);
        char *berr = NULL;
        bw_program_t *p;
        const bw_store_conf_t *sc;
        ck_assert_ptr_null(err);
        p = bw_program_build(pool, NULL, cfg, &berr);
        ck_assert_ptr_nonnull(p);
        sc = bw_store_conf(bw_program_settings(p));
        ck_assert_int_eq(sc->backend, BW_STORE_REDIS);
        ck_assert_str_eq(sc->redis_host, "::1");
        ck_assert_int_eq(sc->redis_port, 7000);
        ck_assert_str_eq(sc->redis_user, "bw");
        ck_assert_str_eq(sc->redis_password, "secret");
        ck_assert_int_eq(sc->redis_db, 3);
        ck_assert_str_eq(sc->redis_prefix, "x:");
        ck_assert_int_eq(sc->redis_connect_ms, 20);
        ck_assert_int_eq(sc->redis_command_ms, 30);
        ck_assert_int_eq(sc->redis_pool, 8);
        ck_assert_int_eq(sc->fail_closed, 1);
        ck_assert_int_eq(sc->fail_status, 429);
        ck_assert_int_eq((int)sc->shm_size, 64 << 20);
    }
    /* no directive: shm, 32 MB */
    ck_assert_int_eq(bw_store_conf(NULL)->backend, BW_STORE_SHM);
    ck_assert_uint_eq(bw_store_shm_size(bw_program_settings(load("SecRuleEngine On\n"))), 32 << 20);
}
END_TEST

/* A loopback port nobody listens on. */
static int closed_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static bw_program_t *redis_program(const char *policy)
{
    return load(apr_psprintf(pool, "SecCollectionBackend redis\nSecCollectionRedisServer 127.0.0.1:%d\n"
                             "SecCollectionFailAction %s\n%s", closed_port(), policy, counter));
}

/* Fail open: the rules see an empty collection and the request goes on;
 * one warning, not one per request. */
START_TEST(test_redis_down_open)
{
    bw_program_t *p = redis_program("Open");
    bw_store_t *st = store(p, NULL, 0);
    bw_intervention_t iv;
    bw_tx_t *tx;
    int i;
    memset(&sink, 0, sizeof(sink));
    for (i = 0; i < 5; i++) {
        tx = request(p, st, "10.0.0.6");
        ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
        ck_assert_ptr_null(var(tx, "IP", "KEY"));
        ck_assert_str_eq(var(tx, "IP", "count"), "1");    /* the transaction's own */
        bw_tx_run_phase(tx, 5, &iv);
    }
    ck_assert_int_eq(sink.messages, 1);
    ck_assert_ptr_nonnull(strstr(sink.last, "collection store redis 127.0.0.1:"));
    ck_assert_ptr_nonnull(strstr(sink.last, "rules see empty collections"));
}
END_TEST

/* Fail closed: the configured status, at initcol; DetectionOnly only warns. */
START_TEST(test_redis_down_closed)
{
    bw_program_t *p = redis_program("Closed 503");
    bw_store_t *st = store(p, NULL, 0);
    bw_intervention_t iv;
    bw_tx_t *tx = request(p, st, "10.0.0.7");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 1);
    ck_assert_int_eq(iv.status, 503);
    ck_assert_int_eq(iv.disposition, BW_DISP_DENY);
    ck_assert_int_eq(bw_rule_id(iv.rule), 1);
    p = load(apr_psprintf(pool, "SecCollectionBackend redis\nSecCollectionRedisServer 127.0.0.1:%d\n"
                          "SecCollectionFailAction Closed\n%sSecRuleEngine DetectionOnly\n",
                          closed_port(), counter));
    st = store(p, NULL, 0);
    tx = request(p, st, "10.0.0.7");
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
}
END_TEST

/* The length of the first whole command (a RESP array of bulk strings) in
 * buf[0..len), its verb in verb; 0 while it is incomplete. */
static size_t one_command(const char *buf, size_t len, char *verb, size_t vsize)
{
    const char *p = buf, *end = buf + len, *nl;
    long n, i, blen;
    if (!len || *p != '*' || !(nl = memchr(p, '\n', len)))
        return 0;
    n = strtol(p + 1, NULL, 10);
    p = nl + 1;
    for (i = 0; i < n; i++) {
        if (p >= end || *p != '$' || !(nl = memchr(p, '\n', (size_t)(end - p))))
            return 0;
        blen = strtol(p + 1, NULL, 10);
        p = nl + 1;
        if (end - p < blen + 2)
            return 0;
        if (i == 0)
            snprintf(verb, vsize, "%.*s", (int)blen, p);
        p += blen + 2;
    }
    return (size_t)(p - buf);
}

/* A stand-in for Redis in a child process, for one connection: each
 * command it reads gets the reply its verb has in replies (pairs of verb
 * and raw reply, then NULL), else +QUEUED. Returns its port; *pid to reap. */
static int fake_redis(const char *const *replies, pid_t *pid)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(lfd, 4), 0);
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
    *pid = fork();
    ck_assert_int_ge(*pid, 0);
    if (*pid == 0) {
        static char buf[65536];
        char verb[32];
        size_t have = 0, used;
        ssize_t got;
        int fd, k;
        alarm(20);               /* never outlives a test that went wrong */
        fd = accept(lfd, NULL, NULL);
        while (fd >= 0 && (got = read(fd, buf + have, sizeof buf - have)) > 0) {
            have += (size_t)got;
            while ((used = one_command(buf, have, verb, sizeof verb)) > 0) {
                const char *rep = "+QUEUED\r\n";
                for (k = 0; replies[k]; k += 2)
                    if (!strcasecmp(replies[k], verb))
                        rep = replies[k + 1];
                if (write(fd, rep, strlen(rep)) < 0)
                    _exit(1);
                memmove(buf, buf + used, have - used);
                have -= used;
            }
        }
        _exit(0);
    }
    close(lfd);
    return ntohs(a.sin_port);
}

/* A user whose ACL lacks a command the store queues in MULTI: the server
 * refuses it, EXEC answers only EXECABORT; the warning names the refused
 * command, and the transaction keeps its own count. */
START_TEST(test_redis_refused_command_named)
{
    static const char *const replies[] = {
        "HGETALL", "*0\r\n",
        "MULTI", "+OK\r\n",
        "HSETNX", "-NOPERM this user has no permissions to run the 'hsetnx' command\r\n",
        "EXEC", "-EXECABORT Transaction discarded because of previous errors.\r\n",
        NULL
    };
    pid_t pid;
    int port = fake_redis(replies, &pid);
    /* generous timeouts: a loaded machine (ASan, 2 cores) may take more than
     * the default 100 ms to schedule the stand-in, and a timeout is another
     * message */
    bw_program_t *p = load(apr_psprintf(pool, "SecCollectionBackend redis\n"
                                         "SecCollectionRedisServer 127.0.0.1:%d\n"
                                         "SecCollectionRedisTimeout 5000 5000\n"
                                         "SecCollectionFailAction Open\n%s", port, counter));
    bw_intervention_t iv;
    bw_tx_t *tx = request(p, store(p, NULL, 0), "10.0.0.8");
    memset(&sink, 0, sizeof(sink));
    ck_assert_int_eq(bw_tx_run_phase(tx, 1, &iv), 0);
    ck_assert_str_eq(var(tx, "IP", "count"), "1");
    ck_assert_int_eq(sink.messages, 1);
    ck_assert_msg(strstr(sink.last, "unavailable: MULTI/EXEC: NOPERM this user has no permissions "
                         "to run the 'hsetnx' command;") != NULL, "%s", sink.last);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_shm_counts_at_once);
    tcase_add_test(tc, test_shm_set_delete_expire);
    tcase_add_test(tc, test_shm_record_timeout);
    tcase_add_test(tc, test_file_backend);
    tcase_add_test(tc, test_shm_processes);
    tcase_add_test(tc, test_shm_record_too_big);
    tcase_add_test(tc, test_directive_errors);
    tcase_add_test(tc, test_redis_down_open);
    tcase_add_test(tc, test_redis_down_closed);
    tcase_add_test(tc, test_redis_refused_command_named);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;
    apr_initialize();
    sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    apr_terminate();
    return failed ? 1 : 0;
}
