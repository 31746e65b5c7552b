"""Recount eval --tasks --grid's grid, effective length and KV footprint in float64.

usage: reports_ref.py ITEMS.jsonl EVAL.json KV_HEADS_TOTAL WINDOW SINKS DEPTHS

ITEMS.jsonl is what `ahascope tasks` wrote, EVAL.json what `eval --tasks ... --grid DEPTHS --json`
printed (full attention's row, then rows of policies full, local or a routed one).
KV_HEADS_TOTAL is layers x KV heads (no windowed layers). Written from the definitions in
app/eval_grid.h and engine/cost.h, not from the C code: the depth is needle_pos[0] / n_tokens,
bucket floor(depth * DEPTHS); the effective length is the last context before the first whose
accuracy falls below 0.85 of the shortest's; a local row holds min(t + 1, WINDOW + SINKS)
entries a KV head at step t, any other t + 1. Prints one line per disagreement and exits 1 if
there is any.
"""
import json
import sys

import numpy as np


def grid_of(items, scores, depths):
    lens = sorted({it["n_tokens"] for it in items if it["needle_pos"]})
    s = np.zeros((depths, len(lens)))
    n = np.zeros((depths, len(lens)))
    for it, sc in zip(items, scores):
        if not it["needle_pos"]:
            continue
        d = min(depths - 1, int(np.floor(it["needle_pos"][0] / it["n_tokens"] * depths)))
        c = lens.index(it["n_tokens"])
        s[d, c] += sc
        n[d, c] += 1
    col = s.sum(axis=0) / n.sum(axis=0)
    eff = None
    if len(lens) and col[0] > 0:
        eff = lens[0]
        for c in range(1, len(lens)):
            if col[c] < 0.85 * col[0]:
                break
            eff = lens[c]
    with np.errstate(invalid="ignore"):
        return lens, s / n, n, eff


def footprint(items, local, kvh, window, sinks):
    total, peak = 0.0, 0.0
    for it in items:
        t = np.arange(it["n_tokens"], dtype=np.float64)
        held = np.minimum(t + 1, window + sinks) if local else t + 1
        total += kvh * held.sum()
        peak = max(peak, kvh * held[-1])
    return total, peak


def main():
    items = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    rows = json.load(open(sys.argv[2]))
    kvh, window, sinks, depths = (int(a) for a in sys.argv[3:7])
    bad = []
    full = footprint(items, False, kvh, window, sinks)
    for r in rows:
        name = r["predictor"]
        lens, acc, n, eff = grid_of(items, r["score_per_item"], depths)
        g = r["grid"]
        if g["lens"] != lens:
            bad.append(f"{name}: lens {g['lens']}, numpy {lens}")
            continue
        for d in range(depths):
            for c in range(len(lens)):
                got = g["acc"][d][c]
                if int(g["count"][d][c]) != int(n[d, c]):
                    bad.append(f"{name}: count[{d}][{c}] {g['count'][d][c]}, numpy {n[d, c]:.0f}")
                if n[d, c] == 0:
                    if got is not None:
                        bad.append(f"{name}: acc[{d}][{c}] {got} for an empty cell")
                elif got is None or abs(got - acc[d, c]) > 1e-12:
                    bad.append(f"{name}: acc[{d}][{c}] {got}, numpy {acc[d, c]:.17g}")
        if r["effective_length"] != eff:
            bad.append(f"{name}: effective length {r['effective_length']}, numpy {eff}")
        fp, pk = footprint(items, name == "local", kvh, window, sinks)
        for key, want in [("kv_footprint", fp), ("kv_prefill_peak", pk), ("kv_footprint_frac", fp / full[0]),
                          ("kv_prefill_peak_frac", pk / full[1])]:
            if abs(r[key] - want) > 1e-12 * max(1.0, abs(want)):
                bad.append(f"{name}: {key} {r[key]!r}, numpy {want!r}")
    for b in bad:
        print(b)
    print(f"{len(rows)} rows recounted, {len(bad)} disagreements")
    sys.exit(1 if bad else 0)


main()
