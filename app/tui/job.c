/* job.c — pane jobs on threads of their own (see job.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "app/tui/job.h"
#include "engine/clock.h"

/* A piece handed over before the end (tui_job_put), in a FIFO. */
typedef struct Part {
    void *data;
    TuiJobRelease free;
    struct Part *next;
} Part;

/* One job: its request, the flags both threads touch, and its result,
 * which the job's thread writes until it raises `done`. The pieces' queue
 * is the one thing both threads write: `lock` guards only its links. */
struct TuiJobRun {
    TuiJobWork work;
    char db[1024];
    int own_store; /* the work opens what it needs: it is handed no store */
    pthread_t thread;
    atomic_int cancel, done;
    atomic_long count;
    double t0; /* monotonic seconds at the start */
    TuiJobResult res;
    pthread_mutex_t lock;
    Part *head, *tail; /* pieces not yet taken, oldest first */
    TuiJobRun *next; /* in TuiJob's dropped list */
};

/* The connection's interrupt: the cancel flag. */
static int stop_requested(void *ctx) { return atomic_load(&((TuiJobRun *)ctx)->cancel); }

/* Nice steps a job's thread takes below the UI's: on 2 busy cores the UI
 * thread, which sleeps between keys, then gets a core first when both want
 * one, and a key is not answered after a slice of the job's work. Linux
 * keeps a nice value per thread. */
#define TUI_JOB_NICE 5

/* The job's thread: lower its priority, open, work, note how it ended, then raise `done`. */
static void *job_main(void *arg) {
    TuiJobRun *r = arg;
    pid_t self = gettid();
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, (id_t)self);
    if (errno == 0) setpriority(PRIO_PROCESS, (id_t)self, nice_now + TUI_JOB_NICE); /* best effort: a cap is fine */
    char *text = NULL;
    size_t len = 0;
    Err e;
    e.msg[0] = 0;
    FILE *f = open_memstream(&text, &len);
    if (!r->own_store && !r->db[0]) err_set(&e, "no database: the run is not recorded");
    Store *st = f && !r->own_store && r->db[0] ? store_open(r->db, STORE_READ, 500, &e) : NULL;
    if (st) store_set_interrupt(st, stop_requested, r);
    int rc = f && (st || r->own_store) ? r->work(r, st, f, &e) : -1;
    store_close(st, NULL);
    if (f) fclose(f);
    r->res.text = text;
    r->res.secs = clock_now() - r->t0;
    r->res.count = atomic_load(&r->count);
    r->res.end = rc == 0 ? TUI_JOB_OK : atomic_load(&r->cancel) ? TUI_JOB_CANCELLED : TUI_JOB_FAILED;
    if (rc) snprintf(r->res.msg, sizeof r->res.msg, "%s", f ? e.msg : "out of memory");
    atomic_store(&r->done, 1);
    return NULL;
}

static void run_free(TuiJobRun *r) {
    for (Part *p = r->head, *next; p; p = next) {
        next = p->next;
        if (p->free) p->free(p->data);
        free(p);
    }
    pthread_mutex_destroy(&r->lock);
    tui_job_result_free(&r->res);
    free(r);
}

/* Join and free the dropped jobs that have ended; with wait, all of them. */
static void reap(TuiJob *j, int wait) {
    for (TuiJobRun **p = &j->dropped; *p;) {
        TuiJobRun *r = *p;
        if (!wait && !atomic_load(&r->done)) { p = &r->next; continue; }
        pthread_join(r->thread, NULL);
        *p = r->next;
        run_free(r);
    }
}

/* Cancel the current job, if any, and move it to the dropped list. */
static void drop_current(TuiJob *j) {
    TuiJobRun *r = j->cur;
    if (!r) return;
    atomic_store(&r->cancel, 1);
    r->next = j->dropped, j->dropped = r;
    j->cur = NULL;
}

/* tui_job_start's body; own_store: the work is handed no store. */
static int start(TuiJob *j, const char *db, int own_store, int kind, TuiJobWork work, const void *arg,
                 size_t arg_size, TuiJobRelease release, Err *e) {
    drop_current(j);
    reap(j, 0);
    TuiJobRun *r = calloc(1, sizeof *r);
    if (!r || !(r->res.arg = malloc(arg_size ? arg_size : 1))) {
        free(r);
        return err_set(e, "out of memory");
    }
    if (arg_size) memcpy(r->res.arg, arg, arg_size);
    r->work = work, r->res.kind = kind, r->res.release = release;
    snprintf(r->db, sizeof r->db, "%s", db ? db : ""); /* "": nothing to open, the job fails saying so */
    r->own_store = own_store;
    atomic_init(&r->cancel, 0);
    atomic_init(&r->done, 0);
    atomic_init(&r->count, 0);
    pthread_mutex_init(&r->lock, NULL);
    r->t0 = clock_now();
    if (pthread_create(&r->thread, NULL, job_main, r) != 0) {
        run_free(r);
        return err_set(e, "cannot start the job's thread");
    }
    j->cur = r;
    return 0;
}

int tui_job_start(TuiJob *j, const char *db, int kind, TuiJobWork work, const void *arg, size_t arg_size,
                  TuiJobRelease release, Err *e) {
    return start(j, db, 0, kind, work, arg, arg_size, release, e);
}

int tui_job_start_own(TuiJob *j, int kind, TuiJobWork work, const void *arg, size_t arg_size, TuiJobRelease release,
                      Err *e) {
    return start(j, NULL, 1, kind, work, arg, arg_size, release, e);
}

int tui_job_progress(const TuiJob *j, int *kind, long *count, double *secs) {
    TuiJobRun *r = j->cur;
    if (!r || atomic_load(&r->done)) return 0;
    *kind = r->res.kind;
    *count = atomic_load(&r->count);
    *secs = clock_now() - r->t0;
    return 1;
}

int tui_job_cancel(TuiJob *j) {
    TuiJobRun *r = j->cur;
    if (!r || atomic_load(&r->done)) return 0;
    atomic_store(&r->cancel, 1);
    return 1;
}

/* 1 while r holds pieces not yet taken. */
static int has_parts(TuiJobRun *r) {
    pthread_mutex_lock(&r->lock);
    int any = r->head != NULL;
    pthread_mutex_unlock(&r->lock);
    return any;
}

void *tui_job_take_part(TuiJob *j) {
    TuiJobRun *r = j->cur;
    if (!r) return NULL;
    pthread_mutex_lock(&r->lock);
    Part *p = r->head;
    if (p && !(r->head = p->next)) r->tail = NULL;
    pthread_mutex_unlock(&r->lock);
    void *data = p ? p->data : NULL;
    free(p);
    return data;
}

int tui_job_take(TuiJob *j, TuiJobResult *out) {
    reap(j, 0);
    TuiJobRun *r = j->cur;
    if (!r || !atomic_load(&r->done) || has_parts(r)) return 0;
    pthread_join(r->thread, NULL);
    *out = r->res;
    memset(&r->res, 0, sizeof r->res);
    run_free(r);
    j->cur = NULL;
    return 1;
}

void tui_job_result_free(TuiJobResult *r) {
    if (r->release && r->arg) r->release(r->arg);
    free(r->arg);
    free(r->text);
    memset(r, 0, sizeof *r);
}

void tui_job_stop(TuiJob *j) {
    drop_current(j);
    reap(j, 1);
}

void *tui_job_arg(TuiJobRun *r) { return r->res.arg; }

int tui_job_cancelled(TuiJobRun *r) { return atomic_load(&r->cancel); }

void tui_job_count(TuiJobRun *r, long n) { atomic_store(&r->count, n); }

int tui_job_put(TuiJobRun *r, void *part, TuiJobRelease part_free) {
    Part *p = malloc(sizeof *p);
    if (!p) {
        if (part_free) part_free(part);
        return -1;
    }
    p->data = part, p->free = part_free, p->next = NULL;
    pthread_mutex_lock(&r->lock);
    if (r->tail) r->tail->next = p;
    else r->head = p;
    r->tail = p;
    pthread_mutex_unlock(&r->lock);
    return 0;
}
