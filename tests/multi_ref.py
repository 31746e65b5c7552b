#!/usr/bin/env python3
"""multi_ref.py - a multi-choice router's forward pass, recounted in float64 NumPy.

  multi_ref.py --model M --routers R --tokens IDS [--tau T]
      {"logprob": [...], "keys_read": [[...]], "choice": [[...]]}

Written from the definitions in engine/README.md ("The multi-choice
router") and app/COMMANDS.md, not from the C code: the router file is
safetensors whose metadata "windows" lists w_1 < ... < w_K and whose
tensor model.layers.{l}.self_attn.router.weight is [n_heads, K+1, dim].
At layer l the router reads the input that feeds W_Q (the attention
rmsnorm's output): z = W_r[h] x, K+1 logits. The head runs global (all
t+1 keys) when z_K - max_{k<K} z_k > logit(tau), else local in the window
w_k of the largest z_k (k < K, ties to the smaller k), reading keys
max(0, t-w+1) .. t. choice is k, or K for global. The checkpoint reader
and the layers come from qada_measure.py, the project's float64
reference.
"""
import json
import math
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qada_measure as qm  # noqa: E402  the float64 llama2.c layers


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    meta = head.pop("__metadata__", {})
    out = {}
    for name, t in head.items():
        assert t["dtype"] == "F32", name
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4").astype(np.float64).reshape(t["shape"])
    return meta, out


def choose(z, K, tau):
    best = 0
    for k in range(1, K):
        if z[k] > z[best]:
            best = k
    thr = -math.inf if tau <= 0 else math.inf if tau >= 1 else math.log(tau) - math.log1p(-tau)
    return K if z[K] - z[best] > thr else best


def forward(model, routers, tokens, tau):
    cfg, w = qm.load_checkpoint(model)
    meta, tensors = read_safetensors(routers)
    windows = [int(x) for x in meta["windows"].split(",")]
    K = len(windows)
    T, H, KV, hs = len(tokens), cfg["n_heads"], cfg["n_kv"], cfg["hs"]
    ang = qm.rope_angles(cfg, T)
    cos, sin = np.cos(ang), np.sin(ang)
    x = w["embed"][np.asarray(tokens)]
    keys = np.zeros((T, cfg["n_layers"] * H), dtype=int)
    choice = np.zeros((T, cfg["n_layers"] * H), dtype=int)
    for l in range(cfg["n_layers"]):
        h_in = qm.rmsnorm(x, w["att_norm"][l], cfg["eps"])
        wr = tensors["model.layers.%d.self_attn.router.weight" % l]  # [H, K+1, dim]
        q = qm.rotate((h_in @ w["wq"][l].T).reshape(T, H, hs), cos, sin)
        k = qm.rotate((h_in @ w["wk"][l].T).reshape(T, KV, hs), cos, sin)
        v = (h_in @ w["wv"][l].T).reshape(T, KV, hs)
        heads = []
        for h in range(H):
            kv = h * KV // H
            out = np.zeros((T, hs))
            for t in range(T):
                c = choose(wr[h] @ h_in[t], K, tau)
                lo = 0 if c == K else max(0, t - windows[c] + 1)
                s = k[lo:t + 1, kv] @ q[t, h] / math.sqrt(hs)
                p = np.exp(s - s.max())
                out[t] = (p / p.sum()) @ v[lo:t + 1, kv]
                keys[t, l * H + h] = t + 1 - lo
                choice[t, l * H + h] = c
            heads.append(out)
        x = x + np.concatenate(heads, axis=1) @ w["wo"][l].T
        f_in = qm.rmsnorm(x, w["ffn_norm"][l], cfg["eps"])
        g = f_in @ w["w1"][l].T
        x = x + ((g / (1.0 + np.exp(-g))) * (f_in @ w["w3"][l].T)) @ w["w2"][l].T
    logits = qm.rmsnorm(x, w["final_norm"], cfg["eps"]) @ w["cls"].T
    m = logits.max(axis=1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    lp = [None] + [float(logp[t - 1, tokens[t]]) for t in range(1, T)]
    return {"logprob": lp, "keys_read": keys.tolist(), "choice": choice.tolist()}


def main(argv):
    opt = dict(zip(argv[1::2], argv[2::2]))
    tokens = [int(t) for t in open(opt["--tokens"]).read().split()]
    print(json.dumps(forward(opt["--model"], opt["--routers"], tokens, float(opt.get("--tau", "0.5")))))


if __name__ == "__main__":
    main(sys.argv)
