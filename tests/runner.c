/* runner.c — runs every registered test, optionally filtered, and prints `N passed, N failed, N skipped`.
 *
 * With arguments, only the tests whose name or file holds one of them run
 * ($AHASCOPE_TEST_SLICE narrows them further to a slice, for running one
 * suite in two processes); the last line is "N passed, N failed[, N skipped]". */
#define _POSIX_C_SOURCE 200809L
#include <glob.h>
#include <sys/stat.h>
#include "test.h"

#include <cjson/cJSON.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *name, *file;
    test_fn fn;
} TestCase;

static TestCase g_tests[4096];
static int g_ntests;
static int g_cur_failed, g_cur_skipped;
static char g_tmpdir[256];

void test_register(const char *name, const char *file, test_fn fn) {
    if (g_ntests >= (int)(sizeof g_tests / sizeof g_tests[0])) { /* a test dropped in silence is a test never run */
        fprintf(stderr, "tests/runner.c: more than %zu tests: raise g_tests' size\n", sizeof g_tests / sizeof g_tests[0]);
        exit(2);
    }
    g_tests[g_ntests++] = (TestCase){name, file, fn};
}

/* The current test's first failure, repeated with its name after the last
 * test: CI keeps only the end of a long log. */
static char g_first_fail[300];

void test_fail(const char *file, int line, const char *fmt, ...) {
    if (g_cur_failed < 20) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "    %s:%d: ", file, line);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    if (g_cur_failed == 0) {
        va_list ap;
        va_start(ap, fmt);
        int n = snprintf(g_first_fail, sizeof g_first_fail, "%s:%d: ", file, line);
        if (n > 0 && (size_t)n < sizeof g_first_fail) vsnprintf(g_first_fail + n, sizeof g_first_fail - (size_t)n, fmt, ap);
        va_end(ap);
        for (char *c = g_first_fail; *c; c++) if (*c == '\n' || *c == '\r') *c = ' ';
    }
    g_cur_failed++;
}

void test_skip(const char *why) {
    fprintf(stderr, "    skipped: %s\n", why);
    g_cur_skipped = 1;
}

int test_skipped(void) { return g_cur_skipped; }

/* Made absolute once, as tests that cd into a scratch directory before
 * running the binary pass paths under it on (relative, they named nothing). */
const char *test_shared_dir(void) {
    static char abs_dir[700];
    const char *s = getenv("AHASCOPE_SHARED");
    s = (s && *s) ? s : "../shared";
    if (s[0] == '/' || abs_dir[0]) return abs_dir[0] ? abs_dir : s;
    char *r = realpath(s, NULL);
    if (r && strlen(r) < sizeof abs_dir) strcpy(abs_dir, r);
    free(r);
    return abs_dir[0] ? abs_dir : s;
}

static char *rotating(void) {
    static char bufs[8][1024];
    static int i;
    return bufs[i++ & 7];
}

const char *test_shared(const char *rel) {
    char *b = rotating();
    snprintf(b, 1024, "%s/%s", test_shared_dir(), rel);
    return b;
}

const char *test_stories_model(void) { return test_shared("models/stories260K/stories260K.bin"); }

const char *test_stories_tokenizer(void) { return test_shared("models/stories260K/tok512.bin"); }

int test_shared_available(void) {
    struct stat st;
    return stat(test_stories_model(), &st) == 0;
}

const char *test_bin(void) {
    const char *b = getenv("AHASCOPE_BIN");
    return b && *b ? b : "./ahascope";
}

const char *test_bin_abs(void) {
    static char path[1100];
    const char *b = test_bin();
    char cwd[1024];
    if (b[0] == '/' || !getcwd(cwd, sizeof cwd)) return b;
    snprintf(path, sizeof path, "%s/%s", cwd, b);
    return path;
}

const char *test_tmpdir(void) { return g_tmpdir; }

const char *test_tmp(const char *name) {
    char *b = rotating();
    snprintf(b, 1024, "%s/%s", g_tmpdir, name);
    return b;
}

int test_same_file(const char *a, const char *b) {
    long na = 0, nb = 0;
    char *x = test_read_file(a, &na), *y = test_read_file(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, (size_t)na) == 0;
    free(x), free(y);
    return same;
}

int test_count_tmp(const char *path) {
    char pat[4200], plain[4200];
    snprintf(pat, sizeof pat, "%s.??????.tmp", path);
    snprintf(plain, sizeof plain, "%s.tmp", path);
    glob_t g;
    int n = glob(pat, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    if (n >= 0) globfree(&g);
    struct stat sb;
    return n + (lstat(plain, &sb) == 0);
}

char *test_read_file(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(n + 1);
    if (buf && fread(buf, 1, n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    if (buf) { buf[n] = 0; if (len) *len = n; }
    return buf;
}

int test_write_file(const char *path, const void *data, long len) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(data, 1, len, f) == (size_t)len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

void test_plant(const char *root, const char *rel, const char *text) {
    char full[8192], cmd[8300];
    snprintf(full, sizeof full, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", full);
    int st;
    free(test_run(cmd, &st));
    CHECK_INT(test_write_file(full, text, (long)strlen(text)), 0);
}

char *test_run(const char *cmd, int *status) {
    char full[8192];
    snprintf(full, sizeof full, "(%s) 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p) { *status = -1; return NULL; }
    size_t cap = 4096, n = 0;
    char *out = malloc(cap);
    size_t r;
    while (out && (r = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += r;
        if (cap - n < 2) { cap *= 2; out = realloc(out, cap); }
    }
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (out) out[n] = 0;
    return out;
}

static int exactly_one_line(const char *s) {
    size_t n = strlen(s);
    return n > 0 && s[n - 1] == '\n' && !memchr(s, '\n', n - 1);
}

int test_refusal_at(const char *file, int line, const char *cmd, TestRefusal r) {
    int st;
    char *out = test_run(cmd, &st);
    const char *o = out ? out : "";
    int ok = (r.status < 0 ? st != 0 : st == r.status) && (!r.starts || !strncmp(o, r.starts, strlen(r.starts))) &&
             (!r.needle || strstr(o, r.needle)) && (!r.one_line || exactly_one_line(o));
    if (!ok) {
        char want[32] = "non-zero";
        if (r.status >= 0) snprintf(want, sizeof want, "%d", r.status);
        test_fail(file, line, "`%s`: exit %d%s (want %s), printed: %s(want %s'%s...%s...')", cmd, st,
                  st == 124 ? " (timed out)" : "", want, o, r.one_line ? "one line " : "", r.starts ? r.starts : "",
                  r.needle ? r.needle : "");
    }
    free(out);
    return ok;
}

char *test_runf(int *status, const char *fmt, ...) {
    char cmd[8192];
    int st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return test_run(cmd, status ? status : &st);
}

struct cJSON *test_read_json(const char *path) {
    char *s = test_read_file(path, NULL);
    cJSON *j = s ? cJSON_Parse(s) : NULL;
    free(s);
    if (!j) test_fail(__FILE__, __LINE__, "cannot read %s", path);
    return j;
}

const char *test_python_numpy(void) {
    static const char *found;
    static int looked;
    if (looked) return found;
    looked = 1;
    /* a pyenv shim first on PATH often lacks Debian's python3-numpy */
    const char *cands[] = {getenv("AHASCOPE_PYTHON"), "python3", "/usr/bin/python3"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        char cmd[600];
        int st;
        if (!cands[i] || !*cands[i] || strlen(cands[i]) > 500) continue;
        snprintf(cmd, sizeof cmd, "'%s' -c 'import numpy' 2>/dev/null", cands[i]);
        free(test_run(cmd, &st));
        if (st == 0) return found = cands[i];
    }
    return NULL;
}

static void cleanup_tmp(void) {
    if (!g_tmpdir[0] || getenv("AHASCOPE_KEEP_TMP")) return;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", g_tmpdir);
}

/* A WORD matches a test whose name or file contains it; a -WORD leaves out
 * the tests WORD matches (`-test_tui`: all but the tmux tests). With no
 * plain WORD every test is wanted. */
int test_filter_wants(const char *name, const char *file, int argc, char **argv) {
    int plain = 0, hit = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if (strstr(name, argv[i] + 1) || strstr(file, argv[i] + 1)) return 0;
        } else plain = 1, hit |= strstr(name, argv[i]) || strstr(file, argv[i]);
    }
    return hit || !plain;
}

/* $AHASCOPE_TEST_SLICE "A-B/N": of the tests the filter wants, only those
 * whose rank modulo N lies in A..B run, so two runners with slices that
 * cover 0..N-1 between them run the suite once (tests/run_all.sh splits
 * the sanitizer build's so). Unset or malformed: every test. */
static int in_slice(int rank) {
    const char *v = getenv("AHASCOPE_TEST_SLICE");
    int a, b, n;
    if (!v || sscanf(v, "%d-%d/%d", &a, &b, &n) != 3 || n < 1 || a < 0 || b < a) return 1;
    return rank % n >= a && rank % n <= b;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The slowest tests so far, kept sorted slowest first: printed at the end so
 * a suite that grows past CI's budget shows where its time went. */
#define SLOWEST 8
typedef struct { const char *name; double s; } Took;
static void note_time(Took *slow, const char *name, double s) {
    int i = SLOWEST;
    while (i > 0 && (!slow[i - 1].name || slow[i - 1].s < s)) i--;
    if (i >= SLOWEST) return;
    memmove(slow + i + 1, slow + i, (SLOWEST - 1 - (size_t)i) * sizeof *slow);
    slow[i] = (Took){name, s};
}

int main(int argc, char **argv) {
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/ahascope-test-XXXXXX");
    if (!mkdtemp(g_tmpdir)) { perror("mkdtemp"); return 2; }
    atexit(cleanup_tmp);
    if (!test_shared_available())
        fprintf(stderr, "note: shared data not found at %s; tests that need it will be skipped\n",
                test_shared_dir());
    int passed = 0, failed = 0, skipped = 0;
    static char failures[16][400];
    Took slow[SLOWEST] = {{0}};
    double t_all = now_s();
    for (int i = 0, rank = 0; i < g_ntests; i++) {
        TestCase *t = &g_tests[i];
        if (!test_filter_wants(t->name, t->file, argc, argv) || !in_slice(rank++)) continue;
        g_cur_failed = 0;
        g_cur_skipped = 0;
        fprintf(stderr, "  %-48s ", t->name);
        fflush(stderr);
        double t0 = now_s();
        t->fn();
        double took = now_s() - t0;
        note_time(slow, t->name, took);
        if (g_cur_failed) {
            fprintf(stderr, "  %s FAILED (%d)\n", t->name, g_cur_failed);
            if (failed < 16) snprintf(failures[failed], sizeof failures[failed], "%s: %s", t->name, g_first_fail);
            failed++;
        }
        else if (g_cur_skipped) { skipped++; }
        else if (took >= 1.0) { fprintf(stderr, "ok (%.1f s)\n", took); passed++; }
        else { fprintf(stderr, "ok\n"); passed++; }
    }
    fprintf(stderr, "%.0f s in all; slowest:", now_s() - t_all);
    for (int i = 0; i < SLOWEST && slow[i].name; i++) fprintf(stderr, " %s %.1f s%s", slow[i].name, slow[i].s, i + 1 < SLOWEST && slow[i + 1].name ? "," : "");
    fputc('\n', stderr);
    for (int i = 0; i < failed && i < 16; i++) printf("FAILED %s\n", failures[i]);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
