/* test_bench.c — the figures `ahascope bench` derives, and its `--gemm`, `--long` and `--tui` modes.
 *
 * The figures `ahascope bench` derives, on numbers made up
 * to have a known answer, its --gemm and --long modes end to end, and the
 * TUI frame benchmark behind --tui.
 *
 * The roofline pairs each decode step with the bandwidth passes on either
 * side of it: on a host whose bandwidth swings between passes, a decode
 * that always reads at 0.9 of what the host gives must come out at 0.9,
 * whatever the swing.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/commands.h"
#include "app/bench/bench.h"
#include "engine/gemm_half.h"
#include "engine/matvec.h"
#include "tests/store_fixture.h"
#include "tests/test.h"

/* A host whose bandwidth alternates 30 / 60 GB/s pass by pass, and steps
 * that each read 1 GB at 0.9 of the faster pass beside them: every step's
 * roofline is 0.9, and so is the median, though the steps' speeds differ
 * by 2x. One step the host stalled (10x slow) moves each value by nothing
 * but its own. */
TEST(bench_paired_rooflines_follow_the_bandwidth_step_by_step) {
    enum { N = 9 };
    Throughput t = {.weight_bytes = 900000000, .kv_bytes = 100000000};
    double bw[N + 1], secs[N], rf[N];
    for (int i = 0; i <= N; i++) bw[i] = i % 2 ? 60 : 30;
    for (int i = 0; i < N; i++) secs[i] = 1e9 / (0.9 * fmax(bw[i], bw[i + 1]) * 1e9);
    secs[4] *= 10;
    bench_paired_rooflines(&t, secs, bw, N, rf);
    for (int i = 0; i < N; i++) CHECK_NEAR(rf[i], i == 4 ? 0.09 : 0.9, 1e-12);
    bench_set_roofline(&t, rf, N);
    CHECK_NEAR(t.roofline_frac, 0.9, 1e-12);
    CHECK_NEAR(t.roofline_frac_weights, 0.81, 1e-12); /* the weights' 90% of the bytes */
}

static double num(const cJSON *j, const char *key) { return cJSON_GetNumberValue(cJSON_GetObjectItem(j, key)); }

/* --gemm times every path the machine runs, names the default, and its
 * figures agree with each other: the tok/s of a layer is its GFLOP/s over
 * the layer's FLOP a token (260K: q and o 64 × 64, k and v 32 × 64 with 4
 * KV heads of 8, gate up down 64 × 172; 2 FLOP a multiply-add). */
TEST(bench_gemm_times_every_path_against_its_peak) {
    int st;
    char *out = test_runf(&st, "%s bench --gemm --shape 260K --prompt-len 32 --runs 2 --threads 1 --json", test_bin());
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j, "bench --gemm --json: %d %s", st, out ? out : "");
    if (j) {
        CHECK_INT(num(j, "T"), 32);
        CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "default")), gemm_half_name(gemm_half_best())));
        const cJSON *paths = cJSON_GetObjectItem(j, "paths"), *p;
        int n = 0, have_exact = 0;
        double flops = 2.0 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 64 * 172);
        cJSON_ArrayForEach(p, paths) {
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(p, "path"));
            CHECK(name && gemm_half_parse(name) >= 0 && gemm_half_available((GemmPath)gemm_half_parse(name)));
            have_exact |= name && !strcmp(name, "exact");
            double g = num(p, "layer_gflops"), peak = num(p, "peak_gflops");
            CHECK_MSG(isfinite(g) && g > 0 && isfinite(peak) && peak > 0, "%s: %g GFLOP/s, peak %g", name, g, peak);
            double frac = num(p, "frac_of_peak"); /* a median of per-run ratios: near, not equal to, g / peak */
            CHECK_MSG(isfinite(frac) && frac > 0, "%s: fraction of peak %g", name, frac);
            CHECK_NEAR(num(p, "layer_tok_s") * flops / 1e9 / g, 1, 1e-3);
            CHECK(num(p, "down_gflops") > 0 && num(p, "q_gflops") > 0);
            n++;
        }
        int want = 1 + gemm_half_available(GEMM_AVX512BF16) + gemm_half_available(GEMM_AMX);
        CHECK_MSG(have_exact && n == want, "%d paths, %d available", n, want);
    }
    cJSON_Delete(j);
    free(out);
    out = test_runf(&st, "%s bench --gemm --shape 260K --prompt-len 8 --runs 1 --threads 1", test_bin());
    CHECK_MSG(st == 0 && out && strstr(out, "of peak") && strstr(out, "exact") && strstr(out, "f32 FMA"), "%s", out ? out : "");
    free(out);
    out = test_runf(&st, "%s bench --gemm --model /nonexistent 2>&1", test_bin());
    CHECK_MSG(st == 2 && out && strstr(out, "--gemm") && strstr(out, "--model"), "%d %s", st, out ? out : "");
    free(out);
}

/* Throughput's JSON says how the decode kernels prefetch (straight into L1
 * on AMD: engine/simd.h) and gives a roofline from the paired steps. */
TEST(bench_throughput_names_its_prefetch_and_pairs_its_roofline) {
    int st;
    char *out = test_runf(&st, "%s bench --shape 260K --runs 2 --prompt-len 8 --decode 4 --threads 1 --json", test_bin());
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j, "bench --json: %d %s", st, out ? out : "");
    if (j) {
        const char *pf = cJSON_GetStringValue(cJSON_GetObjectItem(j, "prefetch"));
        CHECK_MSG(pf && !strcmp(pf, "l2"), "f32 weights prefetch: %s", pf ? pf : "(none)");
        double rf = num(j, "roofline_frac"), rfw = num(j, "roofline_frac_weights");
        CHECK_MSG(isfinite(rf) && rf > 0 && rfw > 0 && rfw < rf, "roofline %g, weights only %g", rf, rfw);
    }
    cJSON_Delete(j);
    free(out);
    out = test_runf(&st, "%s bench --shape 260K --arch llama --dtype bf16 --runs 1 --prompt-len 8 --decode 4 --threads 1 --json",
                    test_bin());
    j = out ? cJSON_Parse(out) : NULL;
    const char *pf = j ? cJSON_GetStringValue(cJSON_GetObjectItem(j, "prefetch")) : NULL;
    CHECK_MSG(pf && !strcmp(pf, mv_prefetch_name(mv_prefetch_kind())), "bf16 weights prefetch: %s", out ? out : "");
    cJSON_Delete(j);
    free(out);
}

/* bench --tui: frames of a synthetic trace drawn off-screen give a median;
 * a screen of no size is refused. */
TEST(bench_tui_frames_reports_a_median) {
    double ms = -1;
    Err e;
    CHECK_INT(bench_tui_frames(200, 60, 16, 16, 200, 5, &ms, &e), 0);
    CHECK(ms > 0);
    CHECK(bench_tui_frames(0, 60, 16, 16, 200, 5, &ms, &e) != 0);
    CHECK(strstr(e.msg, "bad arguments") != NULL);
}

/* bench --long on a tiny shape: every field of its JSON is there and
 * finite, each file's bytes per decision is its size over its decisions,
 * and each recording holds exactly tokens x layers x heads decisions (a
 * run cut short or recorded twice would not). */
TEST(bench_long_counts_every_decision_and_its_bytes) {
    static const char *fields[] = {
        "tokens", "layers", "heads", "dim", "attn_top", "runs", "decisions", "decisions_profile", "db_bytes",
        "db_bytes_profile", "bytes_per_decision", "bytes_per_decision_profile", "compare_s", "head_rates_s", "diff_s",
        "first_frame_s", "step_ms_plain", "step_ms_recorded", "record_overhead", "step_ms_plain_profile",
        "step_ms_recorded_profile", "record_overhead_profile", "goal_bytes_per_decision",
        "goal_bytes_per_decision_profile", "goal_read_s", "goal_record_overhead", "key_wait_idle_ms", "key_wait_ms",
        "key_wait_p99_ms", "key_wait_max_ms", "key_presses", "key_job_s", "goal_key_wait_ms"};
    int st;
    char *out = test_runf(&st, "%s bench --long --dims 64,128,2,4,2,64,256 --long-tokens 100 --runs 1 --threads 1 --json",
                          test_bin());
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j, "bench --long --json: %d %s", st, out ? out : "");
    if (j) {
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
            const cJSON *v = cJSON_GetObjectItem(j, fields[i]);
            CHECK_MSG(cJSON_IsNumber(v) && isfinite(v->valuedouble), "field %s: %s", fields[i], out);
        }
        CHECK_INT(num(j, "tokens"), 100);
        CHECK_INT(num(j, "layers"), 2);
        CHECK_INT(num(j, "heads"), 4);
        CHECK_INT(num(j, "decisions"), 100 * 2 * 4);
        CHECK_INT(num(j, "decisions_profile"), 100 * 2 * 4);
        CHECK_INT(num(j, "attn_top"), APP_TUI_ATTN_TOP);
        double bpd = num(j, "bytes_per_decision"), bpp = num(j, "bytes_per_decision_profile");
        CHECK_MSG(bpd > 0 && bpp > 0, "bytes per decision %g, %g", bpd, bpp);
        CHECK_NEAR(bpd, num(j, "db_bytes") / num(j, "decisions"), 0.01);
        CHECK_NEAR(bpp, num(j, "db_bytes_profile") / num(j, "decisions_profile"), 0.01);
        CHECK_MSG(bpd > bpp, "the top-k recording (%g B) is not larger than the plain one (%g B)", bpd, bpp);
        CHECK(num(j, "compare_s") > 0 && num(j, "diff_s") > 0 && num(j, "first_frame_s") > 0);
        CHECK(num(j, "step_ms_plain") > 0 && num(j, "step_ms_recorded") > 0);
        /* the key wait: keys timed with nothing running, then as many as R's job lasted */
        CHECK_MSG(num(j, "key_wait_idle_ms") > 0 && num(j, "key_job_s") > 0, "%s", out);
        CHECK(num(j, "key_presses") >= 0);
        if (num(j, "key_presses") > 0)
            CHECK_MSG(num(j, "key_wait_ms") > 0 && num(j, "key_wait_ms") <= num(j, "key_wait_p99_ms") &&
                          num(j, "key_wait_p99_ms") <= num(j, "key_wait_max_ms"),
                      "%s", out);
        CHECK_INT(num(j, "goal_key_wait_ms"), 50);
    }
    cJSON_Delete(j);
    free(out);
    out = test_runf(&st, "%s bench --long --dims 64,128,2,4,2,64,256 --long-tokens 100 --runs 1 --threads 1", test_bin());
    CHECK_MSG(st == 0 && out && strstr(out, "B/decision TUI") && strstr(out, "800 decisions"), "%s", out ? out : "");
    free(out);
    out = test_runf(&st, "%s bench --long --dims 64,128,2,4,2,64,256 --long-tokens 300 2>&1", test_bin());
    CHECK_MSG(st != 0 && out && strstr(out, "exceeds the model's context"), "%d %s", st, out ? out : "");
    free(out);
    out = test_runf(&st, "%s bench --long --record 2>&1", test_bin());
    CHECK_MSG(st != 0 && out && strstr(out, "not with --record"), "%d %s", st, out ? out : "");
    free(out);
}

/* bench --long --synthetic, no model: its JSON has every figure, each run
 * holds tokens x layers x heads decisions, the bytes per decision are the
 * parent's file over its decisions, and the file --db keeps holds the
 * parent and a child of it with the window doubled and about 1 gate in 100
 * flipped; flags that do not go with it are refused. */
TEST(bench_long_synthetic_writes_a_parent_and_its_child) {
    static const char *fields[] = {"synthetic", "tokens", "layers", "heads", "attn_top", "runs", "flip_share",
                                   "decisions", "db_bytes", "bytes_per_decision", "write_s", "write_child_s",
                                   "compare_s", "head_rates_s", "diff_s", "first_frame_s", "goal_read_s"};
    const char *db = test_tmp("synthetic.db");
    test_db_fresh(db);
    int st;
    char *out = test_runf(&st, "%s bench --long --synthetic --dims 64,128,2,8,4,64,512 --long-tokens 400 --runs 1"
                               " --db %s --json", test_bin(), db);
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(st == 0 && j, "bench --long --synthetic --json: %d %s", st, out ? out : "");
    if (j) {
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
            const cJSON *v = cJSON_GetObjectItem(j, fields[i]);
            CHECK_MSG(cJSON_IsNumber(v) && isfinite(v->valuedouble), "field %s: %s", fields[i], out);
        }
        CHECK_INT(num(j, "decisions"), 400 * 2 * 8);
        CHECK_NEAR(num(j, "bytes_per_decision"), num(j, "db_bytes") / num(j, "decisions"), 0.01);
        CHECK(num(j, "diff_s") > 0 && num(j, "compare_s") > 0 && num(j, "first_frame_s") > 0);
    }
    cJSON_Delete(j);
    free(out);
    CHECK_INT((int)test_db_scalar(db, "SELECT COUNT(*) FROM decision_bits"), 2 * 400 * 2 * 8);
    CHECK_INT((int)test_db_scalar(db, "SELECT parent_run_id FROM runs WHERE run_id = 2"), 1);
    CHECK_INT((int)test_db_scalar(db, "SELECT (SELECT window FROM runs WHERE run_id = 2) -"
                                      " 2 * (SELECT window FROM runs WHERE run_id = 1)"), 0);
    CHECK_INT((int)test_db_scalar(db, "SELECT COUNT(*) FROM tokens WHERE gates IS NOT NULL"), 800);
    long long flips = test_db_scalar(db, "SELECT COUNT(*) FROM decision_bits x JOIN decision_bits y"
                                         " ON y.k = x.k + (1 << 48) WHERE x.k < 2 << 48 AND x.gate <> y.gate");
    CHECK_MSG(flips > 6400 / 300 && flips < 6400 / 30, "%lld of 6400 gates flipped, want about 1 in 100", flips);
    out = test_runf(&st, "%s bench --long --synthetic --dims 64,128,2,8,4,64,512 --long-tokens 40 --db %s 2>&1",
                    test_bin(), db);
    CHECK_MSG(st != 0 && out && strstr(out, "exists"), "%d %s", st, out ? out : "");
    free(out);
    test_db_fresh(db);
    out = test_runf(&st, "%s bench --synthetic 2>&1", test_bin());
    CHECK_MSG(st != 0 && out && strstr(out, "needs --long"), "%d %s", st, out ? out : "");
    free(out);
    out = test_runf(&st, "%s bench --long --synthetic --dims 64,128,2,8,4,64,512 --long-tokens 600 2>&1", test_bin());
    CHECK_MSG(st != 0 && out && strstr(out, "exceeds the shape's context"), "%d %s", st, out ? out : "");
    free(out);
}
