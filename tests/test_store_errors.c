/* test_store_errors.c — every refusal to open or read a database names its cause.
 *
 * Every refusal says its cause. A database that
 * cannot be opened or read names the file and the real reason (a symlink
 * loop, a path too long, a lock and how long it was waited for, a hot
 * journal, an unusable -wal file, a bad page size, a full disk), never an
 * empty or uninitialised message nor SQLite's "not an error"; and the
 * smaller refusals of the same review: an in-memory --db, a router seed out
 * of range, a prompt longer than the context cut by --steps. */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/clock.h"
#include "store/store.h"
#include "test.h"
#include "tests/store_fixture.h"

/* A database of ours with one finished run of n steps (2 layers, 2 heads),
 * recorded with commit_every steps per transaction. */
static Store *open_with_run(const char *path, int n, int commit_every, int64_t limit, int64_t *run, int *write_rc) {
    test_db_fresh(path);
    Err e;
    Store *s = store_open(path, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "open: %s", e.msg);
    if (!s) return NULL;
    store_set_commit_every(s, commit_every);
    StoreRunInfo r;
    test_run_info(&r, 2, 2);
    CHECK(store_run_begin(s, &r, &e) == 0);
    *run = r.run_id;
    CHECK(store_set_limit(s, limit, &e) == 0);
    *write_rc = 0;
    for (int p = 0; p < n && *write_rc == 0; p++) {
        StepTrace *t = trace_new(2, 2);
        t->pos = p, t->token = p + 1, t->n_kv_heads = 2;
        *write_rc = store_write_step(s, r.run_id, t, NULL, &e);
        trace_free(t);
    }
    return s;
}

static void make_db_n(const char *path, int n) {
    int64_t run = 0;
    int rc;
    Store *s = open_with_run(path, n, 1, 0, &run, &rc);
    Err e;
    CHECK(s && rc == 0 && store_run_end(s, run, "done", &e) == 0);
    CHECK(store_close(s, &e) == 0);
}

static void make_db(const char *path) { make_db_n(path, 3); }

/* store_open into an Err full of junk: whatever fails must leave one
 * printable line holding want, without a newline. */
static void check_open_says(const char *path, StoreMode mode, const char *want) {
    Err e;
    memset(&e, 5, sizeof e);
    Store *s = store_open(path, mode, 200, &e);
    CHECK_MSG(s == NULL, "%s opened", path);
    if (s) { store_close(s, NULL); return; }
    size_t n = strnlen(e.msg, sizeof e.msg);
    CHECK_MSG(n > 0 && n < sizeof e.msg, "the message is empty or unterminated");
    int printable = 1;
    for (size_t i = 0; i < n; i++) printable &= (unsigned char)e.msg[i] >= 0x20;
    CHECK_MSG(printable && strstr(e.msg, want), "want '%s' in: %.200s", want, e.msg);
}

TEST(store_errors_stat_failures_fill_the_error) {
    char loop[1100], lng[5000];
    snprintf(loop, sizeof loop, "%s", test_tmp("loop.db"));
    unlink(loop);
    CHECK(symlink("loop.db", loop) == 0);
    check_open_says(loop, STORE_READ, strerror(ELOOP));
    check_open_says(loop, STORE_WRITE, strerror(ELOOP));
    memset(lng, 'a', sizeof lng - 1), lng[sizeof lng - 1] = 0;
    check_open_says(lng, STORE_READ, strerror(ENAMETOOLONG));
    const char *cmds[] = {"runs --db %s", "export --db %s --run 1 --json", "query --db %s 'SELECT 1'",
                          "compare --db %s --run 1"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char sub[1400], cmd[1600];
        snprintf(sub, sizeof sub, cmds[i], loop);
        snprintf(cmd, sizeof cmd, "%s %s", test_bin(), sub);
        CHECK_REFUSAL(cmd, 1, "ahascope ", "loop.db: cannot read the database: Too many levels of symbolic links", 1);
    }
    unlink(loop);
}

TEST(store_errors_newline_in_a_path_stays_on_one_line) {
    char p[1100];
    snprintf(p, sizeof p, "%s", test_tmp("new\nline.db"));
    unlink(p);
    check_open_says(p, STORE_READ, "new\\nline.db");
}

TEST(store_errors_name_the_real_cause_not_not_an_error) {
    char db[1100], side[1200], cmd[2400];
    /* a directory where the -wal file should be */
    snprintf(db, sizeof db, "%s", test_tmp("waldir.db"));
    make_db(db);
    snprintf(side, sizeof side, "%s-wal", db);
    CHECK(mkdir(side, 0755) == 0);
    snprintf(cmd, sizeof cmd, "%s runs --db %s", test_bin(), db);
    CHECK_REFUSAL(cmd, 1, "ahascope runs: ", "waldir.db-wal: it is not a regular file", 1);
    rmdir(side);
    /* a page size SQLite does not accept */
    snprintf(db, sizeof db, "%s", test_tmp("page.db"));
    make_db(db);
    FILE *f = fopen(db, "r+b");
    CHECK(f && fseek(f, 16, SEEK_SET) == 0 && fputc(3, f) != EOF && fputc(0, f) != EOF);
    if (f) fclose(f);
    snprintf(cmd, sizeof cmd, "%s runs --db %s", test_bin(), db);
    CHECK_REFUSAL(cmd, 1, "ahascope runs: ", "invalid page size 768", 1);
    /* a hot journal: a rollback-mode file with its journal left behind */
    snprintf(db, sizeof db, "%s", test_tmp("hot.db"));
    make_db_n(db, 400); /* enough pages that a one-page cache spills them into the file mid-transaction */
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, "PRAGMA journal_mode=DELETE; PRAGMA cache_size=1; BEGIN; DELETE FROM decision_bits; DELETE FROM tokens;",
                       NULL, NULL, NULL) == SQLITE_OK);
    char journal[1200];
    snprintf(journal, sizeof journal, "%s-journal", db);
    long n = 0, jn = 0;
    char *body = test_read_file(db, &n), *jbody = test_read_file(journal, &jn);
    CHECK(body && jbody && jn > 0);
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(h);
    if (body && jbody) test_write_file(db, body, n), test_write_file(journal, jbody, jn);
    free(body), free(jbody);
    snprintf(cmd, sizeof cmd, "%s runs --db %s", test_bin(), db);
    CHECK_REFUSAL(cmd, 1, "ahascope runs: ", "hot journal left by a crashed writer", 1);
    unlink(journal);
}

/* Both readers and writers wait STORE_BUSY_MS (2 s, as the documents say)
 * for a lock, then say so. */
TEST(store_errors_a_lock_is_waited_2_s_and_named) {
    CHECK_INT(STORE_BUSY_MS, 2000);
    char db[1100], in[1100], cmd[2400];
    snprintf(db, sizeof db, "%s", test_tmp("locked.db"));
    snprintf(in, sizeof in, "%s", test_tmp("locked_in.db"));
    make_db(db);
    make_db(in);
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, "PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE; DELETE FROM decision_bits;", NULL, NULL, NULL) ==
          SQLITE_OK);
    snprintf(cmd, sizeof cmd, "%s runs --db %s", test_bin(), db);
    CHECK_REFUSAL(cmd, 1, "ahascope runs: ", "locked.db: cannot read the database: the database is locked by another "
                                             "process (waited 2 s)", 1);
    double t0 = clock_now();
    snprintf(cmd, sizeof cmd, "%s merge --out %s %s", test_bin(), db, in);
    CHECK_REFUSAL(cmd, 1, "ahascope merge: ", "locked by another process (waited 2 s)", 1);
    double waited = clock_now() - t0;
    CHECK_MSG(waited > 1.5 && waited < 4.5, "the writer waited %.1f s", waited);
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(h);
}

/* A real full disk (a 256 KiB tmpfs, when this process may mount one):
 * a new file says "disk full", not "disk I/O error"; so does a run that
 * fills it. */
TEST(store_errors_a_new_file_on_a_full_disk_says_disk_full) {
    char mnt[1100], cmd[2400];
    snprintf(mnt, sizeof mnt, "%s", test_tmp("tinyfs"));
    mkdir(mnt, 0755);
    int st;
    /* 8 KiB left: SQLite writes the header, then fails with an I/O error */
    free(test_runf(&st, "mount -t tmpfs -o size=256k tmpfs %s 2>/dev/null && dd if=/dev/zero of=%s/fill bs=4k "
                        "count=62 2>/dev/null", mnt, mnt));
    char fill[1200];
    snprintf(fill, sizeof fill, "%s/fill", mnt);
    if (access(fill, F_OK) != 0) { test_skip("cannot mount a tmpfs here"); rmdir(mnt); return; }
    SKIP_UNLESS_SHARED();
    snprintf(cmd, sizeof cmd, "%s merge --out %s/new.db %s", test_bin(), mnt, test_tmp("locked_in.db"));
    make_db(test_tmp("locked_in.db"));
    CHECK_REFUSAL(cmd, 1, "ahascope merge: ", "new.db: cannot write the database: disk full", 1);
    unlink(fill);
    free(test_runf(&st, "dd if=/dev/zero of=%s bs=4k count=27 2>/dev/null", fill)); /* room for the schema (version 8, canary lists) and a run row */
    char *out = test_runf(&st, "%s record --db %s/run.db --model %s --tokenizer %s --prompt Once --steps 512 "
                               "--profile --threads 1 2>&1 >/dev/null", test_bin(), mnt, test_stories_model(),
                          test_stories_tokenizer());
    CHECK_MSG(st != 0 && out && strstr(out, "disk full"), "%s", out ? out : "");
    free(out);
    /* With not one page left even the run's final status cannot be
     * written; readers then see its dead writer's run as interrupted. */
    out = test_runf(&st, "%s runs --db %s/run.db --csv", test_bin(), mnt);
    CHECK_MSG(st == 0 && out && (strstr(out, "failed") || strstr(out, "interrupted")), "%s", out ? out : "");
    free(out);
    free(test_runf(&st, "umount %s", mnt));
    rmdir(mnt);
}

TEST(store_errors_in_memory_and_uri_names_are_refused) {
    SKIP_UNLESS_SHARED();
    const char *bad[] = {":memory:", "file:x.db", "file::memory:?cache=shared"};
    for (int i = 0; i < 3; i++) {
        check_open_says(bad[i], STORE_WRITE, "not a database file name");
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "%s record --db '%s' --model %s --tokenizer %s --prompt x --steps 2", test_bin(),
                 bad[i], test_stories_model(), test_stories_tokenizer());
        CHECK_REFUSAL(cmd, 2, "ahascope record: ", "not a database file name", 1);
    }
    check_open_says("", STORE_WRITE, "no database file given");
}

TEST(store_errors_router_seed_out_of_range_is_refused) {
    SKIP_UNLESS_SHARED();
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s generate --model %s --tokenizer %s --prompt x --steps 2 --routers "
             "random:99999999999999999999999", test_bin(), test_stories_model(), test_stories_tokenizer());
    CHECK_REFUSAL(cmd, 2, "ahascope generate: ", "out of range (0 to 18446744073709551615)", 1);
}

/* A prompt longer than the whole context is cut by --steps N, as the
 * documents say, with the warning; without --steps it is refused. */
TEST(store_errors_a_prompt_past_the_context_is_cut_by_steps) {
    SKIP_UNLESS_SHARED();
    char prompt[1100];
    snprintf(prompt, sizeof prompt, "%s", test_tmp("huge_prompt.txt"));
    size_t n = 0, cap = 20000;
    char *text = malloc(cap);
    while (text && n + 30 < cap) n += (size_t)snprintf(text + n, cap - n, "Once upon a time there was a cat. ");
    CHECK(text && test_write_file(prompt, text, (long)n) == 0);
    free(text);
    int st;
    char *out = test_runf(&st, "%s generate --model %s --tokenizer %s --prompt-file %s --steps 20 --temperature 0 "
                               "--ids 2>&1", test_bin(), test_stories_model(), test_stories_tokenizer(), prompt);
    CHECK_MSG(st == 0 && out && strstr(out, "warning: the prompt is") && strstr(out, "--steps 20 feeds only its first 21"),
              "%s", out ? out : "");
    free(out);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s generate --model %s --tokenizer %s --prompt-file %s", test_bin(), test_stories_model(),
             test_stories_tokenizer(), prompt);
    CHECK_REFUSAL(cmd, 1, "ahascope generate: ", "but the model's context is 512", 1);
}
