/* test_sampler.c — sampling: a resumed sequence draws on; logits that are no distribution stop the run.
 *
 * The sampler and the session's use of it: a resumed
 * sequence draws where the first left off; logits that are no distribution
 * (NaN, Inf, a temperature too small) stop a run with a clear error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/run_info.h"
#include "engine/sampler.h"
#include "engine/session.h"
#include "test.h"
#include "stories.h"

/* Sample a sequence from a prompt, then resume a second session from its
 * first 20 tokens (prompt + 15 generated): the rest must come out the same,
 * as it does for a TUI run re-evaluated midway and for `record`. */
TEST(session_resume_draws_where_sampling_left_off) {
    SKIP_UNLESS_SHARED();
    Model m;
    Tokenizer tok;
    Err e;
    CHECK_MSG(test_load_stories(&m, &tok, &e) == 0, "%s", e.msg);
    AttnConfig a = aha_defaults();
    Session s1, s2;
    CHECK(session_init(&s1, &m, &tok, &a, 60, 1.0f, 0.9f, 12, 1, &e) == 0);
    CHECK(session_start_text(&s1, "Once upon a time", 16, &e) == 0);
    int n_prompt = s1.n_prompt;
    while (session_step(&s1, NULL)) {}
    CHECK(s1.n_ids > 40);
    CHECK(session_init(&s2, &m, &tok, &a, 60, 1.0f, 0.9f, 12, 1, &e) == 0);
    CHECK(session_resume_ids(&s2, s1.ids, 20, n_prompt, &e) == 0);
    while (session_step(&s2, NULL)) {}
    CHECK_INT(s2.n_ids, s1.n_ids);
    int first = -1;
    for (int i = 0; i < s1.n_ids && first < 0; i++)
        if (s1.ids[i] != s2.ids[i]) first = i;
    CHECK_MSG(first < 0, "resumed sequence differs from position %d", first);
    session_free(&s1), session_free(&s2);
    tok_free(&tok);
    model_free(&m);
}

static Sampler make(int V, float temperature, float topp) {
    Sampler s;
    CHECK(sampler_init(&s, V, temperature, topp, 7) == 0);
    return s;
}

/* NaN, +Inf or nothing above -Inf is no distribution: refused, whatever the
 * temperature and top-p, and nothing is drawn. A -Inf logit alone is just
 * probability 0. */
TEST(sampler_refuses_nonfinite_logits) {
    const float T[] = {0, 1, 1}, P[] = {0.9f, 0.9f, 1};
    for (int k = 0; k < 3; k++) {
        Sampler s = make(8, T[k], P[k]);
        uint64_t state = s.state;
        float l[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        l[3] = NAN;
        CHECK_INT(sampler_sample(&s, l), SAMPLER_NONFINITE);
        l[3] = INFINITY;
        CHECK_INT(sampler_sample(&s, l), SAMPLER_NONFINITE);
        for (int i = 0; i < 8; i++) l[i] = -INFINITY;
        CHECK_INT(sampler_sample(&s, l), SAMPLER_NONFINITE);
        CHECK(s.state == state);
        l[2] = 0, l[5] = 0.5f; /* only these two can come out */
        for (int i = 0; i < 50; i++) {
            int t = sampler_sample(&s, l);
            CHECK_MSG(t == 2 || t == 5, "sampled %d with temperature %g, top-p %g", t, T[k], P[k]);
        }
        sampler_free(&s);
    }
}

/* A temperature so small that logit / T overflows is said as such. */
TEST(sampler_tiny_temperature_overflows) {
    const float P[] = {0.9f, 1};
    for (int k = 0; k < 2; k++) {
        Sampler s = make(8, 1e-38f, P[k]);
        uint64_t state = s.state;
        float l[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        CHECK_INT(sampler_sample(&s, l), SAMPLER_OVERFLOW);
        CHECK(s.state == state);
        sampler_free(&s);
    }
    Sampler s = make(8, 1e-3f, 0.9f); /* small but fine: the largest logit wins */
    float l[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK_INT(sampler_sample(&s, l), 7);
    sampler_free(&s);
}

/* Top-p never reads before its candidate list: with one token the cutoff
 * (1 - p) / (V - 1) is infinite and no token passes it. */
TEST(sampler_topp_one_token_vocabulary) {
    Sampler s = make(1, 1, 0.9f);
    float l[1] = {0.25f};
    for (int i = 0; i < 5; i++) CHECK_INT(sampler_sample(&s, l), 0);
    sampler_free(&s);
}

/* Logits that cannot be sampled stop the session short, appending nothing,
 * and the app's message names the position and the likely cause. */
TEST(session_stops_on_nonfinite_logits) {
    SKIP_UNLESS_SHARED();
    Model m;
    Tokenizer tok;
    Err e;
    CHECK_MSG(test_load_stories(&m, &tok, &e) == 0, "%s", e.msg);
    AttnConfig a = aha_defaults();
    Session s;
    CHECK(session_init(&s, &m, &tok, &a, 40, 1.0f, 0.9f, 3, 1, &e) == 0);
    CHECK(session_start_text(&s, "Once upon a time", 16, &e) == 0);
    CHECK(session_step(&s, NULL) == 1); /* prompt (5 tokens) and one sampled */
    CHECK_INT(s.n_ids, 6);
    CHECK_INT(app_session_error(&s, &e), 0);
    s.prev_logits[17] = NAN;
    CHECK_INT(session_step(&s, NULL), 0);
    CHECK_INT(s.failed, SAMPLER_NONFINITE);
    CHECK_INT(s.n_ids, 6);
    CHECK_INT(session_step(&s, NULL), 0); /* and stays stopped */
    CHECK(app_session_error(&s, &e) == -1 && strstr(e.msg, "position 6: the logits are not finite"));
    m.c.kv_dtype = DT_F16; /* a half cache is the likely culprit, and the way out is named */
    CHECK(app_session_error(&s, &e) == -1 && strstr(e.msg, "f16 KV cache") && strstr(e.msg, "--kv-dtype f32"));
    session_free(&s);
    tok_free(&tok);
    model_free(&m);
}

/* End to end: the run stops at once, exit 1 with one line naming the
 * position and the temperature, recorded as failed with no sampled token. */
TEST(record_tiny_temperature_fails_cleanly) {
    SKIP_UNLESS_SHARED();
    const char *bin = getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope";
    const char *db = test_tmp("tiny.db");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s record --db %s --model %s --temperature 1e-38 --steps 20 2>&1 >/dev/null", bin, db,
             test_stories_model());
    int st;
    char *out = test_run(cmd, &st);
    CHECK_INT(st, 1);
    CHECK_MSG(!strcmp(out, "ahascope record: position 1: --temperature 1e-38 is too small: the logits divided by it "
                           "overflow (0 is greedy)\n"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s query --db %s --csv \"SELECT status, n_tokens, (SELECT COUNT(*) FROM tokens WHERE "
                              "is_prompt = 0) FROM runs\"", bin, db);
    out = test_run(cmd, &st);
    CHECK_MSG(strstr(out, "\nfailed,1,0"), "%s", out);
    free(out);
}
