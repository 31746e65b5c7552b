/* stats.c — seeded generator, bootstrap intervals, exact McNemar (stats.h). */
#include "engine/stats.h"

#include <math.h>
#include <stdlib.h>

StatsRng stats_rng(uint64_t seed) { return (StatsRng){seed}; }

uint64_t stats_rng_next(StatsRng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t stats_rng_below(StatsRng *r, uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* the largest multiple of n: no value favoured */
    uint64_t v;
    do v = stats_rng_next(r);
    while (v >= limit);
    return v % n;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_quantile(double *x, int n, double level) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    double h = (n - 1) * level;
    int i = (int)floor(h);
    if (i >= n - 1) return x[n - 1];
    return x[i] + (h - i) * (x[i + 1] - x[i]);
}

void stats_bootstrap_ci(const double *x, int n, int B, uint64_t seed, double alpha, double *lo, double *hi) {
    *lo = *hi = NAN;
    double *means = n > 0 && B > 0 ? malloc((size_t)B * sizeof *means) : NULL;
    if (!means) return;
    StatsRng r = stats_rng(seed);
    for (int b = 0; b < B; b++) {
        double sum = 0;
        for (int k = 0; k < n; k++) sum += x[stats_rng_below(&r, (uint64_t)n)];
        means[b] = sum / n;
    }
    *lo = stats_quantile(means, B, alpha / 2);
    *hi = stats_quantile(means, B, 1 - alpha / 2);
    free(means);
}

double stats_mcnemar_p(long b, long c) {
    long n = b + c, k = b < c ? b : c;
    if (n <= 0) return 1.0;
    /* P(X <= k) summed in logs: n can be thousands, 2^-n underflows */
    double tail = 0;
    for (long i = 0; i <= k; i++)
        tail += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
    double p = 2 * tail;
    return p < 1 ? p : 1.0;
}

/* Index order of x, for ranking; the values sort, ties in any order. */
typedef struct {
    double v;
    int i;
} StatsRanked;

static int stats_by_value(const void *a, const void *b) {
    double x = ((const StatsRanked *)a)->v, y = ((const StatsRanked *)b)->v;
    return (x > y) - (x < y);
}

/* Ranks 1..n of x into r, a tie's run sharing the mean of its ranks. */
static int stats_ranks(const double *x, int n, double *r) {
    StatsRanked *s = malloc((size_t)n * sizeof *s);
    if (!s) return -1;
    for (int i = 0; i < n; i++) s[i].v = x[i], s[i].i = i;
    qsort(s, (size_t)n, sizeof *s, stats_by_value);
    for (int a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && s[b].v == s[a].v; b++) {}
        for (int k = a; k < b; k++) r[s[k].i] = (a + b + 1) / 2.0; /* mean of ranks a+1 .. b */
    }
    free(s);
    return 0;
}

double stats_spearman(const double *x, const double *y, int n) {
    if (n < 2) return NAN;
    double *rx = malloc((size_t)n * 2 * sizeof *rx), *ry = rx ? rx + n : NULL, out = NAN;
    if (rx && !stats_ranks(x, n, rx) && !stats_ranks(y, n, ry)) {
        double m = (n + 1) / 2.0, sxy = 0, sxx = 0, syy = 0; /* every ranking's mean, ties included */
        for (int i = 0; i < n; i++)
            sxy += (rx[i] - m) * (ry[i] - m), sxx += (rx[i] - m) * (rx[i] - m), syy += (ry[i] - m) * (ry[i] - m);
        if (sxx > 0 && syy > 0) out = sxy / sqrt(sxx * syy);
    }
    free(rx);
    return out;
}
