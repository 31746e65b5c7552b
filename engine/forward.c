/* forward.c — the forward pass, prefill and decode: layers, KV cache, matmul jobs, attention tasks. */
#include "forward.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "decide.h"
#include "half.h"
#include "headtab.h"
#include "kernels.h"
#include "matvec.h"
#include "routers.h"

void openblas_set_num_threads(int n); /* OpenBLAS extension, not in cblas.h everywhere */

/* Rows of a half-precision matrix widened at a time for a prefill sgemm:
 * enough to keep BLAS busy, small enough to stay in cache. */
#define HALF_TILE 64

/* The rotation frequency of pair i (of head_size/2), with llama3's
 * rescaling of long wavelengths when the config asks for it. */
static double rope_freq(const Config *c, int i, int local) {
    if (local) return 1.0 / pow(c->rope_local_theta, 2.0 * i / c->head_size); /* gemma3's local layers: unscaled */
    double f = 1.0 / pow(c->rope_theta, 2.0 * i / c->head_size);
    if (c->rope_ext) return f / c->rope_ext[i];
    if (c->rope_linear > 0) return f / c->rope_linear;
    if (c->rope_factor <= 0) return f;
    double pi = 3.14159265358979323846, wavelen = 2 * pi / f;
    double lo_wl = c->rope_orig_ctx / c->rope_low, hi_wl = c->rope_orig_ctx / c->rope_high;
    if (wavelen < hi_wl) return f;
    if (wavelen > lo_wl) return f / c->rope_factor;
    double smooth = (c->rope_orig_ctx / wavelen - c->rope_low) / (c->rope_high - c->rope_low);
    return (1 - smooth) * f / c->rope_factor + smooth * f;
}

/* Rows of rope tables: one set, or two when local layers have their own base. */
static int rope_sets(const Config *c) { return c->rope_local_theta > 0 ? 2 : 1; }

static void rope_tables(RunState *s, const Config *c) {
    size_t hs = c->head_size;
    for (int t = 0; t < c->seq_len * rope_sets(c); t++)
        for (int i = 0; i < c->head_size; i += 2) {
            float *co = &s->rope_cos[(size_t)t * hs / 2 + i / 2], *si = &s->rope_sin[(size_t)t * hs / 2 + i / 2];
            if (c->arch == ARCH_LLAMA2C) { /* the same float arithmetic as llama2.c, so positions rotate identically */
                float freq = 1.0f / powf(c->rope_theta, i / (float)c->head_size);
                float val = t * freq;
                *co = cosf(val), *si = sinf(val);
            } else {
                int local = t >= c->seq_len; /* the second set: the local layers' base */
                double val = (t % c->seq_len) * rope_freq(c, i / 2, local), ms = c->rope_mscale > 0 ? c->rope_mscale : 1;
                *co = (float)(ms * cos(val)), *si = (float)(ms * sin(val));
            }
        }
}

/* One KV head's attention scratch: scores for every position, two
 * accumulators (attn_head_forward's contract). */
static size_t attn_scratch_floats(const Config *c) { return (size_t)c->seq_len + 2 * (size_t)c->head_size; }

/* The prefill path for bf16 weights ($AHASCOPE_GEMM, else gemm_half_best)
 * and, when the machine has a fast one (fwd_set_gemm may ask for it
 * later), its buffers: a packing scratch per task (tile_floats) and the
 * rounded input all tasks read. */
static int gemm_init(RunState *s, const Config *c, size_t max_in, Err *e) {
    char msg[200];
    int gemm = gemm_half_from_env(msg, sizeof msg);
    if (gemm < 0) return err_set(e, "%s", msg);
    s->gemm = c->dtype == DT_BF16 ? (GemmPath)gemm : GEMM_EXACT;
    int gq = gemm_q_from_env(msg, sizeof msg);
    if (gq < 0) return err_set(e, "%s", msg);
    s->gemm_q = model_dtype_is_block(c->dtype) ? (GqPath)gq : GQ_OFF;
    if (s->gemm_q != GQ_OFF && !(s->xq = malloc(gemm_q_x_bytes(s->max_batch, (int)max_in))))
        return err_set(e, "out of memory for the int8 prefill input (%d × %zu)", s->max_batch, max_in);
    if (!(s->mvx = mv_q_x_new())) /* (a GGUF file's types are per tensor: c->dtype may not be block) */
        return err_set(e, "out of memory for the int8 decode input");
    /* a GGUF model (weight_bytes counted per tensor) may mix f32 with other types */
    s->tile_floats = c->dtype == DT_F32 && !c->weight_bytes ? 0 : HALF_TILE * max_in;
    if (c->dtype != DT_BF16 || !gemm_half_available(GEMM_AVX512BF16)) return 0; /* (AMX implies it) */
    size_t pack = (gemm_half_scratch_bytes(s->max_batch, (int)max_in) + sizeof(float) - 1) / sizeof(float);
    if (pack > s->tile_floats) s->tile_floats = pack;
    s->x_bf16 = malloc(gemm_half_x_elems(s->max_batch, (int)max_in) * sizeof(uint16_t));
    return s->x_bf16 ? 0 : err_set(e, "out of memory for the bf16 prefill input (%d × %zu)", s->max_batch, max_in);
}

int fwd_init(RunState *s, const Config *c, int max_batch, int n_threads, Err *e) {
    memset(s, 0, sizeof *s);
    if (c->kv_dtype != DT_F32 && c->kv_dtype != DT_BF16 && c->kv_dtype != DT_F16)
        return err_set(e, "unknown KV cache dtype %d", c->kv_dtype);
    s->c = *c;
    if (max_batch < 1) max_batch = 1;
    if (max_batch > c->seq_len) max_batch = c->seq_len;
    s->max_batch = max_batch;
    size_t B = max_batch, d = c->dim, h = c->hidden_dim, hs = c->head_size, qd = c->q_dim;
    size_t wide = d > qd ? d : qd, max_in = wide > h ? wide : h;
    size_t cache = (size_t)c->n_layers * c->seq_len * c->kv_dim;
    size_t heads_kv = (size_t)c->n_layers * c->n_kv_heads;
    s->pool = pool_new(n_threads);
    s->n_tiles = pool_threads(s->pool);
    s->x = malloc(B * d * sizeof(float));
    s->xb = malloc(B * wide * sizeof(float));
    s->xb2 = malloc(B * d * sizeof(float));
    s->q = malloc(B * qd * sizeof(float));
    s->hb = malloc(B * h * sizeof(float));
    s->hb2 = malloc(B * h * sizeof(float));
    s->rlog = malloc(B * c->n_heads * sizeof(float));
    s->rmulti = malloc(B * c->n_heads * (ROUTER_MAX_WINDOWS + 1) * sizeof(float));
    s->rwin = calloc(B * c->n_heads, 1);
    s->logits = malloc((size_t)c->vocab_size * sizeof(float));
    s->key_cache = calloc(cache, model_dtype_size(c->kv_dtype));
    s->value_cache = calloc(cache, model_dtype_size(c->kv_dtype));
    s->kv_new = malloc(2 * B * c->kv_dim * sizeof(float));
    s->rope_cos = malloc((size_t)rope_sets(c) * c->seq_len * hs / 2 * sizeof(float));
    s->rope_sin = malloc((size_t)rope_sets(c) * c->seq_len * hs / 2 * sizeof(float));
    s->scratch = malloc((size_t)c->n_kv_heads * attn_scratch_floats(c) * sizeof(float));
    s->bulk_m1 = calloc(heads_kv * hs, sizeof(double));
    s->bulk_m2 = calloc(heads_kv * hs * hs, sizeof(double));
    s->bulk_n = calloc(heads_kv, sizeof(int));
    s->bulk_start = calloc(heads_kv, sizeof(int));
    if (gemm_init(s, c, max_in, e) != 0) {
        fwd_free(s);
        return -1;
    }
    s->tiles = s->tile_floats ? malloc((size_t)s->n_tiles * s->tile_floats * sizeof(float)) : NULL;
    if (!s->x || !s->xb || !s->xb2 || !s->q || !s->hb || !s->hb2 || !s->rlog || !s->rmulti || !s->rwin || !s->logits || !s->key_cache ||
        !s->value_cache || !s->kv_new || !s->rope_cos || !s->rope_sin || !s->scratch || !s->bulk_m1 || !s->bulk_m2 ||
        !s->bulk_n || !s->bulk_start || (s->tile_floats && !s->tiles)) {
        fwd_free(s);
        return err_set(e, "out of memory for the run state (context %d, KV cache %zu MB)", c->seq_len,
                       cache * 2 * model_dtype_size(c->kv_dtype) >> 20);
    }
    rope_tables(s, c);
    openblas_set_num_threads(1);
    return 0;
}

void fwd_free(RunState *s) {
    free(s->x); free(s->xb); free(s->xb2); free(s->q); free(s->hb); free(s->hb2); free(s->rlog);
    free(s->rmulti); free(s->rwin);
    free(s->logits); free(s->key_cache); free(s->value_cache); free(s->kv_new); free(s->rope_cos); free(s->rope_sin);
    free(s->scratch); free(s->bulk_m1); free(s->bulk_m2); free(s->bulk_n); free(s->bulk_start);
    free(s->q_cache); free(s->tiles); free(s->router_in); free(s->router_hist); free(s->x_bf16);
    free(s->xq);
    mv_q_x_free(s->mvx);
    pool_free(s->pool);
    memset(s, 0, sizeof *s);
}

int fwd_set_gemm(RunState *s, GemmPath path) {
    if (!gemm_half_available(path) || (path != GEMM_EXACT && !s->x_bf16)) return -1;
    s->gemm = path;
    return 0;
}

void fwd_reset(RunState *s) {
    size_t heads_kv = (size_t)s->c.n_layers * s->c.n_kv_heads;
    memset(s->bulk_n, 0, heads_kv * sizeof(int));
    /* no sink count matches -1: the next bulk_sync clears the sums, which
     * still hold the previous sequence's keys */
    for (size_t i = 0; i < heads_kv; i++) s->bulk_start[i] = -1;
}

/* ---- matmul: out_k[T][n_k] = in[T][n_in] · W_k[n_k][n_in]ᵀ for up to four
 * matrices sharing one input (q/router/k/v, gate/up), their rows split over
 * the pool as one job: fewer wake-ups per decode step, even shares per core.
 * Weights are read in their stored dtype: a decode step widens them in
 * registers; a prefill widens HALF_TILE rows at a time for sgemm, so no
 * whole f32 copy of a half-precision model ever exists. */

#define MM_MAX 4
#define MM_SLICES 4 /* row slices per thread in a decode step */

typedef struct {
    RunState *s;
    const float *in;
    int T, n_in, n_mats;
    float *out[MM_MAX];
    Mat w[MM_MAX];
    int n_out[MM_MAX];
    int glu;              /* gate and up (n_out equal): out[0] = act(out[0]) · out[1] */
    int gelu;             /* with glu: act is GELU's tanh form (GeGLU), else SiLU */
    const uint16_t *x_bf16; /* in rounded to bf16 for gemm_half, or NULL (exact path) */
    GqX gx;                 /* in rounded to int8 for gemm_q (gx.blk 0: not) */
    const MvqX *mvx;        /* a decode step's in rounded once for mv_q's integer path, or NULL */
} MatMul;

/* Row `row` of a matrix of n_in columns: whole blocks for the quantised types. */
static const void *mat_row(Mat m, size_t row, int n_in) {
    return (const char *)m.p + row * model_row_bytes(m.dt, (size_t)n_in);
}

static void mv_any(float *out, Mat w, const float *x, int n, int d) {
    if (w.dt == DT_BF16) mv_bf16(out, w.p, x, n, d);
    else if (w.dt == DT_F16) mv_f16(out, w.p, x, n, d);
    else if (model_dtype_is_block(w.dt)) mv_q(out, model_dtype_ggml(w.dt), w.p, x, n, d);
    else mv_f32(out, w.p, x, n, d);
}

/* The n weights at m.p (whole rows) as f32: a prefill tile, an embedding row. */
static void mat_widen(float *out, Mat m, size_t n) {
    if (m.dt == DT_F32) memcpy(out, m.p, n * sizeof(float));
    else if (model_dtype_is_block(m.dt)) mv_q_widen(out, model_dtype_ggml(m.dt), m.p, n);
    else mv_widen(out, m.p, n, m.dt == DT_BF16);
}

/* Rows [r0, r1) of a packed matrix: gemm_q_packed when the product runs
 * gemm_q, else each row given back as stored for the path that would have
 * read it (decode's mv_q, a prefill's widening for sgemm), so the bits are
 * those of the stored matrix on every path. */
static void packed_rows(const MatMul *mm, int k, int r0, int r1, int task) {
    Mat m = mm->w[k];
    int ty = model_dtype_ggml(m.dt), ld = mm->n_out[k], n = mm->n_in;
    float *out = mm->out[k] + r0;
    if (mm->gx.blk == 256) {
        gemm_q_packed(mm->s->gemm_q, out, ld, &mm->gx, ty, m.p, r0, r1);
        return;
    }
    uint8_t row[GQ_PACK_MAX_COLS / 256 * 210]; /* the widest stored block of a packed type */
    if (mm->T == 1) {
        for (int j = r0; j < r1; j++) { /* the step's one rounding of x, not one a row */
            gemm_q_unpack_row(ty, row, m.p, n, j);
            if (!mv_q_rounded(out + (j - r0), ty, row, mm->mvx, 1, n)) mv_q(out + (j - r0), ty, row, mm->in, 1, n);
        }
        return;
    }
    float *tile = mm->s->tiles + (size_t)task * mm->s->tile_floats;
    for (int t0 = 0; t0 < r1 - r0; t0 += HALF_TILE) {
        int nt = r1 - r0 - t0 < HALF_TILE ? r1 - r0 - t0 : HALF_TILE;
        for (int i = 0; i < nt; i++) {
            gemm_q_unpack_row(ty, row, m.p, n, r0 + t0 + i);
            mv_q_widen(tile + (size_t)i * n, ty, row, (size_t)n);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mm->T, nt, n, 1.0f, mm->in, n, tile, n, 0.0f,
                    out + t0, ld);
    }
}

/* Whether m is one of the model's packed matrices (gemm_q_pack). */
static int mat_packed(const RunState *s, Mat m) {
    return s->packed && (const char *)m.p >= s->packed && (const char *)m.p < s->packed + s->packed_bytes;
}

static void matmul_rows(const MatMul *mm, int k, int r0, int r1, int task) {
    if (mat_packed(mm->s, mm->w[k])) {
        packed_rows(mm, k, r0, r1, task);
        return;
    }
    Mat w = {mat_row(mm->w[k], r0, mm->n_in), mm->w[k].dt};
    int ld = mm->n_out[k];
    int ty = model_dtype_is_block(w.dt) ? model_dtype_ggml(w.dt) : -1;
    if (mm->gx.blk && gemm_q_block(ty) == mm->gx.blk) {
        gemm_q(mm->s->gemm_q, mm->out[k] + r0, ld, &mm->gx, ty, w.p, r1 - r0);
    } else if (mm->T == 1) {
        if (ty < 0 || !mv_q_rounded(mm->out[k] + r0, ty, w.p, mm->mvx, r1 - r0, mm->n_in))
            mv_any(mm->out[k] + r0, w, mm->in, r1 - r0, mm->n_in);
    } else if (w.dt == DT_BF16 && mm->x_bf16) {
        gemm_half_bf16(mm->s->gemm, mm->out[k] + r0, ld, mm->x_bf16, mm->T, mm->n_in, w.p, r1 - r0,
                       mm->s->tiles + (size_t)task * mm->s->tile_floats);
    } else if (w.dt == DT_F32) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mm->T, r1 - r0, mm->n_in, 1.0f, mm->in, mm->n_in, w.p,
                    mm->n_in, 0.0f, mm->out[k] + r0, ld);
    } else {
        float *tile = mm->s->tiles + (size_t)task * mm->s->tile_floats;
        for (int t0 = 0; t0 < r1 - r0; t0 += HALF_TILE) {
            int nt = r1 - r0 - t0 < HALF_TILE ? r1 - r0 - t0 : HALF_TILE;
            mat_widen(tile, (Mat){mat_row(w, t0, mm->n_in), w.dt}, (size_t)nt * mm->n_in);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mm->T, nt, mm->n_in, 1.0f, mm->in, mm->n_in, tile,
                        mm->n_in, 0.0f, mm->out[k] + r0 + t0, ld);
        }
    }
}

/* First 16-row block of task t of n. A decode step's slices shrink
 * linearly (weights n, n-1, …, 1), so the last ones claimed are short and
 * the thread that claims one keeps the other waiting least; a prefill's
 * tasks are equal (one per thread). */
static long slice_start(long blocks, int t, int n, int shrink) {
    if (!shrink) return blocks * t / n;
    long w = (long)t * n - (long)t * (t - 1) / 2, total = (long)n * (n + 1) / 2;
    return blocks * w / total;
}

/* Task t of n's share [*lo, *hi) of `rows` rows, in blocks of 16 (*hi may
 * pass rows by less than a block). */
static void slice_rows(long rows, int t, int n, int shrink, long *lo, long *hi) {
    long blocks = (rows + 15) / 16;
    *lo = slice_start(blocks, t, n, shrink) * 16;
    *hi = slice_start(blocks, t + 1, n, shrink) * 16;
}

static void matmul_task(void *ctx, int task, int n_tasks) {
    const MatMul *mm = ctx;
    long total = 0, lo, hi;
    for (int k = 0; k < mm->n_mats; k++) total += mm->n_out[k];
    slice_rows(total, task, n_tasks, mm->T == 1, &lo, &hi); /* of the concatenated rows */
    long base = 0;
    for (int k = 0; k < mm->n_mats; base += mm->n_out[k], k++) {
        long r0 = lo > base ? lo - base : 0, r1 = hi - base < mm->n_out[k] ? hi - base : mm->n_out[k];
        if (r0 < r1) matmul_rows(mm, k, (int)r0, (int)r1, task);
    }
}

/* h = gelu_tanh(h) · u: GELU's tanh approximation (HF's gelu_pytorch_tanh,
 * ggml's gelu), 0.5 h (1 + tanh(√(2/π) (h + 0.044715 h³))), in double. */
static void geglu(float *h, const float *u, int n) {
    const double k = 0.7978845608028654; /* √(2/π) */
    for (int i = 0; i < n; i++) {
        double x = h[i];
        h[i] = (float)(0.5 * x * (1 + tanh(k * (x + 0.044715 * x * x * x))) * u[i]);
    }
}

/* A gated FFN's gate and up rows in matching ranges, so each task applies
 * SwiGLU to the rows it just made: no serial pass after the barrier. */
static void glu_task(void *ctx, int task, int n_tasks) {
    const MatMul *mm = ctx;
    long r0, r1;
    slice_rows(mm->n_out[0], task, n_tasks, mm->T == 1, &r0, &r1);
    if (r1 > mm->n_out[0]) r1 = mm->n_out[0];
    if (r0 >= r1) return;
    matmul_rows(mm, 0, (int)r0, (int)r1, task);
    matmul_rows(mm, 1, (int)r0, (int)r1, task);
    for (int t = 0; t < mm->T; t++) {
        float *g = mm->out[0] + (size_t)t * mm->n_out[0] + r0, *u = mm->out[1] + (size_t)t * mm->n_out[1] + r0;
        if (mm->gelu) geglu(g, u, (int)(r1 - r0));
        else k_swiglu(g, u, (int)(r1 - r0));
    }
}

/* Task t of n rounds its share of the input rows for the bf16 paths. */
static void round_task(void *ctx, int task, int n_tasks) {
    const MatMul *mm = ctx;
    int t0 = (int)((long)mm->T * task / n_tasks), t1 = (int)((long)mm->T * (task + 1) / n_tasks);
    gemm_half_round_rows(mm->s->x_bf16, mm->in, mm->T, mm->n_in, t0, t1);
}

/* Task t of n rounds its share of the input rows to int8 for gemm_q. */
static void quantise_task(void *ctx, int task, int n_tasks) {
    MatMul *mm = ctx;
    gemm_q_quantise(&mm->gx, mm->in, (int)((long)mm->T * task / n_tasks), (int)((long)mm->T * (task + 1) / n_tasks));
}

/* The activation block gemm_q wants for mm's first matrix, or 0 for the
 * other paths: no int8 buffer, a type it lacks, or a decode step where
 * mv_q's AVX-512 VNNI kernels run (matmul_run rounds x for them: mv_q_x_round). */
static int gemm_q_blk(const RunState *s, const MatMul *mm) {
    if (!s->xq || s->gemm_q == GQ_OFF || !model_dtype_is_block(mm->w[0].dt)) return 0;
    int ty = model_dtype_ggml(mm->w[0].dt), blk = gemm_q_block(ty);
    /* mv_q_set_int8(0) asks for the exact path process-wide: gemm_q rounds x too */
    if (!blk || mm->n_in % blk || !mv_q_int8() || (mm->T == 1 && mv_q_int8_available(ty))) return 0;
    return blk;
}

static void matmul_run(RunState *s, MatMul *mm) {
    long total = 0;
    for (int k = 0; k < mm->n_mats; k++) total += mm->n_out[k];
    mm->s = s;
    mm->x_bf16 = NULL;
    mm->gx.blk = 0;
    mm->mvx = NULL;
    /* a decode step's slices share one rounding of x (each rounded it again: 8 a product at 2 threads) */
    if (mm->T == 1 && s->mvx && model_dtype_is_block(mm->w[0].dt) && mv_q_x_round(s->mvx, mm->in, mm->n_in))
        mm->mvx = s->mvx;
    int blk = gemm_q_blk(s, mm);
    if (blk) { /* one rounding, read by every task */
        gemm_q_x_init(&mm->gx, s->xq, mm->T, mm->n_in, blk);
        mm->gx.tiles = (s->gemm_q == GQ_AMX || s->gemm_q == GQ_VNNI) && mm->T >= 16; /* the tile order costs a pass a rounding: only for them */
        if (mm->T < 8) gemm_q_quantise(&mm->gx, mm->in, 0, mm->T);
        else pool_run(s->pool, quantise_task, mm, pool_threads(s->pool));
    }
    if (mm->T > 1 && s->gemm != GEMM_EXACT && mm->w[0].dt == DT_BF16) { /* one rounding, read by every task */
        mm->x_bf16 = s->x_bf16;
        pool_run(s->pool, round_task, mm, pool_threads(s->pool));
    }
    int tasks = pool_threads(s->pool);
    /* A decode step's rows are claimed in slices, so a thread the host
     * slows hands its remaining slices to the other instead of holding up
     * the barrier: with one slice per thread, waiting at the barriers took
     * 19% of the CPU time of a 2-thread bf16 110M decode step, with 4 15%
     * (perf). 16 waited less still but decoded no faster. A prefill keeps
     * one slice per thread: its task index picks a widening tile. */
    if (mm->T == 1) tasks *= MM_SLICES;
    if ((long)mm->T * mm->n_in * total < 32768) tasks = 1; /* not worth a wake-up */
    pool_run(s->pool, mm->glu ? glu_task : matmul_task, mm, tasks);
}

static void matmul(RunState *s, float *out, const float *in, Mat w, int T, int n_in, int n_out) {
    MatMul mm = {.in = in, .T = T, .n_in = n_in, .n_mats = 1, .out = {out}, .w = {w}, .n_out = {n_out}};
    matmul_run(s, &mm);
}

void fwd_matmul(RunState *s, float *out, const float *in, Mat w, int T, int n_in, int n_out) {
    s->packed = NULL, s->packed_bytes = 0; /* a caller's matrix, as stored */
    matmul(s, out, in, w, T, n_in, n_out);
}

/* ---- attention over the batch, one task per KV head ---- */

typedef struct {
    RunState *s;
    const AttnConfig *a;
    int layer, T, pos0;
    int routed;           /* s->rlog holds router logits (a router file or the model's own) */
    StepTrace **traces;
    int arch_window;      /* the layer's built-in sliding window (LayerWeights.window), 0: none */
} AttnJob;

static void gate_rule(const AttnJob *j, int t, int h, float logit, AttnHeadIn *in) {
    const AttnConfig *a = j->a;
    int cell = j->layer * j->s->c.n_heads + h;
    in->rule = GATE_FIXED;
    switch (a->policy) {
    case POLICY_AHA: in->gate = decide_router_logit(logit, a->tau) == 1; break;
    case POLICY_FULL: in->gate = 1; break;
    case POLICY_LOCAL: in->gate = 0; break;
    case POLICY_STATIC: in->gate = decide_static(a->static_heads, cell); break;
    case POLICY_RANDOM: in->gate = decide_random(a->seed, t, j->layer, h, a->p); break;
#define FWD_GATE_RULE(ID, word, field, title, brief, spark, thr, policy, dec, ours) \
    PRED_IF(PRED_THETA_##thr, PRED_IF(policy, case POLICY_##ID: in->rule = GATE_##ID; break;))
        PREDICTORS(FWD_GATE_RULE) /* the mass estimates decide inside attention */
#undef FWD_GATE_RULE
    default: in->gate = 1; break;
    }
    int forced = decide_forced(a->force, a->force_from, t, cell); /* an ablation overrides every rule */
    if (forced >= 0) in->rule = GATE_FIXED, in->gate = forced;
}

/* Bring the bulk moments of (layer, kv head) to exactly the far keys of
 * position t, absorbing keys as they leave the window (O(d²) each). */
static void bulk_sync(RunState *s, const AttnConfig *a, int layer, int kvh, int t, float *key) {
    const Config *c = &s->c;
    size_t idx = (size_t)layer * c->n_kv_heads + kvh, hs = c->head_size;
    double *m1 = s->bulk_m1 + idx * hs, *m2 = s->bulk_m2 + idx * hs * hs;
    int ns, lo;
    attn_local_set(t, a->window, a->sinks, &ns, &lo);
    int want = lo - ns;
    if (s->bulk_start[idx] != ns || s->bulk_n[idx] > want) {
        memset(m1, 0, hs * sizeof(double));
        memset(m2, 0, hs * hs * sizeof(double));
        s->bulk_n[idx] = 0;
        s->bulk_start[idx] = ns;
    }
    for (int i = ns + s->bulk_n[idx]; i < lo; i++) {
        fwd_kv_get(s, 0, layer, kvh, i, key);
        attn_bulk_absorb(m1, m2, key, c->head_size);
    }
    s->bulk_n[idx] = want;
}

/* Rotate columns [col0, col0 + width) (whole heads) of T rows, stride
 * floats apart, to their positions: adjacent pairs (llama2.c) or halves
 * (Hugging Face). */
static void rope_span(const RunState *s, float *v, int col0, int width, int T, int stride, int pos0, int local) {
    int hs = s->c.head_size, half = hs / 2;
    if (local && s->c.rope_local_theta > 0) pos0 += s->c.seq_len; /* the local base's table follows */
    for (int i = 0; i < T; i++) {
        const float *cs = s->rope_cos + (size_t)(pos0 + i) * half, *sn = s->rope_sin + (size_t)(pos0 + i) * half;
        float *row = v + (size_t)i * stride + col0;
        if (s->c.rope_half) {
            for (int h0 = 0; h0 < width; h0 += hs)
                for (int j = 0; j < half; j++) {
                    float a = row[h0 + j], b = row[h0 + j + half];
                    row[h0 + j] = a * cs[j] - b * sn[j];
                    row[h0 + j + half] = a * sn[j] + b * cs[j];
                }
            continue;
        }
        for (int j = 0; j < width; j += 2) {
            float c0 = cs[(j % hs) / 2], s0 = sn[(j % hs) / 2], a = row[j], b = row[j + 1];
            row[j] = a * c0 - b * s0;
            row[j + 1] = a * s0 + b * c0;
        }
    }
}

/* Make KV head kvh's part of this call's rows ready: rotate its queries and
 * its new keys, and move the keys and values (kv_new) into the cache at
 * positions pos0 … pos0+T-1. Each attention task does its own heads. */
static void head_prepare(RunState *s, int layer, int kvh, int T, int pos0, int local) {
    const Config *c = &s->c;
    int hs = c->head_size, group = c->n_heads / c->n_kv_heads;
    float *kn = s->kv_new, *vn = s->kv_new + (size_t)s->max_batch * c->kv_dim;
    rope_span(s, s->q, kvh * group * hs, group * hs, T, c->q_dim, pos0, local);
    rope_span(s, kn, kvh * hs, hs, T, c->kv_dim, pos0, local);
    for (int i = 0; i < T; i++) {
        size_t off = (size_t)i * c->kv_dim + (size_t)kvh * hs;
        fwd_kv_set(s, 0, layer, kvh, pos0 + i, kn + off);
        fwd_kv_set(s, 1, layer, kvh, pos0 + i, vn + off);
    }
}

/* The local window of head cell at t: the layer's own when the
 * architecture fixes it, the head's span when a table gives one, else the
 * shared window. */
static int fwd_head_window(const AttnConfig *a, int fixed, int window, int cell, int t) {
    return fixed || !a->head_span ? window : headtab_window_at(a->head_span + 2 * (size_t)cell, t);
}

/* A multi-choice router under aha picks each local head's window (the
 * row's choice, s->rwin); every other case keeps fwd_head_window's. */
static int fwd_choice_window(const AttnJob *j, int fixed, int window, int i, int h, int t) {
    const AttnConfig *a = j->a;
    if (!fixed && a->n_windows && a->policy == POLICY_AHA && j->routed)
        return a->windows[j->s->rwin[(size_t)i * j->s->c.n_heads + h]];
    return fwd_head_window(a, fixed, window, j->layer * j->s->c.n_heads + h, t);
}

static void attn_task(void *ctx, int kvh, int n_tasks) {
    (void)n_tasks;
    const AttnJob *j = ctx;
    RunState *s = j->s;
    const Config *c = &s->c;
    const AttnConfig *a = j->a;
    int group = c->n_heads / c->n_kv_heads, hs = c->head_size, l = j->layer;
    /* a layer the architecture windows reads its own window in every head, no sinks: no choice
     * exists, so no router, policy or predictor is consulted (and no far-key moments kept);
     * with --profile the counterfactual mass beyond the window is measured */
    int fixed = j->arch_window > 0, window = fixed ? j->arch_window : a->window, sinks = fixed ? 0 : a->sinks;
    /* the far-key sums follow one window per KV head: per-head spans leave them out */
    int bulk = !fixed && !a->head_span && !a->n_windows && (a->profile || a->policy == POLICY_QADA_BULK || a->policy == POLICY_QADA_REM_BULK);
    size_t idx = (size_t)l * c->n_kv_heads + kvh;
    float *scratch = s->scratch + (size_t)kvh * attn_scratch_floats(c);
    head_prepare(s, l, kvh, j->T, j->pos0, fixed);
    for (int i = 0; i < j->T; i++) {
        int t = j->pos0 + i;
        if (bulk) bulk_sync(s, a, l, kvh, t, scratch); /* before the head uses scratch */
        int kv_read = 0;
        for (int h = kvh * group; h < (kvh + 1) * group; h++) {
            float logit = j->routed && !fixed ? s->rlog[(size_t)i * c->n_heads + h] : NAN;
            float score = 1.0f / (1.0f + expf(-logit));
            StepTrace *tr = j->traces ? j->traces[i] : NULL;
            int cell = l * c->n_heads + h, k = tr ? tr->top_k : 0;
            AttnHeadIn in = {.q = s->q + (size_t)i * c->q_dim + h * hs, .k = fwd_kv_at(s, 0, l, kvh, 0),
                             .v = fwd_kv_at(s, 1, l, kvh, 0), .kv_dtype = c->kv_dtype, .stride = hs, .head_size = hs,
                             .t = t, .window = fwd_choice_window(j, fixed, window, i, h, t), .sinks = sinks,
                             .scale = c->query_scale,
                             .softcap = c->attn_softcap, .theta_logit = a->theta_logit,
                             .want_oracle = a->profile, .want_qada = a->profile,
                             .bulk_m1 = bulk ? s->bulk_m1 + idx * hs : NULL,
                             .bulk_m2 = bulk ? s->bulk_m2 + idx * hs * hs : NULL, .score = score, .top_k = k,
                             .top_pos = k ? tr->top_pos + (size_t)cell * k : NULL,
                             .top_w = k ? tr->top_w + (size_t)cell * k : NULL};
            if (fixed) in.arch_local = 1, in.want_beyond = a->profile;
            else gate_rule(j, t, h, logit, &in);
            AttnHeadOut r;
            attn_head_forward(&in, s->xb + (size_t)i * c->q_dim + h * hs, scratch, &r);
            if (r.keys_read > kv_read) kv_read = r.keys_read;
            if (tr) { /* every per-head field of the trace, from the kernel's result of the same name */
#define FWD_TRACE_COPY(name, type, missing, sql, show, title, short_name, doc) tr->name[cell] = (type)r.name;
                TRACE_HEAD_FIELDS(FWD_TRACE_COPY)
#undef FWD_TRACE_COPY
            }
        }
        /* the group shares one KV head: it reads the union of its query
         * heads' keys, all of them once any went global, else the widest
         * local set (the sinks and the window ending at t are nested) */
        if (j->traces) j->traces[i]->kv_read[l * c->n_heads + kvh] = kv_read;
    }
}

/* rows[i] = rmsnorm(rows[i]) · w (in place when out == in), T rows of n. */
static void norm_rows(const Config *c, float *out, const float *in, const float *w, int T, int n, int ld_out, int ld_in) {
    for (int i = 0; i < T; i++) k_rmsnorm_eps(out + (size_t)i * ld_out, in + (size_t)i * ld_in, w, n, c->norm_eps);
}

/* QK-norm of T rows of n: over the whole row (OLMo-2), or over each head's
 * head_size values with one shared gain vector (Qwen3's per-head norm). */
static void qk_norm(const Config *c, float *rows, const float *w, int T, int n) {
    if (c->qk_norm_head) norm_rows(c, rows, rows, w, T * (n / c->head_size), c->head_size, c->head_size, c->head_size);
    else norm_rows(c, rows, rows, w, T, n, n, n);
}

static void add_bias(float *rows, const float *b, int T, int n, int stride) {
    if (!b) return;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < n; j++) rows[(size_t)i * stride + j] += b[j];
}

/* A multi-choice router's K + 1 logits a head for T rows, reduced to
 * what the two-way path reads: rlog the global-versus-window logit, rwin
 * the window (decide_multi at τ; the gate itself is decided as a two-way
 * router's, on rlog). */
static void multi_logits(RunState *s, const AttnConfig *a, const float *in, int l, int T) {
    int H = s->c.n_heads, d = s->c.dim, K = a->n_windows, n = H * (K + 1);
    matmul(s, s->rmulti, in, (Mat){a->routers + (size_t)l * n * d, DT_F32}, T, d, n);
    for (int i = 0; i < T; i++)
        for (int h = 0; h < H; h++) {
            size_t c = (size_t)i * H + h;
            int k = decide_multi(s->rmulti + c * (K + 1), K, a->tau, &s->rlog[c]);
            s->rwin[c] = (uint8_t)(k < K ? k : 0);
        }
}

/* One transformer block over T rows. Llama-style blocks normalise before
 * attention and the FFN; OLMo-2 feeds the raw stream in and normalises
 * their outputs instead. The router reads whatever feeds W_Q. */
static void layer_forward(const Model *m, RunState *s, const AttnConfig *a, int l, int T, int pos0, StepTrace **tr) {
    const Config *c = &m->c;
    const LayerWeights *lw = &m->layers[l];
    int d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, qd = c->q_dim, H = c->n_heads;
    float *kn = s->kv_new, *vn = s->kv_new + (size_t)s->max_batch * kv;

    const float *in = s->x;
    if (lw->attn_norm) norm_rows(c, s->xb, s->x, lw->attn_norm, T, d, d, d), in = s->xb;
    int builtin = !a->routers && m->builtin_routers;
    MatMul qkv = {.in = in, .T = T, .n_in = d, .n_mats = 3,   /* q [T][q_dim]; k, v [T][kv_dim] */
                  .out = {s->q, kn, vn}, .w = {lw->wq, lw->wk, lw->wv}, .n_out = {qd, kv, kv}};
    if (builtin) { /* faolmo: the router rows follow W_Q in q_proj */
        qkv.n_mats = 4;
        qkv.out[3] = s->rlog, qkv.n_out[3] = H;
        qkv.w[3] = (Mat){mat_row(lw->wq, qd, d), lw->wq.dt};
    }
    matmul_run(s, &qkv);
    int routed = a->routers && !lw->window; /* a windowed layer has no choice for a router to make */
    if (routed && a->n_windows) multi_logits(s, a, in, l, T);
    else if (routed) matmul(s, s->rlog, in, (Mat){a->routers + (size_t)l * H * d, DT_F32}, T, d, H);
    if (routed && a->router_bias) add_bias(s->rlog, a->router_bias + (size_t)l * H, T, H, H);
    if (s->router_in) memcpy(s->router_in + (size_t)l * s->max_batch * d, in, (size_t)T * d * sizeof(float));
    if (s->router_hist)
        memcpy(s->router_hist + ((size_t)l * c->seq_len + pos0) * d, in, (size_t)T * d * sizeof(float));
    add_bias(s->q, lw->bq, T, qd, qd);
    add_bias(kn, lw->bk, T, kv, kv);
    add_bias(vn, lw->bv, T, kv, kv);
    if (lw->q_norm) qk_norm(c, s->q, lw->q_norm, T, qd);
    if (lw->k_norm) qk_norm(c, kn, lw->k_norm, T, kv);

    AttnJob job = {s, a, l, T, pos0, builtin || a->routers, tr, lw->window};
    pool_run(s->pool, attn_task, &job, c->n_kv_heads);       /* xb [T][q_dim] = attention output */
    if (s->q_cache) memcpy(s->q_cache + ((size_t)l * c->seq_len + pos0) * qd, s->q, (size_t)T * qd * sizeof(float));

    matmul(s, s->xb2, s->xb, lw->wo, T, qd, d);
    if (lw->post_attn_norm) norm_rows(c, s->xb2, s->xb2, lw->post_attn_norm, T, d, d, d);
    for (size_t i = 0; i < (size_t)T * d; i++) s->x[i] += s->xb2[i];

    in = s->x;
    if (lw->ffn_norm) norm_rows(c, s->xb, s->x, lw->ffn_norm, T, d, d, d), in = s->xb;
    MatMul ffn = {.in = in, .T = T, .n_in = d, .n_mats = 2, .out = {s->hb, s->hb2},  /* hb = silu(w1·in) · (w3·in) */
                  .w = {lw->w1, lw->w3}, .n_out = {hid, hid}, .glu = 1, .gelu = c->act_gelu};
    matmul_run(s, &ffn);
    matmul(s, s->xb2, s->hb, lw->w2, T, hid, d);
    if (lw->post_ffn_norm) norm_rows(c, s->xb2, s->xb2, lw->post_ffn_norm, T, d, d, d);
    for (size_t i = 0; i < (size_t)T * d; i++) s->x[i] += s->xb2[i];
}

static void embed_row(const Model *m, int token, float *out) {
    int d = m->c.dim;
    mat_widen(out, (Mat){mat_row(m->embed, (size_t)token, d), m->embed.dt}, (size_t)d);
    if (m->c.embed_scale > 0) /* Gemma: in f32, as HF scales in the activations' dtype */
        for (int i = 0; i < d; i++) out[i] *= m->c.embed_scale;
}

/* Gemma 2's final soft-capping of n logits: cap · tanh(x / cap). */
static void cap_logits(const Config *c, float *x, size_t n) {
    if (!(c->final_softcap > 0)) return;
    for (size_t i = 0; i < n; i++) x[i] = c->final_softcap * tanhf(x[i] / c->final_softcap);
}

static void forward_chunk(const Model *m, RunState *s, const AttnConfig *a, const int *tokens, int T, int pos0,
                          float *logits_all, StepTrace **tr) {
    const Config *c = &m->c;
    int d = c->dim;
    for (int i = 0; i < T; i++) embed_row(m, tokens[i], s->x + (size_t)i * d);
    if (s->router_hist_n > pos0) s->router_hist_n = pos0; /* the kept inputs from pos0 on are being replaced */
    for (int l = 0; l < c->n_layers; l++) {
        if (s->stop && s->stop(s->stop_user)) {
            s->stopped = 1;
            return;
        }
        layer_forward(m, s, a, l, T, pos0, tr);
    }
    if (s->router_hist) s->router_hist_n = pos0 + T;
    if (logits_all) {
        norm_rows(c, s->xb, s->x, m->final_norm, T, d, d, d);
        matmul(s, logits_all, s->xb, m->cls, T, d, c->vocab_size);
        cap_logits(c, logits_all, (size_t)T * c->vocab_size);
        memcpy(s->logits, logits_all + (size_t)(T - 1) * c->vocab_size, c->vocab_size * sizeof(float));
    } else {
        norm_rows(c, s->xb, s->x + (size_t)(T - 1) * d, m->final_norm, 1, d, d, d);
        matmul(s, s->logits, s->xb, m->cls, 1, d, c->vocab_size);
        cap_logits(c, s->logits, (size_t)c->vocab_size);
    }
}

void fwd_forward(const Model *m, RunState *s, const AttnConfig *a, const int *tokens, int n, int pos0,
                 float *logits_all, StepTrace **traces) {
    if (pos0 == 0) fwd_reset(s);
    s->stopped = 0;
    s->packed = m->packed, s->packed_bytes = m->packed_bytes;
    for (int done = 0; done < n && !s->stopped; done += s->max_batch) {
        int T = n - done < s->max_batch ? n - done : s->max_batch;
        if (traces)
            for (int i = 0; i < T; i++) {
                StepTrace *tr = traces[done + i];
                tr->pos = pos0 + done + i;
                tr->token = tokens[done + i];
                tr->n_far = attn_n_far(tr->pos, a->window, a->sinks);
                tr->n_kv_heads = m->c.n_kv_heads;
                for (int l = 0; l < m->c.n_layers; l++) tr->layer_window[l] = m->layers[l].window;
            }
        forward_chunk(m, s, a, tokens + done, T, pos0 + done,
                      logits_all ? logits_all + (size_t)done * m->c.vocab_size : NULL, traces ? traces + done : NULL);
    }
}

int fwd_keep_router_inputs(RunState *s, Err *e) {
    if (s->router_in) return 0;
    size_t n = (size_t)s->c.n_layers * s->max_batch * s->c.dim;
    s->router_in = malloc(n * sizeof(float));
    return s->router_in ? 0 : err_set(e, "out of memory for the router inputs (%zu MB)", n * sizeof(float) >> 20);
}

int fwd_keep_router_history(RunState *s, Err *e) {
    if (s->router_hist) return 0;
    size_t n = (size_t)s->c.n_layers * s->c.seq_len * s->c.dim;
    s->router_hist = calloc(n, sizeof(float)); /* pages are touched only as positions arrive */
    s->router_hist_n = 0;
    return s->router_hist ? 0 : err_set(e, "out of memory for the router inputs (%zu MB)", n * sizeof(float) >> 20);
}

int fwd_router_input(const RunState *s, int layer, int pos, float *x) {
    const Config *c = &s->c;
    if (!s->router_hist || layer < 0 || layer >= c->n_layers || pos < 0 || pos >= s->router_hist_n) return -1;
    memcpy(x, s->router_hist + ((size_t)layer * c->seq_len + pos) * c->dim, (size_t)c->dim * sizeof(float));
    return 0;
}

int fwd_router_row(const Model *m, const AttnConfig *a, int layer, int head, float *w, float *bias) {
    const Config *c = &m->c;
    int d = c->dim;
    if (layer < 0 || layer >= c->n_layers || head < 0 || head >= c->n_heads) return -1;
    size_t cell = (size_t)layer * c->n_heads + head;
    if (a->routers && a->n_windows) return -1; /* K + 1 vectors a head: no one logit to explain */
    if (a->routers) {
        memcpy(w, a->routers + cell * d, (size_t)d * sizeof(float));
        *bias = a->router_bias ? a->router_bias[cell] : 0;
        return 0;
    }
    if (!m->builtin_routers) return -1;
    Mat wq = m->layers[layer].wq; /* faolmo: the router rows follow W_Q's q_dim rows */
    mat_widen(w, (Mat){mat_row(wq, (size_t)c->q_dim + head, d), wq.dt}, (size_t)d);
    *bias = 0;
    return 0;
}

int fwd_keep_queries(RunState *s, Err *e) {
    if (s->q_cache) return 0;
    size_t n = (size_t)s->c.n_layers * s->c.seq_len * s->c.q_dim;
    s->q_cache = calloc(n, sizeof(float));
    if (!s->q_cache) return err_set(e, "out of memory for the query cache (%zu MB)", n * sizeof(float) >> 20);
    return 0;
}

void *fwd_kv_at(const RunState *s, int value, int layer, int kvh, int pos) {
    const Config *c = &s->c;
    size_t row = ((size_t)layer * c->n_kv_heads + kvh) * c->seq_len + pos;
    return (char *)(value ? s->value_cache : s->key_cache) + row * c->head_size * model_dtype_size(c->kv_dtype);
}

void fwd_kv_get(const RunState *s, int value, int layer, int kvh, int pos, float *out) {
    const void *p = fwd_kv_at(s, value, layer, kvh, pos);
    int hs = s->c.head_size;
    if (s->c.kv_dtype == DT_F32) memcpy(out, p, hs * sizeof(float));
    else mv_widen(out, p, hs, s->c.kv_dtype == DT_BF16);
}

void fwd_kv_set(RunState *s, int value, int layer, int kvh, int pos, const float *in) {
    void *p = fwd_kv_at(s, value, layer, kvh, pos);
    int hs = s->c.head_size, dt = s->c.kv_dtype;
    if (dt == DT_F32) memcpy(p, in, hs * sizeof(float));
    else half_from_f32_n(p, in, hs, dt == DT_BF16);
}

int fwd_attention_weights(const RunState *s, int layer, int head, int pos, float *w) {
    const Config *c = &s->c;
    if (!s->q_cache || layer < 0 || layer >= c->n_layers || head < 0 || head >= c->n_heads || pos < 0 ||
        pos >= c->seq_len)
        return -1;
    int hs = c->head_size, kvh = head / (c->n_heads / c->n_kv_heads);
    const float *q = s->q_cache + ((size_t)layer * c->seq_len + pos) * c->q_dim + (size_t)head * hs;
    float *k = malloc(hs * sizeof(float));
    if (!k) return -1;
    float scale = c->query_scale > 0 ? c->query_scale : 1.0f / sqrtf((float)hs), m = -INFINITY;
    for (int i = 0; i <= pos; i++) {
        float dot = 0;
        fwd_kv_get(s, 0, layer, kvh, i, k);
        for (int j = 0; j < hs; j++) dot += q[j] * k[j];
        w[i] = dot * scale;
        if (c->attn_softcap > 0) w[i] = c->attn_softcap * tanhf(w[i] / c->attn_softcap);
        if (w[i] > m) m = w[i];
    }
    double z = 0;
    for (int i = 0; i <= pos; i++) z += (w[i] = expf(w[i] - m));
    for (int i = 0; i <= pos; i++) w[i] = (float)(w[i] / z);
    free(k);
    return 0;
}
