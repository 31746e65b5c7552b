/* fuzz_config.c — a Hugging Face folder's config.json (engine/model_hf.c).
 * The bytes become DIR/config.json beside a fixed model.safetensors holding
 * every tensor llama, qwen2 and olmo2 read at one shape (1 layer, width 16,
 * 4 heads of 8, 2 KV heads, FFN 32, vocabulary 64), so a config that parses
 * goes on to have its shapes checked against real tensors. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/model.h"
#include "engine/safetensors.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The weights, zeros: only names, shapes and dtypes matter here. */
static void write_weights(const char *path) {
    static float zeros[64 * 16];
    static const struct { const char *name; int64_t rows, cols; } t[] = {
        {"model.layers.0.self_attn.q_proj.weight", 32, 16}, {"model.layers.0.self_attn.k_proj.weight", 16, 16},
        {"model.layers.0.self_attn.v_proj.weight", 16, 16}, {"model.layers.0.self_attn.o_proj.weight", 16, 32},
        {"model.layers.0.mlp.gate_proj.weight", 32, 16},    {"model.layers.0.mlp.down_proj.weight", 16, 32},
        {"model.layers.0.mlp.up_proj.weight", 32, 16},      {"model.layers.0.input_layernorm.weight", 16, 0},
        {"model.layers.0.post_attention_layernorm.weight", 16, 0},
        {"model.layers.0.post_feedforward_layernorm.weight", 16, 0},
        {"model.layers.0.self_attn.q_norm.weight", 32, 0},  {"model.layers.0.self_attn.k_norm.weight", 16, 0},
        {"model.layers.0.self_attn.q_proj.bias", 32, 0},    {"model.layers.0.self_attn.k_proj.bias", 16, 0},
        {"model.layers.0.self_attn.v_proj.bias", 16, 0},    {"model.embed_tokens.weight", 64, 16},
        {"model.norm.weight", 16, 0},                       {"lm_head.weight", 64, 16}};
    StWriter w;
    Err e;
    st_writer_init(&w);
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        int64_t shape[2] = {t[i].rows, t[i].cols};
        if (st_writer_add(&w, t[i].name, ST_F32, t[i].cols ? 2 : 1, shape, zeros, &e)) abort();
    }
    if (st_write(&w, path, &e)) abort();
    st_writer_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) {
        mkdir(fuzz_path("hf"), 0700);
        write_weights(fuzz_path("hf/model.safetensors"));
        ready = 1;
    }
    fuzz_write("hf/config.json", data, size);
    Model m;
    Err e;
    if (model_load_hf(&m, fuzz_path("hf"), 0, &e) == 0) model_free(&m);
    return 0;
}
