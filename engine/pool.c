/* pool.c — a fork-join thread pool whose waits spin briefly, then sleep. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define POOL_MAX 64
#define SPIN_ITERS 300000 /* ~0.1-1 ms: covers the gaps between sections, as OpenMP's spin does */

typedef struct {
    Pool *pool;
    int index;
} PoolArg;

struct Pool {
    int n_threads;
    pthread_t threads[POOL_MAX];
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_cond_t done;     /* a worker finished a job while pool_run slept (waiting set) */
    atomic_int waiting;
    atomic_uint generation;  /* bumped once per job */
    atomic_int next_task;    /* next task index to claim */
    atomic_int stop;
    atomic_uint done_gen[POOL_MAX]; /* last job each worker has left */
    PoolArg args[POOL_MAX];
    pool_fn fn;
    void *ctx;
    int n_tasks;
};

static void pool_work(Pool *p) {
    for (;;) {
        int t = atomic_fetch_add(&p->next_task, 1);
        if (t >= p->n_tasks) break;
        p->fn(p->ctx, t, p->n_tasks);
    }
}

/* Every worker acknowledges every job (done_gen), and pool_run waits for all
 * acknowledgements, so no worker can still be reading a job's fields when
 * the next job overwrites them. */
static void *pool_worker(void *arg) {
    Pool *p = ((PoolArg *)arg)->pool;
    int me = ((PoolArg *)arg)->index;
    unsigned seen = 0; /* the generation at creation, not at thread start */
    for (;;) {
        int spins = 0;
        while (atomic_load(&p->generation) == seen && !atomic_load(&p->stop) && spins < SPIN_ITERS) spins++;
        if (atomic_load(&p->generation) == seen && !atomic_load(&p->stop)) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->generation) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->wake, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop)) return NULL;
        seen = atomic_load(&p->generation);
        pool_work(p);
        atomic_store(&p->done_gen[me], seen);
        if (atomic_load(&p->waiting)) { /* seq_cst: pool_run sets waiting before it reads done_gen */
            pthread_mutex_lock(&p->mu);
            pthread_cond_broadcast(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

Pool *pool_new(int n_threads) {
    if (n_threads <= 1) return NULL;
    if (n_threads > POOL_MAX) n_threads = POOL_MAX;
    Pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->n_threads = 1;
    for (int i = 1; i < n_threads; i++) {
        p->args[i].pool = p;
        p->args[i].index = i;
        if (pthread_create(&p->threads[i], NULL, pool_worker, &p->args[i]) != 0) break;
        p->n_threads++;
    }
    return p;
}

/* Wait until worker i has left job gen. The other tasks are short, so spin
 * first, as the workers do between jobs; then sleep. A spin without end
 * kept a core from the very worker it waited for whenever the host had
 * more runnable threads than cores and took that worker off: whole
 * `bench --model` invocations ran 2-5x slow (engine/PERFORMANCE.md, "Slow
 * invocations"). */
static void wait_done(Pool *p, int i, unsigned gen) {
    for (int spins = 0; spins < SPIN_ITERS; spins++)
        if (atomic_load(&p->done_gen[i]) == gen) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->waiting, 1);
    while (atomic_load(&p->done_gen[i]) != gen) pthread_cond_wait(&p->done, &p->mu);
    atomic_store(&p->waiting, 0);
    pthread_mutex_unlock(&p->mu);
}

void pool_run(Pool *p, pool_fn fn, void *ctx, int n_tasks) {
    if (n_tasks <= 0) return;
    if (!p || n_tasks == 1) {
        for (int t = 0; t < n_tasks; t++) fn(ctx, t, n_tasks);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->n_tasks = n_tasks;
    atomic_store(&p->next_task, 0);
    pthread_mutex_lock(&p->mu);
    unsigned gen = atomic_fetch_add(&p->generation, 1) + 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    pool_work(p);
    for (int i = 1; i < p->n_threads; i++) wait_done(p, i, gen);
}

int pool_threads(const Pool *p) { return p ? p->n_threads : 1; }

void pool_free(Pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p);
}

int pool_default_threads(void) {
    const char *s = getenv("AHASCOPE_THREADS");
    long n = s ? strtol(s, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > POOL_MAX) n = POOL_MAX;
    return (int)n;
}
