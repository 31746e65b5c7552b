#!/usr/bin/env python3
"""ablate_ref.py — KL(parent || child) and -log p of the next token, in float64, for test_ablate_diff.c.

Reads a JSON file: ids (the run's tokens), from, and per position t = from ... n-1
the parent's and the child's logits there ("parent", "child": one row each),
recomputed by the test on its own. Prints one line per position,
"t kl nll_parent nll_child", written from the definitions in app/ablate_diff.h:
p and q the softmaxes of the two rows, KL = sum_v p(v) (ln p(v) - ln q(v)) in
nats, nll = -ln of ids[t + 1] under each ("nan" at the last position).
"""
import json
import sys

import numpy as np


def log_softmax(row):
    x = np.asarray(row, dtype=np.float64)
    m = x.max()
    return x - (m + np.log(np.exp(x - m).sum()))


def main():
    with open(sys.argv[1]) as f:
        d = json.load(f)
    ids, start = d["ids"], d["from"]
    for i, (lp_row, lq_row) in enumerate(zip(d["parent"], d["child"])):
        t = start + i
        lp, lq = log_softmax(lp_row), log_softmax(lq_row)
        kl = float(np.sum(np.exp(lp) * (lp - lq)))
        if t + 1 < len(ids):
            a, b = -lp[ids[t + 1]], -lq[ids[t + 1]]
            print(f"{t} {kl:.12g} {a:.12g} {b:.12g}")
        else:
            print(f"{t} {kl:.12g} nan nan")


if __name__ == "__main__":
    main()
