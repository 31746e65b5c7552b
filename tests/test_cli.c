/* test_cli.c — the command line as users meet it: one line and an exit status, never a crash.
 *
 * The command line as users meet it: malformed inputs give one line on
 * stderr, "ahascope CMD: ...", and exit 2 (usage) or 1 (failure), never a
 * crash (this suite also runs under ASan+UBSan); every --help tells which
 * flags are optional; edge cases of generation behave like llama2.c. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model.h"
#include "tests/test.h"

/* Run `ahascope ARGS`; returns the output (malloc'd) and sets *status. */
static char *run(int *status, const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s", test_bin(), args);
    return test_run(cmd, status);
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* A failing invocation `CMD ...`: exit `status` (2 a usage error, 1 a
 * failure; no signal), exactly one line of output, "ahascope CMD: ...",
 * containing `needle`. */
static void expect_error(int status, const char *args, const char *needle) {
    int st;
    char *out = run(&st, args);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "ahascope %.*s: ", (int)strcspn(args, " "), args);
    CHECK_MSG(st == status, "`%s` exited %d, expected %d", args, st, status);
    CHECK_MSG(out && count_lines(out) == 1 && strncmp(out, prefix, strlen(prefix)) == 0, "`%s` printed: %s", args,
              out ? out : "");
    CHECK_MSG(out && strstr(out, needle), "`%s`: expected '%s' in: %s", args, needle, out ? out : "");
    free(out);
}

static Model tiny(int shared) {
    Config c = {.dim = 16, .hidden_dim = 24, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 300,
                .seq_len = 32, .shared_classifier = shared};
    Model m;
    Err e;
    model_random(&m, &c, 9, &e);
    return m;
}

/* Write a v0 checkpoint whose header fields are patched. */
static const char *patched(const char *name, int field, int32_t value, long size_delta) {
    Model m = tiny(1);
    Err e;
    const char *p = test_tmp(name);
    model_save(&m, p, 0, &e);
    model_free(&m);
    long n;
    char *buf = test_read_file(p, &n);
    if (field >= 0) memcpy(buf + 4 * field, &value, 4);
    if (size_delta > 0) { buf = realloc(buf, n + size_delta); memset(buf + n, 0, size_delta); }
    test_write_file(p, buf, n + size_delta);
    free(buf);
    return p;
}

TEST(cli_malformed_checkpoints) {
    char a[2048];
    const char *tokf = test_tmp("none.bin");
#define MODEL_ERR(path, needle) do { snprintf(a, sizeof a, "generate --model '%s' --tokenizer '%s' --prompt x", path, tokf); expect_error(1, a, needle); } while (0)
    MODEL_ERR(patched("neg_dim.bin", 0, -16, 0), "dim must be positive");
    MODEL_ERR(patched("zero_layers.bin", 2, 0, 0), "n_layers must be positive");
    MODEL_ERR(patched("heads_nodiv.bin", 3, 3, 0), "does not divide dim");
    MODEL_ERR(patched("kv_nodiv.bin", 4, 3, 0), "does not divide n_heads");
    MODEL_ERR(patched("huge_dim.bin", 0, 1 << 30, 0), "absurdly large");
    MODEL_ERR(patched("huge_seq.bin", 6, 0x7fffffff, 0), "absurdly large");
    MODEL_ERR(patched("neg_seq.bin", 6, -1, 0), "seq_len must be positive");
    MODEL_ERR(patched("vocab_flip.bin", 5, -300, 0), "needs");       /* claims a separate classifier that is absent */
    MODEL_ERR(patched("oversized.bin", -1, 0, 100), "needs");
    MODEL_ERR(patched("odd_head.bin", 3, 16, 0), "odd");
    Model m = tiny(1);
    Err e;
    const char *p = test_tmp("trunc.bin");
    model_save(&m, p, 0, &e);
    long n;
    char *buf = test_read_file(p, &n);
    test_write_file(p, buf, n / 2);
    MODEL_ERR(p, "needs");
    test_write_file(test_tmp("tiny.bin"), buf, 10);
    MODEL_ERR(test_tmp("tiny.bin"), "too short");
    test_write_file(test_tmp("empty.bin"), buf, 0);
    MODEL_ERR(test_tmp("empty.bin"), "empty");
    free(buf);
    model_save(&m, test_tmp("v1.bin"), 1, &e);
    buf = test_read_file(test_tmp("v1.bin"), &n);
    int32_t bad_version = 7;
    memcpy(buf + 4, &bad_version, 4);
    test_write_file(test_tmp("v1_badver.bin"), buf, n);
    MODEL_ERR(test_tmp("v1_badver.bin"), "version 7");
    test_write_file(test_tmp("v1_short.bin"), buf, 100);
    MODEL_ERR(test_tmp("v1_short.bin"), "truncated v1 header");
    free(buf);
    model_free(&m);
    MODEL_ERR(test_tmp("does_not_exist.bin"), "cannot open model");
    MODEL_ERR("/", "nor a llama2.c checkpoint");
#undef MODEL_ERR
}

TEST(cli_bad_tokenizer_and_prompts) {
    SKIP_UNLESS_SHARED();
    char a[4096];
    const char *model = test_stories_model();
    test_write_file(test_tmp("badtok.bin"), "\x05\x00\x00\x00\x00\x00", 6);
    snprintf(a, sizeof a, "generate --model %s --tokenizer %s --prompt hi", model, test_tmp("badtok.bin"));
    expect_error(1, a, "badtok.bin");
    snprintf(a, sizeof a, "generate --model %s --tokenizer %s --prompt hi", model, test_shared("models/llama2-tokenizer.bin"));
    int st;
    char *out = run(&st, a); /* a 32000-token vocabulary is longer than the model's 512: llama2.c reads only 512 */
    CHECK_INT(st, 0);
    free(out);
    char *longp = malloc(3000);
    for (int i = 0; i < 2900; i++) longp[i] = "ab cd "[i % 6];
    longp[2900] = 0;
    snprintf(a, sizeof a, "generate --model %s --prompt '%s'", model, longp);
    expect_error(1, a, "context is 512");
    free(longp);
    snprintf(a, sizeof a, "generate --model %s --temperature 0 --steps 12 --prompt \"$(printf 'caf\\303\\251 \\377\\376 bad')\"", model);
    out = run(&st, a);
    CHECK_MSG(st == 0 && out && strstr(out, "caf\xc3\xa9"), "invalid UTF-8 prompt: %d %s", st, out ? out : "");
    free(out);
}

TEST(cli_bad_flags) {
    expect_error(2, "generate --steps abc", "not a whole number");
    expect_error(2, "generate --steps -3", "out of range");
    expect_error(2, "generate --temperature nan", "not a number");
    expect_error(2, "generate --topp 2", "out of range");
    expect_error(2, "generate --seed x1", "not a whole number");
    expect_error(2, "generate --prompt", "needs a value");
    expect_error(2, "generate --frobnicate", "unknown flag");
    expect_error(2, "generate --kv-dtype f8", "--kv-dtype must be f32, bf16 or f16");
    expect_error(2, "generate --policy wild", "unknown policy");
    expect_error(2, "generate --window 0", "out of range");
    expect_error(2, "bench --shape 7B", "unknown shape");
    expect_error(2, "bench --dims 1,2,3", "7 comma-separated");
    expect_error(2, "bench --dims 64,172,5,8,3,512,512", "does not divide");
    int st;
    char *out = run(&st, "frobnicate"); /* no command known yet: no command in the line */
    CHECK_MSG(st == 2 && out && !strcmp(out, "ahascope: unknown command 'frobnicate' (try: ahascope --help)\n"), "%d %s", st,
              out ? out : "");
    free(out);
    out = run(&st, "generate --help");
    CHECK(st == 0 && out && strstr(out, "usage: ahascope generate"));
    free(out);
    out = run(&st, "bench --tui --runs 1 --json");
    CHECK(st == 0 && out && strstr(out, "\"frame_ms\": ") && strstr(out, "\"heads\": 16"));
    free(out);
    out = run(&st, "bench --tui-heads 32x32 --tui-size 250x70 --runs 1 --json"); /* the shapes people open */
    CHECK_MSG(st == 0 && out && strstr(out, "\"cols\": 250, \"rows\": 70, \"layers\": 32, \"heads\": 32"), "%s", out);
    free(out);
    out = run(&st, "bench --tui-heads 2x2 --tui-size 100x30 --tui-tokens 5000 --runs 1 --json"); /* binned */
    CHECK_MSG(st == 0 && out && strstr(out, "\"tokens\": 5000, "), "%s", out);
    free(out);
    expect_error(2, "bench --tui-heads 32", "LAYERSxHEADS");
    expect_error(2, "bench --tui-tokens 0", "--tui-tokens");
    out = run(&st, "bench --help");
    CHECK(st == 0 && out && strstr(out, "usage: ahascope bench"));
    free(out);
}

/* The dtype comparison reports both dtypes, the median of the paired
 * steps' ratios beside the ratio of the medians, and roofline fractions
 * that count the KV cache on top of the weights. */
TEST(cli_bench_dtype_reports_paired_figures) {
    int st;
    char *out = run(&st, "bench --shape 260K --dtype bf16 --runs 3 --prompt-len 8 --decode 8 --threads 1 --json");
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j, "bench --dtype --json: %d %s", st, out ? out : "");
    if (j) {
        cJSON *f = cJSON_GetObjectItem(j, "f32"), *h = cJSON_GetObjectItem(j, "bf16");
        double ratio = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "decode_ratio"));
        double of_medians = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "decode_ratio_of_medians"));
        CHECK(f && h && isfinite(ratio) && ratio > 0 && isfinite(of_medians) && of_medians > 0);
        CHECK_INT((int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "runs")), 3);
        CHECK_INT((int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "steps")), 24);
        double rf = cJSON_GetNumberValue(cJSON_GetObjectItem(h, "roofline_frac"));
        double rfw = cJSON_GetNumberValue(cJSON_GetObjectItem(h, "roofline_frac_weights"));
        CHECK(isfinite(rf) && rf > 0 && rfw > 0 && rfw < rf); /* the KV cache adds bytes */
        CHECK_NEAR(of_medians, cJSON_GetNumberValue(cJSON_GetObjectItem(h, "decode_tok_s")) /
                                   cJSON_GetNumberValue(cJSON_GetObjectItem(f, "decode_tok_s")), 1e-3);
        /* half the weight bytes, give or take the f32 norms */
        double wf = cJSON_GetNumberValue(cJSON_GetObjectItem(f, "weight_bytes"));
        double wh = cJSON_GetNumberValue(cJSON_GetObjectItem(h, "weight_bytes"));
        CHECK_MSG(wh > 0.45 * wf && wh < 0.56 * wf, "weight bytes f32 %.0f bf16 %.0f", wf, wh);
        /* a bf16 model caches bf16 keys and values: exactly half the cache bytes */
        double kf = cJSON_GetNumberValue(cJSON_GetObjectItem(f, "kv_bytes"));
        double kh = cJSON_GetNumberValue(cJSON_GetObjectItem(h, "kv_bytes"));
        CHECK_MSG(kf > 0 && kh * 2 == kf, "kv bytes f32 %.0f bf16 %.0f", kf, kh);
        CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(h, "kv_dtype")), "bf16"));
    }
    cJSON_Delete(j);
    free(out);
    out = run(&st, "bench --shape 260K --dtype bf16 --kv-dtype f32 --runs 1 --prompt-len 4 --decode 4 --threads 1 --json");
    j = out ? cJSON_Parse(out) : NULL;
    cJSON *h = j ? cJSON_GetObjectItem(j, "bf16") : NULL;
    CHECK_MSG(st == 0 && h && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(h, "kv_dtype")), "f32"),
              "bench --kv-dtype f32: %s", out ? out : "");
    cJSON_Delete(j);
    free(out);
    out = run(&st, "bench --shape 260K --dtype f16 --runs 1 --prompt-len 4 --decode 4 --threads 1");
    CHECK_MSG(st == 0 && out && strstr(out, "f16 decode / f32 decode = ") && strstr(out, "median of 4 paired steps over 1 rounds"),
              "bench --dtype f16: %s", out ? out : "");
    free(out);
}

static double num(const cJSON *j, const char *key) { return cJSON_GetNumberValue(cJSON_GetObjectItem(j, key)); }

/* The byte split of a step in every mode's JSON, against the 260K shape by
 * hand: head size 8, 5 layers × 4 KV heads, so a cached position is 5·4·2·8
 * elements; weights 259328 matrix elements and 704 f32 norm elements. */
TEST(cli_bench_reports_the_byte_split) {
    int st;
    char *out = run(&st, "bench --bytes-only --shape 260K --context 100 --window 16 --sinks 2 --json");
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j, "bench --bytes-only --json: %d %s", st, out ? out : "");
    if (j) {
        double w = (259328 + 704) * 4.0, local = 5 * 4 * 18 * 64.0, global = 5 * 4 * 101 * 64.0;
        CHECK_INT(num(j, "context"), 100);
        CHECK_INT(num(j, "window"), 16);
        CHECK_INT(num(j, "sinks"), 2);
        CHECK_NEAR(num(j, "weight_bytes_step"), w, 0);
        CHECK_NEAR(num(j, "kv_bytes_all_local"), local, 0);
        CHECK_NEAR(num(j, "kv_bytes_all_global"), global, 0);
        CHECK_NEAR(num(j, "kv_share_all_local"), local / (w + local), 1e-6);
        CHECK_NEAR(num(j, "kv_share_all_global"), global / (w + global), 1e-6);
        CHECK_NEAR(num(j, "max_saving"), 1 - (w + local) / (w + global), 1e-6);
    }
    cJSON_Delete(j);
    free(out);
    out = run(&st, "bench --bytes-only --shape 260K --dtype bf16 --context 100 --window 16 --json");
    j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j && num(j, "weight_bytes_step") == 259328 * 2 + 704 * 4 &&
                  num(j, "kv_bytes_all_global") == 5 * 4 * 101 * 32 && num(j, "kv_bytes_all_local") == 5 * 4 * 16 * 32,
              "bench --bytes-only --dtype bf16: %s", out ? out : "");
    cJSON_Delete(j);
    free(out);
    /* throughput: at the middle decode step, whose all-global bytes are kv_bytes */
    out = run(&st, "bench --shape 260K --runs 1 --prompt-len 40 --decode 8 --window 8 --threads 1 --json");
    j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j, "bench --json: %d %s", st, out ? out : "");
    if (j) {
        CHECK_INT(num(j, "context"), 40 + 4 - 1);
        CHECK_NEAR(num(j, "kv_bytes_all_global"), num(j, "kv_bytes"), 0);
        CHECK_NEAR(num(j, "weight_bytes_step"), num(j, "weight_bytes"), 0);
        CHECK_NEAR(num(j, "kv_bytes_all_local"), 5 * 4 * 8 * 64.0, 0);
        CHECK(num(j, "max_saving") > 0 && isfinite(num(j, "decode_tok_s"))); /* the old keys stay */
    }
    cJSON_Delete(j);
    free(out);
    /* context mode: the bytes the timed step's gates read lie between the
     * bounds, and are each bound under the policies that make them */
    const char *pol[] = {"full", "local", "random --p 0.3"};
    for (int i = 0; i < 3; i++) {
        char args[256];
        snprintf(args, sizeof args, "bench --shape 260K --context 200 --window 16 --policy %s --runs 1 --threads 1 --json", pol[i]);
        out = run(&st, args);
        j = out ? cJSON_Parse(out) : NULL;
        CHECK_MSG(st == 0 && j, "%s: %d %s", args, st, out ? out : "");
        if (j) {
            double rd = num(j, "kv_bytes_read"), lo = num(j, "kv_bytes_all_local"), hi = num(j, "kv_bytes_all_global");
            CHECK_NEAR(hi, 5 * 4 * 201 * 64.0, 0);
            CHECK_MSG(i == 0 ? rd == hi : i == 1 ? rd == lo : rd > lo && rd < hi, "%s: read %.0f of %.0f..%.0f", args, rd, lo, hi);
            CHECK(num(j, "step_ms") > 0 && isfinite(num(j, "kv_share_read")));
        }
        cJSON_Delete(j);
        free(out);
    }
    out = run(&st, "bench --bytes-only --shape 260K --context 100 --window 16");
    CHECK_MSG(st == 0 && out && strstr(out, "KV all global") && strstr(out, "max saving"), "text: %s", out ? out : "");
    free(out);
    expect_error(2, "bench --bytes-only --record", "--bytes-only");
    expect_error(2, "bench --bytes-only --save m.bin", "--save"); /* it used to write nothing and say nothing */
}

static char *ids_of(const char *args) {
    char a[2048];
    snprintf(a, sizeof a, "generate --model %s --temperature 0 --ids %s", test_stories_model(), args);
    int st;
    char *out = run(&st, a);
    CHECK_MSG(st == 0, "`%s` failed: %s", a, out ? out : "");
    return out;
}

static int count_ids(const char *s) {
    int n = 0;
    for (const char *p = s; *p; p++) n += *p == ' ';
    return *s ? n + 1 : 0;
}

TEST(cli_generate_edge_cases) {
    SKIP_UNLESS_SHARED();
    char *out = ids_of("--prompt '' --steps 4");
    CHECK(out && strcmp(out, "1 403 407 261 378\n") == 0); /* empty prompt: BOS then the golden continuation */
    free(out);
    /* fewer steps than prompt tokens: llama2.c keeps steps + 1 of them (and says so on stderr) */
    out = ids_of("--prompt 'Once upon a time' --steps 2 2>/dev/null");
    CHECK(out && strcmp(out, "1 403 407\n") == 0);
    free(out);
    out = ids_of("--prompt 'Once upon a time' --steps 5000"); /* capped at the context (512) */
    CHECK(out && count_ids(out) <= 513 && count_ids(out) > 100);
    free(out);
    out = ids_of("--prompt 'The cat sat on the mat. The dog' --steps 256"); /* stops after emitting BOS */
    CHECK(out && count_ids(out) == 193 && strstr(out, " 426 1\n"));
    free(out);
    char a[1024];
    int st;
    snprintf(a, sizeof a, "generate --model %s --temperature 0.9 --seed 11 --steps 40 --prompt Lily",
             test_stories_model());
    char *x = run(&st, a), *y = run(&st, a);
    CHECK(x && y && strcmp(x, y) == 0); /* same seed, same text */
    free(x);
    free(y);
}

TEST(cli_trace_jsonl_and_policies) {
    SKIP_UNLESS_SHARED();
    char a[1024];
    int st;
    const char *model = test_stories_model();
    snprintf(a, sizeof a, "trace --model %s --prompt 'Once upon a time' --steps 12 --temperature 0 --policy local "
                          "--window 3 --sinks 1 --profile --jsonl 2>/dev/null", model);
    char *out = run(&st, a);
    CHECK_INT(st, 0);
    int lines = 0;
    for (char *line = out, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        cJSON *o = cJSON_Parse(line);
        CHECK_MSG(o != NULL, "line %d is not JSON", lines);
        if (!o) break;
        int pos = cJSON_GetObjectItem(o, "pos")->valueint;
        CHECK_INT(pos, lines);
        cJSON *kr = cJSON_GetObjectItem(o, "keys_read"), *om = cJSON_GetObjectItem(o, "oracle_logit");
        CHECK_INT(cJSON_GetArraySize(kr), 40); /* 5 layers x 8 heads */
        int expect = pos + 1 < 4 ? pos + 1 : 4; /* 1 sink + window 3 */
        CHECK_INT(cJSON_GetArrayItem(kr, 17)->valueint, expect);
        /* positions 0-3 have no far keys: no mass outside the local set to speak of */
        CHECK(pos < 4 ? cJSON_IsNull(cJSON_GetArrayItem(om, 0)) : cJSON_IsNumber(cJSON_GetArrayItem(om, 0)));
        CHECK_INT(cJSON_GetObjectItem(o, "n_far")->valueint, pos + 1 > 4 ? pos + 1 - 4 : 0);
        CHECK(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "score"), 0))); /* no routers */
        CHECK(pos > 0 || cJSON_IsNull(cJSON_GetObjectItem(o, "logprob")));
        cJSON_Delete(o);
        lines++;
    }
    CHECK_INT(lines, 12);
    free(out);
    snprintf(a, sizeof a, "generate --model %s --prompt hi --steps 8 --policy static --static-heads 0.1,4.7", model);
    out = run(&st, a);
    CHECK_INT(st, 0);
    free(out);
    snprintf(a, sizeof a, "generate --model %s --prompt hi --policy static --static-heads 5.0", model);
    expect_error(1, a, "out of range"); /* the model has 5 layers */
    snprintf(a, sizeof a, "generate --model %s --prompt hi --policy static", model);
    expect_error(2, a, "needs a head set");
    snprintf(a, sizeof a, "generate --model %s --prompt hi --policy aha", model);
    expect_error(1, a, "needs routers"); /* some models carry their own */
    snprintf(a, sizeof a, "generate --model %s --prompt hi --routers %s", model, test_tmp("nope.safetensors"));
    expect_error(1, a, "nope.safetensors");
    snprintf(a, sizeof a, "generate --model %s --prompt hi --routers random:x", model);
    expect_error(2, a, "bad seed");
    snprintf(a, sizeof a, "generate --model %s --prompt hi --sinks 600", model);
    expect_error(1, a, "exceeds the context");
}

/* ---- one error convention, honest --help texts ---- */

/* The commands `ahascope --help` lists (app/main.c's table), one per line
 * of a malloc'd string; NULL if the listing cannot be read. */
static char *listed_commands(void) {
    int st;
    char *out = run(&st, "--help");
    const char *at = out && st == 0 ? strstr(out, "commands:\n") : NULL;
    char *names = at ? calloc(1, strlen(at) + 1) : NULL;
    for (const char *p = at ? at + 10 : NULL; names && p && *p == ' ';) {
        p += strspn(p, " ");
        size_t n = strcspn(p, " \n");
        strncat(names, p, n);
        strcat(names, "\n");
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    free(out);
    return names;
}

/* `cmdline` (a whole shell command running CMD) exits `status` and prints
 * one line, "ahascope CMD: ...", that contains `needle`. */
static void expect_line(int status, const char *cmdline, const char *cmd, const char *needle) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "ahascope %s: ", cmd);
    CHECK_REFUSAL(cmdline, status, prefix, needle, 1);
}

/* Every command: an unknown flag is a usage error (2), a file it cannot
 * open a failure (1); both one line naming the command the user typed. */
TEST(cli_every_command_reports_errors_in_one_convention) {
    /* per command, flags naming a file that is not there (harmless if the command got further) */
    static const struct { const char *cmd, *bad_file; } table[] = {
        {"tui", NULL}, /* refuses without a terminal first: tests/test_tui.c tries a bad model */
        {"generate", "--model /nonexistent/m.bin"},
        {"trace", "--model /nonexistent/m.bin"},
        {"record", "--db /nonexistent/r.db"},
        {"runs", "--db /nonexistent/r.db"},
        {"query", "--db /nonexistent/r.db 'SELECT 1'"},
        {"export", "--db /nonexistent/r.db --run 1 --json"},
        {"compare", "--db /nonexistent/r.db --run 1"},
        {"merge", "--out /nonexistent/m.db /nonexistent/r.db"},
        {"train", "--model /nonexistent/m.bin --window 8 --out /nonexistent/r.safetensors"},
        {"fit", "--model /nonexistent/m.bin --window 8 --out /nonexistent/r.safetensors"},
        {"eval", "--model /nonexistent/m.bin"},
        {"sweep", "--model /nonexistent/m.bin --policy full --window 8"},
        {"calibrate", "--db /nonexistent/r.db --run 1 --budget 1 --out /nonexistent/h.txt"},
        {"tasks", "--task passkey --context 100 --n 1 --model /nonexistent/m.bin --out /nonexistent/t.jsonl"},
        {"pull", NULL}, /* takes no file; test_pull.c holds its errors to one line */
        {"info", "--model /nonexistent/m.bin"},
        {"convert", "--to hf --model /nonexistent/m.bin --out /nonexistent/d"},
        {"bench", "--model /nonexistent/m.bin"},
        {"run", "--model /nonexistent/m.bin"}, /* no terminal: generate's flags, errors still name run */
    };
    int n_table = (int)(sizeof table / sizeof table[0]);
    char *names = listed_commands();
    CHECK_MSG(names && *names, "cannot read the command list of `ahascope --help`");
    for (char *name = names, *next; name && *name; name = next) {
        next = strchr(name, '\n');
        *next++ = 0;
        int found = 0;
        for (int i = 0; i < n_table; i++) found |= !strcmp(table[i].cmd, name);
        CHECK_MSG(found, "command '%s' is missing from this test's table", name);
    }
    free(names);
    for (int i = 0; i < n_table; i++) {
        const char *cmd = table[i].cmd;
        char a[2048], env[1200] = "";
        if (!strcmp(cmd, "run")) { /* run finds the default model (or would download it) before it hands over */
            if (!test_shared_available()) continue;
            snprintf(env, sizeof env, "env AHASCOPE_MODELS=%s ", test_shared("models"));
        }
        snprintf(a, sizeof a, "%s%s %s --frobnicate </dev/null", env, test_bin(), cmd);
        expect_line(2, a, cmd, "unknown flag '--frobnicate'");
        if (!table[i].bad_file) continue;
        snprintf(a, sizeof a, "%s%s %s %s </dev/null", env, test_bin(), cmd, table[i].bad_file);
        expect_line(1, a, cmd, "/nonexistent/");
    }
}

/* A flag of a usage synopsis shown bare (outside [ ]): "--x" or
 * alternatives "--json|--csv", and the placeholder of its value if any. */
typedef struct {
    char flag[64], value[64];
} Bare;

/* What to pass for a placeholder: a lowercase literal as is ("hf"), a path
 * that does not exist for files, 1 for numbers and the rest. */
static const char *stand_in(const char *placeholder, char *buf, size_t cap) {
    char p[64]; /* without quotes or a list's tail: "SQL" -> SQL, W[,W...] -> W */
    const char *from = placeholder + (*placeholder == '"');
    snprintf(p, sizeof p, "%.*s", (int)strcspn(from, "\"["), from);
    if (strspn(p, "abcdefghijklmnopqrstuvwxyz") == strlen(p)) snprintf(buf, cap, "%s", p);
    else if (strstr(p, "FILE") || strstr(p, "DIR") || strstr(p, "PATH") || strchr(p, '.'))
        snprintf(buf, cap, "/nonexistent/x");
    else snprintf(buf, cap, "1");
    return buf;
}

/* Parse the synopsis forms of `help` (up to its first blank line) for one
 * form: its bare flags and positional arguments at bracket depth 0, and
 * whether it takes --model at all (*model). Forms start at each "ahascope
 * CMD"; returns how many forms there are. */
static int synopsis_form(const char *help, int form, Bare *bare, int *n_bare, char pos[][64], int *n_pos, int *model) {
    const char *end = strstr(help, "\n\n");
    size_t len = end ? (size_t)(end - help) : strlen(help);
    char *text = strndup(help, len);
    int forms = 0, depth = 0, after_flag = 0, skip = 0;
    *n_bare = *n_pos = *model = 0;
    for (char *save = NULL, *t = strtok_r(text, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
        int before = depth;
        for (const char *c = t; *c; c++) depth += (*c == '[') - (*c == ']');
        if (!strcmp(t, "ahascope")) { forms++, skip = 1, after_flag = 0; continue; }
        if (skip) { skip = 0; continue; } /* the command name */
        if (forms - 1 == form && (strstr(t, "--model") || !strcmp(t, "flags]")))
            *model = 1; /* "[model flags]" or "[generate flags]" take --model too */
        if (forms - 1 != form || before > 0 || t[0] == '[' || !strcmp(t, "usage:")) { after_flag = 0; continue; }
        if (!strncmp(t, "--", 2) && *n_bare < 16) {
            snprintf(bare[(*n_bare)++].flag, 64, "%s", t);
            bare[*n_bare - 1].value[0] = 0;
            after_flag = 1;
        } else if (after_flag) {
            snprintf(bare[*n_bare - 1].value, 64, "%s", t);
            after_flag = 0;
        } else if (*n_pos < 4) {
            snprintf(pos[(*n_pos)++], 64, "%s", t);
        }
    }
    free(text);
    return forms;
}

/* Every command answers --help on stdout with status 0; every flag its
 * synopsis shows bare is required: leaving it out (the others given) is a
 * usage error that names it. A bracketed flag is optional by the look of it. */
TEST(cli_help_brackets_exactly_the_optional_flags) {
    char *names = listed_commands();
    CHECK_MSG(names && *names, "cannot read the command list of `ahascope --help`");
    for (char *cmd = names, *next; cmd && *cmd; cmd = next) {
        next = strchr(cmd, '\n');
        *next++ = 0;
        char a[4096];
        int st;
        snprintf(a, sizeof a, "%s --help 2>/dev/null", cmd);
        char *help = run(&st, a);
        char want[64];
        snprintf(want, sizeof want, "usage: ahascope %s ", cmd);
        CHECK_MSG(st == 0 && help && !strncmp(help, want, strlen(want)), "`%s --help`: %d %s", cmd, st, help ? help : "");
        snprintf(a, sizeof a, "%s --help >/dev/null", cmd);
        char *err = run(&st, a);
        CHECK_MSG(st == 0 && err && !*err, "`%s --help` wrote on stderr: %s", cmd, err ? err : "");
        free(err);
        if (!help) continue;
        int forms = 1;
        for (int form = 0; form < forms; form++) {
            Bare bare[16];
            char pos[4][64];
            int n_bare, n_pos, form_model;
            forms = synopsis_form(help, form, bare, &n_bare, pos, &n_pos, &form_model);
            /* a second form ("tui --replay ...", "calibrate --format duo ...") is chosen by its first
             * flag, which is not left out, with its value */
            int first = form > 0 && n_bare > 0;
            for (int omit = first; omit < n_bare; omit++) {
                char buf[128];
                int k = snprintf(a, sizeof a, "%s", cmd);
                if (first) k += snprintf(a + k, sizeof a - k, " %s", bare[0].flag);
                if (first && bare[0].value[0]) k += snprintf(a + k, sizeof a - k, " %s", stand_in(bare[0].value, buf, sizeof buf));
                for (int i = first; i < n_bare; i++) {
                    if (i == omit) continue;
                    k += snprintf(a + k, sizeof a - k, " %.*s", (int)strcspn(bare[i].flag, "|"), bare[i].flag);
                    if (bare[i].value[0]) k += snprintf(a + k, sizeof a - k, " %s", stand_in(bare[i].value, buf, sizeof buf));
                }
                for (int i = 0; i < n_pos; i++) k += snprintf(a + k, sizeof a - k, " %s", stand_in(pos[i], buf, sizeof buf));
                /* a model that is not there: if the flag were not required, the command fails with 1, not 2 */
                int model_bare = 0;
                for (int i = 0; i < n_bare; i++) model_bare |= !strcmp(bare[i].flag, "--model");
                if (strstr(help, "--model ") && form_model && !model_bare) snprintf(a + k, sizeof a - k, " --model /nonexistent/m.bin");
                char *out = run(&st, a);
                int named = 0; /* the message names the flag, or one of its alternatives */
                char alts[64];
                snprintf(alts, sizeof alts, "%s", bare[omit].flag);
                for (char *s2 = NULL, *alt = strtok_r(alts, "|", &s2); alt; alt = strtok_r(NULL, "|", &s2))
                    named |= out && strstr(out, alt) != NULL;
                snprintf(want, sizeof want, "ahascope %s: ", cmd);
                CHECK_MSG(st == 2 && out && count_lines(out) == 1 && !strncmp(out, want, strlen(want)) && named,
                          "%s --help shows %s as required, but `%s` exited %d: %s", cmd, bare[omit].flag, a, st,
                          out ? out : "");
                free(out);
            }
        }
        free(help);
    }
    free(names);
}

/* "prefill N tok" of an AHASCOPE_VERBOSE run: the prompt's length in
 * tokens, BOS included; -1 if the line is missing. */
static int prefilled(const char *out) {
    const char *at = out ? strstr(out, "prefill ") : NULL;
    return at ? atoi(at + 8) : -1;
}

/* An empty prompt is a prompt: generation starts from BOS alone, in every
 * command that takes one, not from a default text. */
TEST(cli_empty_prompt_starts_from_bos) {
    SKIP_UNLESS_SHARED();
    const char *model = test_stories_model();
    char a[2048];
    int st;
    char *out = ids_of("--prompt '' --steps 8");
    CHECK_MSG(out && !strncmp(out, "1 ", 2) && count_ids(out) == 9, "generate --prompt '': %s", out ? out : "");
    free(out);
    snprintf(a, sizeof a, "env AHASCOPE_VERBOSE=1 %s generate --model %s --prompt '' --temperature 0 --steps 8 --ids", test_bin(),
             model);
    out = test_run(a, &st);
    CHECK_MSG(st == 0 && prefilled(out) == 1, "generate --prompt '' prefilled: %s", out ? out : "");
    free(out);
    /* run's default prompt is "Once upon a time" (5 tokens); an empty one replaces it */
    const char *prompts[] = {"--prompt ''", ""};
    int want[] = {1, 5};
    for (int i = 0; i < 2; i++) {
        snprintf(a, sizeof a, "env AHASCOPE_VERBOSE=1 AHASCOPE_MODELS=%s %s run %s --temperature 0 --steps 8 --ids </dev/null",
                 test_shared("models"), test_bin(), prompts[i]);
        out = test_run(a, &st);
        CHECK_MSG(st == 0 && prefilled(out) == want[i], "`%s`: %d %s", a, st, out ? out : "");
        free(out);
    }
    /* record keeps the empty prompt as it was given: one prompt token, BOS */
    const char *db = test_tmp("empty_prompt.db");
    snprintf(a, sizeof a, "%s record --db %s --model %s --prompt '' --temperature 0 --steps 6 >/dev/null && %s query --db %s "
             "\"SELECT quote(prompt), (SELECT SUM(is_prompt) FROM tokens), (SELECT token_id FROM tokens WHERE pos = 0) "
             "FROM runs\" --csv", test_bin(), db, model, test_bin(), db);
    out = test_run(a, &st);
    CHECK_MSG(st == 0 && out && strstr(out, "\r\n'',1,1\r\n"), "record --prompt '': %s", out ? out : "");
    free(out);
}

/* `run` hands over to tui or generate, but the user typed run: its error
 * lines say run (here on a pipe, where generate takes the flags). */
TEST(cli_run_errors_name_run) {
    SKIP_UNLESS_SHARED(); /* run looks for the default model (or downloads it) first */
    char a[2048];
    int st;
    snprintf(a, sizeof a, "env AHASCOPE_MODELS=%s %s run --no-record </dev/null", test_shared("models"), test_bin());
    char *out = test_run(a, &st);
    CHECK_MSG(st == 2 && out && count_lines(out) == 1 && !strncmp(out, "ahascope run: unknown flag '--no-record'", 40) &&
                  !strstr(out, "generate"),
              "`%s`: %d %s", a, st, out ? out : "");
    free(out);
    snprintf(a, sizeof a, "env AHASCOPE_MODELS=%s %s run --steps 0 </dev/null | cat", test_shared("models"), test_bin());
    out = test_run(a, &st);
    CHECK_MSG(out && count_lines(out) == 1 && !strncmp(out, "ahascope run: --steps: 0 is out of range", 40), "`%s`: %s", a,
              out ? out : "");
    free(out);
}

/* s without its "step_us":N fields (wall times, which differ run to run). */
static void drop_step_us(char *s) {
    for (char *at; s && (at = strstr(s, "\"step_us\":"));) {
        size_t skip = strcspn(at, ",}");
        memmove(at, at + skip, strlen(at + skip) + 1);
    }
}

/* A long prompt from a file: `--progress` draws the prefill bar on stderr
 * (lines, stderr not being a terminal) with tokens done/total and tok/s,
 * and stdout is byte for byte what it is without the bar; without
 * --progress and without a terminal, stderr stays empty. record's bar
 * comes before its 'committed pos' lines, trace's stdout is unchanged. */
/* A prompt file of the sentence about Lily repeated past min_bytes. */
static void write_lily_prompt(const char *path, int min_bytes) {
    char text[2000];
    int n = 0;
    while (n < min_bytes && n < (int)sizeof text - 64)
        n += snprintf(text + n, sizeof text - n, "Lily saw a big red ball in the park. ");
    CHECK_INT(test_write_file(path, text, n), 0);
}

TEST(cli_prompt_file_and_prefill_progress_bar) {
    SKIP_UNLESS_SHARED();
    char model[1100], prompt[1100], errf[1100];
    snprintf(model, sizeof model, "%s", test_stories_model());
    snprintf(prompt, sizeof prompt, "%s", test_tmp("long.txt")); /* test_tmp's buffer is reused */
    snprintf(errf, sizeof errf, "%s", test_tmp("err.txt"));
    write_lily_prompt(prompt, 1300);
    const char *cmds[] = {"generate --temperature 0 --steps 512", "trace --seed 1 --steps 510", "record --seed 1 --steps 510"};
    for (int c = 0; c < 3; c++) {
        char a[6000], db[2][1100];
        int st[2];
        char *out[2], *err[2];
        for (int bar = 0; bar < 2; bar++) {
            snprintf(db[bar], sizeof db[bar], "%s", test_tmp(bar ? "bar.db" : "plain.db"));
            snprintf(a, sizeof a, "%s --model %s --prompt-file %s%s%s%s 2>%s", cmds[c], model, prompt,
                     bar ? " --progress" : "", c == 2 ? " --db " : "", c == 2 ? db[bar] : "", errf);
            out[bar] = run(&st[bar], a);
            err[bar] = test_read_file(errf, NULL);
        }
        CHECK_MSG(st[0] == 0 && st[1] == 0, "%s: exit %d and %d", cmds[c], st[0], st[1]);
        drop_step_us(out[0]), drop_step_us(out[1]);
        CHECK_MSG(out[0] && out[1] && !strcmp(out[0], out[1]), "%s: stdout changed with --progress", cmds[c]);
        CHECK_MSG(err[0] && !*err[0], "%s without --progress wrote on stderr: %s", cmds[c], err[0] ? err[0] : "");
        const char *line = err[1] ? strstr(err[1], "prefill [####################] ") : NULL;
        int done = -1, total = -1;
        CHECK_MSG(line && sscanf(line + 31, "%d/%d tok", &done, &total) == 2 && done == total && total > 300 &&
                      strstr(line, "tok/s  took"),
                  "%s --progress: no finished bar over 300 tokens in: %s", cmds[c], err[1] ? err[1] : "");
        CHECK_MSG(err[1] && strstr(err[1], "prefill [--------------------] 0/"), "%s: no bar at 0 in: %s", cmds[c],
                  err[1] ? err[1] : "");
        if (c == 2) {
            /* each chunk is committed as it is fed: its commits come between the bar's lines */
            const char *committed = err[1] ? strstr(err[1], "committed pos 63\n") : NULL;
            const char *start = err[1] ? strstr(err[1], "prefill [--------------------] 0/") : NULL;
            CHECK_MSG(committed && line && start && start < committed && committed < line,
                      "record --progress: bar, then commits: %s", err[1] ? err[1] : "");
        }
        for (int bar = 0; bar < 2; bar++) free(out[bar]), free(err[bar]);
    }
    char a[4096];
    /* `run` without a terminal is generate, on the file's prompt rather than its default one */
    char *outs[2];
    int sts[2];
    for (int k = 0; k < 2; k++) {
        snprintf(a, sizeof a, "%s --model %s --prompt-file %s --steps 450 --temperature 0 2>/dev/null",
                 k ? "run" : "generate", model, prompt);
        outs[k] = run(&sts[k], a);
    }
    CHECK_MSG(sts[0] == 0 && sts[1] == 0 && outs[0] && outs[1] && !strcmp(outs[0], outs[1]) &&
                  !strncmp(outs[1], "Lily saw", 8),
              "run --prompt-file: %d %s", sts[1], outs[1] ? outs[1] : "");
    free(outs[0]), free(outs[1]);
    snprintf(a, sizeof a, "generate --model %s --prompt-file %s --prompt hi", model, prompt);
    expect_error(2, a, "--prompt and --prompt-file conflict");
    CHECK_INT(test_write_file(test_tmp("nul.txt"), "Lily\0saw", 8), 0);
    snprintf(a, sizeof a, "generate --model %s --prompt-file %s", model, test_tmp("nul.txt"));
    expect_error(1, a, "nul.txt: not a text file (a NUL byte at offset 4)");
    snprintf(a, sizeof a, "record --db %s --model %s --prompt-file /nonexistent/p.txt", test_tmp("x.db"), model);
    expect_error(1, a, "/nonexistent/p.txt: cannot open prompt file");
    snprintf(a, sizeof a, "trace --model %s --prompt-file /dev/null", model);
    expect_error(1, a, "/dev/null: not a text file");
}

/* A prompt longer than the default 256 positions is fed whole, and up to
 * 256 tokens follow it (before, it was cut to its first 257 tokens without
 * a word); a --steps the user gives still cuts it, as llama2.c does, but
 * says so on stderr; record stores the positions the run had. */
TEST(cli_long_prompt_is_fed_whole_unless_steps_cuts_it) {
    SKIP_UNLESS_SHARED();
    char model[1100], prompt[1100], a[4000];
    snprintf(model, sizeof model, "%s", test_stories_model());
    snprintf(prompt, sizeof prompt, "%s", test_tmp("long300.txt"));
    write_lily_prompt(prompt, 700);
    int st;
    snprintf(a, sizeof a, "generate --model %s --prompt-file %s --steps 512 --temperature 0 --ids 2>/dev/null", model, prompt);
    char *all = run(&st, a); /* every position of the context: the prompt's ids come first */
    snprintf(a, sizeof a, "bench --tokenizer %s --text %s --runs 1", model, prompt);
    char *count = run(&st, a);
    int n_prompt = 0;
    const char *arrow = count ? strstr(count, "-> ") : NULL;
    CHECK_MSG(arrow && sscanf(arrow, "-> %d tokens", &n_prompt) == 1 && n_prompt > 257 && n_prompt < 512,
              "the prompt's token count: %s", count ? count : "");
    free(count);
    snprintf(a, sizeof a, "generate --model %s --prompt-file %s --temperature 0 --ids 2>%s", model, prompt, test_tmp("e1"));
    char *deflt = run(&st, a), *err = test_read_file(test_tmp("e1"), NULL);
    int nd = count_ids(deflt);
    CHECK_MSG(st == 0 && nd > n_prompt && nd <= 513 && err && !*err, "default steps: %d ids for a %d-token prompt; %s",
              nd, n_prompt, err ? err : "");
    /* the whole prompt, then the same greedy tokens as the full-context run */
    CHECK_MSG(all && deflt && !strncmp(all, deflt, strlen(deflt) - 1), "default steps: ids differ from the full run");
    free(err);
    snprintf(a, sizeof a, "generate --model %s --prompt-file %s --steps 100 --temperature 0 --ids 2>%s", model, prompt,
             test_tmp("e2"));
    char *cut = run(&st, a);
    err = test_read_file(test_tmp("e2"), NULL);
    CHECK_MSG(st == 0 && count_ids(cut) == 101, "--steps 100: %d ids", count_ids(cut));
    CHECK_MSG(err && strstr(err, "warning: the prompt is") && strstr(err, "--steps 100 feeds only its first 101"), "%s",
              err ? err : "");
    free(err), free(cut), free(deflt), free(all);
    snprintf(a, sizeof a, "record --db %s --model %s --prompt-file %s --seed 1 >/dev/null 2>&1 && %s query --db %s "
             "\"SELECT steps, n_tokens FROM runs\" --csv", test_tmp("long.db"), model, prompt, test_bin(), test_tmp("long.db"));
    char *q = test_runf(&st, "%s %s", test_bin(), a);
    int steps = 0, tokens = 0;
    const char *row = q ? strstr(q, "\n") : NULL;
    CHECK_MSG(row && sscanf(row + 1, "%d,%d", &steps, &tokens) == 2 && steps == (n_prompt + 256 < 512 ? n_prompt + 256 : 512) && tokens > n_prompt,
              "record: steps %d, tokens %d of a %d-token prompt: %s", steps, tokens, n_prompt, q ? q : "");
    free(q);
}

/* Whether this kernel gives anonymous memory huge pages when asked. */
static int thp_on_request(void) {
    char *s = test_read_file("/sys/kernel/mm/transparent_hugepage/enabled", NULL);
    int on = s && (strstr(s, "[always]") || strstr(s, "[madvise]"));
    free(s);
    return on;
}

/* bench --model says what the run had: the CPU it got, the host's steal
 * time, and the bytes on 2 MiB pages, which hold the whole file when the
 * weights are copied (AHASCOPE_WEIGHTS=copy) on a kernel that gives them. */
TEST(cli_bench_model_reports_cpu_steal_and_huge_pages) {
    SKIP_UNLESS_SHARED();
    const char *model = test_stories_model();
    for (int copy = 0; copy < 2; copy++) {
        int st;
        char *out = test_runf(&st, "AHASCOPE_WEIGHTS=%s %s bench --model %s --runs 1 --prompt-len 4 --decode 8 --json",
                              copy ? "copy" : "map", test_bin(), model);
        cJSON *j = out ? cJSON_Parse(out) : NULL;
        CHECK_MSG(st == 0 && j, "bench --model --json: %d %s", st, out ? out : "");
        if (j) {
            double cpu = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "decode_cpu_share"));
            double steal = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "decode_steal_share"));
            double huge = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "huge_page_bytes"));
            double file = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "file_bytes"));
            /* CPU over the pool threads can pass 1: other threads of the process (OpenBLAS) count too */
            CHECK_MSG(isfinite(cpu) && cpu > 0 && steal >= 0 && steal <= 1, "cpu %g steal %g", cpu, steal);
            CHECK_MSG(huge >= 0 && file > 0, "huge %g file %g", huge, file);
            if (copy && thp_on_request()) CHECK_MSG(huge >= file, "copied weights: %g bytes on 2 MiB pages for a %g-byte file", huge, file);
        }
        cJSON_Delete(j);
        free(out);
    }
}
