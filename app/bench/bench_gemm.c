/* bench_gemm.c — `bench --gemm`: the prefill's matrix products on every path, against each path's peak.
 *
 * `bench --gemm`: the prefill's matrix products alone, on every path this
 * machine runs, against the peak of the instruction each path is built on.
 *
 * One layer's seven products (q k v o gate up down) of the shape's size,
 * with random bf16 weights, are timed through fwd_matmul, the very call a
 * prefill makes (the pool's threads, the same slicing, rounding and
 * packing included). The peak is the path's multiply instruction alone on
 * every thread (gemm_half_peak_flops) right after the path's products in
 * the same run, and the fraction of it is taken run by run (then the
 * median), as the roofline pairs steps with bandwidth passes: measured, not
 * taken from a data sheet, since a virtual machine's clock and issue rate
 * are not what its CPU model says. Here the same probe read 530 and 1030
 * GFLOP/s in runs minutes apart, as the other guests on the host came and
 * went. Paths are alternated within each run, so a change in the
 * host's load lands on all of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/bench/bench.h"
#include "engine/forward.h"
#include "engine/gemm_half.h"
#include "engine/half.h"

/* One layer's products: name, rows of W (n_out), width of the input (n_in). */
typedef struct {
    const char *name;
    int n_out, n_in;
} GemmShape;

#define N_SHAPES 7

static void layer_shapes(const Config *c, GemmShape s[N_SHAPES]) {
    GemmShape v[N_SHAPES] = {{"q", c->q_dim, c->dim},          {"k", c->kv_dim, c->dim},
                             {"v", c->kv_dim, c->dim},         {"o", c->dim, c->q_dim},
                             {"gate", c->hidden_dim, c->dim},  {"up", c->hidden_dim, c->dim},
                             {"down", c->dim, c->hidden_dim}};
    memcpy(s, v, sizeof v);
}

typedef struct {
    GemmPath path;
    double *layer, *peak, *frac;    /* [runs]: GFLOP/s of the whole layer, of the instruction; their ratio */
    double *shape[N_SHAPES];        /* [runs]: GFLOP/s of each product */
} PathTimes;

/* Random bf16 weights for every product and an input wide enough for all. */
static int make_operands(const GemmShape *sh, int T, uint16_t *w[N_SHAPES], float **x, float **out) {
    uint64_t seed = 7;
    int widest_in = 0, widest_out = 0;
    for (int k = 0; k < N_SHAPES; k++) {
        widest_in = sh[k].n_in > widest_in ? sh[k].n_in : widest_in;
        widest_out = sh[k].n_out > widest_out ? sh[k].n_out : widest_out;
        size_t n = (size_t)sh[k].n_out * sh[k].n_in;
        if (!(w[k] = malloc(n * sizeof(uint16_t)))) return -1;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            w[k][i] = half_f32_to_bf16(((float)(seed >> 40) / (1 << 24) - 0.5f) * 0.04f);
        }
    }
    *x = malloc((size_t)T * widest_in * sizeof(float));
    *out = malloc((size_t)T * widest_out * sizeof(float));
    if (!*x || !*out) return -1;
    for (size_t i = 0; i < (size_t)T * widest_in; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        (*x)[i] = (float)(seed >> 40) / (1 << 24) - 0.5f;
    }
    return 0;
}

/* One run of one path: every product once (after one untimed pass on the
 * first run, which faults the buffers in), then the instruction's peak. */
static void time_path(RunState *s, PathTimes *p, int r, const GemmShape *sh, uint16_t *const w[N_SHAPES],
                      const float *x, float *out, int T) {
    fwd_set_gemm(s, p->path);
    if (r == 0)
        for (int k = 0; k < N_SHAPES; k++)
            fwd_matmul(s, out, x, (Mat){w[k], DT_BF16}, T, sh[k].n_in, sh[k].n_out);
    double flops = 0, secs = 0;
    for (int k = 0; k < N_SHAPES; k++) {
        double t0 = clock_now();
        fwd_matmul(s, out, x, (Mat){w[k], DT_BF16}, T, sh[k].n_in, sh[k].n_out);
        double dt = clock_now() - t0, f = 2.0 * T * sh[k].n_out * sh[k].n_in;
        p->shape[k][r] = f / dt / 1e9;
        flops += f, secs += dt;
    }
    p->layer[r] = flops / secs / 1e9;
    p->peak[r] = bench_peak_gflops(s->pool, p->path);
    p->frac[r] = p->layer[r] / p->peak[r];
}

/* FLOP one token costs in a layer's products. */
static double layer_flops(const GemmShape *sh) {
    double f = 0;
    for (int k = 0; k < N_SHAPES; k++) f += 2.0 * sh[k].n_out * sh[k].n_in;
    return f;
}

static const char *instruction(GemmPath p) {
    return p == GEMM_AMX ? "TDPBF16PS" : p == GEMM_AVX512BF16 ? "VDPBF16PS" : "f32 FMA (sgemm)";
}

static void print_gemm(const BenchOpts *b, const Config *c, int T, const GemmShape *sh, PathTimes *pt, int np,
                       int threads) {
    double layer[8], peak[8], frac[8], shp[8][N_SHAPES];
    for (int i = 0; i < np; i++) {
        frac[i] = bench_median(pt[i].frac, b->runs);
        layer[i] = bench_median(pt[i].layer, b->runs);
        peak[i] = bench_median(pt[i].peak, b->runs);
        for (int k = 0; k < N_SHAPES; k++) shp[i][k] = bench_median(pt[i].shape[k], b->runs);
    }
    if (b->json) {
        printf("{\"T\": %d, \"dim\": %d, \"hidden\": %d, \"q_dim\": %d, \"kv_dim\": %d, \"threads\": %d, \"runs\": %d, "
               "\"default\": \"%s\", \"paths\": [", T, c->dim, c->hidden_dim, c->q_dim, c->kv_dim, threads, b->runs,
               gemm_half_name(gemm_half_best()));
        for (int i = 0; i < np; i++) {
            /* significant digits, not decimals: a loaded or sanitized run's 0.07 GFLOP/s kept only one */
            printf("%s{\"path\": \"%s\", \"instruction\": \"%s\", \"layer_gflops\": %.6g, \"peak_gflops\": %.6g, "
                   "\"frac_of_peak\": %.4g, \"layer_tok_s\": %.6g", i ? ", " : "", gemm_half_name(pt[i].path),
                   instruction(pt[i].path), layer[i], peak[i], frac[i],
                   layer[i] * 1e9 / layer_flops(sh));
            for (int k = 0; k < N_SHAPES; k++) printf(", \"%s_gflops\": %.6g", sh[k].name, shp[i][k]);
            printf("}");
        }
        printf("]}\n");
        return;
    }
    printf("gemm            one layer's products at T = %d (dim %d, hidden %d, q %d, kv %d), bf16 weights, %d threads,\n"
           "                median of %d runs; default path here: %s\n", T, c->dim, c->hidden_dim, c->q_dim, c->kv_dim,
           threads, b->runs, gemm_half_name(gemm_half_best()));
    printf("  %-11s %-16s %10s %10s %8s %12s\n", "path", "instruction", "GFLOP/s", "peak", "of peak", "layer tok/s");
    for (int i = 0; i < np; i++)
        printf("  %-11s %-16s %10.1f %10.1f %7.1f%% %12.1f\n", gemm_half_name(pt[i].path), instruction(pt[i].path),
               layer[i], peak[i], 100 * frac[i],
               layer[i] * 1e9 / layer_flops(sh));
    printf("  GFLOP/s by product:");
    for (int k = 0; k < N_SHAPES; k++) printf(" %s", sh[k].name);
    printf("\n");
    for (int i = 0; i < np; i++) {
        printf("  %-11s", gemm_half_name(pt[i].path));
        for (int k = 0; k < N_SHAPES; k++) printf(" %7.1f", shp[i][k]);
        printf("\n");
    }
}

int bench_gemm(const Config *c0, const BenchOpts *b, Err *e) {
    Config c = *c0;
    c.dtype = DT_BF16;
    int T = b->prompt_len < c.seq_len ? b->prompt_len : c.seq_len, R = b->runs, np = 0, rc = -1;
    GemmShape sh[N_SHAPES];
    layer_shapes(&c, sh);
    PathTimes pt[3];
    memset(pt, 0, sizeof pt);
    for (int p = GEMM_EXACT; p <= GEMM_AMX; p++)
        if (gemm_half_available((GemmPath)p)) pt[np++].path = (GemmPath)p;
    uint16_t *w[N_SHAPES] = {0};
    float *x = NULL, *out = NULL;
    RunState s;
    memset(&s, 0, sizeof s);
    int ok = make_operands(sh, T, w, &x, &out) == 0;
    for (int i = 0; i < np && ok; i++) {
        ok = (pt[i].layer = calloc(R, sizeof(double))) && (pt[i].peak = calloc(R, sizeof(double))) &&
             (pt[i].frac = calloc(R, sizeof(double)));
        for (int k = 0; k < N_SHAPES && ok; k++) ok = (pt[i].shape[k] = calloc(R, sizeof(double))) != NULL;
    }
    if (!ok) err_set(e, "out of memory for the products of one layer (T = %d)", T);
    else if (fwd_init(&s, &c, T, b->threads, e) == 0) {
        for (int r = 0; r < R; r++)
            for (int j = 0; j < np; j++) { /* the order rotates every run */
                PathTimes *p = &pt[(j + r) % np];
                time_path(&s, p, r, sh, w, x, out, T);
            }
        print_gemm(b, &c, T, sh, pt, np, pool_threads(s.pool));
        rc = 0;
    }
    fwd_free(&s);
    for (int k = 0; k < N_SHAPES; k++) free(w[k]);
    free(x), free(out);
    for (int i = 0; i < np; i++) {
        free(pt[i].layer), free(pt[i].peak), free(pt[i].frac);
        for (int k = 0; k < N_SHAPES; k++) free(pt[i].shape[k]);
    }
    return rc;
}
