/*
 * libFuzzer target for the rule-language parser: each input is a rule file.
 * It is written to a temp file in the current directory and loaded the way
 * the CLI loads one (bw_config_load_file: comments, '\' continuations, every
 * directive through bw_config_directive); when it loads without error the
 * program is built (merge, rule compilation, folding), then built again as
 * the parent of an empty child context, as a <Location> over the server
 * would be. Inputs of at most SCAN_MAX bytes are built with the scan too
 * (plans, byte gates, literal triggers, the multi-pattern databases);
 * larger ones without it: compiling the databases of a whole CRS file takes
 * seconds, which libFuzzer reports as a timeout, and those seeds are there
 * for the parser. Checks, beyond ASan/UBSan/LSan: a load error is a
 * non-empty message; a clean load gives a program, or a build error
 * message, never neither.
 *
 * Inputs that name a file or directory are skipped (Include, which walks
 * directories, /dev, /proc, /sys, /run, where opening can block, and
 * SecDataDir / SecScanCacheDir, where the scan would write), and so are
 * those naming SecRemoteRules (a download): the fuzzer must not roam the
 * file system or the network. Relative file names
 * (@pmFromFile x.data) resolve in the current directory, where the runner
 * (tests/fuzz/run) puts CRS's .data files for its CRS seeds.
 *
 * Build: see tests/fuzz/README.md (links the whole engine).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <apr_general.h>
#include <apr_strings.h>
#include "bw_engine.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Largest input built with the scan (a few rules). */
#define SCAN_MAX 2048

static apr_pool_t *root;
static char path[] = "./bw-fuzz-rules-XXXXXX";
static int fd = -1;

static void remove_temp(void)
{
    if (fd >= 0)
        unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    apr_initialize();
    apr_pool_create(&root, NULL);
    bw_engine_init(root);
    fd = mkstemp(path);
    if (fd < 0) {
        perror("fuzz_rules: mkstemp in the current directory");
        abort();
    }
    atexit(remove_temp);
    return 0;
}

/* Case-insensitive search for a NUL-free needle in bytes that may hold NULs. */
static int contains(const uint8_t *d, size_t n, const char *needle)
{
    size_t k = strlen(needle), i;
    for (i = 0; k <= n && i <= n - k; i++)
        if (!strncasecmp((const char *)d + i, needle, k))
            return 1;
    return 0;
}

static int reaches_file_system(const uint8_t *d, size_t n)
{
    /* a data or cache directory would have the scan write its databases
     * there; SecRemoteRules would download */
    static const char *const words[] = { "include", "/dev/", "/proc/", "/sys/", "/run/", "datadir",
                                         "scancachedir", "remoterules", NULL };
    int i;
    for (i = 0; words[i]; i++)
        if (contains(d, n, words[i]))
            return 1;
    return 0;
}

static int write_input(const uint8_t *data, size_t size)
{
    size_t off = 0;
    if (ftruncate(fd, 0) != 0)
        return -1;
    while (off < size) {
        ssize_t w = pwrite(fd, data + off, size - off, (off_t)off);
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

static void build(apr_pool_t *p, bw_config_t *cfg, unsigned flags)
{
    char *err = NULL;
    const bw_program_t *prog = bw_program_build_ex(p, NULL, cfg, flags, &err);
    bw_config_t *child;
    if (!prog) {
        if (!err || !*err)
            abort();    /* a failed build must say why */
        return;
    }
    child = bw_config_create(p);
    err = NULL;
    if (!bw_program_build_ex(p, prog, child, flags, &err) && (!err || !*err))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    bw_config_t *cfg;
    const char *err;

    if (reaches_file_system(data, size) || write_input(data, size) != 0)
        return 0;
    apr_pool_create(&p, root);
    cfg = bw_config_create(p);
    err = bw_config_load_file(cfg, path);
    if (err) {
        if (!*err)
            abort();    /* an error must say what */
    } else {
        build(p, cfg, size <= SCAN_MAX ? 0 : BW_PROG_NO_SCAN);
    }
    apr_pool_destroy(p);
    return 0;
}
