/* test_hfgen.c — `bench --save-hf` folders of every architecture against the model they were written from.
 *
 * `bench --arch A --save-hf DIR`: random-weight Hugging Face
 * folders of every architecture. Each folder must load with the shape it was
 * asked for and compute what the in-memory model it was written from
 * computes (f32: to 1e-5), under full attention and under AHA routing; a
 * llama folder must match the same weights saved as a llama2.c checkpoint;
 * the generated tokenizer must load and round-trip text; and every folder
 * must give the logits tests/fixtures/hf/make_hf.py's float64 NumPy forward
 * (an independent reading of the Hugging Face modelling code) gives. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/forward.h"
#include "engine/routers.h"
#include "engine/safetensors.h"
#include "engine/tokenize/tokenize.h"
#include "test.h"

#define GEN_DIMS "64,96,3,8,4,300,64" /* dim, hidden, layers, heads, kv heads, vocab, context */
#define GEN_TOKENS 10

/* The config `bench --dims GEN_DIMS` builds. */
static Config gen_config(void) {
    return (Config){.dim = 64, .hidden_dim = 96, .n_layers = 3, .n_heads = 8, .n_kv_heads = 4, .vocab_size = 300,
                    .seq_len = 64, .shared_classifier = 1, .rope_theta = 10000.0f};
}

/* Run `ahascope bench ARGS`; 0 when it exits 0 (else the output is reported). */
static int bench(const char *args) {
    int st;
    char *out = test_runf(&st, "%s bench %s 2>&1", test_bin(), args);
    if (st != 0) test_fail(__FILE__, __LINE__, "bench %s: exit %d: %s", args, st, out ? out : "");
    free(out);
    return st;
}

/* Logits of GEN_TOKENS decode steps under a; NULL (failure recorded) if the run cannot start. */
static float *logits_of(const Model *m, const AttnConfig *a) {
    RunState s;
    Err e;
    int V = m->c.vocab_size;
    float *out = malloc((size_t)GEN_TOKENS * V * sizeof(float));
    if (!out || fwd_init(&s, &m->c, 1, 2, &e) != 0) { free(out); test_fail(__FILE__, __LINE__, "fwd_init failed"); return NULL; }
    for (int t = 0; t < GEN_TOKENS; t++) {
        int tok = (t * 37 + 5) % V;
        fwd_forward(m, &s, a, &tok, 1, t, NULL, NULL);
        memcpy(out + (size_t)t * V, s.logits, (size_t)V * sizeof(float));
    }
    fwd_free(&s);
    return out;
}

/* Largest |a - b| over n values; INFINITY when any is not finite. */
static double worst(const float *a, const float *b, size_t n) {
    double w = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!isfinite(a[i]) || !isfinite(b[i])) return INFINITY;
        if (d > w) w = d;
    }
    return w;
}

/* Logits of a and b under policy (AHA: the model's routers, or random ones) differ by at most tol. */
static void check_same_logits(const Model *a, const Model *b, int aha, double tol, const char *what) {
    AttnConfig cfg = aha_defaults();
    Routers r = {0};
    Err e;
    if (aha) {
        cfg.policy = POLICY_AHA, cfg.window = 4;
        if (a->builtin_routers) cfg.model_routers = 1;
        else if (router_random(&r, a->c.n_layers, a->c.n_heads, a->c.dim, 9, &e) == 0) cfg.routers = r.w;
    }
    float *x = logits_of(a, &cfg), *y = logits_of(b, &cfg);
    if (x && y) {
        double w = worst(x, y, (size_t)GEN_TOKENS * a->c.vocab_size);
        CHECK_MSG(w <= tol, "%s (%s): logits differ by %g (tolerance %g)", what, aha ? "aha" : "full", w, tol);
    }
    free(x), free(y);
    router_free(&r);
}

TEST(hfgen_every_arch_folder_loads_with_its_shape_and_matches_memory) {
    const char *archs[] = {"llama", "qwen2", "olmo2", "faolmo"};
    for (int i = 0; i < 4; i++) {
        char dir[1024], args[1200];
        snprintf(dir, sizeof dir, "%s", test_tmp(archs[i]));
        snprintf(args, sizeof args, "--arch %s --dims " GEN_DIMS " --save-hf %s", archs[i], dir);
        if (bench(args) != 0) continue;
        Model mem, hf;
        Err e;
        Config c = gen_config();
        CHECK(model_random_arch(&mem, &c, model_arch_parse(archs[i]), 1234, &e) == 0);
        if (model_load_hf(&hf, dir, 0, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); model_free(&mem); continue; }
        CHECK_MSG(!strcmp(hf.arch_name, archs[i]), "%s loaded as %s", archs[i], hf.arch_name);
        CHECK(hf.c.dim == 64 && hf.c.hidden_dim == 96 && hf.c.n_layers == 3 && hf.c.n_heads == 8);
        CHECK(hf.c.n_kv_heads == 4 && hf.c.vocab_size == 300 && hf.c.seq_len == 64 && hf.c.dtype == DT_F32);
        CHECK_INT(hf.builtin_routers, !strcmp(archs[i], "faolmo"));
        CHECK_INT(hf.c.shared_classifier, mem.c.shared_classifier);
        check_same_logits(&mem, &hf, 0, 1e-5, archs[i]);
        check_same_logits(&mem, &hf, 1, 1e-5, archs[i]);
        model_free(&mem);
        model_free(&hf);
    }
}

TEST(hfgen_llama_folder_matches_its_llama2c_checkpoint) {
    char dir[1024], file[1024], args[2200];
    snprintf(dir, sizeof dir, "%s", test_tmp("llama_both"));
    snprintf(file, sizeof file, "%s", test_tmp("llama_both.bin"));
    snprintf(args, sizeof args, "--arch llama --dims " GEN_DIMS " --save %s --save-hf %s", file, dir);
    if (bench(args) != 0) return;
    Model a, b;
    Err e;
    CHECK_MSG(model_load(&a, file, &e) == 0, "%s", e.msg);
    CHECK_MSG(model_load(&b, dir, &e) == 0, "%s", e.msg);
    check_same_logits(&a, &b, 0, 1e-5, "llama2.c vs folder");
    check_same_logits(&a, &b, 1, 1e-5, "llama2.c vs folder");
    model_free(&a);
    model_free(&b);
}

TEST(hfgen_half_folders_store_their_dtype_and_run) {
    const char *dts[] = {"bf16", "f16"};
    for (int i = 0; i < 2; i++) {
        char dir[1024], args[1200];
        snprintf(dir, sizeof dir, "%s_%s", test_tmp("olmo_half"), dts[i]);
        snprintf(args, sizeof args, "--arch olmo2 --dtype %s --dims " GEN_DIMS " --save-hf %s", dts[i], dir);
        if (bench(args) != 0) continue;
        Model mem, hf;
        Err e;
        Config c = gen_config();
        CHECK(model_random_arch(&mem, &c, ARCH_OLMO2, 1234, &e) == 0);
        CHECK_MSG(model_load_hf(&hf, dir, 0, &e) == 0, "%s", e.msg);
        CHECK_INT(hf.c.dtype, model_dtype_parse(dts[i]));
        check_same_logits(&mem, &hf, 0, 0.1, dts[i]); /* rounding only: logits are O(1) */
        model_free(&mem);
        model_free(&hf);
    }
}

TEST(hfgen_tokenizer_loads_and_round_trips) {
    char dir[1024], args[1200], tj[1100];
    snprintf(dir, sizeof dir, "%s", test_tmp("tokq"));
    snprintf(args, sizeof args, "--arch qwen2 --dims 32,64,1,4,2,1000,64 --save-hf %s", dir);
    if (bench(args) != 0) return;
    snprintf(tj, sizeof tj, "%s/tokenizer.json", dir);
    Tokenizer t;
    Err e;
    if (tok_load_hf(&t, tj, dir, 1000, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    CHECK_INT(t.vocab_size, 1000);
    const char *text = "the cat, 42 times\n\xc3\xa9t\xc3\xa9!";
    int ids[256], n = 0;
    CHECK(tok_encode(&t, text, strlen(text), 1, 0, ids, 256, &n, &e) == 0);
    CHECK(n > 2 && ids[0] == 999);                    /* BOS: the special last id */
    CHECK_MSG(n < (int)strlen(text), "%d ids for %zu bytes: nothing merged", n, strlen(text));
    char back[256] = "";
    size_t at = 0;
    for (int i = 1; i < n; i++) {
        size_t len;
        const char *p = tok_decode(&t, ids[i - 1], ids[i], &len);
        CHECK(ids[i] >= 0 && ids[i] < 999);
        if (at + len < sizeof back) memcpy(back + at, p, len), at += len;
    }
    back[at] = 0;
    CHECK_MSG(!strcmp(back, text), "decoded '%s'", back);
    tok_free(&t);
}

TEST(hfgen_writes_are_deterministic_and_bad_shapes_write_nothing) {
    char a[1024], b[1024], r[1024], args[2400];
    snprintf(a, sizeof a, "%s", test_tmp("det_a"));
    snprintf(b, sizeof b, "%s", test_tmp("det_b"));
    snprintf(r, sizeof r, "%s", test_tmp("det_r.safetensors"));
    snprintf(args, sizeof args, "--arch faolmo --dtype bf16 --dims " GEN_DIMS " --save-hf %s --save-routers %s", a, r);
    if (bench(args) != 0) return;
    snprintf(args, sizeof args, "--arch faolmo --dtype bf16 --dims " GEN_DIMS " --save-hf %s", b);
    if (bench(args) != 0) return;
    int st;
    free(test_runf(&st, "cmp -s %s/model.safetensors %s/model.safetensors && cmp -s %s/tokenizer.json %s/tokenizer.json"
                   " && cmp -s %s/config.json %s/config.json", a, b, a, b, a, b));
    CHECK_MSG(st == 0, "two runs wrote different folders");
    Routers rt;
    Err e;
    CHECK_MSG(router_load(&rt, r, 3, 8, 64, &e) == 0, "%s", e.msg);
    router_free(&rt);
    /* a vocabulary the tokenizer cannot fill: one line, non-zero, and no folder */
    char small[1024];
    snprintf(small, sizeof small, "%s", test_tmp("small_vocab"));
    char *out = test_runf(&st, "%s bench --arch llama --dims 32,64,1,4,2,200,64 --save-hf %s 2>&1", test_bin(), small);
    CHECK(st != 0 && out && strstr(out, "257") && strchr(out, '\n') == strrchr(out, '\n'));
    free(out);
    free(test_runf(&st, "test -e %s/config.json", small));
    CHECK(st != 0);
    out = test_runf(&st, "%s bench --arch gpt2 --dims " GEN_DIMS " --save-hf %s 2>&1", test_bin(), small);
    CHECK(st == 2 && out && strstr(out, "--arch"));
    free(out);
}

/* Without --save-hf, --arch times that block in memory; a faolmo model
 * routes itself there too (AHA at its own window 128, no --routers). */
TEST(hfgen_bench_times_the_arch_in_memory) {
    int st;
    char *out = test_runf(&st, "%s bench --arch faolmo --dims " GEN_DIMS " --context 40 --policy aha --runs 1 --json 2>&1",
                          test_bin());
    CHECK_MSG(st == 0 && out && strstr(out, "\"policy\": \"aha\"") && strstr(out, "\"window\": 128"), "%s", out);
    free(out);
    out = test_runf(&st, "%s bench --arch olmo2 --dims " GEN_DIMS " --prompt-len 8 --decode 4 --runs 1 --json 2>&1", test_bin());
    CHECK_MSG(st == 0 && out && strstr(out, "\"decode_tok_s\""), "%s", out);
    free(out);
}

/* --dtype bf16 with --arch times the model in bf16 (it once timed f32),
 * faolmo's router rows converted with W_Q, and names the prefill's kernel;
 * an unknown $AHASCOPE_GEMM is one line and exit 1. */
TEST(hfgen_bench_arch_dtype_times_the_half_model) {
    int st;
    for (int k = 0; k < 2; k++) {
        char *out = test_runf(&st, "%s bench --arch %s --dims " GEN_DIMS " --dtype bf16 --prompt-len 8 --decode 2 --runs 1 "
                              "--json 2>&1", test_bin(), k ? "faolmo" : "olmo2");
        CHECK_MSG(st == 0 && out && strstr(out, "\"dtype\": \"bf16\"") && strstr(out, "\"prefill_kernel\": \""), "%s", out);
        free(out);
    }
    char *out = test_runf(&st, "AHASCOPE_GEMM=fastest %s bench --arch olmo2 --dims " GEN_DIMS " --dtype bf16 --runs 1 2>&1",
                          test_bin());
    CHECK_MSG(st == 1 && out && strstr(out, "AHASCOPE_GEMM") && strchr(out, '\n') == strrchr(out, '\n'), "%s", out);
    free(out);
}

/* make_hf.py's forward over folders DIR/<arch>: one JSON object, arch → logits rows. */
static const char NUMPY_FORWARD[] =
    "import json, os, sys\n"
    "sys.path.insert(0, 'tests/fixtures/hf')\n"
    "import make_hf\n"
    "out = {}\n"
    "for arch in sys.argv[2:]:\n"
    "    cfg, W, _ = make_hf.load_folder(os.path.join(sys.argv[1], arch))\n"
    "    logits, _, _ = make_hf.forward(cfg, W, [(t * 37 + 5) %% cfg['vocab_size'] for t in range(%d)])\n"
    "    out[arch] = logits.tolist()\n"
    "print(json.dumps(out))\n";

TEST(hfgen_folders_match_the_numpy_reference_forward) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    const char *archs[] = {"llama", "qwen2", "olmo2", "faolmo"};
    char root[1024], script[1100], src[1024];
    snprintf(root, sizeof root, "%s", test_tmp("numpy_ref"));
    snprintf(script, sizeof script, "%s/forward.py", root);
    int st;
    free(test_runf(&st, "mkdir -p %s", root));
    for (int i = 0; i < 4; i++) {
        char args[1400];
        snprintf(args, sizeof args, "--arch %s --dims " GEN_DIMS " --save-hf %s/%s", archs[i], root, archs[i]);
        if (bench(args) != 0) return;
    }
    snprintf(src, sizeof src, NUMPY_FORWARD, GEN_TOKENS);
    CHECK(test_write_file(script, src, (long)strlen(src)) == 0);
    char *out = test_runf(&st, "'%s' %s %s llama qwen2 olmo2 faolmo", py, script, root);
    cJSON *ref = st == 0 && out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(ref, "make_hf.py forward failed (exit %d): %.400s", st, out ? out : "");
    for (int i = 0; ref && i < 4; i++) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/%s", root, archs[i]);
        Model m;
        Err e;
        if (model_load_hf(&m, dir, 0, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); continue; }
        AttnConfig full = aha_defaults();
        float *got = logits_of(&m, &full);
        const cJSON *rows = cJSON_GetObjectItem(ref, archs[i]);
        double w = 0;
        for (int t = 0; got && t < GEN_TOKENS; t++)
            for (int v = 0; v < m.c.vocab_size; v++) {
                const cJSON *x = cJSON_GetArrayItem(cJSON_GetArrayItem(rows, t), v);
                double d = x ? fabs(got[(size_t)t * m.c.vocab_size + v] - x->valuedouble) : INFINITY;
                if (!(d <= w)) w = d;
            }
        CHECK_MSG(got && w < 1e-4, "%s: logits differ from the NumPy forward by %g", archs[i], w); /* f32 against f64 */
        free(got);
        model_free(&m);
    }
    cJSON_Delete(ref);
    free(out);
}
