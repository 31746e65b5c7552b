"""Float64 reference for the bootstrap intervals eval prints over sequences
(or task items): engine/stats.h's percentile bootstrap of a mean, recounted
with NumPy from the per-sequence values eval's --json lists.

usage: bootstrap_ref.py IN
IN: JSON {"n": n, "idx": the B*n resampling indices in the order
stats_rng_below draws them (resample after resample), "stats": [{"x": [n
values], "ref": [n values of the reference row] (optional), "exp": true to
report the mean and its interval as exp(...), a perplexity (optional)}]}.
OUT (stdout): one line per stat: the mean, the interval's 2.5% and 97.5%
ends (NumPy's linear percentile), and the paired difference's two ends
(nan without a reference), each %.17g."""
import json
import sys

import numpy as np


def main():
    j = json.load(open(sys.argv[1]))
    n = j["n"]
    idx = np.array(j["idx"], dtype=np.int64).reshape(-1, n)
    for s in j["stats"]:
        x = np.array(s["x"], dtype=np.float64)
        m = x[idx].mean(axis=1)
        out = [x.mean(), np.percentile(m, 2.5), np.percentile(m, 97.5)]
        if s.get("exp"):
            out = [np.exp(v) for v in out]
        if s.get("ref") is not None:
            d = x - np.array(s["ref"], dtype=np.float64)
            md = d[idx].mean(axis=1)
            out += [np.percentile(md, 2.5), np.percentile(md, 97.5)]
        else:
            out += [float("nan"), float("nan")]
        print(" ".join("%.17g" % v for v in out))


if __name__ == "__main__":
    main()
