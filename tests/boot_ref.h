/* boot_ref.h — the tests' way to hold eval's bootstrap intervals to
 * tests/bootstrap_ref.py, a float64 NumPy recount over the very resampling
 * indices engine/stats.h documents (STATS_BOOT_B resamples from
 * STATS_BOOT_SEED), from the per-sequence values eval's --json prints. */
#ifndef AHASCOPE_TESTS_BOOT_REF_H
#define AHASCOPE_TESTS_BOOT_REF_H

#include <cjson/cJSON.h>

/* One recounted statistic: the mean, its interval's ends, and the paired
 * difference's ends (NaN without a reference). */
typedef struct {
    double mean, lo, hi, dlo, dhi;
} BootRef;

/* Recount each entry of stats, a JSON array of {"x": [n values], "ref":
 * [n values] (optional), "exp": true (optional: mean and interval as
 * exp)}, into out[0..count). Returns 0; -1 after recording a failure, or
 * 1 after recording a skip (no python3 with numpy). */
int boot_ref_recount(const cJSON *stats, int n, BootRef *out, int count);

/* The JSON number member key of o, or NaN when absent or not a number. */
double boot_ref_num(const cJSON *o, const char *key);

#endif
