/* bench_scratch.c — the scratch directory of `bench --long`: named by the
 * process, removed on Ctrl-C or SIGTERM, and a dead run's removed by the
 * next.
 *
 * A long run's databases reach hundreds of MB; a run stopped by a signal
 * used to leave them in $TMPDIR for good. The directory is
 * $TMPDIR/ahascope-long-PID-XXXXXX so a later run can tell a live run's
 * directory (its process exists) from a dead one's. The handler only
 * unlinks paths made in advance and rmdirs, both async-signal-safe, then
 * dies of the signal as it would have. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/bench/bench.h"

#define SCRATCH_PREFIX "ahascope-long-"

/* The directory a signal must remove: the one open scratch of the process. */
static const BenchScratch *g_live;

/* Every file of s and the directory, removed; safe in a signal handler. */
static void scratch_unlink(const BenchScratch *s) {
    for (int i = 0; i < s->n; i++) unlink(s->path[i]);
    rmdir(s->dir);
}

static void on_signal(int sig) {
    if (g_live) scratch_unlink(g_live);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* $TMPDIR, else /tmp. */
static const char *tmp_dir(void) {
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

/* A directory of the prefix whose process is gone, emptied and removed.
 * Only the names a run writes are in it, so its files go one by one. */
static void remove_if_dead(const char *parent, const char *name) {
    char *end;
    long pid = strtol(name + strlen(SCRATCH_PREFIX), &end, 10);
    if (pid <= 0 || *end != '-' || kill((pid_t)pid, 0) == 0 || errno != ESRCH) return;
    char dir[1200], p[1500];
    snprintf(dir, sizeof dir, "%s/%s", parent, name);
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            unlink(p);
        }
    if (d) closedir(d);
    rmdir(dir);
}

/* Every dead run's scratch directory in $TMPDIR, removed. */
static void remove_stale(void) {
    DIR *d = opendir(tmp_dir());
    for (struct dirent *de; d && (de = readdir(d));)
        if (!strncmp(de->d_name, SCRATCH_PREFIX, strlen(SCRATCH_PREFIX))) remove_if_dead(tmp_dir(), de->d_name);
    if (d) closedir(d);
}

int bench_scratch_open(BenchScratch *s, const char *const *names, int n, Err *e) {
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    memset(s, 0, sizeof *s);
    if (n < 1 || n * 4 > BENCH_SCRATCH_FILES) return err_set(e, "bench scratch: %d files", n);
    remove_stale();
    snprintf(s->dir, sizeof s->dir, "%s/" SCRATCH_PREFIX "%ld-XXXXXX", tmp_dir(), (long)getpid());
    if (strlen(s->dir) + 40 >= sizeof s->dir) return err_set(e, "TMPDIR is too long: %.200s", tmp_dir());
    if (!mkdtemp(s->dir)) return err_set(e, "cannot create a temporary directory in %s", s->dir);
    char dir[sizeof s->dir]; /* a copy: gcc cannot tell the paths from the directory they are written from */
    memcpy(dir, s->dir, sizeof dir);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++, s->n++) snprintf(s->path[s->n], sizeof s->path[0], "%s/%s%s", dir, names[i], suffix[k]);
    g_live = s;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    return 0;
}

const char *bench_scratch_file(const BenchScratch *s, int i) { return s->path[4 * i]; }

void bench_scratch_close(BenchScratch *s) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    g_live = NULL;
    scratch_unlink(s);
}
