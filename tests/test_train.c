/* test_train.c — `ahascope train` end to end on stories260K.
 *
 * `ahascope train` end to end on stories260K: λ moves the
 * global share the right way, runs are deterministic, a resumed run ends
 * where an uninterrupted one does, the output loads, bad input fails; and
 * --train all (full fine-tuning) on a tiny random model. */
#include <stdlib.h>
#include <string.h>

#include "engine/forward.h"
#include "engine/routers.h"
#include "engine/safetensors.h"
#include "test.h"

/* Train tiny routers; returns the exit status. */
static int train(const char *out, const char *flags) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s train --model %s --window 8 --self 8 --seq-len 32 --batch 4 --out %s %s 2>/dev/null",
             test_bin(), test_stories_model(), out, flags);
    int st;
    free(test_run(cmd, &st));
    return st;
}

static double meta(const char *path, const char *key) {
    StFile f;
    Err e;
    if (st_open(&f, path, &e)) return -1;
    const char *v = st_meta(&f, key);
    double x = v ? atof(v) : -1;
    st_close(&f);
    return x;
}

TEST(train_lambda_moves_the_global_share) {
    SKIP_UNLESS_SHARED();
    char free_r[1024], taxed[1024];
    snprintf(free_r, sizeof free_r, "%s", test_tmp("lambda0.safetensors"));
    snprintf(taxed, sizeof taxed, "%s", test_tmp("lambda5.safetensors"));
    CHECK_INT(train(free_r, "--lambda 0 --lr 0.2 --steps 40"), 0);
    CHECK_INT(train(taxed, "--lambda 5 --lr 0.2 --steps 40"), 0);
    double g0 = meta(free_r, "heldout_global_share"), g5 = meta(taxed, "heldout_global_share");
    double l0 = meta(free_r, "heldout_task_loss"), l5 = meta(taxed, "heldout_task_loss");
    /* free routers go global where it lowers the KL; a heavy tax sends them local */
    CHECK_MSG(g0 > 0.6, "lambda 0: global share %.3f", g0);
    CHECK_MSG(g5 < 0.05, "lambda 5: global share %.3f", g5);
    CHECK_MSG(l0 < l5, "lambda 0 KL %.5f should be below lambda 5 KL %.5f", l0, l5);
    CHECK_NEAR(meta(free_r, "window"), 8, 0);
    CHECK_NEAR(meta(free_r, "steps"), 40, 0);
}

TEST(train_is_deterministic_and_resumes_exactly) {
    SKIP_UNLESS_SHARED();
    char a[1024], b[1024], c[1024], ck[1100];
    snprintf(a, sizeof a, "%s", test_tmp("det_a.safetensors"));
    snprintf(b, sizeof b, "%s", test_tmp("det_b.safetensors"));
    snprintf(c, sizeof c, "%s", test_tmp("det_c.safetensors"));
    CHECK_INT(train(a, "--steps 20 --seed 3"), 0);
    CHECK_INT(train(b, "--steps 20 --seed 3"), 0);
    CHECK_INT(train(c, "--steps 20 --seed 3 --stop-after 9"), 130);
    snprintf(ck, sizeof ck, "%s.ckpt", c);
    char flags[1200];
    snprintf(flags, sizeof flags, "--steps 20 --seed 3 --resume %s", ck);
    CHECK_INT(train(c, flags), 0);
    long na, nb, nc;
    char *fa = test_read_file(a, &na), *fb = test_read_file(b, &nb), *fc = test_read_file(c, &nc);
    CHECK(fa && fb && na == nb && memcmp(fa, fb, na) == 0);
    CHECK_MSG(fc && na == nc && memcmp(fa, fc, na) == 0, "resumed run differs from the uninterrupted one");
    free(fa), free(fb), free(fc);
    Routers r;
    Err e;
    CHECK_MSG(router_load(&r, a, 5, 8, 64, &e) == 0, "%s", e.msg);
    router_free(&r);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s generate --model %s --policy aha --routers %s --steps 20 --prompt Once --ids", test_bin(),
             test_stories_model(), a);
    int st;
    free(test_run(cmd, &st));
    CHECK_INT(st, 0);
}

TEST(train_rejects_bad_input) {
    SKIP_UNLESS_SHARED();
    char empty[1024];
    snprintf(empty, sizeof empty, "%s", test_tmp("train_empty.txt"));
    test_write_file(empty, "", 0);
    /* usage errors exit 2, what the model or the data refuse exits 1 */
    const struct { const char *flags, *needle; int status; } bad[] = {
        {"--train some", "routers or all", 2}, {"--objective mse", "kl or ce", 2},
        {"--seq-len 600", "context", 1},       {"--lr 0", "--lr", 2},
        {"--data EMPTY", "empty data file", 1}, {"--bogus", "unknown flag", 2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char flags[1100], cmd[4096];
        snprintf(flags, sizeof flags, "%s", bad[i].flags);
        char *at = strstr(flags, "EMPTY");
        if (at) snprintf(at, sizeof flags - (at - flags), "%s", empty);
        snprintf(cmd, sizeof cmd, "%s train --model %s --window 8 --out %s %s", test_bin(),
                 test_stories_model(), test_tmp("x.safetensors"), flags);
        CHECK_REFUSAL(cmd, bad[i].status, "ahascope train: ", bad[i].needle, 0);
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s train --model %s --out x", test_bin(), test_stories_model());
    int st;
    char *out = test_run(cmd, &st);
    CHECK(st == 2 && strstr(out, "--window"));
    free(out);
}

/* ---- --train all on a tiny random model ---- */

/* A tiny random model (GQA, untied classifier) saved as a v1 ("ak42")
 * checkpoint in the scratch directory; its vocabulary is tok512's. */
static const char *tiny_model(void) {
    static char path[1024];
    if (path[0]) return path;
    Config c = {.dim = 32, .hidden_dim = 64, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 512,
                .seq_len = 64, .shared_classifier = 0};
    Model m;
    Err e;
    snprintf(path, sizeof path, "%s", test_tmp("tiny_v1.bin"));
    if (model_random(&m, &c, 5, &e) || model_save(&m, path, 1, &e)) test_fail(__FILE__, __LINE__, "%s", e.msg);
    model_free(&m);
    return path;
}

/* Train on the tiny model with λ = 0, so the loss is the KL alone. Returns
 * the exit status. */
static int train_tiny(const char *out, const char *flags) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s train --model %s --tokenizer %s --window 4 --self 8 --seq-len 32 --batch 4 --steps 20 --lambda 0 "
             "--lr 0.2 --out %s %s 2>/dev/null",
             test_bin(), tiny_model(), test_stories_tokenizer(), out, flags);
    int st;
    free(test_run(cmd, &st));
    return st;
}

static char *meta_str(const char *path, const char *key) {
    StFile f;
    Err e;
    if (st_open(&f, path, &e)) return NULL;
    const char *v = st_meta(&f, key);
    char *x = v ? strdup(v) : NULL;
    st_close(&f);
    return x;
}

/* The task loss on training sequences after equal steps: nothing learnt
 * (lr 1e-9), routers only, routers and weights. */
TEST(train_all_lowers_the_training_loss_below_routers_only) {
    SKIP_UNLESS_SHARED();
    char n[1024], r[1024], a[1024], am[1024];
    snprintf(n, sizeof n, "%s", test_tmp("tiny_none.safetensors"));
    snprintf(r, sizeof r, "%s", test_tmp("tiny_routers.safetensors"));
    snprintf(a, sizeof a, "%s", test_tmp("tiny_all.safetensors"));
    snprintf(am, sizeof am, "%s", test_tmp("tiny_all.bin"));
    CHECK_INT(train_tiny(n, "--lr 1e-9 --train all --lr-model 1e-9"), 0);
    CHECK_INT(train_tiny(r, ""), 0);
    CHECK_INT(train_tiny(a, "--train all --lr-model 1e-3"), 0);
    double l0 = meta(n, "train_task_loss"), lr_ = meta(r, "train_task_loss"), la = meta(a, "train_task_loss");
    CHECK_MSG(lr_ > 0 && lr_ < l0, "routers-only KL %.6f should be below the untrained %.6f", lr_, l0);
    /* measured 0.00195 against 0.00331: the weights take another ~40% off */
    CHECK_MSG(la > 0 && la < 0.8 * lr_, "--train all KL %.6f should be well below routers-only %.6f", la, lr_);
    char *mode = meta_str(a, "train"), *model = meta_str(a, "model");
    CHECK_MSG(mode && !strcmp(mode, "all"), "train = %s", mode ? mode : "(none)");
    CHECK_MSG(model && !strcmp(model, am), "model = %s, expected the default %s", model ? model : "(none)", am);
    free(mode), free(model);
    char *rm = meta_str(r, "model");
    CHECK_MSG(!rm, "routers-only output names a model (%s)", rm);
    free(rm);
}

/* Logits of the tokens under full attention (n rows of vocab). */
static float *full_logits(const Model *m, const int *tokens, int n) {
    RunState rs;
    Err e;
    float *lg = malloc((size_t)n * m->c.vocab_size * sizeof(float));
    AttnConfig a = aha_defaults();
    if (fwd_init(&rs, &m->c, n, 1, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return lg; }
    fwd_forward(m, &rs, &a, tokens, n, 0, lg, NULL);
    fwd_free(&rs);
    return lg;
}

TEST(train_all_writes_a_loadable_checkpoint_with_new_logits) {
    SKIP_UNLESS_SHARED();
    char out[1024], mp[1024], flags[1200];
    snprintf(out, sizeof out, "%s", test_tmp("tiny_ck.safetensors"));
    snprintf(mp, sizeof mp, "%s", test_tmp("tiny_tuned.bin"));
    snprintf(flags, sizeof flags, "--train all --lr-model 1e-3 --out-model %s", mp);
    CHECK_INT(train_tiny(out, flags), 0);
    Model base, tuned;
    Err e;
    CHECK_MSG(model_load(&base, tiny_model(), &e) == 0, "%s", e.msg);
    if (model_load(&tuned, mp, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); model_free(&base); return; }
    CHECK_INT(tuned.version, 1); /* the input's version */
    CHECK(memcmp(&base.c, &tuned.c, sizeof base.c) == 0);
    int tokens[6] = {1, 40, 7, 300, 41, 12};
    float *lb = full_logits(&base, tokens, 6), *lt = full_logits(&tuned, tokens, 6);
    double maxd = 0;
    int finite = 1;
    for (int i = 0; i < 6 * base.c.vocab_size; i++) {
        finite &= isfinite(lt[i]);
        maxd = fabs(lb[i] - lt[i]) > maxd ? fabs(lb[i] - lt[i]) : maxd;
    }
    CHECK(finite);
    CHECK_MSG(maxd > 1e-3, "fine-tuned logits differ from the original by only %g", maxd);
    free(lb), free(lt);
    model_free(&base), model_free(&tuned);
    Routers r;
    CHECK_MSG(router_load(&r, out, 2, 4, 32, &e) == 0, "%s", e.msg);
    router_free(&r);
}

TEST(train_all_is_deterministic_and_resumes_exactly) {
    SKIP_UNLESS_SHARED();
    char a[1024], b[1024], c[1024], ck[1100], flags[1300];
    snprintf(a, sizeof a, "%s", test_tmp("tdet_a.safetensors"));
    snprintf(b, sizeof b, "%s", test_tmp("tdet_b.safetensors"));
    snprintf(c, sizeof c, "%s", test_tmp("tdet_c.safetensors"));
    snprintf(ck, sizeof ck, "%s.ckpt", c);
    CHECK_INT(train_tiny(a, "--train all --seed 4"), 0);
    CHECK_INT(train_tiny(b, "--train all --seed 4"), 0);
    CHECK_INT(train_tiny(c, "--train all --seed 4 --stop-after 7"), 130);
    /* the checkpoint carries the tuned weights and their moments */
    StFile f;
    Err e;
    CHECK_MSG(st_open(&f, ck, &e) == 0, "%s", e.msg);
    CHECK(st_find(&f, "weights") && st_find(&f, "weights.adam.m") && st_find(&f, "weights.adam.v"));
    st_close(&f);
    snprintf(flags, sizeof flags, "--train all --seed 4 --resume %s", ck);
    CHECK_INT(train_tiny(c, flags), 0);
    char ma[1024], mb[1024], mc[1024];
    snprintf(ma, sizeof ma, "%s", test_tmp("tdet_a.bin"));
    snprintf(mb, sizeof mb, "%s", test_tmp("tdet_b.bin"));
    snprintf(mc, sizeof mc, "%s", test_tmp("tdet_c.bin"));
    CHECK_MSG(test_same_file(ma, mb), "two --train all runs wrote different models");
    CHECK_MSG(test_same_file(ma, mc), "the resumed --train all run wrote a different model");
    /* the router files differ only in the "model" path they name */
    Routers ra, rc;
    CHECK(router_load(&ra, a, 2, 4, 32, &e) == 0 && router_load(&rc, c, 2, 4, 32, &e) == 0);
    CHECK(ra.w && rc.w && memcmp(ra.w, rc.w, 2 * 4 * 32 * sizeof(float)) == 0);
    router_free(&ra), router_free(&rc);
    CHECK_NEAR(meta(a, "train_task_loss"), meta(c, "train_task_loss"), 0);
    CHECK_NEAR(meta(a, "heldout_task_loss"), meta(c, "heldout_task_loss"), 0);
}

TEST(train_all_rejects_bad_combinations) {
    SKIP_UNLESS_SHARED();
    char rck[1024], ack[1024];
    snprintf(rck, sizeof rck, "%s", test_tmp("tbad_r.safetensors"));
    snprintf(ack, sizeof ack, "%s", test_tmp("tbad_a.safetensors"));
    CHECK_INT(train_tiny(rck, "--stop-after 2"), 130);
    CHECK_INT(train_tiny(ack, "--train all --stop-after 2"), 130);
    char bad[7][1200];
    const char *want[7] = {"need --train all", "need --train all", "resume it with --train routers",
                           "resume it with --train all", "overwrite the input model", "same file",
                           "need --train all"};
    const int status[7] = {2, 2, 1, 1, 1, 2, 2}; /* flags that conflict are usage errors; files refuse with 1 */
    snprintf(bad[0], sizeof bad[0], "--out-model %s", test_tmp("x.bin"));
    snprintf(bad[1], sizeof bad[1], "--lr-model 1e-3");
    snprintf(bad[2], sizeof bad[2], "--train all --resume %s.ckpt", rck);
    snprintf(bad[3], sizeof bad[3], "--resume %s.ckpt", ack);
    snprintf(bad[4], sizeof bad[4], "--train all --out-model %s", tiny_model());
    snprintf(bad[5], sizeof bad[5], "--train all --out-model %s", test_tmp("tbad_o.safetensors"));
    snprintf(bad[6], sizeof bad[6], "--weight-decay 0.1");
    for (int i = 0; i < 7; i++) {
        char cmd[12000];
        snprintf(cmd, sizeof cmd, "%s train --model %s --tokenizer %s --window 4 --self 8 --seq-len 32 --batch 4 "
                 "--steps 20 --out %s %s", test_bin(), tiny_model(), test_stories_tokenizer(),
                 test_tmp("tbad_o.safetensors"), bad[i]);
        CHECK_REFUSAL(cmd, status[i], NULL, want[i], 1);
    }
}

/* An F32 GGUF llama trains as its llama2.c checkpoint does: ggml's
 * stories260K.gguf (the same weights, an untied copy of the classifier)
 * rebuilt in llama2.c's layout (model_to_llama2c) gives router tensors
 * equal to those trained on stories260K.bin, same seed; a quantised GGUF is
 * refused in one line, naming the file and why. */
TEST(train_on_an_f32_gguf_equals_the_checkpoint) {
    SKIP_UNLESS_SHARED();
    char a[1024], g[1024], cmd[4096];
    snprintf(a, sizeof a, "%s", test_tmp("bin.safetensors"));
    snprintf(g, sizeof g, "%s", test_tmp("gguf.safetensors"));
    CHECK_INT(train(a, "--steps 6 --seed 5"), 0);
    snprintf(cmd, sizeof cmd, "%s train --model %s --tokenizer %s --window 8 --self 8 --seq-len 32 --batch 4 --out %s "
             "--steps 6 --seed 5 2>&1", test_bin(), test_shared("models/stories260K/stories260K.gguf"),
             test_stories_tokenizer(), g);
    int st;
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0, "train on the gguf: %s", out ? out : "");
    free(out);
    StFile fa, fg;
    Err e;
    if (st || st_open(&fa, a, &e)) return;
    if (st_open(&fg, g, &e)) { st_close(&fa); CHECK_MSG(0, "%s", e.msg); return; }
    CHECK_INT(st_count(&fg), st_count(&fa));
    int differ = 0;
    for (int i = 0; i < st_count(&fa) && i < st_count(&fg); i++) {
        const StTensor *x = st_tensor(&fa, i), *y = st_find(&fg, st_tensor(&fa, i)->name);
        differ += !y || x->nbytes != y->nbytes || memcmp(x->data, y->data, x->nbytes);
    }
    CHECK_MSG(differ == 0, "%d router tensors differ between the .bin and the .gguf", differ);
    st_close(&fa), st_close(&fg);
    /* a quantised file: q4_0 of a random llama whose rows are whole blocks */
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", test_tmp("trainq"));
    snprintf(cmd, sizeof cmd, "mkdir -p %s && cd %s && %s bench --dims 64,128,2,4,2,512,64 --save-hf m >/dev/null && "
             "%s convert --to gguf --model m --out q.gguf --type q4_0 --tokenizer %s >/dev/null && "
             "%s train --model q.gguf --window 8 --self 8 --seq-len 32 --batch 4 --out r.safetensors --steps 2 2>&1",
             dir, dir, test_bin_abs(), test_bin_abs(), test_stories_tokenizer(), test_bin_abs());
    out = test_run(cmd, &st);
    CHECK_MSG(st == 1 && out && strstr(out, "q.gguf: cannot be held as a llama2.c checkpoint: its matrices are not all f32") &&
                  !strchr(strchr(out, '\n') ? strchr(out, '\n') + 1 : "", '\n'),
              "quantised: exit %d: %s", st, out ? out : "");
    free(out);
}
