/* test.h — the project's tiny test harness.
 *
 * TEST(name) { ... } defines and registers a test; CHECK* record a failure
 * with file:line and keep going, so one run shows every broken assertion.
 * A test that needs ../shared data calls SKIP_UNLESS_SHARED() and is counted
 * as skipped (with the reason printed) when the data is absent.
 */
#ifndef AHASCOPE_TEST_H
#define AHASCOPE_TEST_H

#include <math.h>
#include <stdio.h>

#include "engine/clock.h" /* clock_now: timeouts and durations in tests */

typedef void (*test_fn)(void);

void test_register(const char *name, const char *file, test_fn fn);
void test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void test_skip(const char *why);
int test_skipped(void);

/* Path of the shared test data directory ($AHASCOPE_SHARED or ../shared). */
const char *test_shared_dir(void);
/* test_shared_dir() + "/" + rel, in a static rotating buffer. */
const char *test_shared(const char *rel);
/* A fresh scratch directory for this test run (removed at exit). */
const char *test_tmpdir(void);
/* tmpdir + "/" + name in a static rotating buffer. */
const char *test_tmp(const char *name);

#define TEST(name)                                                                  \
    static void name(void);                                                         \
    __attribute__((constructor)) static void reg_##name(void) {                     \
        test_register(#name, __FILE__, name);                                       \
    }                                                                               \
    static void name(void)

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);             \
    } while (0)

#define CHECK_MSG(cond, ...)                                                        \
    do {                                                                            \
        if (!(cond)) test_fail(__FILE__, __LINE__, __VA_ARGS__);                    \
    } while (0)

#define CHECK_INT(a, b)                                                             \
    do {                                                                            \
        long long a_ = (long long)(a), b_ = (long long)(b);                         \
        if (a_ != b_) test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, #b, b_); \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                       \
    do {                                                                            \
        double a_ = (double)(a), b_ = (double)(b);                                  \
        if (!(fabs(a_ - b_) <= (tol)))                                              \
            test_fail(__FILE__, __LINE__, "%s = %.9g, expected %.9g (tol %g)", #a, a_, b_, (double)(tol)); \
    } while (0)

/* Returns from the test (counted as skipped) when ../shared is missing. */
#define SKIP_UNLESS_SHARED()                                                        \
    do {                                                                            \
        if (!test_shared_available()) {                                             \
            test_skip("shared test data not found (set AHASCOPE_SHARED)");          \
            return;                                                                 \
        }                                                                           \
    } while (0)

int test_shared_available(void);

/* The shared stories260K checkpoint and its 512-piece tokenizer, by path
 * (the suite's everyday model; tests/stories.h loads them). */
const char *test_stories_model(void);
const char *test_stories_tokenizer(void);

/* The binary under test: $AHASCOPE_BIN, else ./ahascope. */
const char *test_bin(void);
/* test_bin() by absolute path, for commands run from another directory. */
const char *test_bin_abs(void);

/* Read a whole file into a malloc'd NUL-terminated buffer (NULL on failure). */
char *test_read_file(const char *path, long *len);
/* Parse a JSON file (a cJSON tree the caller deletes); NULL, with a
 * recorded failure, if it cannot be read or parsed. */
struct cJSON *test_read_json(const char *path);
/* Temporaries an atomic writer of `path` left behind (PATH.tmp or
 * PATH.XXXXXX.tmp, engine/files.h): 0 when every write cleaned up. */
int test_count_tmp(const char *path);
/* 1 if the two files hold the same bytes (both readable). */
int test_same_file(const char *a, const char *b);
/* Write bytes to a file; returns 0 on success. */
int test_write_file(const char *path, const void *data, long len);
/* Write text to root/rel, creating its folders (a planted tree for the
 * checks that walk one); a failure is a test failure. */
void test_plant(const char *root, const char *rel, const char *text);
/* Run a shell command, capture stdout+stderr (malloc'd) and exit status. */
char *test_run(const char *cmd, int *status);
/* test_run of a printf-formatted command; status may be NULL. */
char *test_runf(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What a refused command line must exit with and print. */
typedef struct {
    int status;         /* the exit status wanted; -1: any non-zero one */
    const char *starts; /* the output begins with this (NULL: anything) */
    const char *needle; /* and holds this (NULL: anything) */
    int one_line;       /* and is exactly one line, ending in a newline */
} TestRefusal;

/* Run the shell command cmd (stderr into stdout) and record a failure at
 * file:line, showing what it printed, unless it refused as r says. 1 if it did. */
int test_refusal_at(const char *file, int line, const char *cmd, TestRefusal r);

/* The assertion of every table of bad command lines: cmd exits status and
 * prints a line that starts and holds what is given (NULL: no condition). */
#define CHECK_REFUSAL(cmd, status, starts, needle, one_line) \
    test_refusal_at(__FILE__, __LINE__, cmd, (TestRefusal){status, starts, needle, one_line})

/* 1 if the runner's filter words (argv[1..argc-1], as `run_tests WORD…
 * -WORD…` takes them) want the test name of file. */
int test_filter_wants(const char *name, const char *file, int argc, char **argv);

/* A python3 that can import numpy ($AHASCOPE_PYTHON, python3 on PATH, then
 * /usr/bin/python3), or NULL: tests of Python references skip without one. */
const char *test_python_numpy(void);

#endif
