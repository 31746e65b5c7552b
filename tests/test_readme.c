/* test_readme.c — every command line README.md shows runs as shown.
 *
 * Every command line README.md shows runs as shown
 * (tests/readme_examples.py), and that runner catches a broken example.
 * The runner's own tests use small Markdown files, not README.md. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"

/* A python3 that starts (a pyenv shim on PATH may not), or NULL. */
static const char *python(void) {
    static const char *found;
    static int looked;
    if (looked) return found;
    looked = 1;
    const char *cands[] = {"python3", "/usr/bin/python3"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        char cmd[256];
        int st;
        snprintf(cmd, sizeof cmd, "%s -c 'import sys' 2>/dev/null", cands[i]);
        free(test_run(cmd, &st));
        if (st == 0) return found = cands[i];
    }
    return NULL;
}

#define SKIP_UNLESS_PYTHON()                                                        \
    do {                                                                            \
        if (!python()) {                                                            \
            test_skip("no working python3 to run tests/readme_examples.py");        \
            return;                                                                 \
        }                                                                           \
    } while (0)

/* Run the runner on the binary under test (each build passes its own). */
static char *runner(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *runner(int *status, const char *fmt, ...) {
    const char *bin = getenv("AHASCOPE_BIN");
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s tests/readme_examples.py --bin '%s' %s", python(), bin && *bin ? bin : "./ahascope",
             args);
    char *out = test_run(cmd, status);
    return out ? out : calloc(1, 1);
}

static const char *write_md(const char *name, const char *text) {
    const char *p = test_tmp(name);
    CHECK(test_write_file(p, text, (long)strlen(text)) == 0);
    return p;
}

static int has(const char *out, const char *needle) { return strstr(out, needle) != NULL; }

TEST(readme_examples_run) {
    SKIP_UNLESS_SHARED();
    SKIP_UNLESS_PYTHON();
    int st;
    char *out = runner(&st, "README.md");
    CHECK_MSG(st == 0, "README.md examples: runner exited %d:\n%s", st, out);
    /* at least one example ran: a README without any would pass vacuously */
    CHECK_MSG(has(out, " ok ("), "no README.md example ran:\n%s", out);
    free(out);
}

TEST(readme_examples_catch_a_broken_example) {
    SKIP_UNLESS_PYTHON();
    const char *md = write_md("broken.md",
                              "# a document\n"                                   /* 1 */
                              "```sh\n"                                          /* 2 */
                              "./ahascope generate --help > help.txt\n"          /* 3 */
                              "```\n"                                            /* 4 */
                              "```sh\n"                                          /* 5 */
                              "grep -q generate help.txt\n"                      /* 6 */
                              "./ahascope generate --no-such-flag\n"             /* 7 */
                              "echo not-reached\n"                               /* 8 */
                              "```\n"                                            /* 9 */
                              "```text\n"                                        /* 10 */
                              "touch text-ran; false\n"                          /* 11 */
                              "```\n"                                            /* 12 */
                              "```sh\n"                                          /* 13 */
                              "./ahascope generate --model path/to/model.bin\n"  /* 14 */
                              "make run\n"                                       /* 15 */
                              "./ahascope tui \\\n"                              /* 16 */
                              "    --mono   # interactive\n"                     /* 17 */
                              "```\n");
    const char *keep = test_tmp("broken-scratch");
    int st;
    char *out = runner(&st, "--keep '%s' '%s'", keep, md);
    CHECK_MSG(st == 1, "runner exited %d, expected 1:\n%s", st, out);
    CHECK_MSG(has(out, "broken.md:2 ok ("), "the good block is not reported ok:\n%s", out);
    /* the failing line, not just its block, with the program's message */
    CHECK_MSG(has(out, "broken.md:7 FAILED (exit ") && has(out, "--no-such-flag\n"), "no failure for line 7:\n%s", out);
    CHECK_MSG(has(out, "    ahascope generate: unknown flag"), "the output's tail is not shown:\n%s", out);
    CHECK_MSG(!has(out, "not-reached"), "the block went on after its failure:\n%s", out);
    CHECK_MSG(!has(out, "broken.md:10") && !has(out, "broken.md:11"), "the text block was reported:\n%s", out);
    char ran[1100];
    snprintf(ran, sizeof ran, "%s/text-ran", keep);
    char *text_ran = test_read_file(ran, NULL);
    CHECK_MSG(!text_ran, "the text block was run");
    free(text_ran);
    CHECK_MSG(has(out, "broken.md:14 skipped (placeholder)"), "path/to/ line not skipped:\n%s", out);
    CHECK_MSG(has(out, "broken.md:15 skipped (set-up)"), "make line not skipped:\n%s", out);
    CHECK_MSG(has(out, "broken.md:16 skipped (interactive)"), "interactive line not skipped:\n%s", out);
    /* a block whose every line is skipped is not run */
    CHECK_MSG(has(out, "2 blocks run: 1 ok, 1 failed; 3 lines skipped"), "wrong count line:\n%s", out);
    free(out);

    md = write_md("good.md", "```sh\n./ahascope generate --help\n```\n\n```sh\nmake test\n```\n");
    out = runner(&st, "'%s'", md);
    CHECK_MSG(st == 0, "a good file: runner exited %d:\n%s", st, out);
    CHECK_MSG(has(out, "1 block run: 1 ok, 0 failed; 1 line skipped"), "wrong count line:\n%s", out);
    free(out);
}

TEST(readme_examples_blocks_share_one_directory) {
    SKIP_UNLESS_PYTHON();
    const char *md = write_md("shared.md",
                              "```sh\necho hello > note.txt\n```\n"
                              "Prose between blocks.\n"
                              "```sh\n"
                              "grep -q hello note.txt\n"
                              "test -x ./ahascope && test -d engine/routers\n"
                              "test -n \"$AHASCOPE_MODELS\"\n"
                              "if read -r line; then exit 3; fi   # stdin is /dev/null\n"
                              "if : </dev/tty; then exit 4; fi 2>/dev/null   # no terminal\n"
                              "```\n");
    int st;
    char *out = runner(&st, "'%s'", md);
    CHECK_MSG(st == 0, "runner exited %d:\n%s", st, out);
    CHECK_MSG(has(out, "2 blocks run: 2 ok, 0 failed"), "wrong count line:\n%s", out);
    free(out);
}

TEST(readme_examples_time_out) {
    SKIP_UNLESS_PYTHON();
    /* the sleep runs in the background: the whole process group must die */
    const char *md = write_md("slow.md", "```sh\nsleep 60 &\necho $! > bg.pid\nwait\n```\n");
    const char *keep = test_tmp("slow-scratch");
    int st;
    double t0 = clock_now();
    char *out = runner(&st, "--timeout 2 --keep '%s' '%s'", keep, md);
    double secs = clock_now() - t0;
    CHECK_MSG(st == 1, "runner exited %d, expected 1:\n%s", st, out);
    CHECK_MSG(has(out, "slow.md:2 FAILED (timed out after 2 s"), "no timeout reported:\n%s", out);
    CHECK_MSG(secs < 10, "a 2 s timeout took %.1f s", secs);
    free(out);

    char pidfile[1100];
    snprintf(pidfile, sizeof pidfile, "%s/bg.pid", keep);
    char *pid = test_read_file(pidfile, NULL);
    CHECK_MSG(pid && atoi(pid) > 0, "the block did not record its background pid");
    if (pid && atoi(pid) > 0) {
        /* gone, or a zombie waiting for init to reap it */
        char stat[64];
        int alive = 1;
        snprintf(stat, sizeof stat, "/proc/%d/stat", atoi(pid));
        for (int i = 0; i < 50 && alive; i++) {
            char line[512] = "";
            FILE *f = fopen(stat, "r");  /* read directly: /proc files have no size */
            if (f) {
                if (!fgets(line, sizeof line, f)) line[0] = 0;
                fclose(f);
            }
            char *paren = strrchr(line, ')');
            alive = paren && paren[1] == ' ' && paren[2] != 'Z';
            if (alive) nanosleep(&(struct timespec){0, 20000000}, NULL);
        }
        CHECK_MSG(!alive, "the block's background sleep (pid %d) outlived the timeout", atoi(pid));
    }
    free(pid);
}
