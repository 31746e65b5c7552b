/* schema.c — the tables: create, upgrade, check a file is exactly ours (its root pages too), accept it read-only.
 *
 * The tables and views of an ahascope database (documented for
 * users in store/SCHEMA.md; keep the two in step). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/decide.h"
#include "store/internal.h"

/* The per-head fields as (name, SQL type) pairs, in the list's order: a
 * version-1 or 2 file opened read-only shows every one this build knows
 * past version 2's as NULL. */
#define SCHEMA_PAIR(name, type, missing, sql, show, title, short_name, doc) {#name, #sql},
static const char *const HEAD_FIELDS[][2] = {TRACE_HEAD_FIELDS(SCHEMA_PAIR)};
#define SCHEMA_N_HEAD_FIELDS (sizeof HEAD_FIELDS / sizeof HEAD_FIELDS[0])

/* Version 3's per-head columns, frozen: version 2's seven, then the four
 * version 3 appended (the REM-corrected estimates, the far scores'
 * moments). */
static const char *const V3_FIELDS[][2] = {
    {"gate", "INTEGER"},         {"score", "REAL"},           {"oracle_logit", "REAL"},     {"oracle_err", "REAL"},
    {"qada_logit", "REAL"},      {"qada_bulk_logit", "REAL"}, {"keys_read", "INTEGER"},     {"qada_rem_logit", "REAL"},
    {"qada_rem_bulk_logit", "REAL"}, {"far_mean", "REAL"},    {"far_std", "REAL"},
};
#define SCHEMA_V2_HEAD_FIELDS 7
#define SCHEMA_V3_HEAD_FIELDS (sizeof V3_FIELDS / sizeof V3_FIELDS[0])

/* Every head's executed gate at a position, two bits a head (store_step_rows
 * in layout.c): the diff of two runs reads one row a position instead of
 * one a decision. Added by version 5. */
#define SCHEMA_TOKEN_GATES "gates BLOB"

/* Where each head looked beyond its local set (record --attn-top K, the
 * TUI): its K heaviest far positions, rank 0 the heaviest. Added by
 * version 3, so also the whole of MIGRATE_2_TO_3. */
#define SCHEMA_ATTN_TOP                                                                                        \
    "CREATE TABLE attn_top(\n"                                                                                 \
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,\n"        \
    "  rank INTEGER NOT NULL, key_pos INTEGER NOT NULL, weight REAL NOT NULL,\n"                               \
    "  PRIMARY KEY(run_id, pos, layer, head, rank)\n"                                                          \
    ") WITHOUT ROWID;\n"

/* The tables, frozen as version 6 made them: a later field is an appended
 * decision_bits column (catalog.c), a later predictor rows of data, so this
 * text does not change again. Columns added by a schema version go at the
 * end of their table, so a migrated database and a new one have the same
 * column order. */
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
    "  n_gate INTEGER, n_global INTEGER, n_oracle INTEGER, n_oracle_global INTEGER, keys_read_sum INTEGER,\n"
    "  " SCHEMA_TOKEN_GATES ",\n"
    "  PRIMARY KEY(run_id, pos)\n"
    ") WITHOUT ROWID;\n";

/* decision_bits as version 4 made it (every decision of every run, one row
 * each, appended in key order so SQLite's append path fills its pages: the
 * packed key of internal.h's store_k, the gate, each REAL field as its
 * float32's bits, the attention top-k words; keys_read is derived). Later
 * fields are columns appended after top7. */
#define SCHEMA_DECISION_BITS                                                                                  \
    "CREATE TABLE decision_bits(\n"                                                                           \
    "  k INTEGER PRIMARY KEY, gate INTEGER, score INTEGER, oracle_logit INTEGER, oracle_err INTEGER, "          \
    "qada_logit INTEGER, qada_bulk_logit INTEGER, qada_rem_logit INTEGER, qada_rem_bulk_logit INTEGER, "       \
    "far_mean INTEGER, far_std INTEGER,\n"                                                                    \
    "  top0 INTEGER, top1 INTEGER, top2 INTEGER, top3 INTEGER, top4 INTEGER, top5 INTEGER, top6 INTEGER, "     \
    "top7 INTEGER\n"                                                                                          \
    ");\n"

/* Version 4's head_totals, one wide row a head, frozen: what the 3 to 4
 * step makes and the 5 to 6 step reads. */
#define SCHEMA_V4_HEAD_TOTALS                                                                                 \
    "CREATE TABLE head_totals(\n"                                                                             \
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL, "           \
    "executed_n INTEGER, executed_global INTEGER, aha_n INTEGER, aha_global INTEGER, qada_n INTEGER, "        \
    "qada_global INTEGER, qada_bulk_n INTEGER, qada_bulk_global INTEGER, qada_rem_n INTEGER, "                \
    "qada_rem_global INTEGER, qada_rem_bulk_n INTEGER, qada_rem_bulk_global INTEGER, oracle_n INTEGER, "      \
    "oracle_global INTEGER, executed_tp INTEGER, executed_fp INTEGER, executed_fn INTEGER, executed_tn "      \
    "INTEGER, aha_tp INTEGER, aha_fp INTEGER, aha_fn INTEGER, aha_tn INTEGER, qada_tp INTEGER, qada_fp "      \
    "INTEGER, qada_fn INTEGER, qada_tn INTEGER, qada_bulk_tp INTEGER, qada_bulk_fp INTEGER, qada_bulk_fn "    \
    "INTEGER, qada_bulk_tn INTEGER, qada_rem_tp INTEGER, qada_rem_fp INTEGER, qada_rem_fn INTEGER, "          \
    "qada_rem_tn INTEGER, qada_rem_bulk_tp INTEGER, qada_rem_bulk_fp INTEGER, qada_rem_bulk_fn INTEGER, "     \
    "qada_rem_bulk_tn INTEGER, score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n "         \
    "INTEGER, oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER, calm_n INTEGER, "                 \
    "calm_oracle_global INTEGER, qada_calm_global INTEGER, qada_calm_tp INTEGER, bulk_calm_global "           \
    "INTEGER, bulk_calm_tp INTEGER, frozen_n INTEGER, frozen_oracle_global INTEGER, qada_frozen_global "      \
    "INTEGER, qada_frozen_tp INTEGER, bulk_frozen_global INTEGER, bulk_frozen_tp INTEGER,\n"                  \
    "  PRIMARY KEY(run_id, layer, head)\n"                                                                    \
    ") WITHOUT ROWID;\n"

/* Version 6's own tables: the file's lists (catalog.c) and the totals,
 * one row per head and name. */
#define SCHEMA_V6_TABLES                                                                                      \
    "CREATE TABLE fields(\n"                                                                                  \
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,\n"                                                 \
    "  kind TEXT NOT NULL CHECK(kind IN ('bits','int','derived'))\n"                                          \
    ");\n"                                                                                                    \
    "CREATE TABLE predictors(\n"                                                                              \
    "  ord INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, field TEXT NOT NULL,\n"                            \
    "  rule TEXT NOT NULL CHECK(rule IN ('gate','tau','theta')), role TEXT NOT NULL CHECK(role IN ('scored','label'))\n" \
    ");\n"                                                                                                    \
    "CREATE TABLE head_totals(\n"                                                                             \
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, predictor TEXT NOT NULL,\n"     \
    "  n INTEGER NOT NULL, global INTEGER NOT NULL, tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,\n"         \
    "  calm_n INTEGER, calm_global INTEGER, calm_tp INTEGER, frozen_n INTEGER, frozen_global INTEGER,\n"       \
    "  frozen_tp INTEGER,\n"                                                                                  \
    "  PRIMARY KEY(run_id, layer, head, predictor)\n"                                                         \
    ") WITHOUT ROWID;\n"                                                                                      \
    "CREATE TABLE head_stats(\n"                                                                              \
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, n INTEGER NOT NULL,\n"          \
    "  score_sum REAL, score_n INTEGER, oracle_mass_sum REAL, oracle_mass_n INTEGER,\n"                       \
    "  oracle_err_sum REAL, oracle_err_n INTEGER, keys_read INTEGER,\n"                                       \
    "  PRIMARY KEY(run_id, layer, head)\n"                                                                    \
    ") WITHOUT ROWID;\n"                                                                                      \

static const char SCHEMA_DECISIONS[] = SCHEMA_DECISION_BITS SCHEMA_V6_TABLES;

/* Version 7's table: each layer's attention kind as the architecture makes
 * it, per run (StepTrace.layer_window): 'global' with window 0, or
 * 'local' with its window W > 0. Written with the runs row; a run without
 * rows (recorded before version 7) is all global. Also the whole of the 6
 * to 7 step. */
#define SCHEMA_RUN_LAYERS                                                                                     \
    "CREATE TABLE run_layers(\n"                                                                              \
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL,\n"                                                    \
    "  kind TEXT NOT NULL CHECK(kind IN ('global','local')), window INTEGER NOT NULL,\n"                      \
    "  PRIMARY KEY(run_id, layer)\n"                                                                          \
    ") WITHOUT ROWID;\n"

/* What a file older than version 7 opened read-only lacks: an empty
 * run_layers, so every run reads as all global. */
static const char COMPAT_6[] =
    "CREATE TEMP VIEW run_layers AS SELECT 0 AS run_id, 0 AS layer, 'global' AS kind, 0 AS window WHERE 0;\n";

/* Version 8's additions, also the whole of the 7 to 8 step (a new file
 * makes version 7's tables, then takes this step, so a new file and an
 * upgraded one store the same text): the ablation a run ran under (the
 * TUI's `!`, decide_force_parse's text), each head's own window when the
 * run had per-head spans (AttnConfig.head_span: alpha + beta * (t + 1)
 * keys, the float values as REALs), and the positions a user bookmarked
 * in the TUI, with the note typed for one. */
#define SCHEMA_V8_STEP                                                                                        \
    "ALTER TABLE runs ADD COLUMN ablate TEXT;\n"                                                               \
    "CREATE TABLE run_heads(\n"                                                                               \
    "  run_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,\n"                             \
    "  alpha REAL NOT NULL, beta REAL NOT NULL,\n"                                                            \
    "  PRIMARY KEY(run_id, layer, head)\n"                                                                    \
    ") WITHOUT ROWID;\n"                                                                                      \
    "CREATE TABLE bookmarks(\n"                                                                               \
    "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, note TEXT, created_at TEXT NOT NULL,\n"                 \
    "  PRIMARY KEY(run_id, pos)\n"                                                                            \
    ") WITHOUT ROWID;\n"

/* What a file older than version 8 opened read-only lacks: no per-head
 * windows and no bookmarks (empty TEMP views), and (COMPAT_7_RUNS, past
 * version 1, whose own TEMP runs adds it) a NULL ablate. */
static const char COMPAT_7[] =
    "CREATE TEMP VIEW run_heads AS SELECT 0 AS run_id, 0 AS layer, 0 AS head, 0.0 AS alpha, 0.0 AS beta WHERE 0;\n"
    "CREATE TEMP VIEW bookmarks AS SELECT 0 AS run_id, 0 AS pos, NULL AS note, '' AS created_at WHERE 0;\n";
static const char COMPAT_7_RUNS[] = "CREATE TEMP VIEW runs AS SELECT *, NULL AS ablate FROM main.runs;\n";

/* A version-4 or 5 head_totals table @ (one wide row a head) as version
 * 6's two, frozen with version 5's predictors and regime columns: the 5 to
 * 6 step's rows, and what such a file opened read-only shows under the new
 * names. */
#define V5_NO_SIDES ", NULL, NULL, NULL, NULL, NULL, NULL"
#define V5_ROW(w, sides) "SELECT run_id, layer, head, '" w "' AS predictor, " w "_n AS n, " w "_global AS global, " \
    w "_tp AS tp, " w "_fp AS fp, " w "_fn AS fn, " w "_tn AS tn" sides " FROM @ UNION ALL "
#define V5_SIDES(tag) ", calm_n, " tag "_calm_global, " tag "_calm_tp, frozen_n, " tag "_frozen_global, " tag "_frozen_tp"
static const char *const V5_AS_V6[2] = {
    V5_ROW("executed", V5_NO_SIDES) V5_ROW("aha", V5_NO_SIDES) V5_ROW("qada", V5_SIDES("qada"))
    V5_ROW("qada_bulk", V5_SIDES("bulk")) V5_ROW("qada_rem", V5_NO_SIDES) V5_ROW("qada_rem_bulk", V5_NO_SIDES)
    "SELECT run_id, layer, head, 'oracle', oracle_n, oracle_global, NULL, NULL, NULL, NULL, calm_n,"
    " calm_oracle_global, NULL, frozen_n, frozen_oracle_global, NULL FROM @",
    "SELECT run_id, layer, head, n, score_sum, score_n, oracle_mass_sum, oracle_mass_n, oracle_err_sum,"
    " oracle_err_n, keys_read FROM @"};
static const char *const V6_TOTALS[2] = {"head_totals", "head_stats"};
static const char *const V6_TOTAL_COLUMNS[2] = {
    "run_id, layer, head, predictor, n, global, tp, fp, fn, tn, calm_n, calm_global, calm_tp, frozen_n,"
    " frozen_global, frozen_tp",
    "run_id, layer, head, n, score_sum, score_n, oracle_mass_sum, oracle_mass_n, oracle_err_sum, oracle_err_n,"
    " keys_read"};

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
    "CREATE TEMP VIEW runs AS SELECT *, " SQL_LOGIT("theta") " AS theta_logit, NULL AS ablate FROM main.runs;\n"
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

/* The per-head columns from `first` on of a frozen or own list, each
 * written through fmt (two %s: name and SQL type, or one: the name),
 * appended into buf. Returns 0, -1 if they do not fit. */
static int columns_of(const char *const (*list)[2], size_t first, size_t n, char *buf, size_t cap, const char *fmt) {
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = first; i < n; i++) {
        int k = snprintf(buf + len, cap - len, fmt, list[i][0], list[i][1]);
        if (k < 0 || (size_t)k >= cap - len) return -1;
        len += (size_t)k;
    }
    return 0;
}

/* Run sql_fmt with its one %s replaced by the columns of list. */
static int exec_with_columns(sqlite3 *db, const char *sql_fmt, const char *const (*list)[2], size_t first, size_t n,
                             const char *col_fmt) {
    char cols[2048];
    if (columns_of(list, first, n, cols, sizeof cols, col_fmt)) return SQLITE_TOOBIG;
    char *sql = sqlite3_mprintf(sql_fmt, cols);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

/* Version 2's decisions table, as version 2 created it (version 3's first
 * SCHEMA_V2_HEAD_FIELDS columns): the 1 to 2 step builds exactly that, so
 * a file upgraded in one go and one upgraded by version 2 first end up
 * with the same stored SQL once version 3's columns are appended. */
static int exec_v2_decisions(sqlite3 *db) {
    return exec_with_columns(db, "CREATE TABLE decisions(\n"
                                 "  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER"
                                 " NOT NULL%s,\n  PRIMARY KEY(run_id, pos, layer, head)\n) WITHOUT ROWID;\n",
                             V3_FIELDS, 0, SCHEMA_V2_HEAD_FIELDS, ", %s %s");
}

/* text with every '@' replaced by at, run on db. */
static int exec_at(sqlite3 *db, const char *text, const char *at) {
    sqlite3_str *out = sqlite3_str_new(db);
    for (const char *c = text; *c; c++)
        if (*c == '@') sqlite3_str_appendall(out, at);
        else sqlite3_str_appendchar(out, 1, *c);
    char *sql = sqlite3_str_finish(out);
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

/* Frozen views (CREATE VIEW …) made as TEMP ones over an old file. */
static int exec_temp_views(sqlite3 *db, const char *views) {
    sqlite3_str *out = sqlite3_str_new(db);
    for (const char *c = views; *c;) {
        if (!strncmp(c, "CREATE VIEW ", 12)) sqlite3_str_appendall(out, "CREATE TEMP VIEW "), c += 12;
        else sqlite3_str_appendchar(out, 1, *c++);
    }
    char *sql = sqlite3_str_finish(out);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

/* The views of a file of version `version` (6 or later) with catalog c,
 * as its own (kind "") or TEMP ones. */
static int exec_views(sqlite3 *db, const StoreCatalog *c, const char *kind, int version) {
    char *sql = store_views_sql(c, kind, version);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

/* Drop every view of the file before its tables change or its lists grow
 * (they are made anew from its catalog afterwards): whatever its version
 * made, since the names differ (version 4 turned decisions and attn_top
 * from tables into views). The schema check has already held them to that
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
    int rc = exec_with_columns(db, "%s", V3_FIELDS, SCHEMA_V2_HEAD_FIELDS, SCHEMA_V3_HEAD_FIELDS,
                               "ALTER TABLE decisions ADD COLUMN %s %s;\n");
    return rc == SQLITE_OK ? sqlite3_exec(db, MIGRATE_2_TO_3, NULL, NULL, NULL) : rc;
}

/* Version 3 to 4: the compact layout's tables and columns. Version 3's
 * rows are converted once the tables are version 6's (store_upgrade_rows,
 * upgrade4.c), so that they are totalled straight into head_totals. */
static const char MIGRATE_3_TO_4[] =
    "ALTER TABLE runs ADD COLUMN top_k INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN n_gate INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN n_global INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN n_oracle INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN n_oracle_global INTEGER;\n"
    "ALTER TABLE tokens ADD COLUMN keys_read_sum INTEGER;\n"
    SCHEMA_DECISION_BITS SCHEMA_V4_HEAD_TOTALS;

/* Version 4 to 5: the tokens' gate bitmaps. The runs already written keep
 * NULL there, and the diff reads their decision rows instead. */
static const char MIGRATE_4_TO_5[] = "ALTER TABLE tokens ADD COLUMN " SCHEMA_TOKEN_GATES ";\n";

/* Version 5 to 6: the file's lists (version 6's base), and the wide
 * head_totals as the long tables, read by version 5's own column names. */
static int migrate_5_to_6(sqlite3 *db) {
    StoreCatalog base;
    store_catalog_base(&base);
    int rc = sqlite3_exec(db, "ALTER TABLE head_totals RENAME TO head_totals_v5;\n" SCHEMA_V6_TABLES, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = store_catalog_rows(db, &base);
    for (int i = 0; rc == SQLITE_OK && i < 2; i++) {
        char *sql = sqlite3_mprintf("INSERT INTO %s(%s) %s", V6_TOTALS[i], V6_TOTAL_COLUMNS[i], V5_AS_V6[i]);
        rc = sql ? exec_at(db, sql, "head_totals_v5") : SQLITE_NOMEM;
        sqlite3_free(sql);
    }
    return rc == SQLITE_OK ? sqlite3_exec(db, "DROP TABLE head_totals_v5;", NULL, NULL, NULL) : rc;
}

/* The upgrade from version `from` to the current one's tables, inside the
 * caller's transaction: the views go, each step in turn; the caller makes
 * the views from the file's catalog. A version-3 file's rows move last,
 * into the current layout. */
static int migrate_steps(sqlite3 *db, int from) {
    int rc = drop_views(db);
    if (rc == SQLITE_OK && from <= 1) rc = migrate_1_to_2(db);
    if (rc == SQLITE_OK && from <= 2) rc = migrate_2_to_3(db);
    if (rc == SQLITE_OK && from <= 3) rc = sqlite3_exec(db, MIGRATE_3_TO_4, NULL, NULL, NULL);
    if (rc == SQLITE_OK && from <= 4) rc = sqlite3_exec(db, MIGRATE_4_TO_5, NULL, NULL, NULL);
    if (rc == SQLITE_OK && from <= 5) rc = migrate_5_to_6(db);
    if (rc == SQLITE_OK && from <= 6) rc = sqlite3_exec(db, SCHEMA_RUN_LAYERS, NULL, NULL, NULL); /* 6 to 7 */
    if (rc == SQLITE_OK && from <= 7) rc = sqlite3_exec(db, SCHEMA_V8_STEP, NULL, NULL, NULL);    /* 7 to 8 */
    if (rc == SQLITE_OK && from <= 3) rc = store_upgrade_rows(db);
    return rc;
}

/* What this build lists and the file lacks, appended to it, and its views
 * made anew from its catalog when anything was (or always, with `fresh`:
 * the views were dropped). Inside the caller's transaction. */
static int grow_catalog(sqlite3 *db, int fresh) {
    StoreCatalog file, own;
    char why[160];
    int changed = 0, rc = store_catalog_read(db, "main", &file, why, sizeof why);
    if (rc == 1) rc = SQLITE_CORRUPT; /* the check read the same rows a moment ago */
    store_catalog_own(&own);
    if (rc == SQLITE_OK) rc = store_catalog_extend(db, &file, &own, &changed);
    if (rc == SQLITE_OK && changed && !fresh) rc = drop_views(db);
    if (rc == SQLITE_OK && (changed || fresh)) rc = exec_views(db, &file, "", STORE_SCHEMA_VERSION);
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
    if (rc == SQLITE_OK) rc = grow_catalog(db, 1);
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

/* A current file whose lists lack some of this build's: appended in one
 * transaction (a field's column, a predictor's row) and the views made
 * anew; no schema version. 0, or -1 with e set. */
static int schema_grow(sqlite3 *db, const char *path, Err *e) {
    StoreCatalog file, own;
    char why[160];
    int rc = store_catalog_read(db, "main", &file, why, sizeof why), missing = 0;
    store_catalog_own(&own);
    for (int i = 0; rc == SQLITE_OK && i < own.n_fields; i++) missing |= !store_catalog_has_field(&file, own.field[i].name);
    missing |= rc == SQLITE_OK && file.n_preds < own.n_preds;
    if (rc != SQLITE_OK || !missing) return rc == SQLITE_OK ? 0 : store_sql_err(db, path, "cannot read its lists", e);
    rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = grow_catalog(db, 0);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK) return 0;
    int err = store_sql_err(db, path, "cannot add this build's fields and predictors", e);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return err;
}

/* A file opened read-only whose decision rows (decision_bits, or a
 * version-3 decisions table) lack fields this build reads: a TEMP view of
 * the same name adds them as NULL, "not computed". */
static int shadow_missing_fields(sqlite3 *db, const char *table) {
    sqlite3_str *cols = sqlite3_str_new(db);
    for (size_t i = 0; i < SCHEMA_N_HEAD_FIELDS; i++) {
        if (!strcmp(table, "decision_bits") && !strcmp(HEAD_FIELDS[i][0], "keys_read")) continue;
        char *q = sqlite3_mprintf("SELECT 1 FROM pragma_table_info('%q', 'main') WHERE name = '%q'", table,
                                  HEAD_FIELDS[i][0]);
        sqlite3_stmt *st = NULL;
        int has = q && sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
        sqlite3_free(q);
        if (!has) sqlite3_str_appendf(cols, ", NULL AS %s", HEAD_FIELDS[i][0]);
    }
    int n = sqlite3_str_length(cols);
    char *c = sqlite3_str_finish(cols);
    char *sql = c && n ? sqlite3_mprintf("CREATE TEMP VIEW %s AS SELECT *%s FROM main.%s;", table, c, table) : NULL;
    int rc = !n ? sqlite3_errcode(db) == SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_OK /* none missing: c is NULL */
           : sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(c);
    sqlite3_free(sql);
    return rc;
}

/* A version-4 or 5 file opened read-only: its wide head_totals shown as
 * version 6's two tables (TEMP views; the file's own views still read
 * its own table). */
static int compat_totals(sqlite3 *db) {
    int rc = SQLITE_OK;
    for (int i = 0; rc == SQLITE_OK && i < 2; i++) {
        char *sql = sqlite3_mprintf("CREATE TEMP VIEW %s(%s) AS %s;", V6_TOTALS[i], V6_TOTAL_COLUMNS[i], V5_AS_V6[i]);
        rc = sql ? exec_at(db, sql, "main.head_totals") : SQLITE_NOMEM;
        sqlite3_free(sql);
    }
    return rc;
}

/* An older file opened read-only: the current names over its tables
 * (readers in C ask store_version which tables to read); version 1 and 2
 * summarised from their rows by version 3's views. A current one only
 * gains, as NULL, the fields its rows lack. */
static int schema_compat(sqlite3 *db, const char *path, int ver, Err *e) {
    int rc = SQLITE_OK;
    if (ver <= 2) {
        rc = exec_with_columns(db, ver == 1 ? COMPAT_1 : COMPAT_2_DECISIONS, HEAD_FIELDS, SCHEMA_V2_HEAD_FIELDS,
                               SCHEMA_N_HEAD_FIELDS, ", NULL AS %s");
        if (rc == SQLITE_OK) rc = exec_temp_views(db, store_schema_old_views(3));
        if (rc == SQLITE_OK) rc = sqlite3_exec(db, COMPAT_2, NULL, NULL, NULL);
    } else if (ver == 3) rc = shadow_missing_fields(db, "decisions");
    else {
        if (ver <= 5) rc = compat_totals(db);
        if (rc == SQLITE_OK) rc = shadow_missing_fields(db, "decision_bits");
    }
    if (rc == SQLITE_OK && ver < 7) rc = sqlite3_exec(db, COMPAT_6, NULL, NULL, NULL);
    if (rc == SQLITE_OK && ver < 8) rc = sqlite3_exec(db, COMPAT_7, NULL, NULL, NULL);
    if (rc == SQLITE_OK && ver > 1 && ver < 8) rc = sqlite3_exec(db, COMPAT_7_RUNS, NULL, NULL, NULL);
    if (rc == SQLITE_OK) return 0;
    char what[64];
    snprintf(what, sizeof what, "cannot read schema version %d", ver);
    return store_sql_err(db, path, what, e);
}

/* The tables and views of a new file: version 6's base lists, then what
 * this build adds to them, as a writer adds them to any file. */
static int create_objects(sqlite3 *db) {
    StoreCatalog base;
    store_catalog_base(&base);
    int rc = sqlite3_exec(db, SCHEMA_TABLES, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, SCHEMA_DECISIONS, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, SCHEMA_RUN_LAYERS, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, SCHEMA_V8_STEP, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = store_catalog_rows(db, &base);
    if (rc == SQLITE_OK) rc = grow_catalog(db, 1);
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

/* The current version's tables grown to catalog c and its views from c,
 * into an empty mem (or one holding an older file's objects, upgraded). */
static int expected_current(sqlite3 *mem, int created, const StoreCatalog *c) {
    int rc = SQLITE_OK;
    if (created < STORE_SCHEMA_VERSION) rc = migrate_steps(mem, created);
    else {
        rc = sqlite3_exec(mem, SCHEMA_TABLES, NULL, NULL, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_exec(mem, SCHEMA_DECISIONS, NULL, NULL, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_exec(mem, SCHEMA_RUN_LAYERS, NULL, NULL, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_exec(mem, SCHEMA_V8_STEP, NULL, NULL, NULL);
    }
    sqlite3_str *alter = sqlite3_str_new(mem);
    int bad = store_catalog_columns(c, alter);
    char *sql = sqlite3_str_finish(alter); /* NULL when there is nothing to add */
    if (rc == SQLITE_OK) rc = bad ? bad : sql ? sqlite3_exec(mem, sql, NULL, NULL, NULL) : SQLITE_OK;
    sqlite3_free(sql);
    return rc == SQLITE_OK ? exec_views(mem, c, "", STORE_SCHEMA_VERSION) : rc;
}

/* A version-6 or 7 file's objects (frozen text in mem, as made with
 * version 6's base lists) grown to its catalog c, as a build of that
 * version grew it: decision_bits' columns past the base appended and the
 * views made anew by that version's rule. With the base lists alone, mem
 * is left as it is. */
static int expected_grown(sqlite3 *mem, const StoreCatalog *c, int version) {
    StoreCatalog base;
    store_catalog_base(&base);
    if (c->n_fields == base.n_fields && c->n_preds == base.n_preds) return SQLITE_OK;
    sqlite3_str *alter = sqlite3_str_new(mem);
    int bad = store_catalog_columns(c, alter);
    char *sql = sqlite3_str_finish(alter);
    int rc = bad ? bad : drop_views(mem);
    if (rc == SQLITE_OK && sql) rc = sqlite3_exec(mem, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    return rc == SQLITE_OK ? exec_views(mem, c, "", version) : rc;
}

/* A private in-memory database holding exactly the objects a file created
 * at version `created` has once upgraded to version `ver` (and, at the
 * current version, grown to its catalog c): made by the very statements
 * that make and upgrade a file (schema_old.c for older versions), so the
 * SQL text SQLite stores, ALTER TABLE's edits included, matches byte for
 * byte and no list of objects is kept twice. An upgrade that stopped short
 * of the current version was made by an older build: schema_old.c holds
 * what it left. NULL with why set on failure. */
static sqlite3 *expected_db(int created, int ver, const StoreCatalog *c, char *why, size_t cap) {
    sqlite3 *mem = NULL;
    int rc = store_db_open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &mem);
    const char *old = created < ver ? store_schema_old_upgraded(created, ver) : store_schema_old(created);
    if (rc == SQLITE_OK && old) rc = sqlite3_exec(mem, old, NULL, NULL, NULL);
    if (rc == SQLITE_OK && ver == STORE_SCHEMA_VERSION) rc = expected_current(mem, created, c);
    else if (rc == SQLITE_OK && (ver == 6 || ver == 7)) rc = expected_grown(mem, c, ver);
    if (rc == SQLITE_OK) return mem;
    snprintf(why, cap, "%s", mem ? sqlite3_errmsg(mem) : sqlite3_errstr(rc));
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

/* One column's test on the probed row, as a WHEN of the CASE that says
 * what was found: NULL in a NOT NULL column, a storage class its declared
 * type's affinity never stores, or (the totals' name columns) a word
 * ahascope never writes there: a long totals row otherwise reads as a
 * plausible tokens row. */
static char *column_test(char *cases, sqlite3_stmt *col, const char *schema, const char *table) {
    static const char *const kinds[][2] = {{"INTEGER", "'integer'"}, {"REAL", "'real', 'integer'"}, {"TEXT", "'text'"}};
    const char *name = (const char *)sqlite3_column_text(col, 0), *type = (const char *)sqlite3_column_text(col, 2);
    char *more = cases;
    if (sqlite3_column_int(col, 1))
        more = sqlite3_mprintf("%z WHEN \"%w\" IS NULL THEN 'NULL in its NOT NULL column ''%q'''", more, name, name);
    if (strncmp(table, "head_", 5)) return more;
    if (more && name && !strcmp(name, "predictor"))
        more = sqlite3_mprintf("%z WHEN predictor NOT IN (SELECT name FROM \"%w\".predictors) THEN 'predictor ' ||"
                               " substr(quote(predictor), 1, 40) || ', which the file''s predictors do not list'",
                               more, schema);
    for (size_t i = 0; more && type && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!sqlite3_stricmp(type, kinds[i][0]))
            more = sqlite3_mprintf("%z WHEN typeof(\"%w\") NOT IN ('null', %s) THEN typeof(\"%w\") || ' in its %q"
                                   " column ''%q'''", more, name, kinds[i][1], name, kinds[i][0], name);
    return more;
}

/* Whether the first row of table t of `schema` reads as that table's: a
 * root page of the wrong kind (a rowid table's b-tree under a WITHOUT
 * ROWID table's name, or the reverse), or a damaged page, fails to read
 * at all, and one of the same kind usually puts a NULL in a NOT NULL
 * column or a value of the wrong storage class in a typed one. 0, 1 with
 * why saying which was found, or SQLite's error code. */
static int root_probe(sqlite3 *db, const char *schema, const char *t, char *why, size_t cap) {
    char *sql = sqlite3_mprintf("SELECT name, \"notnull\", type FROM pragma_table_info(%Q, %Q)", t, schema);
    sqlite3_stmt *st = NULL;
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    char *cases = sqlite3_mprintf("CASE WHEN 0 THEN NULL");
    while (rc == SQLITE_OK && cases && sqlite3_step(st) == SQLITE_ROW) cases = column_test(cases, st, schema, t);
    sqlite3_finalize(st);
    sql = cases ? sqlite3_mprintf("SELECT (%s END) FROM (SELECT * FROM \"%w\".\"%w\" LIMIT 1)", cases, schema, t)
                : NULL;
    sqlite3_free(cases);
    if (rc == SQLITE_OK) rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(st);
    const char *found = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if ((rc & 0xff) == SQLITE_CORRUPT)
        snprintf(why, cap, "table '%.64s' does not hold its own rows: reading its first row fails (%s: a root page"
                           " of another table's kind, or a damaged page)", t, sqlite3_errmsg(db));
    else if (found)
        snprintf(why, cap, "tampered schema: table '%.64s' does not hold its own rows: its first row has %.120s", t,
                 found);
    int bad = (rc & 0xff) == SQLITE_CORRUPT || found;
    sqlite3_finalize(st);
    for (char *c = why; bad && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    if (bad) return 1;
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Whether two objects of `schema` share a root page (a b-tree read under
 * two names): 0, 1 with why set, or SQLite's code. */
static int shared_root(sqlite3 *db, const char *schema, char *why, size_t cap) {
    char *sql = sqlite3_mprintf("SELECT min(name), max(name) FROM \"%w\".sqlite_schema WHERE rootpage > 0"
                                " GROUP BY rootpage HAVING COUNT(*) > 1", schema);
    sqlite3_stmt *st = NULL;
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        snprintf(why, cap, "tampered schema: '%.64s' and '%.64s' share one root page", sqlite3_column_text(st, 0),
                 sqlite3_column_text(st, 1));
        for (char *c = why; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
        rc = 1;
    } else if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(st);
    return rc;
}

/* What sqlite_schema points at: no root page twice, every table's root
 * page probed. */
static int roots_diff(sqlite3 *db, const char *schema, char *why, size_t cap) {
    int shared = shared_root(db, schema, why, cap);
    if (shared) return shared;
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

/* What a failed root-page probe adds when pages were read through a -wal
 * beside the file: the side-file check passes a -wal of another database
 * that happens to start at this file's page count (store/SCHEMA.md). */
static const char *wal_hint(const char *path) {
    char wal[1100];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &st) != 0 || st.st_size == 0) return "";
    return " (its pages were read through its -wal: one written for another database reads so)";
}

/* store_schema_verify inside a snapshot: the header, then the objects
 * against each way a file of its version can rightly look (created at that
 * version, or at any older one and upgraded). */
static int verify_snapshot(sqlite3 *db, const char *schema, const char *path, int *ver, Err *e) {
    int app = 0;
    char sql[160], why[400] = "", try_why[400];
    sqlite3_snprintf(sizeof sql, sql, "PRAGMA \"%w\".application_id", schema);
    int rc = pragma_int(db, sql, &app);
    sqlite3_snprintf(sizeof sql, sql, "PRAGMA \"%w\".user_version", schema);
    if (rc == SQLITE_OK) rc = pragma_int(db, sql, ver);
    if (rc != SQLITE_OK) return store_sql_err(db, path, "cannot read the schema", e);
    if (app != STORE_APPLICATION_ID) return err_set(e, "%s: not an ahascope database", path);
    if (*ver < 1 || *ver > STORE_SCHEMA_VERSION)
        return err_set(e, "%s: schema version %d is not one this ahascope reads (1 to %d)", path, *ver,
                       STORE_SCHEMA_VERSION);
    StoreCatalog cat;
    if (*ver >= 6) { /* since version 6 a file's views follow its own lists */
        rc = store_catalog_read(db, schema, &cat, why, sizeof why);
        if (rc == 1) return err_set(e, "%s: tampered schema: %s", path, why);
        if (rc != SQLITE_OK) return store_sql_err(db, path, "damaged ahascope schema: cannot read its lists", e);
    }
    for (int created = *ver, best = -1, same; created >= 1; created--) {
        sqlite3 *want = expected_db(created, *ver, &cat, try_why, sizeof try_why);
        if (!want) return err_set(e, "%s: cannot check the schema: %s", path, try_why);
        rc = schema_diff(db, schema, want, try_why, sizeof try_why, &same);
        sqlite3_close(want);
        if (rc == SQLITE_OK && (rc = roots_diff(db, schema, why, sizeof why)) == 1)
            return err_set(e, "%s: %s%s", path, why, wal_hint(path));
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

/* A run id past the writer's cap is no run ahascope wrote; found before
 * the writer configures the file, so refusing it leaves the file as it was
 * (record refused it only after switching the file to WAL mode). */
static int check_run_cap(sqlite3 *db, const char *path, Err *e) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT MAX(run_id) FROM runs", -1, &st, NULL) != SQLITE_OK)
        return store_sql_err(db, path, "cannot read the runs", e);
    int rc = sqlite3_step(st);
    sqlite3_int64 last = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return store_sql_err(db, path, "cannot read the runs", e);
    if (last > STORE_MAX_RUNS)
        return err_set(e, "%s: holds run %lld, past the %d runs a database keys: not a file ahascope wrote", path,
                       (long long)last, STORE_MAX_RUNS);
    return 0;
}

int store_schema_accept(sqlite3 *db, const char *path, int create, Err *e) {
    int ver = 0, judged = identify(db, path, create, &ver, e);
    if (judged) return judged < 0 ? -1 : 0;
    if (store_schema_verify(db, "main", path, &ver, e)) return -1;
    return check_run_cap(db, path, e);
}

/* store_schema_check, with `write` apart from `create`: a writer's second
 * look, after it created or upgraded the file, must not create again. */
static int schema_check(sqlite3 *db, const char *path, int create, int write, Err *e) {
    int ver = 0, judged = identify(db, path, create, &ver, e);
    if (judged < 0) return -1;
    if (judged) {
        int rc = schema_create(db, path, e);
        if (rc <= 0) return rc;
        return schema_check(db, path, 0, write, e);
    }
    if (store_schema_verify(db, "main", path, &ver, e)) return -1; /* ver again: a writer may have upgraded it */
    if (!write) return schema_compat(db, path, ver, e);
    if (ver == STORE_SCHEMA_VERSION) return schema_grow(db, path, e);
    if (schema_migrate(db, path, e)) return -1;
    return schema_check(db, path, 0, write, e);
}

int store_schema_check(sqlite3 *db, const char *path, int create, Err *e) { return schema_check(db, path, create, create, e); }
