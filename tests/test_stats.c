/* test_stats.c — McNemar's exact test and the bootstrap against independent references.
 *
 * Engine/stats.h against independent references: the exact
 * McNemar p against textbook values and Python's exact binomial sums (math.comb
 * in rational arithmetic), the bootstrap interval against NumPy's
 * percentiles over the very resampling indices stats_bootstrap_ci draws,
 * and the generator's range and spread. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stats.h"
#include "test.h"

TEST(stats_mcnemar_textbook_values) {
    CHECK_NEAR(stats_mcnemar_p(1, 9), 0.021484375, 1e-12); /* 2 * 11 / 1024 */
    CHECK_NEAR(stats_mcnemar_p(9, 1), 0.021484375, 1e-12); /* two-sided: symmetric */
    CHECK_NEAR(stats_mcnemar_p(5, 5), 1.0, 1e-15);
    CHECK_NEAR(stats_mcnemar_p(0, 0), 1.0, 1e-15);
    CHECK_NEAR(stats_mcnemar_p(0, 5), 0.0625, 1e-12);      /* 2 / 32 */
    CHECK_NEAR(stats_mcnemar_p(0, 1), 1.0, 1e-15);         /* 2 * 1/2, capped */
    CHECK_NEAR(stats_mcnemar_p(2, 12), 0.012939453125, 1e-12); /* 2 * (1 + 14 + 91) / 16384 */
}

/* Pairs (b, c) up to thousands of discordant items against Python's exact
 * rational sums: lgamma's rounding stays within 1e-9 relative. */
TEST(stats_mcnemar_matches_exact_python) {
    static const long bc[][2] = {{3, 17}, {20, 40}, {100, 130}, {0, 30}, {7, 8}, {400, 520}, {1500, 1600}};
    int n = (int)(sizeof bc / sizeof bc[0]);
    char list[512] = "", cmd[1024];
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s(%ld,%ld)", i ? "," : "", bc[i][0], bc[i][1]);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'from fractions import Fraction as F\nfrom math import comb\n"
             "for b,c in [%s]:\n n=b+c; k=min(b,c)\n p=min(F(1),2*F(sum(comb(n,i) for i in range(k+1)),2**n))\n"
             " print(\"%%.17g\" %% float(p))'",
             list);
    int st;
    char *out = test_run(cmd, &st);
    if (st != 0) { free(out); test_skip("python3 not available"); return; }
    char *p = out;
    for (int i = 0; i < n; i++) {
        double ref = strtod(p, &p);
        double got = stats_mcnemar_p(bc[i][0], bc[i][1]);
        CHECK_MSG(fabs(got - ref) <= 1e-9 * ref + 1e-300, "b=%ld c=%ld: p %.17g, exact %.17g", bc[i][0], bc[i][1],
                  got, ref);
    }
    free(out);
}

/* A fixed sample of 37 values; the interval equals NumPy's percentiles of
 * the means of the same 2000 resamples (the indices written out here by
 * redrawing them from the documented stream), to 1e-12. */
TEST(stats_bootstrap_matches_numpy_on_the_same_indices) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    enum { N = 37, B = 2000 };
    double x[N];
    for (int i = 0; i < N; i++) x[i] = (i * 7919 % 13) * 0.25 - (i % 3 == 0); /* uneven, some negative */
    double lo, hi;
    stats_bootstrap_ci(x, N, B, 42, 0.05, &lo, &hi);
    const char *path = test_tmp("boot.txt");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    for (int i = 0; i < N; i++) fprintf(f, "%.17g%c", x[i], i + 1 < N ? ' ' : '\n');
    StatsRng r = stats_rng(42);
    for (int b = 0; b < B; b++)
        for (int k = 0; k < N; k++) fprintf(f, "%d%c", (int)stats_rng_below(&r, N), k + 1 < N ? ' ' : '\n');
    fclose(f);
    int st;
    char *out = test_runf(&st,
                          "'%s' -c 'import numpy as np, sys\nL = open(sys.argv[1]).read().split(\"\\n\")\n"
                          "x = np.array(L[0].split(), dtype=np.float64)\n"
                          "idx = np.array([l.split() for l in L[1:] if l], dtype=np.int64)\n"
                          "m = x[idx].mean(axis=1)\nprint(\"%%.17g %%.17g %%d\" %% (np.percentile(m, 2.5), "
                          "np.percentile(m, 97.5), len(m)))' '%s'",
                          py, path);
    double rlo = NAN, rhi = NAN;
    int rb = 0;
    CHECK_MSG(st == 0 && out && sscanf(out, "%lf %lf %d", &rlo, &rhi, &rb) == 3, "numpy reference: %s", out);
    CHECK_INT(rb, B);
    CHECK_NEAR(lo, rlo, 1e-12);
    CHECK_NEAR(hi, rhi, 1e-12);
    double mean = 0;
    for (int i = 0; i < N; i++) mean += x[i] / N;
    CHECK(lo < mean && mean < hi);
    free(out);
}

/* Without a reference: a constant sample has a zero-width interval; 400
 * fair coin flips (200 ones) give about ±1.96·sqrt(.25/400) = ±0.049. */
TEST(stats_bootstrap_known_widths) {
    double c[10], lo, hi;
    for (int i = 0; i < 10; i++) c[i] = 0.75;
    stats_bootstrap_ci(c, 10, STATS_BOOT_B, STATS_BOOT_SEED, 0.05, &lo, &hi);
    CHECK_NEAR(lo, 0.75, 1e-15);
    CHECK_NEAR(hi, 0.75, 1e-15);
    static double coin[400];
    for (int i = 0; i < 400; i++) coin[i] = i % 2;
    stats_bootstrap_ci(coin, 400, STATS_BOOT_B, STATS_BOOT_SEED, 0.05, &lo, &hi);
    CHECK_NEAR(lo, 0.5 - 0.049, 0.008);
    CHECK_NEAR(hi, 0.5 + 0.049, 0.008);
    stats_bootstrap_ci(coin, 0, STATS_BOOT_B, 1, 0.05, &lo, &hi);
    CHECK(isnan(lo) && isnan(hi));
}

/* The quantile interpolates as NumPy's default does; the generator stays
 * in range and every value of a small range comes up about equally. */
TEST(stats_quantile_and_generator) {
    double v[5] = {5, 1, 4, 2, 3};
    CHECK_NEAR(stats_quantile(v, 5, 0.5), 3, 1e-15);
    CHECK_NEAR(stats_quantile(v, 5, 0.1), 1.4, 1e-12);
    CHECK_NEAR(stats_quantile(v, 5, 1.0), 5, 1e-15);
    StatsRng r = stats_rng(7);
    int count[6] = {0};
    for (int i = 0; i < 60000; i++) {
        uint64_t k = stats_rng_below(&r, 6);
        CHECK(k < 6);
        if (k < 6) count[k]++;
    }
    for (int k = 0; k < 6; k++) CHECK_NEAR(count[k], 10000, 400);
    StatsRng a = stats_rng(1), b = stats_rng(1), c2 = stats_rng(2);
    uint64_t x = stats_rng_next(&a);
    CHECK(x == stats_rng_next(&b) && x != stats_rng_next(&c2));
}

/* eval --match-budget's KL intervals over sequences: each row's mean KL
 * (sequences of equal length, so the token mean is the mean of the
 * sequence means) inside its interval, row 0's paired difference from
 * itself exactly zero, and every row's difference of means inside its
 * paired interval. */
TEST(stats_eval_matched_kl_intervals) {
    SKIP_UNLESS_SHARED();
    int st;
    char *out = test_runf(&st, "%s eval --routers random:5 --window 8 --match-budget aha --self 6 --seq-len 48 --threads 1 "
                          "--json 2>/dev/null", test_bin());
    CHECK_INT(st, 0);
    cJSON *a = cJSON_Parse(out ? out : "");
    CHECK_MSG(cJSON_IsArray(a) && cJSON_GetArraySize(a) >= 8, "%s", out);
    double kl0 = NAN;
    for (int i = 0; cJSON_IsArray(a) && i < cJSON_GetArraySize(a); i++) {
        cJSON *r = cJSON_GetArrayItem(a, i);
        cJSON *kl = cJSON_GetObjectItem(r, "kl"), *lo = cJSON_GetObjectItem(r, "kl_ci_low");
        cJSON *hi = cJSON_GetObjectItem(r, "kl_ci_high"), *dlo = cJSON_GetObjectItem(r, "kl_diff_ci_low");
        cJSON *dhi = cJSON_GetObjectItem(r, "kl_diff_ci_high");
        CHECK_MSG(cJSON_IsNumber(kl) && cJSON_IsNumber(lo) && cJSON_IsNumber(hi) && cJSON_IsNumber(dlo) &&
                      cJSON_IsNumber(dhi), "row %d lacks the KL intervals", i);
        if (!cJSON_IsNumber(kl) || !cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) || !cJSON_IsNumber(dlo) || !cJSON_IsNumber(dhi))
            continue;
        if (i == 0) kl0 = kl->valuedouble;
        CHECK_MSG(lo->valuedouble <= kl->valuedouble + 1e-12 && kl->valuedouble <= hi->valuedouble + 1e-12,
                  "row %d: kl %.6g outside [%.6g, %.6g]", i, kl->valuedouble, lo->valuedouble, hi->valuedouble);
        double d = kl->valuedouble - kl0;
        CHECK_MSG(dlo->valuedouble <= d + 1e-12 && d <= dhi->valuedouble + 1e-12, "row %d: difference %.6g outside "
                  "[%.6g, %.6g]", i, d, dlo->valuedouble, dhi->valuedouble);
        if (i == 0) CHECK(dlo->valuedouble == 0 && dhi->valuedouble == 0);
        else CHECK(hi->valuedouble > lo->valuedouble);
    }
    cJSON_Delete(a);
    free(out);
}
