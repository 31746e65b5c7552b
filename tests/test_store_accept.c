/* test_store_accept.c — a file is accepted before anything writes to it.
 *
 * A file is accepted before anything writes to it:
 * a foreign, newer or tampered file given to record or merge --out is
 * refused and left byte for byte as it was; merge's inputs are read-only,
 * their -wal included; a -wal or hot -journal written for another
 * database, or a table whose root page was moved, is refused in one line. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"
#include "test.h"
#include "tests/store_fixture.h"

/* In a child that dies without closing, run sql with checkpoints off:
 * what it wrote stays in db's -wal (or, mid-transaction in a rollback
 * journal file, its hot -journal), as a killed writer leaves it. */
static void killed_writer(const char *db, const char *sql) {
    pid_t pid = fork();
    if (pid == 0) {
        sqlite3 *h;
        if (sqlite3_open(db, &h) != SQLITE_OK) _exit(2);
        if (sqlite3_exec(h, "PRAGMA wal_autocheckpoint=0", NULL, NULL, NULL) != SQLITE_OK) _exit(3);
        _exit(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : 4);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer child: status %d", st);
}

/* A second run, copied from run 1: what the killed writer commits. */
#define COPY_RUN_1(id)                                                                                          \
    "CREATE TEMP TABLE r AS SELECT * FROM runs WHERE run_id=1; UPDATE r SET run_id=" #id ";"                   \
    "CREATE TEMP TABLE k AS SELECT * FROM tokens WHERE run_id=1; UPDATE k SET run_id=" #id ";"                 \
    "CREATE TEMP TABLE d AS SELECT * FROM decision_bits WHERE k < 2 << 48; UPDATE d SET k=k + ((" #id "-1) << 48);" \
    "CREATE TEMP TABLE h AS SELECT * FROM head_totals WHERE run_id=1; UPDATE h SET run_id=" #id ";"            \
    "CREATE TEMP TABLE hs AS SELECT * FROM head_stats WHERE run_id=1; UPDATE hs SET run_id=" #id ";"           \
    "INSERT INTO runs SELECT * FROM r; INSERT INTO tokens SELECT * FROM k; INSERT INTO decision_bits SELECT * FROM d;" \
    "INSERT INTO head_totals SELECT * FROM h; INSERT INTO head_stats SELECT * FROM hs;"

/* 1 if path holds exactly the len bytes of want. */
static int same_bytes(const char *path, const char *want, long len) {
    long n = -1;
    char *now = test_read_file(path, &n);
    int same = now && want && n == len && memcmp(now, want, (size_t)len) == 0;
    free(now);
    return same;
}

static void copy_file(const char *from, const char *to) {
    long n = 0;
    char *b = test_read_file(from, &n);
    CHECK_MSG(b && test_write_file(to, b, n) == 0, "copy %s to %s", from, to);
    free(b);
}

static void expect_open_refused(const char *db, StoreMode mode, const char *want) {
    Err e = {0};
    Store *s = store_open(db, mode, 200, &e);
    CHECK_MSG(s == NULL && strstr(e.msg, db) && strstr(e.msg, want) && !strchr(e.msg, '\n'),
              "%s: got '%s', want '%s'", db, e.msg, want);
    store_close(s, NULL);
}

/* record and merge --out used to switch the file to WAL mode before
 * looking at it, then refuse it: another program's database, a newer
 * ahascope's, or a tampered one was changed for good. */
TEST(store_accept_refused_files_are_left_as_they_were) {
    static const char *const cases[][3] = {
        {"foreign", "PRAGMA journal_mode=DELETE; CREATE TABLE notes(x); INSERT INTO notes VALUES ('theirs')",
         "not an ahascope database"},
        {"newer", "PRAGMA journal_mode=DELETE; PRAGMA user_version=99", "schema version 99 is newer"},
        {"tampered", "PRAGMA journal_mode=DELETE; CREATE TABLE extra(x)", "tampered schema: unexpected table"},
    };
    char good[1024], db[1024], cmd[4096];
    snprintf(good, sizeof good, "%s", test_tmp("accept_good.db"));
    test_db_record(good, 2, 2, 6);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(db, sizeof db, "%s", test_tmp(cases[i][0]));
        if (i == 0) test_db_fresh(db);
        else test_db_record(db, 2, 2, 6);
        test_db_exec(db, cases[i][1]);
        long len = 0;
        char *before = test_read_file(db, &len);
        expect_open_refused(db, STORE_WRITE, cases[i][2]);
        snprintf(cmd, sizeof cmd, "%s merge --out %s %s", test_bin(), db, good);
        CHECK_REFUSAL(cmd, 1, NULL, cases[i][2], 1);
        if (test_shared_available()) {
            snprintf(cmd, sizeof cmd, "%s record --db %s --model %s --prompt Once --steps 2", test_bin(), db,
                     test_stories_model());
            CHECK_REFUSAL(cmd, 1, NULL, cases[i][2], 1);
        }
        CHECK_MSG(same_bytes(db, before, len), "%s: the refused file changed", cases[i][0]);
        CHECK_MSG(len > 19 && before[18] == 1 && before[19] == 1, "%s: not a rollback-journal file to start", cases[i][0]);
        free(before);
    }
}

/* merge used to attach its inputs read-write, so detaching one
 * checkpointed its -wal into it and deleted the -wal. */
TEST(store_accept_merge_leaves_an_inputs_wal_alone) {
    char in[1024], wal[1100], out[1024];
    snprintf(in, sizeof in, "%s", test_tmp("accept_in.db"));
    snprintf(wal, sizeof wal, "%s-wal", in);
    snprintf(out, sizeof out, "%s", test_tmp("accept_merged.db"));
    test_db_record(in, 2, 2, 8);
    killed_writer(in, COPY_RUN_1(2));
    long len = 0, wlen = 0;
    char *before = test_read_file(in, &len), *wbefore = test_read_file(wal, &wlen);
    CHECK_MSG(wbefore && wlen > 0, "the writer left no -wal");
    test_db_fresh(out);
    int st = -1;
    free(test_runf(&st, "%s merge --out %s %s 2>&1", test_bin(), out, in));
    CHECK_INT(st, 0);
    CHECK_INT(test_db_scalar(out, "SELECT COUNT(*) FROM runs"), 2);
    CHECK_INT(test_db_scalar(out, "SELECT COUNT(*) FROM decisions"), 2 * 8 * 4);
    CHECK_MSG(same_bytes(in, before, len), "merge changed its input");
    CHECK_MSG(same_bytes(wal, wbefore, wlen), "merge changed or removed its input's -wal");
    free(before);
    free(wbefore);
}

/* A -wal copied from another database B beside ours replaced our rows
 * with B's on the next open; ours, left behind by our own killed writer,
 * must still be replayed. */
TEST(store_accept_a_foreign_wal_is_refused) {
    char a[1024], b[1024], side[1100], cmd[4096];
    snprintf(a, sizeof a, "%s", test_tmp("accept_a.db"));
    snprintf(b, sizeof b, "%s", test_tmp("accept_b.db"));
    test_db_record(a, 2, 2, 6);
    test_db_record(b, 2, 2, 300);
    killed_writer(b, COPY_RUN_1(2));
    long len = 0;
    char *before = test_read_file(a, &len);
    snprintf(side, sizeof side, "%s-wal", a);
    char from[1100];
    snprintf(from, sizeof from, "%s-wal", b);
    copy_file(from, side);
    expect_open_refused(a, STORE_WRITE, "-wal was written for another database");
    if (test_shared_available()) {
        snprintf(cmd, sizeof cmd, "%s record --db %s --model %s --prompt Once --steps 2", test_bin(), a,
                 test_stories_model());
        CHECK_REFUSAL(cmd, 1, NULL, "-wal was written for another database", 1);
    }
    CHECK_MSG(same_bytes(a, before, len), "the refused database changed");
    free(before);
    unlink(side);
    CHECK_INT(test_db_scalar(a, "SELECT COUNT(*) FROM decisions"), 6 * 4);
    Err e = {0};
    Store *s = store_open(b, STORE_WRITE, 1000, &e); /* B's own -wal: a killed writer's, replayed */
    CHECK_MSG(s != NULL, "B with its own -wal: %s", e.msg);
    store_close(s, NULL);
    CHECK_INT(test_db_scalar(b, "SELECT COUNT(*) FROM decisions"), 2 * 300 * 4);
}

/* A -wal whose page size is not the database's is another database's. */
TEST(store_accept_a_wal_of_another_page_size_is_refused) {
    char a[1024], b[1024], side[1100], from[1100];
    snprintf(a, sizeof a, "%s", test_tmp("accept_pa.db"));
    snprintf(b, sizeof b, "%s", test_tmp("accept_pb.db"));
    test_db_record(a, 2, 2, 6);
    test_db_fresh(b);
    test_db_exec(b, "PRAGMA page_size=8192; PRAGMA journal_mode=WAL; CREATE TABLE t(x)");
    killed_writer(b, "INSERT INTO t VALUES (1)");
    snprintf(side, sizeof side, "%s-wal", a);
    snprintf(from, sizeof from, "%s-wal", b);
    copy_file(from, side);
    expect_open_refused(a, STORE_WRITE, "page size 8192");
    unlink(side);
}

/* Swapping two tables' root pages with writable_schema passed the text
 * comparison: readers read the wrong table and record wrote into it. */
TEST(store_accept_swapped_root_pages_are_refused) {
    char db[1024], good[1024], cmd[4096];
    snprintf(db, sizeof db, "%s", test_tmp("accept_roots.db"));
    snprintf(good, sizeof good, "%s", test_tmp("accept_roots_src.db"));
    test_db_record(db, 2, 2, 6);
    test_db_record(good, 2, 2, 6);
    /* the old root pages first: an UPDATE that read sqlite_schema as it changes would give both one page */
    test_db_exec(db, "CREATE TEMP TABLE r AS SELECT name, rootpage FROM main.sqlite_schema; PRAGMA writable_schema=ON;"
               " UPDATE main.sqlite_schema SET rootpage = CASE name WHEN 'runs' THEN (SELECT rootpage FROM r"
               " WHERE name = 'head_totals') ELSE (SELECT rootpage FROM r WHERE name = 'runs') END WHERE name IN ('runs', 'head_totals')");
    const char *want = "does not hold its own rows";
    expect_open_refused(db, STORE_WRITE, want);
    expect_open_refused(db, STORE_READ, want);
    snprintf(cmd, sizeof cmd, "%s runs --db %s", test_bin(), db);
    CHECK_REFUSAL(cmd, 1, NULL, want, 1);
    snprintf(cmd, sizeof cmd, "%s merge --out %s %s", test_bin(), db, good);
    CHECK_REFUSAL(cmd, 1, NULL, want, 1);
    snprintf(cmd, sizeof cmd, "%s merge --out %s %s", test_bin(), test_tmp("accept_roots_out.db"), db);
    test_db_fresh(test_tmp("accept_roots_out.db"));
    CHECK_REFUSAL(cmd, 1, NULL, want, 1);
    if (test_shared_available()) {
        snprintf(cmd, sizeof cmd, "%s record --db %s --model %s --prompt Once --steps 2", test_bin(), db,
                 test_stories_model());
        CHECK_REFUSAL(cmd, 1, NULL, want, 1);
    }    /* two tables of the same kind (WITHOUT ROWID) swapped: the first rows' storage classes give it away */
    test_db_record(db, 2, 2, 6);
    test_db_exec(db, "CREATE TEMP TABLE r AS SELECT name, rootpage FROM main.sqlite_schema; PRAGMA writable_schema=ON;"
               " UPDATE main.sqlite_schema SET rootpage = CASE name WHEN 'tokens' THEN (SELECT rootpage FROM r"
               " WHERE name = 'head_totals') ELSE (SELECT rootpage FROM r WHERE name = 'tokens') END WHERE name IN ('tokens', 'head_totals')");
    expect_open_refused(db, STORE_WRITE, want);
    expect_open_refused(db, STORE_READ, want);
    /* one table's root page given to a second name: both read one b-tree */
    test_db_record(db, 2, 2, 6);
    test_db_exec(db, "PRAGMA writable_schema=ON; UPDATE sqlite_schema SET rootpage ="
               " (SELECT rootpage FROM sqlite_schema WHERE name='head_totals') WHERE name = 'tokens'");
    expect_open_refused(db, STORE_WRITE, "'head_totals' and 'tokens' share one root page");
    expect_open_refused(db, STORE_READ, "'head_totals' and 'tokens' share one root page");
}

/* A hot -journal copied from another database beside ours would be
 * played back into it on the next open; ours, left by a killed writer
 * mid-transaction, must still roll back. */
TEST(store_accept_a_foreign_journal_is_refused) {
    char a[1024], b[1024], side[1100], from[1100];
    snprintf(a, sizeof a, "%s", test_tmp("accept_ja.db"));
    snprintf(b, sizeof b, "%s", test_tmp("accept_jb.db"));
    test_db_record(a, 2, 2, 6);
    test_db_record(b, 2, 2, 300);
    test_db_exec(b, "PRAGMA journal_mode=DELETE");
    killed_writer(b, "PRAGMA cache_size=2; BEGIN; DELETE FROM decision_bits; DELETE FROM tokens;"); /* dies mid-transaction */
    snprintf(from, sizeof from, "%s-journal", b);
    snprintf(side, sizeof side, "%s-journal", a);
    long jlen = 0, len = 0;
    free(test_read_file(from, &jlen));
    CHECK_MSG(jlen > 0, "the writer left no hot journal");
    copy_file(from, side);
    char *before = test_read_file(a, &len);
    expect_open_refused(a, STORE_WRITE, "-journal was written for another database");
    CHECK_MSG(same_bytes(a, before, len), "the refused database changed");
    free(before);
    unlink(side);
    CHECK_INT(test_db_scalar(a, "SELECT COUNT(*) FROM decisions"), 6 * 4);
    Err e = {0};
    Store *s = store_open(b, STORE_WRITE, 1000, &e); /* B's own journal: rolled back */
    CHECK_MSG(s != NULL, "B with its own journal: %s", e.msg);
    store_close(s, NULL);
    CHECK_INT(test_db_scalar(b, "SELECT COUNT(*) FROM decisions"), 300 * 4);
}
