/* kernels.c — the small dense kernels: RMSNorm, log-sum-exp and entropy, SwiGLU. */
#include "kernels.h"

#include <math.h>

void k_rmsnorm_eps(float *out, const float *x, const float *w, int n, float eps) {
    float ss = 0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    ss = 1.0f / sqrtf(ss / n + eps);
    for (int i = 0; i < n; i++) out[i] = w[i] * (ss * x[i]);
}

void k_rmsnorm(float *out, const float *x, const float *w, int n) { k_rmsnorm_eps(out, x, w, n, 1e-5f); }

void k_logit_stats(const float *logits, int n, int target, float *logprob, float *entropy) {
    float m = logits[0];
    for (int i = 1; i < n; i++) if (logits[i] > m) m = logits[i];
    double z = 0, ez = 0;
    for (int i = 0; i < n; i++) {
        double e = exp((double)logits[i] - m);
        z += e;
        ez += e * ((double)logits[i] - m);
    }
    double lse = log(z);
    if (entropy) *entropy = (float)(lse - ez / z);
    if (logprob) *logprob = (target >= 0 && target < n) ? (float)((double)logits[target] - m - lse) : NAN;
}

void k_swiglu(float *h, const float *u, int n) {
    for (int i = 0; i < n; i++) {
        float v = h[i];
        h[i] = v * (1.0f / (1.0f + expf(-v))) * u[i];
    }
}


size_t k_first_nonfinite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;
    return n;
}
