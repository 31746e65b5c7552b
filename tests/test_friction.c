/* test_friction.c — what a new user meets with files: wrong kinds named, no hangs, permissions said.
 *
 * What a new user meets with files: a file of the wrong
 * kind says what it is not and what it looks like; a FIFO never hangs; a
 * database or output where the user cannot write says "permission denied"
 * or "no such directory" and what was tried; work that would write a file
 * checks first that it can; exports never overwrite another run's file; a
 * bare model name is looked up where the default model is.
 *
 * Messages are matched on their text, not on their "ahascope CMD:" prefix. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "engine/model.h"
#include "engine/routers.h"
#include "engine/safetensors.h"
#include "tests/test.h"
#include "tests/tmux.h"

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* `ahascope ARGS` must exit `want` (1 a failure, 2 a usage error; never
 * hang: 10 s at most), print one line, and that line must hold every needle
 * of the NULL-terminated list. */
static void expect_exit_v(int want, const char *args, va_list ap) {
    int st;
    char *out = test_runf(&st, "timeout 10 %s %s </dev/null", test_bin(), args);
    CHECK_MSG(st == want, "`%s` exited %d%s: %s", args, st, st == 124 ? " (hung)" : "", out ? out : "");
    CHECK_MSG(out && count_lines(out) == 1, "`%s` printed: %s", args, out ? out : "");
    for (const char *needle; (needle = va_arg(ap, const char *));)
        CHECK_MSG(out && strstr(out, needle), "`%s`: expected '%s' in: %s", args, needle, out ? out : "");
    free(out);
}

static void expect_fail(const char *args, ...) {
    va_list ap;
    va_start(ap, args);
    expect_exit_v(1, args, ap);
    va_end(ap);
}

static void expect_usage(const char *args, ...) {
    va_list ap;
    va_start(ap, args);
    expect_exit_v(2, args, ap);
    va_end(ap);
}

/* A small random llama2.c model (vocab 300) and a matching tokenizer. */
static const char *tiny_model(void) {
    static char path[1024];
    if (path[0]) return path;
    Config c = {.dim = 16, .hidden_dim = 24, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 300,
                .seq_len = 32, .shared_classifier = 1};
    Model m;
    Err e;
    snprintf(path, sizeof path, "%s", test_tmp("fr-tiny.bin"));
    CHECK(model_random(&m, &c, 3, &e) == 0 && model_save(&m, path, 0, &e) == 0);
    model_free(&m);
    return path;
}

/* A tokenizer.bin of 300 tokens: the 3 specials, 256 byte pieces, letters. */
static const char *tiny_tokenizer(void) {
    static char path[1024];
    if (path[0]) return path;
    snprintf(path, sizeof path, "%s", test_tmp("fr-tok300.bin"));
    FILE *f = fopen(path, "wb");
    int32_t maxlen = 6;
    fwrite(&maxlen, 4, 1, f);
    for (int i = 0; i < 300; i++) {
        char s[8];
        if (i < 3) snprintf(s, sizeof s, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
        else if (i < 259) snprintf(s, sizeof s, "<0x%02X>", i - 3);
        else snprintf(s, sizeof s, "%c%c", 'a' + (i - 259) % 26, 'a' + (i - 259) / 26);
        float score = -(float)i;
        int32_t len = (int32_t)strlen(s);
        fwrite(&score, 4, 1, f);
        fwrite(&len, 4, 1, f);
        fwrite(s, 1, (size_t)len, f);
    }
    fclose(f);
    return path;
}

/* Router vectors for tiny_model() (2 layers, 4 heads, dim 16). */
static const char *tiny_routers(const char *name) {
    Routers r;
    Err e;
    const char *path = test_tmp(name);
    CHECK(router_random(&r, 2, 4, 16, 1, &e) == 0);
    const char *k[] = {"window"}, *v[] = {"8"};
    CHECK_MSG(router_save(&r, path, k, v, 1, &e) == 0, "%s", e.msg);
    router_free(&r);
    return path;
}

/* A safetensors file of model weights (no router tensor). */
static const char *weights_file(void) {
    static float w[16 * 4];
    const char *path = test_tmp("fr-model.safetensors");
    StWriter sw;
    Err e;
    int64_t shape[2] = {4, 16};
    st_writer_init(&sw);
    CHECK(st_writer_add(&sw, "model.embed_tokens.weight", ST_F32, 2, shape, w, &e) == 0);
    CHECK_MSG(st_write(&sw, path, &e) == 0, "%s", e.msg);
    st_writer_free(&sw);
    return path;
}

static const char *text_file(void) {
    const char *path = test_tmp("fr-NOTES.md");
    const char *s = "# notes\n\nThis is a README, not a model.\n";
    test_write_file(path, s, (long)strlen(s));
    return path;
}

static const char *fifo(void) {
    const char *path = test_tmp("fr-pipe");
    unlink(path);
    CHECK(mkfifo(path, 0600) == 0);
    return path;
}

#define NOT_MODEL "not a llama2.c checkpoint or Hugging Face folder"

TEST(friction_model_of_the_wrong_kind_says_what_it_is) {
    char a[4096];
#define MODEL(path, ...) do { snprintf(a, sizeof a, "info --model '%s'", path); expect_fail(a, NOT_MODEL, __VA_ARGS__, NULL); } while (0)
    MODEL(text_file(), "a text file");
    test_write_file(test_tmp("fr-three.bin"), "\x01\x00\x02", 3);
    MODEL(test_tmp("fr-three.bin"), "too short");
    test_write_file(test_tmp("fr-empty.bin"), "", 0);
    MODEL(test_tmp("fr-empty.bin"), "empty");
    mkdir(test_tmp("fr-folder"), 0755);
    MODEL(test_tmp("fr-folder"), "directory", "config.json");
    MODEL("/dev/zero", "a device");
    MODEL(fifo(), "a FIFO"); /* must not block waiting for a writer */
    MODEL(tiny_routers("fr-r.safetensors"), "router file", "--routers");
    MODEL(weights_file(), "safetensors", "the folder");
    MODEL(tiny_tokenizer(), "tokenizer", "--tokenizer");
#undef MODEL
    snprintf(a, sizeof a, "info --model '%s'", tiny_model()); /* and the right kind still loads */
    int st;
    char *out = test_runf(&st, "%s %s", test_bin(), a);
    CHECK_MSG(st == 0, "%s", out);
    free(out);
}

#define NOT_TOKENIZER "not a llama2.c tokenizer.bin or tokenizer.json"

TEST(friction_tokenizer_of_the_wrong_kind_says_what_it_is) {
    char a[4096];
    const char *m = tiny_model();
#define TOK(path, ...) do { snprintf(a, sizeof a, "info --model '%s' --tokenizer '%s'", m, path); expect_fail(a, NOT_TOKENIZER, __VA_ARGS__, NULL); } while (0)
    TOK(text_file(), "a text file");
    TOK(m, "a llama2.c checkpoint", "--model");
    TOK(tiny_routers("fr-r.safetensors"), "router file");
    TOK(test_tmpdir(), "a directory");
    TOK("/dev/zero", "a device");
    TOK(fifo(), "a FIFO");
    test_write_file(test_tmp("fr-three.bin"), "\x05\x00\x00", 3);
    TOK(test_tmp("fr-three.bin"), "too short");
#undef TOK
    snprintf(a, sizeof a, "info --model '%s' --tokenizer '%s'", m, tiny_tokenizer());
    int st;
    char *out = test_runf(&st, "%s %s", test_bin(), a);
    CHECK_MSG(st == 0, "%s", out);
    free(out);
}

#define NOT_ROUTERS "not an AHA router file"

TEST(friction_routers_of_the_wrong_kind_say_what_they_are) {
    char a[4096];
    const char *m = tiny_model(), *t = tiny_tokenizer();
#define ROUT(path, ...) do { snprintf(a, sizeof a, "generate --model '%s' --tokenizer '%s' --steps 2 --routers '%s'", m, t, path); expect_fail(a, __VA_ARGS__, NULL); } while (0)
    ROUT(text_file(), NOT_ROUTERS, "a text file");
    ROUT(m, NOT_ROUTERS, "a llama2.c checkpoint", "--model");
    ROUT(t, NOT_ROUTERS, "tokenizer");
    ROUT(weights_file(), NOT_ROUTERS, "safetensors");
    ROUT(test_tmpdir(), NOT_ROUTERS, "a directory");
    ROUT(fifo(), NOT_ROUTERS, "a FIFO");
    ROUT(test_tmp("fr-absent.safetensors"), "absent.safetensors", "no such");
#undef ROUT
    snprintf(a, sizeof a, "generate --model '%s' --tokenizer '%s' --steps 2 --routers '%s'", m, t, tiny_routers("fr-ok.safetensors"));
    int st;
    char *out = test_runf(&st, "%s %s", test_bin(), a);
    CHECK_MSG(st == 0, "%s", out);
    free(out);
}

/* ---- databases and outputs where the user cannot write ------------------ */

/* Run `ahascope ARGS` under a pseudo-terminal (the TUI refuses a pipe);
 * NULL when script(1) is missing. */
static char *tty_run(int *st, const char *prefix, const char *args) {
    int have;
    free(test_runf(&have, "command -v script >/dev/null 2>&1"));
    if (have != 0) return NULL;
    return test_runf(st, "timeout 20 script -qec \"%s %s %s\" /dev/null </dev/null", prefix, test_bin_abs(), args);
}

/* Like expect_fail, for the TUI: exit 1 and every needle in what it printed. */
static void expect_tui_fail(const char *prefix, const char *args, ...) {
    int st;
    char *out = tty_run(&st, prefix, args);
    if (!out) { printf("    (no script(1): TUI case not run)\n"); return; }
    CHECK_MSG(st == 1, "tui `%s` exited %d: %s", args, st, out);
    va_list ap;
    va_start(ap, args);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        CHECK_MSG(strstr(out, needle), "tui `%s`: expected '%s' in: %s", args, needle, out);
    va_end(ap);
    free(out);
}

/* A recorded database at path (run 1 of tiny_model). */
static void record_db(const char *path, const char *model, const char *tok, const char *prompt) {
    int st;
    char *out = test_runf(&st, "%s record --db '%s' --model '%s' --tokenizer '%s' --steps 4 --window 2 --profile --prompt '%s'", test_bin(), path,
                   model, tok, prompt);
    CHECK_MSG(st == 0, "record: %s", out);
    free(out);
}

TEST(friction_database_in_a_missing_directory_says_so) {
    char a[4096], db[1100], nodir[1100];
    const char *m = tiny_model(), *t = tiny_tokenizer();
    snprintf(nodir, sizeof nodir, "%s", test_tmp("fr-no/such/dir"));
    snprintf(db, sizeof db, "%s", test_tmp("fr-have.db"));
    record_db(db, m, t, "ab");
    snprintf(a, sizeof a, "record --db %s/x.db --model %s --tokenizer %s --steps 2", nodir, m, t);
    expect_fail(a, "x.db", "no such directory", "create", NULL);
    snprintf(a, sizeof a, "runs --db %s/x.db", nodir);
    expect_fail(a, "x.db", "no such directory", "read", NULL);
    snprintf(a, sizeof a, "query --db %s/x.db 'SELECT 1'", nodir);
    expect_fail(a, "x.db", "no such directory", "read", NULL);
    snprintf(a, sizeof a, "merge --out %s/m.db %s", nodir, db);
    expect_fail(a, "m.db", "no such directory", "create", NULL);
    snprintf(a, sizeof a, "export --db %s --run 1 --json --out %s/run1.json", db, nodir);
    expect_fail(a, "run1.json", "no such directory", NULL);
    snprintf(a, sizeof a, "calibrate --db %s --run 1 --budget 2 --out %s/heads.txt", db, nodir);
    expect_fail(a, "heads.txt", "no such directory", NULL);
    snprintf(a, sizeof a, "tui --model %s --tokenizer %s --db %s/x.db", m, t, nodir);
    expect_tui_fail("", a, "x.db", "no such directory", NULL);
    snprintf(a, sizeof a, "tui --replay --db %s/x.db", nodir);
    expect_tui_fail("", a, "x.db", "no such directory", NULL);
    expect_fail("runs --db /dev/null", "not a database", NULL);
}

/* A prefix that runs a command as an unprivileged user, since root ignores
 * file permissions: "" when not root, setpriv or runuser as nobody when
 * root, NULL (the test skips) when neither can run the binary. */
static const char *unprivileged(void) {
    if (geteuid() != 0) return "";
    static const char *const ways[] = {"setpriv --reuid=65534 --regid=65534 --clear-groups", "runuser -u nobody --"};
    for (int i = 0; i < 2; i++) {
        int st;
        free(test_runf(&st, "%s %s --help >/dev/null 2>&1", ways[i], test_bin_abs()));
        if (st == 0) return ways[i];
    }
    return NULL;
}

/* `PREFIX ahascope ARGS` must fail in one line saying "permission denied"
 * and `want`. */
static void expect_denied(const char *prefix, const char *want, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void expect_denied(const char *prefix, const char *want, const char *fmt, ...) {
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    int st;
    char *out = test_runf(&st, "%s %s %s", prefix, test_bin_abs(), args);
    CHECK_MSG(st == 1 && count_lines(out) == 1 && strstr(out, "permission denied") && strstr(out, want),
              "`%s` as nobody -> %d (expected '%s'): %s", args, st, want, out);
    free(out);
}

TEST(friction_database_without_permission_says_permission_denied) {
    const char *as = unprivileged();
    if (!as) {
        test_skip("running as root and neither setpriv nor runuser can run the binary as nobody (root ignores permissions)");
        return;
    }
    /* a world-readable scratch tree: the test's own tmpdir is private to root */
    char root[] = "/tmp/ahascope-perm-XXXXXX", a[4096], m[1100], t[1100], db[1100];
    if (!mkdtemp(root)) { test_fail(__FILE__, __LINE__, "mkdtemp failed"); return; }
    chmod(root, 0755);
    int st;
    snprintf(m, sizeof m, "%s/tiny.bin", root);
    snprintf(t, sizeof t, "%s/tok300.bin", root);
    free(test_runf(&st, "cp '%s' '%s' && cp '%s' '%s' && mkdir '%s/ro' && chmod 644 '%s' '%s'", tiny_model(), m,
            tiny_tokenizer(), t, root, m, t));
    snprintf(db, sizeof db, "%s/ro/a.db", root);
    record_db(db, m, t, "ab");
    snprintf(a, sizeof a, "%s/ro/secret.db", root);
    record_db(a, m, t, "ab");
    free(test_runf(&st, "chmod 600 '%s/ro/secret.db'; chmod 644 '%s'; chmod 555 '%s/ro'", root, db, root));
    const char *want = "cannot create the database";
    expect_denied(as, want, "record --db %s/ro/new.db --model %s --tokenizer %s --steps 2", root, m, t);
    want = "cannot write the database";
    expect_denied(as, want, "record --db %s --model %s --tokenizer %s --steps 2", db, m, t);
    want = "cannot read the database";
    expect_denied(as, want, "runs --db %s", db);
    expect_denied(as, want, "query --db %s 'SELECT 1'", db);
    expect_denied(as, want, "runs --db %s/ro/secret.db", root);
    /* merge checks its inputs before it touches --out: an input it cannot read is named first */
    expect_denied(as, want, "merge --out %s/ro/m.db %s", root, db);
    want = "run1.json";
    free(test_runf(&st, "chmod 777 '%s/ro'", root)); /* a readable database, an unwritable output directory */
    free(test_runf(&st, "mkdir '%s/ro2' && chmod 555 '%s/ro2'", root, root));
    expect_denied(as, want, "export --db %s --run 1 --json --out %s/ro2/run1.json", db, root);
    expect_denied(as, "cannot create the database", "merge --out %s/ro2/m.db %s", root, db);
    snprintf(a, sizeof a, "tui --model %s --tokenizer %s --db %s/ro2/x.db", m, t, root);
    expect_tui_fail(as, a, "x.db", "permission denied", NULL);
    free(test_runf(&st, "chmod -R u+w '%s'; rm -rf '%s'", root, root));
}

/* ---- every input checked before work starts ---------------------------- */

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

TEST(friction_sweep_checks_every_windows_routers_before_any_work) {
    char a[8192], tmpl[1100], db[1100];
    const char *m = tiny_model(), *t = tiny_tokenizer();
    tiny_routers("fr-rt_w8.safetensors");
    tiny_routers("fr-rt_w16.safetensors");
    snprintf(tmpl, sizeof tmpl, "%s", test_tmp("fr-rt_w{w}.safetensors"));
    snprintf(db, sizeof db, "%s", test_tmp("fr-sweep.db"));
    snprintf(a, sizeof a, "sweep --model %s --tokenizer %s --policy oracle,aha --routers '%s' --window 8,16,24 "
                          "--self 2 --seq-len 16 --db %s", m, t, tmpl, db);
    expect_fail(a, "rt_w24.safetensors", "no such router file", "8, 16", NULL);
    CHECK_MSG(!exists(db), "sweep recorded into %s before refusing", db); /* nothing was evaluated */
    snprintf(a, sizeof a, "sweep --model %s --tokenizer %s --policy oracle,aha --window 8,16 --self 2 --seq-len 16", m, t);
    expect_usage(a, "needs --routers", NULL);
    snprintf(a, sizeof a, "eval --model %s --tokenizer %s --routers '%s' --window 24 --self 2 --seq-len 16 --db %s", m, t,
             tmpl, db);
    expect_fail(a, "rt_w24.safetensors", "no such router file", NULL);
    CHECK(!exists(db));
    int st; /* the windows that have routers run */
    char *out = test_runf(&st, "%s sweep --model %s --tokenizer %s --policy aha --routers '%s' --window 8,16 --self 2 --seq-len 16",
                   test_bin(), m, t, tmpl);
    CHECK_MSG(st == 0 && strstr(out, "w=16"), "%s", out);
    free(out);
}

TEST(friction_train_refuses_an_output_it_cannot_create_before_training) {
    char a[4096];
    const char *m = tiny_model(), *t = tiny_tokenizer();
    /* a million steps: it would train for far longer than the 10 s expect_fail allows */
    double t0 = clock_now();
    snprintf(a, sizeof a, "train --model %s --tokenizer %s --window 8 --steps 1000000 --self 8 --seq-len 16 --out %s",
             m, t, test_tmp("fr-missing/r.safetensors"));
    expect_fail(a, "fr-missing/r.safetensors", "no such directory", NULL);
    CHECK_MSG(clock_now() - t0 < 1.0, "train took %.2f s to refuse", clock_now() - t0);
    CHECK_INT(test_count_tmp(test_tmp("fr-missing/r.safetensors")), 0);
    CHECK_INT(test_count_tmp(test_tmp("fr-r.safetensors")), 0);
    snprintf(a, sizeof a, "train --model %s --tokenizer %s --window 8 --steps 1000000 --self 8 --seq-len 16 --train all "
                          "--out %s --out-model %s", m, t, test_tmp("fr-r.safetensors"), test_tmp("fr-missing/m.bin"));
    expect_fail(a, "fr-missing/m.bin", "no such directory", NULL);
    snprintf(a, sizeof a, "train --model %s --tokenizer %s --window 8 --self 8 --seq-len 16 --out %s", m, t, test_tmpdir());
    expect_fail(a, "cannot create", "a directory", NULL);
    snprintf(a, sizeof a, "train --model %s --window 8", m); /* no --out: a usage error naming it */
    expect_usage(a, "--out", NULL);
}

/* ---- exports never overwrite another run's ------------------------------ */

#include "app/run_info.h"

/* One TUI session in dir: step, press `s`, wait for `shows`, quit. */
static void tui_export(const char *name, const char *dir, const char *flags, const char *shows) {
    Tmux t;
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s tui --model %s --tokenizer %s --seed 1 --temperature 0 --policy full %s",
             test_bin_abs(), tiny_model(), tiny_tokenizer(), flags);
    tmux_open(&t, name, dir, 120, 40, NULL, cmd, 0);
    CHECK_MSG(tmux_shows(&t, "/32", 20), "the TUI did not start (%s)", flags);
    tmux_keys(&t, "n n s");
    CHECK_MSG(tmux_shows(&t, shows, 10), "no '%s' after s (%s)", shows, flags);
    tmux_keys(&t, "q");
    CHECK(tmux_shows(&t, "EXITED 0", 10));
    tmux_stop(&t);
}

static int file_has(const char *path, const char *text) {
    char *s = test_read_file(path, NULL);
    int r = s && strstr(s, text);
    free(s);
    return r;
}

TEST(friction_tui_export_never_overwrites_another_runs_file) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    char dir[1100], path[1200];
    snprintf(dir, sizeof dir, "%s", test_tmp("fr-exports"));
    mkdir(dir, 0755);
    /* run 1 of two databases: the same id, different runs; a tmux server
     * each, as a new session could meet the first server still shutting down */
    tui_export("fr-a", dir, "--prompt Alpha --db a.db", "exported run 1 to ahascope-run1.json");
    tui_export("fr-b", dir, "--prompt Beta --db b.db", "exported run 1 to ahascope-run1-2.json");
    snprintf(path, sizeof path, "%s/ahascope-run1.json", dir);
    CHECK_MSG(file_has(path, "\"prompt\":\"Alpha\""), "%s was overwritten", path);
    snprintf(path, sizeof path, "%s/ahascope-run1-2.json", dir);
    CHECK_MSG(file_has(path, "\"prompt\":\"Beta\""), "%s does not hold b.db's run", path);
    snprintf(path, sizeof path, "%s/ahascope-run1-2.csv", dir);
    CHECK(exists(path));
}

TEST(friction_export_names_replace_only_the_same_run) {
    char a[1100], b[1100], js[1200], cs[1200];
    snprintf(a, sizeof a, "%s", test_tmp("fr-ea.db"));
    snprintf(b, sizeof b, "%s", test_tmp("fr-eb.db"));
    record_db(a, tiny_model(), tiny_tokenizer(), "ab");
    record_db(b, tiny_model(), tiny_tokenizer(), "cd");
    Err e;
    Store *sa = store_open(a, STORE_READ, 1000, &e), *sb = store_open(b, STORE_READ, 1000, &e);
    if (!sa || !sb) { test_fail(__FILE__, __LINE__, "%s", e.msg); store_close(sa, NULL); return; }
    const char *dir = test_tmp("fr-names");
    mkdir(dir, 0755);
    CHECK(app_export_names(sa, 1, dir, js, cs, sizeof js, &e) == 0 && strstr(js, "/ahascope-run1.json"));
    FILE *f = fopen(js, "w");
    CHECK(f && store_export(sa, 1, STORE_FMT_JSON, f, &e) == 0);
    if (f) fclose(f);
    test_write_file(cs, "x\n", 2);
    CHECK(app_export_names(sa, 1, dir, js, cs, sizeof js, &e) == 0 && strstr(js, "/ahascope-run1.json")); /* same run */
    CHECK(app_export_names(sb, 1, dir, js, cs, sizeof js, &e) == 0 && strstr(js, "/ahascope-run1-2.json"));
    CHECK(strstr(cs, "/ahascope-run1-2.csv"));
    test_write_file(test_tmp("fr-names/ahascope-run2.csv"), "x\n", 2); /* a csv of unknown origin is kept too */
    CHECK(app_export_names(sa, 2, dir, js, cs, sizeof js, &e) != 0 || !strstr(js, "/ahascope-run2.json"));
    store_close(sa, NULL);
    store_close(sb, NULL);
}

/* ---- a bare model name is looked up where the default model is ---------- */

TEST(friction_bare_model_name_is_found_through_the_model_search) {
    SKIP_UNLESS_SHARED();
    char models[4096], a[8192];
    if (!realpath(test_shared("models"), models)) { test_fail(__FILE__, __LINE__, "no %s", test_shared("models")); return; }
    const char *dir = test_tmp("fr-convert");
    mkdir(dir, 0755);
    const char *names[] = {"stories260K.bin", "stories260K"};
    for (int i = 0; i < 2; i++) { /* from a directory with no model in sight */
        int st;
        snprintf(a, sizeof a, "cd %s && AHASCOPE_MODELS=%s %s convert --to hf --model %s --out hf%d", dir, models, test_bin_abs(),
                 names[i], i);
        char *out = test_runf(&st, "%s", a);
        CHECK_MSG(st == 0 && strstr(out, "model.safetensors"), "convert --model %s: %d %s", names[i], st, out);
        free(out);
        snprintf(a, sizeof a, "%s/hf%d/config.json", dir, i);
        CHECK(exists(a));
        snprintf(a, sizeof a, "cd %s && AHASCOPE_MODELS=%s %s info --model %s", dir, models, test_bin_abs(), names[i]);
        out = test_runf(&st, "%s", a);
        CHECK_MSG(st == 0 && strstr(out, "stories260K.bin"), "info --model %s: %d %s", names[i], st, out);
        free(out);
    }
    /* not found: say where it looked */
    snprintf(a, sizeof a, "cd %s && AHASCOPE_MODELS=%s timeout 10 %s convert --to hf --model stories999 --out x", dir,
             models, test_bin_abs());
    int st;
    char *out = test_runf(&st, "%s", a);
    CHECK_MSG(st == 1 && count_lines(out) == 1 && strstr(out, "stories999") && strstr(out, models) &&
              strstr(out, "../shared/models"), "%d %s", st, out);
    free(out);
    /* a name with a directory in it is a path, never searched for */
    snprintf(a, sizeof a, "cd %s && AHASCOPE_MODELS=%s %s info --model ./stories260K.bin", dir, models, test_bin_abs());
    out = test_runf(&st, "%s", a);
    CHECK_MSG(st == 1 && strstr(out, "cannot open model"), "%d %s", st, out);
    free(out);
}

/* make deps without root or sudo: one line naming the packages and the
 * command, exit 1, nothing installed. The probe is made to fail with a PATH
 * that has no compiler; `id` is the one tool the script needs there. */
TEST(friction_deps_without_root_or_sudo_names_the_packages) {
    const char *as = unprivileged();
    if (!as) { test_skip("cannot run as an unprivileged user (setpriv/runuser)"); return; }
    char dir[] = "/tmp/ahascope-deps-XXXXXX";
    if (!mkdtemp(dir)) { test_fail(__FILE__, __LINE__, "mkdtemp failed"); return; }
    chmod(dir, 0755);
    int st;
    free(test_runf(&st, "ln -s \"$(command -v id)\" %s/id && cp .ci/deps.sh %s/ && chmod 644 %s/deps.sh", dir, dir, dir));
    char *out = test_runf(&st, "cd / && %s env -i PATH=%s /bin/sh %s/deps.sh ensure build", as, dir, dir);
    CHECK_MSG(st == 1 && count_lines(out) == 1, "deps.sh as nobody exited %d: %s", st, out);
    CHECK_MSG(strstr(out, "sudo apt-get install") && strstr(out, "libcjson-dev") && strstr(out, "libncurses-dev"),
              "deps.sh as nobody: %s", out);
    free(out);
    free(test_runf(&st, "rm -rf %s", dir));
    /* on a machine that has everything, `ensure` is a no-op that says nothing */
    out = test_runf(&st, "sh .ci/deps.sh ensure build");
    CHECK_MSG(st == 0 && out && !*out, "deps.sh ensure build on a complete machine: %d %s", st, out);
    free(out);
}
