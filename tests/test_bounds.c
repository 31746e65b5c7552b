/* test_bounds.c — bounds on what the program reads (issue 53 §4, §5).
 *
 * Each input here used to cost memory in proportion to the file, or be
 * taken silently when malformed, or be refused naming the wrong cause: a
 * task file's lines, prompt and items, a query's JSON row, train's short
 * data, bench --long's scratch, head tables and vocabularies. Bounds are
 * checked just past them (a refusal in one line naming the file and the
 * line) and memory through /usr/bin/time's peak RSS, never by timing.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/tasks/tasks.h"
#include "store_fixture.h"
#include "test.h"

/* A task line whose prompt is n bytes of 'a' (the needle at 1, the
 * question at 2) into f. */
static void put_item(FILE *f, long n) {
    fputs("{\"prompt\": \"", f);
    for (long i = 0; i < n; i++) fputc('a', f);
    fputs("\", \"answer\": \"b\", \"needle_pos\": [1], \"question_pos\": 2}\n", f);
}

/* A file of items prompts n bytes each at path. */
static void write_items(const char *path, int items, long n) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (int i = 0; f && i < items; i++) put_item(f, n);
    if (f) fclose(f);
}

/* Run cmd under /usr/bin/time (ASan's quarantine of freed blocks kept
 * small, so the peak measures what the program holds); its exit status,
 * its peak RSS in KB into *kb and its stderr's first line into line. */
static int run_peak(const char *cmd, long *kb, char *line, size_t cap) {
    const char *err = test_tmp("bounds_err.txt");
    char full[2400];
    snprintf(full, sizeof full, "ASAN_OPTIONS=quarantine_size_mb=1:detect_leaks=0 /usr/bin/time -f 'PEAK %%M' -o '%s.rss' "
             "%s </dev/null >/dev/null 2>'%s'", err, cmd, err);
    int st = system(full);
    char rss[1200];
    snprintf(rss, sizeof rss, "%s.rss", err);
    FILE *f = fopen(rss, "r");
    *kb = -1, line[0] = 0;
    char buf[256];
    while (f && fgets(buf, sizeof buf, f))
        if (!strncmp(buf, "PEAK ", 5)) *kb = atol(buf + 5);
    if (f) fclose(f);
    if ((f = fopen(err, "r"))) {
        if (!fgets(line, (int)cap, f)) line[0] = 0;
        fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Malformed lines cJSON alone takes (or cuts short), each refused by
 * line number; an escaped backslash before "u0000" is plain text. */
TEST(bounds_task_lines_refused_by_line) {
    static const struct { const char *text, *needle; } t[] = {
        {"\xef\xbb\xbf{\"prompt\": \"a b c\", \"answer\": \"b\", \"needle_pos\": [1], \"question_pos\": 1}\n",
         "line 1 begins with a byte-order mark"},
        {"\n{\"prompt\": \"a\\u0000 b c\", \"answer\": \"b\", \"needle_pos\": [1], \"question_pos\": 1}\n",
         "line 2: a string holds \\u0000"},
        {"{\"prompt\": \"a b c\", \"answer\": \"b\", \"needle_pos\": [1], \"question_pos\": 1} x\n", "line 1: text after"},
        {"{\"prompt\": \"a b c\", \"answer\": \"b\", \"needle_pos\": [1], \"question_pos\": 1}{\"prompt\": \"d\"}\n",
         "line 1: text after"},
        {"{\"prompt\": \"a b c\", \"answer\": \"b\", \"needle_pos\": [1], \"question_pos\": 1, \"answer\": \"c\"}\n",
         "line 1: key \"answer\" appears twice"},
        {"{\"prompt\": \"a b c\", \"answer\": \"b\", \"needle_pos\": [1, 9], \"question_pos\": 2, \"n_tokens\": 9}\n",
         "line 1: needle_pos 9 is past the prompt (n_tokens: 9)"},
        {"{\"prompt\": \"a b c\", \"answer\": \"b\", \"needle_pos\": [1], \"question_pos\": 7}\n",
         "line 1: question_pos 7 is past the prompt (the prompt's bytes: 7)"},
    };
    const char *path = test_tmp("bounds_lines.jsonl");
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        test_write_file(path, t[i].text, (long)strlen(t[i].text));
        TaskSet s;
        TaskItem it;
        Err e = {0};
        CHECK_MSG(tasks_read_jsonl(path, &s, &e) != 0, "case %zu accepted", i);
        CHECK_MSG(strstr(e.msg, path) && strstr(e.msg, t[i].needle), "case %zu: %s", i, e.msg);
        e.msg[0] = 0;
        CHECK_MSG(tasks_read_item(path, 0, &it, &e) != 0 && strstr(e.msg, t[i].needle), "case %zu one item: %s", i,
                  e.msg);
    }
    const char *ok = "{\"prompt\": \"a\\\\u0000 b\", \"answer\": \"b\", \"needle_pos\": [1], \"question_pos\": 1}\n";
    test_write_file(path, ok, (long)strlen(ok));
    TaskSet s;
    Err e = {0};
    CHECK_MSG(tasks_read_jsonl(path, &s, &e) == 0, "%s", e.msg);
    CHECK_MSG(s.n == 1 && !strcmp(s.item[0].prompt, "a\\u0000 b"), "%s", s.n ? s.item[0].prompt : "");
    tasks_free(&s);
}

/* A prompt one byte past --prompt-file's 16 MiB, and a line past the line
 * bound, each refused in one line naming the file and the line. */
TEST(bounds_task_prompt_past_16_mib_refused) {
    const char *path = test_tmp("bounds_big.jsonl");
    char cmd[2400];
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    put_item(f, 10);
    put_item(f, TASK_PROMPT_MAX + 1L);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s tui --tasks '%s' --item 1 </dev/null", test_bin(), path);
    CHECK_REFUSAL(cmd, 1, "ahascope tui: ", "line 2: the prompt is 16777217 bytes, past the 16 MiB", 1);
    write_items(path, 1, TASK_LINE_MAX + 1L);
    snprintf(cmd, sizeof cmd, "%s tui --tasks '%s' </dev/null", test_bin(), path);
    CHECK_REFUSAL(cmd, 1, "ahascope tui: ", "line 1 is longer than 33 MiB", 1);
    unlink(path);
}

/* `tui --tasks F --item K` on 64 MB of 4 MB items: the item opens (the
 * refusal is the missing terminal, after the item) in a peak RSS under 3
 * items' bytes above a one-line file's; it used to parse the whole file. */
TEST(bounds_task_item_opens_in_memory_of_one_item) {
    if (access("/usr/bin/time", X_OK)) {
        test_skip("no /usr/bin/time to measure peak memory");
        return;
    }
    const char *small = test_tmp("bounds_small.jsonl"), *big = test_tmp("bounds_64mb.jsonl");
    const long item = 4L << 20;
    write_items(small, 1, 10);
    write_items(big, 16, item);
    char cmd[2400], line[512];
    long base, peak;
    snprintf(cmd, sizeof cmd, "%s tui --tasks '%s'", test_bin(), small);
    CHECK_INT(run_peak(cmd, &base, line, sizeof line), 1);
    snprintf(cmd, sizeof cmd, "%s tui --tasks '%s' --item 15", test_bin(), big);
    CHECK_INT(run_peak(cmd, &peak, line, sizeof line), 1);
    CHECK_MSG(strstr(line, "needs a terminal"), "item 15 did not open: %s", line);
    CHECK_MSG(base > 0 && peak > 0 && peak - base < 3 * item / 1024, "peak %ld KB, a one-line file's %ld KB", peak,
              base);
    snprintf(cmd, sizeof cmd, "%s tui --tasks '%s' --item 16", test_bin(), big);
    CHECK_INT(run_peak(cmd, &peak, line, sizeof line), 1);
    CHECK_MSG(strstr(line, big) && strstr(line, "no item 16: the file holds 16"), "%s", line);
    unlink(big);
}

/* eval --tasks checks each item against the context before encoding it:
 * a prompt whose n_tokens or bytes already pass it is refused naming the
 * item (it used to encode every prompt, 32 bytes an input byte, first). */
TEST(bounds_task_context_checked_before_encoding) {
    SKIP_UNLESS_SHARED();
    const char *path = test_tmp("bounds_ctx.jsonl");
    char cmd[2400];
    write_items(path, 1, 200000);
    snprintf(cmd, sizeof cmd, "%s eval --tasks '%s' --policy local --window 8", test_bin(), path);
    CHECK_REFUSAL(cmd, 1, "ahascope eval: ", "item 1's prompt is 200000 bytes, more than the model's context", 1);
    const char *t = "{\"prompt\": \"a b c\", \"answer\": \"b\", \"needle_pos\": [1], \"question_pos\": 2, \"n_tokens\": 9000}\n";
    test_write_file(path, t, (long)strlen(t));
    CHECK_REFUSAL(cmd, 1, "ahascope eval: ", "item 1 gives n_tokens 9000, past the model's context (512)", 1);
}

/* Errors that named the wrong cause: an empty path after duo: (and the
 * other table forms) gave ": cannot open"; a table beginning with a
 * byte-order mark gave "'<invisible>0.000' is not a number". */
TEST(bounds_head_table_errors_name_the_cause) {
    char cmd[2400];
    static const char *forms[] = {"duo:", "retrieval-json:", "moa:", "calib:"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s trace --policy static --static-heads %s --budget 2 --prompt a --steps 1",
                 test_bin(), forms[i]);
        CHECK_REFUSAL(cmd, 2, "ahascope trace: ", "names no file", 1);
    }
    SKIP_UNLESS_SHARED();
    const char *tsv = test_tmp("bounds_bom.tsv");
    test_write_file(tsv, "\xef\xbb\xbf" "0.000\t1\n", 11);
    snprintf(cmd, sizeof cmd, "%s trace --policy static --static-heads duo:%s --budget 2 --prompt a --steps 1",
             test_bin(), tsv);
    CHECK_REFUSAL(cmd, 1, "ahascope trace: ", "bounds_bom.tsv: line 1 begins with a byte-order mark", 1);
}

/* One huge `query --json` row used to be built whole (2.3 GB, 40 s past
 * --timeout 10): past 64 MiB of values it is refused in one line, the rows
 * before it printed and closed. */
TEST(bounds_query_json_row_bounded) {
    const char *db = test_tmp("bounds_query.db");
    test_db_record(db, 2, 2, 2);
    char cmd[2400];
    long kb;
    char line[512];
    snprintf(cmd, sizeof cmd, "%s query --db '%s' --json --timeout 10 "
             "\"SELECT 1 AS a, 2 AS b UNION ALL SELECT zeroblob(40000000), zeroblob(40000000)\"", test_bin(), db);
    CHECK_INT(run_peak(cmd, &kb, line, sizeof line), 1);
    CHECK_MSG(strstr(line, "ahascope query: row 2 holds more than 64 MiB"), "%s", line);
    CHECK_MSG(kb < 400 * 1024, "peak %ld KB", kb);
    char *out = test_runf(NULL, "%s query --db '%s' --json \"SELECT 1 AS a UNION ALL SELECT zeroblob(80000000)\" "
                          "2>/dev/null", test_bin(), db);
    CHECK_MSG(out && !strcmp(out, "[{\"a\":1}]\n"), "%.80s", out ? out : "");
    free(out);
}

/* train --from-scratch made its buffers for the whole context (580 MB at
 * these dims, GBs at real ones) before finding the data too short for one
 * sequence: the data is checked first. */
TEST(bounds_train_scratch_checks_the_data_first) {
    if (access("/usr/bin/time", X_OK)) {
        test_skip("no /usr/bin/time to measure peak memory");
        return;
    }
    const char *data = test_tmp("bounds_short.txt"), *out = test_tmp("bounds_scratch.bin");
    test_write_file(data, "once upon a time\n", 17);
    char cmd[2400], line[512];
    long kb;
    snprintf(cmd, sizeof cmd, "%s train --from-scratch --dims 64,128,2,2,2,0,2048 --data '%s' --out '%s' --steps 1",
             test_bin(), data, out);
    CHECK_INT(run_peak(cmd, &kb, line, sizeof line), 1);
    CHECK_MSG(strstr(line, "bounds_short.txt: 15 tokens, fewer than one sequence of 2048"), "%s", line);
    CHECK_MSG(kb > 0 && kb < 150 * 1024, "peak %ld KB before the refusal", kb);
}

/* Entries of dir other than . and .., and the first into first. */
static int dir_entries(const char *dir, char *first, size_t cap) {
    DIR *d = opendir(dir);
    int n = 0;
    first[0] = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && n++ == 0) snprintf(first, cap, "%s", de->d_name);
    if (d) closedir(d);
    return n;
}

/* bench --long --synthetic stopped by SIGINT used to leave its scratch
 * database in $TMPDIR for good: it dies of the signal with the directory
 * gone; and a dead run's directory (its PID gone) is removed by the next
 * run, a live one's kept. */
TEST(bounds_bench_long_scratch_gone_on_ctrl_c_and_after_a_dead_run) {
    char tmp[1200], name[300], p[1600];
    snprintf(tmp, sizeof tmp, "%s", test_tmp("bounds_benchtmp"));
    mkdir(tmp, 0755);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TMPDIR", tmp, 1);
        freopen("/dev/null", "w", stdout);
        execl(test_bin(), test_bin(), "bench", "--long", "--synthetic", "--dims", "64,128,2,8,4,64,8192", "--long-tokens",
              "8192", "--runs", "1", (char *)NULL);
        _exit(127);
    }
    int seen = 0, st = 0;
    for (int i = 0; i < 600 && !seen; i++, usleep(50000)) { /* until the scratch database exists (at most 30 s) */
        if (dir_entries(tmp, name, sizeof name) != 1) continue;
        snprintf(p, sizeof p, "%s/%s/synthetic.db", tmp, name);
        seen = access(p, F_OK) == 0;
    }
    CHECK_MSG(seen, "no scratch database appeared in %s", tmp);
    usleep(200000);
    kill(pid, SIGINT);
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "status %d: did not die of SIGINT", st);
    CHECK_MSG(dir_entries(tmp, name, sizeof name) == 0, "%s left in %s", name, tmp);
    /* a dead run's directory (a PID no process has) and a live one's (this runner's) */
    snprintf(p, sizeof p, "%s/ahascope-long-2147483000-AbCdEf", tmp);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/ahascope-long-2147483000-AbCdEf/synthetic.db", tmp);
    test_write_file(p, "x", 1);
    snprintf(p, sizeof p, "%s/ahascope-long-%ld-live00", tmp, (long)getpid());
    mkdir(p, 0755);
    char *out = test_runf(&st, "TMPDIR='%s' %s bench --long --synthetic --dims 64,128,2,8,4,64,512 --long-tokens 40 "
                          "--runs 1 2>&1", tmp, test_bin());
    CHECK_MSG(st == 0, "%s", out ? out : "");
    free(out);
    CHECK_MSG(dir_entries(tmp, name, sizeof name) == 1 && strstr(name, "-live00"), "left: %s", name);
    rmdir(p);
}

/* A --vocab-file word that cannot be a piece was refused naming no file
 * ("vocabulary word 2 holds control byte 0x01"): the file is named. */
TEST(bounds_vocab_file_errors_name_the_file) {
    const char *voc = test_tmp("bounds_vocab.txt"), *data = test_tmp("bounds_vdata.txt");
    test_write_file(voc, "cat\n\x01" "dog\n", 9);
    test_write_file(data, "once upon a time\n", 17);
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "%s train --from-scratch --vocab-file '%s' --data '%s' --out '%s' --dims 64,128,2,2,2,0,64 "
             "--steps 1", test_bin(), voc, data, test_tmp("bounds_vmodel.bin"));
    CHECK_REFUSAL(cmd, 1, "ahascope train: ", "bounds_vocab.txt: vocabulary word 2 holds control byte 0x01", 1);
}
