/* info_gguf.c — `ahascope info` for a GGUF file: header, shape, tensor types, tokenizer. */
#include "app/info_gguf.h"

#include <stdio.h>
#include <string.h>

#include "engine/files.h"
#include "engine/gguf.h"
#include "engine/gguf_names.h"
#include "engine/model.h"
#include "engine/textout.h"

int info_is_gguf(const char *path) {
    FileKind k;
    if (!path || !file_stat_kind(path, &k, NULL)) return 0;
    FILE *f = fopen(path, "rb");
    char b[4];
    size_t n = f ? fread(b, 1, 4, f) : 0;
    if (f) fclose(f);
    return gguf_sniff(b, n);
}

/* {arch}.suffix as an integer, or -1 when absent. */
static long long arch_int(const GgufFile *f, const char *arch, const char *suffix) {
    char key[160];
    int64_t v;
    snprintf(key, sizeof key, "%.64s.%s", arch, suffix);
    return gguf_get_int(f, key, &v) == 0 ? (long long)v : -1;
}

/* "F32 48 (1.05 MB), Q4_K 120 (...)": each type present, in id order. */
static void type_counts(const GgufFile *f, char *out, size_t cap) {
    size_t used = 0;
    out[0] = '\0';
    for (int t = 0; t < GGML_NTYPES && used < cap; t++) {
        long n = 0;
        size_t bytes = 0;
        for (int i = 0; i < f->n_tensors; i++)
            if ((int)f->tensors[i].type == t) n++, bytes += f->tensors[i].nbytes;
        if (!n) continue;
        int w = snprintf(out + used, cap - used, "%s%s %ld (%zu bytes)", used ? ", " : "", gguf_type_name(t), n,
                         bytes);
        if (w > 0) used += (size_t)w;
    }
}

static long long vocab_size(const GgufFile *f) {
    const GgufKv *kv = gguf_find_kv(f, "tokenizer.ggml.tokens");
    return kv && kv->type == GGUF_ARRAY ? (long long)kv->count : -1;
}

/* The layer kinds as the loader windows them (model_gguf_layer_windows):
 * 1 with buf "22 local (window 512), 4 global", 0 for a file the loader
 * refuses. */
static int layer_kinds(const char *path, char *buf, size_t cap) {
    int32_t win[MODEL_MAX_LAYERS];
    Err e;
    int n = model_gguf_layer_windows(path, win, MODEL_MAX_LAYERS, &e);
    if (n >= 0) model_layer_kinds_text(win, n, buf, cap);
    return n >= 0;
}

static void print_text(const GgufFile *f, const char *path, const char *arch) {
    char safe[4 * 1100 + 1], types[2048];
    const char *tok = gguf_get_str(f, "tokenizer.ggml.model");
    int64_t ft;
    size_t bytes = 0;
    for (int i = 0; i < f->n_tensors; i++) bytes += f->tensors[i].nbytes;
    type_counts(f, types, sizeof types);
    printf("model         %s\n", textout_term(path, safe, sizeof safe));
    printf("format        gguf v%u\n", f->version);
    printf("architecture  %s\n", textout_term(arch, safe, sizeof safe));
    printf("dims          dim %lld, hidden %lld, layers %lld, heads %lld, kv_heads %lld, vocab %lld\n",
           arch_int(f, arch, "embedding_length"), arch_int(f, arch, "feed_forward_length"),
           arch_int(f, arch, "block_count"), arch_int(f, arch, "attention.head_count"),
           arch_int(f, arch, "attention.head_count_kv"), vocab_size(f));
    char kinds[400];
    printf("layers: %s\n", layer_kinds(path, kinds, sizeof kinds) ? kinds : "unknown (an architecture ahascope does not run)");
    printf("context       %lld\n", arch_int(f, arch, "context_length"));
    char mix[32];
    if (gguf_get_int(f, "general.file_type", &ft) == 0)
        printf("file_type     %lld (%s)\n", (long long)ft, gguf_file_type_name(ft) ? gguf_file_type_name(ft) : "unknown to ggml's list");
    else
        printf("file_type     none in the metadata (the matrices are mostly %s)\n", gguf_mix_name(f, mix, sizeof mix));
    printf("tensors       %d, %zu bytes of data (alignment %u), %d metadata keys\n", f->n_tensors, bytes,
           f->alignment, f->n_kv);
    printf("types         %s\n", types);
    if (tok) printf("tokenizer     %s, %lld tokens (in the metadata)\n", textout_term(tok, safe, sizeof safe), vocab_size(f));
    else printf("tokenizer     none in the metadata\n");
    printf("weights       not read (info needs only the header)\n");
}

static void print_json(const GgufFile *f, const char *path, const char *arch) {
    const char *tok = gguf_get_str(f, "tokenizer.ggml.model");
    char kinds[400];
    int64_t ft = -1;
    char mix[32];
    gguf_get_int(f, "general.file_type", &ft);
    const char *ftn = gguf_file_type_name(ft);
    printf("{\"format\": \"gguf\", \"version\": %u, \"architecture\": ", f->version);
    textout_json_print(stdout, arch);
    printf(", \"dim\": %lld, \"hidden_dim\": %lld, \"n_layers\": %lld, \"n_heads\": %lld, \"n_kv_heads\": %lld, "
           "\"context\": %lld, \"vocab_size\": %lld, \"file_type\": %lld, \"tensors\": %d, \"tokenizer\": ",
           arch_int(f, arch, "embedding_length"), arch_int(f, arch, "feed_forward_length"),
           arch_int(f, arch, "block_count"), arch_int(f, arch, "attention.head_count"),
           arch_int(f, arch, "attention.head_count_kv"), arch_int(f, arch, "context_length"), vocab_size(f),
           (long long)ft, f->n_tensors);
    if (tok) textout_json_print(stdout, tok);
    else printf("null");
    printf(", \"file_type_name\": ");
    if (ftn) textout_json_print(stdout, ftn);
    else printf("null");
    printf(", \"mix\": ");
    textout_json_print(stdout, gguf_mix_name(f, mix, sizeof mix));
    printf(", \"layer_kinds\": ");
    if (layer_kinds(path, kinds, sizeof kinds)) textout_json_print(stdout, kinds);
    else printf("null");
    printf("}\n");
}

int info_gguf(const char *path, int json, Err *e) {
    GgufFile f;
    if (gguf_open(&f, path, e)) return -1;
    const char *arch = gguf_get_str(&f, "general.architecture");
    if (!arch) arch = "unknown (no general.architecture)";
    if (json) print_json(&f, path, arch);
    else print_text(&f, path, arch);
    gguf_close(&f);
    return 0;
}
