/* sampler.h — choosing the next token from logits: greedy, temperature,
 * nucleus (top-p), with a seeded generator so a seed reproduces a text. */
#ifndef AHASCOPE_SAMPLER_H
#define AHASCOPE_SAMPLER_H

#include <stdint.h>

typedef struct {
    int vocab_size;
    float temperature;  /* 0: greedy */
    float topp;         /* in (0,1): nucleus sampling; otherwise the full distribution */
    uint64_t state;     /* xorshift64* state */
    float *probs;       /* [vocab] scratch */
    int *order;         /* [vocab] scratch for top-p */
} Sampler;

/* Set up a sampler; returns 0, or -1 when out of memory. */
int sampler_init(Sampler *s, int vocab_size, float temperature, float topp, uint64_t seed);

/* Free the scratch buffers. */
void sampler_free(Sampler *s);

/* Why logits could not be sampled (sampler_sample's negative returns). */
enum {
    SAMPLER_NONFINITE = -1, /* a logit is NaN or +Inf, or every logit is -Inf: no distribution */
    SAMPLER_OVERFLOW = -2,  /* finite logits, but divided by the temperature they overflow */
};

/* Pick a token from logits (not modified); or SAMPLER_NONFINITE /
 * SAMPLER_OVERFLOW, drawing nothing, when they give no distribution. */
int sampler_sample(Sampler *s, const float *logits);

/* Advance the generator past the draws n sampled tokens would have taken
 * (none when greedy), so a sequence resumed from tokens sampled earlier
 * goes on drawing where their sampling left off. */
void sampler_skip(Sampler *s, int n);

/* Index of the largest logit (first on ties). */
int sampler_argmax(const float *logits, int n);

#endif
