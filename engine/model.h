/* model.h — transformer weights, from llama2.c checkpoints (v0 legacy and
 * v1 "ak42"), Hugging Face folders (model_hf.c: llama, qwen2, olmo2, faolmo
 * in F32/F16/BF16), or random weights built in memory for benchmarks, in
 * the llama2.c block or any of those architectures' (model_hf_write.c, which
 * also writes a model out as a Hugging Face folder).
 *
 * Matrices are row-major [out][in]. llama2.c checkpoints rotate adjacent
 * RoPE pairs (q[2i], q[2i+1]); Hugging Face models rotate halves (q[i],
 * q[i + head_size/2]). The forward pass reads only Model.layers, .embed,
 * .cls and .final_norm, so every source feeds the same code; Weights (f32,
 * contiguous over layers) exists only for llama2.c sources, which training,
 * saving and conversion need.
 *
 * model_config.c holds what needs no weights (Config checks, sizes, dtype
 * names, the llama2.c header), beneath both loaders; model.c dispatches a
 * folder to model_hf.c, which never calls back.
 */
#ifndef AHASCOPE_MODEL_H
#define AHASCOPE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "mem.h"

/* Where a model's architecture came from; decides the block's shape. */
typedef enum {
    ARCH_LLAMA2C, /* llama2.c checkpoint: pre-norm llama, adjacent-pair RoPE */
    ARCH_LLAMA,   /* HF llama: pre-norm, rotate-half RoPE, optional llama3 scaling */
    ARCH_QWEN2,   /* HF qwen2: llama with q/k/v biases */
    ARCH_OLMO2,   /* HF olmo2: no pre-norms, post-attention/-FFN norms, QK-norm */
    ARCH_FAOLMO,  /* AHA-OLMO2: olmo2 with router rows fused into q_proj */
    ARCH_QWEN3,   /* HF qwen3: llama with per-head RMSNorm of q and k ([head_dim], shared by heads) */
    ARCH_MISTRAL, /* HF mistral: llama with a sliding window in every layer (none when null) */
    ARCH_GEMMA2,  /* HF gemma2: scaled embeddings, (1 + w) norms before and after attention and FFN,
                     GeGLU (tanh), query_pre_attn_scalar, soft-capped scores and logits, windowed layers */
    ARCH_GEMMA3,  /* HF gemma3_text: gemma2's block without soft-caps, per-head q/k norms, local
                     layers on their own RoPE base, global ones on rope_theta with linear scaling */
    ARCH_PHI3     /* HF phi3: llama with fused qkv_proj and gate_up_proj, optional sliding_window,
                     longrope (su) RoPE scaling */
} Arch;

/* Storage type of a weight matrix (the forward pass computes in f32). The
 * quantised ones are ggml's block formats (engine/quant.h), read in place
 * from a GGUF file: a row is cols / block weights of block bytes each. */
typedef enum {
    DT_F32, DT_F16, DT_BF16,
    DT_Q4_0, DT_Q4_1, DT_Q5_0, DT_Q5_1, DT_Q8_0, DT_Q2_K, DT_Q3_K, DT_Q4_K, DT_Q5_K, DT_Q6_K,
    DT_NTYPES
} DType;

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
    int q_dim;        /* n_heads * head_size; equals dim unless head_size is set apart */
    float norm_eps;   /* RMSNorm epsilon: 1e-5 for llama2.c */
    int rope_half;    /* 1: rotate-half pairs (HF); 0: adjacent pairs (llama2.c) */
    float rope_factor;           /* llama3 rope scaling factor; 0: no scaling */
    float rope_low, rope_high;   /* llama3 low_freq_factor, high_freq_factor */
    int rope_orig_ctx;           /* llama3's (or longrope's) original_max_position_embeddings */
    int arch;         /* Arch */
    int dtype;        /* DType of the big matrices (bytes per weight in decode_bytes); a GGUF
                         file of mixed types: the type holding the most bytes */
    uint64_t weight_bytes; /* when not 0, the bytes a decode step reads of the weights, counted
                              per tensor by a loader that knows each one's type (GGUF) */
    int qk_norm_head; /* 1: q_norm/k_norm are [head_size], applied to each head apart (qwen3) */
    int sliding_window; /* the architecture's window (mistral, gemma2); 0: none. Executed per layer (LayerWeights.window) */
    int window_pattern; /* gemma2: every window_pattern-th layer is global, the others windowed; 0: all windowed */
    float embed_scale;  /* embeddings multiplied by this (gemma2: sqrt(dim) rounded to f32); 0: not scaled */
    int act_gelu;       /* 1: the FFN gate is GELU's tanh form (GeGLU), 0: SiLU (SwiGLU) */
    float query_scale;  /* q·k multiplier (gemma2: query_pre_attn_scalar^-1/2); 0: 1/sqrt(head_size) */
    float attn_softcap, final_softcap; /* scores / logits become cap·tanh(x/cap); 0: none */
    float rope_local_theta; /* gemma3: the windowed layers' RoPE base (no scaling); 0: every layer on rope_theta */
    float rope_linear;      /* linear rope_scaling factor (positions / factor) of the layers on rope_theta; 0: none */
    const float *rope_ext;  /* longrope: each pair's frequency divided by rope_ext[i] ([head_size/2], owned by
                               the model); NULL: none */
    const float *rope_short, *rope_long; /* longrope's two tables ([head_size/2] each, owned by the model),
                                            rope_ext being the one the run's context picked; NULL: none */
    float rope_mscale;      /* longrope's attention factor: cos and sin multiplied by it; 0: 1 */
    int kv_dtype;     /* DType the KV cache stores: the matrices' by default (HF does the same);
                         a run may set it to DT_F32 before fwd_init to keep keys and values exact */
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

/* A matrix in its stored type: rows of `cols` elements starting at p. */
typedef struct {
    const void *p;
    int dt;            /* DType */
} Mat;

/* One block's weights as the forward pass reads them. Vectors are f32
 * (HF models: converted copies, they are small); NULL means the block has
 * no such part. */
typedef struct {
    Mat wq;            /* [q_dim (+ n_heads router rows, faolmo)][dim] */
    Mat wk, wv;        /* [kv_dim][dim] */
    Mat wo;            /* [dim][q_dim] */
    Mat w1, w3;        /* [hidden][dim]: gate, up */
    Mat w2;            /* [dim][hidden]: down */
    const float *attn_norm, *ffn_norm;           /* [dim] pre-norms; NULL in OLMo-2. Gains as multiplied:
                                                    Gemma's stored w is kept as 1 + w */
    const float *post_attn_norm, *post_ffn_norm; /* [dim] OLMo-2's post-norms */
    const float *q_norm, *k_norm;                /* [q_dim], [kv_dim]: QK-norm over the whole projection;
                                                    [head_size] each with Config.qk_norm_head */
    const float *bq, *bk, *bv;                   /* [q_dim], [kv_dim]: Qwen2's biases */
    int window;        /* the architecture's sliding window for this layer: every head reads only its
                          last `window` keys (self included), no router or policy decides; 0: none */
} LayerWeights;

typedef struct {
    Config c;
    Weights w;         /* llama2.c sources only; all NULL for HF folders */
    LayerWeights *layers; /* [n_layers] */
    Mat embed;         /* [vocab][dim] */
    Mat cls;           /* [vocab][dim] (the embedding when shared) */
    const float *final_norm; /* [dim] */
    int builtin_routers;  /* faolmo: wq holds n_heads router rows after W_Q */
    int default_window;   /* the method's window for built-in routers (faolmo: 128), else 0 */
    char arch_name[32];   /* "llama2.c", "llama", "qwen2", "olmo2", "faolmo" */
    size_t file_bytes;    /* bytes of the checkpoint file(s) */
    void *hf;             /* HF sources: open shards and converted vectors (model_hf.c) */
    void *gguf;           /* GGUF sources: the open file the matrices point into, widened vectors (model_gguf.c) */
    char path[1024];   /* file the weights came from ("" for random) */
    int version;       /* 0 legacy, 1 ak42, 2 HF folder, MODEL_VERSION_GGUF, -1 random */
    MemView file;      /* the checkpoint's bytes (mem_view_file), or zeroed */
    float *owned;      /* heap weights of a random model, or NULL */
    uint16_t *owned_half; /* model_to_half: the matrices in bf16/f16, or NULL */
    float *owned_arch;    /* model_random_arch: the parts llama2.c has no place for, or NULL */
    const char *packed;   /* GGUF: the matrices gemm_q_pack packed at load (owned by m->gguf), or NULL; */
    size_t packed_bytes;  /* a Mat whose p lies in [packed, packed + packed_bytes) is packed (engine/gemm_q.h) */
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

/* 1 if b, the first n bytes of a file of `size` bytes, is a llama2.c
 * checkpoint header that the size matches (for telling what a file is). */
int model_sniff(const unsigned char *b, size_t n, uint64_t size);

/* A llama2.c checkpoint opens with a header: v0 is seven int32 fields (28
 * bytes); v1 is the magic "ak42", a version and the fields, padded to 256. */
#define MODEL_V1_MAGIC 0x616b3432u /* "ak42" */
#define MODEL_V1_HEADER 256
#define MODEL_V0_HEADER 28

/* Parse and check the v0 or v1 header at the start of b (size bytes) into
 * c, with its version and length. Messages name no file: the caller says
 * which file is not a checkpoint. Returns 0 if it is a sane header. */
int model_header_read(const unsigned char *b, size_t size, Config *c, int *version, size_t *hdr, Err *e);

/* Bytes a checkpoint with this header must have: v1 has exactly the
 * weights, v0 also the legacy RoPE tables. */
uint64_t model_checkpoint_bytes(const Config *c, int version, size_t hdr);

/* Load a llama2.c checkpoint (v0 or v1) with mmap, validating every header
 * field and the exact file size; or, when path is a directory holding
 * config.json, a Hugging Face folder (model_load_hf). Returns 0 on success. */
int model_load(Model *m, const char *path, Err *e);

/* Model.version of a model read from a GGUF file. */
#define MODEL_VERSION_GGUF 3

/* Load a GGUF file (engine/gguf.h) of the llama, qwen2, olmo2, qwen3,
 * gemma2, gemma3 or phi3 architecture ({arch}.* metadata; a llama's
 * llama.attention.sliding_window makes it a windowed ARCH_MISTRAL; phi3's
 * fused attn_qkv/ffn_up are read as row ranges, its longrope tables
 * picked by the context), its matrices used in place in their
 * stored type (F32, F16, BF16, Q4_0 … Q8_0, Q2_K … Q6_K) from the mapped
 * file, which stays open until model_free; norms and biases widened to
 * owned f32; tied when there is no output.weight; the context capped at
 * MODEL_HF_DEFAULT_CTX. c.dtype is the type holding most bytes,
 * c.weight_bytes the bytes a decode step reads counted per tensor, and the
 * KV cache is f16 for a quantised model. Any other architecture, RoPE
 * scaling, another tensor type, a missing, mis-shaped or extra tensor is
 * one line naming the file (and tensor). It calls model_config.c, never
 * model.c: a caller tells a GGUF file by model_is_gguf (app_load does). */
int model_load_gguf(Model *m, const char *path, Err *e);

/* model_load_gguf with the context capped at max_ctx (> 0) instead of
 * MODEL_HF_DEFAULT_CTX, as model_load_hf takes it: --context. phi3 picks
 * its long factors when this context passes the original, as llama.cpp
 * does for its n_ctx. */
int model_load_gguf_ctx(Model *m, const char *path, int max_ctx, Err *e);

/* A model whose blocks a llama2.c checkpoint could hold (pre-norms only,
 * no biases or QK-norms, adjacent-pair RoPE unscaled, q_dim = dim, every
 * matrix F32: an F32 GGUF llama) rebuilt in place as owned f32 Weights in
 * llama2.c's order, so what reads that layout (training's backward pass)
 * can run it; the mapped file is let go. m is left as it was, and -1 with
 * a line naming what stands in the way, for any other model. */
int model_to_llama2c(Model *m, Err *e);

/* Release what model_load_gguf keeps (model_free calls it; safe on any model). */
void model_gguf_free(Model *m);

/* A GGUF model's type mix, as runs.arch names it (gguf_mix_name):
 * llama.cpp's name of its general.file_type ("Q4_K_M", "Q8_0", "F16", ...),
 * else the 2-D tensors' type of most bytes. Returns 0, or -1 when m is not
 * from GGUF. */
int model_gguf_type_mix(const Model *m, char *buf, size_t n);

/* 1 if path is a regular file opening with the GGUF magic. */
int model_is_gguf(const char *path);

/* The window of each layer of a GGUF file as model_load_gguf would set it
 * (LayerWeights.window: 0 global), from the header alone, into win[cap].
 * Returns the number of layers, or -1 with e set (a file the loader
 * refuses, or more than cap layers). */
int model_gguf_layer_windows(const char *path, int32_t *win, int cap, Err *e);

/* Each distinct attention kind of n layers (win[l]: 0 global, W > 0 local
 * with window W) with its count, in order of first appearance, into buf:
 * "22 local (window 512), 4 global", "10 local (window 512), 10 local
 * (window 1024), 4 global", "26 global". */
void model_layer_kinds_text(const int32_t *win, int n, char *buf, size_t cap);

/* The note a command prints when the architecture's window is longer than
 * AHA's window w: "the architecture's 22 local layers slide a window of
 * 512 keys, longer than AHA's w=64; --window applies to the 4 global
 * layers only" into buf. Returns 1 when a note applies (some local layer's window
 * exceeds w), else 0 and buf "". */
int model_window_note(const int32_t *win, int n, int w, char *buf, size_t cap);

/* Each layer's window of a loaded model into win[n_layers] (0 global). */
void model_layer_windows(const Model *m, int32_t *win);

/* Default context of a Hugging Face model: max_position_embeddings capped
 * here, because the KV cache is sized for the whole context. */
#define MODEL_HF_DEFAULT_CTX 4096

/* Load a Hugging Face folder: config.json and model.safetensors or sharded
 * files with model.safetensors.index.json, memory-mapped and used in their
 * stored dtype. max_ctx > 0 caps the context (else MODEL_HF_DEFAULT_CTX).
 * Errors name the file and, where one is at fault, the tensor. */
int model_load_hf(Model *m, const char *dir, int max_ctx, Err *e);

/* Release what model_load_hf allocated (model_free calls it; safe on any model). */
void model_hf_free(Model *m);

/* The files a loaded model came from, in a fixed order (llama2.c: the
 * checkpoint; HF: config.json, then the safetensors files); at most cap
 * paths, valid while the model is loaded. Returns the count. */
int model_files(const Model *m, const char **paths, int cap);

/* 1 if path is a directory with a config.json (a Hugging Face folder); a
 * config.json that is not a regular file counts, so loading names it. */
int model_is_hf_dir(const char *path);

/* Point m->layers, embed, cls and final_norm at the f32 Weights (llama2.c
 * sources and random models). Returns 0, or -1 when out of memory. */
int model_wire_layers(Model *m, Err *e);

/* Replace a random (any --arch block, faolmo's router rows included) or
 * llama2.c model's matrices by bf16 or f16 copies (for benchmarks and tests
 * of the half-precision kernels); norms stay f32. */
int model_to_half(Model *m, DType dt, Err *e);

/* Size in bytes of one element of DT_F32, DT_F16 or DT_BF16 (the KV
 * cache's types); 0 for a block type, whose size is model_row_bytes'. */
size_t model_dtype_size(int dt);

/* Bytes of a row of cols weights of any DType (cols a whole number of its
 * blocks, as the loaders check). */
size_t model_row_bytes(int dt, size_t cols);

/* 1 for the quantised block types (DT_Q4_0 … DT_Q6_K). */
int model_dtype_is_block(int dt);

/* The ggml type number (GgmlType) of a DType, and the DType of a ggml
 * type (-1 for one no Mat can hold). */
int model_dtype_ggml(int dt);
int model_dtype_from_ggml(int ggml_type);

/* Name of a DType ("f32", "f16", "bf16", "q4_k", ...). */
const char *model_dtype_name(int dt);

/* The DType a name stands for, of the three a model can be converted to or
 * a KV cache kept in (f32, bf16, f16); -1 for any other. */
int model_dtype_parse(const char *name);

/* Build a model with random weights (uniform, scaled so activations stay
 * O(1)) from a config, deterministic in seed. Returns 0 on success. */
int model_random(Model *m, const Config *c, uint64_t seed, Err *e);

/* n uniform values in [-scale, scale) from the stream *s (the generator
 * model_random draws from, so every random part of a model is one kind). */
void model_fill_uniform(float *p, uint64_t n, float scale, uint64_t *s);

/* model_random in the block layout of arch (model_hf_write.c): qwen2 adds
 * q/k/v biases; olmo2 moves the norms after attention and the FFN, adds
 * QK-norms and unties the classifier; faolmo also appends n_heads router
 * rows to every W_Q; qwen3 adds per-head q/k norms of [head_size]; mistral
 * sets every layer's window to c->sliding_window; gemma2 has all four norms,
 * GeGLU, sqrt(dim)-scaled embeddings, soft-capping from c and windows on
 * the layers c->window_pattern leaves local. Norm and bias values are randomised so a misplaced
 * one shows. RoPE stays on adjacent pairs (model_save_hf reorders the rows
 * for the rotate-half files). ARCH_LLAMA2C is plain model_random. */
int model_random_arch(Model *m, const Config *c, int arch, uint64_t seed, Err *e);

/* The model_type of an architecture ("llama" for ARCH_LLAMA2C), and the
 * Arch a name stands for (-1 if none of llama, qwen2, olmo2, faolmo,
 * qwen3, mistral, gemma2, gemma3_text, phi3). */
const char *model_arch_type(int arch);
int model_arch_parse(const char *name);

/* What model_save_hf writes beside the weights. */
typedef struct {
    int dtype;          /* DType of every tensor in model.safetensors */
    int bos_id, eos_id; /* config.json's and generation_config.json's */
    int tokenizer;      /* 1: also a byte-level tokenizer.json of vocab_size ids (hftok_bytelevel_json) */
} HfSaveOpts;

/* Write an f32 model (model_random_arch, or a llama2.c checkpoint, written
 * as llama) as a Hugging Face folder dir: model.safetensors, then
 * generation_config.json, tokenizer.json if asked, and config.json last, so
 * a folder that stopped half-way is not taken for a model. Each file is
 * written to a temporary and renamed. W_Q/W_K rows (and their norms and
 * biases) are reordered from adjacent RoPE pairs to halves when the model
 * rotates pairs, so the folder computes the same logits. */
int model_save_hf(const Model *m, const char *dir, const HfSaveOpts *o, Err *e);

/* Write the model as a llama2.c checkpoint: version 0 (legacy, with the
 * freq_cis tables) or 1 ("ak42"), atomically through FileAtomic. */
int model_save(const Model *m, const char *path, int version, Err *e);

/* Number of parameters (classifier counted once when shared; built-in
 * router rows, biases and QK-norms not counted). */
size_t model_n_params(const Config *c);

/* Bytes of weights a decode step streams from memory: c->weight_bytes when
 * the loader counted them per tensor, else every matrix once in its stored
 * dtype (c->dtype) and the f32 norms, plus one embedding row. */
size_t model_decode_bytes(const Config *c);

/* Bytes of keys and values, every layer, in c->kv_dtype, for `positions`
 * cached positions. */
size_t model_kv_bytes(const Config *c, size_t positions);

/* Unmap or free the weights (safe on a zeroed struct). */
void model_free(Model *m);

#endif
