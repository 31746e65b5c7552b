/* The command line as users meet it: malformed inputs give one line on
 * stderr and a non-zero exit, never a crash (this suite also runs under
 * ASan+UBSan); edge cases of generation behave like llama2.c. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model.h"
#include "tests/test.h"

static const char *bin(void) {
    const char *b = getenv("AHASCOPE_BIN");
    return b && *b ? b : "./ahascope";
}

/* Run `ahascope ARGS`; returns the output (malloc'd) and sets *status. */
static char *run(int *status, const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s", bin(), args);
    return test_run(cmd, status);
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* A failing invocation: non-zero exit below 128 (no signal), exactly one
 * line of output, starting with "ahascope:", containing `needle`. */
static void expect_error(const char *args, const char *needle) {
    int st;
    char *out = run(&st, args);
    CHECK_MSG(st != 0 && st < 128, "`%s` exited %d", args, st);
    CHECK_MSG(out && count_lines(out) == 1 && strncmp(out, "ahascope: ", 10) == 0, "`%s` printed: %s", args, out ? out : "");
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
#define MODEL_ERR(path, needle) do { snprintf(a, sizeof a, "generate --model '%s' --tokenizer '%s' --prompt x", path, tokf); expect_error(a, needle); } while (0)
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
    const char *model = test_shared("models/stories260K/stories260K.bin");
    test_write_file(test_tmp("badtok.bin"), "\x05\x00\x00\x00\x00\x00", 6);
    snprintf(a, sizeof a, "generate --model %s --tokenizer %s --prompt hi", model, test_tmp("badtok.bin"));
    expect_error(a, "badtok.bin");
    snprintf(a, sizeof a, "generate --model %s --tokenizer %s --prompt hi", model, test_shared("models/llama2-tokenizer.bin"));
    int st;
    char *out = run(&st, a); /* a 32000-token vocabulary is longer than the model's 512: llama2.c reads only 512 */
    CHECK_INT(st, 0);
    free(out);
    char *longp = malloc(3000);
    for (int i = 0; i < 2900; i++) longp[i] = "ab cd "[i % 6];
    longp[2900] = 0;
    snprintf(a, sizeof a, "generate --model %s --prompt '%s'", model, longp);
    expect_error(a, "context is 512");
    free(longp);
    snprintf(a, sizeof a, "generate --model %s --temperature 0 --steps 12 --prompt \"$(printf 'caf\\303\\251 \\377\\376 bad')\"", model);
    out = run(&st, a);
    CHECK_MSG(st == 0 && out && strstr(out, "caf\xc3\xa9"), "invalid UTF-8 prompt: %d %s", st, out ? out : "");
    free(out);
}

TEST(cli_bad_flags) {
    expect_error("generate --steps abc", "not a whole number");
    expect_error("generate --steps -3", "out of range");
    expect_error("generate --temperature nan", "not a number");
    expect_error("generate --topp 2", "out of range");
    expect_error("generate --seed x1", "not a whole number");
    expect_error("generate --prompt", "needs a value");
    expect_error("generate --frobnicate", "unknown flag");
    expect_error("generate --kv-dtype f8", "--kv-dtype must be f32, bf16 or f16");
    expect_error("generate --policy wild", "unknown policy");
    expect_error("generate --window 0", "out of range");
    expect_error("bench --shape 7B", "unknown shape");
    expect_error("bench --dims 1,2,3", "7 comma-separated");
    expect_error("bench --dims 64,172,5,8,3,512,512", "does not divide");
    expect_error("frobnicate", "unknown command");
    int st;
    char *out = run(&st, "generate --help");
    CHECK(st == 0 && out && strstr(out, "usage: ahascope generate"));
    free(out);
    out = run(&st, "bench --tui --runs 1 --json");
    CHECK(st == 0 && out && strstr(out, "\"frame_ms\": ") && strstr(out, "\"heads\": 16"));
    free(out);
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

static char *ids_of(const char *args) {
    char a[2048];
    snprintf(a, sizeof a, "generate --model %s --temperature 0 --ids %s", test_shared("models/stories260K/stories260K.bin"), args);
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
    out = ids_of("--prompt 'Once upon a time' --steps 2"); /* fewer steps than prompt tokens */
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
             test_shared("models/stories260K/stories260K.bin"));
    char *x = run(&st, a), *y = run(&st, a);
    CHECK(x && y && strcmp(x, y) == 0); /* same seed, same text */
    free(x);
    free(y);
}

TEST(cli_trace_jsonl_and_policies) {
    SKIP_UNLESS_SHARED();
    char a[1024];
    int st;
    const char *model = test_shared("models/stories260K/stories260K.bin");
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
        cJSON *kr = cJSON_GetObjectItem(o, "keys_read"), *om = cJSON_GetObjectItem(o, "oracle_mass");
        CHECK_INT(cJSON_GetArraySize(kr), 40); /* 5 layers x 8 heads */
        int expect = pos + 1 < 4 ? pos + 1 : 4; /* 1 sink + window 3 */
        CHECK_INT(cJSON_GetArrayItem(kr, 17)->valueint, expect);
        CHECK(cJSON_IsNumber(cJSON_GetArrayItem(om, 0)));
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
    expect_error(a, "out of range");
    snprintf(a, sizeof a, "generate --model %s --prompt hi --policy static", model);
    expect_error(a, "needs a head set");
    snprintf(a, sizeof a, "generate --model %s --prompt hi --policy aha", model);
    expect_error(a, "needs routers");
    snprintf(a, sizeof a, "generate --model %s --prompt hi --routers %s", model, test_tmp("nope.safetensors"));
    expect_error(a, "nope.safetensors");
    snprintf(a, sizeof a, "generate --model %s --prompt hi --routers random:x", model);
    expect_error(a, "bad seed");
    snprintf(a, sizeof a, "generate --model %s --prompt hi --sinks 600", model);
    expect_error(a, "exceeds the context");
}
