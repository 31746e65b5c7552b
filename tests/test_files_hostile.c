/* test_files_hostile.c — hostile files around the loaders and writers.
 *
 * Every writer goes through FileAtomic: a planted OUT.tmp symlink (the
 * name the old writers used) must neither be followed nor left behind, and
 * the output must still appear whole. Every reader goes through
 * file_open_regular: a FIFO given where a file is read is refused by name
 * at once, never waited on (the CLI runs under `timeout` so a regression
 * fails instead of hanging the suite).
 */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/files.h"
#include "engine/routers.h"
#include "engine/safetensors.h"
#include "engine/tokenize/tokenize.h"
#include "test.h"


/* A scratch directory of its own, so leftover temporaries can be counted. */
static const char *fresh_dir(const char *name) {
    const char *d = test_tmp(name);
    mkdir(d, 0755);
    return d;
}

/* Regular files in dir whose names end in ".tmp" (the planted ones are
 * symlinks). */
static int stray_tmps(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        char p[1400];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (len > 4 && !strcmp(de->d_name + len - 4, ".tmp") && lstat(p, &st) == 0 && S_ISREG(st.st_mode)) n++;
    }
    if (d) closedir(d);
    return n;
}

/* Plant OUT.tmp as a symlink to a victim file holding "VICTIM". */
static void plant(const char *out, char *victim, size_t cap) {
    char link[4200];
    snprintf(victim, cap, "%s.victim", out);
    snprintf(link, sizeof link, "%s.tmp", out);
    CHECK(test_write_file(victim, "VICTIM", 6) == 0);
    unlink(link);
    CHECK(symlink(victim, link) == 0);
}

static void expect_victim_intact(const char *victim, const char *what) {
    long n = 0;
    char *v = test_read_file(victim, &n);
    CHECK_MSG(v && n == 6 && !memcmp(v, "VICTIM", 6), "%s overwrote the planted symlink's target: %.40s", what,
              v ? v : "(gone)");
    free(v);
}

/* The first bytes of path start with `head`. */
static int starts_with(const char *path, const char *head) {
    long n = 0;
    char *s = test_read_file(path, &n);
    int ok = s && n >= (long)strlen(head) && !memcmp(s, head, strlen(head));
    free(s);
    return ok;
}

TEST(files_atomic_open_ignores_a_planted_tmp_symlink) {
    const char *dir = fresh_dir("atomic-unit");
    char out[1100], victim[1200];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    plant(out, victim, sizeof victim);
    FileAtomic a;
    Err e;
    CHECK(file_atomic_open(&a, out, &e) != NULL);
    if (a.f) fputs("hello\n", a.f);
    CHECK(file_atomic_commit(&a, &e) == 0);
    expect_victim_intact(victim, "file_atomic_commit");
    CHECK(starts_with(out, "hello\n"));
    CHECK_INT(stray_tmps(dir), 0);
    /* aborted: the old output stays and no temporary is left */
    CHECK(file_atomic_open(&a, out, &e) != NULL);
    if (a.f) fputs("half", a.f);
    file_atomic_abort(&a);
    CHECK(starts_with(out, "hello\n"));
    CHECK_INT(stray_tmps(dir), 0);
    /* refused before anything is created */
    char missing[1200];
    snprintf(missing, sizeof missing, "%s/no-such-dir/x", dir);
    CHECK(file_atomic_open(&a, missing, &e) == NULL && strstr(e.msg, "no such directory"));
}

/* Run one writer with OUT.tmp planted; the victim stays, OUT starts with
 * `head`, and no temporary is left beside it. */
static void check_writer(const char *what, const char *dir, const char *out, const char *fmt_cmd, const char *head) {
    char victim[1200], cmd[8192];
    plant(out, victim, sizeof victim);
    snprintf(cmd, sizeof cmd, fmt_cmd, test_bin(), out);
    int st;
    char *o = test_run(cmd, &st);
    CHECK_MSG(st == 0, "%s: status %d: %s", what, st, o ? o : "");
    free(o);
    expect_victim_intact(victim, what);
    CHECK_MSG(starts_with(out, head), "%s: %s does not start as expected", what, out);
    CHECK_MSG(stray_tmps(dir) == 0, "%s left a temporary in %s", what, dir);
}

TEST(files_every_cli_writer_ignores_a_planted_tmp_symlink) {
    SKIP_UNLESS_SHARED();
    const char *dir = fresh_dir("atomic-cli");
    char db[1100], out[1100], cmd[4096];
    snprintf(db, sizeof db, "%s/runs.db", dir);
    int st;
    free(test_runf(&st, "%s record --db %s --model %s --prompt 'Once upon a time' --steps 12 --window 8 --profile "
                        ">/dev/null 2>&1", test_bin(), db, test_stories_model()));
    CHECK_INT(st, 0);

    snprintf(out, sizeof out, "%s/ex.json", dir);
    snprintf(cmd, sizeof cmd, "%%s export --db %s --run 1 --json --out %%s 2>&1", db);
    check_writer("export", dir, out, cmd, "{");

    snprintf(out, sizeof out, "%s/heads.txt", dir);
    snprintf(cmd, sizeof cmd, "%%s calibrate --db %s --run 1 --budget 3 --out %%s 2>&1", db);
    check_writer("calibrate", dir, out, cmd, "# static heads");

    snprintf(out, sizeof out, "%s/r.safetensors", dir);
    snprintf(cmd, sizeof cmd, "%%s train --model %s --window 8 --steps 2 --self 8 --seq-len 16 --batch 2 --out %%s 2>&1",
             test_stories_model());
    check_writer("train --out", dir, out, cmd, "");
    StFile f;
    Err e;
    CHECK_MSG(st_open(&f, out, &e) == 0, "%s", e.msg);
    st_close(&f);

    snprintf(out, sizeof out, "%s/fit.safetensors", dir);
    snprintf(cmd, sizeof cmd, "%%s fit --model %s --window 4 --self 4 --seq-len 16 --out %%s 2>&1", test_stories_model());
    check_writer("fit --out", dir, out, cmd, "");
    CHECK_MSG(st_open(&f, out, &e) == 0, "%s", e.msg);
    st_close(&f);

    char routers[1100];
    snprintf(routers, sizeof routers, "%s/r-all.safetensors", dir);
    snprintf(out, sizeof out, "%s/m.bin", dir);
    snprintf(cmd, sizeof cmd, "%%s train --model %s --window 8 --steps 1 --self 8 --seq-len 16 --batch 2 --train all "
                              "--out %s --out-model %%s 2>&1", test_stories_model(), routers);
    check_writer("train --out-model", dir, out, cmd, "");
    free(test_runf(&st, "%s info --model %s >/dev/null 2>&1", test_bin(), out));
    CHECK_MSG(st == 0, "the model train wrote does not load (%d)", st);

    char hf[1000];
    snprintf(hf, sizeof hf, "%s/hf", dir);
    mkdir(hf, 0755);
    snprintf(out, sizeof out, "%s/config.json", hf);
    snprintf(cmd, sizeof cmd, "%%s convert --to hf --model %s --out %s 2>&1; : %%s", test_stories_model(), hf);
    check_writer("convert", hf, out, cmd, "{");
}

/* The CLI with args, under `timeout 5`; it must fail at once with one line
 * naming path as a FIFO. */
static void expect_fifo_refused(const char *args, const char *path) {
    int st;
    char *o = test_runf(&st, "timeout 5 %s %s 2>&1 </dev/null", test_bin(), args);
    CHECK_MSG(st != 124 * 256 && st != 124, "blocked on a FIFO: %s", args);
    CHECK_MSG(st != 0 && o && strstr(o, path) && strstr(o, "FIFO") && strchr(o, '\n') == o + strlen(o) - 1,
              "%s: status %d: %s", args, st, o ? o : "");
    free(o);
}

TEST(files_fifo_inputs_are_refused_without_blocking) {
    SKIP_UNLESS_SHARED();
    char fifo[1100], a[4096];
    snprintf(fifo, sizeof fifo, "%s", test_tmp("input.fifo"));
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    const char *m = test_stories_model();
    snprintf(a, sizeof a, "info --model %s", fifo);
    expect_fifo_refused(a, fifo);
    snprintf(a, sizeof a, "generate --model %s --tokenizer %s --prompt hi --steps 2", m, fifo);
    expect_fifo_refused(a, fifo);
    snprintf(a, sizeof a, "generate --model %s --routers %s --prompt hi --steps 2", m, fifo);
    expect_fifo_refused(a, fifo);
    snprintf(a, sizeof a, "generate --model %s --policy static --static-heads %s --prompt hi --steps 2", m, fifo);
    expect_fifo_refused(a, fifo);
    snprintf(a, sizeof a, "eval --model %s --data %s", m, fifo);
    expect_fifo_refused(a, fifo);
    snprintf(a, sizeof a, "train --model %s --window 8 --steps 1 --data %s --out %s", m, fifo, test_tmp("fifo-r.safetensors"));
    expect_fifo_refused(a, fifo);
}

static void on_alarm(int sig) { (void)sig; }

TEST(files_read_all_refuses_a_fifo_and_bounds_the_size) {
    char fifo[1100];
    snprintf(fifo, sizeof fifo, "%s", test_tmp("unit.fifo"));
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    signal(SIGALRM, on_alarm); /* a blocking open() returns EINTR instead of hanging */
    alarm(5);
    size_t n = 0;
    Err e;
    char *buf = file_read_all(fifo, "data file", "a text file", 100, &n, &e);
    alarm(0);
    CHECK(!buf && strstr(e.msg, "not a text file (a FIFO)"));
    const char *big = test_tmp("big.txt");
    CHECK(test_write_file(big, "0123456789", 10) == 0);
    CHECK(!file_read_all(big, "data file", "a text file", 9, &n, &e) && strstr(e.msg, "over the 9-byte limit"));
    buf = file_read_all(big, "data file", "a text file", 10, &n, &e);
    CHECK(buf && n == 10 && buf[10] == 0);
    free(buf);
}

/* ---- non-finite values ---------------------------------------------------- */

TEST(files_nonfinite_router_weights_are_refused_naming_the_tensor) {
    const float bad[2] = {NAN, INFINITY};
    for (int i = 0; i < 2; i++) {
        Routers r;
        Err e;
        const char *path = test_tmp(i ? "inf-routers.safetensors" : "nan-routers.safetensors");
        CHECK(router_random(&r, 3, 4, 16, 1, &e) == 0);
        r.w[1 * 4 * 16 + 5] = bad[i]; /* layer 1, head 0, element 5 */
        CHECK(router_save(&r, path, NULL, NULL, 0, &e) == 0);
        router_free(&r);
        CHECK(router_load(&r, path, 3, 4, 16, &e) != 0);
        CHECK_MSG(strstr(e.msg, path) && strstr(e.msg, "model.layers.1.self_attn.router.weight") &&
                  strstr(e.msg, i ? "inf" : "nan") && !strchr(e.msg, '\n'), "%s", e.msg);
        router_free(&r);
    }
}

/* A copy of stories260K.bin with n floats from float index k set to v. */
static const char *patched_model(const char *name, long k, long n, float v) {
    long len = 0;
    char *b = test_read_file(test_stories_model(), &len);
    const char *path = test_tmp(name);
    for (long i = 0; b && i < n && 28 + 4 * (k + i) + 4 <= len; i++) memcpy(b + 28 + 4 * (k + i), &v, 4);
    CHECK(b && test_write_file(path, b, len) == 0);
    free(b);
    return path;
}

/* train on a model with a NaN weight, and on one whose activations
 * overflow: one line, exit 1, no router file (it used to write NaN routers
 * with heldout_task_loss 0 and exit 0). */
TEST(files_train_stops_on_nonfinite_weights_losses_and_gradients) {
    SKIP_UNLESS_SHARED();
    const char *data = test_tmp("nf-data.txt");
    char text[4000] = "";
    for (int i = 0; i < 40; i++) strcat(text, "Once upon a time there was a girl. She played outside. ");
    CHECK(test_write_file(data, text, (long)strlen(text)) == 0);
    const struct { const char *model, *want; } cases[] = {
        {patched_model("nf-nan.bin", 100, 1, NAN), "weight token_embedding holds nan at element 100"},
        {patched_model("nf-huge.bin", 5000, 64, 3e38f), "is not finite"},
    };
    for (int i = 0; i < 2; i++) {
        const char *out = test_tmp("nf-r.safetensors");
        unlink(out);
        int st;
        char *o = test_runf(&st, "%s train --model %s --tokenizer %s --window 8 --steps 3 --data %s --seq-len 16 "
                                 "--batch 2 --out %s 2>&1 >/dev/null | grep -v '^\\['", test_bin(), cases[i].model,
                            test_stories_tokenizer(), data, out);
        CHECK_MSG(o && strstr(o, "ahascope train: ") && strstr(o, cases[i].want) && strchr(o, '\n') == o + strlen(o) - 1,
                  "%s: %s", cases[i].model, o ? o : "");
        CHECK_MSG(access(out, F_OK) != 0, "train wrote %s from a non-finite run", out);
        free(o);
    }
}

/* ---- memory amplification --------------------------------------------------- */

/* Put the header length before the header that fills b[8..len). */
static void set_header_len(char *b, size_t len) {
    for (int i = 0; i < 8; i++) b[i] = (char)((uint64_t)(len - 8) >> (8 * i));
}

/* A safetensors buffer whose header holds n entries, each `entry`
 * printf'd with its index. */
static char *header_of(const char *entry, long n, size_t *size) {
    size_t cap = (size_t)n * (strlen(entry) + 16) + 64, len = 8;
    char *b = malloc(cap);
    if (!b) return NULL;
    b[len++] = '{';
    for (long i = 0; i < n; i++) {
        if (i) b[len++] = ',';
        len += (size_t)snprintf(b + len, cap - len, entry, i);
    }
    b[len++] = '}';
    set_header_len(b, len);
    *size = len;
    return b;
}

/* Too many tensors, or too many JSON values, are refused from the header's
 * text before a tree is built (a 58 MB header of a million empty tensors
 * peaked at 1.13 GB); a file just within the limit still opens. */
TEST(files_safetensors_header_counts_are_bounded_before_parsing) {
    const char *empty = "\"t%07ld\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}";
    size_t size;
    StFile f;
    Err e;
    char *b = header_of(empty, ST_MAX_TENSORS + 1, &size);
    CHECK(b && st_open_buffer(&f, b, size, "many.safetensors", &e) != 0);
    CHECK_MSG(strstr(e.msg, "many.safetensors: header has 65537 entries"), "%s", e.msg);
    free(b);
    b = header_of(empty, ST_MAX_TENSORS, &size);
    CHECK_MSG(b && st_open_buffer(&f, b, size, "limit.safetensors", &e) == 0, "%s", e.msg);
    CHECK_INT(st_count(&f), ST_MAX_TENSORS);
    CHECK(st_find(&f, "t0065535") && !strcmp(st_tensor(&f, 7)->name, "t0000007"));
    st_close(&f);
    free(b);
    /* one entry with a vast array of zeros: few tensors, many values */
    size_t n = ST_MAX_VALUES + 10, cap = 2 * n + 64;
    b = malloc(cap);
    if (!b) return;
    size_t len = 8 + (size_t)snprintf(b + 8, cap - 8, "{\"pad\":[0");
    for (size_t i = 0; i < n; i++) b[len++] = ',', b[len++] = '0';
    len += (size_t)snprintf(b + len, cap - len, "]}");
    set_header_len(b, len);
    CHECK(st_open_buffer(&f, b, len, "values.safetensors", &e) != 0);
    CHECK_MSG(strstr(e.msg, "values.safetensors: header holds about") && strstr(e.msg, "JSON values"), "%s", e.msg);
    free(b);
}

/* A folder's tokenizer_config.json or generation_config.json as a FIFO:
 * refused by name, where it used to block in fopen(). */
TEST(files_fifo_tokenizer_configs_are_refused_without_blocking) {
    const char *names[] = {"tokenizer_config.json", "generation_config.json"};
    signal(SIGALRM, on_alarm);
    for (int i = 0; i < 2; i++) {
        char dir[1100], fifo[1200];
        snprintf(dir, sizeof dir, "%s", fresh_dir(i ? "tokcfg-gen" : "tokcfg-tok"));
        snprintf(fifo, sizeof fifo, "%s/%s", dir, names[i]);
        unlink(fifo);
        CHECK(mkfifo(fifo, 0600) == 0);
        Tokenizer t;
        Err e;
        alarm(5);
        int rc = tok_load_hf(&t, "tests/fixtures/hftok/llama2.json", dir, 0, &e);
        alarm(0);
        CHECK_MSG(rc != 0 && strstr(e.msg, fifo) && strstr(e.msg, "(a FIFO)"), "%s: %s", names[i], rc ? e.msg : "loaded");
        if (rc == 0) tok_free(&t);
    }
}
