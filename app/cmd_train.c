/* `ahascope train`: learn AHA routers, with the base model frozen (default)
 * or fine-tuned along with them (--train all, as the paper does), or a
 * llama2.c model from scratch. This file reads the flags by their table and
 * checks them; app/train_run.h runs. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/train_run.h"
#include "engine/files.h"
#include "engine/routers.h"

static int read_seed(void *opts, const char *flag, const char *v, Err *e) {
    long n = 0;
    if (args_int(flag, v, 0, 0x7fffffffffffffffL, &n, e)) return -1;
    ((TrainOpts *)opts)->o.seed = (uint64_t)n;
    return 0;
}

#define TR(field) offsetof(TrainOpts, field)
#define TR_ALSO(field) ARG_ALSO(TrainOpts, field)

static const ArgSpec TRAIN_ROWS[] = {
    {"--window", ARG_INT, TR(o.attn.window), 1, 1 << 20, "W", .also = TR_ALSO(o.have_window),
     .help = "local keys per head the routers are trained for (required)"},
    {"--windows", ARG_STRING, TR(windows_spec), .metavar = "W1,W2,...",
     .help = "a multi-choice router: each head global or one of these windows (increasing), in place of --window"},
    {"--lambda", ARG_DOUBLE, TR(lambda), 0, 1e3, "L", .also = TR_ALSO(have_lambda),
     .help = "weight of the mean router score in the loss (default 0.02)"},
    {"--tau", ARG_FLOAT, TR(o.attn.tau), 0, 1, "T", .also = TR_ALSO(o.have_tau), .help = "the gate's threshold (default 0.5)"},
    {"--sinks", ARG_INT, TR(o.attn.sinks), 0, 1 << 20, "S", .also = TR_ALSO(have_sinks),
     .help = "first S positions always local (default 0)"},
    {"--steps", ARG_LONG, TR(steps), 0, 1 << 20, "N", .help = "optimiser steps (default 300)"},
    {"--batch", ARG_LONG, TR(batch), 1, 1 << 20, "B", .help = "sequences a step (default 8)"},
    {"--seq-len", ARG_LONG, TR(seq_len), 2, 1 << 20, "T", .also = TR_ALSO(have_seq_len),
     .help = "tokens a sequence (default 128)"},
    {"--lr", ARG_DOUBLE, TR(lr), 1e-9, 1e3, "LR", .also = TR_ALSO(have_lr),
     .help = "AdamW's rate (default 0.02; --from-scratch 2e-3), 10% warm-up, cosine to lr/10"},
    {"--self", ARG_LONG, TR(self_n), 1, 1 << 20, "N", .also = TR_ALSO(have_self),
     .help = "N sequences sampled from the model itself (default 64), 1 in 8 held out"},
    {"--data", ARG_STRING, TR(data), .metavar = "FILE", .help = "or a text file cut into --seq-len chunks"},
    {"--objective", ARG_STRING, TR(objective), .metavar = "kl|ce",
     .help = "kl: KL(original model's full-attention distribution || AHA distribution): AHA should change nothing "
             "(default); ce: next-token cross-entropy"},
    {"--train", ARG_STRING, TR(train), .metavar = "routers|all",
     .help = "routers: the base model stays frozen (default); all: full fine-tuning, every weight learns too "
             "(AdamW at --lr-model, same schedule) and the tuned model is written as a llama2.c checkpoint to "
             "--out-model, in the input's version"},
    {"--lr-model", ARG_DOUBLE, TR(lr_model), 1e-9, 1e3, "LR", .help = "--train all: the model's rate (default 1e-4)"},
    {"--weight-decay", ARG_DOUBLE, TR(weight_decay), 0, 1, "WD",
     .help = "AdamW's decoupled decay of the model's weights (0-1, default 0: none), every weight alike: each step "
             "w -= lr*WD*w besides the gradient step (--train all and --from-scratch; the routers never decay)"},
    {"--out-model", ARG_STRING, TR(out_model), .metavar = "FILE",
     .help = "--train all: the tuned model (default --out without .safetensors, plus .bin)"},
    {"--seed", ARG_CUSTOM, .metavar = "S", .fn = read_seed, .help = "the data's and the weights' seed (default 1)"},
    {"--resume", ARG_STRING, TR(resume), .metavar = "CKPT", .help = "continue a FILE.ckpt exactly"},
    {"--stop-after", ARG_LONG, TR(stop_after), 1, 1 << 20, "K", .help = "write FILE.ckpt after K steps and stop"},
    {"--eval-seqs", ARG_LONG, TR(eval_seqs), 1, 1 << 20, "N",
     .help = "the held-out score (and the training one) over at most N sequences spread over the set (default 64), "
             "so a large --data file costs no more than a small one"},
    {"--out", ARG_STRING, TR(out), .metavar = "FILE", .help = "the router file (--from-scratch: the model) written (required)"},
    {"--from-scratch", ARG_FLAG, TR(scratch), .help = "train a new llama2.c model (below)"},
    {"--dims", ARG_STRING, TR(dims), .metavar = "d,hidden,layers,heads,kv_heads,vocab,seq_len",
     .help = "--from-scratch: its shape (default 128,384,4,4,4,0,1024; vocab 0: the tokenizer's size)"},
    {"--vocab-file", ARG_STRING, TR(vocab_file), .metavar = "WORDS",
     .help = "--from-scratch: the words of the generated tokenizer (one per line, a leading space kept)"},
    {"--curve", ARG_STRING, TR(curve), .metavar = "FILE",
     .help = "append a row every 50 steps (step, seq_len, batch, the steps' mean loss; a header when FILE is new), "
             "so a resumed run continues its curve"},
    {"--init", ARG_STRING, TR(init), .metavar = "M.bin", .help = "--from-scratch: start from M's weights (below)"},
    {"--by-length", ARG_FLAG, TR(by_length),
     .help = "each step takes its items from a run of items of about one length (the training items sorted by "
             "length, the run's start drawn from seed and step) and runs at its longest item's length, not "
             "--seq-len: padding costs nothing, so task items of many lengths train in a fraction of the time. "
             "Needs the ce objective and --lambda 0 (as --from-scratch has); the held-out score cuts padding too. "
             "Resume with the same flags."},
    {"--answer-weight", ARG_DOUBLE, TR(answer_weight), 1e-9, 1e4, "K", .also = TR_ALSO(have_answer_weight),
     .help = "on task items (--data from `tasks`): each answer target counts K times in the loss (default 1); with "
             "the kl objective (routers, or --train all) the KL is then weighed per position, Σ w·KL / Σ w, w = K "
             "at the answer, 0 on padding, 1 elsewhere"},
};
static const ArgsTable TRAIN_FLAGS = ARGS_TABLE(NULL, TrainOpts, TRAIN_ROWS);

const ArgsTable *const TRAIN_TABLES[] = {&TRAIN_FLAGS, &ARGS_MODEL, NULL};

static void train_help(void) {
    puts("usage: ahascope train [--model M] --window W [--lambda L] [--tau T] [--sinks S] [--steps N] [--batch B]\n"
         "                      [--windows W1,W2,...]\n"
         "                      [--seq-len T] [--lr LR] [--data FILE | --self N] [--objective kl|ce]\n"
         "                      [--train routers|all] [--lr-model LR] [--weight-decay WD] [--out-model FILE]\n"
         "                      [--seed S] [--resume CKPT] [--stop-after K] [--eval-seqs N] --out FILE\n"
         "       ahascope train --from-scratch --data FILE [--dims d,hidden,layers,heads,kv_heads,vocab,seq_len]\n"
         "                      [--vocab-file WORDS | --tokenizer T] [--steps N] [--batch B] [--seq-len T] [--lr LR]\n"
         "                      [--seed S] [--resume CKPT] [--stop-after K] [--eval-seqs N] [--curve FILE] [--init M.bin]\n"
         "                      [--by-length] [--weight-decay WD] --out MODEL.bin\n"
         "\n"
         "Learn one router vector per head (global iff sigmoid(x.w) > tau) by the straight-through estimator,\n"
         "loss = task + lambda * mean(r) over tokens, layers, heads.\n"
         "--windows W1,...,WK: a multi-choice router, K + 1 logits a head (each window, then global), the argmax\n"
         "  chosen (global when its logit beats the best window's by logit(tau)); lambda then weighs the expected\n"
         "  share of keys read. The file's metadata windows names them.\n"
         "Writes FILE (router safetensors with metadata: window, tau, lambda, sinks, objective, data, steps,\n"
         "seed, train, model, held-out global share and task loss, task loss on as many training sequences).\n"
         "--from-scratch: a llama2.c model of --dims from random weights (--seed), every weight trained with full\n"
         "  attention on next-token cross-entropy over --data (AdamW at --lr, default 2e-3, 10% warm-up, cosine\n"
         "  to lr/10; --seq-len defaults to the context - 1), written to --out as a llama2.c checkpoint\n"
         "  (version 0) that run, eval and tui read. Its tokenizer: --tokenizer T (a tokenizer.bin), else one\n"
         "  generated beside --out as tokV.bin (found there by run): ids 0-258 llama2.c's specials and byte\n"
         "  fallback, every printable ASCII character, and the words of --vocab-file (default: a few filler and\n"
         "  task words) with their prefixes. --model, --window, --objective, --train, --lambda, --tau, --sinks,\n"
         "  --self, --lr-model and --out-model do not apply. --steps 0 writes the untrained model and its\n"
         "  tokenizer (no --data): what `tasks --model` needs to write task items in the new vocabulary. A --data\n"
         "  file whose first character is '{' holds task items (JSON lines from `tasks`): one sequence an item,\n"
         "  BOS, the prompt, a space, the answer and a full stop. --init M.bin starts from M's weights (exactly\n"
         "  --dims's shape) instead of random ones: a second cycle with fresh AdamW moments and its own --steps\n"
         "  schedule.\n"
         "Ctrl-C (or --stop-after K) writes FILE.ckpt (routers, tuned weights, AdamW moments, step), which\n"
         "--resume continues exactly (from scratch, the model so far goes to --out too, exit 130).\n"
         "A progress bar goes to stderr: step, loss, task loss, global share, tokens/s, ETA.");
    args_help_tables(TRAIN_TABLES);
}

/* The default --out-model: --out without ".safetensors", plus ".bin". */
static void default_out_model(TrainOpts *t) {
    size_t n = strlen(t->out), k = strlen(".safetensors");
    if (n > k && !strcmp(t->out + n - k, ".safetensors")) n -= k;
    snprintf(t->out_model_buf, sizeof t->out_model_buf, "%.*s.bin", (int)(n < 1000 ? n : 1000), t->out);
    t->out_model = t->out_model_buf;
}

/* --from-scratch: refuse what only applies to routers and fine-tuning. */
static int check_scratch(TrainOpts *t, Err *e) {
    const char *bad = t->o.model ? "--model" : t->o.have_window ? "--window" : t->windows_spec ? "--windows"
                    : t->objective ? "--objective"
                    : t->train ? "--train" : t->have_lambda ? "--lambda" : t->o.have_tau ? "--tau"
                    : t->have_sinks ? "--sinks" : t->have_self ? "--self" : t->lr_model > 0 ? "--lr-model"
                    : t->out_model ? "--out-model" : NULL;
    if (!t->out) return err_usage(e, "--out MODEL.bin is required (the checkpoint to write)");
    if (!t->data && t->steps > 0) return err_usage(e, "--from-scratch needs --data FILE (the text to learn)");
    if (bad) return err_usage(e, "%s does not apply to --from-scratch (it builds and trains its own model)", bad);
    if (t->vocab_file && t->o.tokenizer) return err_usage(e, "--vocab-file and --tokenizer exclude each other");
    if (!t->dims) t->dims = "128,384,4,4,4,0,1024";
    if (!t->have_lr) t->lr = 2e-3;
    t->all = 1, t->objective = "ce", t->train = "all", t->lambda = 0, t->out_model = t->out;
    return file_check_output(t->out, NULL, e);
}

/* Checks across flags, after they are all read. */
static int check_combination(TrainOpts *t, Err *e) {
    if (t->scratch) return check_scratch(t, e);
    if (!t->objective) t->objective = "kl";
    if (!t->train) t->train = "routers";
    if (t->vocab_file || t->dims) return err_usage(e, "--%s needs --from-scratch", t->dims ? "dims" : "vocab-file");
    if (t->steps == 0) return err_usage(e, "--steps 0 needs --from-scratch (it writes the untrained model)");
    if (!t->out) return err_usage(e, "--out FILE is required (the router file to write, e.g. --out r16.safetensors)");
    if (t->windows_spec && t->o.have_window) return err_usage(e, "--windows and --window exclude each other");
    if (t->windows_spec && router_windows_parse(t->windows_spec, "--windows", t->windows, &t->n_windows, e)) return -1;
    if (t->n_windows) t->o.attn.window = t->windows[0]; /* the file's "window": what other policies run at */
    else if (!t->o.have_window) return err_usage(e, "--window W (or --windows W1,W2,...) is required");
    if (strcmp(t->objective, "kl") && strcmp(t->objective, "ce")) return err_usage(e, "--objective is kl or ce");
    if (strcmp(t->train, "routers") && strcmp(t->train, "all")) return err_usage(e, "--train is routers or all");
    t->all = !strcmp(t->train, "all");
    if (t->n_windows && t->all)
        return err_usage(e, "--windows trains routers only: --train all is not supported with a multi-choice router");
    if (!t->all && (t->out_model || t->lr_model > 0 || t->weight_decay > 0))
        return err_usage(e, "--out-model, --lr-model and --weight-decay need --train all (the base model is frozen)");
    if (t->by_length && (strcmp(t->objective, "ce") || t->lambda != 0))
        return err_usage(e, "--by-length needs --objective ce and --lambda 0 (KL and the global-share term "
                            "count padded positions)");
    if (t->all && !t->out_model) default_out_model(t);
    if (t->all && !strcmp(t->out_model, t->out)) return err_usage(e, "--out-model and --out are the same file");
    if (t->lr_model <= 0) t->lr_model = 1e-4;
    /* before minutes of training, not after: FILE.ckpt goes beside --out */
    return file_check_output(t->out, NULL, e) || (t->all && file_check_output(t->out_model, NULL, e)) ? -1 : 0;
}

static int parse(int argc, char **argv, TrainOpts *t, Err *e) {
    runopts_defaults(&t->o);
    t->o.seed = 1, t->o.attn.window = 0;
    t->steps = 300, t->batch = 8, t->seq_len = 128, t->self_n = 64, t->lambda = 0.02, t->lr = 0.02, t->answer_weight = 1;
    t->eval_seqs = 64;
    void *const opts[] = {t, &t->o};
    int r = args_parse_argv(argc, argv, TRAIN_TABLES, opts, e);
    if (r != ARGS_DONE) return r;
    return check_combination(t, e);
}

int cmd_train(int argc, char **argv) {
    static TrainOpts t;
    Err e;
    memset(&t, 0, sizeof t);
    int r = parse(argc, argv, &t, &e);
    if (r == 1) { train_help(); return 0; }
    if (r < 0) return args_fail(&e);
    r = t.scratch ? train_run_scratch(&t, &e) : train_run_routers(&t, &e);
    return r < 0 ? args_fail(&e) : r == 1 ? 130 : 0;
}
