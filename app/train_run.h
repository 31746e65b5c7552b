/* train_run.h — what `ahascope train` runs once its flags are read
 * (app/cmd_train.c parses them): routers learnt on a model, frozen or
 * fine-tuned along, or a llama2.c model trained from scratch.
 *
 * Both runs print a progress bar on stderr and their result on stdout,
 * and stop at Ctrl-C (or --stop-after) after writing FILE.ckpt, which
 * --resume continues exactly. */
#ifndef AHASCOPE_TRAIN_RUN_H
#define AHASCOPE_TRAIN_RUN_H

#include "app/args.h"
#include "engine/model.h"

typedef struct {
    RunOpts o;
    const char *out, *out_model, *data, *resume, *objective, *train, *curve, *init;
    long steps, batch, seq_len, self_n, stop_after, eval_seqs;
    double lambda, lr, lr_model, answer_weight, weight_decay;
    int all;                 /* --train all (and --from-scratch) */
    int have_answer_weight;  /* --answer-weight was given: with KL, the loss weighs the rows (pads 0, answers K) */
    int scratch;             /* --from-scratch */
    int by_length;           /* --by-length: a step's items of about one length, run at the longest one's */
    const char *dims, *vocab_file;
    const char *windows_spec; /* --windows: a multi-choice router's windows */
    int n_windows, windows[8];
    int have_seq_len, have_lr, have_self, have_lambda, have_sinks;
    char out_model_buf[1100];
} TrainOpts;

/* Make a loaded model one the backward pass can read (an F32 GGUF llama is
 * rebuilt in the llama2.c layout) and refuse any other, or weights holding
 * NaN or Inf, naming path: 0, or -1 with e set. `train` and duo-train. */
int train_model_trainable(Model *m, const char *path, Err *e);

/* Learn routers (and with --train all every weight) for --model: 0 done,
 * 1 stopped with a checkpoint written, -1 with e set. */
int train_run_routers(TrainOpts *t, Err *e);

/* --from-scratch: a random model of --dims and its tokenizer trained on
 * --data; the same returns. */
int train_run_scratch(TrainOpts *t, Err *e);

#endif
