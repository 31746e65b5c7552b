"""Float64 reference for engine/train_logfit.c: Newton's method on the same
weighted, L2-regularised logistic loss (see engine/train_logfit.h), per head.

usage: logfit_ref.py DATA OUT
DATA: int32 n, d, k; float64 l2, eps; float32 x[n][d], y[n][k], wt[n][k].
OUT: one line per head: loss, then b, then w[0..d) (text, %.17g)."""
import sys

import numpy as np


def main():
    raw = open(sys.argv[1], "rb").read()
    n, d, k = np.frombuffer(raw, np.int32, 3)
    l2, eps = np.frombuffer(raw, np.float64, 2, 12)
    off = 28
    x = np.frombuffer(raw, np.float32, n * d, off).reshape(n, d).astype(np.float64)
    off += 4 * n * d
    y = np.frombuffer(raw, np.float32, n * k, off).reshape(n, k).astype(np.float64)
    off += 4 * n * k
    wt = np.frombuffer(raw, np.float32, n * k, off).reshape(n, k).astype(np.float64)
    xt = np.hstack([x, np.ones((n, 1))])
    pen = np.full(d + 1, l2)
    pen[d] = l2 * eps
    lines = []
    for h in range(k):
        th = np.zeros(d + 1)
        for _ in range(100):
            z = xt @ th
            p = 1 / (1 + np.exp(-z))
            g = xt.T @ (wt[:, h] * (p - y[:, h])) / n + pen * th
            hess = (xt * (wt[:, h] * p * (1 - p))[:, None]).T @ xt / n + np.diag(pen)
            step = np.linalg.solve(hess, g)
            th -= step
            if np.max(np.abs(step)) < 1e-14:
                break
        z = xt @ th
        loss = np.sum(wt[:, h] * (np.logaddexp(0, z) - y[:, h] * z)) / n + 0.5 * np.sum(pen * th * th)
        lines.append(" ".join("%.17g" % v for v in [loss, th[d]] + list(th[:d])))
    open(sys.argv[2], "w").write("\n".join(lines) + "\n")


main()
