#!/usr/bin/env python3
"""duo_ref.py - calibrate --method duo-train recounted in float64.

DuoAttention's gates: per layer and KV head a gate a in [0, 1]; every query
head of the group outputs a * full + (1 - a) * streaming, streaming being the
softmax over the first --sink keys and the last --recent (the current one
among them). The loss is KL(full model || mixed model) averaged over the
answer rows (the rows whose target is an answer id) of every sequence, plus
lambda * sum(a). Starting from a = 1, each of --steps steps takes the
gradient of that loss by one-sided differences of this float64 forward pass
(qada_measure.py's model), adds lambda, takes an AdamW step (beta 0.9,
0.999, eps 1e-8, no decay, constant --lr) and clamps a to [0, 1]; every step
sees every sequence (the test gives --batch as their number). The gates are
compared with the table `ahascope calibrate --method duo-train` wrote
(layer, head, kv_head, score, kv_score: a query head's score is its KV
head's gate).

--seqs holds one sequence a line: answer_from, then the ids (BOS first).
Prints the largest difference and exits 1 past --tol, 2 on bad input.
"""
import argparse
import math
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small products: threads only cost here
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qada_measure as qm  # noqa: E402  (the checkpoint loader and RoPE)


def log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def forward(cfg, w, tokens, gates, sink, recent):
    """Log-probabilities of one sequence with every head mixed by its KV
    head's gate (gates[l][kv]; all 1 is the full model)."""
    T, H, KV, hs = len(tokens), cfg["n_heads"], cfg["n_kv"], cfg["hs"]
    ang = qm.rope_angles(cfg, T)
    cos, sin = np.cos(ang), np.sin(ang)
    t, j = np.arange(T)[:, None], np.arange(T)[None, :]
    causal = j <= t
    local = causal & ((j < sink) | (j > t - recent))
    x = w["embed"][np.asarray(tokens)]
    for l in range(cfg["n_layers"]):
        h_in = qm.rmsnorm(x, w["att_norm"][l], cfg["eps"])
        q = qm.rotate((h_in @ w["wq"][l].T).reshape(T, H, hs), cos, sin)
        k = qm.rotate((h_in @ w["wk"][l].T).reshape(T, KV, hs), cos, sin)
        v = (h_in @ w["wv"][l].T).reshape(T, KV, hs)
        kv = np.arange(H) * KV // H  # query heads of one group share a KV head
        kh, vh = k[:, kv].transpose(1, 0, 2), v[:, kv].transpose(1, 0, 2)  # (H, T, hs)
        s = q.transpose(1, 0, 2) @ kh.transpose(0, 2, 1) / math.sqrt(hs)
        out = []
        for mask in (causal, local):
            sm = np.where(mask[None], s, -np.inf)
            p = np.exp(sm - sm.max(axis=2, keepdims=True))
            out.append(((p / p.sum(axis=2, keepdims=True)) @ vh).transpose(1, 0, 2))
        a = np.asarray(gates[l])[kv][None, :, None]
        heads = (a * out[0] + (1 - a) * out[1]).reshape(T, H * hs)
        x = x + heads @ w["wo"][l].T
        f_in = qm.rmsnorm(x, w["ffn_norm"][l], cfg["eps"])
        z = f_in @ w["w1"][l].T
        x = x + ((z / (1.0 + np.exp(-z))) * (f_in @ w["w3"][l].T)) @ w["w2"][l].T
    return log_softmax(qm.rmsnorm(x, w["final_norm"], cfg["eps"]) @ w["cls"].T)


def kl_loss(cfg, w, seqs, teachers, gates, sink, recent):
    """Mean over every sequence's answer rows of KL(teacher || mixed)."""
    total, rows = 0.0, 0
    for (start, ids), lp_full in zip(seqs, teachers):
        lp = forward(cfg, w, ids[:-1], gates, sink, recent)
        r = np.arange(start - 1, len(ids) - 1)  # row i predicts ids[i + 1], an answer id from answer_from on
        total += float((np.exp(lp_full[r]) * (lp_full[r] - lp[r])).sum())
        rows += len(r)
    return total / rows


def read_table(path, cfg):
    g = np.full((cfg["n_layers"], cfg["n_kv"]), np.nan)
    for line in open(path):
        f = line.split("\t")
        if line.startswith("#") or f[0] == "layer":
            continue
        g[int(f[0]), int(f[2])] = float(f[4])
    if np.isnan(g).any():
        sys.exit(2)
    return g


def main():
    ap = argparse.ArgumentParser()
    for name in ("--model", "--seqs", "--table"):
        ap.add_argument(name, required=True)
    for name in ("--sink", "--recent", "--steps"):
        ap.add_argument(name, type=int, required=True)
    for name in ("--lr", "--lam", "--tol"):
        ap.add_argument(name, type=float, required=True)
    args = ap.parse_args()
    cfg, w = qm.load_checkpoint(args.model)
    seqs = []
    for line in open(args.seqs):
        v = [int(x) for x in line.split()]
        if len(v) < 3 or not 1 <= v[0] < len(v) - 1:
            sys.exit(2)
        seqs.append((v[0], v[1:]))
    shape = (cfg["n_layers"], cfg["n_kv"])
    full = np.ones(shape)
    teachers = [forward(cfg, w, ids[:-1], full, args.sink, args.recent) for _, ids in seqs]
    gates, m, v = np.ones(shape), np.zeros(shape), np.zeros(shape)
    eps = 1e-6  # one-sided: the error eps * KL'' / 2 is far below the float32 engine's
    for step in range(1, args.steps + 1):
        grad = np.zeros(shape)
        base = kl_loss(cfg, w, seqs, teachers, gates, args.sink, args.recent)
        for l in range(shape[0]):
            for k in range(shape[1]):
                moved = gates.copy()
                moved[l, k] += -eps if gates[l, k] > 0.5 else eps  # the side inside [0, 1]
                diff = kl_loss(cfg, w, seqs, teachers, moved, args.sink, args.recent) - base
                grad[l, k] = diff / (moved[l, k] - gates[l, k])
        grad += args.lam
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        gates -= args.lr * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
        gates = np.clip(gates, 0.0, 1.0)
    got = read_table(args.table, cfg)
    worst = float(np.abs(got - gates).max())
    print("gates: max |table - recount| %.3g (tol %g); recount min %.4f max %.4f; spread %.4f" %
          (worst, args.tol, gates.min(), gates.max(), gates.max() - gates.min()))
    return 0 if worst <= args.tol else 1


if __name__ == "__main__":
    sys.exit(main())
