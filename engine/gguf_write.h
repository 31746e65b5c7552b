/* gguf_write.h — write GGUF v3 files: metadata, tensors, and whole models (llama, qwen3, gemma2, gemma3, phi3).
 *
 * Two levels. The container (gguf_write.c): a GgufWriter collects metadata
 * pairs (serialised as they are added) and tensor infos, then
 * gguf_write_file lays them out as engine/gguf.h describes — little-endian
 * v3, general.alignment 32 (written as a key), each tensor's data starting
 * at a multiple of 32 from the data section and padded with zeros to the
 * next one, as ggml's writer pads — through a temporary that is fsynced and
 * renamed, so a failed write (a full disk) leaves no file and one line
 * naming path. Adding only records; every check that can fail does so
 * before the file is created.
 *
 * The model (gguf_write_model.c): a loaded model (a llama2.c checkpoint, a
 * Hugging Face llama, mistral, qwen3, gemma2, gemma3 or phi3 folder, a GGUF
 * file of those) with ggml's tensor names and {arch}.* keys, its 2-D
 * matrices at one type (f32, f16, bf16, q8_0, q4_0; the norms stay f32),
 * and a vocabulary as tokenizer.ggml.*. A llama's Hugging Face rows
 * (rotate-half RoPE) are permuted back into adjacent pairs, the order
 * ggml's llama rotates and model_gguf.c reads; the other architectures
 * rotate halves in ggml and keep the folder's rows.
 */
#ifndef AHASCOPE_GGUF_WRITE_H
#define AHASCOPE_GGUF_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/err.h"
#include "engine/gguf.h"
#include "engine/model.h"
#include "engine/tokenize/tokenize.h"

#define GGUF_WRITE_ALIGN 32

typedef struct {
    char *name;
    int n_dims;
    int64_t ne[GGUF_MAX_DIMS];
    GgmlType type;
    const void *data;
    size_t nbytes;
    int owned;                 /* 1: data is freed by gguf_write_free */
} GgufWriteTensor;

typedef struct {
    uint8_t *kv;               /* the serialised pairs */
    size_t kv_len, kv_cap;
    char **keys;               /* for refusing a repeated key */
    int n_kv, cap_keys;
    GgufWriteTensor *t;
    int n_t, cap_t;
    char err[160];             /* the first failure while adding; reported by gguf_write_file */
} GgufWriter;

void gguf_write_init(GgufWriter *w);

/* Release the writer and the tensor data it owns; w becomes empty. */
void gguf_write_free(GgufWriter *w);

/* Add one metadata pair. Out of memory or a repeated key is remembered
 * and reported by gguf_write_file, so callers add a run of keys unchecked. */
void gguf_write_str(GgufWriter *w, const char *key, const char *v);
void gguf_write_u32(GgufWriter *w, const char *key, uint32_t v);
void gguf_write_i32(GgufWriter *w, const char *key, int32_t v);
void gguf_write_f32(GgufWriter *w, const char *key, float v);
void gguf_write_bool(GgufWriter *w, const char *key, int v);

/* An array of n strings: s[i] of len[i] bytes (len NULL: NUL-terminated). */
void gguf_write_arr_str(GgufWriter *w, const char *key, uint64_t n, const char *const *s, const size_t *len);

/* An array of n f32 or i32 values. */
void gguf_write_arr_f32(GgufWriter *w, const char *key, uint64_t n, const float *v);
void gguf_write_arr_i32(GgufWriter *w, const char *key, uint64_t n, const int32_t *v);

/* A pair of an opened file, value and type as they are (to carry a
 * tokenizer over from one GGUF file to another). */
void gguf_write_copy(GgufWriter *w, const GgufKv *kv);

/* Add a tensor of n_dims dims ne (fastest-varying first) of type t whose
 * nbytes bytes at data must stay valid until the file is written (owned:
 * the writer frees them, also on failure). 0, or -1 with e set: a bad name,
 * shape, type, size or a repeated name. */
int gguf_write_tensor(GgufWriter *w, const char *name, GgmlType t, int n_dims, const int64_t *ne, const void *data,
                      size_t nbytes, int owned, Err *e);

/* Write everything to path (which must not be an existing non-regular file:
 * file_atomic_open checks) atomically. 0, or -1 with e "PATH: problem". */
int gguf_write_file(const GgufWriter *w, const char *path, Err *e);

/* What gguf_write_model writes beside the weights. Exactly one vocabulary
 * source: tok (a llama2.c tokenizer.bin: written as tokenizer.ggml.model
 * "llama"), from (a GGUF file whose tokenizer.* pairs are copied) or
 * hf_tokenizer (a tokenizer.json path: byte-level BPE written as "gpt2"). */
typedef struct {
    GgmlType type;             /* the 2-D matrices' type: F32, F16, BF16, Q8_0 or Q4_0 */
    const char *name;          /* general.name */
    const Tokenizer *tok;
    const GgufFile *from;
    const char *hf_tokenizer;
    const char *chat_template; /* tokenizer.chat_template, or NULL */
    int bos_id, eos_id;        /* for tok and hf_tokenizer; -1 when the model has none */
    int add_bos;               /* tokenizer.ggml.add_bos_token */
} GgufSaveOpts;

/* Write m as a GGUF llama (a llama2.c checkpoint, a llama or mistral
 * model), qwen3, gemma2, gemma3 or phi3 at path. Refuses in one line naming
 * path (and the tensor): another architecture, what the target's llama.cpp
 * block cannot state (llama3 RoPE scaling, gemma windows or query scales
 * off llama.cpp's, phi3 heads apart from dim / heads), a type not listed,
 * rows that do not divide into 32 for Q8_0/Q4_0, a vocabulary whose size is
 * not the model's. */
int gguf_write_model(const Model *m, const char *path, const GgufSaveOpts *o, Err *e);

/* What llama.cpp will run differently from the file m becomes: one line
 * into buf (a mistral's or phi3's window, which llama.cpp runs as full
 * attention) and 1, or "" and 0 when it runs what ahascope runs. */
int gguf_write_llamacpp_note(const Model *m, char *buf, size_t cap);

/* The tokenizer.json at path as tokenizer.ggml.* (gguf_write_hftok.c): a
 * byte-level BPE is written as model "gpt2" (tokens, token_type, merges,
 * pre); any other kind is refused in one line saying it cannot be written,
 * as is a vocabulary of other than vocab_size ids. 0, or -1 with e set. */
int gguf_write_hf_vocab(GgufWriter *w, const char *path, int vocab_size, Err *e);

/* general.file_type (llama.cpp's llama_ftype) of files whose matrices are t:
 * ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q4_0 2, MOSTLY_Q8_0 7, MOSTLY_BF16 32;
 * -1 for a type gguf_write_model does not write. */
int gguf_write_file_type(GgmlType t);

/* The GgmlType a --type name stands for ("f32", "f16", "bf16", "q8_0",
 * "q4_0", any case); -1 if none. */
int gguf_write_type_parse(const char *name);

#endif
