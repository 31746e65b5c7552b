/* matvec.h — out[n] = W[n][d] · x[d], the decode step's hot loop.
 *
 * A decode step streams every weight once, so this kernel is judged by
 * bytes per second: one row at a time with independent accumulators reads
 * W as a single sequential stream, which the hardware prefetchers follow
 * (OpenBLAS's sgemv reached about half the machine's bandwidth here).
 * The widest instruction set the CPU has is chosen at run time.
 */
#ifndef AHASCOPE_MATVEC_H
#define AHASCOPE_MATVEC_H

/* out[i] = Σ_j w[i*d + j] · x[j] for i in [0, n). */
void mv_f32(float *out, const float *w, const float *x, int n, int d);

/* Attention scores: s[i] = scale · q·k_i for n keys k_i = k + i*stride. */
void mv_scores(float *s, const float *q, const float *k, int stride, int hs, int n, float scale);

/* Weighted value sum: acc[hs] += Σ_i w[i] · v_i for n values v_i = v + i*stride. */
void mv_wsum(float *acc, const float *w, const float *v, int stride, int hs, int n);

/* Name of the kernel variant in use ("avx512", "avx2", "portable"). */
const char *mv_variant(void);

#endif
