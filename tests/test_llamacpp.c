/* test_llamacpp.c — llama.cpp as the outside reference: logits, greedy ids, dequantisation, quantised and converted files.
 *
 * tests/llamacpp/ref.c (built as build/llamacpp-ref, $AHASCOPE_LLAMACPP_REF)
 * drives llama.cpp v0.5.0's prebuilt CPU libraries, which
 * tests/llamacpp/install.sh put in build/llamacpp ($AHASCOPE_LLAMACPP_DIR).
 * Without them (no npm, no registry) every test here is skipped, saying so.
 *
 * What is compared, and how close (measured figures in tests/README.md):
 *  - stories260K.gguf: llama.cpp's log-probabilities over 40 greedy steps
 *    from "Once upon a time", teacher-forced on ahascope's tokens, against
 *    ahascope's on stories260K.bin and on stories260K.gguf; the greedy ids
 *    must be identical.
 *  - dequantisation: ggml's to_float of blocks ggml made from random values
 *    against gguf_dequant, bit for bit, for every type ahascope should read.
 *  - quantised files: stories260K.gguf quantised by llama.cpp, run by both.
 *  - `convert --to gguf`: a random llama (dim 256, hidden 768) written by
 *    ahascope, loaded and run by llama.cpp, and re-quantised by llama.cpp to
 *    every type (skipped while convert has no --to gguf).
 * Both engines run with f32 KV caches (ref --kv f32), so what differs is the
 * summation order and, for quantised weights, llama.cpp's quantised
 * activations in its dot products. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/forward.h"
#include "engine/gguf.h"
#include "engine/matvec.h"
#include "engine/model.h"
#include "engine/tokenize/tokenize.h"
#include "tests/llamacpp_fixture.h"
#include "tests/stories.h"
#include "tests/test.h"

#define STORIES_GGUF "models/stories260K/stories260K.gguf"
#define GREEDY_STEPS 40

/* Measured on this machine (tests/README.md) and asserted a little above. */
#define TOL_STORIES_BIN 3e-5  /* max |Δ logprob|, llama.cpp vs ahascope on the .bin (measured 2.1e-5) */
#define TOL_STORIES_GGUF 3e-5 /* the same on the .gguf (measured 2.1e-5) */
#define TOL_STORIES_KV16 2e-2 /* llama.cpp with its default f16 KV cache vs ahascope's f32 one (measured 1.6e-2) */

/* The stories prompt, with BOS, into ids; its length or -1. */
static int stories_prompt(Tokenizer *tok, int *ids, int cap) {
    Err e = {0};
    const char *text = "Once upon a time";
    int n = 0;
    if (tok_encode(tok, text, strlen(text), 1, 0, ids, cap, &n, &e) != 0) {
        test_fail(__FILE__, __LINE__, "tok_encode: %s", e.msg);
        return -1;
    }
    return n;
}

/* Teacher-forced over ids: llama.cpp (f32 and f16 KV caches) on the .gguf
 * against ahascope on the .bin and on the .gguf. */
static void stories_logprobs(Model *bin, Model *gg, const char *gguf, const int *ids, int n) {
    int V = bin->c.vocab_size;
    float *lc = lcfx_logits(gguf, ids, n, V, "stories"), *l16 = lcfx_logits_kv(gguf, ids, n, V, "stories16", "f16");
    float *ab = lcfx_aha_logits(bin, ids, n), *ag = lcfx_aha_logits(gg, ids, n);
    if (lc && l16 && ab && ag) {
        double db = lcfx_max_dlogprob(lc, ab, n, V), dg = lcfx_max_dlogprob(lc, ag, n, V), d16 = lcfx_max_dlogprob(l16, ab, n, V);
        printf("  measured: llama.cpp vs ahascope over %d positions: max |dlogprob| .bin %.3g, .gguf %.3g, "
               "llama.cpp f16 KV vs .bin %.3g\n", n, db, dg, d16);
        CHECK_MSG(db <= TOL_STORIES_BIN, "llama.cpp vs ahascope .bin: max |dlogprob| %g > %g", db, TOL_STORIES_BIN);
        CHECK_MSG(dg <= TOL_STORIES_GGUF, "llama.cpp vs ahascope .gguf: max |dlogprob| %g > %g", dg, TOL_STORIES_GGUF);
        CHECK_MSG(d16 <= TOL_STORIES_KV16, "llama.cpp (f16 KV) vs ahascope .bin: max |dlogprob| %g > %g", d16, TOL_STORIES_KV16);
        CHECK_MSG(d16 > db, "llama.cpp's f16 KV cache made no difference (%g vs %g): --kv is not reaching it", d16, db);
    }
    free(lc), free(l16), free(ab), free(ag);
}

/* stories260K: ahascope's 40 greedy ids from "Once upon a time" are
 * llama.cpp's, and the log-probabilities along them agree. */
TEST(llamacpp_stories_logprobs_and_greedy) {
    SKIP_UNLESS_SHARED();
    if (!lcfx_available()) return;
    Model bin, gg;
    Tokenizer tok;
    Err e = {0};
    if (test_load_stories(&bin, &tok, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    char gguf[1024];
    snprintf(gguf, sizeof gguf, "%s", test_shared(STORIES_GGUF));
    if (model_load_gguf(&gg, gguf, &e) != 0) {
        test_fail(__FILE__, __LINE__, "%s", e.msg);
        model_free(&bin), tok_free(&tok);
        return;
    }
    int ids[256] = {0}, lc_ids[GREEDY_STEPS] = {0};
    int np = stories_prompt(&tok, ids, 200);
    if (np > 0 && lcfx_aha_greedy(&bin, ids, np, GREEDY_STEPS) == 0) {
        int got = lcfx_greedy(gguf, ids, np, GREEDY_STEPS, lc_ids);
        char a[1024], b[1024];
        lcfx_id_text(ids + np, GREEDY_STEPS, a, sizeof a), lcfx_id_text(lc_ids, got, b, sizeof b);
        CHECK_MSG(got == GREEDY_STEPS && !memcmp(lc_ids, ids + np, sizeof lc_ids), "greedy ids differ:\n  ahascope  %s\n  llama.cpp %s", a, b);
        stories_logprobs(&bin, &gg, gguf, ids, np + GREEDY_STEPS);
    }
    model_free(&bin), model_free(&gg), tok_free(&tok);
}

/* The types ahascope should read, by ggml's id and ref's name. */
static const struct {
    GgmlType type;
    const char *name;
} DEQUANT_TYPES[] = {
    {GGML_F16, "f16"},   {GGML_BF16, "bf16"}, {GGML_Q8_0, "q8_0"}, {GGML_Q4_0, "q4_0"},
    {GGML_Q4_1, "q4_1"}, {GGML_Q5_0, "q5_0"}, {GGML_Q5_1, "q5_1"}, {GGML_Q2_K, "q2_k"},
    {GGML_Q3_K, "q3_k"}, {GGML_Q4_K, "q4_k"}, {GGML_Q5_K, "q5_k"}, {GGML_Q6_K, "q6_k"},
};

/* Bits of a and b, n floats: the count that differ and the first index. */
static long bit_diffs(const float *a, const float *b, long n, long *first) {
    long bad = 0;
    *first = -1;
    for (long i = 0; i < n; i++) {
        uint32_t x, y;
        memcpy(&x, a + i, 4), memcpy(&y, b + i, 4);
        if (x != y && bad++ == 0) *first = i;
    }
    return bad;
}

/* gguf_dequant of n values of type t at q against ggml's deq, bit for bit;
 * what names the blocks in messages. 1 if equal. */
static int dequant_equal(GgmlType t, const void *q, const float *deq, long n, const char *what) {
    Err e = {0};
    float *mine = malloc((size_t)n * sizeof *mine);
    if (gguf_dequant(t, q, mine, n, &e) != 0) {
        test_fail(__FILE__, __LINE__, "%s: ahascope's gguf_dequant refuses %s: %s", what, gguf_type_name(t), e.msg);
        free(mine);
        return 0;
    }
    long first;
    long bad = bit_diffs(mine, deq, n, &first);
    if (bad)
        test_fail(__FILE__, __LINE__, "%s (%s): %ld of %ld values differ from ggml's to_float, first [%ld] %.9g vs %.9g", what,
                  gguf_type_name(t), bad, n, first, mine[first], deq[first]);
    free(mine);
    return bad == 0;
}

/* ggml's blocks of random values (several seeds, 4096 values each: 16
 * k-quant super-blocks) widened by ggml's to_float and by gguf_dequant: the
 * same bits for every type. The reference is checked to be a real
 * dequantisation first (close to the values it was made from). */
TEST(llamacpp_dequant_bit_equal) {
    if (!lcfx_available()) return;
    const long n = 4096;
    for (size_t k = 0; k < sizeof DEQUANT_TYPES / sizeof *DEQUANT_TYPES; k++) {
        for (int seed = 1; seed <= 3; seed++) {
            char base[1024], args[1200], path[1100], what[64];
            snprintf(base, sizeof base, "%s", test_tmp("dq"));
            snprintf(args, sizeof args, "dequant %s %ld %d %s", DEQUANT_TYPES[k].name, n, seed, base);
            if (lcfx_run(args)) break;
            uint64_t be = 0, bb = 0;
            gguf_type_block(DEQUANT_TYPES[k].type, &be, &bb);
            long qn = 0;
            snprintf(path, sizeof path, "%s.q", base);
            char *q = test_read_file(path, &qn);
            snprintf(path, sizeof path, "%s.f32", base);
            float *src = lcfx_read_floats(path, n);
            snprintf(path, sizeof path, "%s.deq", base);
            float *deq = lcfx_read_floats(path, n);
            snprintf(what, sizeof what, "%s seed %d", DEQUANT_TYPES[k].name, seed);
            CHECK_MSG(be && qn == (long)(n / (long)be * (long)bb), "%s: %ld bytes of blocks, ahascope sizes %llu values in %llu",
                      what, qn, (unsigned long long)be, (unsigned long long)bb);
            if (q && src && deq) {
                double err = 0, ref = 0;
                for (long i = 0; i < n; i++) err += (deq[i] - src[i]) * (deq[i] - src[i]), ref += src[i] * src[i];
                CHECK_MSG(sqrt(err / ref) < 0.5, "%s: ggml's round trip is off by %.3g rms (a broken reference)", what, sqrt(err / ref));
                dequant_equal(DEQUANT_TYPES[k].type, q, deq, n, what);
                /* the comparison itself can fail: one flipped low bit is seen */
                float *flip = malloc((size_t)n * sizeof *flip);
                memcpy(flip, deq, (size_t)n * sizeof *flip);
                ((uint32_t *)(void *)flip)[n / 2] ^= 1u;
                long first;
                CHECK_MSG(bit_diffs(flip, deq, n, &first) == 1 && first == n / 2, "%s: a flipped bit went unseen", what);
                free(flip);
            }
            free(q), free(src), free(deq);
        }
    }
}

/* Every tensor of a GGUF file: ggml's to_float (ref tofloat on its bytes)
 * against gguf_dequant, bit for bit. Returns the tensors that differ. */
static int file_dequant_diffs(const char *path) {
    GgufFile f;
    Err e = {0};
    if (gguf_open(&f, path, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); return 1; }
    int bad = 0;
    for (int i = 0; i < f.n_tensors; i++) {
        const GgufTensor *t = &f.tensors[i];
        long n = 1;
        for (int d = 0; d < GGUF_MAX_DIMS; d++) n *= (long)t->ne[d];
        char blocks[1024], out[1100], args[2400], what[600];
        snprintf(blocks, sizeof blocks, "%s", test_tmp("tensor.q"));
        snprintf(out, sizeof out, "%s.deq", blocks);
        if (test_write_file(blocks, t->data, (long)t->nbytes)) { bad++; continue; }
        snprintf(args, sizeof args, "tofloat %s %s %s", gguf_type_name(t->type), blocks, out);
        if (lcfx_run(args)) { bad++; continue; }
        float *deq = lcfx_read_floats(out, n);
        snprintf(what, sizeof what, "%s: %s", path, t->name);
        bad += !deq || !dequant_equal(t->type, t->data, deq, n, what);
        free(deq);
    }
    gguf_close(&f);
    return bad;
}

/* The tensor types of a GGUF file, as "F32 x3, Q8_0 x45", for messages. */
static void file_types(const char *path, char *buf, size_t cap) {
    GgufFile f;
    Err e = {0};
    int count[GGML_NTYPES] = {0};
    buf[0] = 0;
    if (gguf_open(&f, path, &e) != 0) return;
    for (int i = 0; i < f.n_tensors; i++)
        if ((int)f.tensors[i].type < GGML_NTYPES) count[f.tensors[i].type]++;
    size_t k = 0;
    for (int t = 0; t < GGML_NTYPES && k + 32 < cap; t++)
        if (count[t]) k += (size_t)snprintf(buf + k, cap - k, "%s%s x%d", k ? ", " : "", gguf_type_name((GgmlType)t), count[t]);
    gguf_close(&f);
}

/* Both engines on one GGUF file, teacher-forced over ids: max |Δ logprob|,
 * or NAN when either could not run it (a failure already recorded). */
static double both_engines(const char *path, const int *ids, int n, const char *tag) {
    Model m;
    Err e = {0};
    if (model_load_gguf(&m, path, &e) != 0) {
        test_fail(__FILE__, __LINE__, "ahascope cannot load %s: %s", path, e.msg);
        return NAN;
    }
    float *lc = lcfx_logits(path, ids, n, m.c.vocab_size, tag), *ah = lcfx_aha_logits(&m, ids, n);
    double d = lc && ah ? lcfx_max_dlogprob(lc, ah, n, m.c.vocab_size) : NAN;
    free(lc), free(ah);
    model_free(&m);
    return d;
}

/* Greedy continuations of the same 8-token prompt, 16 steps, are the same
 * ids in both engines for F32, F16, BF16 and Q8_0 (the promise).
 * Measured over 24 steps: F32, F16 and Q8_0 agree throughout, BF16 parts
 * at step 21 (llama.cpp rounds a bf16 matrix's activations to bf16, and a
 * random model's state drifts); lower types may tip sooner, and their
 * log-probs are held instead. ahascope runs its exact path here
 * (mv_q_set_int8(0)): its default integer path rounds the activations to 8
 * bits per 32 values with an f32 scale, not as ggml does (f16 scales for
 * Q8_0, one per 256 values for K-quants), and on this model Q8_0 parts
 * from llama.cpp at step 5 that way. */
static void same_greedy(const char *path, const int *ids, const char *tag) {
    enum { NP = 8, STEPS = 16 };
    Model m;
    Err e = {0};
    int mine[NP + STEPS], theirs[STEPS];
    memcpy(mine, ids, NP * sizeof *ids);
    if (model_load_gguf(&m, path, &e) != 0) {
        test_fail(__FILE__, __LINE__, "ahascope cannot load %s: %s", path, e.msg);
        return;
    }
    int was = mv_q_int8();
    mv_q_set_int8(0);
    int ok = lcfx_aha_greedy(&m, mine, NP, STEPS) == 0;
    mv_q_set_int8(was);
    model_free(&m);
    int got = ok ? lcfx_greedy(path, ids, NP, STEPS, theirs) : 0;
    int same = got == STEPS && !memcmp(mine + NP, theirs, sizeof theirs);
    int first = 0;
    while (first < got && mine[NP + first] == theirs[first]) first++;
    CHECK_MSG(same, "%s: greedy ids differ between ahascope and llama.cpp from step %d of %d (%d ids from llama.cpp)", tag,
              first, STEPS, got);
}

/* Measured max |Δ logprob| per type on stories260K (tests/README.md):
 * q8_0 0.264, q4_0 0.436. Large because llama.cpp rounds the activations
 * too (to q8_0 for these dot products, to f16 for the F16 fallback
 * matrices) and this tiny model is that sensitive: quantising only its
 * weights to q8_0 moves ahascope's own log-probabilities by 0.27.
 * q8_0's tolerance went from 0.3 to 0.35 when ahascope's Q8_0 products
 * became integer ones (engine/gemm_q.h): ahascope rounds its activations
 * to q8_0 too now, with ggml's arithmetic, yet here the two roundings do
 * not line up everywhere (the f16 fallback matrices feed them different
 * inputs), so their errors add: 0.306 measured, against 0.245 with
 * AHASCOPE_GEMMQ=off on the same machine. On the random dim-256 model
 * below, q8_0's greedy ids matched llama.cpp's only once the rounding
 * was ggml's (max |Δ logprob| 0.0017 then). */
static const struct {
    const char *type;
    double tol;
} STORIES_QUANT[] = {{"q8_0", 0.35}, {"q4_0", 0.5}};

/* stories260K.gguf quantised by llama.cpp (--pure: every matrix of the
 * type, or its fallback where rows of 172 do not divide into blocks):
 * ahascope's dequantisation of every tensor is ggml's, and the two engines'
 * log-probabilities agree within the type's measured tolerance. */
TEST(llamacpp_quantized_stories) {
    SKIP_UNLESS_SHARED();
    if (!lcfx_available()) return;
    Model bin;
    Tokenizer tok;
    Err e = {0};
    if (test_load_stories(&bin, &tok, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    int ids[256];
    int np = stories_prompt(&tok, ids, 200);
    if (np > 0 && lcfx_aha_greedy(&bin, ids, np, GREEDY_STEPS) == 0) {
        for (size_t k = 0; k < sizeof STORIES_QUANT / sizeof *STORIES_QUANT; k++) {
            char out[1024], args[2400], types[256];
            snprintf(out, sizeof out, "%s", test_tmp(STORIES_QUANT[k].type));
            strncat(out, ".gguf", sizeof out - strlen(out) - 1);
            snprintf(args, sizeof args, "quantize %s %s %s --pure", test_shared(STORIES_GGUF), out, STORIES_QUANT[k].type);
            if (lcfx_run(args)) continue;
            file_types(out, types, sizeof types);
            CHECK_MSG(file_dequant_diffs(out) == 0, "%s: tensors dequantise differently (%s)", STORIES_QUANT[k].type, types);
            double d = both_engines(out, ids, np + GREEDY_STEPS, STORIES_QUANT[k].type);
            printf("  measured: stories260K %s (%s): max |dlogprob| %.3g\n", STORIES_QUANT[k].type, types, d);
            CHECK_MSG(d <= STORIES_QUANT[k].tol, "%s: llama.cpp vs ahascope max |dlogprob| %g > %g", STORIES_QUANT[k].type, d,
                      STORIES_QUANT[k].tol);
        }
    }
    model_free(&bin), tok_free(&tok);
}

#define CONV_POSITIONS 64

/* What `convert --to gguf` writes and llama.cpp must load and run alike,
 * then what llama.cpp quantises that f32 file to; tolerances of max
 * |Δ logprob|, measured with the writer's and the quantised types' branches
 * merged (tests/README.md): f32 1.4e-6, f16 5.4e-4, bf16 1.8e-3 (4.7e-3 on
 * a Zen 5, whose AVX512-BF16 dot products llama.cpp takes: its bf16
 * activations keep 8 mantissa bits, 8× f16's rounding, so bf16's bound is
 * 8× f16's and a host's kernels move within it), q8_0 and
 * q4_0 1.4e-2; re-quantised q4_1 1.4e-2, q5_0 1.4e-2, q5_1 1.5e-2, q2_k
 * 1.8e-2, q3_k 2.1e-2, q4_k 1.7e-2, q5_k 1.8e-2, q6_k 1.9e-2; the mixes
 * q3_k_m 2.2e-2, q4_k_m 2.1e-2, q5_k_m 1.8e-2. Alike across
 * types because llama.cpp's rounding of the activations (to q8_0 / q8_K)
 * dominates: both engines read the same weights, bit for bit. */
static const struct {
    const char *type;
    double tol;
} CONVERT_TYPES[] = {{"f32", 5e-6}, {"f16", 1e-3}, {"bf16", 8e-3}, {"q8_0", 2e-2}, {"q4_0", 2e-2}};
static const struct {
    const char *type;
    double tol;
} REQUANT_TYPES[] = {{"q8_0", 2e-2}, {"q4_0", 2e-2}, {"q4_1", 2e-2},  {"q5_0", 2e-2},  {"q5_1", 2e-2},
                     {"q2_k", 2.5e-2}, {"q3_k", 3e-2}, {"q4_k", 2.5e-2}, {"q5_k", 2.5e-2}, {"q6_k", 2.5e-2},
                     {"q3_k_m", 3e-2}, {"q4_k_m", 3e-2}, {"q5_k_m", 3e-2}};

/* A random llama of dim 256, hidden 768 (whole k-quant blocks in every
 * row; 2 layers, 4 query heads over 2 KV heads, 512 tokens: tok512.bin's),
 * saved as a llama2.c checkpoint at path, and n token ids for it. */
static int random_llama_scaled(const char *path, int *ids, int n, float cls_scale) {
    Config c = {.dim = 256, .hidden_dim = 768, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 512,
                .seq_len = 128, .shared_classifier = 0};
    Model m;
    Err e = {0};
    int made = model_random(&m, &c, 11, &e) == 0;
    if (made && cls_scale != 1)
        for (size_t i = 0; i < (size_t)c.vocab_size * c.dim; i++) ((float *)m.w.wcls)[i] *= cls_scale;
    if (!made || model_save(&m, path, 1, &e) != 0) {
        test_fail(__FILE__, __LINE__, "random model: %s", e.msg);
        model_free(&m);
        return -1;
    }
    model_free(&m);
    uint64_t s = 5;
    ids[0] = 1;
    for (int i = 1; i < n; i++) s ^= s << 13, s ^= s >> 7, s ^= s << 17, ids[i] = 3 + (int)(s % 509);
    return 0;
}

static int random_llama(const char *path, int *ids, int n) { return random_llama_scaled(path, ids, n, 1); }

/* `ahascope trace` on a GGUF file of any type: it runs, one JSON object a
 * position, the first naming the layer kinds (the §3 contract: trace works
 * for every type): the prompt's 5
 * at least, 8 at most (a random model may draw BOS, which ends the text). */
static void trace_runs(const char *gguf, const char *type) {
    int status = -1;
    char *text = test_runf(&status, "%s trace --model %s --prompt 'Once upon a time' --steps 8 --policy qada 2>/dev/null", test_bin(), gguf);
    int lines = 0;
    for (const char *c = text; c && *c; c++) lines += *c == '\n';
    CHECK_MSG(status == 0 && text && !strncmp(text, "{\"layer_kind\":", 14) && strstr(text, "\"pos\":0,") && lines >= 5 && lines <= 8, "trace on %s: exit %d, %d lines: %.200s", type,
              status, lines, text ? text : "");
    free(text);
}

/* `ahascope convert --to gguf` of bin as type into out: 0 written, -1 a failure. */
static int convert_gguf(const char *bin, const char *type, const char *out) {
    int status = -1;
    char *text = test_runf(&status, "%s convert --to gguf --model %s --out %s --type %s", test_bin(), bin, out, type);
    if (status != 0) test_fail(__FILE__, __LINE__, "convert --to gguf --type %s: exit %d: %s", type, status, text ? text : "");
    free(text);
    return status == 0 ? 0 : -1;
}

/* A file convert --to gguf writes is one llama.cpp loads and runs as
 * ahascope does; the f32 one, quantised by llama.cpp to each type, is
 * dequantised by ahascope as by ggml and run alike within the type's
 * tolerance; llama.cpp's own mixes (q4_k_m …: a type per tensor) too,
 * and `trace` runs on every file. */
TEST(llamacpp_convert_gguf_random) {
    SKIP_UNLESS_SHARED();
    if (!lcfx_available()) return;
    char bin[1024];
    int ids[CONV_POSITIONS];
    /* convert finds the vocabulary beside the checkpoint: the shared tok512.bin */
    const char *dir = test_tmp("llamacpp_random");
    char tokp[1100];
    long tn = 0;
    char *tokb = test_read_file(test_stories_tokenizer(), &tn);
    mkdir(dir, 0755);
    snprintf(tokp, sizeof tokp, "%s/tok512.bin", dir);
    snprintf(bin, sizeof bin, "%s/random256.bin", dir);
    int wrote = tokb && test_write_file(tokp, tokb, tn) == 0;
    free(tokb);
    CHECK_MSG(wrote, "cannot copy %s to %s", test_stories_tokenizer(), tokp);
    if (!wrote || random_llama(bin, ids, CONV_POSITIONS)) return;
    for (size_t k = 0; k < sizeof CONVERT_TYPES / sizeof *CONVERT_TYPES; k++) {
        char out[1100];
        snprintf(out, sizeof out, "%s.%s.gguf", bin, CONVERT_TYPES[k].type);
        if (convert_gguf(bin, CONVERT_TYPES[k].type, out)) continue;
        trace_runs(out, CONVERT_TYPES[k].type);
        double d = both_engines(out, ids, CONV_POSITIONS, CONVERT_TYPES[k].type);
        printf("  measured: random dim 256 convert --to gguf %s: max |dlogprob| %.3g\n", CONVERT_TYPES[k].type, d);
        CHECK_MSG(d <= CONVERT_TYPES[k].tol, "convert %s: llama.cpp vs ahascope max |dlogprob| %g > %g", CONVERT_TYPES[k].type, d,
                  CONVERT_TYPES[k].tol);
    }
    /* Greedy ids: the same model with its classifier scaled by 8, so its
     * next-token choices are decisive (the plain random model's logits are
     * near flat, and a tie tips on the last bit llama.cpp rounds the
     * activations to, bf16 for bf16 weights) */
    char sharp[1100];
    snprintf(sharp, sizeof sharp, "%s/sharp256.bin", dir);
    if (random_llama_scaled(sharp, ids, CONV_POSITIONS, 8) == 0)
        for (size_t k = 0; k < 4; k++) { /* f32, f16, bf16, q8_0 */
            char out[1200];
            snprintf(out, sizeof out, "%s.%s.gguf", sharp, CONVERT_TYPES[k].type);
            if (convert_gguf(sharp, CONVERT_TYPES[k].type, out) == 0) same_greedy(out, ids, CONVERT_TYPES[k].type);
        }
    char f32[1100];
    snprintf(f32, sizeof f32, "%s.f32.gguf", bin);
    for (size_t k = 0; k < sizeof REQUANT_TYPES / sizeof *REQUANT_TYPES; k++) {
        char out[1200], args[2600], types[256];
        snprintf(out, sizeof out, "%s.lc-%s.gguf", bin, REQUANT_TYPES[k].type);
        snprintf(args, sizeof args, "quantize %s %s %s%s", f32, out, REQUANT_TYPES[k].type,
                 strchr(REQUANT_TYPES[k].type + 3, '_') ? "" : " --pure"); /* q4_k_m is a mix: not pure */
        if (lcfx_run(args)) continue;
        file_types(out, types, sizeof types);
        CHECK_MSG(file_dequant_diffs(out) == 0, "%s: tensors dequantise differently (%s)", REQUANT_TYPES[k].type, types);
        trace_runs(out, REQUANT_TYPES[k].type);
        double d = both_engines(out, ids, CONV_POSITIONS, REQUANT_TYPES[k].type);
        printf("  measured: random dim 256 quantised by llama.cpp to %s (%s): max |dlogprob| %.3g\n", REQUANT_TYPES[k].type, types, d);
        CHECK_MSG(d <= REQUANT_TYPES[k].tol, "%s: llama.cpp vs ahascope max |dlogprob| %g > %g", REQUANT_TYPES[k].type, d,
                  REQUANT_TYPES[k].tol);
    }
}

/* The harness's refusals: one line starting "ref: ", naming the file or
 * the argument, with the exit status its header promises (1 bad input, 2
 * usage, 3 no libraries); a truncated GGUF is refused, never a crash. */
TEST(llamacpp_ref_refuses_bad_input) {
    SKIP_UNLESS_SHARED();
    if (!lcfx_available()) return;
    const char *ref = lcfx_ref(), *S = test_shared(STORIES_GGUF);
    char model[1024], ok[1024], word[1024], big[1024], none[1024], odd[1024], cut[1024], out[1024];
    snprintf(model, sizeof model, "%s", S);
    snprintf(ok, sizeof ok, "%s", test_tmp("ok.ids"));
    snprintf(word, sizeof word, "%s", test_tmp("word.ids"));
    snprintf(big, sizeof big, "%s", test_tmp("big.ids"));
    snprintf(none, sizeof none, "%s", test_tmp("none.ids"));
    snprintf(odd, sizeof odd, "%s", test_tmp("odd.q"));
    snprintf(cut, sizeof cut, "%s", test_tmp("cut.gguf"));
    snprintf(out, sizeof out, "%s", test_tmp("out.f32"));
    test_write_file(ok, "1 2 3\n", 6);
    test_write_file(word, "1 2 x\n", 6);
    test_write_file(big, "1 512\n", 6);
    test_write_file(none, "\n", 1);
    test_write_file(odd, "0123456789012345678901234567890123", 33);
    long n = 0;
    char *g = test_read_file(model, &n);
    if (g) test_write_file(cut, g, n > 4000 ? 4000 : n);
    free(g);
    struct {
        const char *fmt, *a, *b;
        int status;
        const char *needle;
    } bad[] = {
        {"%s bogus", "", "", 2, "unknown command 'bogus'"},
        {"%s logits %s", model, "", 2, "usage: ref logits"},
        {"%s logits /nonexistent.gguf %s OUT", ok, "", 1, "/nonexistent.gguf: llama.cpp cannot load it"},
        {"%s logits %s /nonexistent.ids OUT", model, "", 1, "/nonexistent.ids: cannot open"},
        {"%s logits %s %s OUT", model, word, 1, "token 3 is not an integer"},
        {"%s logits %s %s OUT", model, big, 1, "token 512 is outside the vocabulary of 512"},
        {"%s logits %s %s OUT", model, none, 1, "holds no tokens"},
        {"%s logits %s %s OUT", cut, ok, 1, "cut.gguf: llama.cpp cannot load it"},
        {"%s logits %s %s OUT", ok, ok, 1, "ok.ids: llama.cpp cannot load it"},
        {"%s logits %s %s OUT --kv f8", model, ok, 2, "--kv must be f32 or f16"},
        {"%s greedy %s 0 1", model, "", 2, "N must be an integer"},
        {"%s quantize %s %s q7", model, out, 2, "unknown TYPE 'q7'"},
        {"%s quantize /nonexistent.gguf %s q8_0", out, "", 1, "/nonexistent.gguf: cannot open"},
        {"%s dequant q4_k 100 1 %s", out, "", 2, "multiple of 256"},
        {"%s dequant q9 256 1 %s", out, "", 2, "unknown TYPE 'q9'"},
        {"%s tofloat q8_0 %s %s", odd, out, 1, "33 bytes are not whole q8_0 blocks of 34"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char cmd[4096], fmt[256];
        snprintf(fmt, sizeof fmt, "%s 2>&1", bad[i].fmt);
        snprintf(cmd, sizeof cmd, fmt, ref, bad[i].a, bad[i].b);
        CHECK_REFUSAL(cmd, bad[i].status, "ref: ", bad[i].needle, 1);
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "AHASCOPE_LLAMACPP_DIR=/nonexistent %s info 2>&1", ref);
    CHECK_REFUSAL(cmd, 3, "ref: ", "cannot load llama.cpp", 1);
}

/* ref bench on stories260K, small: one line with both rates, positive. */
TEST(llamacpp_ref_bench_reports_rates) {
    SKIP_UNLESS_SHARED();
    if (!lcfx_available()) return;
    int status = -1;
    char *out = test_runf(&status, "%s bench %s --prompt 64 --gen 8 --threads 1 2>&1", lcfx_ref(), test_shared(STORIES_GGUF));
    double pre = 0, dec = 0;
    const char *p = out ? strstr(out, "prefill 64 tokens ") : NULL, *d = out ? strstr(out, "decode 8 tokens ") : NULL;
    if (p) pre = atof(p + strlen("prefill 64 tokens "));
    if (d) dec = atof(d + strlen("decode 8 tokens "));
    CHECK_MSG(status == 0 && pre > 0 && dec > 0, "ref bench: exit %d: %s", status, out ? out : "");
    free(out);
}
