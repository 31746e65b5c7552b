/* test_hf_bad.c — Hugging Face model folders at the command line.
 *
 * Every malformed folder written by tests/fixtures/hf/make_bad_hf.py (bad
 * config.json, safetensors headers, shards, tokenizer.json) must be refused
 * by `ahascope info --model DIR` (and, for the tokenizer cases, by
 * `ahascope generate`) with exit status 1 and exactly one stderr line
 * "ahascope CMD: ..." naming the file or tensor at fault, and without a
 * sanitizer report. The valid folders (the base the bad ones are copied
 * from, and every model of make_hf.py) must load, and `info` must name the
 * architecture.
 *
 * The fixtures are made at run time into the test's scratch directory by a
 * python3 with NumPy; the tests skip when there is none.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"

#define FIX "tests/fixtures/hf/"

static const char *python(void) { return test_python_numpy(); }

/* Run `python script ARG` from the fixture directory; 0 on success (a
 * failure is recorded with the script's output). */
static int run_script(const char *script, const char *arg) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' " FIX "%s '%s'", python(), script, arg);
    int st;
    char *out = test_run(cmd, &st);
    if (st != 0) test_fail(__FILE__, __LINE__, "%s %s failed (status %d):\n%s", script, arg, st, out ? out : "");
    free(out);
    return st;
}

/* The fixture directory made by `script` into the scratch directory `name`,
 * made once per test run; NULL (after test_skip or a recorded failure) if
 * it cannot be made. */
static const char *fixtures(const char *script, const char *name, char *dir, size_t cap, int *state) {
    if (!python()) {
        test_skip("no python3 with numpy (set AHASCOPE_PYTHON); cannot make the HF fixtures");
        return NULL;
    }
    if (*state == 0) {
        snprintf(dir, cap, "%s", test_tmp(name));
        *state = run_script(script, dir) == 0 ? 1 : -1;
    } else if (*state < 0) {
        test_fail(__FILE__, __LINE__, "%s failed earlier", script);
    }
    return *state > 0 ? dir : NULL;
}

static const char *bad_dir(void) {
    static char dir[1024];
    static int state;
    return fixtures("make_bad_hf.py", "hfbad", dir, sizeof dir, &state);
}

static const char *good_dir(void) {
    static char dir[1024];
    static int state;
    return fixtures("make_hf.py", "hfgood", dir, sizeof dir, &state);
}

static cJSON *load_json(const char *path) { return test_read_json(path); }

typedef struct {
    int status;
    char *out, *err; /* never NULL */
    char cmd[4096];
} Run;

/* `ahascope ARGS` with stdout and stderr captured apart. A `timeout` guards
 * against a loader that hangs (status 124) on an absurd config. */
static Run run_cli(const char *args) {
    Run r;
    char out[1024], err[1024];
    snprintf(out, sizeof out, "%s", test_tmp("hf_cli.out"));
    snprintf(err, sizeof err, "%s", test_tmp("hf_cli.err"));
    snprintf(r.cmd, sizeof r.cmd, "%s %s", test_bin(), args);
    char full[6400];
    snprintf(full, sizeof full, "timeout 120 %s >'%s' 2>'%s'", r.cmd, out, err);
    free(test_run(full, &r.status));
    r.out = test_read_file(out, NULL);
    r.err = test_read_file(err, NULL);
    if (!r.out) r.out = strdup("");
    if (!r.err) r.err = strdup("");
    return r;
}

static void run_free(Run *r) {
    free(r->out);
    free(r->err);
}

static int sanitizer_report(const char *s) {
    return strstr(s, "ERROR: AddressSanitizer") || strstr(s, "ERROR: LeakSanitizer") || strstr(s, "runtime error:");
}

/* Exactly one line: non-empty, one '\n', at the end. */
static int one_line(const char *s) {
    size_t n = strlen(s);
    return n > 0 && s[n - 1] == '\n' && !memchr(s, '\n', n - 1);
}

/* `args` (a command and its flags) must fail cleanly: status 1, one stderr
 * line "ahascope CMD: ..." that contains `expect`, no sanitizer report anywhere. */
static void expect_refusal(const char *what, const char *args, const char *expect) {
    Run r = run_cli(args);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "ahascope %.*s: ", (int)strcspn(args, " "), args);
    int ok = r.status == 1 && one_line(r.err) && !strncmp(r.err, prefix, strlen(prefix)) && strstr(r.err, expect) &&
             !sanitizer_report(r.err) && !sanitizer_report(r.out);
    if (!ok)
        test_fail(__FILE__, __LINE__,
                  "%s: `%s`\n      wanted status 1 and one line \"%s...%s...\";\n"
                  "      got status %d%s, stderr: %.600s",
                  what, r.cmd, prefix, expect, r.status, r.status == 124 ? " (timed out)" : "", r.err);
    run_free(&r);
}

/* `args` must succeed without a sanitizer report, and its stdout contain
 * `want` (if given). */
static void expect_success(const char *args, const char *want) {
    Run r = run_cli(args);
    int ok = r.status == 0 && !sanitizer_report(r.err) && !sanitizer_report(r.out) && (!want || strstr(r.out, want));
    if (!ok)
        test_fail(__FILE__, __LINE__, "`%s`: wanted status 0%s%s%s; got status %d, stdout: %.400s\n      stderr: %.600s",
                  r.cmd, want ? " and \"" : "", want ? want : "", want ? "\" on stdout" : "", r.status, r.out, r.err);
    run_free(&r);
}

TEST(hf_bad_folders_are_refused_in_one_line) {
    const char *dir = bad_dir();
    if (!dir) return;
    char path[1200];
    snprintf(path, sizeof path, "%s/cases.json", dir);
    cJSON *cases = load_json(path);
    if (!cases) return;
    CHECK(cJSON_GetArraySize(cases) >= 16);
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(c, "dir"));
        const char *expect = cJSON_GetStringValue(cJSON_GetObjectItem(c, "expect"));
        if (!d || !expect) {
            test_fail(__FILE__, __LINE__, "cases.json: an entry without dir/expect");
            continue;
        }
        char args[1400];
        snprintf(args, sizeof args, "info --model '%s/%s'", dir, d);
        expect_refusal(d, args, expect);
        if (cJSON_IsTrue(cJSON_GetObjectItem(c, "generate"))) {
            snprintf(args, sizeof args, "generate --model '%s/%s' --prompt hi --steps 2", dir, d);
            expect_refusal(d, args, expect);
        }
    }
    cJSON_Delete(cases);
}

/* The folders the bad cases are copied from load (otherwise every refusal
 * above could be for the wrong reason), tokenizer included. */
TEST(hf_bad_base_folders_load) {
    const char *dir = bad_dir();
    if (!dir) return;
    const char *bases[] = {"base", "base-sharded"};
    for (int i = 0; i < 2; i++) {
        char args[1400];
        snprintf(args, sizeof args, "info --model '%s/%s'", dir, bases[i]);
        expect_success(args, "llama");
        snprintf(args, sizeof args, "generate --model '%s/%s' --prompt hi --steps 2", dir, bases[i]);
        expect_success(args, NULL);
    }
}

/* Every folder of make_hf.py loads and `info` names its architecture; the
 * reference's own consistency checks pass. */
TEST(hf_good_folders_info) {
    const char *dir = good_dir();
    if (!dir) return;
    run_script("make_hf.py", "--selftest");
    char path[1200];
    snprintf(path, sizeof path, "%s/models.json", dir);
    cJSON *models = load_json(path);
    if (!models) return;
    CHECK(cJSON_GetArraySize(models) >= 9);
    const cJSON *m;
    cJSON_ArrayForEach(m, models) {
        const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(m, "dir"));
        const char *arch = cJSON_GetStringValue(cJSON_GetObjectItem(m, "model_type"));
        if (!d || !arch) {
            test_fail(__FILE__, __LINE__, "models.json: an entry without dir/model_type");
            continue;
        }
        char args[1400];
        snprintf(args, sizeof args, "info --model '%s/%s'", dir, d);
        expect_success(args, arch);
    }
    cJSON_Delete(models);
    /* a bf16 folder caches bf16 keys and values unless told otherwise */
    char args[1400];
    snprintf(args, sizeof args, "info --model '%s/llama-bf16'", dir);
    expect_success(args, "kv cache      bf16");
    snprintf(args, sizeof args, "info --model '%s/llama-bf16' --kv-dtype f32", dir);
    expect_success(args, "kv cache      f32");
}

/* --chat on the base folder (a Llama-3-style byte-level tokenizer): with a
 * Llama-3 chat_template the prompt is wrapped, <|begin_of_text|> comes once
 * (the text carries it, the encoder must not add another) and <|eot_id|> is
 * one id; with no template a llama folder has no known format, and a
 * llama2.c vocabulary cannot take --chat at all. */
TEST(hf_chat_wraps_the_prompt_once) {
    const char *dir = bad_dir();
    if (!dir) return;
    char chat[600], cmd[8192];
    int st;
    snprintf(chat, sizeof chat, "%s", test_tmp("hfchat"));
    snprintf(cmd, sizeof cmd, "cp -r '%s/base' '%s' && printf '%%s' '{\"bos_token\": \"<|begin_of_text|>\", "
             "\"eos_token\": \"<|end_of_text|>\", \"chat_template\": \"{{ bos_token }}<|start_header_id|>user\"}' "
             "> '%s/tokenizer_config.json' && sed -i 's/\"max_position_embeddings\": *64/\"max_position_embeddings\": 256/' "
             "'%s/config.json'", dir, chat, chat, chat);
    free(test_run(cmd, &st));
    CHECK_INT(st, 0);
    snprintf(cmd, sizeof cmd, "%s generate --model '%s' --chat --prompt hi --steps 120 --temperature 0 --ids 2>&1", test_bin(), chat);
    char *out = test_run(cmd, &st);
    CHECK_INT(st, 0);
    int ids[256], n = 0, bos = 0, eot = 0;
    for (char *p = out, *end; p && n < 256; p = end) {
        long v = strtol(p, &end, 10);
        if (end == p) break;
        ids[n++] = (int)v;
    }
    for (int i = 0; i < n; i++) bos += ids[i] == 266, eot += ids[i] == 268;
    CHECK_MSG(n > 10 && ids[0] == 266 && bos == 1, "chat ids: %s", out ? out : "");
    CHECK_MSG(eot >= 1, "<|eot_id|> should be one id: %s", out ? out : "");
    free(out);
    snprintf(cmd, sizeof cmd, "%s generate --model '%s/base' --chat --prompt hi --steps 4 2>&1", test_bin(), dir);
    out = test_run(cmd, &st);
    CHECK_INT(st, 1);
    CHECK_MSG(out && strstr(out, "no chat format known"), "%s", out ? out : "");
    free(out);
    if (!test_shared_available()) return;
    snprintf(cmd, sizeof cmd, "%s generate --model %s --chat --prompt hi --steps 4 2>&1", test_bin(),
             test_stories_model());
    out = test_run(cmd, &st);
    CHECK_INT(st, 1);
    CHECK_MSG(out && strstr(out, "tokenizer.json"), "%s", out ? out : "");
    free(out);
}

/* A copy of fixture folder `name` with `file` replaced by a FIFO. */
static const char *fifo_folder(const char *name, const char *file) {
    static char dir[1100];
    const char *good = good_dir();
    if (!good) return NULL;
    snprintf(dir, sizeof dir, "%s", test_tmp("hf-fifo"));
    int st;
    free(test_runf(&st, "rm -rf '%s' && cp -r '%s/%s' '%s' && rm -f '%s/%s' && mkfifo '%s/%s'", dir, good, name, dir,
                   dir, file, dir, file));
    CHECK_INT(st, 0);
    return st == 0 ? dir : NULL;
}

/* Any file of a folder as a FIFO: refused at once, by name, never waited
 * on (`timeout 5` turns a regression into a failure, not a hang). */
TEST(hf_fifo_files_in_a_folder_are_refused_without_blocking) {
    static const struct { const char *folder, *file; } cases[] = {
        {"llama", "config.json"},
        {"llama", "model.safetensors"},
        {"llama-sharded", "model.safetensors.index.json"},
        {"llama-sharded", "model-00002-of-00002.safetensors"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *dir = fifo_folder(cases[i].folder, cases[i].file);
        if (!dir) return;
        int st;
        char *o = test_runf(&st, "timeout 5 %s info --model '%s' 2>&1 >/dev/null", test_bin(), dir);
        CHECK_MSG(st == 1 && o && one_line(o) && strstr(o, cases[i].file) && strstr(o, "(a FIFO)"),
                  "%s/%s: status %d%s: %s", cases[i].folder, cases[i].file, st, st == 124 ? " (blocked)" : "",
                  o ? o : "");
        free(o);
    }
}
