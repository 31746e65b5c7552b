/* attn_kernels.h — the inner loops of one attention head over cached keys
 * and values: scores, then softmax weights folded into the value sum.
 *
 * At a few hundred positions these loops stream as many bytes per decode
 * step as a sixth of the weights, so they are judged like the matvecs, by
 * bytes per second. Scores are reduced sixteen keys at a time (one
 * transpose-and-add tree instead of a horizontal sum per key), and the
 * exponentials are computed sixteen at a time inside the value pass, so the
 * arithmetic overlaps the loads instead of stalling between them.
 */
#ifndef AHASCOPE_ATTN_KERNELS_H
#define AHASCOPE_ATTN_KERNELS_H

/* Keys and values are stored as dt (DType: f32, or bf16/f16 when a
 * half-precision model keeps its cache in its own type) and widened in
 * registers; q, s and acc are f32. stride counts elements, not bytes. */

/* s[i] = scale · q·k_i for n keys k_i = k + i*stride, each head_size
 * elements; returns max s[i] (-inf when n is 0). */
float attn_scores(float *s, const float *q, const void *k, int dt, int stride, int head_size, int n, float scale);

/* With e_i = exp(s[i] - m): acc[head_size] += Σ e_i · v_i over n values
 * v_i = v + i*stride; returns Σ e_i. */
double attn_softmax_wsum(float *acc, const float *s, float m, const void *v, int dt, int stride, int head_size, int n);

/* The kernels attn_scores and attn_softmax_wsum run for head_size here:
 * "avx512", "avx2" or "portable" (what `bench` reports). */
const char *attn_kernels_name(int head_size);

/* y[i] = exp(x[i]) with the kernel's own exponential (within 1 ulp of exp;
 * NaN stays NaN, below -104 gives 0): exposed so tests can check it. */
void attn_exp(float *y, const float *x, int n);

#endif
