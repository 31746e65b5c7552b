/* kernels.h — the small dense kernels of the forward pass that BLAS does
 * not cover (vectors of head_size or dim). Compiled for several ISAs and
 * picked at load time (target_clones), so one binary runs everywhere. */
#ifndef AHASCOPE_KERNELS_H
#define AHASCOPE_KERNELS_H

#include <stddef.h>

/* out = x / rms(x) · w, rms with eps 1e-5 as in llama2.c. */
void k_rmsnorm(float *out, const float *x, const float *w, int n);

/* The same with the model's own epsilon (HF configs: rms_norm_eps). */
void k_rmsnorm_eps(float *out, const float *x, const float *w, int n, float eps);

/* log-sum-exp, entropy (nats) and log p[target] of a logit vector. */
void k_logit_stats(const float *logits, int n, int target, float *logprob, float *entropy);

/* h = silu(h) * u, elementwise (SwiGLU). */
void k_swiglu(float *h, const float *u, int n);

/* The index of the first NaN or Inf among x[0..n), or n if there is none
 * (loaders and training refuse such values instead of computing with them). */
size_t k_first_nonfinite(const float *x, size_t n);

#endif
