/* test_terminal_escapes.c — text from argv, files and databases reaches a terminal escaped.
 *
 * Text from argv, files and databases reaches a
 * terminal escaped (the terminal rule of engine/textout.h).
 *
 * Every case runs the binary on a pseudo-terminal, with a hostile string in
 * one place that the output echoes: a flag value, an unknown command, a file
 * name, a config.json field, router metadata, a tokenizer.json field, a
 * recorded prompt or model name, SQL. Nothing a terminal acts on may come
 * back: no control below 0x20 other than the CR and LF the pty writes, no
 * DEL, no C1 code point (U+0080–U+009F), no byte outside valid UTF-8. The
 * echo must still be there, visibly: "\x1b" where the ESC was. CSV through a
 * pipe is the other half: it keeps the raw bytes. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/routers.h"
#include "engine/textout.h"
#include "tests/test.h"

/* ESC ] title BEL (sets the window title), CSI 2J (clears the screen), the
 * C1 CSI as U+009B and as a lone byte, DEL, and a newline in the middle. */
#define HOSTILE "\x1b]0;PWNED\x07\x1b[2J\xc2\x9b" "1m\x9b" "2J\x7f\nZ"

static const char *bin(void) {
    const char *b = getenv("AHASCOPE_BIN");
    return b ? b : "./ahascope";
}

static const char *model(void) { return test_shared("models/stories260K/stories260K.bin"); }

/* Run argv (no shell: the bytes reach it as they are) with stdout and
 * stderr on a new pseudo-terminal (pty) or one pipe; stdin is /dev/null.
 * Returns what came out (malloc'd, NUL-terminated, *len bytes), NULL if the
 * child could not be started; *status is its exit status. */
static char *capture(char *const argv[], int pty, size_t *len, int *status) {
    int fds[2] = {-1, -1}, rd;
    if (pty) {
        rd = posix_openpt(O_RDWR | O_NOCTTY);
        if (rd < 0 || grantpt(rd) || unlockpt(rd)) return NULL;
    } else {
        if (pipe(fds)) return NULL;
        rd = fds[0];
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int out = fds[1];
        if (pty) setsid(), out = open(ptsname(rd), O_RDWR); /* the child's controlling terminal */
        int in = open("/dev/null", O_RDONLY);
        dup2(in, 0), dup2(out, 1), dup2(out, 2);
        close(rd);
        execv(argv[0], argv);
        _exit(127);
    }
    if (!pty) close(fds[1]);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) { /* a pty reads EIO once the child's side is closed, a pipe 0 */
        if (n + 1024 > cap) buf = realloc(buf, cap *= 2);
        ssize_t r = read(rd, buf + n, cap - n - 1);
        if (r > 0) n += (size_t)r;
        else if (r < 0 && errno == EINTR) continue;
        else break;
    }
    close(rd);
    int st = 0;
    waitpid(pid, &st, 0);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Length of the UTF-8 character at s[0..n) and its code point in *cp, or 0
 * when the bytes there are not valid UTF-8 (checked here independently of
 * the engine's decoder). */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp) {
    if (s[0] < 0x80) return *cp = s[0], 1;
    size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (!k || s[0] > 0xf4 || n < k) return 0;
    uint32_t c = s[0] & (0x7f >> k);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[k] || c > 0x10ffff || (c >= 0xd800 && c < 0xe000)) return 0;
    return *cp = c, k;
}

/* Offset of the first byte a terminal would act on, or -1. */
static long first_leak(const char *s, size_t n) {
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t cp;
        if (!(k = utf8_char((const unsigned char *)s + i, n - i, &cp))) return (long)i;
        if ((cp < 0x20 && cp != '\r' && cp != '\n') || (cp >= 0x7f && cp < 0xa0)) return (long)i;
    }
    return -1;
}

/* What f holds from the start, as a string (the caller frees it). */
static char *written(FILE *f) {
    long n = ftell(f);
    char *s = calloc(1, (size_t)n + 1);
    rewind(f);
    CHECK(s && fread(s, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    return s;
}

TEST(terminal_rule_escapes_controls_c1_and_invalid_utf8) {
    char out[256];
    /* ESC CSI, newline, tab, DEL, U+009B, a lone 0x9b, then é and an em dash that pass */
    textout_term("a\x1b[2Jb\n\t\x7f\xc2\x9b\x9b\xc3\xa9\xe2\x80\x94", out, sizeof out);
    CHECK_MSG(!strcmp(out, "a\\x1b[2Jb\\n\\x09\\x7f\\xc2\\x9b\\x9b\xc3\xa9\xe2\x80\x94"), "%s", out);
    textout_term("\xed\xa0\x80\xc0\xaf", out, sizeof out); /* a surrogate and an overlong: byte by byte */
    CHECK_MSG(!strcmp(out, "\\xed\\xa0\\x80\\xc0\\xaf"), "%s", out);
    textout_term("\x1b\x1b", out, 6); /* cut at a whole escape, never inside one */
    CHECK_MSG(!strcmp(out, "\\x1b"), "%s", out);
    FILE *f = tmpfile();
    textout_csv_term(f, "x,\x1b\ny");
    char *s = written(f);
    CHECK_MSG(!strcmp(s, "\"x,\\x1b\\ny\""), "%s", s);
    free(s);
    f = tmpfile();
    textout_json_write(f, "{\"a\":\"\x7f\xc2\x9b\xc2\xa0\\u001b\"}"); /* U+00A0 is no control: it stays */
    s = written(f);
    CHECK_MSG(!strcmp(s, "{\"a\":\"\\u007f\\u009b\xc2\xa0\\u001b\"}"), "%s", s);
    free(s);
}

typedef struct {
    int cases, leaked;
} Tally;

/* Run one case on a pty: it must echo the hostile text, its ESC visible as
 * `shown` (\x1b, or \u001b in JSON), and leak nothing. Returns the output. */
static char *pty_case(Tally *t, const char *name, const char *shown, char *const argv[]) {
    size_t n = 0;
    int st;
    char *out = capture(argv, 1, &n, &st);
    t->cases++;
    if (!out) {
        CHECK_MSG(0, "%s: could not start %s", name, argv[0]);
        t->leaked++;
        return NULL;
    }
    long at = first_leak(out, n);
    if (at >= 0 || !strstr(out, shown)) t->leaked++;
    CHECK_MSG(at < 0, "%s: byte 0x%02x reaches the terminal at offset %ld of: %s", name,
              at >= 0 ? (unsigned char)out[at] : 0, at, out);
    CHECK_MSG(strstr(out, shown), "%s: the hostile text is not echoed as %s (status %d): %s", name, shown, st, out);
    return out;
}

#define RUN(t, name, ...) free(pty_case(t, name, "\\x1b", (char *[]){(char *)bin(), __VA_ARGS__, NULL}))
#define RUN_JSON(t, name, ...) free(pty_case(t, name, "\\u001b", (char *[]){(char *)bin(), __VA_ARGS__, NULL}))

/* A directory in the scratch space, made once. */
static const char *dir_of(const char *name) {
    const char *d = test_tmp(name);
    mkdir(d, 0755);
    return d;
}

static void write_text(const char *path, const char *s) { CHECK(test_write_file(path, s, (long)strlen(s)) == 0); }

TEST(terminal_escapes_argv_and_paths) {
    Tally t = {0, 0};
    char db[1200], junk[1200], missing[1200], nodb[1200], out[1200];
    snprintf(db, sizeof db, "%s", test_tmp("plain.db"));
    snprintf(junk, sizeof junk, "%s/junk" HOSTILE ".bin", dir_of("paths"));
    snprintf(missing, sizeof missing, "%s/missing" HOSTILE, test_tmpdir());
    snprintf(nodb, sizeof nodb, "%s/" HOSTILE ".db", test_tmpdir());
    snprintf(out, sizeof out, "%s", test_tmp("merged.db"));
    write_text(junk, "this is not a checkpoint");
    write_text(db, "");
    RUN(&t, "unknown command", HOSTILE);
    RUN(&t, "unknown flag", "runs", "--x" HOSTILE);
    RUN(&t, "unexpected argument", "runs", "--db", db, HOSTILE);
    RUN(&t, "--policy value", "generate", "--policy", HOSTILE);
    RUN(&t, "--steps value", "record", "--steps", HOSTILE);
    RUN(&t, "--predictor value", "compare", "--db", db, "--run", "1", "--predictor", HOSTILE);
    RUN(&t, "--shard value", "eval", "--shard", HOSTILE);
    RUN(&t, "missing model path", "info", "--model", missing);
    RUN(&t, "bad model file", "info", "--model", junk);
    RUN(&t, "missing database", "runs", "--db", nodb);
    RUN(&t, "missing merge input", "merge", "--out", out, nodb);
    RUN(&t, "missing tokenizer", "info", "--model", junk, "--tokenizer", missing);
    /* every command's own flag parser echoes what it does not know */
    static const char *const commands[] = {"tui", "generate", "trace", "record", "runs", "query", "export",
                                           "compare", "merge", "train", "fit", "eval", "sweep", "calibrate",
                                           "tasks", "info", "convert", "bench", "pull", "run"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        RUN(&t, commands[i], (char *)commands[i], "--x" HOSTILE);
    CHECK_MSG(t.leaked == 0, "%d of %d cases leaked", t.leaked, t.cases);
    CHECK_INT(t.cases, 12 + 20);
}

/* Router files for stories260K whose metadata holds the hostile text. */
static const char *hostile_routers(const char *name, const char *key, const char *val) {
    static char path[4][1200];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, sizeof path[0], "%s", test_tmp(name));
    Routers r = {0};
    Err e;
    const char *keys[] = {key}, *vals[] = {val};
    CHECK(router_random(&r, 5, 8, 64, 5, &e) == 0);
    CHECK(router_save(&r, p, keys, vals, 1, &e) == 0);
    router_free(&r);
    return p;
}

TEST(terminal_escapes_file_fields) {
    Tally t = {0, 0};
    char cfg[1200], tok[1200];
    const char *hf = dir_of("hf_hostile");
    snprintf(cfg, sizeof cfg, "%s/config.json", hf);
    /* JSON escapes for the controls, the raw bytes for the C1 ones */
    write_text(cfg, "{\"model_type\": \"\\u001b]0;PWNED\\u0007\\u001b[2J\xc2\x9b\\u007f\\nZ\", \"hidden_size\": 8}");
    RUN(&t, "config.json model_type", "info", "--model", (char *)hf);
    snprintf(tok, sizeof tok, "%s", test_tmp("hostile_tokenizer.json"));
    write_text(tok, "{\"model\": {\"type\": \"\\u001b]0;PWNED\\u0007\\u001b[2J\xc2\x9b\\nZ\", \"vocab\": {\"a\": 0}}}");
    if (!test_shared_available()) {
        CHECK_MSG(t.leaked == 0, "%d of %d cases leaked", t.leaked, t.cases);
        test_skip("router and tokenizer cases need the shared stories260K (set AHASCOPE_SHARED)");
        return;
    }
    RUN(&t, "tokenizer.json model type", "info", "--model", (char *)model(), "--tokenizer", tok);
    RUN(&t, "router metadata window", "info", "--model", (char *)model(), "--routers",
        (char *)hostile_routers("w.safetensors", "window", "16" HOSTILE));
    RUN(&t, "router metadata tau", "info", "--model", (char *)model(), "--routers",
        (char *)hostile_routers("tau.safetensors", "tau", HOSTILE));
    CHECK_MSG(t.leaked == 0, "%d of %d cases leaked", t.leaked, t.cases);
}

/* Run sql with ?1 the hostile text on db, as a crafted database would hold it. */
static void set_text(const char *db, const char *sql) {
    sqlite3 *h;
    sqlite3_stmt *st;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK);
    sqlite3_bind_text(st, 1, HOSTILE, -1, SQLITE_STATIC);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(h);
}

TEST(terminal_escapes_database_text) {
    SKIP_UNLESS_SHARED();
    Tally t = {0, 0};
    char db[1200], copy[1200], sql[256];
    snprintf(db, sizeof db, "%s", test_tmp("hostile.db"));
    snprintf(copy, sizeof copy, "%s", test_tmp("hostile_model.db"));
    size_t n;
    int st;
    char *rec = capture((char *[]){(char *)bin(), "record", "--db", db, "--model", (char *)model(), "--prompt",
                                   "Once " HOSTILE " upon", "--steps", "12", "--window", "4", "--temperature", "0", "--profile", NULL},
                        0, &n, &st);
    CHECK_MSG(rec && st == 0, "record: status %d: %s", st, rec ? rec : "");
    free(rec);
    RUN(&t, "query --csv prompt", "query", "--db", db, "SELECT prompt FROM runs", "--csv");
    RUN(&t, "query table prompt", "query", "--db", db, "SELECT prompt FROM runs");
    RUN(&t, "runs table", "runs", "--db", db);
    RUN(&t, "runs --csv", "runs", "--db", db, "--csv");
    RUN(&t, "query column name", "query", "--db", db, "SELECT 1 AS \"" HOSTILE "\"");
    RUN(&t, "SQL error", "query", "--db", db, "SELECT 1 FROM \"" HOSTILE "\"");
    snprintf(sql, sizeof sql, "SELECT '%s' AS a", HOSTILE);
    RUN(&t, "query --csv literal", "query", "--db", db, sql, "--csv");
    RUN_JSON(&t, "query --json prompt", "query", "--db", db, "SELECT prompt FROM runs", "--json");
    /* a crafted database: a piece (the tokenizer maps ESC to <unk>), the model's name, the policy */
    char *cp = capture((char *[]){"/bin/cp", db, copy, NULL}, 0, &n, &st);
    free(cp);
    set_text(copy, "UPDATE tokens SET piece = ?1 WHERE run_id = 1 AND pos = 1");
    RUN(&t, "export --csv piece", "export", "--db", copy, "--run", "1", "--csv");
    RUN_JSON(&t, "export --json piece", "export", "--db", copy, "--run", "1", "--json");
    RUN(&t, "query table piece", "query", "--db", copy, "SELECT piece FROM tokens");
    set_text(copy, "UPDATE runs SET model = ?1 WHERE run_id = 1");
    RUN(&t, "runs table model", "runs", "--db", copy);
    set_text(copy, "UPDATE runs SET policy = ?1 WHERE run_id = 1");
    RUN(&t, "compare policy", "compare", "--db", copy, "--run", "1");
    CHECK_MSG(t.leaked == 0, "%d of %d cases leaked", t.leaked, t.cases);
}

TEST(terminal_escapes_csv_to_a_pipe_keeps_bytes) {
    SKIP_UNLESS_SHARED();
    char db[1200];
    snprintf(db, sizeof db, "%s", test_tmp("pipe.db"));
    size_t n;
    int st;
    char *rec = capture((char *[]){(char *)bin(), "record", "--db", db, "--model", (char *)model(), "--prompt",
                                   "Once " HOSTILE " upon", "--steps", "12", "--temperature", "0", NULL},
                        0, &n, &st);
    CHECK_MSG(rec && st == 0, "record: status %d: %s", st, rec ? rec : "");
    free(rec);
    char *out = capture((char *[]){(char *)bin(), "query", "--db", db, "SELECT prompt FROM runs", "--csv", NULL}, 0, &n,
                        &st);
    /* as before: quoted for its newline, the controls and U+009B exact, the lone 0x9b byte U+FFFD */
    const char *want = "prompt\r\n\"Once \x1b]0;PWNED\x07\x1b[2J\xc2\x9b" "1m\xef\xbf\xbd" "2J\x7f\nZ upon\"\r\n";
    CHECK_MSG(st == 0 && out && !strcmp(out, want), "status %d: %s", st, out ? out : "");
    free(out);
    out = capture((char *[]){(char *)bin(), "runs", "--db", db, "--csv", NULL}, 0, &n, &st);
    CHECK_MSG(st == 0 && out && strstr(out, "\x1b]0;PWNED\x07"), "runs --csv to a pipe: status %d: %s", st, out ? out : "");
    free(out);
}
