/* test_train_scratch.c — training from random weights: a tiny llama learns to copy.
 *
 * Training from random weights: a tiny llama learns
 * to copy (the loss falls, and the copied half far below chance, which
 * only attention back across the sequence gives), deterministically; the generated tokenizer
 * encodes its words as single pieces and digits one by one; and
 * `ahascope train --from-scratch` writes a checkpoint and tokenizer that
 * the other commands load, and refuses what does not apply; `bench
 * --train` counts a step's FLOP as it says. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_forced.h"
#include "app/train_batches.h"
#include "engine/tokenize/tokenize.h"
#include "engine/train_adamw.h"
#include "engine/train_backward.h"
#include "engine/train_scratch.h"
#include "test.h"

/* The copy task on raw ids: BOS, LEN random symbols of SYMS (ids 10 …),
 * a separator, then the same symbols again. The first half is noise
 * (log SYMS per symbol at best); the second is determined by it, which a
 * model learns only by attending LEN + 1 positions back. */
enum { LEN = 8, SYMS = 16, SEP = 5, T_COPY = 2 * LEN + 1, B_COPY = 16, V_COPY = 32 };

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* One batch of copy sequences into in/tg [B_COPY][T_COPY]. */
static void copy_batch(int *in, int *tg, uint64_t *s) {
    for (int b = 0; b < B_COPY; b++) {
        int seq[T_COPY + 1];
        seq[0] = 1, seq[LEN + 1] = SEP;
        for (int i = 0; i < LEN; i++) seq[1 + i] = seq[LEN + 2 + i] = 10 + (int)(rng_next(s) % SYMS);
        for (int t = 0; t < T_COPY; t++) in[b * T_COPY + t] = seq[t], tg[b * T_COPY + t] = seq[t + 1];
    }
}

/* Mean −log p(target) over the copied half (inputs SEP … the second-last
 * copy, whose targets are the copies), from the last forward. */
static double copy_loss(const TrainState *s, const int *tg) {
    double sum = 0;
    for (int b = 0; b < B_COPY; b++)
        for (int t = LEN + 1; t < T_COPY; t++) {
            size_t n = (size_t)b * T_COPY + t;
            sum -= log(s->probs[n * V_COPY + tg[n]]);
        }
    return sum / (B_COPY * LEN);
}

typedef struct {
    double loss0, loss1, copy0, copy1; /* before and after: whole loss, copied half */
} CopyRun;

/* steps AdamW steps of full-attention cross-entropy from seed's weights;
 * the losses on a fixed evaluation batch before and after. */
static CopyRun copy_train(uint64_t seed, int steps) {
    Config c = {.dim = 32, .hidden_dim = 64, .n_layers = 2, .n_heads = 2, .n_kv_heads = 2, .vocab_size = V_COPY,
                .seq_len = 32, .shared_classifier = 1, .rope_theta = 10000.0f};
    Model m;
    TrainState s;
    Grads p, g;
    Weights w;
    AdamW opt;
    Err e;
    CopyRun r = {0};
    AdamWConfig h = adamw_defaults();
    CHECK(train_model_init(&m, &c, seed, &e) == 0);
    CHECK(train_init(&s, &m.c, B_COPY, T_COPY, &e) == 0);
    CHECK(weights_clone(&p, &w, &m.c, &m.w, &e) == 0 && grads_init(&g, &m.c, &e) == 0);
    CHECK(adamw_init(&opt, p.n, &h, &e) == 0);
    size_t nr = (size_t)c.n_layers * c.n_heads * c.dim;
    float *routers = calloc(nr, sizeof(float)), *dr = calloc(nr, sizeof(float));
    int in[B_COPY * T_COPY], tg[B_COPY * T_COPY], ein[B_COPY * T_COPY], etg[B_COPY * T_COPY];
    TrainConfig tc = {.window = T_COPY, .sinks = 0, .tau = -1, .lambda = 0, .objective = TRAIN_CE};
    uint64_t data = seed * 977 + 5, eval = 12345;
    copy_batch(ein, etg, &eval);
    r.loss0 = train_forward(&s, &w, routers, &tc, ein, etg, NULL);
    r.copy0 = copy_loss(&s, etg);
    for (int i = 0; i < steps; i++) {
        copy_batch(in, tg, &data);
        train_forward(&s, &w, routers, &tc, in, tg, NULL);
        train_backward(&s, &w, routers, dr, &g);
        adamw_step(&opt, p.mem, g.mem, lr_warmup_cosine(i, steps / 10, steps, 1e-2f, 1e-3f));
    }
    r.loss1 = train_forward(&s, &w, routers, &tc, ein, etg, NULL);
    r.copy1 = copy_loss(&s, etg);
    free(routers), free(dr);
    adamw_free(&opt), grads_free(&g), grads_free(&p), train_free(&s), model_free(&m);
    return r;
}

/* Chance on a copied symbol is log 16 = 2.77 nats; a model that looks
 * back LEN + 1 positions gets near 0. The whole loss keeps the noise half,
 * so it can fall to about half of chance, not further. */
TEST(train_scratch_learns_to_copy_deterministically) {
    CopyRun a = copy_train(7, 300);
    if (getenv("BWD_VERBOSE"))
        printf("  copy: loss %.4f -> %.4f, copied half %.4f -> %.4f\n", a.loss0, a.loss1, a.copy0, a.copy1);
    CHECK_MSG(a.loss0 > 3.0, "random weights: loss %.4f, expected near log 32", a.loss0);
    CHECK_MSG(a.loss1 < 0.6 * a.loss0, "loss %.4f after training, not below 0.6 of %.4f", a.loss1, a.loss0);
    CHECK_MSG(a.copy1 < 0.25 * log(SYMS), "copied half %.4f: not below a quarter of chance (%.4f)", a.copy1,
              0.25 * log(SYMS));
    CopyRun b = copy_train(7, 300);
    CHECK(a.loss1 == b.loss1 && a.copy1 == b.copy1); /* same seed, same floats */
}

/* The generated vocabulary: the llama2.c layout, the words as single
 * pieces through their prefixes, digits one by one, anything else by
 * byte fallback, and the text back unchanged. */
TEST(train_scratch_vocabulary_encodes_words_whole_and_digits_singly) {
    const char *words[] = {" passkey", " is", " grass", NULL};
    char path[1024]; /* test_tmp's buffer is reused by the next call */
    snprintf(path, sizeof path, "%s", test_tmp("tok_words.bin"));
    Err e;
    int n = 0;
    CHECK(train_vocab_write(path, words, 3, 0, &n, &e) == 0);
    CHECK_INT(n, train_vocab_count(words, 3));
    CHECK_INT(n, 259 + 95 + (7 + 2 + 5)); /* " p" … " passkey"; " i", " is"; " g" … " grass" */
    Tokenizer t;
    CHECK(tok_load(&t, path, 0, &e) == 0);
    CHECK_INT(t.vocab_size, n);
    int ids[64], k = 0;
    const char *text = "the passkey is 4097.";
    CHECK(tok_encode(&t, text, strlen(text), 0, 0, ids, 64, &k, &e) == 0);
    /* " t" "h" "e" — "the" has no leading space here, so the dummy prefix
     * merges with "t" only as far as the words allow: " t" is not a piece */
    int want[] = {tok_lookup(&t, " "), tok_lookup(&t, "t"), tok_lookup(&t, "h"), tok_lookup(&t, "e"),
                  tok_lookup(&t, " passkey"), tok_lookup(&t, " is"), tok_lookup(&t, " "), tok_lookup(&t, "4"),
                  tok_lookup(&t, "0"), tok_lookup(&t, "9"), tok_lookup(&t, "7"), tok_lookup(&t, ".")};
    CHECK_INT(k, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < k && i < (int)(sizeof want / sizeof want[0]); i++) CHECK_INT(ids[i], want[i]);
    char back[128] = "";
    for (int i = 0; i < k; i++) {
        size_t len;
        const char *piece = tok_decode(&t, i ? ids[i - 1] : 1, ids[i], &len);
        strncat(back, piece, len);
    }
    CHECK_MSG(strcmp(back, "the passkey is 4097.") == 0, "decoded '%s'", back);
    tok_free(&t);
    const char *bad[] = {" ok", "tab\there"};
    CHECK(train_vocab_write(test_tmp("tok_bad.bin"), bad, 2, 0, NULL, &e) != 0);
    CHECK(strstr(e.msg, "word 2") != NULL);
    CHECK(train_vocab_write(test_tmp("tok_small.bin"), words, 3, 300, NULL, &e) != 0); /* needs 368 */
    /* the same vocabulary again is a rerun; another one is never written over it */
    CHECK(train_vocab_write(path, words, 3, 0, NULL, &e) == 0);
    const char *other[] = {" grass", NULL};
    CHECK(train_vocab_write(path, other, 1, n, NULL, &e) != 0);
    CHECK(strstr(e.msg, "another tokenizer is already there") != NULL);
}

/* End to end: a few steps from scratch on a small text, the checkpoint and
 * its tok<V>.bin beside it, which generate then loads by itself. */
TEST(train_scratch_command_writes_a_model_other_commands_load) {
    const char *data = test_tmp("scratch.txt");
    FILE *f = fopen(data, "w");
    CHECK(f != NULL);
    if (!f) return;
    for (int i = 0; i < 400; i++) fprintf(f, "the key %d is %d. the grass is green. ", i % 37, (i * 7) % 10);
    fclose(f);
    char out[1024];
    snprintf(out, sizeof out, "%s", test_tmp("scratch.bin"));
    int st;
    char *o = test_runf(&st, "%s train --from-scratch --data %s --dims 32,64,2,2,2,0,64 --batch 4 --steps 12 --seed 2 "
                             "--out %s 2>&1", test_bin(), data, out);
    CHECK_INT(st, 0);
    CHECK_MSG(strstr(o, "trained from scratch, 12 steps") != NULL, "output: %s", o);
    free(o);
    int words = 0;
    while (train_vocab_default_words[words]) words++;
    char tok[1100];
    snprintf(tok, sizeof tok, "%s/tok%d.bin", test_tmpdir(), (train_vocab_count(train_vocab_default_words, words) + 63) / 64 * 64);
    FILE *t = fopen(tok, "rb");
    CHECK_MSG(t != NULL, "no generated tokenizer %s", tok);
    if (t) fclose(t);
    o = test_runf(&st, "%s generate --model %s --prompt 'the key 3 is' --steps 12 --temperature 0 2>&1", test_bin(), out);
    CHECK_INT(st, 0);
    CHECK_MSG(strstr(o, "the key 3 is") != NULL, "generate: %s", o);
    free(o);
    /* the same seed gives the same file */
    char again[1024];
    snprintf(again, sizeof again, "%s", test_tmp("scratch2.bin"));
    free(test_runf(&st, "%s train --from-scratch --data %s --dims 32,64,2,2,2,0,64 --batch 4 --steps 12 --seed 2 "
                        "--out %s 2>&1", test_bin(), data, again));
    CHECK_INT(st, 0);
    CHECK(test_same_file(out, again));
    /* --weight-decay reaches the optimiser: the same run with decay writes other weights */
    free(test_runf(&st, "%s train --from-scratch --data %s --dims 32,64,2,2,2,0,64 --batch 4 --steps 12 --seed 2 "
                        "--weight-decay 0.5 --out %s 2>&1", test_bin(), data, again));
    CHECK_INT(st, 0);
    CHECK(!test_same_file(out, again));
}

TEST(train_scratch_rejects_what_does_not_apply) {
    char data[1024], words[1024], out[1024]; /* test_tmp's buffer is reused by the next call */
    snprintf(data, sizeof data, "%s", test_tmp("scratch_bad.txt"));
    snprintf(out, sizeof out, "%s", test_tmp("bad_out.bin"));
    CHECK(test_write_file(data, "abc abc abc abc abc abc abc abc abc abc abc abc abc abc abc abc", 63) == 0);
    snprintf(words, sizeof words, "%s", test_tmp("words_bad.txt"));
    CHECK(test_write_file(words, " ok\n bad\x01word\n", 14) == 0);
    struct { const char *flags, *needle; } bad[] = {
        {"--model x.bin --data D --out O", "--model does not apply"},
        {"--window 8 --data D --out O", "--window does not apply"},
        {"--train all --data D --out O", "--train does not apply"},
        {"--out O", "needs --data"},
        {"--data D", "--out MODEL.bin is required"},
        {"--data D --out O --dims 1,2,3", "--dims: expected 7"},
        {"--data D --out O --dims 32,64,2,2,2,300,64", "more than the 300 asked for"},
        {"--data D --out O --tokenizer T --dims 32,64,2,2,2,300,64", "vocab 300, but the tokenizer has 512"},
        {"--data D --out O --dims 32,64,2,3,2,0,64", "--dims"},
        {"--data D --out O --vocab-file W", "word 2 holds control byte 0x01"},
        {"--data D --out O --vocab-file W --tokenizer T", "exclude each other"},
        {"--data D --out O --seq-len 64 --dims 32,64,2,2,2,0,64", "--seq-len 64 needs 65 positions"},
        {"--data D --out O --weight-decay 1.5", "--weight-decay"},
        {"--data D --out O --weight-decay -0.1", "--weight-decay"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char flags[512], cmd[2048];
        snprintf(flags, sizeof flags, "%s", bad[i].flags);
        /* D, O, W, T stand for the data, an output, the word list, a tokenizer */
        char expanded[1024] = "";
        for (char *p = flags; *p; p++) {
            const char *sub = NULL;
            if ((p == flags || p[-1] == ' ') && (p[1] == ' ' || !p[1])) {
                sub = *p == 'D' ? data : *p == 'O' ? out : *p == 'W' ? words
                    : *p == 'T' ? test_stories_tokenizer() : NULL;
            }
            size_t used = strlen(expanded);
            if (sub) snprintf(expanded + used, sizeof expanded - used, "%s", sub);
            else if (used + 1 < sizeof expanded) expanded[used] = *p, expanded[used + 1] = 0;
        }
        snprintf(cmd, sizeof cmd, "%s train --from-scratch %s", test_bin(), expanded);
        CHECK_REFUSAL(cmd, -1, "ahascope train: ", bad[i].needle, 1);
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s train --window 8 --dims 32,64,2,2,2,0,64 --out %s", test_bin(),
             test_tmp("x.safetensors"));
    CHECK_REFUSAL(cmd, -1, "ahascope train: ", "--dims needs --from-scratch", 1);
}

static double num(const cJSON *j, const char *key) { return cJSON_GetNumberValue(cJSON_GetObjectItem(j, key)); }

/* bench --train: its FLOP count against one worked by hand, its rate
 * consistent with its tok/s, a peak beside it; a --model runs the
 * --train all step. Shape 32,64,2,2,2,300,64 at T = 63: the products hold
 * 2·(32·(32 + 2·32) + 32·32 + 3·32·64) + 300·32 = 30 080 weights (6 FLOP
 * each), attention 2 layers · 2 heads · 16 wide · 32 keys on average
 * = 2 048 (12 FLOP each): 205 056 FLOP a token. */
TEST(train_scratch_bench_counts_its_flop_and_peak) {
    int st;
    char *out = test_runf(&st, "%s bench --train --dims 32,64,2,2,2,300,64 --batch 2 --runs 2 --json", test_bin());
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j, "bench --train --json: %d %s", st, out ? out : "");
    if (j) {
        CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "step")), "from_scratch"));
        CHECK_INT(num(j, "seq_len"), 63);
        CHECK_INT(num(j, "batch"), 2);
        CHECK_NEAR(num(j, "flops_per_token"), 205056, 0.5);
        double tok = num(j, "tok_s"), g = num(j, "gflops"), peak = num(j, "peak_gflops"), frac = num(j, "frac_of_peak");
        CHECK_MSG(tok > 0 && peak > 0 && frac > 0 && frac < 2, "tok/s %g peak %g frac %g", tok, peak, frac);
        CHECK_NEAR(g, tok * 205056 / 1e9, 1e-3 + 1e-3 * g); /* the median rate is the median tok/s times the count */
    }
    cJSON_Delete(j);
    free(out);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s bench --batch 2", test_bin());
    CHECK_REFUSAL(cmd, 2, "ahascope bench: ", "--batch and --seq-len size --train", 1);
    snprintf(cmd, sizeof cmd, "%s bench --train --gemm", test_bin());
    CHECK_REFUSAL(cmd, 2, "ahascope bench: ", "--train times training steps", 1);
    if (!test_shared_available()) return;
    out = test_runf(&st, "%s bench --train --model %s --window 8 --batch 2 --seq-len 31 --runs 1 --json", test_bin(),
                    test_stories_model());
    j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j, "bench --train --model: %d %s", st, out ? out : "");
    if (j) CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "step")), "train_all"));
    cJSON_Delete(j);
    free(out);
}

/* Task items as training data, the way the organism's recipe uses them:
 * --steps 0 writes the untrained model and its tokenizer, which `tasks`
 * writes items with; each item is one sequence, BOS + prompt + " " +
 * answer + "." (decoded back here); an item longer than --seq-len is
 * refused by number; --curve rows every 50 steps and at the end; a stop
 * leaves the model so far beside its checkpoint, and the resumed run
 * appends to the same curve under one header. */
/* The shape of the small models these tests train on task items. */
#define ITEMS_DIMS "--dims 32,64,2,2,2,0,256"

/* The untrained model of ITEMS_DIMS at init (its tokenizer beside it, in
 * the test directory), then passkey items of each length in contexts[]
 * (one to three lengths, n of each, seeds 3, 4, 5) written in its
 * vocabulary, interleaved into items. 0, or -1 after a failed check. */
static int untrained_with_items(const char *init, const char *items, const int *contexts, int n_ctx, int n) {
    int st;
    CHECK(n_ctx >= 1 && n_ctx <= 3);
    if (n_ctx < 1 || n_ctx > 3) return -1;
    char *o = test_runf(&st, "%s train --from-scratch --steps 0 %s --out %s 2>&1", test_bin(), ITEMS_DIMS, init);
    CHECK_MSG(st == 0 && strstr(o, "the untrained model (0 steps)"), "steps 0: %s", o);
    free(o);
    if (st) return -1;
    char files[4 * 1100] = ""; /* a few paths of at most 1 100 bytes */
    for (int i = 0; i < n_ctx; i++) {
        o = test_runf(&st, "%s tasks --task passkey --context %d --n %d --seed %d --model %s --out %s.%d 2>&1",
                      test_bin(), contexts[i], n, 3 + i, init, items, contexts[i]);
        CHECK_MSG(st == 0, "tasks at %d: %s", contexts[i], o);
        free(o);
        if (st) return -1;
        size_t at = strlen(files);
        snprintf(files + at, sizeof files - at, " %.1000s.%d", items, contexts[i]);
    }
    o = test_runf(&st, "paste -d '\\n' %s > %s", files, items);
    CHECK_MSG(st == 0, "paste: %s", o);
    free(o);
    return st ? -1 : 0;
}

TEST(train_scratch_learns_from_task_items_with_a_curve_and_resumes) {
    char init[1024], items[1024], model[1024], curve[1024], tok[1100];
    snprintf(init, sizeof init, "%s", test_tmp("org_init.bin"));
    snprintf(items, sizeof items, "%s", test_tmp("org_items.jsonl"));
    snprintf(model, sizeof model, "%s", test_tmp("org_model.bin"));
    snprintf(curve, sizeof curve, "%s", test_tmp("org_curve.tsv"));
    const char *dims = ITEMS_DIMS;
    int st;
    char *o;
    if (untrained_with_items(init, items, (const int[]){100}, 1, 12)) return;

    /* the sequences themselves */
    Tokenizer t;
    Err e;
    int words = 0;
    while (train_vocab_default_words[words]) words++;
    snprintf(tok, sizeof tok, "%s/tok%d.bin", test_tmpdir(), (train_vocab_count(train_vocab_default_words, words) + 63) / 64 * 64);
    int vocab = (train_vocab_count(train_vocab_default_words, words) + 63) / 64 * 64;
    if (tok_load(&t, tok, vocab, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    EvalData d;
    CHECK_INT(eval_data_items(&d, &t, items, 128, &e), 0);
    CHECK_INT(d.n, 12);
    cJSON *first = NULL;
    {
        long len;
        char *text = test_read_file(items, &len), *nl = text ? strchr(text, '\n') : NULL;
        if (nl) *nl = 0;
        first = cJSON_Parse(text ? text : "");
        free(text);
    }
    const char *prompt = cJSON_GetStringValue(cJSON_GetObjectItem(first, "prompt"));
    const char *answer = cJSON_GetStringValue(cJSON_GetObjectItem(first, "answer"));
    CHECK(prompt && answer);
    if (d.n > 0 && prompt && answer) {
        char got[4096] = "", want[4096];
        size_t g = 0;
        CHECK_INT(d.seq[0][0], 1); /* BOS */
        for (int i = 1; i < d.len[0]; i++) {
            size_t l;
            const char *p = tok_decode(&t, d.seq[0][i - 1], d.seq[0][i], &l);
            if (g + l < sizeof got) memcpy(got + g, p, l), g += l, got[g] = 0;
        }
        snprintf(want, sizeof want, "%s %s.", prompt, answer);
        CHECK_MSG(!strcmp(got, want), "item 1 reads back as\n%s\nnot\n%s", got, want);
        CHECK_MSG(d.len[0] >= 100 + 6 && d.len[0] <= 100 + 8, "item 1: %d ids (the prompt's 100, a space, five "
                  "digits and a stop)", d.len[0]);
    }
    cJSON_Delete(first);
    eval_data_free(&d);
    CHECK_INT(eval_data_items(&d, &t, items, 64, &e), -1);
    CHECK_MSG(strstr(e.msg, "item 1 encodes to") != NULL, "too long an item: %s", e.msg);
    eval_data_free(&d);
    tok_free(&t);

    /* training on them, stopped and resumed, with its curve */
    o = test_runf(&st, "%s train --from-scratch --data %s %s --seq-len 127 --batch 2 --steps 60 --stop-after 50 "
                       "--curve %s --out %s 2>&1", test_bin(), items, dims, curve, model);
    CHECK_MSG(st == 130 && strstr(o, "the model so far"), "stop: exit %d, %s", st, o);
    free(o);
    FILE *f = fopen(model, "rb");
    CHECK_MSG(f != NULL, "no model written at the stop: %s", model);
    if (f) fclose(f);
    o = test_runf(&st, "%s train --from-scratch --data %s %s --seq-len 127 --batch 2 --steps 60 --resume %s.ckpt "
                       "--curve %s --out %s 2>&1", test_bin(), items, dims, model, curve, model);
    CHECK_MSG(st == 0 && strstr(o, "trained from scratch, 60 steps"), "resume: exit %d, %s", st, o);
    free(o);
    long len;
    char *c = test_read_file(curve, &len);
    int step[4] = {0}, T[4] = {0}, B[4] = {0}, rows = 0;
    double loss[4] = {0};
    const char *p = c ? strchr(c, '\n') : NULL;
    CHECK_MSG(c && !strncmp(c, "step\tseq_len\tbatch\tloss\n", 24), "curve header: %s", c ? c : "(none)");
    while (p && rows < 4 && sscanf(p + 1, "%d %d %d %lf", &step[rows], &T[rows], &B[rows], &loss[rows]) == 4)
        rows++, p = strchr(p + 1, '\n');
    CHECK_INT(rows, 2);
    CHECK_INT(step[0], 50);
    CHECK_INT(step[1], 60);
    CHECK_INT(T[0], 127);
    CHECK_INT(B[1], 2);
    CHECK_MSG(loss[1] > 0 && loss[1] < loss[0] + 1 && loss[0] < log(vocab), "curve losses %g then %g", loss[0],
              loss[1]);
    CHECK_MSG(c && !strstr(strchr(c, '\n'), "step\t"), "a second header in the resumed curve");
    free(c);
}

/* `--by-length`'s draw: a step's items lie within a run of 16 batches'
 * worth of neighbours in length order, the same step gives the same items,
 * and over many steps every item is drawn about equally often (the runs
 * wrap past the longest item, so the shortest and longest are not
 * starved). */
TEST(train_by_length_draws_neighbours_and_every_item_alike) {
    enum { N = 1000, B = 4, STEPS = 20000 };
    int len[N], rank[N], items[B], again[B];
    static int drawn[N];
    for (int i = 0; i < N; i++) len[i] = 50 + (i * 7919) % N; /* lengths 50..1049, each once, not in file order */
    LengthOrder o;
    Err e;
    CHECK_INT(length_order_init(&o, len, N, B, 5, &e), 0);
    CHECK_INT(o.run, 16 * B);
    for (int r = 0; r < N; r++) rank[o.order[r]] = r;
    for (int r = 1; r < N; r++) CHECK(len[o.order[r - 1]] <= len[o.order[r]]);
    int spread_ok = 1, same = 1;
    for (long s = 0; s < STEPS; s++) {
        length_order_pick(&o, 5, s, B, items);
        length_order_pick(&o, 5, s, B, again);
        same &= !memcmp(items, again, sizeof items);
        int lo = rank[items[0]];
        for (int b = 0; b < B; b++) {
            drawn[items[b]]++;
            int d = (rank[items[b]] - lo + N) % N, back = (lo - rank[items[b]] + N) % N;
            spread_ok &= (d < back ? d : back) < o.run; /* within a run, across the wrap too */
        }
    }
    CHECK(same);
    CHECK(spread_ok);
    int lo = STEPS, hi = 0;
    for (int i = 0; i < N; i++) lo = drawn[i] < lo ? drawn[i] : lo, hi = drawn[i] > hi ? drawn[i] : hi;
    /* 80 draws an item on average: a binomial's 1-in-a-million tails are about 40 and 130 */
    CHECK_MSG(lo >= 40 && hi <= 130, "draws per item from %d to %d (80 expected)", lo, hi);
    CHECK_MSG(drawn[o.order[0]] > 0 && drawn[o.order[N - 1]] > 0, "shortest %d, longest %d draws",
              drawn[o.order[0]], drawn[o.order[N - 1]]);
    length_order_free(&o);
}

/* The held-out cross-entropy train prints at the end. */
static double held_ce(const char *out) {
    const char *p = out ? strstr(out, "held-out ce ") : NULL;
    return p ? atof(p + strlen("held-out ce ")) : NAN;
}

/* `train --from-scratch --by-length` on items of two lengths: an unbroken
 * run and one stopped and resumed write the same bytes; with a learning
 * rate too small to move a weight, its held-out score (padding cut) is the
 * one the padded run prints; and it is refused where padding counts (the
 * KL objective). */
TEST(train_by_length_resumes_exactly_and_scores_as_padded) {
    char init[1024], items[1024], a[1024], b[1024];
    snprintf(init, sizeof init, "%s", test_tmp("bl_init.bin"));
    snprintf(items, sizeof items, "%s", test_tmp("bl_items.jsonl"));
    snprintf(a, sizeof a, "%s", test_tmp("bl_a.bin"));
    snprintf(b, sizeof b, "%s", test_tmp("bl_b.bin"));
    const char *dims = ITEMS_DIMS;
    int st;
    char *o;
    if (untrained_with_items(init, items, (const int[]){80, 120}, 2, 16)) return;
    const char *common = "--seq-len 127 --batch 2 --steps 30 --by-length";
    o = test_runf(&st, "%s train --from-scratch --data %s %s %s --out %s 2>&1", test_bin(), items, dims, common, a);
    CHECK_MSG(st == 0 && strstr(o, "trained from scratch, 30 steps"), "unbroken: exit %d, %s", st, o);
    free(o);
    o = test_runf(&st, "%s train --from-scratch --data %s %s %s --stop-after 17 --out %s 2>&1 && exit 1; "
                       "%s train --from-scratch --data %s %s %s --resume %s.ckpt --out %s 2>&1",
                  test_bin(), items, dims, common, b, test_bin(), items, dims, common, b, b);
    CHECK_MSG(st == 0, "stopped and resumed: exit %d, %s", st, o);
    free(o);
    long na, nb;
    char *ma = test_read_file(a, &na), *mb = test_read_file(b, &nb);
    CHECK_MSG(ma && mb && na == nb && !memcmp(ma, mb, (size_t)na), "resumed model differs (%ld and %ld bytes)", na, nb);
    free(ma), free(mb);

    double ce[2];
    for (int k = 0; k < 2; k++) {
        o = test_runf(&st, "%s train --from-scratch --data %s %s --seq-len 127 --batch 2 --steps 1 --lr 1e-9 %s "
                           "--out %s 2>&1", test_bin(), items, dims, k ? "--by-length" : "", a);
        ce[k] = held_ce(o);
        CHECK_MSG(st == 0 && isfinite(ce[k]), "%s: exit %d, %s", k ? "by length" : "padded", st, o);
        free(o);
    }
    CHECK_MSG(fabs(ce[0] - ce[1]) <= 1e-4 * ce[0], "held-out ce padded %.6f, by length %.6f", ce[0], ce[1]);

    o = test_runf(&st, "%s train --window 8 --data %s --by-length --out %s.safetensors 2>&1", test_bin(), items, a);
    CHECK_MSG(st != 0 && strstr(o, "--by-length needs --objective ce and --lambda 0"), "kl: exit %d, %s", st, o);
    free(o);
}
