/* tmux.c — driving the TUI through a private tmux server (tmux.h). */
#include "tests/tmux.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "tests/test.h"

int tmux_available(void) {
    int st;
    free(test_runf(&st, "command -v tmux >/dev/null 2>&1"));
    return st == 0;
}

int tmux_open(Tmux *t, const char *name, const char *dir, int cols, int rows, const char *env, const char *cmd,
              int settle) {
    /* A server of its own for every session, even two of one test: a server
     * killed a moment ago may still be removing its socket, and a new one of
     * the same name then answered "no server running". */
    static int opened;
    snprintf(t->sock, sizeof t->sock, "ahascope-%d-%d-%s", (int)getpid(), ++opened, name);
    snprintf(t->dir, sizeof t->dir, "%s", dir ? dir : test_tmp(name));
    char wait[32] = "";
    if (settle > 0) snprintf(wait, sizeof wait, "sleep %d; ", settle);
    int st;
    free(test_runf(&st, "mkdir -p %s", t->dir));
    free(test_runf(&st,
                   "tmux -L %s -f /dev/null new-session -d -x %d -y %d \"%scd %s && env TERM=xterm-256color "
                   "LANG=C.UTF-8 %s %s; echo EXITED \\$?; sleep 60\"",
                   t->sock, cols, rows, wait, t->dir, env ? env : "", cmd));
    return st;
}

void tmux_keys(Tmux *t, const char *keys) {
    int st;
    free(test_runf(&st, "tmux -L %s send-keys %s", t->sock, keys));
}

char *tmux_capture(Tmux *t) {
    int st;
    return test_runf(&st, "tmux -L %s capture-pane -p", t->sock);
}

static int blank(const char *s) {
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\n') return 0;
    return 1;
}

double tmux_patience(void) {
    double load = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f || fscanf(f, "%lf", &load) != 1) load = 0;
    if (f) fclose(f);
    double k = cores > 0 ? load / (double)cores : 1;
    return k < 1 ? 1 : k > 8 ? 8 : k;
}

char *tmux_wait(Tmux *t, const char *text, double secs) {
    double start = clock_now(), end = start + secs * tmux_patience(), last_redraw = start;
    for (;;) {
        char *s = tmux_capture(t);
        if (s && strstr(s, text)) return s;
        if (blank(s) && clock_now() - last_redraw > 1.0) {
            tmux_keys(t, "C-l");
            last_redraw = clock_now();
        }
        if (clock_now() > end) {
            fprintf(stderr, "--- waited for '%s', screen was:\n%s---\n", text, s ? s : "");
            free(s);
            return NULL;
        }
        free(s);
        usleep(30000);
    }
}

int tmux_shows(Tmux *t, const char *text, double secs) {
    char *s = tmux_wait(t, text, secs);
    free(s);
    return s != NULL;
}

int tmux_quit(Tmux *t, double secs) {
    double end = clock_now() + secs * tmux_patience();
    for (int presses = 0; presses < 12 && clock_now() <= end; presses++) {
        tmux_keys(t, "q");
        double next = clock_now() + tmux_patience(); /* a pane closes, or the program quits, within it */
        for (;;) {
            char *s = tmux_capture(t);
            int exited = s && strstr(s, "EXITED"), ok = s && strstr(s, "EXITED 0");
            free(s);
            if (exited) return ok;
            if (clock_now() > next || clock_now() > end) break;
            usleep(50000);
        }
    }
    return 0;
}

void tmux_stop(Tmux *t) {
    int st;
    free(test_runf(&st, "tmux -L %s kill-server 2>/dev/null", t->sock));
}

/* The position the header shows ("│ pos N/"), -1 when there is none. */
static int header_pos(const char *screen) {
    const char *p = screen ? strstr(screen, "pos ") : NULL; /* after " " or, in the compact header, "│" */
    while (p && p > screen && p[-1] != ' ' && (unsigned char)p[-1] != 0x82) p = strstr(p + 1, "pos ");
    int pos, ctx;
    return p && sscanf(p, "pos %d/%d", &pos, &ctx) == 2 ? pos : -1;
}

int tmux_pos(Tmux *t) {
    char *s = tmux_capture(t);
    int pos = header_pos(s);
    free(s);
    return pos;
}

int tmux_shows_pos(Tmux *t, int pos, double secs) {
    double end = clock_now() + secs * tmux_patience();
    for (;;) {
        char *s = tmux_capture(t);
        int now = header_pos(s);
        if (now >= pos) {
            free(s);
            return 1;
        }
        if (clock_now() > end) {
            fprintf(stderr, "--- waited for pos >= %d, screen was:\n%s---\n", pos, s ? s : "");
            free(s);
            return 0;
        }
        free(s);
        usleep(30000);
    }
}

int tmux_open_16x32(Tmux *t, const char *name, int cols, int rows, const char *env, const char *flags) {
    char dir[1024], cmd[1400];
    int st;
    snprintf(dir, sizeof dir, "%s", test_tmp(name));
    char *out = test_runf(&st, "mkdir -p %s && { test -d %s/m || %s bench --dims 256,512,16,32,8,512,1024 --save-hf %s/m; } 2>&1",
                          dir, dir, test_bin_abs(), dir);
    CHECK_MSG(st == 0, "bench --save-hf: %s", out ? out : "");
    free(out);
    if (st) return -1;
    snprintf(cmd, sizeof cmd, "%s tui --model m --seed 1 --temperature 0 --window 8 %s", test_bin_abs(), flags ? flags : "");
    int rc = tmux_open(t, name, dir, cols, rows, env, cmd, 0);
    CHECK_INT(rc, 0);
    return rc ? -1 : 0;
}

/* tmux_open_passkey with or without the run recorded (into test_tmp(name)/ahascope.db). */
static int open_passkey(Tmux *t, const char *name, int cols, int rows, int record, const char *env,
                        const char *flags) {
    char real[4096], cmd[8192], dir[1024];
    if (!realpath("engine/organism/organism.bin", real)) {
        test_skip("no engine/organism/organism.bin in this checkout");
        return -1;
    }
    snprintf(dir, sizeof dir, "%s", test_tmp(name));
    int st;
    char *o = test_runf(&st, "mkdir -p '%s' && cd '%s' && %s tasks --task passkey --context 504 --n 1 --seed 1 "
                             "--model '%s' --out pk.jsonl 2>&1", dir, dir, test_bin_abs(), real);
    CHECK_MSG(st == 0, "tasks: %s", o ? o : "");
    free(o);
    if (st) return -1;
    snprintf(cmd, sizeof cmd, "%s tui --model '%s' --seed 1 --temperature 0 --policy full %s"
             "--tasks pk.jsonl --item 0 %s", test_bin_abs(), real, record ? "" : "--no-record ", flags ? flags : "");
    int rc = tmux_open(t, name, dir, cols, rows, env, cmd, 0);
    CHECK_INT(rc, 0);
    if (rc) return -1;
    int ok = tmux_shows(t, "504 prompt", 30);
    if (ok) tmux_keys(t, "Space Space"); /* the answer's second digit: the copying head reads the needle */
    ok = ok && tmux_shows(t, "pos 505/", 10);
    if (ok) return 0;
    test_fail(__FILE__, __LINE__, "the passkey item never reached pos 505");
    tmux_stop(t);
    return -1;
}

int tmux_open_passkey(Tmux *t, const char *name, int cols, int rows, const char *env, const char *flags) {
    return open_passkey(t, name, cols, rows, 0, env, flags);
}

int tmux_open_passkey_recorded(Tmux *t, const char *name, int cols, int rows, const char *env, const char *flags) {
    return open_passkey(t, name, cols, rows, 1, env, flags);
}

int tmux_open_model(Tmux *t, int organism, const char *prefix, int cols, int rows, const char *env,
                    const char *flags) {
    char name[64];
    snprintf(name, sizeof name, "%.40s%s_%d", prefix, organism ? "org" : "16x32", cols);
    if (organism) return tmux_open_passkey_recorded(t, name, cols, rows, env, flags);
    if (tmux_open_16x32(t, name, cols, rows, env, flags)) return -1;
    if (tmux_shows(t, "12 prompt", 15)) return 0;
    test_fail(__FILE__, __LINE__, "the folder's prompt never came in");
    tmux_stop(t);
    return -1;
}

int tmux_open_stories(Tmux *t, const char *name, int cols, int rows, const char *env, const char *flags) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s tui --model %s --seed 1 --temperature 0 %s", test_bin_abs(), test_stories_model(),
             flags ? flags : "");
    return tmux_open(t, name, NULL, cols, rows, env, cmd, 0);
}

int tmux_gone(Tmux *t, const char *text, double secs) {
    double n = secs * 10 * tmux_patience();
    for (int i = 0; i < n; i++) {
        char *scr = tmux_capture(t);
        int there = scr && strstr(scr, text);
        free(scr);
        if (!there) return 1;
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
}

void tmux_go_to(Tmux *t, const char *text) {
    char keys[256];
    tmux_keys(t, "G");
    snprintf(keys, sizeof keys, "-l \"%s\"", text);
    tmux_keys(t, keys);
    tmux_keys(t, "Enter");
}
