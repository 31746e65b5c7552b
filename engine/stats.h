/* stats.h — the statistics that say whether a difference is real: a
 * seeded generator, percentile bootstrap intervals of a mean (paired
 * differences are a mean too), and the exact McNemar test of two paired
 * pass/fail records, and the rank correlation of two scorings.
 *
 * Everything is deterministic from its seed, so an interval printed today
 * is the interval printed tomorrow, and a test can rebuild the very
 * resampling indices (stats_rng_below, in the order stats_bootstrap_ci
 * draws them) to check the interval against an independent reference.
 */
#ifndef AHASCOPE_STATS_H
#define AHASCOPE_STATS_H

#include <stdint.h>

/* splitmix64: one 64-bit word of state, every seed (0 too) a good stream. */
typedef struct {
    uint64_t s;
} StatsRng;

/* A generator seeded with seed. */
StatsRng stats_rng(uint64_t seed);

/* The next 64 random bits. */
uint64_t stats_rng_next(StatsRng *r);

/* A uniform integer in [0, n) (n >= 1), without modulo bias (rejection). */
uint64_t stats_rng_below(StatsRng *r, uint64_t n);

/* The default bootstrap: resamples and seed of every interval printed. */
#define STATS_BOOT_B 2000
#define STATS_BOOT_SEED 20260101u

/* The level-quantile of x[0..n) (n >= 1; sorted in place), interpolated
 * linearly between order statistics at (n-1)·level: NumPy's default. */
double stats_quantile(double *x, int n, double level);

/* Percentile bootstrap interval of the mean of x[0..n) at confidence
 * 1 - alpha: B resamples of n items drawn with replacement (item k of
 * resample b is x[stats_rng_below(rng, n)], resample after resample, from
 * stats_rng(seed)), the alpha/2 and 1 - alpha/2 quantiles of their means.
 * For a paired comparison pass the per-item differences. NaN for both
 * ends when n = 0 or out of memory. */
void stats_bootstrap_ci(const double *x, int n, int B, uint64_t seed, double alpha, double *lo, double *hi);

/* Two-sided exact McNemar test of paired binary outcomes: b items only
 * the first got right, c items only the second. Under no difference the
 * b + c discordant items split as Binomial(b + c, 1/2); p = min(1,
 * 2·P(X <= min(b, c))). 1 when b + c = 0. */
double stats_mcnemar_p(long b, long c);

/* Spearman's rank correlation of x[0..n) and y[0..n): Pearson's r of their
 * ranks, ties given the mean of the ranks they span (scipy.stats.spearmanr).
 * NaN when n < 2, when either side is constant, or out of memory. */
double stats_spearman(const double *x, const double *y, int n);

#endif
