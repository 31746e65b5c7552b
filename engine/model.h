/* model.h — transformer weights: llama2.c checkpoints (v0 legacy and v1
 * "ak42"), memory-mapped, or random weights built in memory for benchmarks.
 *
 * Matrices are row-major [out][in], as llama2.c stores them; RoPE in these
 * checkpoints rotates adjacent pairs (q[2i], q[2i+1]).
 */
#ifndef AHASCOPE_MODEL_H
#define AHASCOPE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct {
    int dim;          /* residual stream width */
    int hidden_dim;   /* FFN inner width */
    int n_layers;
    int n_heads;      /* query heads */
    int n_kv_heads;   /* key/value heads (< n_heads: grouped-query attention) */
    int vocab_size;
    int seq_len;      /* maximum context */
    int head_size;    /* dim / n_heads */
    int kv_dim;       /* n_kv_heads * head_size */
    int shared_classifier; /* 1: logits use the token embedding matrix */
    float rope_theta; /* 10000 for llama2.c checkpoints */
} Config;

typedef struct {
    const float *token_embedding; /* [vocab][dim] */
    const float *rms_att;         /* [layer][dim] */
    const float *wq;              /* [layer][dim][dim]      (out = n_heads*head_size) */
    const float *wk;              /* [layer][kv_dim][dim] */
    const float *wv;              /* [layer][kv_dim][dim] */
    const float *wo;              /* [layer][dim][dim] */
    const float *rms_ffn;         /* [layer][dim] */
    const float *w1;              /* [layer][hidden][dim]   gate */
    const float *w2;              /* [layer][dim][hidden]   down */
    const float *w3;              /* [layer][hidden][dim]   up */
    const float *rms_final;       /* [dim] */
    const float *wcls;            /* [vocab][dim] (== token_embedding when shared) */
} Weights;

typedef struct {
    Config c;
    Weights w;
    char path[1024];   /* file the weights came from ("" for random) */
    int version;       /* 0 legacy, 1 ak42, -1 random */
    void *map;         /* mmap of the checkpoint, or NULL */
    size_t map_size;
    float *owned;      /* heap weights of a random model, or NULL */
} Model;

/* Limits that reject absurd headers before any allocation is sized from them. */
#define MODEL_MAX_DIM 65536
#define MODEL_MAX_LAYERS 1024
#define MODEL_MAX_VOCAB (1 << 22)
#define MODEL_MAX_SEQ (1 << 20)

/* Check a config for consistency (positive dims, heads divide dim, kv heads
 * divide heads, even head size, sizes within the limits). `what` names the
 * source in the message. Fills head_size and kv_dim. Returns 0 if valid. */
int model_config_check(Config *c, const char *what, Err *e);

/* Load a llama2.c checkpoint (v0 or v1) with mmap, validating every header
 * field and the exact file size. Returns 0 on success. */
int model_load(Model *m, const char *path, Err *e);

/* Build a model with random weights (uniform, scaled so activations stay
 * O(1)) from a config, deterministic in seed. Returns 0 on success. */
int model_random(Model *m, const Config *c, uint64_t seed, Err *e);

/* Write the model as a llama2.c checkpoint: version 0 (legacy, with the
 * freq_cis tables) or 1 ("ak42"). Written to path.tmp then renamed. */
int model_save(const Model *m, const char *path, int version, Err *e);

/* Number of parameters (classifier counted once when shared). */
size_t model_n_params(const Config *c);

/* Bytes of weights a decode step streams from memory: every matrix and
 * norm once, plus one row of the embedding table. */
size_t model_decode_bytes(const Config *c);

/* Unmap or free the weights (safe on a zeroed struct). */
void model_free(Model *m);

#endif
