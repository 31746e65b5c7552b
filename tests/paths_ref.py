#!/usr/bin/env python3
"""paths_ref.py — the paths to the needle from full rows, and attention rollout, in float64, for test_views_keep.c.

Reads a JSON file: layers, heads, n (positions), answer (the query position),
needle (marked positions) and rows, a flat list of layers*heads*n*n weights
(cell, query, key; cell = layer*heads + head; negative: none). Prints
"total T" (the answer's rollout on the needle: each layer's mean head row
mixed half and half with the identity, multiplied from layer 0 up, the
needle's indicator at the bottom), "via CELL V" per head (its row at the
answer times the rollout of the layers below its own), "count N" (paths of
weight above 0) and "path W" for the heaviest 12: answer -> j (j < answer)
by a head, then either j on the needle (weight w1) or a head of a lower
layer at j putting w2 on the needle (weight w1*w2).
"""
import json
import sys

import numpy as np


def main():
    d = json.load(open(sys.argv[1]))
    L, H, n, a = d["layers"], d["heads"], d["n"], d["answer"]
    A = np.clip(np.array(d["rows"], dtype=np.float64).reshape(L * H, n, n), 0, None)
    ind = np.zeros(n)
    ind[d["needle"]] = 1.0
    need = A @ ind  # [cell, j]: weight at j on the needle
    u = ind.copy()
    via = np.zeros(L * H)
    for l in range(L):
        for h in range(H):
            via[l * H + h] = A[l * H + h, a, : a + 1] @ u[: a + 1]
        mean = A[l * H : (l + 1) * H].mean(axis=0)
        u = 0.5 * u + 0.5 * (mean @ u)
    paths = []
    for c1 in range(L * H):
        for j in range(a):
            w1 = A[c1, a, j]
            if w1 <= 0:
                continue
            if ind[j]:
                paths.append(w1)
                continue
            for c2 in range((c1 // H) * H):
                if need[c2, j] > 0:
                    paths.append(w1 * need[c2, j])
    paths.sort(reverse=True)
    print(f"total {u[a]:.12f}")
    for c in range(L * H):
        print(f"via {c} {via[c]:.12f}")
    print(f"count {len(paths)}")
    for w in paths[:12]:
        print(f"path {w:.12f}")


if __name__ == "__main__":
    main()
