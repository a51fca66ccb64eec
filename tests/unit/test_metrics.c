/*
 * Live counters (base/bw_metrics.c, run/bw_tx_metrics.c, the formats of
 * base/bw_metrics_fmt.c): the rule directory; threads counting at once,
 * more of them than there are shards, losing nothing; a block adopted
 * with its counts; the shard of a process that died taken over with its
 * counts; transactions counted the same whether the program was folded
 * and scanned or not, and in the shared shard as in a thread's own; the
 * Prometheus and JSON texts.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <apr_general.h>
#include <apr_file_io.h>
#include "base/bw_metrics.h"
#include "base/bw_metrics_fmt.h"
#include "bw_engine.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

static bw_metrics_t *fresh(void)
{
    const char *err = NULL;
    int adopted = -1;
    bw_metrics_t *m = bw_metrics_attach(pool, NULL, 0, &adopted, &err);
    ck_assert_msg(m != NULL, "attach: %s", err ? err : "?");
    ck_assert_int_eq(adopted, 0);
    return m;
}

static const bw_metrics_rule_t *rule_of(const bw_metrics_snap_t *s, long id)
{
    int i;
    for (i = 0; i < s->nrules; i++)
        if (s->rules[i].id == id)
            return &s->rules[i];
    return NULL;
}

START_TEST(test_directory)
{
    bw_metrics_t *m = fresh();
    unsigned a = bw_metrics_rule_index(m, 942100), b = bw_metrics_rule_index(m, 7);
    long id;
    unsigned seen = 0, zero = 0;
    ck_assert_uint_eq(a, 1);
    ck_assert_uint_eq(b, 2);
    ck_assert_uint_eq(bw_metrics_rule_index(m, 942100), a);
    ck_assert_uint_eq(bw_metrics_rule_index(m, 0), 0);
    ck_assert_uint_eq(bw_metrics_rule_index(m, -5), 0);
    /* past the capacity: every further id counts with the sink */
    for (id = 100000; id < 100000 + BW_METRICS_RULES + 100; id++) {
        unsigned k = bw_metrics_rule_index(m, id);
        if (k)
            seen++;
        else
            zero++;
        ck_assert_uint_eq(bw_metrics_rule_index(m, id), k);
    }
    ck_assert_uint_eq(seen, BW_METRICS_RULES - 3);
    ck_assert_uint_eq(zero, 103);
}
END_TEST

/* ---- threads ------------------------------------------------------------- */

#define NTHREADS (BW_METRICS_SHARDS + 12)
#define EACH 3000

typedef struct {
    bw_metrics_t *m;
    unsigned idx;
    pthread_barrier_t *bar;
} thr_arg_t;

static void *counting_thread(void *data)
{
    thr_arg_t *a = data;
    bw_metrics_ctr_t c;
    int i;
    /* every thread holds its shard before any counts: the last ones must
     * share the shared shard */
    bw_metrics_counters(bw_metrics_shard(a->m), &c);
    pthread_barrier_wait(a->bar);
    for (i = 0; i < EACH; i++) {
        bw_metrics_add(&c, &c.evals[a->idx], 1);
        bw_metrics_add(&c, &c.total[BW_MT_TX], 1);
        bw_metrics_max(&c, &c.max_ns[a->idx], (uint64_t)i);
    }
    pthread_barrier_wait(a->bar);
    return NULL;
}

START_TEST(test_threads_exact)
{
    bw_metrics_t *m = fresh();
    pthread_t th[NTHREADS];
    pthread_barrier_t bar;
    thr_arg_t a;
    bw_metrics_snap_t s;
    int i;
    a.m = m;
    a.idx = bw_metrics_rule_index(m, 920100);
    a.bar = &bar;
    pthread_barrier_init(&bar, NULL, NTHREADS);
    for (i = 0; i < NTHREADS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, counting_thread, &a), 0);
    for (i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    bw_metrics_read(m, pool, 0, &s);
    ck_assert_int_eq(s.shards_used, BW_METRICS_SHARDS);
    ck_assert_uint_eq(rule_of(&s, 920100)->evals, (uint64_t)NTHREADS * EACH);
    ck_assert_uint_eq(rule_of(&s, 920100)->max_ns, EACH - 1);
    ck_assert_uint_eq(s.total[BW_MT_TX], (uint64_t)NTHREADS * EACH);
}
END_TEST

/* Threads that ended gave their shards back: new ones reuse them. */
static void *one_count(void *data)
{
    bw_metrics_ctr_t c;
    bw_metrics_counters(bw_metrics_shard(data), &c);
    bw_metrics_add(&c, &c.total[BW_MT_TX], 1);
    return NULL;
}

START_TEST(test_threads_reuse)
{
    bw_metrics_t *m = fresh();
    bw_metrics_snap_t s;
    int i;
    for (i = 0; i < 3 * BW_METRICS_SHARDS; i++) {
        pthread_t t;
        ck_assert_int_eq(pthread_create(&t, NULL, one_count, m), 0);
        pthread_join(t, NULL);
    }
    bw_metrics_read(m, pool, 0, &s);
    ck_assert_int_eq(s.shards_used, 1);
    ck_assert_uint_eq(s.total[BW_MT_TX], 3 * BW_METRICS_SHARDS);
}
END_TEST

/* ---- a block across generations and processes ------------------------------ */

static void *shared_block(size_t size)
{
    void *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(b, MAP_FAILED);
    return b;
}

START_TEST(test_adopt)
{
    size_t size = bw_metrics_size();
    void *base = shared_block(size);
    const char *err = NULL;
    int adopted = -1;
    apr_pool_t *gen1;
    bw_metrics_t *m;
    bw_metrics_ctr_t c;
    bw_metrics_snap_t s;
    apr_pool_create(&gen1, pool);
    m = bw_metrics_attach(gen1, base, size, &adopted, &err);
    ck_assert_int_eq(adopted, 0);
    bw_metrics_counters(bw_metrics_shard(m), &c);
    bw_metrics_add(&c, &c.matches[bw_metrics_rule_index(m, 33)], 5);
    bw_metrics_blocked(m, bw_metrics_shard(m), 403, 600);
    apr_pool_destroy(gen1);     /* the configuration goes, the block stays */
    apr_pool_create(&gen1, pool);
    m = bw_metrics_attach(gen1, base, size, &adopted, &err);
    ck_assert_int_eq(adopted, 1);
    bw_metrics_counters(bw_metrics_shard(m), &c);
    bw_metrics_add(&c, &c.matches[bw_metrics_rule_index(m, 33)], 1);
    bw_metrics_read(m, pool, 630, &s);
    ck_assert_uint_eq(s.attached, 2);
    ck_assert_int_eq(s.nrules, 1);
    ck_assert_uint_eq(rule_of(&s, 33)->matches, 6);
    ck_assert_uint_eq(s.status[403], 1);
    ck_assert_uint_eq(s.minutes[0], 1);     /* minute 10 */
    bw_metrics_read(m, pool, 690, &s);
    ck_assert_uint_eq(s.minutes[0], 0);
    ck_assert_uint_eq(s.minutes[1], 1);
    /* too small a block is refused */
    ck_assert_ptr_null(bw_metrics_attach(pool, base, size / 2, &adopted, &err));
    apr_pool_destroy(gen1);     /* the handle goes before the block */
    munmap(base, size);
}
END_TEST

START_TEST(test_dead_owner)
{
    size_t size = bw_metrics_size();
    void *base = shared_block(size);
    const char *err = NULL;
    int adopted, status;
    apr_pool_t *gen;
    bw_metrics_t *m;
    bw_metrics_ctr_t c;
    bw_metrics_snap_t s;
    pid_t pid;
    apr_pool_create(&gen, pool);
    m = bw_metrics_attach(gen, base, size, &adopted, &err);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* a worker that counts and dies without giving its shard back */
        bw_metrics_counters(bw_metrics_shard(m), &c);
        bw_metrics_add(&c, &c.total[BW_MT_TX], 7);
        _exit(0);
    }
    waitpid(pid, &status, 0);
    bw_metrics_counters(bw_metrics_shard(m), &c);
    ck_assert_int_eq(c.shared, 0);
    bw_metrics_add(&c, &c.total[BW_MT_TX], 1);
    bw_metrics_read(m, pool, 0, &s);
    ck_assert_int_eq(s.shards_used, 1);     /* the dead worker's shard, taken over */
    ck_assert_uint_eq(s.total[BW_MT_TX], 8);
    apr_pool_destroy(gen);
    munmap(base, size);
}
END_TEST

/* ---- transactions ----------------------------------------------------------- */

static const char *rule_file(const char *text)
{
    char *path = apr_pstrdup(pool, "/tmp/bw_test_metrics_XXXXXX");
    apr_file_t *f;
    ck_assert_int_eq(apr_file_mktemp(&f, path, APR_CREATE | APR_READ | APR_WRITE | APR_EXCL, pool),
                     APR_SUCCESS);
    apr_file_write_full(f, text, strlen(text), NULL);
    apr_file_close(f);
    return path;
}

static const char *RULES =
    "SecRuleEngine On\n"
    "SecDefaultAction \"phase:2,log,pass\"\n"
    "SecAction \"id:10,phase:1,pass,nolog,setvar:tx.pl=1\"\n"
    "SecRule TX:pl \"@lt 2\" \"id:11,phase:1,pass,nolog,skipAfter:END_PL2\"\n"
    "SecRule ARGS \"@rx never-in-pl1\" \"id:12,phase:1,deny\"\n"
    "SecMarker END_PL2\n"
    "SecRule ARGS \"@rx evil\" \"id:20,phase:2,block,log,setvar:tx.score=+5\"\n"
    "SecRule ARGS_NAMES \"@pm foo bar\" \"id:21,phase:2,pass,log\"\n"
    "SecRule TX:score \"@ge 5\" \"id:22,phase:2,deny,status:403,log\"\n"
    "SecRule RESPONSE_STATUS \"@streq 200\" \"id:30,phase:3,pass,nolog\"\n";

/* The timing sample run_all's transactions take: 1, every transaction
 * timed and counted rule by rule; 0, none timed, phases counted as paths
 * (bw_metrics_path). */
static int run_sample = 1;

/* Each uri through the five phases, counted in m. */
static void run_all(bw_program_t *prog, bw_metrics_t *m, const char *const *uris, int n)
{
    int i, ph;
    for (i = 0; i < n; i++) {
        apr_pool_t *p;
        bw_request_t req;
        bw_intervention_t iv;
        bw_response_t res;
        bw_tx_t *tx;
        apr_pool_create(&p, pool);
        memset(&req, 0, sizeof(req));
        req.method = bw_str_make("GET");
        req.uri = bw_str_make(uris[i]);
        req.protocol = bw_str_make("HTTP/1.1");
        req.request_line = bw_str_make(apr_pstrcat(p, "GET ", uris[i], " HTTP/1.1", NULL));
        req.remote_addr = bw_str_make("10.0.0.1");
        tx = bw_tx_create(p, prog, &req, NULL);
        bw_tx_set_metrics(tx, m, run_sample);
        for (ph = 1; ph <= 5; ph++) {
            if (ph == 3) {
                memset(&res, 0, sizeof(res));
                res.status = 200;
                res.protocol = bw_str_make("HTTP/1.1");
                bw_tx_set_response(tx, &res);
            }
            bw_tx_run_phase(tx, ph, &iv);
        }
        apr_pool_destroy(p);    /* the transaction's totals are added now */
    }
}

/* What run_all of URIS counts with RULES, however the program was built
 * and whichever shard counted it. */
static const char *const URIS[] = { "/a?x=1", "/a?foo=evil", "/b?bar=2", "/c?q=evil&foo=1", "/d" };

static void check_counts(const bw_metrics_snap_t *s, int sampled)
{
    int ph;
    ck_assert_uint_eq(s->total[BW_MT_TX], 5);
    ck_assert_uint_eq(s->total[BW_MT_INTERCEPTED], 2);
    ck_assert_uint_eq(s->status[403], 2);
    ck_assert_uint_eq(s->total[BW_MT_TIMED_TX], sampled ? 5 : 0);
    ck_assert_uint_eq(s->phase_runs[1], 5);
    for (ph = 1; ph <= 5; ph++)   /* every transaction timed (sample 1), or none */
        ck_assert_uint_eq(s->phase_timed[ph], sampled ? s->phase_runs[ph] : 0);
    ck_assert_uint_eq(rule_of(s, 10)->evals, 5);
    ck_assert_uint_eq(rule_of(s, 10)->matches, 5);
    ck_assert_uint_eq(rule_of(s, 11)->matches, 5);
    ck_assert_uint_eq(rule_of(s, 12)->evals, 0);     /* skipped over */
    ck_assert_uint_eq(rule_of(s, 20)->evals, 5);
    ck_assert_uint_eq(rule_of(s, 20)->matches, 2);
    ck_assert_uint_eq(rule_of(s, 20)->blocks, 0);
    ck_assert_uint_eq(rule_of(s, 21)->matches, 3);
    ck_assert_uint_eq(rule_of(s, 22)->blocks, 2);
    ck_assert_uint_eq(rule_of(s, 30)->evals, 3);     /* phase 3 not after a deny */
    ck_assert_uint_eq(rule_of(s, 22)->timed, sampled ? rule_of(s, 22)->evals : 0);
}

static bw_program_t *rules_program(const char *path, unsigned flags)
{
    bw_config_t *cfg = bw_config_create(pool);
    char *err = NULL;
    bw_program_t *prog;
    ck_assert_ptr_null(bw_config_load_file(cfg, path));
    prog = bw_program_build_ex(pool, NULL, cfg, flags, &err);
    ck_assert_msg(prog != NULL, "%s", err ? err : "?");
    return prog;
}

START_TEST(test_transactions_same_any_program)
{
    const char *path = rule_file(RULES);
    bw_metrics_snap_t ref = { 0 };
    unsigned k;
    /* three programs, each counted rule by rule and as paths */
    for (k = 0; k < 6; k++) {
        static const unsigned flags[] = { 0, BW_PROG_NO_SCAN, BW_PROG_NO_FOLD };
        bw_program_t *prog = rules_program(path, flags[k % 3]);
        bw_metrics_t *m = fresh();
        bw_metrics_snap_t s;
        int i;
        bw_metrics_register_program(m, prog);
        run_sample = k < 3;
        run_all(prog, m, URIS, 5);
        run_sample = 1;
        bw_metrics_read(m, pool, 0, &s);
        check_counts(&s, k < 3);
        if (k == 0) {
            ref = s;
            continue;
        }
        /* folding and the scan change nothing the counters say */
        ck_assert_int_eq(s.nrules, ref.nrules);
        for (i = 0; i < ref.nrules; i++) {
            const bw_metrics_rule_t *r = rule_of(&s, ref.rules[i].id);
            ck_assert_ptr_nonnull(r);
            ck_assert_uint_eq(r->evals, ref.rules[i].evals);
            ck_assert_uint_eq(r->matches, ref.rules[i].matches);
            ck_assert_uint_eq(r->blocks, ref.rules[i].blocks);
        }
        for (i = 1; i <= 5; i++)
            ck_assert_uint_eq(s.phase_evals[i], ref.phase_evals[i]);
    }
    unlink(path);
}
END_TEST

/* A thread that holds a shard until told to let go. */
static void *holding_thread(void *data)
{
    thr_arg_t *a = data;
    ck_assert_ptr_nonnull(bw_metrics_shard(a->m));
    pthread_barrier_wait(a->bar);   /* all shards held */
    pthread_barrier_wait(a->bar);   /* the transactions are counted */
    return NULL;
}

/* Where the step loop leaves its straight path, every evaluation is still
 * counted once: over a rule removed at run time (ctl:ruleRemoveById), at
 * each of 70 skipAfter jumps in one phase and where allow stops the phase;
 * the same folded, unscanned and unfolded, and each path the second time
 * (from its record) as the first (spelt out). */
START_TEST(test_transactions_jumps)
{
    static const char *const uris[] = { "/x", "/x?stop=1", "/x?stop=1", "/x" };
    char *text = apr_pstrcat(pool,
        "SecRuleEngine On\n"
        "SecAction \"id:100,phase:2,pass,nolog,ctl:ruleRemoveById=102\"\n"
        "SecRule REQUEST_URI \"@rx ^/\" \"id:101,phase:2,pass,nolog\"\n"
        "SecRule REQUEST_URI \"@rx ^/\" \"id:102,phase:2,pass,nolog\"\n"
        "SecRule REQUEST_URI \"@rx ^/\" \"id:103,phase:2,pass,nolog\"\n", NULL);
    const char *path;
    unsigned k;
    int j;
    for (j = 0; j < 70; j++)
        text = apr_psprintf(pool, "%sSecRule REQUEST_URI \"@rx ^/\" "
                            "\"id:%d,phase:2,pass,nolog,skipAfter:M%d\"\n"
                            "SecRule REQUEST_URI \"@rx ^/\" \"id:%d,phase:2,pass,nolog\"\n"
                            "SecMarker M%d\n", text, 1000 + 2 * j, j, 1001 + 2 * j, j);
    text = apr_pstrcat(pool, text,
        "SecRule ARGS:stop \"@streq 1\" \"id:200,phase:2,allow,nolog\"\n"
        "SecRule REQUEST_URI \"@rx ^/\" \"id:201,phase:2,pass,nolog\"\n", NULL);
    path = rule_file(text);
    for (k = 0; k < 6; k++) {
        static const unsigned flags[] = { 0, BW_PROG_NO_SCAN, BW_PROG_NO_FOLD };
        bw_program_t *prog = rules_program(path, flags[k % 3]);
        bw_metrics_t *m = fresh();
        bw_metrics_snap_t s;
        uint64_t evals = 0;
        int i;
        bw_metrics_register_program(m, prog);
        run_sample = k < 3;     /* rule by rule, then as paths */
        run_all(prog, m, uris, 4);
        run_sample = 1;
        bw_metrics_read(m, pool, 0, &s);
        ck_assert_uint_eq(rule_of(&s, 100)->evals, 4);
        ck_assert_uint_eq(rule_of(&s, 101)->evals, 4);
        ck_assert_uint_eq(rule_of(&s, 102)->evals, 0);      /* removed */
        ck_assert_uint_eq(rule_of(&s, 103)->evals, 4);
        for (j = 0; j < 70; j++) {
            ck_assert_uint_eq(rule_of(&s, 1000 + 2 * j)->evals, 4);
            ck_assert_uint_eq(rule_of(&s, 1000 + 2 * j)->matches, 4);
            ck_assert_uint_eq(rule_of(&s, 1001 + 2 * j)->evals, 0);   /* jumped over */
        }
        ck_assert_uint_eq(rule_of(&s, 200)->evals, 4);
        ck_assert_uint_eq(rule_of(&s, 200)->matches, 2);
        ck_assert_uint_eq(rule_of(&s, 201)->evals, 2);     /* not after allow */
        ck_assert_uint_eq(rule_of(&s, 201)->matches, 2);
        for (i = 0; i < s.nrules; i++)
            evals += s.rules[i].evals;
        ck_assert_uint_eq(s.phase_evals[2], evals);
        ck_assert_uint_eq(evals, 4 * (3 + 70 + 1) + 2);
    }
    unlink(path);
}
END_TEST

/* Every shard held by another thread: this thread's transactions count in
 * the shared shard (the executor's atomic loop), exactly as in its own. */
START_TEST(test_transactions_shared_shard)
{
    const char *path = rule_file(RULES);
    bw_program_t *prog = rules_program(path, 0);
    bw_metrics_t *m = fresh();
    pthread_t th[BW_METRICS_SHARDS];
    pthread_barrier_t bar;
    thr_arg_t a;
    bw_metrics_snap_t s;
    bw_metrics_ctr_t c;
    int i;
    a.m = m;
    a.bar = &bar;
    pthread_barrier_init(&bar, NULL, BW_METRICS_SHARDS + 1);
    for (i = 0; i < BW_METRICS_SHARDS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, holding_thread, &a), 0);
    pthread_barrier_wait(&bar);
    bw_metrics_counters(bw_metrics_shard(m), &c);
    ck_assert_int_eq(c.shared, 1);
    bw_metrics_register_program(m, prog);
    run_all(prog, m, URIS, 5);
    pthread_barrier_wait(&bar);
    for (i = 0; i < BW_METRICS_SHARDS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    bw_metrics_read(m, pool, 0, &s);
    check_counts(&s, 1);
    unlink(path);
}
END_TEST

/* More distinct paths than a shard has records for (2^9 combinations of
 * nine rules matching, twice over, with a block on some): the records
 * that fit count each path, the rest is counted rule by rule, and the
 * sums are exact either way. */
START_TEST(test_paths_overflow)
{
    char *text = apr_pstrdup(pool, "SecRuleEngine On\n");
    const char **uris = apr_palloc(pool, sizeof(char *) * 1024);
    bw_program_t *prog;
    bw_metrics_t *m;
    bw_metrics_snap_t s;
    const char *path;
    int j, u;
    for (j = 0; j < 9; j++)
        text = apr_psprintf(pool, "%sSecRule ARGS:a%d \"@streq 1\" \"id:%d,phase:2,pass,nolog\"\n",
                            text, j, 500 + j);
    text = apr_pstrcat(pool, text,
        "SecRule ARGS:a8 \"@streq 1\" \"id:600,phase:2,deny,status:403,nolog,chain\"\n"
        "    SecRule ARGS:a7 \"@streq 1\"\n"
        "SecRule REQUEST_URI \"@rx ^/\" \"id:601,phase:2,pass,nolog\"\n", NULL);
    path = rule_file(text);
    prog = rules_program(path, 0);
    m = fresh();
    bw_metrics_register_program(m, prog);
    for (u = 0; u < 1024; u++) {
        char *q = apr_pstrdup(pool, "/p?z=0");
        for (j = 0; j < 9; j++)
            q = apr_psprintf(pool, "%s&a%d=%d", q, j, (u >> j) & 1);
        uris[u] = q;
    }
    run_sample = 0;
    run_all(prog, m, uris, 1024);
    run_sample = 1;
    bw_metrics_read(m, pool, 0, &s);
    for (j = 0; j < 9; j++) {
        ck_assert_uint_eq(rule_of(&s, 500 + j)->evals, 1024);
        ck_assert_uint_eq(rule_of(&s, 500 + j)->matches, 512);
    }
    ck_assert_uint_eq(rule_of(&s, 600)->evals, 1024);
    ck_assert_uint_eq(rule_of(&s, 600)->matches, 256);   /* a8 and a7 */
    ck_assert_uint_eq(rule_of(&s, 600)->blocks, 256);
    ck_assert_uint_eq(rule_of(&s, 601)->evals, 768);     /* not after a deny */
    ck_assert_uint_eq(s.status[403], 256);
    ck_assert_uint_eq(s.phase_evals[2], 9 * 1024 + 1024 + 768);
    unlink(path);
}
END_TEST

/* ---- formats ---------------------------------------------------------------- */

START_TEST(test_prometheus_text)
{
    bw_metrics_t *m = fresh();
    bw_metrics_ctr_t c;
    bw_metrics_snap_t s;
    bw_metrics_info_t info;
    char *t;
    bw_metrics_counters(bw_metrics_shard(m), &c);
    bw_metrics_add(&c, &c.matches[bw_metrics_rule_index(m, 942100)], 3);
    bw_metrics_add(&c, &c.ns[bw_metrics_rule_index(m, 942100)], 1500000000);
    bw_metrics_blocked(m, bw_metrics_shard(m), 403, 0);
    bw_metrics_read(m, pool, 0, &s);
    memset(&info, 0, sizeof(info));
    info.engine_mode = "DetectionOnly";
    info.ruleset = "OWASP_CRS/4.0 \"x\"\\";
    t = bw_metrics_prometheus(pool, &s, &info);
    ck_assert_ptr_nonnull(strstr(t, "\nbulwark_rule_matches_total{id=\"942100\"} 3\n"));
    ck_assert_ptr_nonnull(strstr(t, "\nbulwark_rule_sampled_seconds_total{id=\"942100\"} 1.500000000\n"));
    ck_assert_ptr_nonnull(strstr(t, "\nbulwark_requests_blocked_total{status=\"403\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t, "# TYPE bulwark_rule_matches_total counter\n"));
    ck_assert_ptr_nonnull(strstr(t, "ruleset=\"OWASP_CRS/4.0 \\\"x\\\"\\\\\"} 1\n"));
    t = bw_metrics_json(pool, &s, &info);
    ck_assert_ptr_nonnull(strstr(t, "\"ruleset\":\"OWASP_CRS/4.0 \\\"x\\\"\\\\\""));
    ck_assert_ptr_nonnull(strstr(t, "{\"id\":942100,\"evaluations\":0,\"matches\":3,"));
    t = bw_metrics_html(pool, &s, &info);
    ck_assert_ptr_nonnull(strstr(t, "OWASP_CRS/4.0 &quot;x&quot;\\"));
    ck_assert_ptr_nonnull(strstr(t, "<td>942100</td>"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("counters");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_directory);
    tcase_add_test(tc, test_threads_exact);
    tcase_add_test(tc, test_threads_reuse);
    tcase_add_test(tc, test_adopt);
    tcase_add_test(tc, test_dead_owner);
    tcase_add_test(tc, test_transactions_same_any_program);
    tcase_add_test(tc, test_transactions_jumps);
    tcase_add_test(tc, test_transactions_shared_shard);
    tcase_add_test(tc, test_paths_overflow);
    tcase_add_test(tc, test_prometheus_text);
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
