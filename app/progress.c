/* progress.c — the progress line on stderr (see progress.h). */
#include "app/progress.h"

#include <stdio.h>
#include <unistd.h>

#include "app/args.h"

#define PROGRESS_QUIET_S 0.5 /* an unforced line waits this long: short jobs print nothing */

void progress_bar(char *out, double frac) {
    int fill = (int)(frac * 20 + 0.5);
    for (int i = 0; i < 20; i++) out[i] = i < fill ? '#' : '-';
    out[20] = 0;
}

void progress_start(Progress *p, const char *label, int forced) {
    p->label = label;
    p->forced = forced;
    p->tty = isatty(STDERR_FILENO);
    p->t0 = clock_now();
    p->last = 0;
    p->drawn = 0;
    p->tenth = -1;
}

/* Whether this update is drawn: on a terminal ten times a second (the end
 * always, once anything was); otherwise forced lines at each new tenth. */
static int due(Progress *p, long done, long total, double now) {
    int end = done >= total;
    if (p->tty) {
        if (!p->forced && !p->drawn && now - p->t0 < PROGRESS_QUIET_S) return 0;
        return end ? 1 : now - p->last >= 0.1;
    }
    if (!p->forced) return 0;
    int tenth = total > 0 ? (int)(10 * done / total) : 10;
    if (tenth == p->tenth) return 0;
    p->tenth = tenth;
    return 1;
}

void progress_update(Progress *p, long done, long total, const char *unit) {
    double now = clock_now(), dt = now - p->t0;
    if (!due(p, done, total, now)) return;
    char bar[21];
    double frac = total > 0 ? (double)done / total : 1;
    progress_bar(bar, frac > 1 ? 1 : frac);
    double rate = dt > 0 ? done / dt : 0;
    char tail[32];
    if (done >= total) snprintf(tail, sizeof tail, "took %.1f s", dt);
    else if (rate > 0) snprintf(tail, sizeof tail, "ETA %.0f s", (total - done) / rate);
    else snprintf(tail, sizeof tail, "ETA ?");
    /* on a terminal, spaces rub out the end of a longer line before it */
    fprintf(stderr, "%s%s [%s] %ld/%ld %s  %.1f %s/s  %-*s%s", p->tty ? "\r" : "", p->label, bar, done, total, unit, rate,
            unit, p->tty ? 14 : 0, tail, p->tty && done < total ? "" : "\n");
    fflush(stderr);
    p->last = now;
    p->drawn = p->tty && done < total;
}

typedef struct {
    Progress bar;
    const volatile sig_atomic_t *stop;
    StepTrace **traces;
    PrefillSink sink; /* NULL: the caller takes every trace at the end */
    void *sink_user;
    int handed;       /* positions handed to the sink so far */
    int failed;       /* the sink said stop */
} PrefillLine;

/* Hand the positions fed since the last call to the sink. */
static void hand_over(PrefillLine *l, int done) {
    if (!l->sink || l->failed || done <= l->handed) return;
    l->failed = l->sink(l->sink_user, l->traces, l->handed, done) != 0;
    l->handed = done;
}

static int on_prefill(void *user, int done, int total) {
    PrefillLine *l = user;
    hand_over(l, done);
    progress_update(&l->bar, done, total, "tok");
    return l->failed || (l->stop && *l->stop);
}

int progress_prefill_into(Session *s, StepTrace **traces, int forced, const volatile sig_atomic_t *stop,
                          PrefillSink sink, void *user) {
    PrefillLine l = {.stop = stop, .traces = traces, .sink = sink, .sink_user = user};
    progress_start(&l.bar, "prefill", forced);
    session_set_progress(s, PROGRESS_PREFILL_CHUNK, on_prefill, &l);
    int fed = session_prefill(s, traces);
    session_set_progress(s, 0, NULL, NULL);
    hand_over(&l, fed); /* a chunk stopped by Ctrl-C is not fed: nothing of it is handed */
    if (l.bar.drawn) fputc('\n', stderr); /* stopped part way: end the line before what follows */
    return l.failed ? l.handed : fed;
}

int progress_prefill(Session *s, StepTrace **traces, int forced, const volatile sig_atomic_t *stop) {
    return progress_prefill_into(s, traces, forced, stop, NULL, NULL);
}

void progress_count(const char *label, int done, int total, double t0, int tty) {
    if (!tty && done < total) return;
    double dt = clock_now() - t0;
    fprintf(stderr, "%s%s [%3d/%d] %5.1f s, ETA %4.0f s%s", tty ? "\r" : "", label, done, total, dt,
            dt / done * (total - done), tty && done < total ? "" : "\n");
}
