/* make_seeds.c — writes every harness's seed corpus with the project's own writers.
 *
 * Writes the seed corpora of the fuzz harnesses into OUT_DIR,
 * one folder per harness, with the project's own writers (model_save,
 * st_write, router_save, the store's writer; GGUF by hand) so seeds are real files of
 * each format. Usage: make_seeds OUT_DIR (the Makefile runs it at build
 * time; nothing it writes is committed). */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/gguf.h"
#include "engine/headset.h"
#include "engine/model.h"
#include "engine/routers.h"
#include "engine/safetensors.h"
#include "engine/trace.h"
#include "fuzz.h"
#include "store/store.h"

static const char *out_dir;

/* OUT_DIR/harness/name, its folder made on the way. */
static const char *seed_path(const char *harness, const char *name) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", out_dir, harness);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", out_dir, harness, name);
    return path;
}

static void put(const char *harness, const char *name, const void *data, size_t n) {
    FILE *f = fopen(seed_path(harness, name), "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) { perror(name); exit(1); }
}

static void die(const char *what, const Err *e) {
    fprintf(stderr, "make_seeds: %s: %s\n", what, e->msg);
    exit(1);
}

/* Tiny checkpoints in both versions, shared and separate classifiers. */
static void seed_checkpoints(void) {
    Config c = {.dim = 8, .hidden_dim = 16, .n_layers = 1, .n_heads = 2, .n_kv_heads = 1,
                .vocab_size = 12, .seq_len = 4, .shared_classifier = 1};
    Err e;
    for (int v = 0; v < 2; v++) {
        c.shared_classifier = !v;
        Model m;
        if (model_random(&m, &c, 7, &e) != 0) die("model_random", &e);
        if (model_save(&m, seed_path("checkpoint", v ? "v1.bin" : "v0.bin"), v, &e) != 0) die("model_save", &e);
        model_free(&m);
    }
}

static void seed_tokenizer_bin(void) {
    size_t n;
    uint8_t *b = fuzz_tokenizer_bin(&n);
    put("tokenizer_bin", "small.bin", b, n);
    free(b);
}

/* Tensors of several dtypes and ranks, with metadata. */
static void seed_safetensors(void) {
    static float f[6] = {1, 2, 3, 4, 5, 6};
    static uint16_t h[4] = {0x3c00, 0, 0x7c00, 0xfe00};
    static int64_t q[2] = {-1, 1};
    int64_t s23[2] = {2, 3}, s4[1] = {4}, s2[1] = {2}, s0[1] = {0};
    StWriter w;
    Err e;
    st_writer_init(&w);
    if (st_writer_add(&w, "a.weight", ST_F32, 2, s23, f, &e) || st_writer_add(&w, "b", ST_BF16, 1, s4, h, &e) ||
        st_writer_add(&w, "c", ST_F16, 1, s4, h, &e) || st_writer_add(&w, "d", ST_I64, 1, s2, q, &e) ||
        st_writer_add(&w, "empty", ST_F32, 1, s0, f, &e) || st_writer_add(&w, "scalar", ST_F32, 0, s0, f, &e) ||
        st_writer_meta(&w, "format", "pt", &e) || st_write(&w, seed_path("safetensors", "mixed.safetensors"), &e))
        die("st_write", &e);
    st_writer_free(&w);
}

/* Router files of the harness's shape (2 layers, 2 heads, width 4). */
static void seed_routers(void) {
    Routers r;
    Err e;
    const char *keys[] = {"window", "tau", "trained_on"}, *values[] = {"16", "0.5", "seed"};
    if (router_random(&r, 2, 2, 4, 3, &e) || router_save(&r, seed_path("routers", "meta.safetensors"), keys, values, 3, &e) ||
        router_save(&r, seed_path("routers", "plain.safetensors"), NULL, NULL, 0, &e))
        die("router_save", &e);
    router_free(&r);
}

/* config.json of each architecture at the shape of fuzz_config.c's weights. */
static void seed_configs(void) {
#define SHAPE "\"hidden_size\":16,\"intermediate_size\":32,\"num_hidden_layers\":1,\"num_attention_heads\":4," \
              "\"num_key_value_heads\":2,\"head_dim\":8,\"vocab_size\":64,\"max_position_embeddings\":64"
    static const char *cfg[][2] = {
        {"llama.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_act\":\"silu\","
                       SHAPE ",\"rms_norm_eps\":1e-05,\"rope_theta\":500000.0,\"tie_word_embeddings\":false,"
                       "\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":1.0,"
                       "\"high_freq_factor\":4.0,\"original_max_position_embeddings\":16}}"},
        {"qwen2.json", "{\"model_type\":\"qwen2\"," SHAPE ",\"rope_scaling\":null,\"tie_word_embeddings\":true,"
                       "\"attention_bias\":true}"},
        {"olmo2.json", "{\"model_type\":\"olmo2\"," SHAPE ",\"tie_word_embeddings\":false,\"rms_norm_eps\":1e-06}"},
        {"faolmo.json", "{\"model_type\":\"faolmo\"," SHAPE ",\"tie_word_embeddings\":false,\"aha_window\":8}"},
    };
#undef SHAPE
    for (size_t i = 0; i < sizeof cfg / sizeof *cfg; i++) put("config", cfg[i][0], cfg[i][1], strlen(cfg[i][1]));
}

/* A tokenizer.json far smaller than the fixtures: byte-level BPE with an
 * added special token and a template post-processor. */
static void seed_tokenizer_json(void) {
    static const char tok[] =
        "{\"added_tokens\":[{\"id\":6,\"content\":\"<|endoftext|>\",\"special\":true}],"
        "\"normalizer\":null,\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
        "\"use_regex\":true},\"decoder\":{\"type\":\"ByteLevel\"},"
        "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<|endoftext|>\","
        "\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"special_tokens\":{\"<|endoftext|>\":"
        "{\"id\":\"<|endoftext|>\",\"ids\":[6],\"tokens\":[\"<|endoftext|>\"]}}},"
        "\"model\":{\"type\":\"BPE\",\"byte_fallback\":false,\"vocab\":{\"a\":0,\"b\":1,\"Ġ\":2,\"ab\":3,\"Ġa\":4,"
        "\"Ġab\":5,\"<|endoftext|>\":6},\"merges\":[\"a b\",\"Ġ a\",[\"Ġa\",\"b\"]]}}";
    put("tokenizer_json", "tiny.json", tok, sizeof tok - 1);
}

/* tokenizer_config.json and generation_config.json in their usual shapes. */
static void seed_tokenizer_configs(void) {
    static const char *cfg[][2] = {
        {"plain.json", "{\"bos_token\":\"<|endoftext|>\",\"eos_token\":\"<|endoftext|>\",\"add_bos_token\":true}"},
        {"content.json", "{\"bos_token\":{\"content\":\"<|endoftext|>\",\"lstrip\":false},\"eos_token\":null,"
                         "\"add_eos_token\":false}"},
        {"generation.json", "{\"bos_token_id\":0,\"eos_token_id\":[1,2],\"do_sample\":true}"},
    };
    for (size_t i = 0; i < sizeof cfg / sizeof *cfg; i++)
        put("tokenizer_config", cfg[i][0], cfg[i][1], strlen(cfg[i][1]));
}

/* Texts for the encoder; the first byte picks vocabulary and flags. */
static void seed_texts(void) {
    static const char *texts[] = {"\x04the thé abab", "\x05Hello  world<|endoftext|>\n", "\x16 ▁hi </s>\xff",
                                  "\x1c\xe2\x82\xac\xf0\x9f\x98\x80 12345 ...", "\x00", "\x0a\t\t  \r\n\xc3"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char name[16];
        snprintf(name, sizeof name, "text%zu", i);
        put("encode", name, texts[i], strlen(texts[i] + 1) + 1);
    }
}

/* One run of three steps, shrunk to 512-byte pages so the seed is small. */
static void seed_store(void) {
    const char *path = seed_path("store", "run.db");
    unlink(path);
    Err e;
    Store *s = store_open(path, STORE_WRITE, 1000, &e);
    if (!s) die("store_open", &e);
    StoreRunInfo r = {.dim = 8, .hidden_dim = 16, .n_layers = 1, .n_heads = 2, .n_kv_heads = 2, .vocab_size = 12,
                      .seq_len = 4, .window = 2, .sinks = 1, .tau = 0.5, .steps = 3, .prompt = "hi",
                      .program_version = "seed"};
    snprintf(r.model, sizeof r.model, "m.bin");
    snprintf(r.policy, sizeof r.policy, "aha");
    if (store_run_begin(s, &r, &e)) die("store_run_begin", &e);
    for (int p = 0; p < 3; p++) {
        StepTrace *t = trace_new(1, 2);
        t->pos = p, t->token = p + 3, t->n_far = p, t->n_kv_heads = 2;
        snprintf(t->piece, sizeof t->piece, "t%d", p);
        t->score[0] = 0.25f, t->gate[0] = 1, t->gate[1] = 0;
        if (store_write_step(s, r.run_id, t, NULL, &e)) die("store_write_step", &e);
        trace_free(t);
    }
    if (store_run_end(s, r.run_id, "done", &e) || store_close(s, &e)) die("store_close", &e);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;", NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "make_seeds: %s: %s\n", path, sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_close(db);
}

/* DuoAttention tables as headset_table_write writes them, and one with
 * CRLF endings, a comment and a blank line, as published files may have. */
static void seed_headset(void) {
    float v[6] = {0.25f, 1, 0, 0.5f, 0.123456f, 0.75f};
    HeadTable t = {3, 2, v};
    Err e;
    if (headset_table_write(seed_path("headset", "gqa.tsv"), &t, "seed", &e)) die("headset", &e);
    t.n_layers = 6, t.n_kv = 1;
    if (headset_table_write(seed_path("headset", "column.tsv"), &t, NULL, &e)) die("headset", &e);
    static const char crlf[] = "# full_attention_heads\r\n1\t0\r\n\r\n0.0\t 0.9\r\n";
    put("headset", "crlf.tsv", crlf, sizeof crlf - 1);
}

/* The published tables for a 3-layer, 4-head (2 KV heads) model, one a
 * layout, the reader's selector byte first (fuzz_headtab.c). */
static void seed_headtab(void) {
    static const char *const seeds[][2] = {
        {"retrieval.json", "\x00{\"0-0\": [0.5, 1], \"0-1\": [0], \"0-2\": [0.2], \"0-3\": [1], \"1-0\": [0.1], "
                           "\"1-1\": [0.3], \"1-2\": [0.9], \"1-3\": [0], \"2-0\": [1], \"2-1\": [0.4], "
                           "\"2-2\": [0.6], \"2-3\": [0.7, 0.1]}"},
        {"prulong.tsv", "\x01# masks\n1\t0\n0.5\t0.75\n-1\t2\n"},
        {"moa.json", "\x02{\"alphas\": [[0, -1024], [16, 0], [2, 3]], \"betas\": [[0.5, 1], [0, 0.25], [0.125, 0]]}"},
        {"moa.csv", "\x02,plan_id,layer_id,head_id,alpha_value,beta_value\n0,0,0,0,0.0,0.5\n1,0,0,1,-1024.0,1.0\n"
                    "2,0,1,0,16,0\n3,0,1,1,0,0.25\n4,0,2,0,2,0.125\n5,0,2,1,3,0\n"},
        {"windows.tsv", "\x03" "4\t1\t2\t8\n16\t16\t1\t1\n3\t3\t3\t3\n"},
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) put("headtab", seeds[i][0], seeds[i][1], strlen(seeds[i][1] + 1) + 1);
}

/* A GGUF byte builder: no GGUF writer exists yet, so the seed is laid out
 * here from the format's definition. */
typedef struct {
    uint8_t b[2048];
    size_t n;
} GgufSeed;

static void gs_le(GgufSeed *g, uint64_t v, int n) {
    for (int i = 0; i < n; i++) g->b[g->n++] = (uint8_t)(v >> (8 * i));
}
static void gs_str(GgufSeed *g, const char *s) {
    gs_le(g, strlen(s), 8);
    memcpy(g->b + g->n, s, strlen(s));
    g->n += strlen(s);
}
static void gs_key(GgufSeed *g, const char *k, GgufVType t) { gs_str(g, k), gs_le(g, (uint64_t)t, 4); }
static void gs_tensor(GgufSeed *g, const char *name, uint64_t ne0, uint64_t ne1, GgmlType t, uint64_t off) {
    gs_str(g, name), gs_le(g, 2, 4), gs_le(g, ne0, 8), gs_le(g, ne1, 8), gs_le(g, (uint64_t)t, 4), gs_le(g, off, 8);
}

/* Every metadata type, string and f32 arrays, and one tensor of each
 * widenable type (F32, F16, BF16, Q8_0, Q4_0: 32x2 each). */
static void seed_gguf(void) {
    GgufSeed g = {{0}, 0};
    memcpy(g.b, "GGUF", 4), g.n = 4;
    gs_le(&g, 3, 4), gs_le(&g, 5, 8), gs_le(&g, 9, 8);
    gs_key(&g, "general.architecture", GGUF_STRING), gs_str(&g, "llama");
    gs_key(&g, "general.alignment", GGUF_U32), gs_le(&g, 32, 4);
    gs_key(&g, "llama.block_count", GGUF_U64), gs_le(&g, 1, 8);
    gs_key(&g, "a.i8", GGUF_I8), gs_le(&g, 0xfd, 1);
    gs_key(&g, "a.i16", GGUF_I16), gs_le(&g, 0xfffd, 2);
    gs_key(&g, "a.f64", GGUF_F64), gs_le(&g, 0x3ff0000000000000ull, 8);
    gs_key(&g, "a.bool", GGUF_BOOL), gs_le(&g, 1, 1);
    gs_key(&g, "tokenizer.ggml.tokens", GGUF_ARRAY), gs_le(&g, GGUF_STRING, 4), gs_le(&g, 2, 8);
    gs_str(&g, "<s>"), gs_str(&g, "ab");
    gs_key(&g, "tokenizer.ggml.scores", GGUF_ARRAY), gs_le(&g, GGUF_F32, 4), gs_le(&g, 2, 8), gs_le(&g, 0, 8);
    const GgmlType types[5] = {GGML_F32, GGML_F16, GGML_BF16, GGML_Q8_0, GGML_Q4_0};
    const char *names[5] = {"f32", "f16", "bf16", "q8_0", "q4_0"};
    const uint64_t bytes[5] = {256, 128, 128, 68, 36};
    uint64_t off = 0;
    for (int i = 0; i < 5; i++) gs_tensor(&g, names[i], 32, 2, types[i], off), off += (bytes[i] + 31) / 32 * 32;
    while (g.n % 32) g.b[g.n++] = 0;
    for (uint64_t i = 0; i < off; i++) g.b[g.n++] = (uint8_t)(i * 37);
    put("gguf", "mixed.gguf", g.b, g.n);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: make_seeds OUT_DIR\n"); return 2; }
    out_dir = argv[1];
    mkdir(out_dir, 0755);
    seed_checkpoints();
    seed_tokenizer_bin();
    seed_safetensors();
    seed_gguf();
    seed_routers();
    seed_configs();
    seed_tokenizer_json();
    seed_tokenizer_configs();
    seed_texts();
    seed_store();
    seed_headset();
    seed_headtab();
    return 0;
}
