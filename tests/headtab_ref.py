#!/usr/bin/env python3
"""headtab_ref.py - the published head tables and per-head windows, recounted in float64 NumPy.

An independent reading of the formats engine/headtab.c reads, written from
their definitions in app/COMMANDS.md, and a forward pass whose every head
attends over its own window. Each mode prints one JSON object on stdout.

  headtab_ref.py retrieval FILE L H          {"scores": [L*H means]} from {"L-H": [...]}
  headtab_ref.py prulong FILE                {"values": [...]} a row per layer, flattened
  headtab_ref.py moa FILE L H KV N           {"spans": [alpha + beta*N per query head]}
  headtab_ref.py cut SCORES_JSON K           {"heads": [cells]} the top K, ties to the lower cell
  headtab_ref.py spearman A_JSON B_JSON [MASK_JSON]   {"rho": r} average ranks for ties
  headtab_ref.py windows --model M --tokens IDS --spans FILE
                                             {"logprob": [...], "keys_read": [[...]], "kv_read": [...]}

The windows mode runs the llama2.c checkpoint with full attention except
that query head (l, h) at position t reads only keys max(0, t-w+1) .. t,
w = clamp(floor(alpha + beta*(t+1) + 0.5), 1, t+1), FILE being a JSON list
of [alpha, beta] per query head (layer-major). The checkpoint reader and
the layers come from qada_measure.py, the project's float64 reference.
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qada_measure as qm  # noqa: E402  the float64 llama2.c layers


def retrieval(path, L, H):
    d = json.load(open(path))
    out = np.zeros(L * H)
    for key, scores in d.items():
        layer, head = (int(x) for x in key.split("-"))
        out[layer * H + head] = np.mean(np.asarray(scores, dtype=np.float64))
    return {"scores": out.tolist()}


def prulong(path):
    rows = [ln.split() for ln in open(path) if ln.strip() and not ln.lstrip().startswith("#")]
    return {"values": [float(v) for r in rows for v in r]}


def moa(path, L, H, KV, N):
    text = open(path).read()
    ab = np.zeros((L, H, 2))
    if text.lstrip().startswith("{"):
        d = json.loads(text)
        for l in range(L):
            a, b = np.asarray(d["alphas"][l], float), np.asarray(d["betas"][l], float)
            rep = H // len(a)
            ab[l, :, 0], ab[l, :, 1] = np.repeat(a, rep), np.repeat(b, rep)
    else:
        lines = [ln.rstrip("\r").split(",") for ln in text.split("\n") if ln.strip()]
        head = lines[0]
        col = {k: next(i for i, n in enumerate(head) if n in (k, k + "_id", k + "_value"))
               for k in ("layer", "head", "alpha", "beta")}
        rows = [(int(r[col["layer"]]), int(r[col["head"]]), float(r[col["alpha"]]), float(r[col["beta"]]))
                for r in lines[1:]]
        n_named = max(r[1] for r in rows) + 1
        rep = H // n_named
        for l, h, a, b in rows:
            ab[l, h * rep:(h + 1) * rep] = (a, b)
    return {"spans": (ab[:, :, 0] + ab[:, :, 1] * N).reshape(-1).tolist()}


def cut(scores, k):
    order = sorted(range(len(scores)), key=lambda c: (-scores[c], c))
    return {"heads": sorted(order[:k])}


def ranks(x):
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and x[order[j + 1]] == x[order[i]]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def spearman(a, b, mask=None):
    a, b = np.asarray(a, float), np.asarray(b, float)
    if mask is not None:
        keep = np.asarray(mask, bool)
        a, b = a[keep], b[keep]
    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = math.sqrt((ra * ra).sum() * (rb * rb).sum())
    return {"rho": None if den == 0 else float((ra * rb).sum() / den)}


def window_at(a, b, t):
    w = math.floor(a + b * (t + 1) + 0.5)
    return int(min(max(w, 1), t + 1))


def windows_forward(model, tokens, spans):
    cfg, w = qm.load_checkpoint(model)
    T, H, KV, hs = len(tokens), cfg["n_heads"], cfg["n_kv"], cfg["hs"]
    ang = qm.rope_angles(cfg, T)
    cos, sin = np.cos(ang), np.sin(ang)
    x = w["embed"][np.asarray(tokens)]
    keys = np.zeros((T, cfg["n_layers"] * H), dtype=int)
    for l in range(cfg["n_layers"]):
        h_in = qm.rmsnorm(x, w["att_norm"][l], cfg["eps"])
        q = qm.rotate((h_in @ w["wq"][l].T).reshape(T, H, hs), cos, sin)
        k = qm.rotate((h_in @ w["wk"][l].T).reshape(T, KV, hs), cos, sin)
        v = (h_in @ w["wv"][l].T).reshape(T, KV, hs)
        heads = []
        for h in range(H):
            a, b = spans[l * H + h]
            kv = h * KV // H
            out = np.zeros((T, hs))
            for t in range(T):
                wt = window_at(a, b, t)
                lo = t - wt + 1
                s = k[lo:t + 1, kv] @ q[t, h] / math.sqrt(hs)
                p = np.exp(s - s.max())
                out[t] = (p / p.sum()) @ v[lo:t + 1, kv]
                keys[t, l * H + h] = wt
            heads.append(out)
        x = x + np.concatenate(heads, axis=1) @ w["wo"][l].T
        f_in = qm.rmsnorm(x, w["ffn_norm"][l], cfg["eps"])
        g = f_in @ w["w1"][l].T
        x = x + ((g / (1.0 + np.exp(-g))) * (f_in @ w["w3"][l].T)) @ w["w2"][l].T
    logits = qm.rmsnorm(x, w["final_norm"], cfg["eps"]) @ w["cls"].T
    m = logits.max(axis=1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    lp = [None] + [float(logp[t - 1, tokens[t]]) for t in range(1, T)]
    group = H // KV
    kv_read = [int(sum(keys[t, l * H + g * group:l * H + (g + 1) * group].max()
                       for l in range(cfg["n_layers"]) for g in range(KV))) for t in range(T)]
    return {"logprob": lp, "keys_read": keys.tolist(), "kv_read": kv_read}


def main(argv):
    mode = argv[1]
    if mode == "retrieval":
        r = retrieval(argv[2], int(argv[3]), int(argv[4]))
    elif mode == "prulong":
        r = prulong(argv[2])
    elif mode == "moa":
        r = moa(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), float(argv[6]))
    elif mode == "cut":
        r = cut(json.load(open(argv[2])), int(argv[3]))
    elif mode == "spearman":
        r = spearman(json.load(open(argv[2])), json.load(open(argv[3])),
                     json.load(open(argv[4])) if len(argv) > 4 else None)
    elif mode == "windows":
        opt = dict(zip(argv[2::2], argv[3::2]))
        tokens = [int(t) for t in open(opt["--tokens"]).read().split()]
        r = windows_forward(opt["--model"], tokens, json.load(open(opt["--spans"])))
    else:
        raise SystemExit("unknown mode " + mode)
    print(json.dumps(r))


if __name__ == "__main__":
    main(sys.argv)
