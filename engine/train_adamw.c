/* train_adamw.c — the AdamW optimiser and its warm-up + cosine schedule. */
#include "train_adamw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

AdamWConfig adamw_defaults(void) {
    return (AdamWConfig){.beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0};
}

int adamw_init(AdamW *o, size_t n, const AdamWConfig *h, Err *e) {
    memset(o, 0, sizeof *o);
    o->h = *h;
    o->n = n;
    o->m = calloc(n ? n : 1, sizeof(float));
    o->v = calloc(n ? n : 1, sizeof(float));
    if (!o->m || !o->v) {
        adamw_free(o);
        return err_set(e, "out of memory for the optimiser state (%zu parameters)", n);
    }
    return 0;
}

void adamw_step(AdamW *o, float *params, const float *grads, float lr) {
    const AdamWConfig *h = &o->h;
    o->step++;
    /* in double: 1 − β2^t is ~1e-3 at t = 1 and must not lose digits */
    float bc1 = (float)(1.0 - pow(h->beta1, (double)o->step));
    float bc2 = (float)(1.0 - pow(h->beta2, (double)o->step));
    for (size_t i = 0; i < o->n; i++) {
        float g = grads[i];
        o->m[i] = h->beta1 * o->m[i] + (1.0f - h->beta1) * g;
        o->v[i] = h->beta2 * o->v[i] + (1.0f - h->beta2) * g * g;
        float mhat = o->m[i] / bc1, vhat = o->v[i] / bc2;
        params[i] -= lr * (mhat / (sqrtf(vhat) + h->eps) + h->weight_decay * params[i]);
    }
}

void adamw_free(AdamW *o) {
    free(o->m);
    free(o->v);
    memset(o, 0, sizeof *o);
}

float lr_warmup_cosine(long step, long warmup, long total, float lr_max, float lr_min) {
    if (step < warmup) return lr_max * (float)(step + 1) / (float)warmup;
    if (step >= total || total <= warmup) return lr_min;
    double progress = (double)(step - warmup) / (double)(total - warmup);
    return (float)(lr_min + 0.5 * (lr_max - lr_min) * (1.0 + cos(M_PI * progress)));
}
