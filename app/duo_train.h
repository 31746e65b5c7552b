/* duo_train.h — DuoAttention's trained gates (Xiao et al. 2024) for
 * `calibrate --method duo-train`: a gate α per layer and KV head mixing
 * the head's full attention with its streaming attention (the first `sink`
 * keys and the last `recent`), out = α·full + (1−α)·streaming, the model's
 * weights frozen. α starts at 1 and is trained by AdamW on
 * KL(full model ‖ mixed model) over the answer tokens of task items plus
 * λ·Σα (the L1 penalty, α ≥ 0), clamped to [0, 1] after every step. The
 * batches are the router trainer's (app/train_batches.h): a step's items
 * neighbours in length, drawn from (seed, step), so a run repeats exactly;
 * a batch as large as the items takes each of them once. */
#ifndef AHASCOPE_DUO_TRAIN_H
#define AHASCOPE_DUO_TRAIN_H

#include <stdint.h>

#include "engine/err.h"
#include "engine/model.h"
#include "engine/tokenize/tokenize.h"

typedef struct {
    const char *data;     /* task items (JSON lines from `ahascope tasks`) */
    int sink, recent;     /* the streaming branch: sink keys and the last `recent` (the current one among them) */
    int steps, batch;     /* optimiser steps; items a step */
    double lr, lambda;    /* AdamW's constant rate; the weight of Σα */
    uint64_t seed;        /* the batches' draw */
} DuoTrainOpts;

/* What the run ended with: the mean loss of its last tenth of steps. */
typedef struct {
    int n_items;
    double last_kl, last_loss;
} DuoTrainResult;

/* Train the gates of m on o->data; alpha receives [n_layers][n_kv_heads]
 * values in [0, 1]. 0, or -1 with e set (the file named). */
int duo_train(const Model *m, const Tokenizer *tok, const DuoTrainOpts *o, float *alpha, DuoTrainResult *r, Err *e);

#endif
