#!/usr/bin/env python3
"""needle_ref.py — the weight on marked positions, in float64, for test_views_needle.c.

Reads a JSON file: window, sinks, marks [[pos, kind]...] (kind 1 needle, 2
question), prompt (positions that are the prompt), and rows
[[pos, cell, [[key, w]...], top_k]...]. Prints one line per row
"pos cell weight exact", then "answer cell mean exact" per cell (and with
P0 P1 after the kind, "span cell mean exact" over positions P0 … P1-1), written
from the definition: the ranked keys' weights summed over the marked keys;
exact unless a marked key at or before the query is in the local set (the
first sinks or the last window positions) or missing from a full list.
"""
import json
import sys

import numpy as np


def weight(row, marks, window, sinks, kind):
    pos, _, ranked, top_k = row
    want = {p for p, k in marks if k == kind and p <= pos}
    got = np.array([w for key, w in ranked if key in want], dtype=np.float64)
    listed = {key for key, _ in ranked}
    local = any(p < sinks or p > pos - window for p in want)
    full = len(ranked) == top_k
    exact = not local and (not full or want <= listed)
    return float(got.sum()) if got.size else 0.0, exact


def main():
    d = json.load(open(sys.argv[1]))
    kind = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    per_cell = {}
    for row in d["rows"]:
        w, ex = weight(row, d["marks"], d["window"], d["sinks"], kind)
        print(f"{row[0]} {row[1]} {w:.9f} {int(ex)}")
        if row[0] not in d["prompt"]:
            per_cell.setdefault(row[1], []).append((w, ex))
    for cell, vals in sorted(per_cell.items()):
        ws = np.array([v[0] for v in vals], dtype=np.float64)
        print(f"answer {cell} {ws.mean():.9f} {int(all(v[1] for v in vals))}")
    if len(sys.argv) > 4:  # a chosen span [p0, p1): every position in it, prompt or not
        p0, p1 = int(sys.argv[3]), int(sys.argv[4])
        span = {}
        for row in d["rows"]:
            if p0 <= row[0] < p1:
                span.setdefault(row[1], []).append(weight(row, d["marks"], d["window"], d["sinks"], kind))
        for cell, vals in sorted(span.items()):
            ws = np.array([v[0] for v in vals], dtype=np.float64)
            print(f"span {cell} {ws.mean():.9f} {int(all(v[1] for v in vals))}")


if __name__ == "__main__":
    main()
