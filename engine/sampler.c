/* sampler.c — greedy, temperature and top-p sampling with a seeded generator. */
#include "sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sampler_init(Sampler *s, int vocab_size, float temperature, float topp, uint64_t seed) {
    memset(s, 0, sizeof *s);
    s->vocab_size = vocab_size;
    s->temperature = temperature;
    s->topp = topp;
    s->state = seed ? seed : 0x2545f4914f6cdd1dull;
    s->probs = malloc((size_t)vocab_size * sizeof(float));
    s->order = malloc((size_t)vocab_size * sizeof(int));
    return (s->probs && s->order) ? 0 : -1;
}

void sampler_free(Sampler *s) {
    free(s->probs);
    free(s->order);
    s->probs = NULL;
    s->order = NULL;
}

static float rand_unit(Sampler *s) {
    s->state ^= s->state >> 12;
    s->state ^= s->state << 25;
    s->state ^= s->state >> 27;
    return (float)((s->state * 0x2545f4914f6cdd1dull) >> 40) / 16777216.0f;
}

void sampler_skip(Sampler *s, int n) {
    for (int i = 0; s->temperature > 0 && i < n; i++) rand_unit(s);
}

int sampler_argmax(const float *logits, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (logits[i] > logits[best]) best = i;
    return best;
}

static int by_prob_desc(const void *a, const void *b, void *ctx) {
    const float *probs = ctx;
    float pa = probs[*(const int *)a], pb = probs[*(const int *)b];
    return pa < pb ? 1 : pa > pb ? -1 : (*(const int *)a - *(const int *)b);
}

/* Nucleus: the smallest set of most likely tokens whose mass reaches topp.
 * Tokens below (1-topp)/(n-1) can never be in it, so they are not sorted.
 * probs is a distribution (finite, summing to 1), so its largest entry is
 * at least 1/V > cutoff and the set is never empty; the guard keeps any
 * rounding from reading order[-1]. */
static int sample_topp(Sampler *s, float coin) {
    int n = 0, V = s->vocab_size;
    float cutoff = (1.0f - s->topp) / (V - 1);
    for (int i = 0; i < V; i++) if (s->probs[i] >= cutoff) s->order[n++] = i;
    if (n == 0) return sampler_argmax(s->probs, V);
    qsort_r(s->order, n, sizeof(int), by_prob_desc, s->probs);
    float mass = 0;
    int last = n - 1;
    for (int i = 0; i < n; i++) {
        mass += s->probs[s->order[i]];
        if (mass > s->topp) { last = i; break; }
    }
    float r = coin * mass, acc = 0;
    for (int i = 0; i <= last; i++) {
        acc += s->probs[s->order[i]];
        if (r < acc) return s->order[i];
    }
    return s->order[last];
}

/* SAMPLER_NONFINITE unless the logits are a distribution's: no NaN, no
 * +Inf, and at least one above -Inf (a -Inf logit is probability 0). */
static int check_logits(const float *logits, int V) {
    int any = 0;
    for (int i = 0; i < V; i++) {
        if (isnan(logits[i]) || logits[i] == INFINITY) return SAMPLER_NONFINITE;
        any |= logits[i] > -INFINITY;
    }
    return any ? 0 : SAMPLER_NONFINITE;
}

int sampler_sample(Sampler *s, const float *logits) {
    int V = s->vocab_size, bad = check_logits(logits, V);
    if (bad) return bad;
    if (s->temperature <= 0) return sampler_argmax(logits, V);
    for (int i = 0; i < V; i++) {
        s->probs[i] = logits[i] / s->temperature;
        if (isinf(s->probs[i]) && logits[i] > -INFINITY) return SAMPLER_OVERFLOW; /* a tiny temperature */
    }
    float m = s->probs[0], z = 0;
    for (int i = 1; i < V; i++) if (s->probs[i] > m) m = s->probs[i];
    for (int i = 0; i < V; i++) { s->probs[i] = expf(s->probs[i] - m); z += s->probs[i]; }
    for (int i = 0; i < V; i++) s->probs[i] /= z;
    float coin = rand_unit(s);
    if (s->topp > 0 && s->topp < 1) return sample_topp(s, coin);
    float acc = 0;
    for (int i = 0; i < V; i++) {
        acc += s->probs[i];
        if (coin < acc) return i;
    }
    return V - 1;
}
