/* test_store_hostile.c — databases and SQL written to do harm, refused or bounded.
 *
 * Databases and SQL written to do harm: a schema
 * with a trigger or a replaced view, user SQL that never ends or asks for
 * a gigabyte, runs that claim absurd shapes. Each must be refused or
 * stopped in one line naming the file, with the recorded data untouched. */
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/sha256.h"
#include "app/tui/sql.h"
#include "store/store.h"
#include "test.h"
#include "tests/store_fixture.h"

#define ENDLESS "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "

/* `ahascope ARGS` (under `timeout`, so a hang fails instead of blocking)
 * must exit with status and one line naming db and holding want. */
static void expect_refused(int status, const char *db, const char *args, const char *want) {
    int st;
    char *out = test_runf(&st, "timeout 20 %s %s", test_bin(), args);
    int lines = 0;
    for (char *p = out; p && *p; p++) lines += *p == '\n';
    CHECK_MSG(st == status && lines == 1 && out && strstr(out, db) && strstr(out, want),
              "'%s' -> status %d (want %d): %s(want '%s')", args, st, status, out, want);
    free(out);
}

static void expect_open_refused(const char *db, StoreMode mode, const char *want) {
    Err e = {0};
    Store *s = store_open(db, mode, 200, &e);
    CHECK_MSG(s == NULL && strstr(e.msg, db) && strstr(e.msg, want), "%s: got '%s', want '%s'", db, e.msg, want);
    store_close(s, NULL);
}

/* A trigger in the file would run inside our own writes: a merge into it
 * used to exit 0 after the trigger had deleted every recorded decision. */
TEST(store_hostile_trigger_is_refused) {
    char db[1024], good[1024], args[4096];
    snprintf(db, sizeof db, "%s", test_tmp("trigger.db"));
    snprintf(good, sizeof good, "%s", test_tmp("trigger_src.db"));
    test_db_record(db, 2, 2, 6);
    test_db_record(good, 2, 2, 6);
    test_db_exec(db, "CREATE TRIGGER t AFTER INSERT ON tokens BEGIN DELETE FROM decisions;"
               " UPDATE runs SET prompt='pwned'; END");
    snprintf(args, sizeof args, "merge --out %s %s", db, good);
    expect_refused(1, db, args, "tampered schema: unexpected trigger 't'");
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM decisions"), 24);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM runs WHERE prompt = 'pwned'"), 0);
    snprintf(args, sizeof args, "merge --out %s %s", test_tmp("trigger_out.db"), db);
    expect_refused(1, db, args, "unexpected trigger 't'");
    snprintf(args, sizeof args, "runs --db %s", db);
    expect_refused(1, db, args, "unexpected trigger 't'");
    if (test_shared_available()) {
        snprintf(args, sizeof args, "record --db %s --model %s --prompt Once --steps 3", db,
                 test_stories_model());
        expect_refused(1, db, args, "unexpected trigger 't'");
        CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM decisions"), 24);
    }
    expect_open_refused(db, STORE_WRITE, "unexpected trigger");
    expect_open_refused(db, STORE_READ, "unexpected trigger");
}

/* A view replaced by an endless one used to hang query and compare;
 * every other change to the objects is refused the same way. */
TEST(store_hostile_changed_objects_are_refused) {
    static const char *const cases[][2] = {
        {"DROP VIEW run_summary; CREATE VIEW run_summary AS " ENDLESS "SELECT x AS run_id FROM c",
         "view 'run_summary' is not the one ahascope creates"},
        {"DROP VIEW decided; CREATE VIEW decided AS SELECT * FROM decisions", "view 'decided' is not the one"},
        {"ALTER TABLE runs ADD COLUMN extra TEXT", "table 'runs' is not the one"},
        {"CREATE INDEX sneaky ON tokens(piece)", "unexpected index 'sneaky'"},
        {"CREATE TABLE notes(x)", "unexpected table 'notes'"},
        {"CREATE VIEW \"a\nb\" AS SELECT 1", "unexpected view 'a?b'"}, /* the message stays one line */
        {"DROP VIEW head_rates", "view 'head_rates' is missing"},
    };
    char db[1024], args[2048];
    snprintf(db, sizeof db, "%s", test_tmp("changed.db"));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        test_db_record(db, 2, 2, 6);
        test_db_exec(db, cases[i][0]);
        snprintf(args, sizeof args, "query --db %s 'SELECT * FROM run_summary'", db);
        expect_refused(1, db, args, cases[i][1]);
        snprintf(args, sizeof args, "compare --db %s --run 1", db);
        expect_refused(1, db, args, cases[i][1]);
    }
    /* the untouched file, and an untouched version-1 file, still open */
    test_db_record(db, 2, 2, 6);
    Err e;
    Store *s = store_open(db, STORE_READ, 200, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    store_close(s, NULL);
    const char *v1 = test_tmp("v1_trigger.db");
    long n = 0;
    char *bytes = test_read_file("tests/fixtures/store/v1.db", &n);
    CHECK(bytes && test_write_file(v1, bytes, n) == 0);
    free(bytes);
    s = store_open(v1, STORE_READ, 200, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    store_close(s, NULL);
    test_db_exec(v1, "CREATE TRIGGER t1 AFTER INSERT ON runs BEGIN DELETE FROM decisions; END");
    expect_open_refused(v1, STORE_READ, "unexpected trigger 't1'");
    expect_open_refused(v1, STORE_WRITE, "unexpected trigger 't1'");
    CHECK_INT(test_db_scalar(v1, "PRAGMA user_version"), 1); /* refused before any upgrade */
}

/* fts3_tokenizer('simple') used to print the address of a library
 * structure; with a second argument it could point SQLite at any code. */
TEST(store_hostile_query_refuses_fts3_tokenizer) {
    const char *db = test_tmp("fts.db");
    test_db_record(db, 1, 1, 2);
    const char *sqls[] = {"SELECT fts3_tokenizer('simple')", "SELECT fts3_tokenizer('x', X'0000000000000000')"};
    for (int i = 0; i < 2; i++) {
        int st;
        char *out = test_runf(&st, "%s query --db %s \"%s\"", test_bin(), db, sqls[i]);
        CHECK_MSG(st == 1 && out && strstr(out, "fts3_tokenizer() is not allowed") && !strstr(out, "0x"), "%s -> %d %s",
                  sqls[i], st, out);
        free(out);
    }
}

/* Endless SQL stops at --timeout, and Ctrl-C stops it sooner; neither
 * touches the file. */
TEST(store_hostile_query_time_limit_and_cancel) {
    const char *db = test_tmp("slow.db");
    test_db_record(db, 2, 4, 40);
    char before[65], after[65];
    Err e;
    sha256_file(db, before, &e);
    const char *sqls[] = {ENDLESS "SELECT count(*) FROM c",
                          "SELECT count(*) FROM decisions a, decisions b, decisions c, decisions d"};
    for (int i = 0; i < 2; i++) {
        int st;
        double t0 = clock_now();
        char *out = test_runf(&st, "timeout 30 %s query --db %s --timeout 1 \"%s\"", test_bin(), db, sqls[i]);
        double dt = clock_now() - t0;
        CHECK_MSG(st == 1 && dt < 5 && out && !strcmp(out, "ahascope query: stopped after 1 s (--timeout)\n"),
                  "%s -> %d after %.1f s: %s", sqls[i], st, dt, out);
        free(out);
    }
    char *help = test_runf(NULL, "%s query --help", test_bin());
    CHECK_MSG(help && strstr(help, "--timeout S") && strstr(help, "default 10"), "%s", help);
    free(help);
    int st;
    char *bad = test_runf(&st, "%s query --db %s --timeout 0 'SELECT 1'", test_bin(), db);
    CHECK_MSG(st == 2 && strstr(bad, "--timeout"), "%s", bad);
    free(bad);
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 1), dup2(nul, 2);
        execl(test_bin(), test_bin(), "query", "--db", db, ENDLESS "SELECT count(*) FROM c", (char *)NULL);
        _exit(127);
    }
    usleep(400000);
    double t0 = clock_now();
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 130 && clock_now() - t0 < 2, "Ctrl-C: status %d", status);
    sha256_file(db, after, &e);
    CHECK(!strcmp(before, after));
}

/* A gigabyte asked for is an error, not a gigabyte: the same ceilings in
 * `query`, in the C API and in the TUI's `:` pane. */
TEST(store_hostile_query_memory_ceilings) {
    const char *db = test_tmp("big.db");
    test_db_record(db, 2, 2, 6);
    char before[65], after[65];
    Err e;
    sha256_file(db, before, &e);
    int st;
    double t0 = clock_now();
    char *out = test_runf(&st, "%s query --db %s 'SELECT length(randomblob(1000000000))'", test_bin(), db);
    CHECK_MSG(st == 1 && clock_now() - t0 < 2 && out && strstr(out, "string or blob too big") && strstr(out, db),
              "status %d: %s", st, out);
    free(out);
    Store *s = store_open(db, STORE_READ, 200, &e);
    FILE *sink = fopen("/dev/null", "w");
    CHECK(s && sink && store_query(s, "SELECT 1", STORE_FMT_CSV, sink, &e) == 0);
    if (sink) fclose(sink);
    int64_t heap = sqlite3_hard_heap_limit64(-1);
    CHECK_MSG(heap > 0 && heap <= STORE_SQL_MAX_HEAP, "heap limit %lld", (long long)heap);
    store_close(s, NULL);
    TuiSql q;
    memset(&q, 0, sizeof q);
    TuiSqlResult r = {0};
    CHECK_INT(tui_sql_start(&q, db, "SELECT length(randomblob(1000000000))", &e), 0);
    int got = 0;
    for (double end = clock_now() + 5; !got && clock_now() < end; usleep(5000)) got = tui_sql_take(&q, &r);
    CHECK_MSG(got && r.end == TUI_SQL_FAILED && r.text && strstr(r.text, "too big"), "%s", r.text);
    tui_sql_result_free(&r);
    tui_sql_stop(&q);
    sha256_file(db, after, &e);
    CHECK(!strcmp(before, after));
}

/* The peak resident set of a running process in KB (VmHWM, which exec
 * resets, unlike getrusage's ru_maxrss that keeps the forked test runner's
 * own size); 0 before its exec or once it has exited. */
static long peak_rss_kb(pid_t pid) {
    char path[64], line[256], exe[2][1024];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t a = readlink(path, exe[0], sizeof exe[0] - 1), b = readlink("/proc/self/exe", exe[1], sizeof exe[1] - 1);
    if (a < 0 || (a == b && !memcmp(exe[0], exe[1], (size_t)a))) return 0; /* gone, or not yet past exec */
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = atol(line + 6);
    if (f) fclose(f);
    return kb;
}

/* Run `ahascope ARGS...` with stdout to out and stderr to err, ASan's
 * quarantine of freed blocks kept small so its peak RSS measures what the
 * program holds. Returns the wait status; *rss_kb is the largest peak RSS
 * seen while it ran (read every 20 ms), *secs its wall time. */
static int run_measured(const char *const *args, const char *out, const char *err, long *rss_kb, double *secs) {
    double t0 = clock_now();
    pid_t pid = fork();
    if (pid == 0) {
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[1024];
        snprintf(opts, sizeof opts, "%s%squarantine_size_mb=16", asan ? asan : "", asan && *asan ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1), dup2(e, 2);
        char *argv[16];
        int n = 0;
        argv[n++] = (char *)test_bin();
        for (; args[n - 1] && n < 15; n++) argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        execv(test_bin(), argv);
        _exit(127);
    }
    int status = -1;
    *rss_kb = 0;
    while (pid > 0 && waitpid(pid, &status, WNOHANG) == 0) {
        long kb = peak_rss_kb(pid);
        if (kb > *rss_kb) *rss_kb = kb;
        usleep(20000);
    }
    *secs = clock_now() - t0;
    return status;
}

/* An endless result in the default aligned table used to be buffered
 * whole (964 MB in the 10 s time limit): the table stops at its row bound,
 * prints the rows it holds, and says how to get the rest. */
TEST(store_hostile_query_endless_table_stops_at_its_bound) {
    const char *db = test_tmp("endless_table.db");
    test_db_record(db, 2, 2, 6);
    const char *out = test_tmp("endless_table.out"), *err = test_tmp("endless_table.err");
    const char *args[] = {"query", "--db", db, ENDLESS "SELECT x FROM c", NULL};
    long rss;
    double secs;
    int st = run_measured(args, out, err, &rss, &secs);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    CHECK_MSG(rss < 200 * 1024, "peak RSS %ld KB", rss);
    CHECK_MSG(secs < 9, "%.1f s: it ran into the time limit", secs);
    char *msg = test_read_file(err, NULL);
    CHECK_MSG(msg && !strcmp(msg, "ahascope query: table output stops after 100000 rows (an aligned table holds at most"
                                  " 100000 rows or 64 MiB; use --csv or --json to stream them all, or LIMIT)\n"),
              "%s", msg);
    free(msg);
    long n;
    char *text = test_read_file(out, &n);
    int lines = 0;
    for (long i = 0; text && i < n; i++) lines += text[i] == '\n';
    CHECK_INT(lines, 100000 + 2); /* header, rule, the rows held */
    CHECK_MSG(text && !strncmp(text, "x\n------\n     1\n", 16) && strstr(text, "\n100000\n"), "%.40s", text);
    free(text);
}

/* --json streams the array as rows come instead of building it (1.77 GB
 * in 10 s before): memory stays flat until the time limit, and what was
 * printed is closed into valid JSON. */
TEST(store_hostile_query_endless_json_streams_in_bounded_memory) {
    const char *db = test_tmp("endless_json.db");
    test_db_record(db, 2, 2, 6);
    const char *err = test_tmp("endless_json.err");
    const char *args[] = {"query", "--db", db, "--json", "--timeout", "4", ENDLESS "SELECT x FROM c", NULL};
    long rss;
    double secs;
    int st = run_measured(args, "/dev/null", err, &rss, &secs);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    CHECK_MSG(rss < 200 * 1024, "peak RSS %ld KB", rss);
    char *msg = test_read_file(err, NULL);
    CHECK_MSG(msg && !strcmp(msg, "ahascope query: stopped after 4 s (--timeout)\n"), "%s", msg);
    free(msg);
    const char *out = test_tmp("endless_json.out");
    const char *short_args[] = {"query", "--db", db, "--json", "--timeout", "0.3", ENDLESS "SELECT x FROM c", NULL};
    st = run_measured(short_args, out, err, &rss, &secs);
    long n;
    char *text = test_read_file(out, &n);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1 && text && n > 20, "status %d, %ld bytes", st, n);
    CHECK_MSG(text && !strncmp(text, "[{\"x\":1},{\"x\":2},", 17) && n > 2 && !strcmp(text + n - 3, "}]\n"),
              "%.40s ... %s", text, text && n > 20 ? text + n - 20 : "");
    free(text);
}

/* A 150 KB file claiming 4096 x 4096 heads used to send the TUI after
 * 31 GB; every reader of a run's shape now refuses it first. */
TEST(store_hostile_absurd_shapes_are_refused) {
    static const char *const cases[][2] = {
        {"UPDATE runs SET n_layers = 4096, n_heads = 4096", "n_layers = 4096 is impossible"},
        {"UPDATE runs SET n_layers = 1024, n_heads = 1025", "1024 layers x 1025 heads is absurdly large"},
        {"UPDATE runs SET n_layers = 4294967298", "n_layers = -1 is impossible"},
        {"UPDATE runs SET n_heads = 8, n_kv_heads = 8", "claims 3 layers x 8 heads, but its first step holds 12"},
        {"UPDATE runs SET n_kv_heads = 3", "n_kv_heads 3 does not divide n_heads 4"},
        {"UPDATE runs SET vocab_size = 1e9", "vocab_size = 1000000000 is impossible"},
        {"DELETE FROM decision_bits WHERE k >> 28 = 1 << 20 AND (k >> 18 & 1023) = 2", "first step holds 8 cells"},
    };
    char db[1024], args[2048];
    snprintf(db, sizeof db, "%s", test_tmp("shape.db"));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        test_db_record(db, 3, 4, 5);
        test_db_exec(db, cases[i][0]);
        Err e = {0};
        Store *s = store_open(db, STORE_READ, 200, &e);
        StoreRunInfo r;
        CHECK_MSG(s && store_run_info(s, 1, &r, &e) != 0 && strstr(e.msg, db) && strstr(e.msg, cases[i][1]),
                  "%s: got '%s'", cases[i][0], e.msg);
        store_close(s, NULL);
        const char *cmds[] = {"export --db %s --run 1 --json", "export --db %s --run 1 --csv", "compare --db %s --run 1"};
        for (int c = 0; c < 3; c++) {
            snprintf(args, sizeof args, cmds[c], db);
            expect_refused(1, db, args, cases[i][1]);
        }
    }
    /* the TUI's replay reads the shape first too (it needs a terminal: script gives it one) */
    int st;
    free(test_runf(&st, "command -v script >/dev/null 2>&1"));
    if (st == 0) {
        test_db_record(db, 3, 4, 5);
        test_db_exec(db, cases[0][0]);
        char *out = test_runf(&st, "timeout 60 script -qec '%s tui --replay --db %s' /dev/null </dev/null", test_bin(), db);
        CHECK_MSG(st == 1 && out && strstr(out, db) && strstr(out, cases[0][1]), "replay: %d %s", st, out);
        free(out);
    }
}

/* Issue 53 §4: a file holding run 40 000 (edited, or replayed from
 * elsewhere) made the readers shift it into the packed key past int64
 * (UBSan: store_k's run << 48); the writer's cap applies when reading. */
TEST(store_hostile_a_run_past_the_cap_is_refused) {
    char db[1024], args[2048];
    snprintf(db, sizeof db, "%s", test_tmp("runcap.db"));
    test_db_record(db, 2, 2, 5);
    test_db_exec(db, "UPDATE runs SET run_id = 40000; UPDATE tokens SET run_id = 40000;"
                     " UPDATE run_layers SET run_id = 40000");
    const char *want = "run 40000 is past the 32767 runs a database keys";
    Err e = {0};
    Store *s = store_open(db, STORE_READ, 200, &e);
    StoreRunInfo r;
    CHECK_MSG(s && store_run_info(s, 40000, &r, &e) != 0 && strstr(e.msg, want), "got '%s'", e.msg);
    StepTrace *t = trace_new(2, 2);
    CHECK_MSG(s && store_read_steps(s, 40000, 0, 1, &t, &e) < 0 && strstr(e.msg, want), "steps: got '%s'", e.msg);
    trace_free(t);
    store_close(s, NULL);
    const char *cmds[] = {"export --db %s --run 40000 --json", "export --db %s --run 40000 --csv"};
    for (int c = 0; c < 2; c++) {
        snprintf(args, sizeof args, cmds[c], db);
        expect_refused(1, db, args, want);
    }
}
