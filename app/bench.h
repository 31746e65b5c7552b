/* bench.h — options of `ahascope bench` and the measurements that live in
 * their own files. */
#ifndef AHASCOPE_BENCH_H
#define AHASCOPE_BENCH_H

#include "engine/aha.h"
#include "engine/err.h"
#include "engine/model.h"

typedef struct {
    const char *model, *shape, *dims, *save;
    int prompt_len, decode, runs, json, threads;
    int context, compare_full, tui;
    int record;              /* --record: the store's writer speed and cost */
    const char *db;          /* --db FILE for --record (default: a temporary file) */
    const char *routers;
    int dtype;               /* --dtype: also time the random model's matrices in bf16/f16 */
    int max_ctx;             /* --context also caps a Hugging Face model's context */
    AttnConfig attn;
} BenchOpts;

/* Median of v[0..n) (sorts v). */
double bench_median(double *v, int n);

/* --record: decision rows/s into a file database, and the cost of
 * recording a run over the same run unrecorded. Prints its figures. */
int bench_record(const Model *m, const BenchOpts *b, Err *e);

#endif
