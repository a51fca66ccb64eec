/*
 * The shared record table (base/bw_shmtab.c): records found, rewritten and
 * deleted by key; expiry; a full table evicting its least recently used
 * record or refusing; a record too big for its slot; a block adopted with
 * its records; a worker that dies holding a stripe's lock; and processes
 * that count on one block at once losing no increment.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <apr_general.h>
#include "base/bw_shmtab.h"

static apr_pool_t *pool;

static void setup(void)
{
    apr_pool_create(&pool, NULL);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

/* A block every forked child shares. */
static void *shared_block(size_t size)
{
    void *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(b, MAP_FAILED);
    return b;
}

/* The callbacks: write `set` (NULL: keep), remember what was there. */
typedef struct {
    const char *set;
    int64_t expires;
    int del;
    char seen[256];
    int found;
} io_t;

static void io_fn(void *baton, bw_shmtab_op_t *op)
{
    io_t *io = baton;
    io->found = op->cur != NULL;
    io->seen[0] = '\0';
    if (op->cur)
        snprintf(io->seen, sizeof io->seen, "%.*s", (int)op->cur_len, op->cur);
    if (io->del) {
        op->action = BW_SHMTAB_DELETE;
    } else if (io->set) {
        op->action = BW_SHMTAB_WRITE;
        op->data = io->set;
        op->len = strlen(io->set);
        op->expires = io->expires;
    }
}

static int putn(bw_shmtab_t *t, const char *key, size_t klen, const char *val, int64_t expires,
                int64_t now)
{
    io_t io;
    memset(&io, 0, sizeof(io));
    io.set = val;
    io.expires = expires;
    return bw_shmtab_access(t, key, klen, now, io_fn, &io);
}

static int put(bw_shmtab_t *t, const char *key, const char *val, int64_t expires, int64_t now)
{
    return putn(t, key, strlen(key), val, expires, now);
}

/* What key holds now (NULL: no record). */
static const char *get(bw_shmtab_t *t, const char *key, int64_t now)
{
    io_t io;
    memset(&io, 0, sizeof(io));
    ck_assert_int_eq(bw_shmtab_access(t, key, strlen(key), now, io_fn, &io), BW_SHMTAB_OK);
    return io.found ? apr_pstrdup(pool, io.seen) : NULL;
}

static bw_shmtab_t *table(size_t size, unsigned rsize, int refuse)
{
    const char *err = NULL;
    int adopted = -1;
    bw_shmtab_t *t = bw_shmtab_attach(pool, shared_block(size), size, rsize, refuse, &adopted, &err);
    ck_assert_msg(t != NULL, "%s", err ? err : "");
    ck_assert_int_eq(adopted, 0);
    return t;
}

START_TEST(test_records)
{
    bw_shmtab_t *t = table(1 << 20, 256, 0);
    io_t io;
    ck_assert_ptr_null(get(t, "a", 100));
    ck_assert_int_eq(put(t, "a", "one", 0, 100), BW_SHMTAB_OK);
    ck_assert_int_eq(put(t, "b", "two", 0, 100), BW_SHMTAB_OK);
    ck_assert_str_eq(get(t, "a", 100), "one");
    ck_assert_int_eq(put(t, "a", "uno", 0, 100), BW_SHMTAB_OK);
    ck_assert_str_eq(get(t, "a", 100), "uno");
    ck_assert_str_eq(get(t, "b", 100), "two");
    memset(&io, 0, sizeof(io));
    io.del = 1;
    ck_assert_int_eq(bw_shmtab_access(t, "a", 1, 100, io_fn, &io), BW_SHMTAB_OK);
    ck_assert_ptr_null(get(t, "a", 100));
    ck_assert_str_eq(get(t, "b", 100), "two");
    /* keys are bytes: a NUL inside is part of the key */
    ck_assert_int_eq(putn(t, "b\0x", 3, "three", 0, 100), BW_SHMTAB_OK);
    ck_assert_str_eq(get(t, "b", 100), "two");
}
END_TEST

START_TEST(test_expiry)
{
    bw_shmtab_t *t = table(1 << 20, 256, 0);
    bw_shmtab_stats_t st;
    ck_assert_int_eq(put(t, "k", "v", 110, 100), BW_SHMTAB_OK);
    ck_assert_str_eq(get(t, "k", 109), "v");
    ck_assert_ptr_null(get(t, "k", 110));
    bw_shmtab_stats(t, &st);
    ck_assert_uint_eq(st.records, 0);
}
END_TEST

/* Many records: every one found again (the index, its deletions shifting
 * entries back, and stripes), and the count right. */
START_TEST(test_many)
{
    unsigned cap = bw_shmtab_capacity(1 << 20, 128);
    bw_shmtab_t *t = table(1 << 20, 128, 1);
    bw_shmtab_stats_t st;
    unsigned i, n = cap / 2;
    char k[32], v[32];
    ck_assert_uint_gt(cap, 1000);
    for (i = 0; i < n; i++) {
        snprintf(k, sizeof k, "key-%u", i);
        snprintf(v, sizeof v, "v%u", i);
        ck_assert_int_eq(put(t, k, v, 0, 1), BW_SHMTAB_OK);
    }
    for (i = 0; i < n; i += 2) {
        io_t io;
        memset(&io, 0, sizeof(io));
        io.del = 1;
        snprintf(k, sizeof k, "key-%u", i);
        ck_assert_int_eq(bw_shmtab_access(t, k, strlen(k), 1, io_fn, &io), BW_SHMTAB_OK);
        ck_assert_int_eq(io.found, 1);
    }
    for (i = 0; i < n; i++) {
        const char *got;
        snprintf(k, sizeof k, "key-%u", i);
        snprintf(v, sizeof v, "v%u", i);
        got = get(t, k, 1);
        if (i % 2)
            ck_assert_msg(got && !strcmp(got, v), "%s: %s", k, got ? got : "(none)");
        else
            ck_assert_msg(got == NULL, "%s deleted but found", k);
    }
    bw_shmtab_stats(t, &st);
    ck_assert_uint_eq(st.records, n - (n + 1) / 2);
}
END_TEST

/* Full, evicting: the least recently used record goes, one read keeps a
 * record young. The table is filled with far more keys than it holds. */
START_TEST(test_full_evicts_lru)
{
    bw_shmtab_t *t = table(1 << 20, 1024, 0);
    bw_shmtab_stats_t st;
    unsigned i, cap = bw_shmtab_capacity(1 << 20, 1024);
    char k[32];
    ck_assert_int_eq(put(t, "keep", "x", 0, 1), BW_SHMTAB_OK);
    for (i = 0; i < cap * 4; i++) {
        snprintf(k, sizeof k, "k%u", i);
        ck_assert_int_eq(put(t, k, "y", 0, 1), BW_SHMTAB_OK);
        ck_assert_str_eq(get(t, "keep", 1), "x");     /* read: most recently used again */
    }
    bw_shmtab_stats(t, &st);
    ck_assert_uint_eq(st.records, st.capacity);
    ck_assert_uint_ge(st.evicted, cap * 3);
    ck_assert_ptr_null(get(t, "k0", 1));
    snprintf(k, sizeof k, "k%u", cap * 4 - 1);
    ck_assert_str_eq(get(t, k, 1), "y");
}
END_TEST

/* Full, refusing: new records are refused, old ones stay; a record whose
 * time is over makes room. */
START_TEST(test_full_refuses)
{
    bw_shmtab_t *t = table(1 << 20, 1024, 1);
    bw_shmtab_stats_t st;
    unsigned i, refused = 0, cap = bw_shmtab_capacity(1 << 20, 1024);
    char k[32];
    for (i = 0; i < cap * 2; i++) {
        snprintf(k, sizeof k, "k%u", i);
        if (put(t, k, "y", i == 0 ? 50 : 0, 1) == BW_SHMTAB_FULL)
            refused++;
    }
    bw_shmtab_stats(t, &st);
    ck_assert_uint_gt(refused, 0);
    ck_assert_uint_eq(st.refused, refused);
    ck_assert_uint_eq(st.evicted, 0);
    ck_assert_str_eq(get(t, "k1", 1), "y");
    /* k0 expires at 50: from then on its slot is free for a new record of its stripe */
    for (i = 0; i < cap * 2; i++) {
        snprintf(k, sizeof k, "new%u", i);
        if (put(t, k, "z", 0, 60) == BW_SHMTAB_OK)
            break;
    }
    ck_assert_uint_lt(i, cap * 2);
    ck_assert_str_eq(get(t, "k1", 60), "y");
}
END_TEST

START_TEST(test_too_big)
{
    bw_shmtab_t *t = table(1 << 20, 128, 0);
    char big[200];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_uint_eq(bw_shmtab_room(t, 4), 128 - 32 - 4);
    ck_assert_int_eq(put(t, "k", big, 0, 1), BW_SHMTAB_TOOBIG);
    ck_assert_ptr_null(get(t, "k", 1));
    big[128 - 32 - 1] = '\0';    /* exactly the room of key "k" */
    ck_assert_int_eq(put(t, "k", big, 0, 1), BW_SHMTAB_OK);
}
END_TEST

/* A graceful restart attaches the same block again: same geometry, the
 * records are kept; another record size lays it out anew. */
START_TEST(test_adopt)
{
    size_t size = 1 << 20;
    void *b = shared_block(size);
    const char *err = NULL;
    int adopted = -1;
    bw_shmtab_t *t = bw_shmtab_attach(pool, b, size, 256, 0, &adopted, &err);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(adopted, 0);
    ck_assert_int_eq(put(t, "k", "v", 0, 1), BW_SHMTAB_OK);
    t = bw_shmtab_attach(pool, b, size, 256, 0, &adopted, &err);
    ck_assert_int_eq(adopted, 1);
    ck_assert_str_eq(get(t, "k", 1), "v");
    t = bw_shmtab_attach(pool, b, size, 512, 0, &adopted, &err);
    ck_assert_int_eq(adopted, 0);
    ck_assert_ptr_null(get(t, "k", 1));
    ck_assert_ptr_null(bw_shmtab_attach(pool, b, 1024, 1024, 0, &adopted, &err));
    ck_assert_ptr_nonnull(strstr(err, "cannot hold"));
}
END_TEST

static void die_fn(void *baton, bw_shmtab_op_t *op)
{
    _exit(0);
}

/* A worker dies while it holds a stripe's lock (its callback never
 * returns): the next access to that stripe goes on, after clearing it. */
START_TEST(test_owner_dies)
{
    bw_shmtab_t *t = table(1 << 20, 256, 0);
    bw_shmtab_stats_t st;
    pid_t pid;
    int status;
    ck_assert_int_eq(put(t, "k", "before", 0, 1), BW_SHMTAB_OK);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        bw_shmtab_access(t, "k", 1, 1, die_fn, NULL);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    alarm(10);      /* a deadlock fails the test instead of hanging it */
    ck_assert_ptr_null(get(t, "k", 1));    /* its stripe was cleared */
    ck_assert_int_eq(put(t, "k", "after", 0, 1), BW_SHMTAB_OK);
    ck_assert_str_eq(get(t, "k", 1), "after");
    alarm(0);
    bw_shmtab_stats(t, &st);
    ck_assert_uint_eq(st.recovered, 1);
}
END_TEST

static void incr_fn(void *baton, bw_shmtab_op_t *op)
{
    char *buf = baton;
    long v = op->cur ? strtol(apr_pstrndup(pool, op->cur, op->cur_len), NULL, 10) : 0;
    snprintf(buf, 32, "%ld", v + 1);
    op->action = BW_SHMTAB_WRITE;
    op->data = buf;
    op->len = strlen(buf);
}

/* 8 processes add 1 to 4 counters 2,000 times each at once: none lost. */
START_TEST(test_concurrent_increments)
{
    bw_shmtab_t *t = table(1 << 20, 256, 0);
    const int procs = 8, rounds = 2000;
    pid_t pids[8];
    int p, i, status;
    for (p = 0; p < procs; p++) {
        pids[p] = fork();
        ck_assert_int_ge(pids[p], 0);
        if (pids[p] == 0) {
            char buf[32];
            for (i = 0; i < rounds; i++) {
                char k[8];
                snprintf(k, sizeof k, "c%d", i % 4);
                if (bw_shmtab_access(t, k, strlen(k), 1, incr_fn, buf) != BW_SHMTAB_OK)
                    _exit(1);
            }
            _exit(0);
        }
    }
    for (p = 0; p < procs; p++) {
        ck_assert_int_eq(waitpid(pids[p], &status, 0), pids[p]);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    for (i = 0; i < 4; i++) {
        char k[8];
        snprintf(k, sizeof k, "c%d", i);
        ck_assert_str_eq(get(t, k, 1), apr_psprintf(pool, "%d", procs * rounds / 4));
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("shmtab");
    TCase *tc = tcase_create("table");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_records);
    tcase_add_test(tc, test_expiry);
    tcase_add_test(tc, test_many);
    tcase_add_test(tc, test_full_evicts_lru);
    tcase_add_test(tc, test_full_refuses);
    tcase_add_test(tc, test_too_big);
    tcase_add_test(tc, test_adopt);
    tcase_add_test(tc, test_owner_dies);
    tcase_add_test(tc, test_concurrent_increments);
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
