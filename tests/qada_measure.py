#!/usr/bin/env python3
"""qada_measure.py - why QAdA's log-normal estimate fails, measured in float64.

An independent float64 NumPy forward pass of a llama2.c checkpoint (RMSNorm,
adjacent-pair RoPE with the angles rounded to float32 as the engine rounds
them, grouped-query attention, SwiGLU FFN, shared or separate classifier),
run with full attention over given token sequences. For every decision (a
position with at least one far key, every layer and query head) it keeps:

  n_far            keys outside the local set (the first `sinks` keys plus
                   the last `window` keys, the current one included)
  mean_far, sd_far mean and standard deviation (population) of the far scores
  lse_far          the true log of the far keys' exp-sum
  ceiling          log n_far + max far score: no set of n_far keys with that
                   maximum can sum to more
  lse_local        log-sum-exp of the local set's scores
  qada             log n_far + mean + var/2 over the window's scores (the
                   paper's estimate, sinks left out, as the engine computes it)
  qada_bulk        log n_far + mean_far + var_far/2, the exact far moments
                   (the project's ablation; equal to the engine's q·mu, q'Sq form)
  qada_rem         this project's REM-corrected QAdA (not the paper's): the
                   same as qada while sd <= sqrt(2 ln n_far), else
                   mean + sd * sqrt(2 ln n_far), the random-energy model's
                   frozen-phase log-sum (continuous at the boundary)
  qada_rem_bulk    the same correction on the exact far moments
  oracle           far mass = 1 / (1 + exp(lse_local - lse_far))

Scores are q.k / sqrt(head_size). An estimate's log-odds is est - lse_local;
the AUC ranks decisions by it against the oracle label far mass > theta.
The synthetic check redraws each decision's far scores as n_far exactly
Gaussian samples of the same mean and sd and applies the bulk estimate to them.

  qada_measure.py --db runs.db [--run N ...] [--pack 512] [--max-seqs N] [--window W]
                  [--sinks S] [--theta X] [--json] [--dump FILE] [--synthetic N] [--seed S]
  qada_measure.py --model PATH --tokens FILE ...   (one sequence a line, ids)

Without --model the checkpoint is the run's model if it exists, else
$AHASCOPE_SHARED/models/stories260K/stories260K.bin. Window, sinks and theta
default to the runs table's. --pack LEN concatenates the sequences in order
and cuts them into LEN-token sequences (as `ahascope eval --self` packs
stories). The forward is always full attention: with --db and no --pack,
every decision of a run recorded under `--policy full` at the same window and
sinks that holds an oracle value (oracle_logit, or the older oracle_mass) is
compared with ours; other runs are measured but not compared.
--dump writes one CSV row per decision: seq,pos,layer,head,n_far,oracle_mass,
qada_mass,qada_bulk_mass,qada_rem_mass,qada_rem_bulk_mass,far_mean,far_std.
"""
import argparse
import json
import math
import os
import sqlite3
import struct
import sys

import numpy as np


# ---------------------------------------------------------------- the model

def load_checkpoint(path):
    raw = open(path, "rb").read()
    (magic,) = struct.unpack_from("<I", raw, 0)
    if magic == 0x616B3432:  # "ak42": version 1, 256-byte header
        _, ver, dim, hidden, n_layers, n_heads, n_kv, vocab, seq_len = struct.unpack_from("<9i", raw, 0)
        if ver != 1:
            raise SystemExit("%s: unsupported ak42 version %d" % (path, ver))
        shared = raw[36] == 1
        offset, order = 256, "v1"
    else:
        dim, hidden, n_layers, n_heads, n_kv, vocab, seq_len = struct.unpack_from("<7i", raw, 0)
        shared = vocab > 0
        vocab = abs(vocab)
        offset, order = 28, "v0"
    hs = dim // n_heads
    flat = np.frombuffer(raw, dtype="<f4", offset=offset).astype(np.float64)
    pos = [0]

    def take(*shape):
        n = int(np.prod(shape))
        a = flat[pos[0]:pos[0] + n].reshape(shape)
        pos[0] += n
        return a

    w = {}
    if order == "v1":
        w["att_norm"] = take(n_layers, dim)
        w["ffn_norm"] = take(n_layers, dim)
        w["final_norm"] = take(dim)
        w["embed"] = take(vocab, dim)
    else:
        w["embed"] = take(vocab, dim)
        w["att_norm"] = take(n_layers, dim)
    w["wq"] = take(n_layers, n_heads * hs, dim)
    w["wk"] = take(n_layers, n_kv * hs, dim)
    w["wv"] = take(n_layers, n_kv * hs, dim)
    w["wo"] = take(n_layers, dim, n_heads * hs)
    if order == "v0":
        w["ffn_norm"] = take(n_layers, dim)
    w["w1"] = take(n_layers, hidden, dim)
    w["w2"] = take(n_layers, dim, hidden)
    w["w3"] = take(n_layers, hidden, dim)
    if order == "v0":
        w["final_norm"] = take(dim)
        take(seq_len * hs)  # the legacy RoPE tables, never used
    w["cls"] = w["embed"] if shared else take(vocab, dim)
    cfg = dict(dim=dim, hidden=hidden, n_layers=n_layers, n_heads=n_heads, n_kv=n_kv, vocab=vocab,
               seq_len=seq_len, hs=hs, eps=1e-5)
    return cfg, w


def rope_angles(cfg, n):
    """Angle of pair j (dims 2j, 2j+1 of a head) at positions 0..n-1. The
    engine follows llama2.c and forms them in float32: freq = 1/10000^(2j/hs),
    angle = t*freq, each rounded to float32; the rotation itself is float64."""
    hs = cfg["hs"]
    two_j = np.arange(0, hs, 2, dtype=np.float32)
    freq = np.float32(1.0) / np.power(np.float32(10000.0), two_j / np.float32(hs))
    t = np.arange(n, dtype=np.float32)[:, None]
    return (t * freq[None, :]).astype(np.float64)  # float32 product, then widened


def rotate(x, cos, sin):
    """x: (T, heads, hs); rotate each adjacent pair (x0, x1) by its angle."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def rmsnorm(x, g, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g


def forward(cfg, w, tokens):
    """Full-attention forward over one sequence. Returns the logits and, per
    layer, the rotated queries (T, H, hs) and keys (T, KV, hs)."""
    T, H, KV, hs = len(tokens), cfg["n_heads"], cfg["n_kv"], cfg["hs"]
    ang = rope_angles(cfg, T)
    cos, sin = np.cos(ang), np.sin(ang)
    causal = np.tril(np.ones((T, T), dtype=bool))
    x = w["embed"][np.asarray(tokens)]
    qk = []
    for l in range(cfg["n_layers"]):
        h_in = rmsnorm(x, w["att_norm"][l], cfg["eps"])
        q = rotate((h_in @ w["wq"][l].T).reshape(T, H, hs), cos, sin)
        k = rotate((h_in @ w["wk"][l].T).reshape(T, KV, hs), cos, sin)
        v = (h_in @ w["wv"][l].T).reshape(T, KV, hs)
        qk.append((q, k))
        heads = []
        for h in range(H):
            kv = h * KV // H  # query heads h of one group share a KV head
            s = np.where(causal, q[:, h] @ k[:, kv].T / math.sqrt(hs), -np.inf)
            p = np.exp(s - s.max(axis=1, keepdims=True))
            heads.append((p / p.sum(axis=1, keepdims=True)) @ v[:, kv])
        x = x + np.concatenate(heads, axis=1) @ w["wo"][l].T
        f_in = rmsnorm(x, w["ffn_norm"][l], cfg["eps"])
        a = f_in @ w["w1"][l].T
        x = x + ((a / (1.0 + np.exp(-a))) * (f_in @ w["w3"][l].T)) @ w["w2"][l].T
    logits = rmsnorm(x, w["final_norm"], cfg["eps"]) @ w["cls"].T
    return logits, qk


# ---------------------------------------------------------- the decisions

def local_sets(T, window, sinks):
    """Per position t: sinks ns = min(S, t+1) and window start lo, with far
    keys [ns, lo) and local keys [0, ns) + [lo, t]."""
    t = np.arange(T)
    ns = np.minimum(sinks, t + 1)
    lo = np.maximum(t - window + 1, ns)
    return ns, lo


def masked_lse(s, mask):
    m = np.where(mask, s, -np.inf).max(axis=1)
    safe = np.where(np.isfinite(m), m, 0.0)
    z = np.where(mask, np.exp(np.where(mask, s, 0.0) - safe[:, None]), 0.0).sum(axis=1)
    with np.errstate(divide="ignore"):
        return safe + np.log(z), m


def masked_moments(s, mask, n):
    mean = np.where(mask, s, 0.0).sum(axis=1) / n
    dev = np.where(mask, s - mean[:, None], 0.0)
    var = (dev * dev).sum(axis=1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        skew = np.where(var > 0, (dev ** 3).sum(axis=1) / n / var ** 1.5, 0.0)
    return mean, var, skew


def decisions(cfg, qk, window, sinks):
    """Every decision of one sequence, as a dict of equal-length arrays."""
    T = qk[0][0].shape[0]
    H, KV, hs = cfg["n_heads"], cfg["n_kv"], cfg["hs"]
    ns, lo = local_sets(T, window, sinks)
    rows = np.flatnonzero(lo > ns)  # positions with at least one far key
    out = {k: [] for k in ("pos", "layer", "head", "n_far", "mean_far", "var_far", "skew_far", "max_far", "lse_far",
                           "lse_local", "mean_win", "var_win")}
    if len(rows) == 0:
        return {k: np.zeros(0) for k in out}
    i = np.arange(T)[None, :]
    t = rows[:, None]
    far = (i >= ns[rows][:, None]) & (i < lo[rows][:, None])
    win = (i >= lo[rows][:, None]) & (i <= t)
    local = win | (i < ns[rows][:, None])
    n_far = (lo - ns)[rows].astype(np.float64)
    n_win = (rows - lo[rows] + 1).astype(np.float64)
    for l, (q, k) in enumerate(qk):
        for h in range(H):
            s = q[rows, h] @ k[:, h * KV // H].T / math.sqrt(hs)
            lse_far, max_far = masked_lse(s, far)
            lse_loc, _ = masked_lse(s, local)
            mf, vf, kf = masked_moments(s, far, n_far)
            mw, vw, _ = masked_moments(s, win, n_win)
            for key, val in (("pos", rows), ("layer", np.full(len(rows), l)), ("head", np.full(len(rows), h)),
                             ("n_far", n_far), ("mean_far", mf), ("var_far", vf), ("skew_far", kf), ("max_far", max_far),
                             ("lse_far", lse_far), ("lse_local", lse_loc), ("mean_win", mw), ("var_win", vw)):
                out[key].append(val)
    return {k: np.concatenate(v) for k, v in out.items()}


def sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # overflow-free 1/(1+exp(-z))


def auc(score, label):
    """P(score of a positive > score of a negative), ties counted half."""
    pos = label.sum()
    neg = len(label) - pos
    if pos == 0 or neg == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    sorted_s = score[order]
    ranks = np.empty(len(score))
    # average rank over each run of equal scores
    starts = np.flatnonzero(np.r_[True, sorted_s[1:] != sorted_s[:-1]])
    ends = np.r_[starts[1:], len(score)]
    avg = (starts + ends + 1) / 2.0
    ranks[order] = np.repeat(avg, ends - starts)
    return float((ranks[label].sum() - pos * (pos + 1) / 2.0) / (pos * neg))


def synthetic(d, theta, max_n, rng):
    """Redraw far scores as exactly Gaussian samples with each decision's own
    mean, sd and n_far; apply the bulk estimate to the sample's moments."""
    idx = np.arange(len(d["n_far"]))
    if len(idx) > max_n:
        idx = np.sort(rng.choice(idx, max_n, replace=False))
    over = np.zeros(len(idx), dtype=bool)
    z_max = np.zeros(len(idx))
    gap = np.zeros(len(idx))
    logit_est = np.zeros(len(idx))
    logit_true = np.zeros(len(idx))
    for j, r in enumerate(idx):
        n = int(d["n_far"][r])
        x = rng.normal(d["mean_far"][r], math.sqrt(d["var_far"][r]), n)
        m = x.max()
        lse = m + math.log(np.exp(x - m).sum())
        est = math.log(n) + x.mean() + 0.5 * x.var()
        over[j] = est > math.log(n) + m
        z_max[j] = (m - x.mean()) / max(x.std(), 1e-300)
        gap[j] = est - lse
        logit_est[j] = est - d["lse_local"][r]
        logit_true[j] = lse - d["lse_local"][r]
    label = sigmoid(logit_true) > theta
    return {"decisions": int(len(idx)), "bulk_over_ceiling": float(over.mean()),
            "median_overshoot": float(np.median(gap)), "median_z_max": float(np.median(z_max)), "oracle_rate": float(label.mean()),
            "auc_bulk": auc(logit_est, label)}


def rem_est(log_n, mean, var):
    """REM-corrected log-sum of n Gaussian scores: the log-normal mean below
    sd = sqrt(2 ln n), the frozen-phase mean + sd sqrt(2 ln n) above."""
    sd, edge = np.sqrt(np.maximum(var, 0.0)), np.sqrt(2.0 * log_n)
    return np.where(sd <= edge, log_n + mean + 0.5 * var, mean + sd * edge)


def summarise(d, theta, synth_n, seed):
    n_far, sd = d["n_far"], np.sqrt(d["var_far"])
    log_n = np.log(n_far)
    est = {"qada": log_n + d["mean_win"] + 0.5 * d["var_win"],
           "qada_bulk": log_n + d["mean_far"] + 0.5 * d["var_far"],
           "qada_rem": rem_est(log_n, d["mean_win"], d["var_win"]),
           "qada_rem_bulk": rem_est(log_n, d["mean_far"], d["var_far"])}
    ceiling = log_n + d["max_far"]
    oracle_logit = d["lse_far"] - d["lse_local"]
    label = sigmoid(oracle_logit) > theta
    tail = np.sqrt(2.0 * log_n)
    med_n = float(np.median(n_far))
    res = {"decisions": int(len(n_far)), "oracle_rate": float(label.mean()),
           "median_n_far": med_n, "median_sd_far": float(np.median(sd)),
           "sqrt_2ln_median_n_far": math.sqrt(2.0 * math.log(med_n)),
           "share_sd_above_sqrt_2ln_n": float((sd > tail).mean()),
           "share_sd_above_2sqrt_2ln_n": float((sd > 2 * tail).mean()),
           "median_true_minus_ceiling": float(np.median(d["lse_far"] - ceiling)),
           "median_z_max_far": float(np.median((d["max_far"] - d["mean_far"]) / np.maximum(sd, 1e-300))),
           "median_sd_win": float(np.median(np.sqrt(d["var_win"]))),
           "median_mean_win_minus_mean_far": float(np.median(d["mean_win"] - d["mean_far"])),
           "qada_mean_term_over_ceiling": float((d["mean_win"] > d["max_far"]).mean()),
           "median_skew_far": float(np.median(d["skew_far"])),
           "auc_var_far_alone": auc(d["var_far"], label), "auc_var_win_alone": auc(d["var_win"], label),
           "predictors": {}}
    for name, e in est.items():
        logit = e - d["lse_local"]
        pred = sigmoid(logit) > theta
        tp = int((pred & label).sum())
        res["predictors"][name] = {
            "over_ceiling": float((e > ceiling).mean()),
            "median_overshoot": float(np.median(e - d["lse_far"])),
            "auc": auc(logit, label),
            "global_rate": float(pred.mean()),
            "precision": tp / max(int(pred.sum()), 1), "recall": tp / max(int(label.sum()), 1)}
    res["auc_ceiling"] = auc(ceiling - d["lse_local"], label)
    if synth_n > 0:
        res["synthetic_gaussian"] = synthetic(d, theta, synth_n, np.random.default_rng(seed))
    return res


# ---------------------------------------------------------------- input

def runs_from_db(path, wanted):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    cols = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
    ids = wanted or [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id")]
    runs = []
    for rid in ids:
        row = con.execute("SELECT model, window, sinks, theta, policy FROM runs WHERE run_id = ?",
                          (rid,)).fetchone()
        if row is None:
            raise SystemExit("%s: no run %d" % (path, rid))
        toks = [r[0] for r in con.execute("SELECT token_id FROM tokens WHERE run_id = ? ORDER BY pos", (rid,))]
        runs.append({"run_id": rid, "model": row[0], "window": row[1], "sinks": row[2] or 0, "theta": row[3],
                     "policy": row[4], "tokens": toks})
    return con, cols, runs


def db_oracle(con, rid):
    """The engine's oracle far mass per (pos, layer, head) of a run, from
    oracle_logit (log-odds) when the table has it, else oracle_mass."""
    cols = [r[1] for r in con.execute("PRAGMA table_info(decisions)")]
    col = "oracle_logit" if "oracle_logit" in cols else "oracle_mass" if "oracle_mass" in cols else None
    if col is None:
        return None, None
    got = {}
    for pos, l, h, v in con.execute("SELECT pos, layer, head, %s FROM decisions WHERE run_id = ? AND %s IS NOT NULL"
                                    % (col, col), (rid,)):
        got[(pos, l, h)] = 1.0 / (1.0 + math.exp(-v)) if col == "oracle_logit" else v
    return col, got


def default_model(db_model):
    if db_model and os.path.isfile(db_model):
        return db_model
    shared = os.environ.get("AHASCOPE_SHARED") or os.path.join(os.path.dirname(__file__), "..", "..", "shared")
    return os.path.join(shared, "models", "stories260K", "stories260K.bin")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model")
    ap.add_argument("--tokens", help="token ids, one sequence a line")
    ap.add_argument("--db")
    ap.add_argument("--run", type=int, action="append", help="run id (repeatable; default every run)")
    ap.add_argument("--pack", type=int, default=0, help="concatenate and cut into sequences of this length")
    ap.add_argument("--max-seqs", type=int, default=0)
    ap.add_argument("--window", type=int)
    ap.add_argument("--sinks", type=int)
    ap.add_argument("--theta", type=float)
    ap.add_argument("--synthetic", type=int, default=20000, help="decisions redrawn as Gaussian (0: none)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dump", help="per-decision CSV")
    args = ap.parse_args()
    if bool(args.db) == bool(args.tokens):
        ap.error("give exactly one of --db and --tokens")

    con, runs, src = None, [], ""
    if args.db:
        con, _, runs = runs_from_db(args.db, args.run)
        seqs = [r["tokens"] for r in runs]
        src = "%s, %d run(s)" % (args.db, len(runs))
    else:
        seqs = [[int(x) for x in line.split()] for line in open(args.tokens) if line.strip()]
        src = args.tokens
    first = runs[0] if runs else {}
    window = args.window if args.window is not None else first.get("window")
    sinks = args.sinks if args.sinks is not None else first.get("sinks", 0)
    theta = args.theta if args.theta is not None else (first.get("theta") or 0.1)
    theta = float("%.6g" % theta)  # the runs table holds a float32's widening
    if window is None:
        ap.error("--window is needed with --tokens")
    model = args.model or default_model(first.get("model"))
    cfg, w = load_checkpoint(model)
    if args.pack:
        cat = [t for s in seqs for t in s]
        seqs = [cat[i:i + args.pack] for i in range(0, len(cat) - args.pack + 1, args.pack)]
    if args.max_seqs:
        seqs = seqs[:args.max_seqs]
    check = con is not None and not args.pack
    parts, worst, compared, col = [], 0.0, 0, None
    dump = open(args.dump, "w") if args.dump else None
    if dump:
        dump.write("seq,pos,layer,head,n_far,oracle_mass,qada_mass,qada_bulk_mass,qada_rem_mass,qada_rem_bulk_mass,"
                   "far_mean,far_std\n")
    for si, toks in enumerate(seqs):
        toks = toks[:cfg["seq_len"]]
        _, qk = forward(cfg, w, toks)
        d = decisions(cfg, qk, window, sinks)
        parts.append(d)
        oracle = sigmoid(d["lse_far"] - d["lse_local"])
        if dump:
            log_n = np.log(d["n_far"])
            qa = sigmoid(log_n + d["mean_win"] + 0.5 * d["var_win"] - d["lse_local"])
            qb = sigmoid(log_n + d["mean_far"] + 0.5 * d["var_far"] - d["lse_local"])
            ra = sigmoid(rem_est(log_n, d["mean_win"], d["var_win"]) - d["lse_local"])
            rb = sigmoid(rem_est(log_n, d["mean_far"], d["var_far"]) - d["lse_local"])
            sd = np.sqrt(d["var_far"])
            for j in range(len(oracle)):
                dump.write("%d,%d,%d,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n" % (
                    si, d["pos"][j], d["layer"][j], d["head"][j], d["n_far"][j], oracle[j], qa[j], qb[j], ra[j], rb[j],
                    d["mean_far"][j], sd[j]))
        r = runs[si] if check else None
        if r and r["window"] == window and (r["sinks"] or 0) == sinks and r["policy"] == "full":
            col, got = db_oracle(con, r["run_id"])
            for j in range(len(oracle)):
                v = got.get((int(d["pos"][j]), int(d["layer"][j]), int(d["head"][j]))) if got else None
                if v is not None:
                    worst = max(worst, abs(v - oracle[j]))
                    compared += 1
    if dump:
        dump.close()
    d = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    res = {"model": os.path.abspath(model), "source": src, "sequences": len(seqs), "tokens": int(sum(min(len(s), cfg["seq_len"])
                                                                                   for s in seqs)),
           "window": window, "sinks": sinks, "theta": theta}
    res.update(summarise(d, theta, args.synthetic, args.seed))
    if compared:
        res["engine_check"] = {"column": col, "decisions": compared, "max_abs_oracle_mass_diff": worst}
    if args.json:
        print(json.dumps(res, indent=1))
        return
    print("%s: %d sequences, %d tokens; window %d, sinks %d, theta %g; %d decisions (oracle global %.1f%%)"
          % (res["source"], res["sequences"], res["tokens"], window, sinks, theta, res["decisions"],
             100 * res["oracle_rate"]))
    print("median n_far %.0f, sqrt(2 ln median n_far) %.2f, median sd_far %.2f" %
          (res["median_n_far"], res["sqrt_2ln_median_n_far"], res["median_sd_far"]))
    print("sd_far > sqrt(2 ln n_far) in %.1f%% of decisions, > 2 sqrt(2 ln n_far) in %.1f%%" %
          (100 * res["share_sd_above_sqrt_2ln_n"], 100 * res["share_sd_above_2sqrt_2ln_n"]))
    print("%-10s %14s %18s %7s %8s %9s %6s" % ("estimate", "> ceiling", "median est-true", "AUC", "global",
                                               "precision", "recall"))
    for name, p in res["predictors"].items():
        print("%-10s %13.1f%% %18.2f %7.3f %7.1f%% %9.3f %6.3f" % (name, 100 * p["over_ceiling"],
              p["median_overshoot"], p["auc"], 100 * p["global_rate"], p["precision"], p["recall"]))
    print("AUC of the ceiling itself (log n_far + max far score): %.3f; of var_far alone %.3f, var_win alone %.3f"
          % (res["auc_ceiling"], res["auc_var_far_alone"], res["auc_var_win_alone"]))
    print("median (max far score - mean) / sd_far: %.2f; median skewness of the far scores %.2f"
          % (res["median_z_max_far"], res["median_skew_far"]))
    print("qada's window: median sd %.2f, median mean_win - mean_far %.2f; log n_far + mean_win alone > ceiling in %.1f%%"
          % (res["median_sd_win"], res["median_mean_win_minus_mean_far"], 100 * res["qada_mean_term_over_ceiling"]))
    if "synthetic_gaussian" in res:
        g = res["synthetic_gaussian"]
        print("exactly Gaussian far scores (same n_far, mean, sd; %d decisions): bulk estimate > ceiling in %.1f%%, "
              "median est-true %.2f, median (max - mean) / sd %.2f, oracle global %.1f%%, AUC %.3f"
              % (g["decisions"], 100 * g["bulk_over_ceiling"], g["median_overshoot"], g["median_z_max"],
                 100 * g["oracle_rate"], g["auc_bulk"]))
    if con is not None and not compared:
        print("engine check: none (no profiled --policy full run at this window and sinks, or --pack)")
    if compared:
        print("engine check: %d decisions, max |oracle mass - db %s| = %.2g" % (compared, col, worst))


if __name__ == "__main__":
    main()
