/* pool.h — a tiny fork-join thread pool for the forward pass.
 *
 * The engine does its own parallelism (rows of a matmul, heads of attention)
 * and runs OpenBLAS single-threaded inside each task: two thread systems
 * spinning on two cores would steal time from each other. Workers spin
 * briefly after a job before sleeping, because a decode step issues dozens
 * of short parallel sections back to back, and pool_run waits for them the
 * same way: spinning, then sleeping, never spinning without end.
 */
#ifndef AHASCOPE_POOL_H
#define AHASCOPE_POOL_H

typedef struct Pool Pool;

/* fn(ctx, task, n_tasks) is called once for each task in [0, n_tasks). */
typedef void (*pool_fn)(void *ctx, int task, int n_tasks);

/* Start a pool of n_threads workers in total, the calling thread included
 * (n_threads <= 1 runs everything inline). Returns NULL on failure. */
Pool *pool_new(int n_threads);

/* Run n_tasks tasks across the pool and return when all are done. Not
 * reentrant: one pool_run at a time per pool. */
void pool_run(Pool *p, pool_fn fn, void *ctx, int n_tasks);

/* Number of threads, the caller included (1 for a NULL pool). */
int pool_threads(const Pool *p);

/* Stop and join the workers (NULL is fine). */
void pool_free(Pool *p);

/* Default thread count: $AHASCOPE_THREADS if set, else the online CPUs (max 64). */
int pool_default_threads(void);

#endif
