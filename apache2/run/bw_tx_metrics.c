/*
 * Counting transactions in the shared block (base/bw_metrics.h).
 *
 * The executor adds to the running thread's shard as it goes: one plain
 * increment per rule it reaches (no lock, no atomic instruction, no clock
 * read), through a map from the phase's slots to the rules' indices in
 * the block. A map is made once per program and thread and kept in the
 * thread's cache. Time is read per phase (two clock reads) and, for one
 * transaction in SecMetricsTimingSample of each thread, per rule. What is
 * per transaction (totals, blocks by status) is added when the
 * transaction's pool goes, so a request that ends early is counted too.
 */
#include <pthread.h>
#include "run/bw_run.h"

/* Per program: per phase, the block index of each slot's rule, and the
 * map's layout in the block (0: none, count rule by rule). */
typedef struct {
    int n[BW_PHASES + 1];
    uint16_t *ix[BW_PHASES + 1];
    uint32_t layout[BW_PHASES + 1];
} prog_map_t;

_Static_assert(BW_METRICS_RULES <= 65536, "a rule index fits the map's 16 bits");

/* A transaction's way to its counters, found once: the thread that runs
 * it and that thread's shard, and the map of the program it runs. Looked
 * up again only if a phase runs in another thread or another program. */
struct bw_tx_metrics_s {
    bw_metrics_t *m;
    int timed;
    pthread_t os;                      /* the thread it is bound to */
    bw_metrics_thread_t *thr;
    bw_metrics_ctr_t ctr;
    const bw_program_t *prog;
    const prog_map_t *map;
};

static uint32_t slot_index(bw_metrics_t *m, const bw_slot_t *s)
{
    return s->cr && s->cr->r ? bw_metrics_rule_index(m, s->cr->r->id) : 0;
}

static prog_map_t *make_map(bw_metrics_t *m, const bw_program_t *prog, apr_pool_t *p)
{
    prog_map_t *pm = apr_pcalloc(p, sizeof(*pm));
    int ph, i;
    for (ph = 1; ph <= BW_PHASES; ph++) {
        const bw_code_t *code = &prog->code[ph];
        pm->n[ph] = code->n;
        pm->ix[ph] = apr_palloc(p, sizeof(uint16_t) * (size_t)(code->n + 1));
        for (i = 0; i < code->n; i++)
            pm->ix[ph][i] = (uint16_t)slot_index(m, &code->slots[i]);
        pm->layout[ph] = code->n <= BW_TX_PATH_STEPS
                         ? bw_metrics_layout(m, prog, ph, pm->ix[ph], code->n) : 0;
    }
    return pm;
}

/* In httpd's parent, before the children: the rules' indices and the
 * phases' layouts, which the children's threads then find. */
void bw_metrics_register_program(bw_metrics_t *m, const bw_program_t *prog)
{
    apr_pool_t *p;
    if (!m || !prog || apr_pool_create(&p, NULL) != APR_SUCCESS)
        return;
    make_map(m, prog, p);
    apr_pool_destroy(p);
}

/* The thread's map of prog (made at the first transaction that runs it).
 * The phase lengths are checked too: a program built where a freed one
 * was gets a map of its own. */
static const prog_map_t *map_of(bw_metrics_t *m, bw_metrics_thread_t *thr,
                                const bw_program_t *prog)
{
    apr_pool_t *p = NULL;
    void **slot = bw_metrics_thread_slot(thr, prog, &p);
    prog_map_t *pm = *slot;
    int ph;
    for (ph = 1; pm && ph <= BW_PHASES; ph++)
        if (pm->n[ph] != prog->code[ph].n)
            pm = NULL;
    if (!pm)
        *slot = pm = make_map(m, prog, p);
    return pm;
}

/* Point tx's counters at the calling thread's shard. */
static int bind_thread(struct bw_tx_metrics_s *tm)
{
    tm->os = pthread_self();
    tm->thr = bw_metrics_thread(tm->m);
    tm->prog = NULL;
    if (!tm->thr)
        return 0;
    bw_metrics_counters(bw_metrics_thread_shard(tm->thr), &tm->ctr);
    return 1;
}

int bw_tx_metrics_phase(bw_tx_t *tx, int phase, bw_tx_mphase_t *mp)
{
    struct bw_tx_metrics_s *tm = tx->metrics;
    mp->on = 0;
    if (!tm)
        return 0;
    /* pthread's own calls: APR's wrappers are a second call each, five
     * phases a transaction */
    if (!pthread_equal(tm->os, pthread_self()) && !bind_thread(tm))
        return 0;
    if (tm->prog != tx->prog) {
        tm->map = map_of(tm->m, tm->thr, tx->prog);
        tm->prog = tx->prog;
    }
    mp->ctr = &tm->ctr;
    mp->ix = tm->map->ix[phase];
    mp->layout = tm->map->layout[phase];
    mp->timed = tm->timed;
    mp->on = 1;
    return 1;
}

/* The transaction is over: its totals. Run in the thread that ends it,
 * which adds to its own shard. */
static apr_status_t tx_counted(void *data)
{
    bw_tx_t *tx = data;
    bw_metrics_shard_t *sh = bw_metrics_shard(tx->metrics->m);
    bw_metrics_ctr_t c;
    const bw_tx_stats_t *st = &tx->stats;
    uint64_t *t;
    bw_metrics_counters(sh, &c);
    t = c.total;
    bw_metrics_add(&c, &t[BW_MT_TX], 1);
    bw_metrics_add(&c, &t[BW_MT_TIMED_TX], tx->metrics->timed ? 1 : 0);
    bw_metrics_add(&c, &t[BW_MT_LINKS], st->rules);
    bw_metrics_add(&c, &t[BW_MT_LINKS_SKIPPED], st->rules_skipped);
    bw_metrics_add(&c, &t[BW_MT_OP_RUNS], st->op_runs);
    bw_metrics_add(&c, &t[BW_MT_CONFIRMS], st->confirms);
    bw_metrics_add(&c, &t[BW_MT_SCAN_VALUES], st->scans);
    bw_metrics_add(&c, &t[BW_MT_SCAN_BYTES], st->bytes_scanned);
    bw_metrics_add(&c, &t[BW_MT_SCAN_CALLS], st->scan_calls);
    if (tx->body_res.error)
        bw_metrics_add(&c, &t[BW_MT_REQBODY_ERROR], 1);
    if (tx->reqbody_rejected || tx->reqbody_truncated)
        bw_metrics_add(&c, &t[BW_MT_REQBODY_LIMIT], 1);
    if (tx->resbody_truncated)
        bw_metrics_add(&c, &t[BW_MT_RESBODY_LIMIT], 1);
    if (tx->intercepted) {
        bw_metrics_add(&c, &t[BW_MT_INTERCEPTED], 1);
        if (tx->iv.disposition == BW_DISP_DROP)
            bw_metrics_add(&c, &t[BW_MT_DROP], 1);
        else if (tx->iv.disposition == BW_DISP_REDIRECT)
            bw_metrics_add(&c, &t[BW_MT_REDIRECT], 1);
        else if (tx->iv.disposition == BW_DISP_PROXY)
            bw_metrics_add(&c, &t[BW_MT_PROXY], 1);
        bw_metrics_blocked(tx->metrics->m, sh,
                           tx->iv.disposition == BW_DISP_DROP ? 0 : tx->iv.status,
                           (int64_t)(apr_time_now() / APR_USEC_PER_SEC));
    }
    return APR_SUCCESS;
}

void bw_tx_set_metrics(bw_tx_t *tx, bw_metrics_t *m, int sample)
{
    struct bw_tx_metrics_s *tm;
    if (!m || tx->metrics)
        return;
    tm = apr_pcalloc(tx->pool, sizeof(*tm));
    tm->m = m;
    if (!bind_thread(tm))
        return;     /* no memory for the thread's state: not counted */
    if (sample > 0)
        tm->timed = bw_metrics_thread_tick(tm->thr) % (unsigned long)sample == 0;
    tx->metrics = tm;
    apr_pool_cleanup_register(tx->pool, tx, tx_counted, apr_pool_cleanup_null);
}
