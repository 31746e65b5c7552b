/* ref.c — llama.cpp as the outside reference: logits, greedy ids, quantised files and ggml's dequantisation.
 *
 * tests/test_llamacpp.c runs this program; it is never linked with
 * llama.cpp: it dlopens the prebuilt CPU libraries that
 * tests/llamacpp/install.sh put under $AHASCOPE_LLAMACPP_DIR (default
 * build/llamacpp) at run time, so the project builds without them and
 * nothing of llama.cpp is compiled in. The few declarations below are this
 * project's own, written against the llama.h and ggml.h of llama.cpp
 * release v0.5.0 (what @node-llama-cpp/linux-x64@3.22.1 ships). The three
 * structs handed over by value are checked at run time before any use
 * (lc_check_layouts): each default-params function writes into a buffer
 * with a guard behind our struct, and every field must hold the release's
 * default, so a longer, shorter or reordered struct is refused.
 *
 *   ref info
 *   ref logits MODEL.gguf TOKENS_FILE OUT [--threads N] [--kv f32|f16]
 *   ref greedy MODEL.gguf N TOKEN... [--threads N] [--kv f32|f16]
 *   ref quantize IN.gguf OUT.gguf TYPE [--pure]
 *   ref dequant TYPE N SEED OUT
 *   ref tofloat TYPE BLOCKS_FILE OUT
 *   ref bench MODEL.gguf [--threads N] [--prompt P] [--gen G]
 *
 * Exit codes: 0 done, 1 bad input or a refusal by llama.cpp (one line on
 * stderr naming the file and the problem), 2 usage, 3 the libraries are
 * missing or do not match the declarations. llama.cpp's own log is dropped;
 * its first error line is kept for our message.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define LC_PKG_LIBS "node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
#define LC_MAX_TOKENS 8192 /* positions one run feeds at most */
#define LC_MAX_DEQUANT (1 << 24) /* floats ref dequant makes at most */
#define LC_GUARD 256       /* bytes checked behind each by-value struct */

/* --- our declarations of llama.cpp v0.5.0's types (llama.h, ggml.h) --- */

typedef void (*LcLogFn)(int level, const char *text, void *user);

typedef struct {
    void *devices;
    const void *tensor_buft_overrides;
    int32_t n_gpu_layers;
    int32_t split_mode, load_mode, lazy_mode;
    int32_t main_gpu;
    const float *tensor_split;
    void *progress_callback;
    void *progress_callback_user_data;
    const void *kv_overrides;
    bool vocab_only, check_tensors, use_extra_bufts, no_host, no_alloc, load_mtp;
} LcModelParams;

typedef struct {
    uint32_t n_ctx, n_batch, n_ubatch, n_seq_max, n_rs_seq, n_outputs_max, n_outputs_max_per_seq;
    int32_t n_threads, n_threads_batch;
    int32_t ctx_type, rope_scaling_type, pooling_type, attention_type, flash_attn_type;
    float rope_freq_base, rope_freq_scale, yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow;
    uint32_t yarn_orig_ctx;
    float defrag_thold;
    void *cb_eval;
    void *cb_eval_user_data;
    int32_t type_k, type_v;
    void *abort_callback;
    void *abort_callback_data;
    bool embeddings, offload_kqv, no_perf, op_offload, swa_full, kv_unified;
    void *samplers;
    size_t n_samplers;
    void *ctx_other;
} LcContextParams;

typedef struct {
    int32_t nthread;
    int32_t ftype, output_tensor_type, token_embedding_type;
    bool allow_requantize, quantize_output_tensor, only_copy, pure, keep_split, dry_run;
    const void *imatrix, *kv_overrides, *tt_overrides;
    const int32_t *prune_layers;
    size_t max_buf_size;
} LcQuantParams;

typedef struct {
    int32_t n_tokens;
    int32_t *token;
    float *embd;
    int32_t *pos;
    int32_t *n_seq_id;
    int32_t **seq_id;
    int8_t *logits;
} LcBatch;

typedef struct {
    const char *type_name;
    int64_t blck_size, blck_size_interleave;
    size_t type_size;
    bool is_quantized;
    void (*to_float)(const void *x, float *y, int64_t k);
    void (*from_float_ref)(const float *x, void *y, int64_t k);
} LcTypeTraits;

enum { LC_TYPE_F32 = 0, LC_TYPE_F16 = 1, LC_TYPE_COUNT = 43, LC_LOG_ERROR = 4, LC_LOAD_NONE = 0, LC_FA_DISABLED = 0 };

/* The functions ref calls, found by dlsym. A struct returned by value is
 * returned through a hidden pointer on x86-64 (it is larger than 16 bytes),
 * so the default-params functions are called as void *f(void *out). */
typedef struct {
    void *lib;
    const char *dir;
    void (*backend_init)(void);
    void (*backend_load_all_from_path)(const char *dir);
    void (*log_set)(LcLogFn fn, void *user);
    void (*ggml_log_set)(LcLogFn fn, void *user);
    const char *(*version)(void);
    void *(*model_default_params)(void *out);
    void *(*context_default_params)(void *out);
    void *(*quantize_default_params)(void *out);
    void *(*model_load)(const char *path, LcModelParams p);
    void (*model_free)(void *model);
    void *(*init_from_model)(void *model, LcContextParams p);
    void (*free_ctx)(void *ctx);
    const void *(*model_get_vocab)(const void *model);
    int32_t (*vocab_n_tokens)(const void *vocab);
    int32_t (*decode)(void *ctx, LcBatch b);
    float *(*get_logits_ith)(void *ctx, int32_t i);
    uint32_t (*quantize)(const char *in, const char *out, const LcQuantParams *p);
    const LcTypeTraits *(*type_traits)(int type);
    size_t (*quantize_chunk)(int type, const float *src, void *dst, int64_t start, int64_t nrows, int64_t n_per_row,
                             const float *imatrix);
    bool (*requires_imatrix)(int type);
    size_t (*row_size)(int type, int64_t ne);
} Lc;

static char lc_last_error[512];

/* llama.cpp's log, dropped, except that its first error line is kept to
 * explain a refusal in our one-line message (later lines only say that the
 * call failed). */
static void lc_log_drop(int level, const char *text, void *user) {
    (void)user;
    if (level != LC_LOG_ERROR || !text || lc_last_error[0]) return;
    snprintf(lc_last_error, sizeof lc_last_error, "%s", text);
    for (char *p = lc_last_error; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    size_t n = strlen(lc_last_error);
    while (n && lc_last_error[n - 1] == ' ') lc_last_error[--n] = 0;
}

static int die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int die(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("ref: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}

/* The reason llama.cpp logged first, or a stand-in, for messages. */
static const char *lc_why(void) { return lc_last_error[0] ? lc_last_error : "no reason logged"; }

static void *lc_sym(Lc *lc, const char *name) {
    void *p = dlsym(lc->lib, name);
    if (!p) die(3, "%s: libllama has no %s (not llama.cpp v0.5.0?)", lc->dir, name);
    return p;
}

/* Where install.sh put the libraries: $AHASCOPE_LLAMACPP_DIR/LC_PKG_LIBS. */
static const char *lc_lib_dir(void) {
    static char dir[PATH_MAX];
    const char *root = getenv("AHASCOPE_LLAMACPP_DIR");
    snprintf(dir, sizeof dir, "%s/%s", root && *root ? root : "build/llamacpp", LC_PKG_LIBS);
    return dir;
}

#define LC_BIND(field, name) (*(void **)&lc->field = lc_sym(lc, name))

static void lc_bind(Lc *lc) {
    LC_BIND(backend_init, "llama_backend_init");
    LC_BIND(backend_load_all_from_path, "ggml_backend_load_all_from_path");
    LC_BIND(log_set, "llama_log_set");
    LC_BIND(ggml_log_set, "ggml_log_set");
    LC_BIND(version, "llama_version");
    LC_BIND(model_default_params, "llama_model_default_params");
    LC_BIND(context_default_params, "llama_context_default_params");
    LC_BIND(quantize_default_params, "llama_model_quantize_default_params");
    LC_BIND(model_load, "llama_model_load_from_file");
    LC_BIND(model_free, "llama_model_free");
    LC_BIND(init_from_model, "llama_init_from_model");
    LC_BIND(free_ctx, "llama_free");
    LC_BIND(model_get_vocab, "llama_model_get_vocab");
    LC_BIND(vocab_n_tokens, "llama_vocab_n_tokens");
    LC_BIND(decode, "llama_decode");
    LC_BIND(get_logits_ith, "llama_get_logits_ith");
    LC_BIND(quantize, "llama_model_quantize");
    LC_BIND(type_traits, "ggml_get_type_traits");
    LC_BIND(quantize_chunk, "ggml_quantize_chunk");
    LC_BIND(requires_imatrix, "ggml_quantize_requires_imatrix");
    LC_BIND(row_size, "ggml_row_size");
}

/* Call a default-params function into a buffer whose bytes past `size` are
 * a pattern; refuse when it wrote past our struct or left its last field
 * (last_off, last_len) unwritten, i.e. when its struct is longer or shorter. */
static void lc_defaults(Lc *lc, void *(*fn)(void *), void *out, size_t size, size_t last_off, size_t last_len,
                        const char *what) {
    unsigned char buf[sizeof(LcContextParams) + LC_GUARD] __attribute__((aligned(16)));
    memset(buf, 0xA5, sizeof buf);
    fn(buf);
    for (size_t i = size; i < size + LC_GUARD && i < sizeof buf; i++)
        if (buf[i] != 0xA5) die(3, "%s: %s is longer than ref.c's declaration (byte %zu written)", lc->dir, what, i);
    int untouched = 1;
    for (size_t i = 0; i < last_len; i++) untouched &= buf[last_off + i] == 0xA5;
    if (untouched) die(3, "%s: %s is shorter than ref.c's declaration", lc->dir, what);
    memcpy(out, buf, size);
}

#define LC_LAST(T, f) offsetof(T, f), sizeof(((T *)0)->f)

/* Every field of the three by-value structs must hold the release's default. */
static void lc_check_layouts(Lc *lc, LcModelParams *mp, LcContextParams *cp, LcQuantParams *qp) {
    lc_defaults(lc, lc->model_default_params, mp, sizeof *mp, LC_LAST(LcModelParams, load_mtp), "llama_model_params");
    lc_defaults(lc, lc->context_default_params, cp, sizeof *cp, LC_LAST(LcContextParams, ctx_other), "llama_context_params");
    lc_defaults(lc, lc->quantize_default_params, qp, sizeof *qp, LC_LAST(LcQuantParams, max_buf_size), "llama_model_quantize_params");
    int ok_m = !mp->devices && mp->n_gpu_layers == -1 && mp->split_mode == 1 && mp->load_mode == -1 && mp->lazy_mode == 1 &&
               mp->main_gpu == 0 && !mp->kv_overrides && !mp->vocab_only && mp->use_extra_bufts && !mp->load_mtp;
    int ok_c = cp->n_ctx == 512 && cp->n_batch == 2048 && cp->n_ubatch == 512 && cp->n_seq_max == 1 &&
               cp->n_outputs_max_per_seq == 1 && cp->n_threads == 4 && cp->rope_scaling_type == -1 &&
               cp->flash_attn_type == -1 && cp->yarn_ext_factor == -1.0f && cp->defrag_thold == -1.0f &&
               cp->type_k == LC_TYPE_F16 && cp->type_v == LC_TYPE_F16 && !cp->embeddings && cp->offload_kqv &&
               cp->no_perf && cp->swa_full && !cp->kv_unified && !cp->samplers && !cp->n_samplers && !cp->ctx_other;
    int ok_q = qp->nthread == 0 && qp->ftype == 7 && qp->output_tensor_type == LC_TYPE_COUNT &&
               qp->token_embedding_type == LC_TYPE_COUNT && !qp->allow_requantize && qp->quantize_output_tensor &&
               !qp->pure && !qp->imatrix && qp->max_buf_size == (size_t)8 << 30;
    if (!ok_m) die(3, "%s: llama_model_params defaults do not match ref.c's declaration", lc->dir);
    if (!ok_c) die(3, "%s: llama_context_params defaults do not match ref.c's declaration", lc->dir);
    if (!ok_q) die(3, "%s: llama_model_quantize_params defaults do not match ref.c's declaration", lc->dir);
}

/* dlopen the libraries, quiet the log, load the CPU backends, check the structs. */
static void lc_open(Lc *lc, LcModelParams *mp, LcContextParams *cp, LcQuantParams *qp) {
    memset(lc, 0, sizeof *lc);
    lc->dir = lc_lib_dir();
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/libllama.v0.5.0.so", lc->dir);
    FILE *probe = fopen(path, "rb");
    if (!probe) die(3, "%s: cannot load llama.cpp: not installed (sh tests/llamacpp/install.sh build/llamacpp)", path);
    fclose(probe);
    lc->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lc->lib) die(3, "cannot load llama.cpp: %s", dlerror());
    lc_bind(lc);
    lc->log_set(lc_log_drop, NULL);
    lc->ggml_log_set(lc_log_drop, NULL);
    lc->backend_load_all_from_path(lc->dir);
    lc->backend_init();
    LcModelParams m;
    LcContextParams c;
    LcQuantParams q;
    lc_check_layouts(lc, mp ? mp : &m, cp ? cp : &c, qp ? qp : &q);
}

/* --- argument helpers --- */

static long parse_long(const char *s, long lo, long hi, const char *what) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) die(2, "%s must be an integer in [%ld, %ld], not '%s'", what, lo, hi, s);
    return v;
}

typedef struct {
    int threads;
    int kv_f16;
    int pure;
    int prompt, gen;
} Opts;

/* Take the --flags out of argv (the rest stay, in order); returns the new argc. */
static int parse_opts(int argc, char **argv, Opts *o) {
    int k = 0;
    o->threads = 2, o->kv_f16 = 0, o->pure = 0, o->prompt = 512, o->gen = 64;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--threads") && more) o->threads = (int)parse_long(argv[++i], 1, 256, "--threads");
        else if (!strcmp(a, "--prompt") && more) o->prompt = (int)parse_long(argv[++i], 1, 4096, "--prompt");
        else if (!strcmp(a, "--gen") && more) o->gen = (int)parse_long(argv[++i], 1, 4096, "--gen");
        else if (!strcmp(a, "--kv") && more) {
            const char *v = argv[++i];
            if (strcmp(v, "f32") && strcmp(v, "f16")) die(2, "--kv must be f32 or f16, not '%s'", v);
            o->kv_f16 = !strcmp(v, "f16");
        } else if (!strcmp(a, "--pure")) o->pure = 1;
        else if (!strncmp(a, "--", 2)) die(2, "unknown option '%s'", a);
        else argv[k++] = argv[i];
    }
    return k;
}

/* --- running a model --- */

typedef struct {
    void *model, *ctx;
    int n_vocab;
} LcRun;

/* Load path on the CPU (read into memory, no mmap) with a context of
 * n_ctx positions, all fed in one batch when they fit. */
static void run_open(Lc *lc, LcRun *r, const char *path, int n_ctx, const Opts *o, LcModelParams mp, LcContextParams cp) {
    mp.n_gpu_layers = 0;
    mp.load_mode = LC_LOAD_NONE;
    r->model = lc->model_load(path, mp);
    if (!r->model) die(1, "%s: llama.cpp cannot load it: %s", path, lc_why());
    r->n_vocab = lc->vocab_n_tokens(lc->model_get_vocab(r->model));
    if (r->n_vocab <= 0) die(1, "%s: llama.cpp reports %d tokens", path, r->n_vocab);
    cp.n_ctx = (uint32_t)(n_ctx < 16 ? 16 : n_ctx);
    cp.n_batch = cp.n_ubatch = cp.n_ctx;
    cp.n_outputs_max = cp.n_ctx;
    cp.n_outputs_max_per_seq = cp.n_ctx;
    cp.n_threads = cp.n_threads_batch = o->threads;
    cp.flash_attn_type = LC_FA_DISABLED;
    cp.type_k = cp.type_v = o->kv_f16 ? LC_TYPE_F16 : LC_TYPE_F32;
    r->ctx = lc->init_from_model(r->model, cp);
    if (!r->ctx) die(1, "%s: llama.cpp cannot make a context of %u positions: %s", path, cp.n_ctx, lc_why());
}

static void run_close(Lc *lc, LcRun *r) {
    lc->free_ctx(r->ctx);
    lc->model_free(r->model);
}

/* Feed ids[0..n) at positions pos0.. as one batch; want_all asks for every
 * row's logits, else only the last row's. */
static void run_feed(Lc *lc, LcRun *r, const int32_t *ids, int n, int pos0, int want_all, const char *path) {
    int32_t *tok = malloc((size_t)n * sizeof *tok), *pos = malloc((size_t)n * sizeof *pos);
    int32_t *nseq = malloc((size_t)n * sizeof *nseq), seq0 = 0;
    int32_t **seq = malloc((size_t)n * sizeof *seq);
    int8_t *out = malloc((size_t)n);
    if (!tok || !pos || !nseq || !seq || !out) die(1, "%s: out of memory for a batch of %d", path, n);
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= r->n_vocab) die(1, "%s: token %d is outside the vocabulary of %d", path, ids[i], r->n_vocab);
        tok[i] = ids[i], pos[i] = pos0 + i, nseq[i] = 1, seq[i] = &seq0, out[i] = (int8_t)(want_all || i == n - 1);
    }
    LcBatch b = {n, tok, NULL, pos, nseq, seq, out};
    int32_t rc = lc->decode(r->ctx, b);
    if (rc != 0) die(1, "%s: llama_decode returned %d: %s", path, rc, lc_why());
    free(tok), free(pos), free(nseq), free(seq), free(out);
}

/* Read whitespace-separated token ids from path (at most LC_MAX_TOKENS). */
static int32_t *read_tokens(const char *path, int *n) {
    FILE *f = fopen(path, "r");
    if (!f) die(1, "%s: cannot open: %s", path, strerror(errno));
    int32_t *ids = malloc(LC_MAX_TOKENS * sizeof *ids);
    if (!ids) die(1, "%s: out of memory", path);
    long v;
    *n = 0;
    int got;
    while ((got = fscanf(f, "%ld", &v)) == 1) {
        if (*n >= LC_MAX_TOKENS) die(1, "%s: more than %d tokens", path, LC_MAX_TOKENS);
        if (v < 0 || v > INT32_MAX) die(1, "%s: token %ld is not a valid id", path, v);
        ids[(*n)++] = (int32_t)v;
    }
    int bad = got != EOF;
    fclose(f);
    if (bad) die(1, "%s: token %d is not an integer", path, *n + 1);
    if (*n == 0) die(1, "%s: holds no tokens", path);
    return ids;
}

static void write_all(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) die(1, "%s: cannot write: %s", path, strerror(errno));
}

/* ref logits: every position's logits, teacher-forced in one batch. */
static int cmd_logits(Lc *lc, int argc, char **argv, const Opts *o, LcModelParams mp, LcContextParams cp) {
    if (argc != 3) die(2, "usage: ref logits MODEL.gguf TOKENS_FILE OUT [--threads N] [--kv f32|f16]");
    int n;
    int32_t *ids = read_tokens(argv[1], &n);
    LcRun r;
    run_open(lc, &r, argv[0], n, o, mp, cp);
    run_feed(lc, &r, ids, n, 0, 1, argv[0]);
    if ((double)n * r.n_vocab * sizeof(float) > (double)((size_t)1 << 32))
        die(1, "%s: %d positions of %d logits are more than the 4 GiB written at most", argv[0], n, r.n_vocab);
    float *all = malloc((size_t)n * (size_t)r.n_vocab * sizeof *all);
    if (!all) die(1, "%s: out of memory for %d rows of logits", argv[0], n);
    for (int i = 0; i < n; i++) {
        const float *row = lc->get_logits_ith(r.ctx, i);
        if (!row) die(1, "%s: llama.cpp gave no logits for position %d", argv[0], i);
        memcpy(all + (size_t)i * r.n_vocab, row, (size_t)r.n_vocab * sizeof *row);
    }
    write_all(argv[2], all, (size_t)n * (size_t)r.n_vocab * sizeof *all);
    printf("%d %d\n", n, r.n_vocab);
    free(all), free(ids);
    run_close(lc, &r);
    return 0;
}

static int argmax(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* ref greedy: the prompt as one batch, then N greedy steps one token each. */
static int cmd_greedy(Lc *lc, int argc, char **argv, const Opts *o, LcModelParams mp, LcContextParams cp) {
    if (argc < 3) die(2, "usage: ref greedy MODEL.gguf N TOKEN... [--threads N] [--kv f32|f16]");
    int steps = (int)parse_long(argv[1], 1, LC_MAX_TOKENS / 2, "N");
    int n = argc - 2;
    if (n > LC_MAX_TOKENS / 2) die(2, "at most %d prompt tokens", LC_MAX_TOKENS / 2);
    int32_t ids[LC_MAX_TOKENS];
    for (int i = 0; i < n; i++) ids[i] = (int32_t)parse_long(argv[2 + i], 0, INT32_MAX, "TOKEN");
    LcRun r;
    run_open(lc, &r, argv[0], n + steps, o, mp, cp);
    run_feed(lc, &r, ids, n, 0, 0, argv[0]);
    for (int s = 0; s < steps; s++) {
        const float *row = lc->get_logits_ith(r.ctx, -1);
        if (!row) die(1, "%s: llama.cpp gave no logits at step %d", argv[0], s);
        int32_t next = argmax(row, r.n_vocab);
        printf("%s%d", s ? " " : "", next);
        if (s + 1 < steps) run_feed(lc, &r, &next, 1, n + s, 0, argv[0]);
    }
    printf("\n");
    run_close(lc, &r);
    return 0;
}

/* Our names for llama_ftype and ggml_type values. */
typedef struct {
    const char *name;
    int value;
} Named;

static const Named FTYPES[] = {
    {"f32", 0},     {"f16", 1},     {"q4_0", 2},    {"q4_1", 3},    {"q8_0", 7},    {"q5_0", 8},
    {"q5_1", 9},    {"q2_k", 10},   {"q3_k_s", 11}, {"q3_k_m", 12}, {"q3_k", 12},   {"q3_k_l", 13},
    {"q4_k_s", 14}, {"q4_k_m", 15}, {"q4_k", 15},   {"q5_k_s", 16}, {"q5_k_m", 17}, {"q5_k", 17},
    {"q6_k", 18},   {"q2_k_s", 21}, {"bf16", 32},
};

/* ggml_type ids with the block shape ggml must report (a check of the
 * traits struct as well as of the library). */
typedef struct {
    const char *name;
    int value;
    int64_t blck;
    size_t bytes;
} TypeShape;

static const TypeShape TYPES[] = {
    {"f32", 0, 1, 4},       {"f16", 1, 1, 2},        {"bf16", 30, 1, 2},      {"q8_0", 8, 32, 34},
    {"q4_0", 2, 32, 18},    {"q4_1", 3, 32, 20},     {"q5_0", 6, 32, 22},     {"q5_1", 7, 32, 24},
    {"q2_k", 10, 256, 84},  {"q3_k", 11, 256, 110},  {"q4_k", 12, 256, 144},  {"q5_k", 13, 256, 176},
    {"q6_k", 14, 256, 210},
};

static int lookup(const Named *t, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(t[i].name, name)) return t[i].value;
    return -1;
}

/* ref quantize: llama_model_quantize with llama.cpp's own mix, or --pure. */
static int cmd_quantize(Lc *lc, int argc, char **argv, const Opts *o, LcQuantParams qp) {
    if (argc != 3) die(2, "usage: ref quantize IN.gguf OUT.gguf TYPE [--pure]");
    int ft = lookup(FTYPES, sizeof FTYPES / sizeof *FTYPES, argv[2]);
    if (ft < 0) die(2, "unknown TYPE '%s' (f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k_s/m/l q4_k_s/m q5_k_s/m q6_k)", argv[2]);
    FILE *f = fopen(argv[0], "rb");
    if (!f) die(1, "%s: cannot open: %s", argv[0], strerror(errno));
    fclose(f);
    qp.ftype = ft;
    qp.nthread = o->threads;
    qp.pure = o->pure;
    uint32_t rc = lc->quantize(argv[0], argv[1], &qp);
    if (rc != 0) die(1, "%s: llama_model_quantize to %s failed: %s", argv[0], argv[2], lc_why());
    return 0;
}

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Uniform in [-1, 1) times a scale that changes every 32 values (so blocks
 * see small and large ranges), with exact zeros and a lone outlier now and
 * then: the cases a block quantiser rounds differently. */
static void make_values(float *x, int64_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    float scale = 1;
    for (int64_t i = 0; i < n; i++) {
        if (i % 32 == 0) scale = (float)(1e-3 * (double)(1 + rng_next(&s) % 4000));
        uint64_t r = rng_next(&s);
        float u = (float)((double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        x[i] = r % 61 == 0 ? 0.0f : r % 97 == 0 ? 8 * scale : u * scale;
    }
}

/* ref dequant: N values, ggml's blocks for them and ggml's to_float of the
 * blocks, as OUT.f32, OUT.q and OUT.deq. */
static int cmd_dequant(Lc *lc, int argc, char **argv) {
    if (argc != 4) die(2, "usage: ref dequant TYPE N SEED OUT");
    const TypeShape *t = NULL;
    for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
        if (!strcasecmp(TYPES[i].name, argv[0])) t = &TYPES[i];
    if (!t) die(2, "unknown TYPE '%s' (f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k)", argv[0]);
    int64_t n = parse_long(argv[1], 1, LC_MAX_DEQUANT, "N");
    uint64_t seed = (uint64_t)parse_long(argv[2], 0, LONG_MAX, "SEED");
    if (n % 256) die(2, "N must be a multiple of 256 (the k-quants' block), not %lld", (long long)n);
    const LcTypeTraits *tr = lc->type_traits(t->value);
    if (!tr || tr->blck_size != t->blck || tr->type_size != t->bytes || !tr->to_float)
        die(3, "%s: ggml's traits of %s are not %lld values in %zu bytes", lc->dir, t->name, (long long)t->blck, t->bytes);
    if (lc->requires_imatrix(t->value)) die(1, "ggml cannot quantise %s without an importance matrix", t->name);
    size_t qbytes = lc->row_size(t->value, n);
    if (qbytes != (size_t)(n / t->blck) * t->bytes) die(3, "%s: ggml_row_size(%s, %lld) = %zu", lc->dir, t->name, (long long)n, qbytes);
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    void *q = malloc(qbytes);
    if (!x || !y || !q) die(1, "out of memory for %lld values", (long long)n);
    make_values(x, n, seed);
    size_t wrote = lc->quantize_chunk(t->value, x, q, 0, 1, n, NULL);
    if (wrote != qbytes) die(1, "ggml_quantize_chunk(%s) wrote %zu bytes, expected %zu", t->name, wrote, qbytes);
    tr->to_float(q, y, n);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s.f32", argv[3]);
    write_all(path, x, (size_t)n * sizeof *x);
    snprintf(path, sizeof path, "%s.q", argv[3]);
    write_all(path, q, qbytes);
    snprintf(path, sizeof path, "%s.deq", argv[3]);
    write_all(path, y, (size_t)n * sizeof *y);
    printf("%s %d %lld %zu\n", tr->type_name, t->value, (long long)n, qbytes);
    free(x), free(y), free(q);
    return 0;
}

static void *read_all(const char *path, size_t *n, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) die(1, "%s: cannot open: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) die(1, "%s: cannot seek", path);
    long len = ftell(f);
    if (len < 0 || (size_t)len > cap) die(1, "%s: %ld bytes, more than the %zu read at most", path, len, cap);
    rewind(f);
    void *p = malloc(len ? (size_t)len : 1);
    if (!p || fread(p, 1, (size_t)len, f) != (size_t)len) die(1, "%s: cannot read %ld bytes", path, len);
    fclose(f);
    *n = (size_t)len;
    return p;
}

/* ref tofloat: ggml's to_float of a file of whole blocks of TYPE (for
 * tensors taken out of a GGUF file by the test). */
static int cmd_tofloat(Lc *lc, int argc, char **argv) {
    if (argc != 3) die(2, "usage: ref tofloat TYPE BLOCKS_FILE OUT");
    const TypeShape *t = NULL;
    for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
        if (!strcasecmp(TYPES[i].name, argv[0])) t = &TYPES[i];
    if (!t) die(2, "unknown TYPE '%s' (f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k)", argv[0]);
    const LcTypeTraits *tr = lc->type_traits(t->value);
    if (!tr || tr->blck_size != t->blck || tr->type_size != t->bytes)
        die(3, "%s: ggml's traits of %s are not %lld values in %zu bytes", lc->dir, t->name, (long long)t->blck, t->bytes);
    size_t nbytes;
    void *q = read_all(argv[1], &nbytes, (size_t)LC_MAX_DEQUANT * 4);
    if (nbytes == 0 || nbytes % t->bytes) die(1, "%s: %zu bytes are not whole %s blocks of %zu", argv[1], nbytes, t->name, t->bytes);
    int64_t n = (int64_t)(nbytes / t->bytes) * t->blck;
    float *y = malloc((size_t)n * sizeof *y);
    if (!y) die(1, "out of memory for %lld values", (long long)n);
    if (t->value == LC_TYPE_F32) memcpy(y, q, nbytes);
    else tr->to_float(q, y, n);
    write_all(argv[2], y, (size_t)n * sizeof *y);
    free(q), free(y);
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ref bench: one prefill of --prompt tokens, then --gen decode steps, timed
 * by the wall clock (a warm-up pass first, as ahascope bench does). */
static int cmd_bench(Lc *lc, int argc, char **argv, const Opts *o, LcModelParams mp, LcContextParams cp) {
    if (argc != 1) die(2, "usage: ref bench MODEL.gguf [--threads N] [--prompt P] [--gen G]");
    LcRun r;
    run_open(lc, &r, argv[0], o->prompt + o->gen, o, mp, cp);
    int32_t *ids = malloc((size_t)o->prompt * sizeof *ids);
    if (!ids) die(1, "out of memory");
    uint64_t s = 7;
    for (int i = 0; i < o->prompt; i++) ids[i] = (int32_t)(rng_next(&s) % (uint64_t)r.n_vocab);
    run_feed(lc, &r, ids, o->prompt < 32 ? o->prompt : 32, 0, 0, argv[0]); /* warm-up */
    run_close(lc, &r);
    run_open(lc, &r, argv[0], o->prompt + o->gen, o, mp, cp);
    double t0 = now_s();
    run_feed(lc, &r, ids, o->prompt, 0, 0, argv[0]);
    double t1 = now_s();
    for (int g = 0; g < o->gen; g++) {
        const float *row = lc->get_logits_ith(r.ctx, -1);
        if (!row) die(1, "%s: llama.cpp gave no logits at step %d", argv[0], g);
        int32_t next = argmax(row, r.n_vocab);
        run_feed(lc, &r, &next, 1, o->prompt + g, 0, argv[0]);
    }
    double t2 = now_s();
    printf("llama.cpp %s threads %d: prefill %d tokens %.1f tok/s, decode %d tokens %.1f tok/s\n", lc->version(), o->threads,
           o->prompt, o->prompt / (t1 - t0), o->gen, o->gen / (t2 - t1));
    free(ids);
    run_close(lc, &r);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) die(2, "usage: ref info|logits|greedy|quantize|dequant|tofloat|bench ... (see tests/llamacpp/ref.c)");
    const char *cmd = argv[1];
    Opts o;
    int n = parse_opts(argc - 2, argv + 2, &o);
    static const char *const known[] = {"info", "logits", "greedy", "quantize", "dequant", "tofloat", "bench"};
    int found = 0;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) found |= !strcmp(cmd, known[i]);
    if (!found) die(2, "unknown command '%s' (info, logits, greedy, quantize, dequant, tofloat, bench)", cmd);
    Lc lc;
    LcModelParams mp;
    LcContextParams cp;
    LcQuantParams qp;
    lc_open(&lc, &mp, &cp, &qp);
    char **a = argv + 2;
    if (!strcmp(cmd, "info")) {
        printf("llama.cpp %s from %s; struct layouts match\n", lc.version(), lc.dir);
        return 0;
    }
    if (!strcmp(cmd, "logits")) return cmd_logits(&lc, n, a, &o, mp, cp);
    if (!strcmp(cmd, "greedy")) return cmd_greedy(&lc, n, a, &o, mp, cp);
    if (!strcmp(cmd, "quantize")) return cmd_quantize(&lc, n, a, &o, qp);
    if (!strcmp(cmd, "dequant")) return cmd_dequant(&lc, n, a);
    if (!strcmp(cmd, "tofloat")) return cmd_tofloat(&lc, n, a);
    return cmd_bench(&lc, n, a, &o, mp, cp);
}
