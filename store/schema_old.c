/* schema_old.c — the statements older versions created, frozen, for the tamper check.
 *
 * The schemas older versions created, frozen as they were
 * written. SQLite keeps a CREATE statement's text verbatim, so a file made
 * by an older version is checked against that version's text (and, once
 * upgraded, against that text upgraded). Never edit one: files in the
 * wild hold exactly these statements. When STORE_SCHEMA_VERSION goes up,
 * the version it leaves is added here, as a new file makes it. */
#include <stddef.h>

#include <string.h>

#include "store/internal.h"

/* Version 1: probabilities, no n_far / kv_read / theta_logit. */
static const char SCHEMA_V1[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decisions(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,\n"
    "  score REAL, gate INTEGER, oracle_mass REAL, oracle_err REAL, qada_mass REAL,\n"
    "  qada_bulk_mass REAL, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, pos, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW predictions AS\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n"
    "    CASE p.predictor WHEN 'executed' THEN d.gate WHEN 'aha' THEN d.score > r.tau\n"
    "      WHEN 'qada' THEN d.qada_mass > r.theta WHEN 'qada_bulk' THEN d.qada_bulk_mass > r.theta END\n"
    "      AS predicted,\n"
    "    d.oracle_mass > r.theta AS oracle\n"
    "  FROM decisions d JOIN runs r USING(run_id)\n"
    "  CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n"
    "              UNION ALL SELECT 'qada_bulk') p;\n"
    "CREATE VIEW head_rates AS\n"
    "  SELECT d.run_id, d.layer, d.head, COUNT(*) AS n, AVG(d.gate) AS global_rate,\n"
    "    AVG(d.oracle_mass > r.theta) AS oracle_rate, AVG(d.score > r.tau) AS aha_rate,\n"
    "    AVG(d.qada_mass > r.theta) AS qada_rate, AVG(d.qada_bulk_mass > r.theta) AS qada_bulk_rate,\n"
    "    AVG(d.score) AS mean_score, AVG(d.oracle_mass) AS mean_oracle_mass,\n"
    "    AVG(d.oracle_err) AS mean_oracle_err, SUM(d.keys_read) AS keys_read\n"
    "  FROM decisions d JOIN runs r USING(run_id) GROUP BY d.run_id, d.layer, d.head;\n"
    "CREATE VIEW layer_rates AS\n"
    "  SELECT d.run_id, d.layer, COUNT(*) AS n, AVG(d.gate) AS global_rate,\n"
    "    AVG(d.oracle_mass > r.theta) AS oracle_rate, AVG(d.score > r.tau) AS aha_rate,\n"
    "    AVG(d.qada_mass > r.theta) AS qada_rate, AVG(d.qada_bulk_mass > r.theta) AS qada_bulk_rate,\n"
    "    AVG(d.oracle_mass) AS mean_oracle_mass, SUM(d.keys_read) AS keys_read\n"
    "  FROM decisions d JOIN runs r USING(run_id) GROUP BY d.run_id, d.layer;\n"
    "CREATE VIEW token_share AS\n"
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob,\n"
    "    AVG(d.gate) AS global_share, AVG(d.oracle_mass > r.theta) AS oracle_share,\n"
    "    SUM(d.keys_read) AS keys_read, COUNT(*) * (t.pos + 1) AS keys_full,\n"
    "    SUM(d.keys_read) * 1.0 / (COUNT(*) * (t.pos + 1)) AS keys_read_frac\n"
    "  FROM tokens t JOIN decisions d USING(run_id, pos) JOIN runs r USING(run_id)\n"
    "  GROUP BY t.run_id, t.pos;\n"
    "CREATE VIEW confusion_head AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor, layer, head,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor, layer, head);\n"
    "CREATE VIEW confusion AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor);\n"
    "CREATE VIEW run_summary AS\n"
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n"
    "    (SELECT AVG(gate) FROM decisions d WHERE d.run_id = r.run_id) AS global_share,\n"
    "    (SELECT AVG(d.oracle_mass > r.theta) FROM decisions d WHERE d.run_id = r.run_id) AS oracle_share,\n"
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS keys_read_frac,\n"
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n"
    "      AS perplexity\n"
    "  FROM runs r;\n";

/* Version 2: log-odds, n_far and kv_read, masses and decided (no attn_top). */
static const char SCHEMA_V2[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decisions(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, gate INTEGER, score REAL, oracle_logit REAL, oracle_err REAL, qada_logit REAL, qada_bulk_logit REAL, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, pos, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW masses AS\n"
    "  SELECT run_id, pos, layer, head, 1.0 / (1.0 + EXP(-oracle_logit)) AS oracle_mass,\n"
    "    1.0 / (1.0 + EXP(-qada_logit)) AS qada_mass, 1.0 / (1.0 + EXP(-qada_bulk_logit)) AS qada_bulk_mass\n"
    "  FROM decisions;\n"
    "CREATE VIEW decided AS\n"
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t USING(run_id, pos)\n"
    "  WHERE t.n_far IS NOT 0;\n"
    "CREATE VIEW predictions AS\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n"
    "    CASE p.predictor WHEN 'executed' THEN d.gate WHEN 'aha' THEN d.score > d.tau\n"
    "      WHEN 'qada' THEN d.qada_logit > d.theta_logit WHEN 'qada_bulk' THEN d.qada_bulk_logit > d.theta_logit END\n"
    "      AS predicted,\n"
    "    d.oracle_logit > d.theta_logit AS oracle\n"
    "  FROM decided d\n"
    "  CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n"
    "              UNION ALL SELECT 'qada_bulk') p;\n"
    "CREATE VIEW head_rates AS\n"
    "  SELECT run_id, layer, head, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(score) AS mean_score, AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass,\n"
    "    AVG(oracle_err) AS mean_oracle_err, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer, head;\n"
    "CREATE VIEW layer_rates AS\n"
    "  SELECT run_id, layer, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer;\n"
    "CREATE VIEW token_share AS\n"
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.gate) END AS global_share,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.oracle_logit > r.theta_logit) END AS oracle_share,\n"
    "    SUM(d.keys_read) AS keys_read, COUNT(*) * (t.pos + 1) AS keys_full,\n"
    "    SUM(d.keys_read) * 1.0 / (COUNT(*) * (t.pos + 1)) AS keys_read_frac,\n"
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n"
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n"
    "  FROM tokens t JOIN decisions d USING(run_id, pos) JOIN runs r USING(run_id)\n"
    "  GROUP BY t.run_id, t.pos;\n"
    "CREATE VIEW confusion_head AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor, layer, head,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor, layer, head);\n"
    "CREATE VIEW confusion AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor);\n"
    "CREATE VIEW run_summary AS\n"
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n"
    "    (SELECT AVG(gate) FROM decided d WHERE d.run_id = r.run_id) AS global_share,\n"
    "    (SELECT AVG(d.oracle_logit > d.theta_logit) FROM decided d WHERE d.run_id = r.run_id) AS oracle_share,\n"
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS keys_read_frac,\n"
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS kv_read_frac,\n"
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n"
    "      AS perplexity\n"
    "  FROM runs r;\n";

/* Version 2 as the version-2 build left a version-1 file it upgraded:
 * ALTER TABLE's edits in the CREATE text of runs, evals and tokens, and
 * decisions rebuilt (dumped, in creation order, from the committed
 * version-1 fixture upgraded by that build, commit 3432682). */
static const char SCHEMA_V2_FROM_V1[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0\n"
    ", theta_logit REAL);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT\n"
    ", theta_logit REAL, kv_read_frac REAL);\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL, n_far INTEGER, kv_read INTEGER,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decisions(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, gate INTEGER, score REAL, oracle_logit REAL, oracle_err REAL, qada_logit REAL, qada_bulk_logit REAL, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, pos, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW masses AS\n"
    "  SELECT run_id, pos, layer, head, 1.0 / (1.0 + EXP(-oracle_logit)) AS oracle_mass,\n"
    "    1.0 / (1.0 + EXP(-qada_logit)) AS qada_mass, 1.0 / (1.0 + EXP(-qada_bulk_logit)) AS qada_bulk_mass\n"
    "  FROM decisions;\n"
    "CREATE VIEW decided AS\n"
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t USING(run_id, pos)\n"
    "  WHERE t.n_far IS NOT 0;\n"
    "CREATE VIEW predictions AS\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n"
    "    CASE p.predictor WHEN 'executed' THEN d.gate WHEN 'aha' THEN d.score > d.tau\n"
    "      WHEN 'qada' THEN d.qada_logit > d.theta_logit WHEN 'qada_bulk' THEN d.qada_bulk_logit > d.theta_logit END\n"
    "      AS predicted,\n"
    "    d.oracle_logit > d.theta_logit AS oracle\n"
    "  FROM decided d\n"
    "  CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n"
    "              UNION ALL SELECT 'qada_bulk') p;\n"
    "CREATE VIEW head_rates AS\n"
    "  SELECT run_id, layer, head, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(score) AS mean_score, AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass,\n"
    "    AVG(oracle_err) AS mean_oracle_err, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer, head;\n"
    "CREATE VIEW layer_rates AS\n"
    "  SELECT run_id, layer, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer;\n"
    "CREATE VIEW token_share AS\n"
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.gate) END AS global_share,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.oracle_logit > r.theta_logit) END AS oracle_share,\n"
    "    SUM(d.keys_read) AS keys_read, COUNT(*) * (t.pos + 1) AS keys_full,\n"
    "    SUM(d.keys_read) * 1.0 / (COUNT(*) * (t.pos + 1)) AS keys_read_frac,\n"
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n"
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n"
    "  FROM tokens t JOIN decisions d USING(run_id, pos) JOIN runs r USING(run_id)\n"
    "  GROUP BY t.run_id, t.pos;\n"
    "CREATE VIEW confusion_head AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor, layer, head,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor, layer, head);\n"
    "CREATE VIEW confusion AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor);\n"
    "CREATE VIEW run_summary AS\n"
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n"
    "    (SELECT AVG(gate) FROM decided d WHERE d.run_id = r.run_id) AS global_share,\n"
    "    (SELECT AVG(d.oracle_logit > d.theta_logit) FROM decided d WHERE d.run_id = r.run_id) AS oracle_share,\n"
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS keys_read_frac,\n"
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS kv_read_frac,\n"
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n"
    "      AS perplexity\n"
    "  FROM runs r;\n";

/* Version 3: one column per per-head field, attn_top rows; as a new file got it. */
static const char SCHEMA_V3[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE attn_top(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,\n"
    "  rank INTEGER NOT NULL, key_pos INTEGER NOT NULL, weight REAL NOT NULL,\n"
    "  PRIMARY KEY(run_id, pos, layer, head, rank)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decisions(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, gate INTEGER, score REAL, oracle_logit REAL, oracle_err REAL, qada_logit REAL, qada_bulk_logit REAL, keys_read INTEGER, qada_rem_logit REAL, qada_rem_bulk_logit REAL, far_mean REAL, far_std REAL,\n"
    "  PRIMARY KEY(run_id, pos, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW masses AS\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, 1.0 / (1.0 + EXP(-d.oracle_logit)) AS oracle_mass,\n"
    "    1.0 / (1.0 + EXP(-d.qada_logit)) AS qada_mass, 1.0 / (1.0 + EXP(-d.qada_bulk_logit)) AS qada_bulk_mass,\n"
    "    1.0 / (1.0 + EXP(-d.qada_rem_logit)) AS qada_rem_mass,\n"
    "    1.0 / (1.0 + EXP(-d.qada_rem_bulk_logit)) AS qada_rem_bulk_mass,\n"
    "    CASE WHEN t.n_far > 1 THEN d.far_std / SQRT(2 * LN(t.n_far)) END AS regime\n"
    "  FROM decisions d LEFT JOIN tokens t USING(run_id, pos);\n"
    "CREATE VIEW decided AS\n"
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t USING(run_id, pos)\n"
    "  WHERE t.n_far IS NOT 0;\n"
    "CREATE VIEW predictions AS\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n"
    "    CASE p.predictor WHEN 'executed' THEN d.gate WHEN 'aha' THEN d.score > d.tau\n"
    "      WHEN 'qada' THEN d.qada_logit > d.theta_logit WHEN 'qada_bulk' THEN d.qada_bulk_logit > d.theta_logit\n"
    "      WHEN 'qada_rem' THEN d.qada_rem_logit > d.theta_logit\n"
    "      WHEN 'qada_rem_bulk' THEN d.qada_rem_bulk_logit > d.theta_logit END\n"
    "      AS predicted,\n"
    "    d.oracle_logit > d.theta_logit AS oracle\n"
    "  FROM decided d\n"
    "  CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n"
    "              UNION ALL SELECT 'qada_bulk' UNION ALL SELECT 'qada_rem' UNION ALL SELECT 'qada_rem_bulk') p;\n"
    "CREATE VIEW head_rates AS\n"
    "  SELECT run_id, layer, head, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(qada_rem_logit > theta_logit) AS qada_rem_rate,\n"
    "    AVG(qada_rem_bulk_logit > theta_logit) AS qada_rem_bulk_rate,\n"
    "    AVG(score) AS mean_score, AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass,\n"
    "    AVG(oracle_err) AS mean_oracle_err, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer, head;\n"
    "CREATE VIEW layer_rates AS\n"
    "  SELECT run_id, layer, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(qada_rem_logit > theta_logit) AS qada_rem_rate,\n"
    "    AVG(qada_rem_bulk_logit > theta_logit) AS qada_rem_bulk_rate,\n"
    "    AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer;\n"
    "CREATE VIEW token_share AS\n"
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.gate) END AS global_share,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.oracle_logit > r.theta_logit) END AS oracle_share,\n"
    "    SUM(d.keys_read) AS keys_read, COUNT(*) * (t.pos + 1) AS keys_full,\n"
    "    SUM(d.keys_read) * 1.0 / (COUNT(*) * (t.pos + 1)) AS keys_read_frac,\n"
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n"
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n"
    "  FROM tokens t JOIN decisions d USING(run_id, pos) JOIN runs r USING(run_id)\n"
    "  GROUP BY t.run_id, t.pos;\n"
    "CREATE VIEW confusion_head AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor, layer, head,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor, layer, head);\n"
    "CREATE VIEW confusion AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor);\n"
    "CREATE VIEW run_summary AS\n"
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n"
    "    (SELECT AVG(gate) FROM decided d WHERE d.run_id = r.run_id) AS global_share,\n"
    "    (SELECT AVG(d.oracle_logit > d.theta_logit) FROM decided d WHERE d.run_id = r.run_id) AS oracle_share,\n"
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS keys_read_frac,\n"
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS kv_read_frac,\n"
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n"
    "      AS perplexity\n"
    "  FROM runs r;\n";

/* What the version-3 build left of a version-1 file it upgraded. */
static const char SCHEMA_V3_FROM_V1[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0\n"
    ", theta_logit REAL);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT\n"
    ", theta_logit REAL, kv_read_frac REAL);\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL, n_far INTEGER, kv_read INTEGER,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decisions(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, gate INTEGER, score REAL, oracle_logit REAL, oracle_err REAL, qada_logit REAL, qada_bulk_logit REAL, keys_read INTEGER, qada_rem_logit REAL, qada_rem_bulk_logit REAL, far_mean REAL, far_std REAL,\n"
    "  PRIMARY KEY(run_id, pos, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE attn_top(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,\n"
    "  rank INTEGER NOT NULL, key_pos INTEGER NOT NULL, weight REAL NOT NULL,\n"
    "  PRIMARY KEY(run_id, pos, layer, head, rank)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW masses AS\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, 1.0 / (1.0 + EXP(-d.oracle_logit)) AS oracle_mass,\n"
    "    1.0 / (1.0 + EXP(-d.qada_logit)) AS qada_mass, 1.0 / (1.0 + EXP(-d.qada_bulk_logit)) AS qada_bulk_mass,\n"
    "    1.0 / (1.0 + EXP(-d.qada_rem_logit)) AS qada_rem_mass,\n"
    "    1.0 / (1.0 + EXP(-d.qada_rem_bulk_logit)) AS qada_rem_bulk_mass,\n"
    "    CASE WHEN t.n_far > 1 THEN d.far_std / SQRT(2 * LN(t.n_far)) END AS regime\n"
    "  FROM decisions d LEFT JOIN tokens t USING(run_id, pos);\n"
    "CREATE VIEW decided AS\n"
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t USING(run_id, pos)\n"
    "  WHERE t.n_far IS NOT 0;\n"
    "CREATE VIEW predictions AS\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n"
    "    CASE p.predictor WHEN 'executed' THEN d.gate WHEN 'aha' THEN d.score > d.tau\n"
    "      WHEN 'qada' THEN d.qada_logit > d.theta_logit WHEN 'qada_bulk' THEN d.qada_bulk_logit > d.theta_logit\n"
    "      WHEN 'qada_rem' THEN d.qada_rem_logit > d.theta_logit\n"
    "      WHEN 'qada_rem_bulk' THEN d.qada_rem_bulk_logit > d.theta_logit END\n"
    "      AS predicted,\n"
    "    d.oracle_logit > d.theta_logit AS oracle\n"
    "  FROM decided d\n"
    "  CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n"
    "              UNION ALL SELECT 'qada_bulk' UNION ALL SELECT 'qada_rem' UNION ALL SELECT 'qada_rem_bulk') p;\n"
    "CREATE VIEW head_rates AS\n"
    "  SELECT run_id, layer, head, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(qada_rem_logit > theta_logit) AS qada_rem_rate,\n"
    "    AVG(qada_rem_bulk_logit > theta_logit) AS qada_rem_bulk_rate,\n"
    "    AVG(score) AS mean_score, AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass,\n"
    "    AVG(oracle_err) AS mean_oracle_err, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer, head;\n"
    "CREATE VIEW layer_rates AS\n"
    "  SELECT run_id, layer, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(qada_rem_logit > theta_logit) AS qada_rem_rate,\n"
    "    AVG(qada_rem_bulk_logit > theta_logit) AS qada_rem_bulk_rate,\n"
    "    AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer;\n"
    "CREATE VIEW token_share AS\n"
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.gate) END AS global_share,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.oracle_logit > r.theta_logit) END AS oracle_share,\n"
    "    SUM(d.keys_read) AS keys_read, COUNT(*) * (t.pos + 1) AS keys_full,\n"
    "    SUM(d.keys_read) * 1.0 / (COUNT(*) * (t.pos + 1)) AS keys_read_frac,\n"
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n"
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n"
    "  FROM tokens t JOIN decisions d USING(run_id, pos) JOIN runs r USING(run_id)\n"
    "  GROUP BY t.run_id, t.pos;\n"
    "CREATE VIEW confusion_head AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor, layer, head,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor, layer, head);\n"
    "CREATE VIEW confusion AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor);\n"
    "CREATE VIEW run_summary AS\n"
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n"
    "    (SELECT AVG(gate) FROM decided d WHERE d.run_id = r.run_id) AS global_share,\n"
    "    (SELECT AVG(d.oracle_logit > d.theta_logit) FROM decided d WHERE d.run_id = r.run_id) AS oracle_share,\n"
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS keys_read_frac,\n"
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS kv_read_frac,\n"
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n"
    "      AS perplexity\n"
    "  FROM runs r;\n";

/* What the version-3 build left of a version-2 file it upgraded. */
static const char SCHEMA_V3_FROM_V2[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decisions(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, gate INTEGER, score REAL, oracle_logit REAL, oracle_err REAL, qada_logit REAL, qada_bulk_logit REAL, keys_read INTEGER, qada_rem_logit REAL, qada_rem_bulk_logit REAL, far_mean REAL, far_std REAL,\n"
    "  PRIMARY KEY(run_id, pos, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE attn_top(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,\n"
    "  rank INTEGER NOT NULL, key_pos INTEGER NOT NULL, weight REAL NOT NULL,\n"
    "  PRIMARY KEY(run_id, pos, layer, head, rank)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW masses AS\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, 1.0 / (1.0 + EXP(-d.oracle_logit)) AS oracle_mass,\n"
    "    1.0 / (1.0 + EXP(-d.qada_logit)) AS qada_mass, 1.0 / (1.0 + EXP(-d.qada_bulk_logit)) AS qada_bulk_mass,\n"
    "    1.0 / (1.0 + EXP(-d.qada_rem_logit)) AS qada_rem_mass,\n"
    "    1.0 / (1.0 + EXP(-d.qada_rem_bulk_logit)) AS qada_rem_bulk_mass,\n"
    "    CASE WHEN t.n_far > 1 THEN d.far_std / SQRT(2 * LN(t.n_far)) END AS regime\n"
    "  FROM decisions d LEFT JOIN tokens t USING(run_id, pos);\n"
    "CREATE VIEW decided AS\n"
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t USING(run_id, pos)\n"
    "  WHERE t.n_far IS NOT 0;\n"
    "CREATE VIEW predictions AS\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n"
    "    CASE p.predictor WHEN 'executed' THEN d.gate WHEN 'aha' THEN d.score > d.tau\n"
    "      WHEN 'qada' THEN d.qada_logit > d.theta_logit WHEN 'qada_bulk' THEN d.qada_bulk_logit > d.theta_logit\n"
    "      WHEN 'qada_rem' THEN d.qada_rem_logit > d.theta_logit\n"
    "      WHEN 'qada_rem_bulk' THEN d.qada_rem_bulk_logit > d.theta_logit END\n"
    "      AS predicted,\n"
    "    d.oracle_logit > d.theta_logit AS oracle\n"
    "  FROM decided d\n"
    "  CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n"
    "              UNION ALL SELECT 'qada_bulk' UNION ALL SELECT 'qada_rem' UNION ALL SELECT 'qada_rem_bulk') p;\n"
    "CREATE VIEW head_rates AS\n"
    "  SELECT run_id, layer, head, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(qada_rem_logit > theta_logit) AS qada_rem_rate,\n"
    "    AVG(qada_rem_bulk_logit > theta_logit) AS qada_rem_bulk_rate,\n"
    "    AVG(score) AS mean_score, AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass,\n"
    "    AVG(oracle_err) AS mean_oracle_err, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer, head;\n"
    "CREATE VIEW layer_rates AS\n"
    "  SELECT run_id, layer, COUNT(*) AS n, AVG(gate) AS global_rate,\n"
    "    AVG(oracle_logit > theta_logit) AS oracle_rate, AVG(score > tau) AS aha_rate,\n"
    "    AVG(qada_logit > theta_logit) AS qada_rate, AVG(qada_bulk_logit > theta_logit) AS qada_bulk_rate,\n"
    "    AVG(qada_rem_logit > theta_logit) AS qada_rem_rate,\n"
    "    AVG(qada_rem_bulk_logit > theta_logit) AS qada_rem_bulk_rate,\n"
    "    AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer;\n"
    "CREATE VIEW token_share AS\n"
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.gate) END AS global_share,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.oracle_logit > r.theta_logit) END AS oracle_share,\n"
    "    SUM(d.keys_read) AS keys_read, COUNT(*) * (t.pos + 1) AS keys_full,\n"
    "    SUM(d.keys_read) * 1.0 / (COUNT(*) * (t.pos + 1)) AS keys_read_frac,\n"
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n"
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n"
    "  FROM tokens t JOIN decisions d USING(run_id, pos) JOIN runs r USING(run_id)\n"
    "  GROUP BY t.run_id, t.pos;\n"
    "CREATE VIEW confusion_head AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor, layer, head,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor, layer, head);\n"
    "CREATE VIEW confusion AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor);\n"
    "CREATE VIEW run_summary AS\n"
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n"
    "    (SELECT AVG(gate) FROM decided d WHERE d.run_id = r.run_id) AS global_share,\n"
    "    (SELECT AVG(d.oracle_logit > d.theta_logit) FROM decided d WHERE d.run_id = r.run_id) AS oracle_share,\n"
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS keys_read_frac,\n"
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS kv_read_frac,\n"
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n"
    "      AS perplexity\n"
    "  FROM runs r;\n";

/* Version 4's views, the same in every version-4 file (a migration
 * drops the views and makes them anew). */
#define SCHEMA_V4_VIEWS \
    "CREATE VIEW decisions AS\n" \
    "  SELECT (b.k >> 48) AS run_id, (b.k >> 28 & 1048575) AS pos, (b.k >> 18 & 1023) AS layer, (b.k & " \
    "262143) AS head, b.gate,\n" \
    "    (CASE WHEN b.score IS NULL THEN NULL WHEN (b.score >> 23 & 255) = 255 THEN CASE WHEN (b.score & " \
    "8388607) = 0 THEN CASE WHEN (b.score & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN " \
    "(b.score & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.score >> 23 & 255) = 0 THEN (b.score & " \
    "8388607) * POWER(2, -149) ELSE ((b.score & 8388607) | 8388608) * POWER(2, (b.score >> 23 & 255) - " \
    "150) END END) AS score,\n" \
    "    (CASE WHEN b.oracle_logit IS NULL THEN NULL WHEN (b.oracle_logit >> 23 & 255) = 255 THEN CASE " \
    "WHEN (b.oracle_logit & 8388607) = 0 THEN CASE WHEN (b.oracle_logit & 2147483648) THEN -1e999 ELSE " \
    "1e999 END END ELSE CASE WHEN (b.oracle_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN " \
    "(b.oracle_logit >> 23 & 255) = 0 THEN (b.oracle_logit & 8388607) * POWER(2, -149) ELSE " \
    "((b.oracle_logit & 8388607) | 8388608) * POWER(2, (b.oracle_logit >> 23 & 255) - 150) END END) AS " \
    "oracle_logit,\n" \
    "    (CASE WHEN b.oracle_err IS NULL THEN NULL WHEN (b.oracle_err >> 23 & 255) = 255 THEN CASE WHEN " \
    "(b.oracle_err & 8388607) = 0 THEN CASE WHEN (b.oracle_err & 2147483648) THEN -1e999 ELSE 1e999 END " \
    "END ELSE CASE WHEN (b.oracle_err & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.oracle_err >> " \
    "23 & 255) = 0 THEN (b.oracle_err & 8388607) * POWER(2, -149) ELSE ((b.oracle_err & 8388607) | " \
    "8388608) * POWER(2, (b.oracle_err >> 23 & 255) - 150) END END) AS oracle_err,\n" \
    "    (CASE WHEN b.qada_logit IS NULL THEN NULL WHEN (b.qada_logit >> 23 & 255) = 255 THEN CASE WHEN " \
    "(b.qada_logit & 8388607) = 0 THEN CASE WHEN (b.qada_logit & 2147483648) THEN -1e999 ELSE 1e999 END " \
    "END ELSE CASE WHEN (b.qada_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.qada_logit >> " \
    "23 & 255) = 0 THEN (b.qada_logit & 8388607) * POWER(2, -149) ELSE ((b.qada_logit & 8388607) | " \
    "8388608) * POWER(2, (b.qada_logit >> 23 & 255) - 150) END END) AS qada_logit,\n" \
    "    (CASE WHEN b.qada_bulk_logit IS NULL THEN NULL WHEN (b.qada_bulk_logit >> 23 & 255) = 255 THEN " \
    "CASE WHEN (b.qada_bulk_logit & 8388607) = 0 THEN CASE WHEN (b.qada_bulk_logit & 2147483648) THEN " \
    "-1e999 ELSE 1e999 END END ELSE CASE WHEN (b.qada_bulk_logit & 2147483648) THEN -1.0 ELSE 1.0 END * " \
    "CASE WHEN (b.qada_bulk_logit >> 23 & 255) = 0 THEN (b.qada_bulk_logit & 8388607) * POWER(2, -149) " \
    "ELSE ((b.qada_bulk_logit & 8388607) | 8388608) * POWER(2, (b.qada_bulk_logit >> 23 & 255) - 150) " \
    "END END) AS qada_bulk_logit,\n" \
    "    CASE b.gate WHEN 1 THEN (b.k >> 28 & 1048575) + 1 WHEN 0 THEN MIN(r.sinks, (b.k >> 28 & " \
    "1048575) + 1) + (b.k >> 28 & 1048575) + 1 - MAX((b.k >> 28 & 1048575) - r.window + 1, MIN(r.sinks, " \
    "(b.k >> 28 & 1048575) + 1)) END AS keys_read,\n" \
    "    (CASE WHEN b.qada_rem_logit IS NULL THEN NULL WHEN (b.qada_rem_logit >> 23 & 255) = 255 THEN " \
    "CASE WHEN (b.qada_rem_logit & 8388607) = 0 THEN CASE WHEN (b.qada_rem_logit & 2147483648) THEN " \
    "-1e999 ELSE 1e999 END END ELSE CASE WHEN (b.qada_rem_logit & 2147483648) THEN -1.0 ELSE 1.0 END * " \
    "CASE WHEN (b.qada_rem_logit >> 23 & 255) = 0 THEN (b.qada_rem_logit & 8388607) * POWER(2, -149) " \
    "ELSE ((b.qada_rem_logit & 8388607) | 8388608) * POWER(2, (b.qada_rem_logit >> 23 & 255) - 150) END " \
    "END) AS qada_rem_logit,\n" \
    "    (CASE WHEN b.qada_rem_bulk_logit IS NULL THEN NULL WHEN (b.qada_rem_bulk_logit >> 23 & 255) = " \
    "255 THEN CASE WHEN (b.qada_rem_bulk_logit & 8388607) = 0 THEN CASE WHEN (b.qada_rem_bulk_logit & " \
    "2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN (b.qada_rem_bulk_logit & 2147483648) THEN " \
    "-1.0 ELSE 1.0 END * CASE WHEN (b.qada_rem_bulk_logit >> 23 & 255) = 0 THEN (b.qada_rem_bulk_logit & " \
    "8388607) * POWER(2, -149) ELSE ((b.qada_rem_bulk_logit & 8388607) | 8388608) * POWER(2, " \
    "(b.qada_rem_bulk_logit >> 23 & 255) - 150) END END) AS qada_rem_bulk_logit,\n" \
    "    (CASE WHEN b.far_mean IS NULL THEN NULL WHEN (b.far_mean >> 23 & 255) = 255 THEN CASE WHEN " \
    "(b.far_mean & 8388607) = 0 THEN CASE WHEN (b.far_mean & 2147483648) THEN -1e999 ELSE 1e999 END END " \
    "ELSE CASE WHEN (b.far_mean & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.far_mean >> 23 & " \
    "255) = 0 THEN (b.far_mean & 8388607) * POWER(2, -149) ELSE ((b.far_mean & 8388607) | 8388608) * " \
    "POWER(2, (b.far_mean >> 23 & 255) - 150) END END) AS far_mean,\n" \
    "    (CASE WHEN b.far_std IS NULL THEN NULL WHEN (b.far_std >> 23 & 255) = 255 THEN CASE WHEN " \
    "(b.far_std & 8388607) = 0 THEN CASE WHEN (b.far_std & 2147483648) THEN -1e999 ELSE 1e999 END END " \
    "ELSE CASE WHEN (b.far_std & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.far_std >> 23 & 255) " \
    "= 0 THEN (b.far_std & 8388607) * POWER(2, -149) ELSE ((b.far_std & 8388607) | 8388608) * POWER(2, " \
    "(b.far_std >> 23 & 255) - 150) END END) AS far_std\n" \
    "  FROM decision_bits b LEFT JOIN runs r ON r.run_id = (b.k >> 48);\n" \
    "CREATE VIEW attn_top AS\n" \
    "  SELECT run_id, pos, layer, head, rank, w >> 32 AS key_pos,\n" \
    "    (CASE WHEN (w & 4294967295) IS NULL THEN NULL WHEN ((w & 4294967295) >> 23 & 255) = 255 THEN " \
    "CASE WHEN ((w & 4294967295) & 8388607) = 0 THEN CASE WHEN ((w & 4294967295) & 2147483648) THEN " \
    "-1e999 ELSE 1e999 END END ELSE CASE WHEN ((w & 4294967295) & 2147483648) THEN -1.0 ELSE 1.0 END * " \
    "CASE WHEN ((w & 4294967295) >> 23 & 255) = 0 THEN ((w & 4294967295) & 8388607) * POWER(2, -149) " \
    "ELSE (((w & 4294967295) & 8388607) | 8388608) * POWER(2, ((w & 4294967295) >> 23 & 255) - 150) END " \
    "END) AS weight\n" \
    "  FROM (SELECT (b.k >> 48) AS run_id, (b.k >> 28 & 1048575) AS pos, (b.k >> 18 & 1023) AS layer, " \
    "(b.k & 262143) AS head, n.rank,\n" \
    "      CASE n.rank WHEN 0 THEN b.top0 WHEN 1 THEN b.top1 WHEN 2 THEN b.top2 WHEN 3 THEN b.top3 WHEN " \
    "4 THEN b.top4 WHEN 5 THEN b.top5 WHEN 6 THEN b.top6 WHEN 7 THEN b.top7 END AS w\n" \
    "    FROM decision_bits b CROSS JOIN (SELECT 0 AS rank UNION ALL SELECT 1 UNION ALL SELECT 2 UNION " \
    "ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7) n)\n" \
    "  WHERE w IS NOT NULL;\n" \
    "CREATE VIEW masses AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head, 1.0 / (1.0 + EXP(-d.oracle_logit)) AS oracle_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_logit)) AS qada_mass, 1.0 / (1.0 + EXP(-d.qada_bulk_logit)) AS qada_bulk_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_rem_logit)) AS qada_rem_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_rem_bulk_logit)) AS qada_rem_bulk_mass,\n" \
    "    CASE WHEN t.n_far > 1 THEN d.far_std / SQRT(2 * LN(t.n_far)) END AS regime\n" \
    "  FROM decisions d LEFT JOIN tokens t USING(run_id, pos);\n" \
    "CREATE VIEW decided AS\n" \
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t " \
    "USING(run_id, pos)\n" \
    "  WHERE t.n_far IS NOT 0;\n" \
    "CREATE VIEW predictions AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n" \
    "    CASE p.predictor WHEN 'executed' THEN d.gate WHEN 'aha' THEN d.score > d.tau\n" \
    "      WHEN 'qada' THEN d.qada_logit > d.theta_logit WHEN 'qada_bulk' THEN d.qada_bulk_logit > d.theta_logit\n" \
    "      WHEN 'qada_rem' THEN d.qada_rem_logit > d.theta_logit\n" \
    "      WHEN 'qada_rem_bulk' THEN d.qada_rem_bulk_logit > d.theta_logit END\n" \
    "      AS predicted,\n" \
    "    d.oracle_logit > d.theta_logit AS oracle\n" \
    "  FROM decided d\n" \
    "  CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n" \
    "              UNION ALL SELECT 'qada_bulk' UNION ALL SELECT 'qada_rem' UNION ALL SELECT 'qada_rem_bulk') p;\n" \
    "CREATE VIEW head_rates AS\n" \
    "  SELECT run_id, layer, head, n, executed_global * 1.0 / NULLIF(executed_n, 0) AS global_rate,\n" \
    "    oracle_global * 1.0 / NULLIF(oracle_n, 0) AS oracle_rate, aha_global * 1.0 / NULLIF(aha_n, 0) " \
    "AS aha_rate,\n" \
    "    qada_global * 1.0 / NULLIF(qada_n, 0) AS qada_rate, qada_bulk_global * 1.0 / " \
    "NULLIF(qada_bulk_n, 0) AS qada_bulk_rate,\n" \
    "    qada_rem_global * 1.0 / NULLIF(qada_rem_n, 0) AS qada_rem_rate,\n" \
    "    qada_rem_bulk_global * 1.0 / NULLIF(qada_rem_bulk_n, 0) AS qada_rem_bulk_rate,\n" \
    "    score_sum / NULLIF(score_n, 0) AS mean_score, oracle_mass_sum / NULLIF(oracle_mass_n, 0) AS " \
    "mean_oracle_mass,\n" \
    "    oracle_err_sum / NULLIF(oracle_err_n, 0) AS mean_oracle_err,\n" \
    "    CASE WHEN executed_n > 0 THEN keys_read END AS keys_read\n" \
    "  FROM head_totals WHERE n > 0;\n" \
    "CREATE VIEW layer_rates AS\n" \
    "  SELECT run_id, layer, SUM(n) AS n, SUM(executed_global) * 1.0 / NULLIF(SUM(executed_n), 0) AS global_rate,\n" \
    "    SUM(oracle_global) * 1.0 / NULLIF(SUM(oracle_n), 0) AS oracle_rate, SUM(aha_global) * 1.0 / " \
    "NULLIF(SUM(aha_n), 0) AS aha_rate,\n" \
    "    SUM(qada_global) * 1.0 / NULLIF(SUM(qada_n), 0) AS qada_rate, SUM(qada_bulk_global) * 1.0 / " \
    "NULLIF(SUM(qada_bulk_n), 0) AS qada_bulk_rate,\n" \
    "    SUM(qada_rem_global) * 1.0 / NULLIF(SUM(qada_rem_n), 0) AS qada_rem_rate,\n" \
    "    SUM(qada_rem_bulk_global) * 1.0 / NULLIF(SUM(qada_rem_bulk_n), 0) AS qada_rem_bulk_rate,\n" \
    "    SUM(oracle_mass_sum) / NULLIF(SUM(oracle_mass_n), 0) AS mean_oracle_mass,\n" \
    "    CASE WHEN SUM(executed_n) > 0 THEN SUM(keys_read) END AS keys_read\n" \
    "  FROM head_totals WHERE n > 0 GROUP BY run_id, layer;\n" \
    "CREATE VIEW token_share AS\n" \
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n" \
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_global * 1.0 / NULLIF(t.n_gate, 0) END AS global_share,\n" \
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_oracle_global * 1.0 / NULLIF(t.n_oracle, 0) END AS oracle_share,\n" \
    "    t.keys_read_sum AS keys_read, r.n_layers * r.n_heads * (t.pos + 1) AS keys_full,\n" \
    "    t.keys_read_sum * 1.0 / (r.n_layers * r.n_heads * (t.pos + 1)) AS keys_read_frac,\n" \
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n" \
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n" \
    "  FROM tokens t JOIN runs r USING(run_id);\n" \
    "CREATE VIEW confusion_head AS\n" \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n" \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n" \
    "    SELECT h.run_id, p.predictor, h.layer, h.head,\n" \
    "      CASE p.predictor WHEN 'executed' THEN executed_tp WHEN 'aha' THEN aha_tp WHEN 'qada' THEN " \
    "qada_tp WHEN 'qada_bulk' THEN qada_bulk_tp WHEN 'qada_rem' THEN qada_rem_tp WHEN 'qada_rem_bulk' " \
    "THEN qada_rem_bulk_tp END AS tp,\n" \
    "      CASE p.predictor WHEN 'executed' THEN executed_fp WHEN 'aha' THEN aha_fp WHEN 'qada' THEN " \
    "qada_fp WHEN 'qada_bulk' THEN qada_bulk_fp WHEN 'qada_rem' THEN qada_rem_fp WHEN 'qada_rem_bulk' " \
    "THEN qada_rem_bulk_fp END AS fp,\n" \
    "      CASE p.predictor WHEN 'executed' THEN executed_fn WHEN 'aha' THEN aha_fn WHEN 'qada' THEN " \
    "qada_fn WHEN 'qada_bulk' THEN qada_bulk_fn WHEN 'qada_rem' THEN qada_rem_fn WHEN 'qada_rem_bulk' " \
    "THEN qada_rem_bulk_fn END AS fn,\n" \
    "      CASE p.predictor WHEN 'executed' THEN executed_tn WHEN 'aha' THEN aha_tn WHEN 'qada' THEN " \
    "qada_tn WHEN 'qada_bulk' THEN qada_bulk_tn WHEN 'qada_rem' THEN qada_rem_tn WHEN 'qada_rem_bulk' " \
    "THEN qada_rem_bulk_tn END AS tn\n" \
    "    FROM head_totals h\n" \
    "    CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n" \
    "              UNION ALL SELECT 'qada_bulk' UNION ALL SELECT 'qada_rem' UNION ALL SELECT 'qada_rem_bulk') p)\n" \
    "  WHERE tp + fp + fn + tn > 0;\n" \
    "CREATE VIEW confusion AS\n" \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n" \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n" \
    "    SELECT run_id, predictor, SUM(tp) AS tp, SUM(fp) AS fp, SUM(fn) AS fn, SUM(tn) AS tn\n" \
    "    FROM confusion_head GROUP BY run_id, predictor);\n" \
    "CREATE VIEW run_summary AS\n" \
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n" \
    "    (SELECT SUM(executed_global) * 1.0 / NULLIF(SUM(executed_n), 0) FROM head_totals h WHERE " \
    "h.run_id = r.run_id)\n" \
    "      AS global_share,\n" \
    "    (SELECT SUM(oracle_global) * 1.0 / NULLIF(SUM(oracle_n), 0) FROM head_totals h WHERE h.run_id = " \
    "r.run_id)\n" \
    "      AS oracle_share,\n" \
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n" \
    "      AS keys_read_frac,\n" \
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n" \
    "      AS kv_read_frac,\n" \
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n" \
    "      AS perplexity\n" \
    "  FROM runs r;\n"

/* Version 4: the compact layout (decision_bits, head_totals, the tokens'
 * counts); as a new file got it. */
static const char SCHEMA_V4[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL,\n"
    "  top_k INTEGER\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, "
    "qada_logit INTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, "
    "far_mean INTEGER, far_std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, "
    "top7 INTEGER\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL, "
    "executed_n INTEGER, executed_global INTEGER, aha_n INTEGER, aha_global INTEGER, qada_n INTEGER, "
    "qada_global INTEGER, qada_bulk_n INTEGER, qada_bulk_global INTEGER, qada_rem_n INTEGER, "
    "qada_rem_global INTEGER, qada_rem_bulk_n INTEGER, qada_rem_bulk_global INTEGER, oracle_n INTEGER, "
    "oracle_global INTEGER, executed_tp INTEGER, executed_fp INTEGER, executed_fn INTEGER, executed_tn "
    "INTEGER, aha_tp INTEGER, aha_fp INTEGER, aha_fn INTEGER, aha_tn INTEGER, qada_tp INTEGER, qada_fp "
    "INTEGER, qada_fn INTEGER, qada_tn INTEGER, qada_bulk_tp INTEGER, qada_bulk_fp INTEGER, qada_bulk_fn "
    "INTEGER, qada_bulk_tn INTEGER, qada_rem_tp INTEGER, qada_rem_fp INTEGER, qada_rem_fn INTEGER, "
    "qada_rem_tn INTEGER, qada_rem_bulk_tp INTEGER, qada_rem_bulk_fp INTEGER, qada_rem_bulk_fn INTEGER, "
    "qada_rem_bulk_tn INTEGER, score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n "
    "INTEGER, oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER, calm_n INTEGER, "
    "calm_oracle_global INTEGER, qada_calm_global INTEGER, qada_calm_tp INTEGER, bulk_calm_global "
    "INTEGER, bulk_calm_tp INTEGER, frozen_n INTEGER, frozen_oracle_global INTEGER, qada_frozen_global "
    "INTEGER, qada_frozen_tp INTEGER, bulk_frozen_global INTEGER, bulk_frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V4_VIEWS;

/* What the version-4 build left of a version-1 file it upgraded. */
static const char SCHEMA_V4_FROM_V1[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0\n"
    ", theta_logit REAL, top_k INTEGER);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT\n"
    ", theta_logit REAL, kv_read_frac REAL);\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL, n_far INTEGER, kv_read "
    "INTEGER, n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum "
    "INTEGER,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, "
    "qada_logit INTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, "
    "far_mean INTEGER, far_std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, "
    "top7 INTEGER\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL, "
    "executed_n INTEGER, executed_global INTEGER, aha_n INTEGER, aha_global INTEGER, qada_n INTEGER, "
    "qada_global INTEGER, qada_bulk_n INTEGER, qada_bulk_global INTEGER, qada_rem_n INTEGER, "
    "qada_rem_global INTEGER, qada_rem_bulk_n INTEGER, qada_rem_bulk_global INTEGER, oracle_n INTEGER, "
    "oracle_global INTEGER, executed_tp INTEGER, executed_fp INTEGER, executed_fn INTEGER, executed_tn "
    "INTEGER, aha_tp INTEGER, aha_fp INTEGER, aha_fn INTEGER, aha_tn INTEGER, qada_tp INTEGER, qada_fp "
    "INTEGER, qada_fn INTEGER, qada_tn INTEGER, qada_bulk_tp INTEGER, qada_bulk_fp INTEGER, qada_bulk_fn "
    "INTEGER, qada_bulk_tn INTEGER, qada_rem_tp INTEGER, qada_rem_fp INTEGER, qada_rem_fn INTEGER, "
    "qada_rem_tn INTEGER, qada_rem_bulk_tp INTEGER, qada_rem_bulk_fp INTEGER, qada_rem_bulk_fn INTEGER, "
    "qada_rem_bulk_tn INTEGER, score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n "
    "INTEGER, oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER, calm_n INTEGER, "
    "calm_oracle_global INTEGER, qada_calm_global INTEGER, qada_calm_tp INTEGER, bulk_calm_global "
    "INTEGER, bulk_calm_tp INTEGER, frozen_n INTEGER, frozen_oracle_global INTEGER, qada_frozen_global "
    "INTEGER, qada_frozen_tp INTEGER, bulk_frozen_global INTEGER, bulk_frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V4_VIEWS;

/* What the version-4 build left of a version-2 or version-3 file it
 * upgraded (the same statements for both). */
static const char SCHEMA_V4_FROM_V2[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL\n"
    ", top_k INTEGER);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER, n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, "
    "n_oracle_global INTEGER, keys_read_sum INTEGER,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, "
    "qada_logit INTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, "
    "far_mean INTEGER, far_std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, "
    "top7 INTEGER\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL, "
    "executed_n INTEGER, executed_global INTEGER, aha_n INTEGER, aha_global INTEGER, qada_n INTEGER, "
    "qada_global INTEGER, qada_bulk_n INTEGER, qada_bulk_global INTEGER, qada_rem_n INTEGER, "
    "qada_rem_global INTEGER, qada_rem_bulk_n INTEGER, qada_rem_bulk_global INTEGER, oracle_n INTEGER, "
    "oracle_global INTEGER, executed_tp INTEGER, executed_fp INTEGER, executed_fn INTEGER, executed_tn "
    "INTEGER, aha_tp INTEGER, aha_fp INTEGER, aha_fn INTEGER, aha_tn INTEGER, qada_tp INTEGER, qada_fp "
    "INTEGER, qada_fn INTEGER, qada_tn INTEGER, qada_bulk_tp INTEGER, qada_bulk_fp INTEGER, qada_bulk_fn "
    "INTEGER, qada_bulk_tn INTEGER, qada_rem_tp INTEGER, qada_rem_fp INTEGER, qada_rem_fn INTEGER, "
    "qada_rem_tn INTEGER, qada_rem_bulk_tp INTEGER, qada_rem_bulk_fp INTEGER, qada_rem_bulk_fn INTEGER, "
    "qada_rem_bulk_tn INTEGER, score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n "
    "INTEGER, oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER, calm_n INTEGER, "
    "calm_oracle_global INTEGER, qada_calm_global INTEGER, qada_calm_tp INTEGER, bulk_calm_global "
    "INTEGER, bulk_calm_tp INTEGER, frozen_n INTEGER, frozen_oracle_global INTEGER, qada_frozen_global "
    "INTEGER, qada_frozen_tp INTEGER, bulk_frozen_global INTEGER, bulk_frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V4_VIEWS;

/* Version 5's views, the same in every version-5 file (a migration
 * drops the views and makes them anew). */
#define SCHEMA_V5_VIEWS \
    "CREATE VIEW decisions AS\n" \
    "  SELECT (b.k >> 48) AS run_id, (b.k >> 28 & 1048575) AS pos, (b.k >> 18 & 1023) AS layer, (b.k & 262143) " \
    "AS head, b.gate,\n" \
    "    (CASE WHEN b.score IS NULL THEN NULL WHEN (b.score >> 23 & 255) = 255 THEN CASE WHEN (b.score & " \
    "8388607) = 0 THEN CASE WHEN (b.score & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN (b.score & " \
    "2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.score >> 23 & 255) = 0 THEN (b.score & 8388607) * " \
    "POWER(2, -149) ELSE ((b.score & 8388607) | 8388608) * POWER(2, (b.score >> 23 & 255) - 150) END END) AS " \
    "score,\n" \
    "    (CASE WHEN b.oracle_logit IS NULL THEN NULL WHEN (b.oracle_logit >> 23 & 255) = 255 THEN CASE WHEN " \
    "(b.oracle_logit & 8388607) = 0 THEN CASE WHEN (b.oracle_logit & 2147483648) THEN -1e999 ELSE 1e999 END END " \
    "ELSE CASE WHEN (b.oracle_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.oracle_logit >> 23 & " \
    "255) = 0 THEN (b.oracle_logit & 8388607) * POWER(2, -149) ELSE ((b.oracle_logit & 8388607) | 8388608) * " \
    "POWER(2, (b.oracle_logit >> 23 & 255) - 150) END END) AS oracle_logit,\n" \
    "    (CASE WHEN b.oracle_err IS NULL THEN NULL WHEN (b.oracle_err >> 23 & 255) = 255 THEN CASE WHEN " \
    "(b.oracle_err & 8388607) = 0 THEN CASE WHEN (b.oracle_err & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE " \
    "CASE WHEN (b.oracle_err & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.oracle_err >> 23 & 255) = 0 " \
    "THEN (b.oracle_err & 8388607) * POWER(2, -149) ELSE ((b.oracle_err & 8388607) | 8388608) * POWER(2, " \
    "(b.oracle_err >> 23 & 255) - 150) END END) AS oracle_err,\n" \
    "    (CASE WHEN b.qada_logit IS NULL THEN NULL WHEN (b.qada_logit >> 23 & 255) = 255 THEN CASE WHEN " \
    "(b.qada_logit & 8388607) = 0 THEN CASE WHEN (b.qada_logit & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE " \
    "CASE WHEN (b.qada_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.qada_logit >> 23 & 255) = 0 " \
    "THEN (b.qada_logit & 8388607) * POWER(2, -149) ELSE ((b.qada_logit & 8388607) | 8388608) * POWER(2, " \
    "(b.qada_logit >> 23 & 255) - 150) END END) AS qada_logit,\n" \
    "    (CASE WHEN b.qada_bulk_logit IS NULL THEN NULL WHEN (b.qada_bulk_logit >> 23 & 255) = 255 THEN CASE " \
    "WHEN (b.qada_bulk_logit & 8388607) = 0 THEN CASE WHEN (b.qada_bulk_logit & 2147483648) THEN -1e999 ELSE " \
    "1e999 END END ELSE CASE WHEN (b.qada_bulk_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN " \
    "(b.qada_bulk_logit >> 23 & 255) = 0 THEN (b.qada_bulk_logit & 8388607) * POWER(2, -149) ELSE " \
    "((b.qada_bulk_logit & 8388607) | 8388608) * POWER(2, (b.qada_bulk_logit >> 23 & 255) - 150) END END) AS " \
    "qada_bulk_logit,\n" \
    "    CASE b.gate WHEN 1 THEN (b.k >> 28 & 1048575) + 1 WHEN 0 THEN MIN(r.sinks, (b.k >> 28 & 1048575) + 1) + " \
    "(b.k >> 28 & 1048575) + 1 - MAX((b.k >> 28 & 1048575) - r.window + 1, MIN(r.sinks, (b.k >> 28 & 1048575) + " \
    "1)) END AS keys_read,\n" \
    "    (CASE WHEN b.qada_rem_logit IS NULL THEN NULL WHEN (b.qada_rem_logit >> 23 & 255) = 255 THEN CASE WHEN " \
    "(b.qada_rem_logit & 8388607) = 0 THEN CASE WHEN (b.qada_rem_logit & 2147483648) THEN -1e999 ELSE 1e999 END " \
    "END ELSE CASE WHEN (b.qada_rem_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.qada_rem_logit >> " \
    "23 & 255) = 0 THEN (b.qada_rem_logit & 8388607) * POWER(2, -149) ELSE ((b.qada_rem_logit & 8388607) | " \
    "8388608) * POWER(2, (b.qada_rem_logit >> 23 & 255) - 150) END END) AS qada_rem_logit,\n" \
    "    (CASE WHEN b.qada_rem_bulk_logit IS NULL THEN NULL WHEN (b.qada_rem_bulk_logit >> 23 & 255) = 255 THEN " \
    "CASE WHEN (b.qada_rem_bulk_logit & 8388607) = 0 THEN CASE WHEN (b.qada_rem_bulk_logit & 2147483648) THEN " \
    "-1e999 ELSE 1e999 END END ELSE CASE WHEN (b.qada_rem_bulk_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE " \
    "WHEN (b.qada_rem_bulk_logit >> 23 & 255) = 0 THEN (b.qada_rem_bulk_logit & 8388607) * POWER(2, -149) ELSE " \
    "((b.qada_rem_bulk_logit & 8388607) | 8388608) * POWER(2, (b.qada_rem_bulk_logit >> 23 & 255) - 150) END " \
    "END) AS qada_rem_bulk_logit,\n" \
    "    (CASE WHEN b.far_mean IS NULL THEN NULL WHEN (b.far_mean >> 23 & 255) = 255 THEN CASE WHEN (b.far_mean " \
    "& 8388607) = 0 THEN CASE WHEN (b.far_mean & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN " \
    "(b.far_mean & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.far_mean >> 23 & 255) = 0 THEN (b.far_mean " \
    "& 8388607) * POWER(2, -149) ELSE ((b.far_mean & 8388607) | 8388608) * POWER(2, (b.far_mean >> 23 & 255) - " \
    "150) END END) AS far_mean,\n" \
    "    (CASE WHEN b.far_std IS NULL THEN NULL WHEN (b.far_std >> 23 & 255) = 255 THEN CASE WHEN (b.far_std & " \
    "8388607) = 0 THEN CASE WHEN (b.far_std & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN " \
    "(b.far_std & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.far_std >> 23 & 255) = 0 THEN (b.far_std & " \
    "8388607) * POWER(2, -149) ELSE ((b.far_std & 8388607) | 8388608) * POWER(2, (b.far_std >> 23 & 255) - 150) " \
    "END END) AS far_std\n" \
    "  FROM decision_bits b LEFT JOIN runs r ON r.run_id = (b.k >> 48);\n" \
    "CREATE VIEW attn_top AS\n" \
    "  SELECT run_id, pos, layer, head, rank, w >> 32 AS key_pos,\n" \
    "    (CASE WHEN (w & 4294967295) IS NULL THEN NULL WHEN ((w & 4294967295) >> 23 & 255) = 255 THEN CASE WHEN " \
    "((w & 4294967295) & 8388607) = 0 THEN CASE WHEN ((w & 4294967295) & 2147483648) THEN -1e999 ELSE 1e999 END " \
    "END ELSE CASE WHEN ((w & 4294967295) & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN ((w & 4294967295) >> " \
    "23 & 255) = 0 THEN ((w & 4294967295) & 8388607) * POWER(2, -149) ELSE (((w & 4294967295) & 8388607) | " \
    "8388608) * POWER(2, ((w & 4294967295) >> 23 & 255) - 150) END END) AS weight\n" \
    "  FROM (SELECT (b.k >> 48) AS run_id, (b.k >> 28 & 1048575) AS pos, (b.k >> 18 & 1023) AS layer, (b.k & " \
    "262143) AS head, n.rank,\n" \
    "      CASE n.rank WHEN 0 THEN b.top0 WHEN 1 THEN b.top1 WHEN 2 THEN b.top2 WHEN 3 THEN b.top3 WHEN 4 THEN " \
    "b.top4 WHEN 5 THEN b.top5 WHEN 6 THEN b.top6 WHEN 7 THEN b.top7 END AS w\n" \
    "    FROM decision_bits b CROSS JOIN (SELECT 0 AS rank UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL " \
    "SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7) n)\n" \
    "  WHERE w IS NOT NULL;\n" \
    "CREATE VIEW masses AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head, 1.0 / (1.0 + EXP(-d.oracle_logit)) AS oracle_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_logit)) AS qada_mass, 1.0 / (1.0 + EXP(-d.qada_bulk_logit)) AS qada_bulk_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_rem_logit)) AS qada_rem_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_rem_bulk_logit)) AS qada_rem_bulk_mass,\n" \
    "    CASE WHEN t.n_far > 1 THEN d.far_std / SQRT(2 * LN(t.n_far)) END AS regime\n" \
    "  FROM decisions d LEFT JOIN tokens t USING(run_id, pos);\n" \
    "CREATE VIEW decided AS\n" \
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t USING(run_id, " \
    "pos)\n" \
    "  WHERE t.n_far IS NOT 0;\n" \
    "CREATE VIEW predictions AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n" \
    "    CASE p.predictor WHEN 'executed' THEN d.gate WHEN 'aha' THEN d.score > d.tau\n" \
    "      WHEN 'qada' THEN d.qada_logit > d.theta_logit WHEN 'qada_bulk' THEN d.qada_bulk_logit > d.theta_logit\n" \
    "      WHEN 'qada_rem' THEN d.qada_rem_logit > d.theta_logit\n" \
    "      WHEN 'qada_rem_bulk' THEN d.qada_rem_bulk_logit > d.theta_logit END\n" \
    "      AS predicted,\n" \
    "    d.oracle_logit > d.theta_logit AS oracle\n" \
    "  FROM decided d\n" \
    "  CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n" \
    "              UNION ALL SELECT 'qada_bulk' UNION ALL SELECT 'qada_rem' UNION ALL SELECT 'qada_rem_bulk') p;\n" \
    "CREATE VIEW head_rates AS\n" \
    "  SELECT run_id, layer, head, n, executed_global * 1.0 / NULLIF(executed_n, 0) AS global_rate,\n" \
    "    oracle_global * 1.0 / NULLIF(oracle_n, 0) AS oracle_rate, aha_global * 1.0 / NULLIF(aha_n, 0) AS " \
    "aha_rate,\n" \
    "    qada_global * 1.0 / NULLIF(qada_n, 0) AS qada_rate, qada_bulk_global * 1.0 / NULLIF(qada_bulk_n, 0) AS " \
    "qada_bulk_rate,\n" \
    "    qada_rem_global * 1.0 / NULLIF(qada_rem_n, 0) AS qada_rem_rate,\n" \
    "    qada_rem_bulk_global * 1.0 / NULLIF(qada_rem_bulk_n, 0) AS qada_rem_bulk_rate,\n" \
    "    score_sum / NULLIF(score_n, 0) AS mean_score, oracle_mass_sum / NULLIF(oracle_mass_n, 0) AS " \
    "mean_oracle_mass,\n" \
    "    oracle_err_sum / NULLIF(oracle_err_n, 0) AS mean_oracle_err,\n" \
    "    CASE WHEN executed_n > 0 THEN keys_read END AS keys_read\n" \
    "  FROM head_totals WHERE n > 0;\n" \
    "CREATE VIEW layer_rates AS\n" \
    "  SELECT run_id, layer, SUM(n) AS n, SUM(executed_global) * 1.0 / NULLIF(SUM(executed_n), 0) AS " \
    "global_rate,\n" \
    "    SUM(oracle_global) * 1.0 / NULLIF(SUM(oracle_n), 0) AS oracle_rate, SUM(aha_global) * 1.0 / " \
    "NULLIF(SUM(aha_n), 0) AS aha_rate,\n" \
    "    SUM(qada_global) * 1.0 / NULLIF(SUM(qada_n), 0) AS qada_rate, SUM(qada_bulk_global) * 1.0 / " \
    "NULLIF(SUM(qada_bulk_n), 0) AS qada_bulk_rate,\n" \
    "    SUM(qada_rem_global) * 1.0 / NULLIF(SUM(qada_rem_n), 0) AS qada_rem_rate,\n" \
    "    SUM(qada_rem_bulk_global) * 1.0 / NULLIF(SUM(qada_rem_bulk_n), 0) AS qada_rem_bulk_rate,\n" \
    "    SUM(oracle_mass_sum) / NULLIF(SUM(oracle_mass_n), 0) AS mean_oracle_mass,\n" \
    "    CASE WHEN SUM(executed_n) > 0 THEN SUM(keys_read) END AS keys_read\n" \
    "  FROM head_totals WHERE n > 0 GROUP BY run_id, layer;\n" \
    "CREATE VIEW token_share AS\n" \
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n" \
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_global * 1.0 / NULLIF(t.n_gate, 0) END AS global_share,\n" \
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_oracle_global * 1.0 / NULLIF(t.n_oracle, 0) END AS oracle_share,\n" \
    "    t.keys_read_sum AS keys_read, r.n_layers * r.n_heads * (t.pos + 1) AS keys_full,\n" \
    "    t.keys_read_sum * 1.0 / (r.n_layers * r.n_heads * (t.pos + 1)) AS keys_read_frac,\n" \
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n" \
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n" \
    "  FROM tokens t JOIN runs r USING(run_id);\n" \
    "CREATE VIEW confusion_head AS\n" \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n" \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n" \
    "    SELECT h.run_id, p.predictor, h.layer, h.head,\n" \
    "      CASE p.predictor WHEN 'executed' THEN executed_tp WHEN 'aha' THEN aha_tp WHEN 'qada' THEN qada_tp " \
    "WHEN 'qada_bulk' THEN qada_bulk_tp WHEN 'qada_rem' THEN qada_rem_tp WHEN 'qada_rem_bulk' THEN " \
    "qada_rem_bulk_tp END AS tp,\n" \
    "      CASE p.predictor WHEN 'executed' THEN executed_fp WHEN 'aha' THEN aha_fp WHEN 'qada' THEN qada_fp " \
    "WHEN 'qada_bulk' THEN qada_bulk_fp WHEN 'qada_rem' THEN qada_rem_fp WHEN 'qada_rem_bulk' THEN " \
    "qada_rem_bulk_fp END AS fp,\n" \
    "      CASE p.predictor WHEN 'executed' THEN executed_fn WHEN 'aha' THEN aha_fn WHEN 'qada' THEN qada_fn " \
    "WHEN 'qada_bulk' THEN qada_bulk_fn WHEN 'qada_rem' THEN qada_rem_fn WHEN 'qada_rem_bulk' THEN " \
    "qada_rem_bulk_fn END AS fn,\n" \
    "      CASE p.predictor WHEN 'executed' THEN executed_tn WHEN 'aha' THEN aha_tn WHEN 'qada' THEN qada_tn " \
    "WHEN 'qada_bulk' THEN qada_bulk_tn WHEN 'qada_rem' THEN qada_rem_tn WHEN 'qada_rem_bulk' THEN " \
    "qada_rem_bulk_tn END AS tn\n" \
    "    FROM head_totals h\n" \
    "    CROSS JOIN (SELECT 'executed' AS predictor UNION ALL SELECT 'aha' UNION ALL SELECT 'qada'\n" \
    "              UNION ALL SELECT 'qada_bulk' UNION ALL SELECT 'qada_rem' UNION ALL SELECT 'qada_rem_bulk') p)\n" \
    "  WHERE tp + fp + fn + tn > 0;\n" \
    "CREATE VIEW confusion AS\n" \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n" \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n" \
    "    SELECT run_id, predictor, SUM(tp) AS tp, SUM(fp) AS fp, SUM(fn) AS fn, SUM(tn) AS tn\n" \
    "    FROM confusion_head GROUP BY run_id, predictor);\n" \
    "CREATE VIEW run_summary AS\n" \
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n" \
    "    (SELECT SUM(executed_global) * 1.0 / NULLIF(SUM(executed_n), 0) FROM head_totals h WHERE h.run_id = " \
    "r.run_id)\n" \
    "      AS global_share,\n" \
    "    (SELECT SUM(oracle_global) * 1.0 / NULLIF(SUM(oracle_n), 0) FROM head_totals h WHERE h.run_id = " \
    "r.run_id)\n" \
    "      AS oracle_share,\n" \
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n" \
    "      AS keys_read_frac,\n" \
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n" \
    "      AS kv_read_frac,\n" \
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n" \
    "      AS perplexity\n" \
    "  FROM runs r;\n"

/* Version 5: version 4's layout and the tokens' gate bitmaps; as a new file got it. */
static const char SCHEMA_V5[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL,\n"
    "  top_k INTEGER\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER,\n"
    "  gates BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit "
    "INTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, "
    "far_std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 "
    "INTEGER\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL, executed_n "
    "INTEGER, executed_global INTEGER, aha_n INTEGER, aha_global INTEGER, qada_n INTEGER, qada_global INTEGER, "
    "qada_bulk_n INTEGER, qada_bulk_global INTEGER, qada_rem_n INTEGER, qada_rem_global INTEGER, qada_rem_bulk_n "
    "INTEGER, qada_rem_bulk_global INTEGER, oracle_n INTEGER, oracle_global INTEGER, executed_tp INTEGER, "
    "executed_fp INTEGER, executed_fn INTEGER, executed_tn INTEGER, aha_tp INTEGER, aha_fp INTEGER, aha_fn "
    "INTEGER, aha_tn INTEGER, qada_tp INTEGER, qada_fp INTEGER, qada_fn INTEGER, qada_tn INTEGER, qada_bulk_tp "
    "INTEGER, qada_bulk_fp INTEGER, qada_bulk_fn INTEGER, qada_bulk_tn INTEGER, qada_rem_tp INTEGER, qada_rem_fp "
    "INTEGER, qada_rem_fn INTEGER, qada_rem_tn INTEGER, qada_rem_bulk_tp INTEGER, qada_rem_bulk_fp INTEGER, "
    "qada_rem_bulk_fn INTEGER, qada_rem_bulk_tn INTEGER, score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, "
    "oracle_mass_n INTEGER, oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER, calm_n INTEGER, "
    "calm_oracle_global INTEGER, qada_calm_global INTEGER, qada_calm_tp INTEGER, bulk_calm_global INTEGER, "
    "bulk_calm_tp INTEGER, frozen_n INTEGER, frozen_oracle_global INTEGER, qada_frozen_global INTEGER, "
    "qada_frozen_tp INTEGER, bulk_frozen_global INTEGER, bulk_frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V5_VIEWS;

/* What the version-5 build left of a version-1 file it upgraded. */
static const char SCHEMA_V5_FROM_V1[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0\n"
    ", theta_logit REAL, top_k INTEGER);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT\n"
    ", theta_logit REAL, kv_read_frac REAL);\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL, n_far INTEGER, kv_read INTEGER, "
    "n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER, gates "
    "BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit "
    "INTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, "
    "far_std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 "
    "INTEGER\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL, executed_n "
    "INTEGER, executed_global INTEGER, aha_n INTEGER, aha_global INTEGER, qada_n INTEGER, qada_global INTEGER, "
    "qada_bulk_n INTEGER, qada_bulk_global INTEGER, qada_rem_n INTEGER, qada_rem_global INTEGER, qada_rem_bulk_n "
    "INTEGER, qada_rem_bulk_global INTEGER, oracle_n INTEGER, oracle_global INTEGER, executed_tp INTEGER, "
    "executed_fp INTEGER, executed_fn INTEGER, executed_tn INTEGER, aha_tp INTEGER, aha_fp INTEGER, aha_fn "
    "INTEGER, aha_tn INTEGER, qada_tp INTEGER, qada_fp INTEGER, qada_fn INTEGER, qada_tn INTEGER, qada_bulk_tp "
    "INTEGER, qada_bulk_fp INTEGER, qada_bulk_fn INTEGER, qada_bulk_tn INTEGER, qada_rem_tp INTEGER, qada_rem_fp "
    "INTEGER, qada_rem_fn INTEGER, qada_rem_tn INTEGER, qada_rem_bulk_tp INTEGER, qada_rem_bulk_fp INTEGER, "
    "qada_rem_bulk_fn INTEGER, qada_rem_bulk_tn INTEGER, score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, "
    "oracle_mass_n INTEGER, oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER, calm_n INTEGER, "
    "calm_oracle_global INTEGER, qada_calm_global INTEGER, qada_calm_tp INTEGER, bulk_calm_global INTEGER, "
    "bulk_calm_tp INTEGER, frozen_n INTEGER, frozen_oracle_global INTEGER, qada_frozen_global INTEGER, "
    "qada_frozen_tp INTEGER, bulk_frozen_global INTEGER, bulk_frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V5_VIEWS;

/* What the version-5 build left of a version-2 or version-3 file it upgraded. */
static const char SCHEMA_V5_FROM_V2[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL\n"
    ", top_k INTEGER);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER, n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global "
    "INTEGER, keys_read_sum INTEGER, gates BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit "
    "INTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, "
    "far_std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 "
    "INTEGER\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL, executed_n "
    "INTEGER, executed_global INTEGER, aha_n INTEGER, aha_global INTEGER, qada_n INTEGER, qada_global INTEGER, "
    "qada_bulk_n INTEGER, qada_bulk_global INTEGER, qada_rem_n INTEGER, qada_rem_global INTEGER, qada_rem_bulk_n "
    "INTEGER, qada_rem_bulk_global INTEGER, oracle_n INTEGER, oracle_global INTEGER, executed_tp INTEGER, "
    "executed_fp INTEGER, executed_fn INTEGER, executed_tn INTEGER, aha_tp INTEGER, aha_fp INTEGER, aha_fn "
    "INTEGER, aha_tn INTEGER, qada_tp INTEGER, qada_fp INTEGER, qada_fn INTEGER, qada_tn INTEGER, qada_bulk_tp "
    "INTEGER, qada_bulk_fp INTEGER, qada_bulk_fn INTEGER, qada_bulk_tn INTEGER, qada_rem_tp INTEGER, qada_rem_fp "
    "INTEGER, qada_rem_fn INTEGER, qada_rem_tn INTEGER, qada_rem_bulk_tp INTEGER, qada_rem_bulk_fp INTEGER, "
    "qada_rem_bulk_fn INTEGER, qada_rem_bulk_tn INTEGER, score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, "
    "oracle_mass_n INTEGER, oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER, calm_n INTEGER, "
    "calm_oracle_global INTEGER, qada_calm_global INTEGER, qada_calm_tp INTEGER, bulk_calm_global INTEGER, "
    "bulk_calm_tp INTEGER, frozen_n INTEGER, frozen_oracle_global INTEGER, qada_frozen_global INTEGER, "
    "qada_frozen_tp INTEGER, bulk_frozen_global INTEGER, bulk_frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V5_VIEWS;

/* What the version-5 build left of a version-4 file it upgraded. */
static const char SCHEMA_V5_FROM_V4[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL,\n"
    "  top_k INTEGER\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER, gates "
    "BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit "
    "INTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, "
    "far_std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 "
    "INTEGER\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL, executed_n "
    "INTEGER, executed_global INTEGER, aha_n INTEGER, aha_global INTEGER, qada_n INTEGER, qada_global INTEGER, "
    "qada_bulk_n INTEGER, qada_bulk_global INTEGER, qada_rem_n INTEGER, qada_rem_global INTEGER, qada_rem_bulk_n "
    "INTEGER, qada_rem_bulk_global INTEGER, oracle_n INTEGER, oracle_global INTEGER, executed_tp INTEGER, "
    "executed_fp INTEGER, executed_fn INTEGER, executed_tn INTEGER, aha_tp INTEGER, aha_fp INTEGER, aha_fn "
    "INTEGER, aha_tn INTEGER, qada_tp INTEGER, qada_fp INTEGER, qada_fn INTEGER, qada_tn INTEGER, qada_bulk_tp "
    "INTEGER, qada_bulk_fp INTEGER, qada_bulk_fn INTEGER, qada_bulk_tn INTEGER, qada_rem_tp INTEGER, qada_rem_fp "
    "INTEGER, qada_rem_fn INTEGER, qada_rem_tn INTEGER, qada_rem_bulk_tp INTEGER, qada_rem_bulk_fp INTEGER, "
    "qada_rem_bulk_fn INTEGER, qada_rem_bulk_tn INTEGER, score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, "
    "oracle_mass_n INTEGER, oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER, calm_n INTEGER, "
    "calm_oracle_global INTEGER, qada_calm_global INTEGER, qada_calm_tp INTEGER, bulk_calm_global INTEGER, "
    "bulk_calm_tp INTEGER, frozen_n INTEGER, frozen_oracle_global INTEGER, qada_frozen_global INTEGER, "
    "qada_frozen_tp INTEGER, bulk_frozen_global INTEGER, bulk_frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V5_VIEWS;

/* Version 6's base lists, the rows every version-6 file holds first (its
 * `fields` and `predictors`): a file is refused without them, so the
 * frozen statements insert them as version 6 did. */
#define SCHEMA_V6_ROWS \
    "INSERT INTO fields VALUES(0,'gate','int'),(1,'score','bits'),(2,'oracle_logit','bits'),(3,'oracle_err','bits')," \
    "(4,'qada_logit','bits'),(5,'qada_bulk_logit','bits'),(6,'keys_read','derived'),(7,'qada_rem_logit','bits')," \
    "(8,'qada_rem_bulk_logit','bits'),(9,'far_mean','bits'),(10,'far_std','bits');\n" \
    "INSERT INTO predictors VALUES(0,'executed','gate','gate','scored'),(1,'aha','score','tau','scored')," \
    "(2,'oracle','oracle_logit','theta','label'),(3,'qada','qada_logit','theta','scored')," \
    "(4,'qada_bulk','qada_bulk_logit','theta','scored'),(5,'qada_rem','qada_rem_logit','theta','scored')," \
    "(6,'qada_rem_bulk','qada_rem_bulk_logit','theta','scored');\n"

/* Version 6's views, made from its base lists (the file's own fields and
 * predictors, version 6's only): what every version-6 file written by a
 * plain build holds, whatever version it was created at. */
#define SCHEMA_V6_VIEWS \
    "CREATE VIEW decisions AS\n" \
    "  SELECT (b.k >> 48) AS run_id, (b.k >> 28 & 1048575) AS pos, (b.k >> 18 & 1023) AS layer, (b.k & 262143) AS" \
    " head, b.gate,\n" \
    "    (CASE WHEN b.score IS NULL THEN NULL WHEN (b.score >> 23 & 255) = 255 THEN CASE WHEN (b.score & 8388607)" \
    " = 0 THEN CASE WHEN (b.score & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN (b.score & 21474836" \
    "48) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.score >> 23 & 255) = 0 THEN (b.score & 8388607) * POWER(2, -149) E" \
    "LSE ((b.score & 8388607) | 8388608) * POWER(2, (b.score >> 23 & 255) - 150) END END) AS score,\n" \
    "    (CASE WHEN b.oracle_logit IS NULL THEN NULL WHEN (b.oracle_logit >> 23 & 255) = 255 THEN CASE WHEN (b.or" \
    "acle_logit & 8388607) = 0 THEN CASE WHEN (b.oracle_logit & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE C" \
    "ASE WHEN (b.oracle_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.oracle_logit >> 23 & 255) = 0 T" \
    "HEN (b.oracle_logit & 8388607) * POWER(2, -149) ELSE ((b.oracle_logit & 8388607) | 8388608) * POWER(2, (b.or" \
    "acle_logit >> 23 & 255) - 150) END END) AS oracle_logit,\n" \
    "    (CASE WHEN b.oracle_err IS NULL THEN NULL WHEN (b.oracle_err >> 23 & 255) = 255 THEN CASE WHEN (b.oracle" \
    "_err & 8388607) = 0 THEN CASE WHEN (b.oracle_err & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN" \
    " (b.oracle_err & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.oracle_err >> 23 & 255) = 0 THEN (b.oracl" \
    "e_err & 8388607) * POWER(2, -149) ELSE ((b.oracle_err & 8388607) | 8388608) * POWER(2, (b.oracle_err >> 23 &" \
    " 255) - 150) END END) AS oracle_err,\n" \
    "    (CASE WHEN b.qada_logit IS NULL THEN NULL WHEN (b.qada_logit >> 23 & 255) = 255 THEN CASE WHEN (b.qada_l" \
    "ogit & 8388607) = 0 THEN CASE WHEN (b.qada_logit & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN" \
    " (b.qada_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.qada_logit >> 23 & 255) = 0 THEN (b.qada_" \
    "logit & 8388607) * POWER(2, -149) ELSE ((b.qada_logit & 8388607) | 8388608) * POWER(2, (b.qada_logit >> 23 &" \
    " 255) - 150) END END) AS qada_logit,\n" \
    "    (CASE WHEN b.qada_bulk_logit IS NULL THEN NULL WHEN (b.qada_bulk_logit >> 23 & 255) = 255 THEN CASE WHEN" \
    " (b.qada_bulk_logit & 8388607) = 0 THEN CASE WHEN (b.qada_bulk_logit & 2147483648) THEN -1e999 ELSE 1e999 EN" \
    "D END ELSE CASE WHEN (b.qada_bulk_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.qada_bulk_logit " \
    ">> 23 & 255) = 0 THEN (b.qada_bulk_logit & 8388607) * POWER(2, -149) ELSE ((b.qada_bulk_logit & 8388607) | 8" \
    "388608) * POWER(2, (b.qada_bulk_logit >> 23 & 255) - 150) END END) AS qada_bulk_logit,\n" \
    "    CASE b.gate WHEN 1 THEN (b.k >> 28 & 1048575) + 1 WHEN 0 THEN MIN(r.sinks, (b.k >> 28 & 1048575) + 1) + " \
    "(b.k >> 28 & 1048575) + 1 - MAX((b.k >> 28 & 1048575) - r.window + 1, MIN(r.sinks, (b.k >> 28 & 1048575) + 1" \
    ")) END AS keys_read,\n" \
    "    (CASE WHEN b.qada_rem_logit IS NULL THEN NULL WHEN (b.qada_rem_logit >> 23 & 255) = 255 THEN CASE WHEN (" \
    "b.qada_rem_logit & 8388607) = 0 THEN CASE WHEN (b.qada_rem_logit & 2147483648) THEN -1e999 ELSE 1e999 END EN" \
    "D ELSE CASE WHEN (b.qada_rem_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.qada_rem_logit >> 23 " \
    "& 255) = 0 THEN (b.qada_rem_logit & 8388607) * POWER(2, -149) ELSE ((b.qada_rem_logit & 8388607) | 8388608) " \
    "* POWER(2, (b.qada_rem_logit >> 23 & 255) - 150) END END) AS qada_rem_logit,\n" \
    "    (CASE WHEN b.qada_rem_bulk_logit IS NULL THEN NULL WHEN (b.qada_rem_bulk_logit >> 23 & 255) = 255 THEN C" \
    "ASE WHEN (b.qada_rem_bulk_logit & 8388607) = 0 THEN CASE WHEN (b.qada_rem_bulk_logit & 2147483648) THEN -1e9" \
    "99 ELSE 1e999 END END ELSE CASE WHEN (b.qada_rem_bulk_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN" \
    " (b.qada_rem_bulk_logit >> 23 & 255) = 0 THEN (b.qada_rem_bulk_logit & 8388607) * POWER(2, -149) ELSE ((b.qa" \
    "da_rem_bulk_logit & 8388607) | 8388608) * POWER(2, (b.qada_rem_bulk_logit >> 23 & 255) - 150) END END) AS qa" \
    "da_rem_bulk_logit,\n" \
    "    (CASE WHEN b.far_mean IS NULL THEN NULL WHEN (b.far_mean >> 23 & 255) = 255 THEN CASE WHEN (b.far_mean &" \
    " 8388607) = 0 THEN CASE WHEN (b.far_mean & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN (b.far_" \
    "mean & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.far_mean >> 23 & 255) = 0 THEN (b.far_mean & 838860" \
    "7) * POWER(2, -149) ELSE ((b.far_mean & 8388607) | 8388608) * POWER(2, (b.far_mean >> 23 & 255) - 150) END E" \
    "ND) AS far_mean,\n" \
    "    (CASE WHEN b.far_std IS NULL THEN NULL WHEN (b.far_std >> 23 & 255) = 255 THEN CASE WHEN (b.far_std & 83" \
    "88607) = 0 THEN CASE WHEN (b.far_std & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN (b.far_std " \
    "& 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.far_std >> 23 & 255) = 0 THEN (b.far_std & 8388607) * PO" \
    "WER(2, -149) ELSE ((b.far_std & 8388607) | 8388608) * POWER(2, (b.far_std >> 23 & 255) - 150) END END) AS fa" \
    "r_std\n" \
    "  FROM decision_bits b LEFT JOIN runs r ON r.run_id = (b.k >> 48);\n" \
    "CREATE VIEW attn_top AS\n" \
    "  SELECT run_id, pos, layer, head, rank, w >> 32 AS key_pos,\n" \
    "    (CASE WHEN (w & 4294967295) IS NULL THEN NULL WHEN ((w & 4294967295) >> 23 & 255) = 255 THEN CASE WHEN (" \
    "(w & 4294967295) & 8388607) = 0 THEN CASE WHEN ((w & 4294967295) & 2147483648) THEN -1e999 ELSE 1e999 END EN" \
    "D ELSE CASE WHEN ((w & 4294967295) & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN ((w & 4294967295) >> 23 " \
    "& 255) = 0 THEN ((w & 4294967295) & 8388607) * POWER(2, -149) ELSE (((w & 4294967295) & 8388607) | 8388608) " \
    "* POWER(2, ((w & 4294967295) >> 23 & 255) - 150) END END) AS weight\n" \
    "  FROM (SELECT (b.k >> 48) AS run_id, (b.k >> 28 & 1048575) AS pos, (b.k >> 18 & 1023) AS layer, (b.k & 2621" \
    "43) AS head, n.rank,\n" \
    "      CASE n.rank WHEN 0 THEN b.top0 WHEN 1 THEN b.top1 WHEN 2 THEN b.top2 WHEN 3 THEN b.top3 WHEN 4 THEN b." \
    "top4 WHEN 5 THEN b.top5 WHEN 6 THEN b.top6 WHEN 7 THEN b.top7 END AS w\n" \
    "    FROM decision_bits b CROSS JOIN (SELECT 0 AS rank UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT" \
    " 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7) n)\n" \
    "  WHERE w IS NOT NULL;\n" \
    "CREATE VIEW masses AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head,\n" \
    "    1.0 / (1.0 + EXP(-d.oracle_logit)) AS oracle_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_logit)) AS qada_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_bulk_logit)) AS qada_bulk_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_rem_logit)) AS qada_rem_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_rem_bulk_logit)) AS qada_rem_bulk_mass,\n" \
    "    CASE WHEN t.n_far > 1 THEN d.far_std / SQRT(2 * LN(t.n_far)) END AS regime\n" \
    "  FROM decisions d LEFT JOIN tokens t USING(run_id, pos);\n" \
    "CREATE VIEW decided AS\n" \
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t USING(run_id, po" \
    "s)\n" \
    "  WHERE t.n_far IS NOT 0;\n" \
    "CREATE VIEW predictions AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n" \
    "    CASE p.predictor\n" \
    "      WHEN 'executed' THEN d.gate\n" \
    "      WHEN 'aha' THEN d.score > d.tau\n" \
    "      WHEN 'qada' THEN d.qada_logit > d.theta_logit\n" \
    "      WHEN 'qada_bulk' THEN d.qada_bulk_logit > d.theta_logit\n" \
    "      WHEN 'qada_rem' THEN d.qada_rem_logit > d.theta_logit\n" \
    "      WHEN 'qada_rem_bulk' THEN d.qada_rem_bulk_logit > d.theta_logit END\n" \
    "      AS predicted,\n" \
    "    d.oracle_logit > d.theta_logit AS oracle\n" \
    "  FROM decided d\n" \
    "  CROSS JOIN (SELECT name AS predictor FROM predictors WHERE role = 'scored' ORDER BY ord) p;\n" \
    "CREATE VIEW head_rates AS\n" \
    "  SELECT s.run_id, s.layer, s.head, s.n, t.global_rate, t.oracle_rate, t.aha_rate, t.qada_rate, t.qada_bulk_" \
    "rate, t.qada_rem_rate, t.qada_rem_bulk_rate,\n" \
    "    s.score_sum / NULLIF(s.score_n, 0) AS mean_score, s.oracle_mass_sum / NULLIF(s.oracle_mass_n, 0) AS mean" \
    "_oracle_mass,\n" \
    "    s.oracle_err_sum / NULLIF(s.oracle_err_n, 0) AS mean_oracle_err,\n" \
    "    CASE WHEN t.gate_n > 0 THEN s.keys_read END AS keys_read\n" \
    "  FROM head_stats s JOIN (SELECT t.run_id, t.layer, t.head,\n" \
    "    SUM(CASE t.predictor WHEN 'executed' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'execut" \
    "ed' THEN t.n END), 0) AS global_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'oracle' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'oracle' " \
    "THEN t.n END), 0) AS oracle_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'aha' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'aha' THEN t" \
    ".n END), 0) AS aha_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada' THEN" \
    " t.n END), 0) AS qada_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_bulk' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada_" \
    "bulk' THEN t.n END), 0) AS qada_bulk_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_rem' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada_r" \
    "em' THEN t.n END), 0) AS qada_rem_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_rem_bulk' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'q" \
    "ada_rem_bulk' THEN t.n END), 0) AS qada_rem_bulk_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'executed' THEN t.n END) AS gate_n\n" \
    "    FROM head_totals t GROUP BY t.run_id, t.layer, t.head) t USING(run_id, layer, head)\n" \
    "  WHERE s.n > 0;\n" \
    "CREATE VIEW layer_rates AS\n" \
    "  SELECT s.run_id, s.layer, s.n, t.global_rate, t.oracle_rate, t.aha_rate, t.qada_rate, t.qada_bulk_rate, t." \
    "qada_rem_rate, t.qada_rem_bulk_rate,\n" \
    "    s.mean_oracle_mass, CASE WHEN t.gate_n > 0 THEN s.keys_read END AS keys_read\n" \
    "  FROM (SELECT run_id, layer, SUM(n) AS n, SUM(oracle_mass_sum) / NULLIF(SUM(oracle_mass_n), 0) AS mean_orac" \
    "le_mass, SUM(keys_read) AS keys_read\n" \
    "    FROM head_stats WHERE n > 0 GROUP BY run_id, layer) s JOIN (SELECT t.run_id, t.layer,\n" \
    "    SUM(CASE t.predictor WHEN 'executed' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'execut" \
    "ed' THEN t.n END), 0) AS global_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'oracle' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'oracle' " \
    "THEN t.n END), 0) AS oracle_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'aha' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'aha' THEN t" \
    ".n END), 0) AS aha_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada' THEN" \
    " t.n END), 0) AS qada_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_bulk' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada_" \
    "bulk' THEN t.n END), 0) AS qada_bulk_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_rem' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada_r" \
    "em' THEN t.n END), 0) AS qada_rem_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_rem_bulk' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'q" \
    "ada_rem_bulk' THEN t.n END), 0) AS qada_rem_bulk_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'executed' THEN t.n END) AS gate_n\n" \
    "    FROM head_totals t GROUP BY t.run_id, t.layer) t USING(run_id, layer);\n" \
    "CREATE VIEW token_share AS\n" \
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n" \
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_global * 1.0 / NULLIF(t.n_gate, 0) END AS global_share,\n" \
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_oracle_global * 1.0 / NULLIF(t.n_oracle, 0) END AS oracle_share,\n" \
    "    t.keys_read_sum AS keys_read, r.n_layers * r.n_heads * (t.pos + 1) AS keys_full,\n" \
    "    t.keys_read_sum * 1.0 / (r.n_layers * r.n_heads * (t.pos + 1)) AS keys_read_frac,\n" \
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n" \
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n" \
    "  FROM tokens t JOIN runs r USING(run_id);\n" \
    "CREATE VIEW confusion_head AS\n" \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n" \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n" \
    "    SELECT h.run_id, h.predictor, h.layer, h.head, h.tp, h.fp, h.fn, h.tn\n" \
    "    FROM head_totals h JOIN predictors p ON p.name = h.predictor WHERE p.role = 'scored')\n" \
    "  WHERE tp + fp + fn + tn > 0;\n" \
    "CREATE VIEW confusion AS\n" \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n" \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n" \
    "    SELECT run_id, predictor, SUM(tp) AS tp, SUM(fp) AS fp, SUM(fn) AS fn, SUM(tn) AS tn\n" \
    "    FROM confusion_head GROUP BY run_id, predictor);\n" \
    "CREATE VIEW run_summary AS\n" \
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n" \
    "    (SELECT SUM(global) * 1.0 / NULLIF(SUM(n), 0) FROM head_totals h WHERE h.run_id = r.run_id AND h.predict" \
    "or = 'executed')\n" \
    "      AS global_share,\n" \
    "    (SELECT SUM(global) * 1.0 / NULLIF(SUM(n), 0) FROM head_totals h WHERE h.run_id = r.run_id AND h.predict" \
    "or = 'oracle')\n" \
    "      AS oracle_share,\n" \
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n" \
    "      AS keys_read_frac,\n" \
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n" \
    "      AS kv_read_frac,\n" \
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n" \
    "      AS perplexity\n" \
    "  FROM runs r;\n"

/* Version 6: the file's lists as tables (`fields`, `predictors`), the totals long
 * (head_totals one row per predictor, head_stats); a version-5 file
 * upgraded by version 6 holds the same text. */
static const char SCHEMA_V6[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL,\n"
    "  top_k INTEGER\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER,\n"
    "  gates BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit I"
    "NTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, far_"
    "std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 INT"
    "EGER\n"
    ");\n"
    "CREATE TABLE fields(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('bits','int','derived'))\n"
    ");\n"
    "CREATE TABLE predictors(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, field TEXT NOT NULL,\n"
    "  rule TEXT NOT NULL CHECK(rule IN ('gate','tau','theta')), role TEXT NOT NULL CHECK(role IN ('scored','labe"
    "l'))\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, predictor TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL, global INTEGER NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  calm_n INTEGER, calm_global INTEGER, calm_tp INTEGER, frozen_n INTEGER, frozen_global INTEGER,\n"
    "  frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE head_stats(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL,\n"
    "  score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n INTEGER,\n"
    "  oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V6_VIEWS SCHEMA_V6_ROWS;

/* A version-1 file upgraded by version 6. */
static const char SCHEMA_V6_FROM_V1[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0\n"
    ", theta_logit REAL, top_k INTEGER);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT\n"
    ", theta_logit REAL, kv_read_frac REAL);\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL, n_far INTEGER, kv_read INTEGER, n_ga"
    "te INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER, gates BLOB,"
    "\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit I"
    "NTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, far_"
    "std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 INT"
    "EGER\n"
    ");\n"
    "CREATE TABLE fields(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('bits','int','derived'))\n"
    ");\n"
    "CREATE TABLE predictors(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, field TEXT NOT NULL,\n"
    "  rule TEXT NOT NULL CHECK(rule IN ('gate','tau','theta')), role TEXT NOT NULL CHECK(role IN ('scored','labe"
    "l'))\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, predictor TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL, global INTEGER NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  calm_n INTEGER, calm_global INTEGER, calm_tp INTEGER, frozen_n INTEGER, frozen_global INTEGER,\n"
    "  frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE head_stats(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL,\n"
    "  score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n INTEGER,\n"
    "  oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V6_VIEWS SCHEMA_V6_ROWS;

/* A version-2 or 3 file upgraded by version 6. */
static const char SCHEMA_V6_FROM_V2[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL\n"
    ", top_k INTEGER);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER, n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGE"
    "R, keys_read_sum INTEGER, gates BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit I"
    "NTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, far_"
    "std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 INT"
    "EGER\n"
    ");\n"
    "CREATE TABLE fields(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('bits','int','derived'))\n"
    ");\n"
    "CREATE TABLE predictors(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, field TEXT NOT NULL,\n"
    "  rule TEXT NOT NULL CHECK(rule IN ('gate','tau','theta')), role TEXT NOT NULL CHECK(role IN ('scored','labe"
    "l'))\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, predictor TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL, global INTEGER NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  calm_n INTEGER, calm_global INTEGER, calm_tp INTEGER, frozen_n INTEGER, frozen_global INTEGER,\n"
    "  frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE head_stats(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL,\n"
    "  score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n INTEGER,\n"
    "  oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V6_VIEWS SCHEMA_V6_ROWS;

/* A version-4 file upgraded by version 6. */
static const char SCHEMA_V6_FROM_V4[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL,\n"
    "  top_k INTEGER\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER, gates "
    "BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit I"
    "NTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, far_"
    "std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 INT"
    "EGER\n"
    ");\n"
    "CREATE TABLE fields(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('bits','int','derived'))\n"
    ");\n"
    "CREATE TABLE predictors(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, field TEXT NOT NULL,\n"
    "  rule TEXT NOT NULL CHECK(rule IN ('gate','tau','theta')), role TEXT NOT NULL CHECK(role IN ('scored','labe"
    "l'))\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, predictor TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL, global INTEGER NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  calm_n INTEGER, calm_global INTEGER, calm_tp INTEGER, frozen_n INTEGER, frozen_global INTEGER,\n"
    "  frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE head_stats(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL,\n"
    "  score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n INTEGER,\n"
    "  oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V6_VIEWS SCHEMA_V6_ROWS;

/* Version 7's views, made from its base lists (version 6's fields and
 * predictors): what every version-7 file written by a plain build holds,
 * whatever version it was created at; decisions.keys_read reads run_layers. */
#define SCHEMA_V7_VIEWS \
    "CREATE VIEW decisions AS\n" \
    "  SELECT (b.k >> 48) AS run_id, (b.k >> 28 & 1048575) AS pos, (b.k >> 18 & 1023) AS layer, (b.k & 262143) AS" \
    " head, b.gate,\n" \
    "    (CASE WHEN b.score IS NULL THEN NULL WHEN (b.score >> 23 & 255) = 255 THEN CASE WHEN (b.score & 8388607)" \
    " = 0 THEN CASE WHEN (b.score & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN (b.score & 21474836" \
    "48) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.score >> 23 & 255) = 0 THEN (b.score & 8388607) * POWER(2, -149) E" \
    "LSE ((b.score & 8388607) | 8388608) * POWER(2, (b.score >> 23 & 255) - 150) END END) AS score,\n" \
    "    (CASE WHEN b.oracle_logit IS NULL THEN NULL WHEN (b.oracle_logit >> 23 & 255) = 255 THEN CASE WHEN (b.or" \
    "acle_logit & 8388607) = 0 THEN CASE WHEN (b.oracle_logit & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE C" \
    "ASE WHEN (b.oracle_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.oracle_logit >> 23 & 255) = 0 T" \
    "HEN (b.oracle_logit & 8388607) * POWER(2, -149) ELSE ((b.oracle_logit & 8388607) | 8388608) * POWER(2, (b.or" \
    "acle_logit >> 23 & 255) - 150) END END) AS oracle_logit,\n" \
    "    (CASE WHEN b.oracle_err IS NULL THEN NULL WHEN (b.oracle_err >> 23 & 255) = 255 THEN CASE WHEN (b.oracle" \
    "_err & 8388607) = 0 THEN CASE WHEN (b.oracle_err & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN" \
    " (b.oracle_err & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.oracle_err >> 23 & 255) = 0 THEN (b.oracl" \
    "e_err & 8388607) * POWER(2, -149) ELSE ((b.oracle_err & 8388607) | 8388608) * POWER(2, (b.oracle_err >> 23 &" \
    " 255) - 150) END END) AS oracle_err,\n" \
    "    (CASE WHEN b.qada_logit IS NULL THEN NULL WHEN (b.qada_logit >> 23 & 255) = 255 THEN CASE WHEN (b.qada_l" \
    "ogit & 8388607) = 0 THEN CASE WHEN (b.qada_logit & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN" \
    " (b.qada_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.qada_logit >> 23 & 255) = 0 THEN (b.qada_" \
    "logit & 8388607) * POWER(2, -149) ELSE ((b.qada_logit & 8388607) | 8388608) * POWER(2, (b.qada_logit >> 23 &" \
    " 255) - 150) END END) AS qada_logit,\n" \
    "    (CASE WHEN b.qada_bulk_logit IS NULL THEN NULL WHEN (b.qada_bulk_logit >> 23 & 255) = 255 THEN CASE WHEN" \
    " (b.qada_bulk_logit & 8388607) = 0 THEN CASE WHEN (b.qada_bulk_logit & 2147483648) THEN -1e999 ELSE 1e999 EN" \
    "D END ELSE CASE WHEN (b.qada_bulk_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.qada_bulk_logit " \
    ">> 23 & 255) = 0 THEN (b.qada_bulk_logit & 8388607) * POWER(2, -149) ELSE ((b.qada_bulk_logit & 8388607) | 8" \
    "388608) * POWER(2, (b.qada_bulk_logit >> 23 & 255) - 150) END END) AS qada_bulk_logit,\n" \
    "    CASE b.gate WHEN 1 THEN (b.k >> 28 & 1048575) + 1 WHEN 0 THEN MIN(r.sinks, (b.k >> 28 & 1048575) + 1) + " \
    "(b.k >> 28 & 1048575) + 1 - MAX((b.k >> 28 & 1048575) - r.window + 1, MIN(r.sinks, (b.k >> 28 & 1048575) + 1" \
    ")) ELSE (SELECT MIN(l.window, (b.k >> 28 & 1048575) + 1) FROM run_layers l WHERE l.run_id = (b.k >> 48) AND " \
    "l.layer = (b.k >> 18 & 1023) AND l.window > 0) END AS keys_read,\n" \
    "    (CASE WHEN b.qada_rem_logit IS NULL THEN NULL WHEN (b.qada_rem_logit >> 23 & 255) = 255 THEN CASE WHEN (" \
    "b.qada_rem_logit & 8388607) = 0 THEN CASE WHEN (b.qada_rem_logit & 2147483648) THEN -1e999 ELSE 1e999 END EN" \
    "D ELSE CASE WHEN (b.qada_rem_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.qada_rem_logit >> 23 " \
    "& 255) = 0 THEN (b.qada_rem_logit & 8388607) * POWER(2, -149) ELSE ((b.qada_rem_logit & 8388607) | 8388608) " \
    "* POWER(2, (b.qada_rem_logit >> 23 & 255) - 150) END END) AS qada_rem_logit,\n" \
    "    (CASE WHEN b.qada_rem_bulk_logit IS NULL THEN NULL WHEN (b.qada_rem_bulk_logit >> 23 & 255) = 255 THEN C" \
    "ASE WHEN (b.qada_rem_bulk_logit & 8388607) = 0 THEN CASE WHEN (b.qada_rem_bulk_logit & 2147483648) THEN -1e9" \
    "99 ELSE 1e999 END END ELSE CASE WHEN (b.qada_rem_bulk_logit & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN" \
    " (b.qada_rem_bulk_logit >> 23 & 255) = 0 THEN (b.qada_rem_bulk_logit & 8388607) * POWER(2, -149) ELSE ((b.qa" \
    "da_rem_bulk_logit & 8388607) | 8388608) * POWER(2, (b.qada_rem_bulk_logit >> 23 & 255) - 150) END END) AS qa" \
    "da_rem_bulk_logit,\n" \
    "    (CASE WHEN b.far_mean IS NULL THEN NULL WHEN (b.far_mean >> 23 & 255) = 255 THEN CASE WHEN (b.far_mean &" \
    " 8388607) = 0 THEN CASE WHEN (b.far_mean & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN (b.far_" \
    "mean & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.far_mean >> 23 & 255) = 0 THEN (b.far_mean & 838860" \
    "7) * POWER(2, -149) ELSE ((b.far_mean & 8388607) | 8388608) * POWER(2, (b.far_mean >> 23 & 255) - 150) END E" \
    "ND) AS far_mean,\n" \
    "    (CASE WHEN b.far_std IS NULL THEN NULL WHEN (b.far_std >> 23 & 255) = 255 THEN CASE WHEN (b.far_std & 83" \
    "88607) = 0 THEN CASE WHEN (b.far_std & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN (b.far_std " \
    "& 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN (b.far_std >> 23 & 255) = 0 THEN (b.far_std & 8388607) * PO" \
    "WER(2, -149) ELSE ((b.far_std & 8388607) | 8388608) * POWER(2, (b.far_std >> 23 & 255) - 150) END END) AS fa" \
    "r_std\n" \
    "  FROM decision_bits b LEFT JOIN runs r ON r.run_id = (b.k >> 48);\n" \
    "CREATE VIEW attn_top AS\n" \
    "  SELECT run_id, pos, layer, head, rank, w >> 32 AS key_pos,\n" \
    "    (CASE WHEN (w & 4294967295) IS NULL THEN NULL WHEN ((w & 4294967295) >> 23 & 255) = 255 THEN CASE WHEN (" \
    "(w & 4294967295) & 8388607) = 0 THEN CASE WHEN ((w & 4294967295) & 2147483648) THEN -1e999 ELSE 1e999 END EN" \
    "D ELSE CASE WHEN ((w & 4294967295) & 2147483648) THEN -1.0 ELSE 1.0 END * CASE WHEN ((w & 4294967295) >> 23 " \
    "& 255) = 0 THEN ((w & 4294967295) & 8388607) * POWER(2, -149) ELSE (((w & 4294967295) & 8388607) | 8388608) " \
    "* POWER(2, ((w & 4294967295) >> 23 & 255) - 150) END END) AS weight\n" \
    "  FROM (SELECT (b.k >> 48) AS run_id, (b.k >> 28 & 1048575) AS pos, (b.k >> 18 & 1023) AS layer, (b.k & 2621" \
    "43) AS head, n.rank,\n" \
    "      CASE n.rank WHEN 0 THEN b.top0 WHEN 1 THEN b.top1 WHEN 2 THEN b.top2 WHEN 3 THEN b.top3 WHEN 4 THEN b." \
    "top4 WHEN 5 THEN b.top5 WHEN 6 THEN b.top6 WHEN 7 THEN b.top7 END AS w\n" \
    "    FROM decision_bits b CROSS JOIN (SELECT 0 AS rank UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT" \
    " 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7) n)\n" \
    "  WHERE w IS NOT NULL;\n" \
    "CREATE VIEW masses AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head,\n" \
    "    1.0 / (1.0 + EXP(-d.oracle_logit)) AS oracle_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_logit)) AS qada_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_bulk_logit)) AS qada_bulk_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_rem_logit)) AS qada_rem_mass,\n" \
    "    1.0 / (1.0 + EXP(-d.qada_rem_bulk_logit)) AS qada_rem_bulk_mass,\n" \
    "    CASE WHEN t.n_far > 1 THEN d.far_std / SQRT(2 * LN(t.n_far)) END AS regime\n" \
    "  FROM decisions d LEFT JOIN tokens t USING(run_id, pos);\n" \
    "CREATE VIEW decided AS\n" \
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t USING(run_id, po" \
    "s)\n" \
    "  WHERE t.n_far IS NOT 0;\n" \
    "CREATE VIEW predictions AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n" \
    "    CASE p.predictor\n" \
    "      WHEN 'executed' THEN d.gate\n" \
    "      WHEN 'aha' THEN d.score > d.tau\n" \
    "      WHEN 'qada' THEN d.qada_logit > d.theta_logit\n" \
    "      WHEN 'qada_bulk' THEN d.qada_bulk_logit > d.theta_logit\n" \
    "      WHEN 'qada_rem' THEN d.qada_rem_logit > d.theta_logit\n" \
    "      WHEN 'qada_rem_bulk' THEN d.qada_rem_bulk_logit > d.theta_logit END\n" \
    "      AS predicted,\n" \
    "    d.oracle_logit > d.theta_logit AS oracle\n" \
    "  FROM decided d\n" \
    "  CROSS JOIN (SELECT name AS predictor FROM predictors WHERE role = 'scored' ORDER BY ord) p;\n" \
    "CREATE VIEW head_rates AS\n" \
    "  SELECT s.run_id, s.layer, s.head, s.n, t.global_rate, t.oracle_rate, t.aha_rate, t.qada_rate, t.qada_bulk_" \
    "rate, t.qada_rem_rate, t.qada_rem_bulk_rate,\n" \
    "    s.score_sum / NULLIF(s.score_n, 0) AS mean_score, s.oracle_mass_sum / NULLIF(s.oracle_mass_n, 0) AS mean" \
    "_oracle_mass,\n" \
    "    s.oracle_err_sum / NULLIF(s.oracle_err_n, 0) AS mean_oracle_err,\n" \
    "    CASE WHEN t.gate_n > 0 THEN s.keys_read END AS keys_read\n" \
    "  FROM head_stats s JOIN (SELECT t.run_id, t.layer, t.head,\n" \
    "    SUM(CASE t.predictor WHEN 'executed' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'execut" \
    "ed' THEN t.n END), 0) AS global_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'oracle' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'oracle' " \
    "THEN t.n END), 0) AS oracle_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'aha' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'aha' THEN t" \
    ".n END), 0) AS aha_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada' THEN" \
    " t.n END), 0) AS qada_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_bulk' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada_" \
    "bulk' THEN t.n END), 0) AS qada_bulk_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_rem' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada_r" \
    "em' THEN t.n END), 0) AS qada_rem_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_rem_bulk' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'q" \
    "ada_rem_bulk' THEN t.n END), 0) AS qada_rem_bulk_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'executed' THEN t.n END) AS gate_n\n" \
    "    FROM head_totals t GROUP BY t.run_id, t.layer, t.head) t USING(run_id, layer, head)\n" \
    "  WHERE s.n > 0;\n" \
    "CREATE VIEW layer_rates AS\n" \
    "  SELECT s.run_id, s.layer, s.n, t.global_rate, t.oracle_rate, t.aha_rate, t.qada_rate, t.qada_bulk_rate, t." \
    "qada_rem_rate, t.qada_rem_bulk_rate,\n" \
    "    s.mean_oracle_mass, CASE WHEN t.gate_n > 0 THEN s.keys_read END AS keys_read\n" \
    "  FROM (SELECT run_id, layer, SUM(n) AS n, SUM(oracle_mass_sum) / NULLIF(SUM(oracle_mass_n), 0) AS mean_orac" \
    "le_mass, SUM(keys_read) AS keys_read\n" \
    "    FROM head_stats WHERE n > 0 GROUP BY run_id, layer) s JOIN (SELECT t.run_id, t.layer,\n" \
    "    SUM(CASE t.predictor WHEN 'executed' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'execut" \
    "ed' THEN t.n END), 0) AS global_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'oracle' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'oracle' " \
    "THEN t.n END), 0) AS oracle_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'aha' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'aha' THEN t" \
    ".n END), 0) AS aha_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada' THEN" \
    " t.n END), 0) AS qada_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_bulk' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada_" \
    "bulk' THEN t.n END), 0) AS qada_bulk_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_rem' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'qada_r" \
    "em' THEN t.n END), 0) AS qada_rem_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'qada_rem_bulk' THEN t.global END) * 1.0 / NULLIF(SUM(CASE t.predictor WHEN 'q" \
    "ada_rem_bulk' THEN t.n END), 0) AS qada_rem_bulk_rate,\n" \
    "    SUM(CASE t.predictor WHEN 'executed' THEN t.n END) AS gate_n\n" \
    "    FROM head_totals t GROUP BY t.run_id, t.layer) t USING(run_id, layer);\n" \
    "CREATE VIEW token_share AS\n" \
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n" \
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_global * 1.0 / NULLIF(t.n_gate, 0) END AS global_share,\n" \
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_oracle_global * 1.0 / NULLIF(t.n_oracle, 0) END AS oracle_share,\n" \
    "    t.keys_read_sum AS keys_read, r.n_layers * r.n_heads * (t.pos + 1) AS keys_full,\n" \
    "    t.keys_read_sum * 1.0 / (r.n_layers * r.n_heads * (t.pos + 1)) AS keys_read_frac,\n" \
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n" \
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n" \
    "  FROM tokens t JOIN runs r USING(run_id);\n" \
    "CREATE VIEW confusion_head AS\n" \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n" \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n" \
    "    SELECT h.run_id, h.predictor, h.layer, h.head, h.tp, h.fp, h.fn, h.tn\n" \
    "    FROM head_totals h JOIN predictors p ON p.name = h.predictor WHERE p.role = 'scored')\n" \
    "  WHERE tp + fp + fn + tn > 0;\n" \
    "CREATE VIEW confusion AS\n" \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n" \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n" \
    "    SELECT run_id, predictor, SUM(tp) AS tp, SUM(fp) AS fp, SUM(fn) AS fn, SUM(tn) AS tn\n" \
    "    FROM confusion_head GROUP BY run_id, predictor);\n" \
    "CREATE VIEW run_summary AS\n" \
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n" \
    "    (SELECT SUM(global) * 1.0 / NULLIF(SUM(n), 0) FROM head_totals h WHERE h.run_id = r.run_id AND h.predict" \
    "or = 'executed')\n" \
    "      AS global_share,\n" \
    "    (SELECT SUM(global) * 1.0 / NULLIF(SUM(n), 0) FROM head_totals h WHERE h.run_id = r.run_id AND h.predict" \
    "or = 'oracle')\n" \
    "      AS oracle_share,\n" \
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n" \
    "      AS keys_read_frac,\n" \
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n" \
    "      AS kv_read_frac,\n" \
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n" \
    "      AS perplexity\n" \
    "  FROM runs r;\n" \

/* Version 7: version 6's tables and run_layers (each run's layer kinds); as a new file got it,
 * and as version 7 left a version-5 or 6 file it upgraded. */
static const char SCHEMA_V7[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL,\n"
    "  top_k INTEGER\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER,\n"
    "  gates BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit I"
    "NTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, far_"
    "std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 INT"
    "EGER\n"
    ");\n"
    "CREATE TABLE fields(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('bits','int','derived'))\n"
    ");\n"
    "CREATE TABLE predictors(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, field TEXT NOT NULL,\n"
    "  rule TEXT NOT NULL CHECK(rule IN ('gate','tau','theta')), role TEXT NOT NULL CHECK(role IN ('scored','labe"
    "l'))\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, predictor TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL, global INTEGER NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  calm_n INTEGER, calm_global INTEGER, calm_tp INTEGER, frozen_n INTEGER, frozen_global INTEGER,\n"
    "  frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE head_stats(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL,\n"
    "  score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n INTEGER,\n"
    "  oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE run_layers(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('global','local')), window INTEGER NOT NULL,\n"
    "  PRIMARY KEY(run_id, layer)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V7_VIEWS SCHEMA_V6_ROWS;

/* A version-1 file upgraded by version 7. */
static const char SCHEMA_V7_FROM_V1[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0\n"
    ", theta_logit REAL, top_k INTEGER);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT\n"
    ", theta_logit REAL, kv_read_frac REAL);\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL, n_far INTEGER, kv_read INTEGER, n_ga"
    "te INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER, gates BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit I"
    "NTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, far_"
    "std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 INT"
    "EGER\n"
    ");\n"
    "CREATE TABLE fields(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('bits','int','derived'))\n"
    ");\n"
    "CREATE TABLE predictors(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, field TEXT NOT NULL,\n"
    "  rule TEXT NOT NULL CHECK(rule IN ('gate','tau','theta')), role TEXT NOT NULL CHECK(role IN ('scored','labe"
    "l'))\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, predictor TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL, global INTEGER NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  calm_n INTEGER, calm_global INTEGER, calm_tp INTEGER, frozen_n INTEGER, frozen_global INTEGER,\n"
    "  frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE head_stats(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL,\n"
    "  score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n INTEGER,\n"
    "  oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE run_layers(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('global','local')), window INTEGER NOT NULL,\n"
    "  PRIMARY KEY(run_id, layer)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V7_VIEWS SCHEMA_V6_ROWS;

/* A version-2 or 3 file upgraded by version 7. */
static const char SCHEMA_V7_FROM_V2[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL\n"
    ", top_k INTEGER);\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER, n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGE"
    "R, keys_read_sum INTEGER, gates BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit I"
    "NTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, far_"
    "std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 INT"
    "EGER\n"
    ");\n"
    "CREATE TABLE fields(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('bits','int','derived'))\n"
    ");\n"
    "CREATE TABLE predictors(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, field TEXT NOT NULL,\n"
    "  rule TEXT NOT NULL CHECK(rule IN ('gate','tau','theta')), role TEXT NOT NULL CHECK(role IN ('scored','labe"
    "l'))\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, predictor TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL, global INTEGER NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  calm_n INTEGER, calm_global INTEGER, calm_tp INTEGER, frozen_n INTEGER, frozen_global INTEGER,\n"
    "  frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE head_stats(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL,\n"
    "  score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n INTEGER,\n"
    "  oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE run_layers(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('global','local')), window INTEGER NOT NULL,\n"
    "  PRIMARY KEY(run_id, layer)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V7_VIEWS SCHEMA_V6_ROWS;

/* A version-4 file upgraded by version 7. */
static const char SCHEMA_V7_FROM_V4[] =
    "CREATE TABLE runs(\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  parent_run_id INTEGER REFERENCES runs(run_id),\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','interrupted','failed')),\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  ahascope_version TEXT NOT NULL,\n"
    "  writer_host TEXT, writer_pid INTEGER, writer_start INTEGER,\n"
    "  model TEXT NOT NULL, model_sha256 TEXT, arch TEXT,\n"
    "  dim INTEGER, hidden_dim INTEGER, n_layers INTEGER NOT NULL, n_heads INTEGER NOT NULL,\n"
    "  n_kv_heads INTEGER, vocab_size INTEGER, seq_len INTEGER,\n"
    "  tokenizer TEXT, tokenizer_sha256 TEXT,\n"
    "  policy TEXT NOT NULL, window INTEGER, sinks INTEGER, tau REAL, theta REAL, p REAL,\n"
    "  profile INTEGER, routers TEXT, routers_sha256 TEXT, static_heads TEXT,\n"
    "  prompt TEXT, steps INTEGER, temperature REAL, topp REAL, seed TEXT,\n"
    "  origin TEXT,\n"
    "  eval_id INTEGER REFERENCES evals(eval_id),\n"
    "  n_tokens INTEGER NOT NULL DEFAULT 0,\n"
    "  theta_logit REAL,\n"
    "  top_k INTEGER\n"
    ");\n"
    "CREATE TABLE evals(\n"
    "  eval_id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, label TEXT,\n"
    "  model TEXT, model_sha256 TEXT, policy TEXT NOT NULL, window INTEGER, sinks INTEGER,\n"
    "  tau REAL, theta REAL, p REAL, routers TEXT, static_heads TEXT, data TEXT,\n"
    "  n_seqs INTEGER, n_tokens INTEGER, perplexity REAL, perplexity_full REAL, kl_mean REAL,\n"
    "  global_share REAL, keys_read_frac REAL, matched_to TEXT,\n"
    "  theta_logit REAL, kv_read_frac REAL\n"
    ");\n"
    "CREATE TABLE eval_scores(\n"
    "  eval_id INTEGER NOT NULL, predictor TEXT NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  precision REAL, recall REAL, f1 REAL, predicted_rate REAL,\n"
    "  PRIMARY KEY(eval_id, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tokens(\n"
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, token_id INTEGER NOT NULL, piece TEXT,\n"
    "  is_prompt INTEGER NOT NULL, logprob REAL, entropy REAL, step_us REAL,\n"
    "  n_far INTEGER, kv_read INTEGER,\n"
    "  n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER, gates "
    "BLOB,\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE decision_bits(\n"
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, qada_logit I"
    "NTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, far_mean INTEGER, far_"
    "std INTEGER,\n"
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, top7 INT"
    "EGER\n"
    ");\n"
    "CREATE TABLE fields(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('bits','int','derived'))\n"
    ");\n"
    "CREATE TABLE predictors(\n"
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, field TEXT NOT NULL,\n"
    "  rule TEXT NOT NULL CHECK(rule IN ('gate','tau','theta')), role TEXT NOT NULL CHECK(role IN ('scored','labe"
    "l'))\n"
    ");\n"
    "CREATE TABLE head_totals(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, predictor TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL, global INTEGER NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"
    "  calm_n INTEGER, calm_global INTEGER, calm_tp INTEGER, frozen_n INTEGER, frozen_global INTEGER,\n"
    "  frozen_tp INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head, predictor)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE head_stats(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL,\n"
    "  score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n INTEGER,\n"
    "  oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER,\n"
    "  PRIMARY KEY(run_id, layer, head)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE run_layers(\n"
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('global','local')), window INTEGER NOT NULL,\n"
    "  PRIMARY KEY(run_id, layer)\n"
    ") WITHOUT ROWID;\n"
    SCHEMA_V7_VIEWS SCHEMA_V6_ROWS;

const char *store_schema_old_upgraded(int created, int ver) {
    if (ver == STORE_SCHEMA_VERSION) return store_schema_old(created);
    if (created == 1 && ver == 2) return SCHEMA_V2_FROM_V1;
    if (ver == 3) return created == 1 ? SCHEMA_V3_FROM_V1 : created == 2 ? SCHEMA_V3_FROM_V2 : NULL;
    if (ver == 4) return created == 1 ? SCHEMA_V4_FROM_V1 : created == 2 || created == 3 ? SCHEMA_V4_FROM_V2 : NULL;
    if (ver == 5)
        return created == 1 ? SCHEMA_V5_FROM_V1 : created == 2 || created == 3 ? SCHEMA_V5_FROM_V2
             : created == 4 ? SCHEMA_V5_FROM_V4 : NULL;
    if (ver == 6)
        return created == 1 ? SCHEMA_V6_FROM_V1 : created == 2 || created == 3 ? SCHEMA_V6_FROM_V2
             : created == 4 ? SCHEMA_V6_FROM_V4 : created == 5 ? SCHEMA_V6 : NULL;
    if (ver == 7)
        return created == 1 ? SCHEMA_V7_FROM_V1 : created == 2 || created == 3 ? SCHEMA_V7_FROM_V2
             : created == 4 ? SCHEMA_V7_FROM_V4 : created == 5 || created == 6 ? SCHEMA_V7 : NULL;
    return NULL;
}

const char *store_schema_old(int version) {
    return version == 1 ? SCHEMA_V1 : version == 2 ? SCHEMA_V2 : version == 3 ? SCHEMA_V3
         : version == 4 ? SCHEMA_V4 : version == 5 ? SCHEMA_V5 : version == 6 ? SCHEMA_V6
         : version == 7 ? SCHEMA_V7 : NULL;
}

const char *store_schema_old_views(int version) {
    return version == 3 ? strstr(SCHEMA_V3, "CREATE VIEW masses") : NULL;
}
