/* store_fixture.h — small databases the store tests write and tamper with.
 *
 * A recorded run of made-up steps (no model), and the plain SQLite access
 * another program would have, shared by the store's hostile-input and
 * acceptance tests.
 */
#ifndef AHASCOPE_TEST_STORE_FIXTURE_H
#define AHASCOPE_TEST_STORE_FIXTURE_H

#include "store/store.h"

/* Remove path and its -wal, -shm and -journal, so a test starts clean. */
void test_db_fresh(const char *path);

/* The run header every made-up run starts from: an L x H model ("m.bin",
 * policy aha, no grouped heads, dim 8 H, vocabulary 512, context 4096,
 * window 4, one sink, tau 0.5, theta 0, prompt "x"); a test overrides what
 * it is about. */
void test_run_info(StoreRunInfo *r, int L, int H);

/* A fresh database of ours holding one run of n made-up steps of an L x H
 * model (gates and scores a function of the cell and position); failures
 * are recorded as test failures. */
void test_db_record(const char *path, int L, int H, int n);

/* The tamper check's refusals: for each i < n, a fresh recorded file
 * (name) edited by edits[i] must be refused on open, its message holding
 * says[i]. */
void test_db_tamper_refused(const char *name, const char *const *edits, const char *const *says, int n);

/* test_db_record committing every `every` steps instead of each one: the
 * same rows, for the large runs a test only reads (a commit also rewrites
 * every head's totals, so one a step made a 16 x 32, 3000-step run take
 * 35 s of the sanitizer build, and 3 s this way). */
void test_db_record_every(const char *path, int L, int H, int n, int every);

/* The first column of sql's first row, read with a plain read-only
 * connection; -1 when the file or the query fails. */
long long test_db_scalar(const char *path, const char *sql);

/* Up to max_rows rows of sql's first n_cols columns as doubles, row after
 * row into v (NULL as NAN), read as test_db_scalar reads: the rows read,
 * or -1 when the file or the query fails. */
int test_db_rows(const char *path, const char *sql, double *v, int max_rows, int n_cols);

/* Run sql on the file with a plain connection, as another program (or
 * someone editing the file) would; a failure is a test failure. */
void test_db_exec(const char *path, const char *sql);

#endif
