/* train_adamw.h — the AdamW optimiser (Loshchilov & Hutter: weight decay
 * decoupled from the gradient's moments) and a warm-up + cosine
 * learning-rate schedule. Deterministic: plain sequential float updates.
 */
#ifndef AHASCOPE_TRAIN_ADAMW_H
#define AHASCOPE_TRAIN_ADAMW_H

#include <stddef.h>

#include "err.h"

typedef struct {
    float beta1, beta2;   /* moment decay rates */
    float eps;            /* added to √v̂ */
    float weight_decay;   /* decoupled: p −= lr·wd·p each step */
} AdamWConfig;

typedef struct {
    AdamWConfig h;
    size_t n;             /* parameters in the group */
    float *m, *v;         /* first and second moments [n] */
    long step;            /* steps taken (for the bias correction) */
} AdamW;

/* Defaults: β1 0.9, β2 0.999, ε 1e-8, weight decay 0. */
AdamWConfig adamw_defaults(void);

/* Zeroed moments for a group of n parameters. Returns 0 on success. */
int adamw_init(AdamW *o, size_t n, const AdamWConfig *h, Err *e);

/* One step at learning rate lr: p −= lr·(m̂/(√v̂ + ε) + wd·p), with the
 * bias-corrected moments m̂ = m/(1−β1^t), v̂ = v/(1−β2^t). */
void adamw_step(AdamW *o, float *params, const float *grads, float lr);

/* Free the moments (safe on a zeroed struct). */
void adamw_free(AdamW *o);

/* Learning rate at step (0-based): linear warm-up to lr_max over `warmup`
 * steps, then a cosine from lr_max down to lr_min at step `total`, lr_min after. */
float lr_warmup_cosine(long step, long warmup, long total, float lr_max, float lr_min);

#endif
