/* liveness.c — this process's host, pid and start time, and whether a run's writer still lives.
 *
 * Who is writing: this process's host, pid and start time,
 * and whether the process that wrote a run is still alive, so a run left
 * 'running' by a dead writer can be told from one still being written. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/internal.h"

/* Field 22 of /proc/PID/stat: start time in clock ticks since boot. Telling
 * a live writer from a new process that reuses its pid needs it. */
static int64_t proc_start(int64_t pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p) return -1;
    long long v = -1;
    int field = 2;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " "))
        if (++field == 22) { v = atoll(tok); break; }
    return v;
}

void store_writer_self(char *host, size_t cap, int64_t *pid, int64_t *start) {
    if (gethostname(host, cap) != 0) snprintf(host, cap, "?");
    host[cap - 1] = 0;
    *pid = getpid();
    *start = proc_start(*pid);
}

int store_writer_alive(int64_t pid, int64_t start) {
    if (pid <= 0) return 0;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 0;
    int64_t now = proc_start(pid);
    return now < 0 || start <= 0 || now == start; /* start unknown: trust the pid */
}
