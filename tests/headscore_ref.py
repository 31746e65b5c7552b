#!/usr/bin/env python3
"""headscore_ref.py - calibrate --method's head scores recounted in float64.

The model is run by qada_measure.py's float64 NumPy forward pass (a
llama2.c checkpoint, full attention), and each score is recounted from its
definition, then compared with the table `ahascope calibrate --method M`
wrote (its default form: layer, head, kv_head, score, kv_score, and for
induction echo, echo_kv):

  retrieval      per item, over the tokens generated greedily after the
                 prompt (taken from `ahascope generate --ids --temperature 0`,
                 a separate path through the engine): 1/|needle| each time a
                 head's most-attended key is a needle position holding the
                 token generated; the mean over items. KV: max over the group.
  needle-weight  per item, the largest over query positions question_pos ..
                 end of the weight on the needle; the mean. KV: max.
  induction      sequences BOS + x + x, x `period` ids drawn by splitmix64
                 (seed --seed, one stream, each id 3 + below(vocab - 3) by
                 rejection) as engine/stats.c draws them; per sequence the mean
                 over the second block's queries t of the weight on t - period
                 (echo) and t - period + 1 (induction). KV: max.
  duo-fast       per item and layer, the mean over positions of each head's
                 query and key with RoPE undone, repeated at positions 0 ..
                 len-1 and rotated again; the last query's softmax over the
                 keys, the mean of its cumulative sum. KV: the group's mean.

Prints one line per compared column and exits 1 when a difference passes
--tol (retrieval's hits are exact events: its --tol can be tiny), 2 on bad
input. BOS is id 1, as in llama2.c vocabularies.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qada_measure as qm  # noqa: E402  (the float64 forward pass)

MASK64 = (1 << 64) - 1


class SplitMix:
    def __init__(self, seed):
        self.s = seed & MASK64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n):
        limit = MASK64 - MASK64 % n
        while True:
            v = self.next()
            if v < limit:
                return v % n


def weights(q, k, hs):
    """Causal softmax rows (T, T) of one query head against its KV head."""
    T = q.shape[0]
    s = np.where(np.tril(np.ones((T, T), dtype=bool)), q @ k.T / math.sqrt(hs), -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def head_rows(cfg, qk):
    """Every (layer, query head)'s attention rows."""
    H, KV, hs = cfg["n_heads"], cfg["n_kv"], cfg["hs"]
    for l, (q, k) in enumerate(qk):
        for h in range(H):
            yield l, h, weights(q[:, h], k[:, h * KV // H], hs)


def generated_ids(args, prompt, steps):
    out = subprocess.run([args.bin, "generate", "--model", args.model, "--prompt", prompt, "--ids", "--steps",
                          str(steps), "--temperature", "0", "--policy", "full"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("generate failed: " + out.stderr)
    return [int(x) for x in out.stdout.split()]


def prompt_ids(args, it):
    """The prompt's ids as the engine encodes them (BOS first): the first
    n_tokens (which every item here must state) of generate's ids."""
    n = it.get("n_tokens", 0)
    if n < 1:
        sys.exit("%s: every item needs its n_tokens" % args.items)
    return generated_ids(args, it["prompt"], n)[:n]


def score_item(args, cfg, w, it):
    L, H, hs = cfg["n_layers"], cfg["n_heads"], cfg["hs"]
    prompt = prompt_ids(args, it)
    n = len(prompt)
    needle = np.zeros(n + args.gen + 1, dtype=bool)
    needle[list(it["needle_pos"])] = True
    u = np.zeros((L, H))
    if args.method == "retrieval":
        ids = generated_ids(args, it["prompt"], n + args.gen)[:n + args.gen]
        fed = n
        while fed < len(ids) and ids[fed] != 1:  # BOS ends generation unfed
            fed += 1
        ids = ids[:fed]
        _, qk = qm.forward(cfg, w, ids)
        n_needle = int(needle[:n].sum())
        for l, h, p in head_rows(cfg, qk):
            for pos in range(n, fed):
                q = pos - 1
                top = int(np.argmax(p[q, :q + 1]))
                if needle[top] and ids[top] == ids[pos]:
                    u[l, h] += 1.0 / n_needle
    elif args.method == "needle-weight":
        _, qk = qm.forward(cfg, w, prompt)
        for l, h, p in head_rows(cfg, qk):
            u[l, h] = max(p[q, :q + 1][needle[:q + 1]].sum() for q in range(it["question_pos"], n))
    else:
        _, qk = qm.forward(cfg, w, prompt)
        u = duo_fast(cfg, qk, n, args.duo_len)
    return u


def duo_fast(cfg, qk, n, length):
    H, KV, hs = cfg["n_heads"], cfg["n_kv"], cfg["hs"]
    ang = qm.rope_angles(cfg, max(n, length))
    cos, sin = np.cos(ang), np.sin(ang)
    u = np.zeros((cfg["n_layers"], H))
    for l, (q, k) in enumerate(qk):
        q0 = qm.rotate(q, cos[:n], -sin[:n]).mean(axis=0)  # RoPE undone, then the mean over positions
        k0 = qm.rotate(k, cos[:n], -sin[:n]).mean(axis=0)
        qr = qm.rotate(np.repeat(q0[None], length, axis=0), cos[:length], sin[:length])
        kr = qm.rotate(np.repeat(k0[None], length, axis=0), cos[:length], sin[:length])
        for h in range(H):
            s = kr[:, h * KV // H] @ qr[length - 1, h] / math.sqrt(hs)
            p = np.exp(s - s.max())
            p /= p.sum()
            u[l, h] = np.cumsum(p).mean()
    return u


def induction_units(args, cfg, w):
    rng = SplitMix(args.seed)
    P, L, H = args.period, cfg["n_layers"], cfg["n_heads"]
    echo, ind = [], []
    for _ in range(args.sequences):
        x = [3 + rng.below(cfg["vocab"] - 3) for _ in range(P)]
        ids = [1] + x + x
        _, qk = qm.forward(cfg, w, ids)
        e, i = np.zeros((L, H)), np.zeros((L, H))
        for l, h, p in head_rows(cfg, qk):
            ts = np.arange(len(ids) - P, len(ids))
            e[l, h] = p[ts, ts - P].mean()
            i[l, h] = p[ts, ts - P + 1].mean()
        echo.append(e)
        ind.append(i)
    return ind, echo


def kv_of(score, KV, mean):
    L, H = score.shape
    g = score.reshape(L, KV, H // KV)
    return g.mean(axis=2) if mean else g.max(axis=2)


def read_table(path):
    rows = [line.rstrip("\n").split("\t") for line in open(path) if not line.startswith("#")]
    head, body = rows[0], rows[1:]
    return {name: [float(r[c]) for r in body] for c, name in enumerate(head)}


def compare(name, want, got, tol):
    d = float(np.max(np.abs(np.asarray(want) - np.asarray(got))))
    print("%s: %d heads, max |diff| %.3g (tol %g), nonzero %d" % (name, len(got), d, tol,
                                                                  int(np.sum(np.asarray(want) > 0))))
    return d <= tol


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--method", required=True, choices=["retrieval", "needle-weight", "induction", "duo-fast"])
    ap.add_argument("--table", required=True, help="calibrate's table (default form)")
    ap.add_argument("--items")
    ap.add_argument("--gen", type=int, default=16)
    ap.add_argument("--sequences", type=int, default=20)
    ap.add_argument("--period", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duo-len", type=int, default=500)
    ap.add_argument("--tol", type=float, required=True)
    args = ap.parse_args()
    cfg, w = qm.load_checkpoint(args.model)
    KV = cfg["n_kv"]
    echo = None
    if args.method == "induction":
        units, echo = induction_units(args, cfg, w)
    else:
        if not args.items:
            sys.exit(2)
        items = [json.loads(line) for line in open(args.items) if line.strip()]
        units = [score_item(args, cfg, w, it) for it in items]
    score = np.mean(units, axis=0)
    table = read_table(args.table)
    mean = args.method == "duo-fast"
    kv = kv_of(score, KV, mean)
    L, H = score.shape
    if len(table["score"]) != L * H:
        sys.exit("%s: %d rows, not %d" % (args.table, len(table["score"]), L * H))
    kv_rows = [kv[l, h * KV // H] for l in range(L) for h in range(H)]
    ok = compare("score", score.ravel(), table["score"], args.tol)
    ok &= compare("kv_score", kv_rows, table["kv_score"], args.tol)
    if echo is not None:
        e = np.mean(echo, axis=0)
        ek = kv_of(e, KV, False)
        ok &= compare("echo", e.ravel(), table["echo"], args.tol)
        ok &= compare("echo_kv", [ek[l, h * KV // H] for l in range(L) for h in range(H)], table["echo_kv"], args.tol)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
