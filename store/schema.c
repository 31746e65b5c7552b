/* schema.c — the tables and views of an ahascope database (documented for
 * users in store/SCHEMA.md; keep the two in step). */
#include "store/internal.h"

/* Predicted global = value above the run's threshold; NULL where the value
 * was not computed, so every rate and confusion skips it. The views
 * (predictions, *_rates, token_share, confusion*, run_summary) are a mirror
 * in SQL of engine/decide.h's rules and rates, the one definition the C code
 * uses; tests/test_decide.c checks the two agree cell for cell. */
const char *const STORE_SCHEMA_SQL =
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

/* Tables and views a valid database must have (by type and name). */
static const char *const REQUIRED[][2] = {
    {"table", "runs"},         {"table", "tokens"},         {"table", "decisions"},
    {"table", "evals"},        {"table", "eval_scores"},
    {"view", "predictions"},   {"view", "head_rates"},      {"view", "layer_rates"},
    {"view", "token_share"},   {"view", "confusion_head"},  {"view", "confusion"},
    {"view", "run_summary"},
};

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

static int has_object(sqlite3 *db, const char *type, const char *name) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type=?1 AND name=?2", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, type, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

/* Create the schema in one transaction so a crash leaves none or all of
 * it. Another writer may have created it since we looked: then leave it. */
static int schema_create(sqlite3 *db, const char *path, Err *e) {
    char sql[64];
    int app = 0;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = pragma_int(db, "PRAGMA application_id", &app);
    if (rc == SQLITE_OK && app == STORE_APPLICATION_ID) return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) ? -1 : 1;
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, STORE_SCHEMA_SQL, NULL, NULL, NULL);
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

/* Header fields and table count, read in one snapshot: a writer creating
 * the schema between two reads would otherwise look like foreign tables. */
static int read_identity(sqlite3 *db, int *app, int *ver, int *n_tables, char *first, size_t cap) {
    int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = pragma_int(db, "PRAGMA application_id", app);
    if (rc == SQLITE_OK) rc = pragma_int(db, "PRAGMA user_version", ver);
    if (rc == SQLITE_OK) rc = count_objects(db, n_tables, first, cap);
    if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, rc == SQLITE_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int store_schema_check(sqlite3 *db, const char *path, int create, Err *e) {
    int app = 0, ver = 0, n_tables = 0;
    char first[128];
    if (read_identity(db, &app, &ver, &n_tables, first, sizeof first) != SQLITE_OK)
        return store_sql_err(db, path, "cannot read the database", e);
    if (app != STORE_APPLICATION_ID) {
        if (n_tables > 0 || app != 0 || ver != 0)
            return err_set(e, "%s: not an ahascope database (it holds foreign tables such as '%s')", path,
                           n_tables ? first : "?");
        if (!create) return err_set(e, "%s: empty database: nothing has been recorded in it", path);
        int rc = schema_create(db, path, e);
        if (rc <= 0) return rc;
        return store_schema_check(db, path, 0, e);
    }
    if (ver > STORE_SCHEMA_VERSION)
        return err_set(e, "%s: schema version %d is newer than this ahascope understands (%d); upgrade ahascope", path,
                       ver, STORE_SCHEMA_VERSION);
    if (ver < STORE_SCHEMA_VERSION)
        return err_set(e, "%s: schema version %d is older than %d and cannot be read", path, ver, STORE_SCHEMA_VERSION);
    for (size_t i = 0; i < sizeof REQUIRED / sizeof REQUIRED[0]; i++)
        if (!has_object(db, REQUIRED[i][0], REQUIRED[i][1]))
            return err_set(e, "%s: damaged ahascope schema: %s '%s' is missing", path, REQUIRED[i][0], REQUIRED[i][1]);
    return 0;
}
