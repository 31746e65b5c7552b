/* schema.c — the tables and views of an ahascope database (documented for
 * users in store/SCHEMA.md; keep the two in step). */
#include <stdlib.h>
#include <string.h>

#include "engine/decide.h"
#include "store/internal.h"

/* The per-head fields as (name, SQL type) pairs, in the list's order. The
 * first SCHEMA_V2_HEAD_FIELDS were version 2's columns; version 3 appended
 * the rest (the REM-corrected estimates and the far scores' moments). */
#define SCHEMA_PAIR(name, type, missing, sql, show, title, short_name, doc) {#name, #sql},
static const char *const HEAD_FIELDS[][2] = {TRACE_HEAD_FIELDS(SCHEMA_PAIR)};
#define SCHEMA_N_HEAD_FIELDS (sizeof HEAD_FIELDS / sizeof HEAD_FIELDS[0])
#define SCHEMA_V2_HEAD_FIELDS 7

/* What a position's row keeps for token_share (StoreStepCounts), added by
 * version 4. */
#define SCHEMA_TOKEN_COUNTS                                                                                    \
    "n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER"

/* Every head's executed gate at a position, two bits a head (store_gate_bits
 * in layout.c): the diff of two runs reads one row a position instead of
 * one a decision. Added by version 5. */
#define SCHEMA_TOKEN_GATES "gates BLOB"

/* The tables. Columns added by a schema version go at the end of their
 * table, so a migrated database and a new one have the same column order
 * (merge copies rows by position). decisions is rebuilt by the migration
 * instead, since its columns changed meaning. */
/* Where each head looked beyond its local set (record --attn-top K, the
 * TUI): its K heaviest far positions, rank 0 the heaviest. Added by
 * version 3, so also the whole of MIGRATE_2_TO_3. */
#define SCHEMA_ATTN_TOP                                                                                        \
    "CREATE TABLE attn_top(\n"                                                                                 \
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,\n"        \
    "  rank INTEGER NOT NULL, key_pos INTEGER NOT NULL, weight REAL NOT NULL,\n"                               \
    "  PRIMARY KEY(run_id, pos, layer, head, rank)\n"                                                          \
    ") WITHOUT ROWID;\n"

static const char SCHEMA_TABLES[] =
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
    "  " SCHEMA_TOKEN_COUNTS ",\n"
    "  " SCHEMA_TOKEN_GATES ",\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n";

/* Every decision of every run, one row each, appended in key order so
 * SQLite's append path fills its pages: the packed key (internal.h,
 * store_k), the gate, each REAL field as its float32's bits, and the
 * attention top-k words; keys_read is derived (the decisions view). */
#define SCHEMA_BITS_BITS(name, type, missing) ", " #name " INTEGER"
#define SCHEMA_BITS_KEPT(name, type, missing) ", " #name " INTEGER"
#define SCHEMA_BITS_DERIVED(name, type, missing)
#define SCHEMA_BITS_FIELD(name, type, missing, sql, show, title, short_name, doc) \
    STORE_BY_KIND(SCHEMA_BITS_, name, type, missing, sql, show)
#define SCHEMA_DECISION_TABLES                                                                                 \
    "CREATE TABLE decision_bits(\n"                                                                            \
    "  k INTEGER PRIMARY KEY" TRACE_HEAD_FIELDS(SCHEMA_BITS_FIELD) ",\n"                                        \
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER,"        \
    " top7 INTEGER\n"                                                                                            \
    ");\n"                                                                                                       \
    "CREATE TABLE head_totals(\n  " STORE_TOT_COLUMNS ",\n  PRIMARY KEY(run_id, layer, head)\n) WITHOUT ROWID;\n"

static const char SCHEMA_DECISIONS[] = SCHEMA_DECISION_TABLES;

/* The predictors' parts of the views, from engine/predictors.h: the
 * line breaks between them are the list's sql and sql_names columns, so
 * the text is version 3's byte for byte. */
/* A predictor's rule as SQL, prefix p naming the row: the gate itself, the
 * router score against τ, or a log-odds against the run's logit(θ). */
#define SCHEMA_RULE_GATE(p, f) p f
#define SCHEMA_RULE_TAU(p, f) p f " > " p "tau"
#define SCHEMA_RULE_THETA(p, f) p f " > " p "theta_logit"
/* masses: each log-odds estimate as a probability. */
#define SCHEMA_MASS(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)                        \
    PRED_IF(PRED_THETA_##thr,                                                                                  \
            PRED_IF(PRED_IN_SQL_##sql, PRED_SQL_SEP(sql, "    ") "1.0 / (1.0 + EXP(-d." #field ")) AS " word "_mass,"))
/* predictions: each predictor's decision, by name. */
#define SCHEMA_CASE(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)                        \
    PRED_SQL_SEP(sql, "      ") "WHEN '" word "' THEN " SCHEMA_RULE_##thr("d.", #field)
#define SCHEMA_LABEL(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)                       \
    "    " SCHEMA_RULE_##thr("d.", #field) " AS " word "\n"
#define SCHEMA_NAME_FIRST(word) "SELECT '" word "' AS predictor"
#define SCHEMA_NAME_SAME(word) " UNION ALL SELECT '" word "'"
#define SCHEMA_NAME_WRAP(word) "\n              UNION ALL SELECT '" word "'"
#define SCHEMA_NAME(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names) SCHEMA_NAME_##sql_names(word)
/* head_rates, layer_rates: the share each predictor calls global (the
 * executed gate's is global_rate, written out before them). */
#define SCHEMA_RATE_AVG(sep, thr, field, word) sep "AVG(" SCHEMA_RULE_##thr("", #field) ") AS " word "_rate,"
#define SCHEMA_RATE_GATE(sql, field, word)
#define SCHEMA_RATE_TAU(sql, field, word) SCHEMA_RATE_AVG(PRED_SQL_SEP(sql, "    "), TAU, field, word)
#define SCHEMA_RATE_THETA(sql, field, word) SCHEMA_RATE_AVG(PRED_SQL_SEP(sql, "    "), THETA, field, word)
#define SCHEMA_RATE(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)                        \
    SCHEMA_RATE_##thr(sql, field, word)
#define SCHEMA_RATE_LABEL(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)                  \
    SCHEMA_RATE_AVG("\n    ", thr, field, word)
#define SCHEMA_RATES PRED_TABLE(DECIDE_LABEL, SCHEMA_RATE_LABEL) PRED_TABLE(DECIDE_IN_SQL, SCHEMA_RATE)

/* The views, "CREATE @ VIEW", @ replaced by nothing for the file's own views, "TEMP" for
 * the compatibility views over an old file opened read-only.
 *
 * Predicted global = value above the run's threshold; NULL where the value
 * was not computed, so every rate and confusion skips it; positions with
 * no far keys (tokens.n_far = 0) are not decisions and are left out. The
 * views (decided, predictions, *_rates, token_share, confusion*,
 * run_summary) are a mirror in SQL of engine/decide.h's rules and rates,
 * the one definition the C code uses; tests/test_decide.c checks the two
 * agree cell for cell. */
#define SCHEMA_ROW_VIEWS \
    "CREATE @ VIEW masses AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head," PREDICTORS(SCHEMA_MASS) "\n" \
    "    CASE WHEN t.n_far > 1 THEN d.far_std / SQRT(2 * LN(t.n_far)) END AS regime\n" \
    "  FROM decisions d LEFT JOIN tokens t USING(run_id, pos);\n" \
    "CREATE @ VIEW decided AS\n" \
    "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id) JOIN tokens t USING(run_id, pos)\n" \
    "  WHERE t.n_far IS NOT 0;\n" \
    "CREATE @ VIEW predictions AS\n" \
    "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n" \
    "    CASE p.predictor" PRED_TABLE(DECIDE_IN_SQL, SCHEMA_CASE) " END\n" \
    "      AS predicted,\n" \
    PRED_TABLE(DECIDE_LABEL, SCHEMA_LABEL) \
    "  FROM decided d\n" \
    "  CROSS JOIN (" PRED_TABLE(DECIDE_IN_SQL, SCHEMA_NAME) ") p;\n" \

/* Version 3's summary views, over every row: what an older file opened
 * read-only is summarised by (TEMP views over its own tables). */
static const char SCHEMA_VIEWS_V3[] =
    SCHEMA_ROW_VIEWS
    "CREATE @ VIEW head_rates AS\n"
    "  SELECT run_id, layer, head, COUNT(*) AS n, AVG(gate) AS global_rate," SCHEMA_RATES "\n"
    "    AVG(score) AS mean_score, AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass,\n"
    "    AVG(oracle_err) AS mean_oracle_err, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer, head;\n"
    "CREATE @ VIEW layer_rates AS\n"
    "  SELECT run_id, layer, COUNT(*) AS n, AVG(gate) AS global_rate," SCHEMA_RATES "\n"
    "    AVG(1.0 / (1.0 + EXP(-oracle_logit))) AS mean_oracle_mass, SUM(keys_read) AS keys_read\n"
    "  FROM decided GROUP BY run_id, layer;\n"
    "CREATE @ VIEW token_share AS\n"
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.gate) END AS global_share,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN AVG(d.oracle_logit > r.theta_logit) END AS oracle_share,\n"
    "    SUM(d.keys_read) AS keys_read, COUNT(*) * (t.pos + 1) AS keys_full,\n"
    "    SUM(d.keys_read) * 1.0 / (COUNT(*) * (t.pos + 1)) AS keys_read_frac,\n"
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n"
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n"
    "  FROM tokens t JOIN decisions d USING(run_id, pos) JOIN runs r USING(run_id)\n"
    "  GROUP BY t.run_id, t.pos;\n"
    "CREATE @ VIEW confusion_head AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor, layer, head,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor, layer, head);\n"
    "CREATE @ VIEW confusion AS\n"
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"
    "    SELECT run_id, predictor,\n"
    "      SUM(predicted = 1 AND oracle = 1) AS tp, SUM(predicted = 1 AND oracle = 0) AS fp,\n"
    "      SUM(predicted = 0 AND oracle = 1) AS fn, SUM(predicted = 0 AND oracle = 0) AS tn\n"
    "    FROM predictions WHERE predicted IS NOT NULL AND oracle IS NOT NULL\n"
    "    GROUP BY run_id, predictor);\n"
    "CREATE @ VIEW run_summary AS\n"
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

/* The summary views of version 4 read head_totals and the tokens' counts,
 * kept as each step is committed (layout.c), never the decision rows: a
 * run's summary costs its heads and positions, not its decisions. */
#define SCHEMA_ONE(x) x
#define SCHEMA_SUM(x) "SUM(" x ")"
#define SCHEMA_T_RATE(sep, word, W) sep W(word "_global") " * 1.0 / NULLIF(" W(word "_n") ", 0) AS " word "_rate,"
#define SCHEMA_T_RATE_GATE(sql, word, W)
#define SCHEMA_T_RATE_TAU(sql, word, W) SCHEMA_T_RATE(PRED_SQL_SEP(sql, "    "), word, W)
#define SCHEMA_T_RATE_THETA(sql, word, W) SCHEMA_T_RATE(PRED_SQL_SEP(sql, "    "), word, W)
#define SCHEMA_T_RATE_H(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)                   \
    SCHEMA_T_RATE_##thr(sql, word, SCHEMA_ONE)
#define SCHEMA_T_RATE_L(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)                   \
    SCHEMA_T_RATE_##thr(sql, word, SCHEMA_SUM)
#define SCHEMA_T_LABEL_H(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)                  \
    SCHEMA_T_RATE("\n    ", word, SCHEMA_ONE)
#define SCHEMA_T_LABEL_L(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)                  \
    SCHEMA_T_RATE("\n    ", word, SCHEMA_SUM)
#define SCHEMA_T_TP(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names) " WHEN '" word "' THEN " word "_tp"
#define SCHEMA_T_FP(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names) " WHEN '" word "' THEN " word "_fp"
#define SCHEMA_T_FN(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names) " WHEN '" word "' THEN " word "_fn"
#define SCHEMA_T_TN(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names) " WHEN '" word "' THEN " word "_tn"
#define SCHEMA_T_CELL(M, name) "\n      CASE p.predictor" PRED_TABLE(DECIDE_IN_SQL, M) " END AS " name
#define SCHEMA_PRF                                                                                             \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"      \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"

static const char SCHEMA_VIEWS[] =
    "CREATE @ VIEW decisions AS\n"
    "  SELECT " STORE_DECISIONS_SELECT "\n"
    "  FROM " STORE_DECISIONS_FROM ";\n"
    "CREATE @ VIEW attn_top AS\n"
    "  SELECT run_id, pos, layer, head, rank, w >> 32 AS key_pos,\n"
    "    " STORE_SQL_F32("(w & 4294967295)") " AS weight\n"
    "  FROM (SELECT " STORE_SQL_RUN("b.k") " AS run_id, " STORE_SQL_POS("b.k") " AS pos, " STORE_SQL_LAYER("b.k")
    " AS layer, " STORE_SQL_HEAD("b.k") " AS head, n.rank,\n"
    "      CASE n.rank WHEN 0 THEN b.top0 WHEN 1 THEN b.top1 WHEN 2 THEN b.top2 WHEN 3 THEN b.top3 WHEN 4 THEN b.top4"
    " WHEN 5 THEN b.top5 WHEN 6 THEN b.top6 WHEN 7 THEN b.top7 END AS w\n"
    "    FROM decision_bits b CROSS JOIN (SELECT 0 AS rank UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3"
    " UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7) n)\n"
    "  WHERE w IS NOT NULL;\n"
    SCHEMA_ROW_VIEWS
    "CREATE @ VIEW head_rates AS\n"
    "  SELECT run_id, layer, head, n, executed_global * 1.0 / NULLIF(executed_n, 0) AS global_rate,"
    PRED_TABLE(DECIDE_LABEL, SCHEMA_T_LABEL_H) PRED_TABLE(DECIDE_IN_SQL, SCHEMA_T_RATE_H) "\n"
    "    score_sum / NULLIF(score_n, 0) AS mean_score, oracle_mass_sum / NULLIF(oracle_mass_n, 0) AS mean_oracle_mass,\n"
    "    oracle_err_sum / NULLIF(oracle_err_n, 0) AS mean_oracle_err,\n"
    "    CASE WHEN executed_n > 0 THEN keys_read END AS keys_read\n"
    "  FROM head_totals WHERE n > 0;\n"
    "CREATE @ VIEW layer_rates AS\n"
    "  SELECT run_id, layer, SUM(n) AS n, SUM(executed_global) * 1.0 / NULLIF(SUM(executed_n), 0) AS global_rate,"
    PRED_TABLE(DECIDE_LABEL, SCHEMA_T_LABEL_L) PRED_TABLE(DECIDE_IN_SQL, SCHEMA_T_RATE_L) "\n"
    "    SUM(oracle_mass_sum) / NULLIF(SUM(oracle_mass_n), 0) AS mean_oracle_mass,\n"
    "    CASE WHEN SUM(executed_n) > 0 THEN SUM(keys_read) END AS keys_read\n"
    "  FROM head_totals WHERE n > 0 GROUP BY run_id, layer;\n"
    "CREATE @ VIEW token_share AS\n"
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_global * 1.0 / NULLIF(t.n_gate, 0) END AS global_share,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_oracle_global * 1.0 / NULLIF(t.n_oracle, 0) END AS oracle_share,\n"
    "    t.keys_read_sum AS keys_read, r.n_layers * r.n_heads * (t.pos + 1) AS keys_full,\n"
    "    t.keys_read_sum * 1.0 / (r.n_layers * r.n_heads * (t.pos + 1)) AS keys_read_frac,\n"
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n"
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n"
    "  FROM tokens t JOIN runs r USING(run_id);\n"
    "CREATE @ VIEW confusion_head AS\n"
    SCHEMA_PRF
    "    SELECT h.run_id, p.predictor, h.layer, h.head," SCHEMA_T_CELL(SCHEMA_T_TP, "tp") ","
    SCHEMA_T_CELL(SCHEMA_T_FP, "fp") "," SCHEMA_T_CELL(SCHEMA_T_FN, "fn") "," SCHEMA_T_CELL(SCHEMA_T_TN, "tn") "\n"
    "    FROM head_totals h\n"
    "    CROSS JOIN (" PRED_TABLE(DECIDE_IN_SQL, SCHEMA_NAME) ") p)\n"
    "  WHERE tp + fp + fn + tn > 0;\n"
    "CREATE @ VIEW confusion AS\n"
    SCHEMA_PRF
    "    SELECT run_id, predictor, SUM(tp) AS tp, SUM(fp) AS fp, SUM(fn) AS fn, SUM(tn) AS tn\n"
    "    FROM confusion_head GROUP BY run_id, predictor);\n"
    "CREATE @ VIEW run_summary AS\n"
    "  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n"
    "    (SELECT SUM(executed_global) * 1.0 / NULLIF(SUM(executed_n), 0) FROM head_totals h WHERE h.run_id = r.run_id)\n"
    "      AS global_share,\n"
    "    (SELECT SUM(oracle_global) * 1.0 / NULLIF(SUM(oracle_n), 0) FROM head_totals h WHERE h.run_id = r.run_id)\n"
    "      AS oracle_share,\n"
    "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS keys_read_frac,\n"
    "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
    "      AS kv_read_frac,\n"
    "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n"
    "      AS perplexity\n"
    "  FROM runs r;\n";

/* Keys outside the local set of a position, in SQL: attn_n_far
 * (engine/attn.h) over a tokens row t joined with its runs row r. */
#define SQL_N_FAR                                                                                              \
    "MAX(0, MAX(t.pos - r.window + 1, MIN(r.sinks, t.pos + 1)) - MIN(r.sinks, t.pos + 1))"

/* A version-1 probability as log-odds; 1.0 (saturated) is +Inf, which
 * still compares above every finite threshold, as 1.0 did. */
#define SQL_LOGIT(m)                                                                                           \
    "CASE WHEN " m " IS NULL THEN NULL WHEN " m " >= 1 THEN 9e999 WHEN " m " <= 0 THEN -9e999 ELSE LN(" m      \
    ") - LN(1 - " m ") END"

/* Version 1 (probabilities, no n_far / kv_read / theta_logit) to 2. */
static const char MIGRATE_1_TO_2[] =
    "ALTER TABLE runs ADD COLUMN theta_logit REAL;\n"
    "UPDATE runs SET theta_logit = " SQL_LOGIT("theta") ";\n"
    "ALTER TABLE evals ADD COLUMN theta_logit REAL;\n"
    "ALTER TABLE evals ADD COLUMN kv_read_frac REAL;\n"
    "UPDATE evals SET theta_logit = " SQL_LOGIT("theta") ";\n"
    "ALTER TABLE tokens ADD COLUMN n_far INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN kv_read INTEGER;\n"
    "UPDATE tokens AS t SET n_far = " SQL_N_FAR " FROM runs r WHERE r.run_id = t.run_id;\n"
    "ALTER TABLE decisions RENAME TO decisions_v1;\n";

/* After version 2's decisions table is made: the old rows into it. */
static const char MIGRATE_1_TO_2_COPY[] =
    "INSERT INTO decisions(run_id, pos, layer, head, score, gate, oracle_logit, oracle_err, qada_logit,\n"
    "    qada_bulk_logit, keys_read)\n"
    "  SELECT d.run_id, d.pos, d.layer, d.head, d.score, d.gate,\n"
    "  CASE WHEN t.n_far = 0 THEN NULL ELSE " SQL_LOGIT("d.oracle_mass") " END, d.oracle_err,\n"
    "  CASE WHEN t.n_far = 0 THEN NULL ELSE " SQL_LOGIT("d.qada_mass") " END,\n"
    "  CASE WHEN t.n_far = 0 THEN NULL ELSE " SQL_LOGIT("d.qada_bulk_mass") " END, d.keys_read\n"
    "  FROM decisions_v1 d LEFT JOIN tokens t USING(run_id, pos);\n"
    "DROP TABLE decisions_v1;\n";

/* What a version-1 file looks like to a reader: TEMP views named like the
 * version-2 tables, shadowing the file's own (SQLite looks in temp first). */
static const char COMPAT_1[] =
    "CREATE TEMP VIEW runs AS SELECT *, " SQL_LOGIT("theta") " AS theta_logit FROM main.runs;\n"
    "CREATE TEMP VIEW evals AS SELECT *, " SQL_LOGIT("theta") " AS theta_logit, NULL AS kv_read_frac FROM main.evals;\n"
    "CREATE TEMP VIEW tokens AS SELECT t.*, " SQL_N_FAR " AS n_far, NULL AS kv_read\n"
    "  FROM main.tokens t JOIN main.runs r USING(run_id);\n"
    "CREATE TEMP VIEW decisions AS SELECT d.run_id, d.pos, d.layer, d.head, d.gate, d.score,\n"
    "  CASE WHEN t.n_far = 0 THEN NULL ELSE " SQL_LOGIT("d.oracle_mass") " END AS oracle_logit, d.oracle_err,\n"
    "  CASE WHEN t.n_far = 0 THEN NULL ELSE " SQL_LOGIT("d.qada_mass") " END AS qada_logit,\n"
    "  CASE WHEN t.n_far = 0 THEN NULL ELSE " SQL_LOGIT("d.qada_bulk_mass") " END AS qada_bulk_logit, d.keys_read\n"
    "  %s FROM main.decisions d JOIN temp.tokens t USING(run_id, pos);\n";

/* Version 2 to 3: where each head looked (an empty table to begin with). */
static const char MIGRATE_2_TO_3[] = SCHEMA_ATTN_TOP;

/* What a version-2 file opened read-only lacks: an empty attn_top. */
static const char COMPAT_2[] =
    "CREATE TEMP VIEW attn_top AS SELECT 0 AS run_id, 0 AS pos, 0 AS layer, 0 AS head, 0 AS rank, 0 AS key_pos,"
    " 0.0 AS weight WHERE 0;\n";

/* A version-2 file's decisions as a reader sees them: version 3's columns
 * NULL (%s: their list). */
static const char COMPAT_2_DECISIONS[] = "CREATE TEMP VIEW decisions AS SELECT *%s FROM main.decisions;\n";

/* Version 3's per-head columns, each written through fmt (two %s: name and
 * SQL type, or one: the name), appended into buf. Returns 0, -1 if they do
 * not fit. */
static int v3_columns(char *buf, size_t cap, const char *fmt) {
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = SCHEMA_V2_HEAD_FIELDS; i < SCHEMA_N_HEAD_FIELDS; i++) {
        int n = snprintf(buf + len, cap - len, fmt, HEAD_FIELDS[i][0], HEAD_FIELDS[i][1]);
        if (n < 0 || (size_t)n >= cap - len) return -1;
        len += (size_t)n;
    }
    return 0;
}

/* Run sql_fmt with its one %s replaced by v3_columns(col_fmt). */
static int exec_with_v3_columns(sqlite3 *db, const char *sql_fmt, const char *col_fmt) {
    char cols[1024];
    if (v3_columns(cols, sizeof cols, col_fmt)) return SQLITE_TOOBIG;
    char *sql = sqlite3_mprintf(sql_fmt, cols);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

/* Version 2's decisions table, as version 2 created it (its first
 * SCHEMA_V2_HEAD_FIELDS per-head columns): the 1 to 2 step builds exactly
 * that, so a file upgraded in one go and one upgraded by version 2 first
 * end up with the same stored SQL once version 3's columns are appended. */
static int exec_v2_decisions(sqlite3 *db) {
    char cols[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < SCHEMA_V2_HEAD_FIELDS; i++)
        len += (size_t)snprintf(cols + len, sizeof cols - len, ", %s %s", HEAD_FIELDS[i][0], HEAD_FIELDS[i][1]);
    char *sql = sqlite3_mprintf("CREATE TABLE decisions(\n"
                                "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT"
                                " NULL%s,\n  PRIMARY KEY(run_id, pos, layer, head)\n) WITHOUT ROWID;\n", cols);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

static int pragma_int(sqlite3 *db, const char *sql, int *out) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return sqlite3_errcode(db);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int(st, 0), rc = SQLITE_OK;
    else if (rc == SQLITE_DONE) rc = SQLITE_CORRUPT;
    sqlite3_finalize(st);
    return rc;
}

static int count_objects(sqlite3 *db, int *n_tables, char *first, size_t cap) {
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'", -1,
                                &st, NULL);
    if (rc != SQLITE_OK) return rc;
    *n_tables = 0;
    first[0] = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((*n_tables)++ == 0) snprintf(first, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Create the views of text views, as the file's own (kind "") or as TEMP
 * ones ('@' in the text marks where the kind goes). */
static int exec_views_of(sqlite3 *db, const char *views, const char *kind) {
    size_t n = strlen(kind), len = 0;
    char *sql = malloc(strlen(views) * (n + 1) + 1);
    if (!sql) return SQLITE_NOMEM;
    for (const char *c = views; *c; c++) {
        if (*c != '@') { sql[len++] = *c; continue; }
        memcpy(sql + len, kind, n);
        len += n;
    }
    sql[len] = 0;
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    free(sql);
    return rc;
}

/* The current views, as the file's own (kind "") or TEMP ones. */
static int exec_views(sqlite3 *db, const char *kind) { return exec_views_of(db, SCHEMA_VIEWS, kind); }

/* Drop every view of the file before its tables change (they are
 * recreated from SCHEMA_VIEWS afterwards): whatever its version made,
 * since the names differ (version 4 turned decisions and attn_top from
 * tables into views). The schema check has already held them to that
 * version's. */
static int drop_views(sqlite3 *db) {
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, "SELECT group_concat(format('DROP VIEW \"%w\";', name), '') FROM main.sqlite_schema"
                                    " WHERE type = 'view'", -1, &st, NULL);
    char *sql = NULL;
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        sql = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (rc == SQLITE_OK && sql) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    return rc;
}

/* Version 1 to 2: the tables change (decisions rebuilt as version 2 had it). */
static int migrate_1_to_2(sqlite3 *db) {
    int rc = sqlite3_exec(db, MIGRATE_1_TO_2, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = exec_v2_decisions(db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, MIGRATE_1_TO_2_COPY, NULL, NULL, NULL);
    return rc;
}

/* Version 2 to 3: attn_top, and the decisions columns version 3 appended. */
static int migrate_2_to_3(sqlite3 *db) {
    int rc = exec_with_v3_columns(db, "%s", "ALTER TABLE decisions ADD COLUMN %s %s;\n");
    return rc == SQLITE_OK ? sqlite3_exec(db, MIGRATE_2_TO_3, NULL, NULL, NULL) : rc;
}

/* Version 3 to 4: the compact layout. The new tables and columns, then
 * every row converted and totalled in C (upgrade4.c), the old tables
 * dropped. */
static const char MIGRATE_3_TO_4[] =
    "ALTER TABLE runs ADD COLUMN top_k INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN n_gate INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN n_global INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN n_oracle INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN n_oracle_global INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN keys_read_sum INTEGER;\n"
    SCHEMA_DECISION_TABLES;

static int migrate_3_to_4(sqlite3 *db) {
    int rc = sqlite3_exec(db, MIGRATE_3_TO_4, NULL, NULL, NULL);
    return rc == SQLITE_OK ? store_upgrade_rows(db) : rc;
}

/* Version 4 to 5: the tokens' gate bitmaps. The runs already written keep
 * NULL there, and the diff reads their decision rows instead. */
static const char MIGRATE_4_TO_5[] = "ALTER TABLE tokens ADD COLUMN " SCHEMA_TOKEN_GATES ";\n";

/* The upgrade from version `from` to the current one, inside the caller's
 * transaction: the views go, each step in turn, the current views come. */
static int migrate_steps(sqlite3 *db, int from) {
    int rc = drop_views(db);
    if (rc == SQLITE_OK && from <= 1) rc = migrate_1_to_2(db);
    if (rc == SQLITE_OK && from <= 2) rc = migrate_2_to_3(db);
    if (rc == SQLITE_OK && from <= 3) rc = migrate_3_to_4(db);
    if (rc == SQLITE_OK && from <= 4) rc = sqlite3_exec(db, MIGRATE_4_TO_5, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = exec_views(db, "");
    return rc;
}

/* Bring an older file to the current version, each step in turn, in one
 * transaction: a crash leaves the old file as it was. Another writer may
 * have done it since we looked: then leave it. Returns 0 or -1 with e set. */
static int schema_migrate(sqlite3 *db, const char *path, Err *e) {
    int ver = 0;
    char sql[64], what[64];
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = pragma_int(db, "PRAGMA user_version", &ver);
    if (rc == SQLITE_OK && ver == STORE_SCHEMA_VERSION) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK && ver == STORE_SCHEMA_VERSION) return 0;
    snprintf(what, sizeof what, "cannot upgrade the schema from version %d", ver);
    if (rc == SQLITE_OK) rc = migrate_steps(db, ver);
    snprintf(sql, sizeof sql, "PRAGMA user_version=%d", STORE_SCHEMA_VERSION);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        int err = store_sql_err(db, path, what, e);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return err;
    }
    return 0;
}

/* An older file opened read-only: the current names over its tables,
 * summarised from its rows by version 3's views (readers in C ask
 * store_version which tables to read). */
static int schema_compat(sqlite3 *db, const char *path, int ver, Err *e) {
    /* version 3's own tables and row-level views carry version 4's names; version 4 lacks only the
     * tokens' gates, which the diff asks for at version 5 alone */
    if (ver >= 3) return 0;
    int rc = exec_with_v3_columns(db, ver == 1 ? COMPAT_1 : COMPAT_2_DECISIONS, ", NULL AS %s");
    if (rc == SQLITE_OK) rc = exec_views_of(db, SCHEMA_VIEWS_V3, "TEMP");
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, COMPAT_2, NULL, NULL, NULL);
    if (rc == SQLITE_OK) return 0;
    char what[64];
    snprintf(what, sizeof what, "cannot read schema version %d", ver);
    return store_sql_err(db, path, what, e);
}

/* The tables and views of a new file. */
static int create_objects(sqlite3 *db) {
    int rc = sqlite3_exec(db, SCHEMA_TABLES, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, SCHEMA_DECISIONS, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = exec_views(db, "");
    return rc;
}

/* Create the schema in one transaction so a crash leaves none or all of
 * it. Another writer may have created it since we looked: then leave it. */
static int schema_create(sqlite3 *db, const char *path, Err *e) {
    char sql[64];
    int app = 0;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = pragma_int(db, "PRAGMA application_id", &app);
    if (rc == SQLITE_OK && app == STORE_APPLICATION_ID) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK && app == STORE_APPLICATION_ID) return 1;
    if (rc == SQLITE_OK) rc = create_objects(db);
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d", STORE_APPLICATION_ID);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    snprintf(sql, sizeof sql, "PRAGMA user_version=%d", STORE_SCHEMA_VERSION);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        int err = store_sql_err(db, path, "cannot create the schema", e);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return err;
    }
    return 0;
}

/* A private in-memory database holding exactly the objects a file created
 * at version `created` has once upgraded to version `ver`: made by the
 * very statements that make and upgrade a file (schema_old.c for older
 * versions), so the SQL text SQLite stores, ALTER TABLE's edits included,
 * matches byte for byte and no list of objects is kept twice. An upgrade
 * that stopped short of the current version was made by an older build:
 * schema_old.c holds what it left. NULL on failure. */
static sqlite3 *expected_db(int created, int ver) {
    sqlite3 *mem = NULL;
    int rc = store_db_open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &mem);
    const char *old = created < ver ? store_schema_old_upgraded(created, ver) : store_schema_old(created);
    if (rc == SQLITE_OK) rc = old ? sqlite3_exec(mem, old, NULL, NULL, NULL) : create_objects(mem);
    if (rc == SQLITE_OK && created < ver && ver == STORE_SCHEMA_VERSION) rc = migrate_steps(mem, created);
    if (rc == SQLITE_OK) return mem;
    sqlite3_close(mem);
    return NULL;
}

/* Column i of two rows in the order ORDER BY gives (NULL first, then
 * bytes), so the walk below can tell a missing name from an extra one. */
static int col_cmp(sqlite3_stmt *a, sqlite3_stmt *b, int i) {
    int na = sqlite3_column_type(a, i) == SQLITE_NULL, nb = sqlite3_column_type(b, i) == SQLITE_NULL;
    if (na || nb) return nb - na;
    const void *x = sqlite3_column_blob(a, i), *y = sqlite3_column_blob(b, i);
    int lx = sqlite3_column_bytes(a, i), ly = sqlite3_column_bytes(b, i);
    int c = lx && ly ? memcmp(x, y, (size_t)(lx < ly ? lx : ly)) : 0;
    return c ? c : (lx > ly) - (lx < ly);
}

/* "<problem> trigger 't'<tail>" of the row st; a name is the file's to
 * choose, so control characters become '?' to keep the message one line. */
static void describe(char *why, size_t cap, const char *problem, sqlite3_stmt *st, const char *tail) {
    const unsigned char *type = sqlite3_column_text(st, 0), *name = sqlite3_column_text(st, 1);
    snprintf(why, cap, "%s %.16s '%.64s'%s", problem, type ? (const char *)type : "object",
             name ? (const char *)name : "", tail);
    for (char *c = why; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
}

/* One step of the walk over two name-ordered object lists: 0 when the rows
 * are the same object, else 1 with why set. */
static int row_diff(sqlite3_stmt *f, int rf, sqlite3_stmt *w, int rw, char *why, size_t cap) {
    int c = rf != SQLITE_ROW ? 1 : rw != SQLITE_ROW ? -1 : col_cmp(f, w, 1);
    if (c < 0) return describe(why, cap, "tampered schema: unexpected", f, ""), 1;
    if (c > 0) return describe(why, cap, "damaged ahascope schema:", w, " is missing"), 1;
    if (col_cmp(f, w, 0) || col_cmp(f, w, 2) || col_cmp(f, w, 3))
        return describe(why, cap, "tampered schema:", f, " is not the one ahascope creates"), 1;
    return 0;
}

/* Walk the objects of `schema` in db beside those of want, by name.
 * Returns 0 if they are the same, 1 with why set at the first difference
 * (*same: objects alike before it), or SQLite's error code. */
static int schema_diff(sqlite3 *db, const char *schema, sqlite3 *want, char *why, size_t cap, int *same) {
    static const char list[] = "SELECT type, name, tbl_name, sql FROM \"%w\".sqlite_schema ORDER BY name";
    char *sql = sqlite3_mprintf(list, schema);
    sqlite3_stmt *f = NULL, *w = NULL;
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &f, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(want, "SELECT type, name, tbl_name, sql FROM main.sqlite_schema"
                                                       " ORDER BY name", -1, &w, NULL);
    int rf = rc == SQLITE_OK ? sqlite3_step(f) : rc, rw = rc == SQLITE_OK ? sqlite3_step(w) : rc;
    for (*same = 0; rf == SQLITE_ROW || rw == SQLITE_ROW; ++*same, rf = sqlite3_step(f), rw = sqlite3_step(w)) {
        if ((rf != SQLITE_ROW && rf != SQLITE_DONE) || (rw != SQLITE_ROW && rw != SQLITE_DONE)) break;
        if ((rc = row_diff(f, rf, w, rw, why, cap))) break;
    }
    if (rc == SQLITE_OK && rf != SQLITE_DONE && rf != SQLITE_ROW) rc = rf;
    if (rc == SQLITE_OK && rw != SQLITE_DONE && rw != SQLITE_ROW) rc = rw;
    sqlite3_finalize(f);
    sqlite3_finalize(w);
    return rc;
}

/* One column's test on the probed row: NULL in a NOT NULL column, or a
 * storage class its declared type's affinity never stores. */
static char *column_test(char *where, sqlite3_stmt *col) {
    static const char *const kinds[][2] = {{"INTEGER", "'integer'"}, {"REAL", "'real', 'integer'"}, {"TEXT", "'text'"}};
    const char *name = (const char *)sqlite3_column_text(col, 0), *type = (const char *)sqlite3_column_text(col, 2);
    char *more = where;
    if (sqlite3_column_int(col, 1)) more = sqlite3_mprintf("%z OR \"%w\" IS NULL", more, name);
    for (size_t i = 0; more && type && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!sqlite3_stricmp(type, kinds[i][0]))
            more = sqlite3_mprintf("%z OR typeof(\"%w\") NOT IN ('null', %s)", more, name, kinds[i][1]);
    return more;
}

/* Whether the first row of table t of `schema` reads as that table's: a
 * root page of the wrong kind (a rowid table's b-tree under a WITHOUT
 * ROWID table's name, or the reverse) fails to read at all, and one of the
 * same kind usually puts a NULL in a NOT NULL column or a value of the
 * wrong storage class in a typed one. 0, 1 with why set, or SQLite's
 * error code. */
static int root_probe(sqlite3 *db, const char *schema, const char *t, char *why, size_t cap) {
    char *sql = sqlite3_mprintf("SELECT name, \"notnull\", type FROM pragma_table_info(%Q, %Q)", t, schema);
    sqlite3_stmt *st = NULL;
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    char *where = sqlite3_mprintf("0");
    while (rc == SQLITE_OK && where && sqlite3_step(st) == SQLITE_ROW) where = column_test(where, st);
    sqlite3_finalize(st);
    sql = where ? sqlite3_mprintf("SELECT (%s) FROM (SELECT * FROM \"%w\".\"%w\" LIMIT 1)", where, schema, t) : NULL;
    sqlite3_free(where);
    if (rc == SQLITE_OK) rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(st);
    int bad = (rc & 0xff) == SQLITE_CORRUPT || (rc == SQLITE_ROW && sqlite3_column_int(st, 0));
    sqlite3_finalize(st);
    if (bad) {
        snprintf(why, cap, "tampered schema: table '%.64s' does not hold its own rows (its root page was moved)", t);
        return 1;
    }
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* What sqlite_schema points at: every table's root page probed. */
static int roots_diff(sqlite3 *db, const char *schema, char *why, size_t cap) {
    char *sql = sqlite3_mprintf("SELECT name FROM \"%w\".sqlite_schema WHERE type = 'table' ORDER BY name", schema);
    sqlite3_stmt *st = NULL;
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        char name[128];
        snprintf(name, sizeof name, "%s", (const char *)sqlite3_column_text(st, 0));
        rc = root_probe(db, schema, name, why, cap);
    }
    sqlite3_finalize(st);
    return rc;
}

/* store_schema_verify inside a snapshot: the header, then the objects
 * against each way a file of its version can rightly look (created at that
 * version, or at any older one and upgraded). */
static int verify_snapshot(sqlite3 *db, const char *schema, const char *path, int *ver, Err *e) {
    int app = 0;
    char sql[160], why[200] = "", try_why[200];
    sqlite3_snprintf(sizeof sql, sql, "PRAGMA \"%w\".application_id", schema);
    int rc = pragma_int(db, sql, &app);
    sqlite3_snprintf(sizeof sql, sql, "PRAGMA \"%w\".user_version", schema);
    if (rc == SQLITE_OK) rc = pragma_int(db, sql, ver);
    if (rc != SQLITE_OK) return store_sql_err(db, path, "cannot read the schema", e);
    if (app != STORE_APPLICATION_ID) return err_set(e, "%s: not an ahascope database", path);
    if (*ver < 1 || *ver > STORE_SCHEMA_VERSION)
        return err_set(e, "%s: schema version %d is not one this ahascope reads (1 to %d)", path, *ver,
                       STORE_SCHEMA_VERSION);
    for (int created = *ver, best = -1, same; created >= 1; created--) {
        sqlite3 *want = expected_db(created, *ver);
        if (!want) return err_set(e, "%s: cannot check the schema: out of memory", path);
        rc = schema_diff(db, schema, want, try_why, sizeof try_why, &same);
        sqlite3_close(want);
        if (rc == SQLITE_OK && (rc = roots_diff(db, schema, why, sizeof why)) == 1) return err_set(e, "%s: %s", path, why);
        if (rc == SQLITE_OK) return 0;
        if (rc != 1) return store_sql_err(db, path, "cannot read the schema", e);
        if (same > best) best = same, memcpy(why, try_why, sizeof why); /* report the nearest */
    }
    return err_set(e, "%s: %s", path, why);
}

int store_schema_verify(sqlite3 *db, const char *schema, const char *path, int *ver, Err *e) {
    int own = sqlite3_get_autocommit(db);
    if (own && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return store_sql_err(db, path, "cannot read the database", e);
    int rc = verify_snapshot(db, schema, path, ver, e);
    if (own) sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return rc;
}

/* Header fields and table count, read in one snapshot: a writer creating
 * the schema between two reads would otherwise look like foreign tables. */
static int read_identity(sqlite3 *db, const char *path, const char *what, int *app, int *ver, int *n_tables,
                         char *first, size_t cap, Err *e) {
    int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = pragma_int(db, "PRAGMA application_id", app);
    if (rc == SQLITE_OK) rc = pragma_int(db, "PRAGMA user_version", ver);
    if (rc == SQLITE_OK) rc = count_objects(db, n_tables, first, cap);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK) return 0;
    store_sql_err(db, path, what, e); /* before the rollback wipes SQLite's error */
    if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* What the header says of a file: -1 with e set when it is not one to
 * open (foreign, newer, older than 1, or empty and not to be created), 1
 * when it is empty and to be created, 0 when it claims to be ours. */
static int judge_identity(const char *path, int app, int ver, int n_tables, const char *first, int create, Err *e) {
    if (app != STORE_APPLICATION_ID) {
        if (n_tables > 0 || app != 0 || ver != 0)
            return err_set(e, "%s: not an ahascope database (it holds foreign tables such as '%s')", path,
                           n_tables ? first : "?");
        return create ? 1 : err_set(e, "%s: empty database: nothing has been recorded in it", path);
    }
    if (ver > STORE_SCHEMA_VERSION)
        return err_set(e, "%s: schema version %d is newer than this ahascope understands (%d); upgrade ahascope", path,
                       ver, STORE_SCHEMA_VERSION);
    if (ver < 1) return err_set(e, "%s: schema version %d is older than 1 and cannot be read", path, ver);
    return 0;
}

/* The reading half of store_schema_check, for a file about to be opened
 * for writing: decide before anything is written to it. */
/* Read the header and judge it (judge_identity's answer); *ver is the
 * file's schema version. */
static int identify(sqlite3 *db, const char *path, int create, int *ver, Err *e) {
    int app = 0, n_tables = 0;
    char first[128];
    const char *what = create ? "cannot write the database" : "cannot read the database";
    if (read_identity(db, path, what, &app, ver, &n_tables, first, sizeof first, e) != 0) return -1;
    return judge_identity(path, app, *ver, n_tables, first, create, e);
}

int store_schema_accept(sqlite3 *db, const char *path, int create, Err *e) {
    int ver = 0, judged = identify(db, path, create, &ver, e);
    if (judged) return judged < 0 ? -1 : 0;
    return store_schema_verify(db, "main", path, &ver, e);
}

int store_schema_check(sqlite3 *db, const char *path, int create, Err *e) {
    int ver = 0, judged = identify(db, path, create, &ver, e);
    if (judged < 0) return -1;
    if (judged) {
        int rc = schema_create(db, path, e);
        if (rc <= 0) return rc;
        return store_schema_check(db, path, 0, e);
    }
    if (store_schema_verify(db, "main", path, &ver, e)) return -1; /* ver again: a writer may have upgraded it */
    if (ver == STORE_SCHEMA_VERSION) return 0;
    if (!create) return schema_compat(db, path, ver, e);
    if (schema_migrate(db, path, e)) return -1;
    return store_schema_check(db, path, 0, e);
}
