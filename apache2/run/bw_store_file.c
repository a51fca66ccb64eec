/*
 * The file collection store (SecCollectionBackend file; also what a
 * transaction without a store uses): one small text file per (collection,
 * key) under SecDataDir, shared by every worker process and thread and
 * surviving restarts.
 *
 * Concurrency: a record is read at initcol and, when the transaction changed
 * it, written back at the end of the transaction under flock(2) on its file (flock locks belong to the
 * open file, so threads of one process exclude each other too). Writing
 * re-reads the record under the lock and merges: a variable changed only by
 * setvar =+ / =- contributes its delta to the value stored now, a variable
 * set outright replaces it, a deleted one is removed. So two workers that
 * each add 1 to ip.counter store +2, never +1 (no lost update).
 *
 * Lifetime, as ModSecurity defines it: a record not updated for TIMEOUT
 * seconds (SecCollectionTimeout) starts afresh; expirevar's __expire_NAME
 * drops NAME when its time has passed.
 *
 * File format: one "name<TAB>value" line per variable; '\\', control and
 * non-ASCII bytes are written as \xHH.
 */
#include <string.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "run/bw_store.h"

#define RECORD_MAX (1024 * 1024)   /* larger records are ignored (and rewritten) */

/* DIR/bulwark-COLL-SHA1(key): hex the digest of the key (given, or
 * taken now). */
static const char *record_path(apr_pool_t *p, const char *dir, const char *coll, bw_str_t key,
                               const char *hex)
{
    char own[41];
    if (!hex) {
        bw_sha1_hex(key, own);
        hex = own;
    }
    return apr_pstrcat(p, dir, "/bulwark-", coll, "-", hex, NULL);
}

static bw_str_t unescape(apr_pool_t *p, const char *s, size_t n)
{
    char *o = apr_palloc(p, n + 1);
    size_t i, k = 0;
    for (i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' && bw_hexval(s[i + 2]) >= 0 && bw_hexval(s[i + 3]) >= 0) {
            o[k++] = (char)(bw_hexval(s[i + 2]) * 16 + bw_hexval(s[i + 3]));
            i += 3;
        } else {
            o[k++] = s[i];
        }
    }
    o[k] = '\0';
    return bw_str_n(o, k);
}

static char *escape(apr_pool_t *p, bw_str_t s)
{
    char *o = apr_palloc(p, s.len * 4 + 1), *w = o;
    size_t i;
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (c == '\\' || c < 0x20 || c >= 0x7f) {
            apr_snprintf(w, 5, "\\x%02x", c);
            w += 4;
        } else {
            *w++ = (char)c;
        }
    }
    *w = '\0';
    return o;
}

static void parse_record(apr_pool_t *p, bw_coll_t *c, const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t e = i, tab;
        while (e < len && buf[e] != '\n')
            e++;
        for (tab = i; tab < e && buf[tab] != '\t'; tab++)
            ;
        if (tab < e)
            bw_coll_set(p, c, unescape(p, buf + i, tab - i), unescape(p, buf + tab + 1, e - tab - 1));
        i = e + 1;
    }
}

static void read_record(apr_pool_t *p, int fd, bw_coll_t *c)
{
    struct stat st;
    char *buf;
    size_t got = 0;
    if (fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size > RECORD_MAX)
        return;
    buf = apr_palloc(p, (size_t)st.st_size + 1);
    while (got < (size_t)st.st_size) {
        ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    parse_record(p, c, buf, got);
}

static long num_of(apr_pool_t *p, const bw_kv_t *kv)
{
    return kv ? strtol(bw_str_pdup(p, kv->value), NULL, 10) : 0;
}

static const bw_kv_t *get(const bw_coll_t *c, const char *name)
{
    return bw_coll_get(c, bw_str_make(name));
}

/* Drop a timed-out record's variables and expired ones (expirevar). */
static void apply_lifetime(apr_pool_t *p, bw_coll_t *c, long now)
{
    int i;
    long last = num_of(p, get(c, "LAST_UPDATE_TIME")), timeout = num_of(p, get(c, "TIMEOUT"));
    if (last && timeout > 0 && last + timeout < now) {
        bw_coll_clear(p, c);
        return;
    }
    for (i = 0; i < c->order->nelts; i++) {
        const bw_kv_t *kv = ((const bw_kv_t **)c->order->elts)[i];
        if (!kv->name.data || kv->name.len <= 9 || strncmp(kv->name.data, "__expire_", 9))
            continue;
        if (num_of(p, kv) <= now) {
            bw_coll_unset(c, bw_str_n(kv->name.data + 9, kv->name.len - 9));
            bw_coll_unset(c, kv->name);
        }
    }
}

static void set_num(apr_pool_t *p, bw_coll_t *c, const char *name, long v)
{
    bw_key_t k = bw_key_make(bw_str_make(name));
    bw_coll_put(p, c, &k, bw_num_str(p, v), BW_COLL_KEEP_VALUE);
}

static int file_load(bw_store_t *st, bw_tx_t *tx, bw_coll_t *c, const char **why)
{
    bw_pcoll_t *pc = c->persist;
    long now = (long)apr_time_sec(apr_time_now());
    int fd, i;

    if (!tx->cfg->data_dir) {
        bw_tx_log_message(tx, 0, "Unable to retrieve collection (name \"%s\", key \"%s\"). "
                          "Use SecDataDir to define the data directory first.",
                          c->name, bw_str_pdup(tx->pool, pc->key));
    } else {
        pc->path = record_path(tx->pool, tx->cfg->data_dir, c->name, pc->key, pc->key_sha1);
        fd = open(pc->path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (flock(fd, LOCK_SH) == 0) {
                read_record(tx->pool, fd, c);
                flock(fd, LOCK_UN);
            }
            close(fd);
        }
        if (c->order->nelts)
            apply_lifetime(tx->pool, c, now);
    }
    if (bw_persist_fresh(tx, c, now)) {
        /* a new record is written whole: what it holds now counts as set
         * outright (bw_persist_change adds to that) */
        bw_str_t *fresh = apr_palloc(tx->pool, sizeof(bw_str_t) * (size_t)c->order->nelts);
        for (i = 0; i < c->order->nelts; i++)
            fresh[i] = ((bw_kv_t **)c->order->elts)[i]->name;
        pc->fresh = fresh;
        pc->nfresh = c->order->nelts;
    } else {
        pc->orig = apr_hash_make(tx->pool);
        for (i = 0; i < c->order->nelts; i++) {
            const bw_kv_t *kv = ((const bw_kv_t **)c->order->elts)[i];
            if (kv->name.data)
                apr_hash_set(pc->orig, bw_str_lower(tx->pool, kv->name).data, APR_HASH_KEY_STRING,
                             apr_pmemdup(tx->pool, kv, sizeof(*kv)));
        }
    }
    return 0;
}

/* Was the variable lname set outright in this transaction? */
static int set_outright(const bw_pcoll_t *pc, const char *lname)
{
    int i;
    if (pc->abs_set && apr_hash_get(pc->abs_set, lname, APR_HASH_KEY_STRING))
        return 1;
    for (i = 0; i < pc->nfresh; i++)
        if (pc->fresh[i].data && bw_str_eq_cstr_ci(pc->fresh[i], lname))
            return 1;
    return 0;
}

/* Merge the transaction's view of c into the record read now (cur). */
static void merge(apr_pool_t *p, const bw_coll_t *c, bw_coll_t *cur)
{
    const bw_pcoll_t *pc = c->persist;
    apr_hash_index_t *hi;
    int i;
    for (i = 0; i < c->order->nelts; i++) {
        const bw_kv_t *kv = ((const bw_kv_t **)c->order->elts)[i];
        const char *lname;
        const bw_kv_t *o;
        if (!kv->name.data)
            continue;
        lname = bw_str_lower(p, kv->name).data;
        o = pc->orig ? apr_hash_get(pc->orig, lname, APR_HASH_KEY_STRING) : NULL;
        if (o && bw_str_eq(o->value, kv->value))
            continue;                                   /* unchanged here */
        if (set_outright(pc, lname))
            bw_coll_set(p, cur, kv->name, kv->value);
        else                                            /* += / -= only: add the delta */
            set_num(p, cur, bw_str_pdup(p, kv->name),
                    num_of(p, bw_coll_get(cur, kv->name)) + num_of(p, kv) - num_of(p, o));
    }
    for (hi = pc->orig ? apr_hash_first(p, pc->orig) : NULL; hi; hi = apr_hash_next(hi)) {
        const bw_kv_t *o = apr_hash_this_val(hi);
        if (!bw_coll_get(c, o->name))
            bw_coll_unset(cur, o->name);
    }
}

static void write_record(apr_pool_t *p, int fd, const bw_coll_t *cur)
{
    apr_array_header_t *lines = apr_array_make(p, 16, sizeof(char *));
    const char *text;
    size_t len, off = 0;
    int i;
    for (i = 0; i < cur->order->nelts; i++) {
        const bw_kv_t *kv = ((const bw_kv_t **)cur->order->elts)[i];
        if (!kv->name.data || bw_str_eq_cstr_ci(kv->name, "IS_NEW"))
            continue;
        *(char **)apr_array_push(lines) = apr_pstrcat(p, escape(p, kv->name), "\t",
                                                      escape(p, kv->value), "\n", NULL);
    }
    text = apr_array_pstrcat(p, lines, 0);
    len = strlen(text);
    if (ftruncate(fd, 0) != 0)
        return;
    while (off < len) {
        ssize_t n = pwrite(fd, text + off, len - off, (off_t)off);
        if (n <= 0)
            return;
        off += (size_t)n;
    }
}

/* Merge this transaction's changes into the record as it is now, under
 * an exclusive lock. As mod_security2: a collection nothing changed is
 * not written, so initcol:global=global alone costs no exclusive lock per
 * request. */
static void file_finish(bw_store_t *st, bw_tx_t *tx, bw_coll_t *c)
{
    const bw_pcoll_t *pc = c->persist;
    long now = (long)apr_time_sec(apr_time_now());
    bw_coll_t *cur;
    int fd;
    if (!pc->path || !pc->dirty)
        return;
    fd = open(pc->path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0) {
        bw_tx_log_message(tx, 0, "cannot store collection %s in %s: %s", c->name, pc->path,
                          strerror(errno));
        return;
    }
    if (flock(fd, LOCK_EX) != 0) {
        close(fd);
        return;
    }
    cur = bw_coll_create(tx->pool, c->name);
    read_record(tx->pool, fd, cur);
    apply_lifetime(tx->pool, cur, now);
    merge(tx->pool, c, cur);
    set_num(tx->pool, cur, "LAST_UPDATE_TIME", now);
    set_num(tx->pool, cur, "UPDATE_COUNTER", num_of(tx->pool, get(cur, "UPDATE_COUNTER")) + 1);
    write_record(tx->pool, fd, cur);
    flock(fd, LOCK_UN);
    close(fd);
}

/* No change goes out before the end: setvar only marks what it did, so the
 * merge knows outright assignments from deltas. */
const bw_store_ops_t bw_store_file_ops = { "file", file_load, NULL, file_finish };
