/* fuzz_store.c — libFuzzer harness: a database opened read-only.
 *
 * Opening a database read-only (header check, schema check,
 * compatibility views) and reading back what it claims to hold: the runs,
 * each run's row and its first steps. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/trace.h"
#include "fuzz.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read a run's first steps into traces of the shape its row claims, as the
 * TUI's replay does (trace_new refuses absurd shapes). */
static void read_steps(Store *s, const StoreRunInfo *info) {
    enum { N = 16 };
    StepTrace *traces[N];
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= (traces[i] = trace_new(info->n_layers, info->n_heads)) != NULL;
    Err e;
    if (ok) store_read_steps(s, info->run_id, 0, N, traces, &e);
    for (int i = 0; i < N; i++) trace_free(traces[i]);
}

/* Read every run the file lists (the first 8), as `db runs` and the TUI would. */
static void read_runs(Store *s) {
    int64_t *ids = NULL;
    Err e;
    int n = store_run_ids(s, &ids, &e);
    for (int i = 0; i < n && i < 8; i++) {
        StoreRunInfo info;
        if (store_run_info(s, ids[i], &info, &e) != 0) continue;
        info.run_id = ids[i];
        read_steps(s, &info);
        store_run_info_free(&info);
    }
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("fuzz.db", data, size);
    Err e;
    Store *s = store_open(path, STORE_READ, 0, &e);
    if (s) {
        read_runs(s);
        FILE *null = fopen("/dev/null", "w");
        if (null) store_list_runs(s, STORE_FMT_TABLE, null, &e), fclose(null);
        store_close(s, &e);
    }
    unlink(fuzz_path("fuzz.db-wal"));
    unlink(fuzz_path("fuzz.db-shm"));
    return 0;
}
