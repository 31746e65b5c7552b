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
 * ahascope's, a tampered one, or one holding a run past the cap (issue 53
 * §4: refused by record only after the switch) was changed for good. */
TEST(store_accept_refused_files_are_left_as_they_were) {
    static const char *const cases[][3] = {
        {"foreign", "PRAGMA journal_mode=DELETE; CREATE TABLE notes(x); INSERT INTO notes VALUES ('theirs')",
         "not an ahascope database"},
        {"newer", "PRAGMA journal_mode=DELETE; PRAGMA user_version=99", "schema version 99 is newer"},
        {"tampered", "PRAGMA journal_mode=DELETE; CREATE TABLE extra(x)", "tampered schema: unexpected table"},
        {"run_cap", "PRAGMA journal_mode=DELETE; CREATE TEMP TABLE r AS SELECT * FROM runs WHERE run_id=1;"
                    " UPDATE r SET run_id=9223372036854775807; INSERT INTO runs SELECT * FROM r",
         "holds run 9223372036854775807, past the 32767 runs"},
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

/* db refused, saying want, as merge's input (into a fresh file named
 * out) and by record. */
static void refused_as_input_and_by_record(const char *db, const char *out, const char *want) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s merge --out %s %s", test_bin(), test_tmp(out), db);
    test_db_fresh(test_tmp(out));
    CHECK_REFUSAL(cmd, 1, NULL, want, 1);
    if (!test_shared_available()) return;
    snprintf(cmd, sizeof cmd, "%s record --db %s --model %s --prompt Once --steps 2", test_bin(), db,
             test_stories_model());
    CHECK_REFUSAL(cmd, 1, NULL, want, 1);
}

/* Swap two tables' root pages with writable_schema (the old pages read
 * first: an UPDATE reading sqlite_schema as it changes would give both one). */
static void swap_roots(const char *db, const char *a, const char *b) {
    char sql[1024];
    snprintf(sql, sizeof sql, "CREATE TEMP TABLE r AS SELECT name, rootpage FROM main.sqlite_schema;"
             " PRAGMA writable_schema=ON; UPDATE main.sqlite_schema SET rootpage = CASE name WHEN '%s' THEN"
             " (SELECT rootpage FROM r WHERE name = '%s') ELSE (SELECT rootpage FROM r WHERE name = '%s') END"
             " WHERE name IN ('%s', '%s')", a, b, a, a, b);
    test_db_exec(db, sql);
}

/* Swapping two tables' root pages with writable_schema passed the text
 * comparison: readers read the wrong table and record wrote into it. */
TEST(store_accept_swapped_root_pages_are_refused) {
    char db[1024], good[1024], cmd[4096];
    snprintf(db, sizeof db, "%s", test_tmp("accept_roots.db"));
    snprintf(good, sizeof good, "%s", test_tmp("accept_roots_src.db"));
    test_db_record(db, 2, 2, 6);
    test_db_record(good, 2, 2, 6);
    swap_roots(db, "runs", "head_totals");
    const char *want = "does not hold its own rows";
    expect_open_refused(db, STORE_WRITE, want);
    expect_open_refused(db, STORE_READ, want);
    snprintf(cmd, sizeof cmd, "%s runs --db %s", test_bin(), db);
    CHECK_REFUSAL(cmd, 1, NULL, want, 1);
    snprintf(cmd, sizeof cmd, "%s merge --out %s %s", test_bin(), db, good);
    CHECK_REFUSAL(cmd, 1, NULL, want, 1);
    refused_as_input_and_by_record(db, "accept_roots_out.db", want);
    /* two tables of the same kind (WITHOUT ROWID) swapped: the first rows' storage classes give it away */
    test_db_record(db, 2, 2, 6);
    swap_roots(db, "tokens", "head_totals");
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

/* The change counter of a file's page 1, or -1. */
static long change_counter(const char *path) {
    long n = 0;
    unsigned char *b = (unsigned char *)test_read_file(path, &n);
    long c = b && n >= 100 ? (long)b[24] << 24 | b[25] << 16 | b[26] << 8 | b[27] : -1;
    free(b);
    return c;
}

/* Issue 53 §1: ahascope files in WAL mode keep tiny change counters, so
 * another ahascope file's hot journal passed the counter rule and SQLite
 * cut a 2-run file to the other file's size (or, as large, overwrote its
 * pages) before anything refused it. Every command that opens the file
 * must refuse it first, say so, leave the file byte for byte, and never
 * advise what would replay it. b_steps sets the other file's size. */
static void foreign_journal_case(int b_steps) {
    char a[1024], b[1024], side[1100], from[1100], cmd[4096];
    snprintf(a, sizeof a, "%s", test_tmp("accept_jsa.db"));
    snprintf(b, sizeof b, "%s", test_tmp("accept_jsb.db"));
    test_db_record(a, 2, 2, 60);
    test_db_exec(a, COPY_RUN_1(2));
    test_db_record(b, 2, 2, b_steps);
    test_db_exec(b, COPY_RUN_1(2) "PRAGMA journal_mode=DELETE");
    killed_writer(b, "PRAGMA cache_size=2; BEGIN; DELETE FROM decision_bits; DELETE FROM tokens;");
    snprintf(from, sizeof from, "%s-journal", b);
    snprintf(side, sizeof side, "%s-journal", a);
    copy_file(from, side);
    long ca = change_counter(a), cb = change_counter(b);
    CHECK_MSG(ca >= 0 && (cb == ca || cb + 1 == ca || cb == ca + 1), "counters %ld and %ld: the old rule would refuse",
              ca, cb);
    long len = 0;
    char *before = test_read_file(a, &len);
    const char *want = "-journal was written for another database";
    expect_open_refused(a, STORE_WRITE, want);
    expect_open_refused(a, STORE_READ, want);
    const char *const cmds[] = {"%s runs --db %s", "%s query --db %s 'SELECT COUNT(*) FROM runs'",
                                "%s merge --out %s %s", "%s export --db %s --run 1 --csv"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(cmd, sizeof cmd, cmds[i], test_bin(), a, b);
        CHECK_REFUSAL(cmd, 1, NULL, want, 1);
        int st = -1;
        char *out = test_runf(&st, "%s 2>&1", cmd);
        CHECK_MSG(out && !strstr(out, "quick_check") && !strstr(out, "open it once for writing"),
                  "%s: advises replaying the journal: %s", cmd, out ? out : "");
        free(out);
    }
    refused_as_input_and_by_record(a, "accept_jsout.db", want);
    if (test_shared_available()) {
        snprintf(cmd, sizeof cmd, "%s eval --db %s --model %s --self 1 --seq-len 4", test_bin(), a,
                 test_stories_model());
        CHECK_REFUSAL(cmd, 1, NULL, want, 1);
        snprintf(cmd, sizeof cmd, "%s eval --from-db %s --model %s", test_bin(), a, test_stories_model());
        CHECK_REFUSAL(cmd, 1, NULL, want, 1);
    }
    CHECK_MSG(same_bytes(a, before, len), "the database changed: a foreign journal was replayed into it");
    free(before);
    unlink(side);
    CHECK_INT(test_db_scalar(a, "SELECT COUNT(*) FROM runs"), 2);
    CHECK_INT(test_db_scalar(a, "SELECT COUNT(*) FROM decisions"), 2 * 60 * 4);
}

TEST(store_accept_a_smaller_files_journal_never_replays) { foreign_journal_case(10); }

/* As large a file (the same runs): its journal restores as many pages. */
TEST(store_accept_a_journal_of_a_file_as_large_never_replays) { foreign_journal_case(60); }

static void put_be32(unsigned char *p, uint32_t v) { p[0] = v >> 24, p[1] = v >> 16 & 255, p[2] = v >> 8 & 255, p[3] = v & 255; }

/* The hot journal SQLite leaves when switching db to WAL mode is cut off
 * after page 1 was written: page 1 as it was in rollback mode (format
 * bytes 1, the counter before), one record, checksummed as pager.c does;
 * tamper, when not negative, changes that byte of the saved page too. */
static void mode_switch_journal(const char *db, int tamper) {
    long n = 0;
    unsigned char *file = (unsigned char *)test_read_file(db, &n);
    CHECK_MSG(file && n >= 4096 && file[18] == 2, "%s: not a WAL-mode database", db);
    if (!file || n < 4096) { free(file); return; }
    uint32_t page = (uint32_t)(file[16] << 8 | file[17]), counter = (uint32_t)change_counter(db);
    size_t jn = 512 + 8 + page;
    unsigned char *j = calloc(1, jn), *rec = j + 512;
    memcpy(j, "\xd9\xd5\x05\xf9\x20\xa1\x63\xd7", 8);
    put_be32(j + 8, 1), put_be32(j + 12, 0x5eed), put_be32(j + 16, (uint32_t)(n / page)), put_be32(j + 20, 512);
    put_be32(j + 24, page);
    put_be32(rec, 1);
    memcpy(rec + 4, file, page);
    rec[4 + 18] = rec[4 + 19] = 1;
    put_be32(rec + 4 + 24, counter - 1), put_be32(rec + 4 + 92, counter - 1);
    if (tamper >= 0) rec[4 + tamper] ^= 1;
    uint32_t sum = 0x5eed;
    for (long i = (long)page - 200; i > 0; i -= 200) sum += rec[4 + i];
    put_be32(rec + 4 + page, sum);
    char side[1100];
    snprintf(side, sizeof side, "%s-journal", db);
    CHECK(test_write_file(side, (const char *)j, (long)jn) == 0);
    free(j);
    free(file);
}

/* A WAL-mode file's own hot journal can only be a switch of its journal
 * mode (page 1, nothing else): it still rolls back, the data intact; the
 * same journal with page 1's contents changed is refused. */
TEST(store_accept_a_mode_switch_journal_rolls_back) {
    char a[1024];
    snprintf(a, sizeof a, "%s", test_tmp("accept_switch.db"));
    test_db_record(a, 2, 2, 20);
    mode_switch_journal(a, -1);
    Err e = {0};
    Store *s = store_open(a, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "its own mode-switch journal: %s", e.msg);
    store_close(s, NULL);
    CHECK_INT(test_db_scalar(a, "SELECT COUNT(*) FROM decisions"), 20 * 4);
    CHECK_INT(test_db_scalar(a, "SELECT quick_check = 'ok' FROM pragma_quick_check"), 1);
    char side[1100];
    snprintf(side, sizeof side, "%s-journal", a);
    CHECK_MSG(access(side, F_OK) != 0, "the journal was not rolled back");
    mode_switch_journal(a, 3000); /* inside page 1's b-tree: not what a mode switch changes */
    long len = 0;
    char *before = test_read_file(a, &len);
    expect_open_refused(a, STORE_WRITE, "it would rewrite a WAL-mode file");
    expect_open_refused(a, STORE_READ, "it would rewrite a WAL-mode file");
    CHECK_MSG(same_bytes(a, before, len), "the refused database changed");
    free(before);
}

/* Issue 53 §5: the root-page probe blamed "its root page was moved" for
 * whatever it found; it says what: a first row that fails to read (a page
 * of another kind, or damaged), a value of a storage class its column never
 * holds, and the -wal it read through when there is one. */
TEST(store_accept_the_root_probe_says_what_it_found) {
    char db[1024];
    snprintf(db, sizeof db, "%s", test_tmp("probe.db"));
    test_db_record(db, 2, 2, 6);
    swap_roots(db, "tokens", "head_totals");
    expect_open_refused(db, STORE_READ, "does not hold its own rows: its first row has ");
    /* a damaged page: the runs table's root page gets a b-tree type SQLite does not know */
    test_db_record(db, 2, 2, 6);
    long root = test_db_scalar(db, "SELECT rootpage FROM sqlite_schema WHERE name = 'runs'");
    long page = test_db_scalar(db, "PRAGMA page_size");
    FILE *f = fopen(db, "r+b");
    CHECK(root > 1 && f && fseek(f, (root - 1) * page, SEEK_SET) == 0 && fputc(0x07, f) != EOF);
    if (f) fclose(f);
    expect_open_refused(db, STORE_READ, "table 'runs' does not hold its own rows: reading its first row fails "
                                        "(database disk image is malformed");
    Err e = {0};
    Store *s = store_open(db, STORE_READ, 200, &e);
    CHECK_MSG(!strstr(e.msg, "root page was moved") && !strstr(e.msg, "-wal"), "%s", e.msg);
    store_close(s, NULL);
    /* read through a -wal (here the file's own, left by a killed writer): the probe names it */
    test_db_record(db, 2, 2, 6);
    swap_roots(db, "tokens", "head_totals");
    killed_writer(db, "UPDATE runs SET prompt = 'y'");
    expect_open_refused(db, STORE_READ, "its pages were read through its -wal");
}
