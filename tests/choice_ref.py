"""Float64 reference for `eval --tasks --choice-resamples N`'s accuracy
interval: per row, the mean score over ceil(2000 / N) resamples of the
pooled items under each of the N choices (indices from splitmix64 seeded
20260101 + 2, drawn as engine/stats.c's stats_rng_below draws them,
choice after choice, resample after resample), and NumPy's linear 2.5% and
97.5% percentiles of all those means.

usage: choice_ref.py IN.json
OUT (stdout): one line per row of IN's "choice": its name, low and high
end, each %.17g."""
import json
import math
import sys

import numpy as np

M64 = (1 << 64) - 1


def draws(seed):
    s = seed
    while True:
        s = (s + 0x9E3779B97F4A7C15) & M64
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def below(gen, n):
    limit = M64 - (M64 % n)  # UINT64_MAX - UINT64_MAX % n, as the C rejects v >= limit
    while True:
        v = next(gen)
        if v < limit:
            return v % n


def main():
    j = json.load(open(sys.argv[1]))
    for row in j["choice"]:
        sc = np.array(row["scores"], dtype=np.float64)
        n_choice, total = sc.shape
        m = math.ceil(2000 / n_choice)
        gen = draws(20260101 + 2)
        means = []
        for b in range(n_choice):
            for _ in range(m):
                idx = [below(gen, total) for _ in range(total)]
                means.append(sc[b, idx].mean())
        print(row["predictor"], "%.17g" % np.percentile(means, 2.5), "%.17g" % np.percentile(means, 97.5))


if __name__ == "__main__":
    main()
