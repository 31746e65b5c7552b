/* test_train.c — `ahascope train` end to end on stories260K: λ moves the
 * global share the right way, runs are deterministic, a resumed run ends
 * where an uninterrupted one does, the output loads, bad input fails. */
#include <stdlib.h>
#include <string.h>

#include "engine/routers.h"
#include "engine/safetensors.h"
#include "test.h"

static const char *bin(void) {
    const char *b = getenv("AHASCOPE_BIN");
    return b ? b : "./ahascope";
}

/* Train tiny routers; returns the exit status. */
static int train(const char *out, const char *flags) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s train --model %s --window 8 --self 8 --seq-len 32 --batch 4 --out %s %s 2>/dev/null",
             bin(), test_shared("models/stories260K/stories260K.bin"), out, flags);
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
    snprintf(cmd, sizeof cmd, "%s generate --model %s --policy aha --routers %s --steps 20 --prompt Once --ids", bin(),
             test_shared("models/stories260K/stories260K.bin"), a);
    int st;
    free(test_run(cmd, &st));
    CHECK_INT(st, 0);
}

TEST(train_rejects_bad_input) {
    SKIP_UNLESS_SHARED();
    char empty[1024];
    snprintf(empty, sizeof empty, "%s", test_tmp("train_empty.txt"));
    test_write_file(empty, "", 0);
    const char *bad[][2] = {{"--train all", "not available"},   {"--objective mse", "kl or ce"},
                            {"--seq-len 600", "context"},        {"--lr 0", "--lr"},
                            {"--data EMPTY", "empty data file"}, {"--bogus", "unknown flag"}};
    for (int i = 0; i < 6; i++) {
        char flags[1100], cmd[4096];
        snprintf(flags, sizeof flags, "%s", bad[i][0]);
        char *at = strstr(flags, "EMPTY");
        if (at) snprintf(at, sizeof flags - (at - flags), "%s", empty);
        snprintf(cmd, sizeof cmd, "%s train --model %s --window 8 --out %s %s", bin(),
                 test_shared("models/stories260K/stories260K.bin"), test_tmp("x.safetensors"), flags);
        int st;
        char *out = test_run(cmd, &st);
        CHECK_MSG(st == 1 && strstr(out, bad[i][1]), "%s -> %d %s", flags, st, out);
        free(out);
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s train --model %s --out x", bin(), test_shared("models/stories260K/stories260K.bin"));
    int st;
    char *out = test_run(cmd, &st);
    CHECK(st == 1 && strstr(out, "--window"));
    free(out);
}
