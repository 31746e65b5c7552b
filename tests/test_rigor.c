/* test_rigor.c — findings that hold beyond one item set (issue 51 §6–7).
 *
 * Three tool fixes: eval's task rows give θ and τ at full precision (a
 * rerun at the printed value lands on the same share exactly); --share
 * says how near it landed; the router decides in log-odds, so a logit
 * between two float32 neighbours of τ is decided by the logit and not by
 * where its float32 sigmoid rounds. Then the method: thresholds chosen on
 * --calibrate-items apart from the scored sets, several sets pooled, the
 * interval over resampled choices (recounted by tests/choice_ref.py); and
 * train --answer-weight on the router objective. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/decide.h"
#include "engine/forward.h"
#include "engine/safetensors.h"
#include "engine/train_backward.h"
#include "stories.h"
#include "test.h"

/* τ = 1 - 1.6e-5 as float32 and a logit just above logit(τ) whose float32
 * sigmoid rounds to τ itself or below (the old rule's wrong answer): 0, or
 * -1 when no such logit sits within 64 float steps (the premise failed). */
static int logit_past_tau(float *tau, float *logit) {
    *tau = 1.0f - 1.6e-5f;
    double at = log((double)*tau) - log1p(-(double)*tau);
    float l = (float)at;
    while ((double)l <= at) l = nextafterf(l, INFINITY);
    for (int i = 0; i < 64; i++, l = nextafterf(l, INFINITY))
        if (1.0f / (1.0f + expf(-l)) <= *tau) { *logit = l; return 0; }
    return -1;
}

/* The executed rule at τ = 1 - 1.6e-5 on a logit the float32 sigmoid
 * cannot tell from τ: global, as σ(logit) > τ holds in exact arithmetic.
 * Held three ways: the rule itself, the trainer's router forward, and the
 * forward pass's gate on stories260K with zero router vectors and the
 * logit as every head's bias. */
TEST(rigor_router_decides_in_log_odds_near_tau_one) {
    float tau, logit;
    CHECK_MSG(logit_past_tau(&tau, &logit) == 0, "no logit above logit(tau) rounds its float32 sigmoid to tau");
    if (test_skipped() || logit_past_tau(&tau, &logit)) return;
    CHECK_INT(decide_router_logit(logit, tau), 1);
    CHECK_INT(decide_router_logit(nextafterf(logit, -INFINITY) - 0.01f, tau), 0);
    float xn = 1, r = 0;
    uint8_t gate = 0;
    CHECK_INT((int)train_router_forward(&r, &gate, &xn, &logit, tau, 1, 1, 1), 1);
    SKIP_UNLESS_SHARED();
    Model m;
    Err e;
    if (test_load_stories(&m, NULL, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    int L = m.c.n_layers, H = m.c.n_heads, ids[12] = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315};
    float *w = calloc((size_t)L * H * m.c.dim, sizeof *w), *bias = malloc((size_t)L * H * sizeof *bias);
    RunState s = {0};
    StepTrace *tr = trace_new(L, H);
    CHECK(w && bias && tr && fwd_init(&s, &m.c, 12, 1, &e) == 0);
    if (w && bias && tr && s.x) {
        for (int i = 0; i < L * H; i++) bias[i] = logit;
        AttnConfig a = aha_defaults();
        a.policy = POLICY_AHA, a.routers = w, a.router_bias = bias, a.tau = tau, a.window = 4;
        fwd_forward(&m, &s, &a, ids, 11, 0, NULL, NULL);
        fwd_forward(&m, &s, &a, ids + 11, 1, 11, NULL, &tr); /* position 11: past the window, a choice */
        int global = 0;
        for (int i = 0; i < L * H; i++) global += tr->gate[i] == 1;
        CHECK_MSG(global == L * H, "%d of %d heads global at logit %.9g, tau %.9g", global, L * H, logit, tau);
    }
    trace_free(tr);
    fwd_free(&s);
    free(w), free(bias);
    model_free(&m);
}

/* A task file of n passkey items (seed 8) on stories260K, once per run. */
static const char *task_file(void) {
    static char path[4096];
    if (path[0]) return path;
    int st;
    snprintf(path, sizeof path, "%s", test_tmp("rigor.jsonl"));
    char *o = test_runf(&st, "%s tasks --task passkey --context 110 --n 5 --seed 8 --model '%s' --out '%s' 2>&1",
                        test_bin(), test_stories_model(), path);
    CHECK_MSG(st == 0, "tasks: %s", o ? o : "");
    free(o);
    return path;
}

/* eval --tasks on the task file with flags: its --json array (NULL on failure). */
static cJSON *tasks_json(const char *flags) {
    int st;
    char *o = test_runf(&st, "%s eval --model '%s' --tasks '%s' --threads 1 --json %s 2>/dev/null", test_bin(),
                        test_stories_model(), task_file(), flags);
    cJSON *a = st == 0 ? cJSON_Parse(o) : NULL;
    CHECK_MSG(a != NULL, "eval --tasks %s: exit %d, %s", flags, st, o ? o : "");
    free(o);
    return a;
}

/* The row of a --json array named predictor (NULL when absent). */
static cJSON *row_named(cJSON *a, const char *predictor) {
    for (int i = 0; i < cJSON_GetArraySize(a); i++) {
        cJSON *p = cJSON_GetObjectItem(cJSON_GetArrayItem(a, i), "predictor");
        if (cJSON_IsString(p) && !strcmp(p->valuestring, predictor)) return cJSON_GetArrayItem(a, i);
    }
    return NULL;
}

static double num(cJSON *row, const char *key) {
    cJSON *v = row ? cJSON_GetObjectItem(row, key) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A matched task table (τ chosen by --share, θ and p by the match) rerun
 * row by row from the printed thresholds: each rerun lands on its row's
 * share exactly, not to 3 digits. */
TEST(rigor_matched_task_rows_rerun_from_their_printed_thresholds) {
    SKIP_UNLESS_SHARED();
    const char *base = "--routers random:3 --window 8";
    char flags[512];
    snprintf(flags, sizeof flags, "%s --share 0.2 --match-budget aha --self 1 --seq-len 64", base);
    cJSON *m = tasks_json(flags);
    const char *again[][2] = {{"aha", "tau"}, {"qada", "theta_logit"}, {"oracle", "theta_logit"}, {"random", "p"}};
    for (int i = 0; m && i < 4; i++) {
        cJSON *row = row_named(m, again[i][0]);
        double v = num(row, again[i][1]), want = num(row, "global_share");
        CHECK_MSG(isfinite(v) && isfinite(want), "%s: no %s or global_share", again[i][0], again[i][1]);
        if (!isfinite(v) || !isfinite(want)) continue;
        snprintf(flags, sizeof flags, "%s --policy %s --%s %.17g", base, again[i][0],
                 strcmp(again[i][1], "theta_logit") ? again[i][1] : "theta-logit", v);
        cJSON *r = tasks_json(flags);
        double got = num(cJSON_GetArrayItem(r, 1), "global_share");
        CHECK_MSG(got == want, "%s rerun at %s %.17g: share %.17g, the matched row's %.17g", again[i][0],
                  again[i][1], v, got, want);
        cJSON_Delete(r);
    }
    cJSON_Delete(m);
}

/* The note --share wrote to stderr ("" when none), read into buf. */
static const char *share_note(const char *file, char *buf, size_t cap) {
    buf[0] = 0;
    FILE *f = fopen(file, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "note: --share", 13)) snprintf(buf, cap, "%s", line);
    if (f) fclose(f);
    return buf;
}

/* --share on one 16-token sequence: 8 positions x 40 heads decide, so the
 * share moves in steps of 1/320 and 15.17% cannot be reached within 0.05
 * points. The note says so, its nearest share is the row's, and the step
 * it names straddles the target with the nearer side taken; a target the
 * routers can reach (many decisions) prints no note. */
TEST(rigor_share_reports_the_nearest_share_it_can_reach) {
    SKIP_UNLESS_SHARED();
    const char *err = test_tmp("share.err");
    char note[1024];
    int st;
    char *o = test_runf(&st, "%s eval --model '%s' --routers random:3 --window 8 --self 1 --seq-len 16 --share 0.1517 "
                        "--threads 1 --json 2>'%s'", test_bin(), test_stories_model(), err);
    cJSON *j = st == 0 ? cJSON_Parse(o) : NULL;
    CHECK_MSG(j != NULL, "eval --share: exit %d, %s", st, o ? o : "");
    free(o);
    double asked, near, above, below, row = num(cJSON_GetArrayItem(j, 0), "global_share");
    float tau, tau_a, tau_b;
    share_note(err, note, sizeof note);
    int got = sscanf(note, "note: --share %lf%%: no tau lands within 0.05 points; the nearest share reached is %lf%% "
                     "(tau %f): the share steps from %lf%% at tau %f to %lf%% at tau %f", &asked, &near, &tau, &above,
                     &tau_a, &below, &tau_b);
    CHECK_MSG(got == 7, "the note: '%s'", note);
    if (got == 7) {
        CHECK_NEAR(asked, 15.17, 1e-9);
        CHECK_NEAR(near, 100 * row, 5e-5); /* the note's 4 decimals of a percent */
        CHECK_MSG(above > 15.17 && below <= 15.17, "the step %.4f%% to %.4f%% does not straddle 15.17%%", above, below);
        CHECK_NEAR(near, fabs(above - 15.17) < fabs(below - 15.17) ? above : below, 1e-9);
        CHECK_MSG(fabs(below - above) > 0.1, "a step of %.4f points", above - below);
    }
    cJSON_Delete(j);
    o = test_runf(&st, "%s eval --model '%s' --routers random:3 --window 8 --self 1 --seq-len 256 --share 0.2 "
                  "--threads 1 --json 2>'%s'", test_bin(), test_stories_model(), err);
    CHECK_MSG(st == 0, "eval --share 0.2: exit %d", st);
    CHECK_MSG(!share_note(err, note, sizeof note)[0], "a reachable share noted: %s", note);
    free(o);
}

/* A passkey file of 3 items drawn with seed into path (cap bytes). */
static const char *small_set(const char *name, int seed, char *path, size_t cap) {
    snprintf(path, cap, "%s", test_tmp(name));
    int st;
    char *o = test_runf(&st, "%s tasks --task passkey --context 110 --n 3 --seed %d --model '%s' --out '%s' 2>&1",
                        test_bin(), seed, test_stories_model(), path);
    CHECK_MSG(st == 0, "tasks: %s", o ? o : "");
    free(o);
    return path;
}

/* eval --tasks's JSON with the flags given whole (NULL on failure). */
static cJSON *eval_json_flags(const char *flags) {
    int st;
    char *o = test_runf(&st, "%s eval --model '%s' --threads 1 --json %s 2>/dev/null", test_bin(), test_stories_model(),
                        flags);
    cJSON *a = st == 0 ? cJSON_Parse(o) : NULL;
    CHECK_MSG(a != NULL, "eval %s: exit %d, %s", flags, st, o ? o : "");
    free(o);
    return a;
}

/* --calibrate-items: two sets scored at thresholds chosen on a third
 * set's prompts — the same θ in both sets' rows, and exactly the θ a run
 * scoring the calibration file itself chooses; the pooled accuracy is the
 * mean of both sets' items and lists each set's. A calibration item that
 * is scored, and several sets matched without calibration, are refused. */
TEST(rigor_calibrate_items_chooses_thresholds_apart_and_pools_sets) {
    SKIP_UNLESS_SHARED();
    char pa[1024], pb[1024], pc[1024];
    const char *a = small_set("set_a.jsonl", 21, pa, sizeof pa), *b = small_set("set_b.jsonl", 22, pb, sizeof pb);
    const char *c = small_set("cal.jsonl", 23, pc, sizeof pc);
    const char *pol = "--routers random:3 --window 8 --share 0.2 --match-budget aha --self 1 --seq-len 64";
    char flags[8192];
    snprintf(flags, sizeof flags, "--tasks '%s,%s' --calibrate-items '%s' %s", a, b, c, pol);
    cJSON *j = eval_json_flags(flags);
    snprintf(flags, sizeof flags, "--tasks '%s' %s", c, pol);
    cJSON *self = eval_json_flags(flags);
    cJSON *sets = cJSON_GetObjectItem(j, "sets"), *pooled = cJSON_GetObjectItem(j, "pooled");
    CHECK_INT(cJSON_GetArraySize(sets), 2);
    CHECK(cJSON_GetArraySize(pooled) == cJSON_GetArraySize(self) && cJSON_GetArraySize(self) > 2);
    cJSON *ra = cJSON_GetObjectItem(cJSON_GetArrayItem(sets, 0), "rows");
    cJSON *rb = cJSON_GetObjectItem(cJSON_GetArrayItem(sets, 1), "rows");
    const char *keys[] = {"tau", "theta_logit", "theta_logit", "p"}, *rows[] = {"aha", "qada", "oracle", "random"};
    for (int i = 0; j && self && i < 4; i++) {
        double va = num(row_named(ra, rows[i]), keys[i]), vb = num(row_named(rb, rows[i]), keys[i]);
        double vc = num(row_named(self, rows[i]), keys[i]);
        CHECK_MSG(isfinite(va) && va == vb && va == vc, "%s %s: set a %.17g, set b %.17g, on the calibration file %.17g",
                  rows[i], keys[i], va, vb, vc);
    }
    for (int r = 0; j && r < cJSON_GetArraySize(pooled); r++) {
        cJSON *p = cJSON_GetArrayItem(pooled, r), *sa = cJSON_GetArrayItem(ra, r), *sb = cJSON_GetArrayItem(rb, r);
        double sum = 0;
        int n = 0;
        for (int s = 0; s < 2; s++) {
            cJSON *items = cJSON_GetObjectItem(s ? sb : sa, "score_per_item");
            for (int k = 0; k < cJSON_GetArraySize(items); k++, n++) sum += cJSON_GetArrayItem(items, k)->valuedouble;
            CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "set_accuracy"), s)->valuedouble ==
                  num(s ? sb : sa, "accuracy"));
        }
        CHECK_INT(n, 6);
        CHECK_NEAR(num(p, "accuracy"), sum / n, 1e-12);
        CHECK_INT((int)num(p, "n_items"), 6);
    }
    cJSON_Delete(j), cJSON_Delete(self);
    int st;
    char *o = test_runf(&st, "%s eval --model '%s' --tasks '%s' --calibrate-items '%s' %s 2>&1", test_bin(),
                        test_stories_model(), a, a, pol);
    CHECK_MSG(st != 0 && strstr(o, "calibration items must be apart from the scored ones"), "exit %d: %s", st, o);
    free(o);
    o = test_runf(&st, "%s eval --model '%s' --tasks '%s,%s' %s 2>&1", test_bin(), test_stories_model(), a, b, pol);
    CHECK_MSG(st != 0 && strstr(o, "need --calibrate-items"), "exit %d: %s", st, o);
    free(o);
}

/* train --answer-weight on the router objective: refused without task
 * items (exit 2, naming the flag); on a task file it trains and the router
 * file says the objective was weighed. */
TEST(rigor_train_answer_weight_weighs_the_router_objective) {
    SKIP_UNLESS_SHARED();
    char data[1024];
    small_set("train_items.jsonl", 31, data, sizeof data);
    const char *out = test_tmp("aw.safetensors");
    int st;
    char *o = test_runf(&st, "%s train --model '%s' --window 8 --self 4 --steps 1 --answer-weight 4 --out '%s' 2>&1",
                        test_bin(), test_stories_model(), out);
    CHECK_MSG(st == 2 && strstr(o, "--answer-weight weighs task items' answers"), "exit %d: %s", st, o);
    free(o);
    o = test_runf(&st, "%s train --model '%s' --window 8 --data '%s' --seq-len 120 --batch 2 --steps 2 "
                  "--answer-weight 4 --out '%s' 2>&1", test_bin(), test_stories_model(), data, out);
    CHECK_MSG(st == 0, "exit %d: %s", st, o);
    free(o);
    StFile f;
    Err e;
    if (st != 0 || st_open(&f, out, &e)) return;
    const char *obj = st_meta(&f, "objective");
    CHECK_MSG(obj && !strcmp(obj, "kl answer_weight=4"), "objective '%s'", obj ? obj : "(none)");
    st_close(&f);
}

/* --choice-resamples on the organism (passkey at 120 tokens, τ chosen for
 * 30% global on 8 calibration items): the interval over 4 resampled
 * choices is recounted by a float64 NumPy script (tests/choice_ref.py)
 * from the per-choice item scores the JSON lists; the choices answer
 * differently, so the interval is not the fixed threshold's. */
TEST(rigor_choice_resamples_interval_matches_numpy_recount) {
    SKIP_UNLESS_SHARED();
    const char *org = "engine/organism/organism.bin", *json = test_tmp("choice.json");
    char a[1024], c[1024];
    snprintf(a, sizeof a, "%s", test_tmp("oa.jsonl")), snprintf(c, sizeof c, "%s", test_tmp("oc.jsonl"));
    int st;
    for (int k = 0; k < 2; k++) {
        char *o = test_runf(&st, "%s tasks --task passkey --context 120 --n 8 --seed %d --model %s --out '%s' 2>&1",
                            test_bin(), 3 + k, org, k ? c : a);
        CHECK_MSG(st == 0, "tasks: %s", o ? o : "");
        free(o);
    }
    char *o = test_runf(&st, "%s eval --model %s --tasks '%s' --calibrate-items '%s' --routers "
                        "engine/organism/routers_w8.safetensors --window 8 --share 0.3 --choice-resamples 4 --threads 1 "
                        "--json > '%s' 2>/dev/null", test_bin(), org, a, c, json);
    CHECK_MSG(st == 0, "eval: exit %d", st);
    free(o);
    FILE *f = fopen(json, "r");
    char buf[1 << 16];
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[got] = 0;
    cJSON *j = cJSON_Parse(buf), *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choice"), 0);
    CHECK_MSG(ch != NULL, "no choice rows in %s", buf);
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); cJSON_Delete(j); return; }
    o = test_runf(&st, "%s tests/choice_ref.py '%s'", py, json);
    char name[64];
    double lo, hi;
    CHECK_MSG(st == 0 && sscanf(o, "%63s %lf %lf", name, &lo, &hi) == 3, "choice_ref.py: %s", o);
    if (ch && st == 0) {
        CHECK_NEAR(num(ch, "ci_low"), lo, 1e-12);
        CHECK_NEAR(num(ch, "ci_high"), hi, 1e-12);
        cJSON *sc = cJSON_GetObjectItem(ch, "scores");
        CHECK_INT(cJSON_GetArraySize(sc), 4);
        CHECK_INT(cJSON_GetArraySize(cJSON_GetArrayItem(sc, 0)), 8);
    }
    free(o);
    cJSON_Delete(j);
}
