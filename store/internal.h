/* internal.h — what the store's files share and nobody else sees.
 *
 * Grouped by the file that defines each part. Calls go one way, down a
 * ladder (store/README.md): sql.c, liveness.c and sidefile.c call nothing else here;
 * layout.c and upgrade4.c (version 4's rows) stand on sql.c;
 * schema.c stands on sql.c; writer.c on those; store.c (open, close) on
 * all of them; the readers and commands on whichever they need. */
#ifndef AHASCOPE_STORE_INTERNAL_H
#define AHASCOPE_STORE_INTERNAL_H

#include <sqlite3.h>

#include "engine/decide.h"
#include "store/store.h"

/* ---- layout.c: the rows of schema version 4 (store/SCHEMA.md, "Tables") ---- */

/* The packed key of decision_bits: run_id << 48 | pos << 28 | layer << 18 |
 * head. Each part's bound is a limit of its own (MODEL_MAX_SEQ,
 * MODEL_MAX_LAYERS, STORE_MAX_CELLS), so a key never overflows into the
 * next part; STORE_MAX_RUNS keeps the key positive. */
#define STORE_K_RUN 48
#define STORE_K_POS 28
#define STORE_K_LAYER 18
static inline int64_t store_k(int64_t run, int pos, int layer, int head) {
    /* unsigned: a run id past STORE_MAX_RUNS read from a hostile file must not be undefined behaviour */
    return (int64_t)((uint64_t)run << STORE_K_RUN | (uint64_t)pos << STORE_K_POS | (uint64_t)layer << STORE_K_LAYER |
                     (uint64_t)head);
}

/* The parts of a key k (an SQL expression) as SQL, for the views and for
 * queries that read decision_bits by key range. */
#define STORE_SQL_RUN(k) "(" k " >> 48)"
#define STORE_SQL_POS(k) "(" k " >> 28 & 1048575)"
#define STORE_SQL_LAYER(k) "(" k " >> 18 & 1023)"
#define STORE_SQL_HEAD(k) "(" k " & 262143)"

/* A float32 as SQL from its bit pattern x (an SQL expression holding the
 * 32 bits, signed or not): sign * mantissa * 2^(exponent - 150), the
 * subnormals mantissa * 2^-149, exponent 255 +-Inf (1e999) or NULL for NaN.
 * Exact: every float32 is a double, and each factor is. */
#define STORE_SQL_F32(x)                                                                                        \
    "(CASE WHEN " x " IS NULL THEN NULL WHEN (" x " >> 23 & 255) = 255 THEN CASE WHEN (" x " & 8388607) = 0 THEN " \
    "CASE WHEN (" x " & 2147483648) THEN -1e999 ELSE 1e999 END END ELSE CASE WHEN (" x " & 2147483648) THEN -1.0 "  \
    "ELSE 1.0 END * CASE WHEN (" x " >> 23 & 255) = 0 THEN (" x " & 8388607) * POWER(2, -149) ELSE ((" x          \
    " & 8388607) | 8388608) * POWER(2, (" x " >> 23 & 255) - 150) END END)"

/* How decision_bits keeps each per-head field of engine/trace.h, chosen by
 * its SQL type and display: a REAL as its float32's bits in a 4-byte
 * INTEGER (BITS), the gate as itself (KEPT), keys_read not at all (DERIVED:
 * pos + 1 when global, the local set when local, from the run's window and
 * sinks). A new INTEGER field fails to compile until it is given a kind. */
#define STORE_KIND(sql, show) STORE_KIND_##sql(show)
#define STORE_KIND_REAL(show) BITS
#define STORE_KIND_INTEGER(show) STORE_KIND_INT_##show
#define STORE_KIND_INT_GATE KEPT
#define STORE_KIND_INT_KEYS DERIVED
#define STORE_KIND_INT_NONE KEPT
#define STORE_CAT(a, b) STORE_CAT_I(a, b)
#define STORE_CAT_I(a, b) a##b
/* A field through P##BITS, P##KEPT or P##DERIVED (name, type, missing). */
#define STORE_BY_KIND(P, name, type, missing, sql, show) STORE_CAT(P, STORE_KIND(sql, show))(name, type, missing)

/* The attention top-k kept in the row: ranks 0 … STORE_ATTN_TOP_MAX - 1 as
 * top0 … top7, each key_pos << 32 | the weight's float32 bits. */
#define STORE_TOP_COLUMNS ", top0, top1, top2, top3, top4, top5, top6, top7"

/* keys_read as SQL from a decision's gate and position and its run's
 * window and sinks (engine/attn.c: all pos + 1 keys when global, sinks and
 * window when local; attn_local_set's bounds): version 6's rule. */
#define STORE_SQL_KEYS_READ_V6(gate, pos, window, sinks)                                                        \
    "CASE " gate " WHEN 1 THEN " pos " + 1 WHEN 0 THEN MIN(" sinks ", " pos " + 1) + " pos " + 1 - MAX(" pos     \
    " - " window " + 1, MIN(" sinks ", " pos " + 1)) END"
/* Version 7's: the same, and a decision without a gate on a layer its run's
 * run_layers row makes local (a fixed-local head) read its window,
 * min(W, pos + 1), looked up by the table's key only for such rows. */
#define STORE_SQL_KEYS_READ_V7(gate, pos, window, sinks, run, layer)                                            \
    "CASE " gate " WHEN 1 THEN " pos " + 1 WHEN 0 THEN MIN(" sinks ", " pos " + 1) + " pos " + 1 - MAX(" pos     \
    " - " window " + 1, MIN(" sinks ", " pos " + 1)) ELSE (SELECT MIN(l.window, " pos " + 1) FROM run_layers l"  \
    " WHERE l.run_id = " run " AND l.layer = " layer " AND l.window > 0) END"
/* Version 8's window of a local decision: the head's own span when its run
 * has a run_heads row for it (alpha + beta * (pos + 1) rounded half up,
 * within 1 … pos + 1: headtab_window_at's arithmetic, in the same double
 * operations on the same float values), else the run's window. */
#define STORE_SQL_HEAD_WINDOW(pos, window, run, layer, head)                                                    \
    "COALESCE((SELECT MAX(1, MIN(" pos " + 1, CAST(h.alpha + h.beta * (" pos " + 1) + 0.5 AS INTEGER)))"          \
    " FROM run_heads h WHERE h.run_id = " run " AND h.layer = " layer " AND h.head = " head "), " window ")"
/* Version 8's rule: version 7's, a local decision's window its head's own. */
#define STORE_SQL_KEYS_READ(gate, pos, window, sinks, run, layer, head)                                         \
    STORE_SQL_KEYS_READ_V7(gate, pos, STORE_SQL_HEAD_WINDOW(pos, window, run, layer, head), sinks, run, layer)
/* The same where the file keeps each decision's local_window (the field of
 * engine/trace.h; a multi-choice router picks it per token and head): that
 * window when the row holds one, else the head's or the run's. */
#define STORE_SQL_KEYS_READ_CHOSEN(gate, pos, window, sinks, run, layer, head, chosen)                          \
    STORE_SQL_KEYS_READ_V7(gate, pos,                                                                           \
                           "CASE WHEN " chosen " > 0 THEN " chosen " ELSE "                                        \
                           STORE_SQL_HEAD_WINDOW(pos, window, run, layer, head) " END", sinks, run, layer)
/* The field that holds it, by name (views_sql.c asks the file's catalog). */
#define STORE_CHOSEN_FIELD "local_window"

/* The columns of decision_bits an INSERT names: the key, the stored
 * fields, the top-k words; and one row's values bound from cell c of a
 * trace at parameter b (store_bind_bits_row returns the next parameter). */
#define STORE_INS_BITS(name, type, missing) ", " #name
#define STORE_INS_KEPT(name, type, missing) ", " #name
#define STORE_INS_DERIVED(name, type, missing)
#define STORE_INS_FIELD(name, type, missing, sql, show, title, short_name, doc) \
    STORE_BY_KIND(STORE_INS_, name, type, missing, sql, show)
#define STORE_BITS_COLUMNS "k" TRACE_HEAD_FIELDS(STORE_INS_FIELD) STORE_TOP_COLUMNS
int store_bind_bits_row(sqlite3_stmt *st, int b, int64_t run_id, const StepTrace *t, int c);
/* Values per row of STORE_BITS_COLUMNS. */
int store_bits_row_values(void);

/* The decisions view's columns over decision_bits b (and its runs row r,
 * for keys_read), so a query that filters b.k by range reads a run without
 * decoding every other run's rows. */
#define STORE_DEC_BITS(name, type, missing) ",\n    " STORE_SQL_F32("b." #name) " AS " #name
#define STORE_DEC_KEPT(name, type, missing) ", b." #name
#define STORE_DEC_DERIVED(name, type, missing)                                                               \
    ",\n    " STORE_SQL_KEYS_READ_CHOSEN("b.gate", STORE_SQL_POS("b.k"), "r.window", "r.sinks", STORE_SQL_RUN("b.k"), \
                                         STORE_SQL_LAYER("b.k"), STORE_SQL_HEAD("b.k"), "b." STORE_CHOSEN_FIELD) " AS " #name
#define STORE_DEC_FIELD(name, type, missing, sql, show, title, short_name, doc) \
    STORE_BY_KIND(STORE_DEC_, name, type, missing, sql, show)
#define STORE_DECISIONS_SELECT                                                                                \
    STORE_SQL_RUN("b.k") " AS run_id, " STORE_SQL_POS("b.k") " AS pos, " STORE_SQL_LAYER("b.k") " AS layer, " \
    STORE_SQL_HEAD("b.k") " AS head" TRACE_HEAD_FIELDS(STORE_DEC_FIELD)
#define STORE_DECISIONS_FROM "decision_bits b LEFT JOIN runs r ON r.run_id = " STORE_SQL_RUN("b.k")
/* A run's keys: b.k within run ?N's range. */
#define STORE_SQL_IN_RUN(n) "b.k BETWEEN ?" n " << 48 AND ((?" n " + 1) << 48) - 1"
/* The decisions of run ?N as a subquery with the view's columns, reading
 * that run's keys only and decoding with ahascope_f32. */
#define STORE_C_BITS(name, type, missing) ", ahascope_f32(b." #name ") AS " #name
#define STORE_C_KEPT(name, type, missing) ", b." #name
#define STORE_C_DERIVED STORE_DEC_DERIVED
#define STORE_C_FIELD(name, type, missing, sql, show, title, short_name, doc) \
    STORE_BY_KIND(STORE_C_, name, type, missing, sql, show)
#define STORE_SQL_RUN_DECISIONS(n)                                                                            \
    "(SELECT " STORE_SQL_RUN("b.k") " AS run_id, " STORE_SQL_POS("b.k") " AS pos, " STORE_SQL_LAYER("b.k")      \
    " AS layer, " STORE_SQL_HEAD("b.k") " AS head" TRACE_HEAD_FIELDS(STORE_C_FIELD) " FROM " STORE_DECISIONS_FROM \
    " WHERE " STORE_SQL_IN_RUN(n) ")"

/* keys_read in C, the same rule: a fixed-local head (layer_window > 0,
 * no gate) reads min(layer_window, pos + 1); -1 for another unknown gate.
 * window is the decision's own (store_decision_window). */
int store_keys_read(int pos, int gate, int window, int sinks, int layer_window);

/* The local window of cell's decision at pos: its head's span (span[2 *
 * cell], [2 * cell + 1]: alpha, beta; headtab_window_at) when span is not
 * NULL and holds finite values there, else the run's window. */
int store_head_window(const float *span, int cell, int pos, int window);

/* The window of t's decision at cell: the one it recorded (local_window,
 * above 0: a multi-choice router's choice among them), else
 * store_head_window's. */
int store_decision_window(const StepTrace *t, const float *span, int cell, int window);

/* Run run_id's run_heads rows into *span (malloc'd, cells * 2 floats, NAN
 * where a head has no row), or *span NULL when it has none. SQLite's code. */
int store_read_spans(sqlite3 *db, int64_t run_id, int n_layers, int n_heads, float **span);

/* Bind a float as its bit pattern (a signed 32-bit INTEGER), NULL for NaN. */
void store_bind_bits(sqlite3_stmt *st, int i, float v);

/* Read a bit-pattern column back as the float; NULL gives NAN. */
float store_col_bits(sqlite3_stmt *st, int i);

/* ahascope_f32(bits): STORE_SQL_F32 as a C function, registered on every
 * store connection for the store's own queries (a whole run decoded in a
 * fraction of the SQL's time); the views keep the SQL, which any SQLite
 * runs. */
void store_sql_f32(sqlite3_context *ctx, int argc, sqlite3_value **v);

/* Bind rank r of a trace's top-k at cell c as key_pos << 32 | weight bits,
 * NULL past the last rank (or beyond the trace's top_k). */
void store_bind_top(sqlite3_stmt *st, int i, const StepTrace *t, int c, int r);

/* tokens.gates: every head's executed gate at the position, two bits a
 * head in layer-major order (cell c = layer * n_heads + head in byte c / 4
 * at bit 2 * (c % 4)): KNOWN when the gate is (decision_bits' gate not
 * NULL), GLOBAL when it is 1. */
#define STORE_GATE_KNOWN 1u
#define STORE_GATE_GLOBAL 2u
#define STORE_GATE_SHIFT(c) (2 * ((c) & 3))
static inline size_t store_gate_bytes(int cells) { return ((size_t)cells + 3) / 4; }
static inline unsigned store_gate_at(const uint8_t *bits, int c) { return bits[c >> 2] >> STORE_GATE_SHIFT(c) & 3u; }


/* The totals a writer keeps per (run, layer, head), in two tables of one
 * row per head (and name) (store/SCHEMA.md): head_totals, per predictor
 * (engine/decide.h's, the oracle with them), the decisions it made, the
 * global ones, its confusion against the oracle, and the regime split
 * compare prints: per side of the far scores' regime (calm: σ <= √(2 ln
 * n_far); frozen: above), over the decisions with far_std, an oracle value
 * and n_far > 1, how many, the globals and the true positives (kept for
 * the oracle and the two QAdA forms); head_stats, the decided positions,
 * sums and counts for the means, keys read. */
enum { STORE_SIDE_CALM, STORE_SIDE_FROZEN, STORE_N_SIDES };
enum { STORE_SIDE_N, STORE_SIDE_GLOBAL, STORE_SIDE_TP, STORE_N_SIDE };

/* The means head_stats keeps: router score, oracle mass, oracle error. */
enum { STORE_MEAN_SCORE, STORE_MEAN_MASS, STORE_MEAN_ERR, STORE_N_MEANS };

/* One head's totals over the decided positions (n_far != 0) of a run. */
typedef struct {
    long n;                                   /* decided positions */
    long made[DECIDE_COUNT], global[DECIDE_COUNT]; /* decisions each predictor made; global ones */
    DecideCounts cells[DECIDE_COUNT];         /* against the oracle, where both exist */
    double sum[STORE_N_MEANS];
    long count[STORE_N_MEANS];
    long keys_read;
    long side[DECIDE_COUNT][STORE_N_SIDES][STORE_N_SIDE]; /* the regime split, per predictor */
} StoreHeadTotal;

/* A run's totals as its writer keeps them in memory between commits. */
typedef struct StoreTotals {
    int64_t run_id;                           /* 0: none loaded */
    int n_layers, n_heads, window, sinks;
    float *span;                              /* the heads' own windows (run_heads), NULL: the run's window */
    float tau;
    double theta_logit;
    StoreHeadTotal *head;                     /* [layer * n_heads + head] */
    StoreHeadTotal *written;                  /* what the file holds of each head, as last written */
    unsigned char *stored;                    /* 1: the head's rows are in the file */
    sqlite3_stmt *put[2];                     /* the REPLACEs of head_totals and head_stats */
} StoreTotals;

/* What a position's tokens row keeps for token_share: heads with a known
 * gate and global ones, heads with an oracle value and global ones, and
 * the keys they read (NULL when no gate is known). */
typedef struct {
    long n_gate, n_global, n_oracle, n_oracle_global, keys_read;
} StoreStepCounts;

/* Load run_id's totals (its runs row and any head_totals rows it has)
 * into tt, dropping what tt held. SQLite's code. */
int store_totals_load(StoreTotals *tt, sqlite3 *db, int64_t run_id);

/* Add one step (the engine/decide.h rules) to tt and set its counts. The
 * trace's shape must be the run's. */
void store_totals_add(StoreTotals *tt, const StepTrace *t, StoreStepCounts *sc);

/* A step's whole share of the layout in one pass over its cells: each
 * layer's decision_bits rows bound into ins (a statement of one row per
 * head) and stepped, each cell added to tt and to the tokens row's counts
 * sc, and its gate into gates (store_gate_bytes of the cells). The trace's
 * shape must be the run's. SQLite's code. */
int store_step_rows(StoreTotals *tt, sqlite3_stmt *ins, int64_t run_id, const StepTrace *t, uint8_t *gates,
                    StoreStepCounts *sc);

/* Write tt's rows (REPLACE), inside the caller's transaction. */
int store_totals_write(StoreTotals *tt, sqlite3 *db);

/* Free tt's memory and statement. */
void store_totals_free(StoreTotals *tt);

/* ---- catalog.c and views_sql.c: a file's lists and its views ---- */

/* How decision_bits keeps a field (catalog.c's words "bits", "int",
 * "derived"): a REAL as its float32's bits, an integer as itself, or not
 * at all (keys_read, from the gate and the run's window and sinks). */
typedef enum { STORE_FIELD_BITS, STORE_FIELD_INT, STORE_FIELD_DERIVED } StoreFieldKind;

#define STORE_CAT_NAME 48 /* bytes of a field's or predictor's name, NUL included */
#define STORE_CAT_MAX 64  /* fields, and predictors, a file may list */

typedef struct {
    char name[STORE_CAT_NAME];
    StoreFieldKind kind;
} StoreCatField;

/* A predictor as the file lists it: the field its rule compares, the rule
 * (PRED_THR_GATE the value itself, TAU above the run's τ, THETA above its
 * logit(θ)), and whether it is the label the others are scored against. */
typedef struct {
    char name[STORE_CAT_NAME], field[STORE_CAT_NAME];
    PredThr rule;
    int label;
} StoreCatPred;

/* The per-head fields and the predictors of a file (the `fields` and
 * `predictors` tables, in their order), or of this build. */
typedef struct {
    int n_fields, n_preds;
    StoreCatField field[STORE_CAT_MAX];
    StoreCatPred pred[STORE_CAT_MAX];
} StoreCatalog;

/* Version 6's lists as it froze them: what every version-6 file lists
 * first. */
void store_catalog_base(StoreCatalog *c);

/* This build's lists: the base, then engine/trace.h's fields and
 * engine/decide.h's predictors that it lacks, in their order. */
void store_catalog_own(StoreCatalog *c);

/* The lists of database `schema` of db, each row checked (a name SQL can
 * hold unquoted, a kind and rule ahascope knows, a predictor's field among
 * the fields, the base first). 0, 1 with why set, or SQLite's code. */
int store_catalog_read(sqlite3 *db, const char *schema, StoreCatalog *c, char *why, size_t cap);

/* Insert c's rows into a new file's empty `fields` and `predictors`. */
int store_catalog_rows(sqlite3 *db, const StoreCatalog *c);

/* Append to the file (and to *file) what own lists and it lacks: a field's
 * row and decision_bits column, a predictor's row; inside the caller's
 * transaction. *changed says whether anything was added. SQLite's code. */
int store_catalog_extend(sqlite3 *db, StoreCatalog *file, const StoreCatalog *own, int *changed);

/* The ALTER TABLEs that gave decision_bits the columns of c's fields past
 * the base, appended to out: how a file's table text looks once grown. */
int store_catalog_columns(const StoreCatalog *c, sqlite3_str *out);

/* Whether c lists field `name`. */
int store_catalog_has_field(const StoreCatalog *c, const char *name);

/* The views of a file of schema version `version` (6, 7 or 8: they
 * differ in decisions' keys_read only, version 7's reading run_layers,
 * version 8's run_heads too) with
 * catalog c, as the file's own (kind "") or TEMP ones; sqlite3_malloc'd,
 * NULL when out of memory. */
char *store_views_sql(const StoreCatalog *c, const char *kind, int version);

/* ---- upgrade4.c: on sql.c and layout.c ---- */

/* Version 3's decisions and attn_top rows into decision_bits, head_totals
 * and the tokens' counts, in the caller's transaction; the old tables
 * are dropped. SQLite's code (SQLITE_TOOBIG for a key that cannot be
 * packed: a run, position, layer or head beyond the limits). */
int store_upgrade_rows(sqlite3 *db);

struct Store {
    sqlite3 *db;
    char path[1024];
    StoreMode mode;
    int commit_every;    /* steps per transaction */
    int pending;         /* steps written since the last commit (in the TEMP tables when buffered) */
    int64_t pending_run; /* run those steps belong to */
    int pending_n_tokens; /* n_tokens to record at the next commit */
    sqlite3_stmt *ins_token, *ins_decision, *upd_tokens;
    int rows_per_insert; /* heads per decisions INSERT (the shape it was prepared for) */
    int buffered;        /* the INSERTs write the TEMP pending tables (commit_every > 1), not the file's */
    uint8_t *gate_buf;   /* the step's tokens.gates, bound by the token INSERT */
    size_t gate_cap;
    int (*stop)(void *ctx); /* store_set_interrupt's poll, NULL none */
    void *stop_ctx;
    int version;         /* the file's schema version (older only when opened read-only) */
    StoreTotals totals;  /* the running totals of the run being written (layout.c) */
    int top_k;           /* ranks the pending steps stored (runs.top_k at the next commit) */
};

/* Put back the progress handler store_set_interrupt installed (or none):
 * a statement that set its own handler calls this when it is done. */
void store_interrupt_restore(Store *s);

/* ", score, gate, …": the per-head columns of `decisions`, in order, from
 * engine/trace.h's field list. */
#define STORE_HEAD_NAME(name, type, missing, sql, show, title, short_name, doc) ", " #name
#define STORE_HEAD_COLUMNS TRACE_HEAD_FIELDS(STORE_HEAD_NAME)

/* ---- sql.c: the base every other store file stands on ---- */

/* Open a connection (sqlite3_open_v2 flags) and harden it: defensive mode,
 * the file's schema untrusted, triggers, extension loading and
 * fts3_tokenizer off. Every connection the store makes goes through here.
 * Returns SQLITE_OK, SQLite's code, or SQLITE_MISUSE when a setting did not
 * take (*db is then open, for the caller to close). */
int store_db_open(const char *path, int flags, sqlite3 **db);

/* Set e to "<path>: <what>: <cause>" and return -1. The cause is SQLite's
 * last error put plainly where a user can act on it (disk full, locked and
 * for how long, a hot journal, an unusable -wal/-shm file); call it before
 * anything else runs on db, a ROLLBACK above all, or the error is lost. */
int store_sql_err(sqlite3 *db, const char *path, const char *what, Err *e);

/* path into out (cap bytes) with newlines and other control characters
 * escaped, for naming a file inside a one-line message. */
void store_path_shown(const char *path, char *out, size_t cap);

/* Prepare sql or set e. */
int store_prepare(Store *s, const char *sql, sqlite3_stmt **st, Err *e);

/* Bind a value to a REAL or INTEGER column: NULL for "not computed" (NaN
 * or ±Inf reals, negative integers), so SQL aggregates skip it. */
void store_bind_REAL(sqlite3_stmt *st, int i, double v);
void store_bind_INTEGER(sqlite3_stmt *st, int i, long v);

/* Bind text, NULL for a missing or empty string. */
void store_bind_TEXT(sqlite3_stmt *st, int i, const char *v);

/* Bind a threshold held as log-odds: NULL for NaN, but ±Inf (θ = 0 or 1)
 * is a real threshold and is kept. */
void store_bind_LOGIT(sqlite3_stmt *st, int i, double v);

/* Read a REAL or INTEGER column; NULL gives missing. */
double store_col_REAL(sqlite3_stmt *st, int i, double missing);
long store_col_INTEGER(sqlite3_stmt *st, int i, long missing);

/* A TEXT column into out (truncated to cap), "" for NULL. */
void store_col_text(sqlite3_stmt *st, int i, char *out, size_t cap);

/* Current UTC time as ISO-8601 into out[32]. */
void store_now(char out[32]);

/* ---- liveness.c: is a run's writer still alive ---- */

/* 1 if the process (pid, start time from /proc) is still alive on this host. */
int store_writer_alive(int64_t pid, int64_t start);

/* This host's name, this process's pid and start time. */
void store_writer_self(char *host, size_t cap, int64_t *pid, int64_t *start);

/* ---- sidefile.c: calls nothing else in store/ ---- */

/* Before a database is opened, by readers too: 0 when PATH-wal and
 * PATH-journal are absent, empty, not ones SQLite would replay, or shown to
 * be the file's own (store/SCHEMA.md says which rules); -1 with e naming
 * the side file when it was written for another database ("refusing to
 * VERB: ..."), and saying what replaying it would do. */
int store_sidefiles_check(const char *path, const char *verb, Err *e);

/* ---- schema.c and schema_old.c: on sql.c ---- */

/* Read-only: whether the file may be written, as store_schema_check would
 * judge it (ours at a version this build reads or upgrades, schema intact,
 * or with create an empty file), writing nothing. 0, or -1 with e set. */
int store_schema_accept(sqlite3 *db, const char *path, int create, Err *e);

/* Check (and with create, make) the schema; -1 with e set if unusable. */
int store_schema_check(sqlite3 *db, const char *path, int create, Err *e);

/* Check that database `schema` of db ("main", or an attached name) holds
 * exactly the tables, indexes and views this version of ahascope creates
 * for its user_version, and nothing else (no trigger, no extra object):
 * every one compared by type, name, table and stored SQL. Sets *ver.
 * Returns 0, or -1 with e "<path>: tampered schema: …". Reads in one
 * snapshot (its own transaction unless one is open). */
int store_schema_verify(sqlite3 *db, const char *schema, const char *path, int *ver, Err *e);

/* The statements that made a new file at an older schema version, as
 * that version wrote them (schema_old.c); NULL for the current version
 * (schema.c makes it) or one never released. */
const char *store_schema_old(int version);

/* What an older build left of a file created at version `created` when it
 * upgraded it to version `ver`, frozen (schema_old.c); for ver the current
 * version, store_schema_old(created), which the caller upgrades itself. NULL
 * for a pair no build made. */
const char *store_schema_old_upgraded(int created, int ver);

/* Version `version`'s views as its files store them (only 3's: what a
 * version-1 or 2 file opened read-only is summarised by). NULL otherwise. */
const char *store_schema_old_views(int version);

/* ---- writer.c: on sql.c and liveness.c ---- */

/* Commit the steps still pending and drop the writer's prepared
 * statements: what store_close needs of the writer. Returns 0, or -1 with
 * e set if the commit failed (the statements are dropped either way). */
int store_writer_release(Store *s, Err *e);

/* ---- summaries.c: on sql.c; whether a run's summaries can be believed ---- */

/* Run run's gate bitmaps and tokens counts against each other and against
 * the decision rows of its first and last position with a choice. 0 when
 * they hold, 1 with why set (the table and row) when they cannot be true,
 * -1 with e set on an error. A file before version 4 has none: 0. */
int store_check_gates(Store *s, int64_t run, char *why, size_t cap, Err *e);

/* Run run's head_totals and head_stats rows: inside its shape, counts
 * that can be, sums equal to its tokens rows', those rows equal to the
 * decision rows where store_check_gates looks. Returns as it does. */
int store_check_totals(Store *s, int64_t run, char *why, size_t cap, Err *e);

/* store_check_gates (gates) or store_check_totals of run, and when they
 * fail a line on out: "note: run N's WHY: cannot be true, so INSTEAD"
 * (what the reader does instead). Returns as they do. */
int store_summary_note(Store *s, int64_t run, int gates, FILE *out, const char *instead, Err *e);

/* ---- compare.c: on sql.c, reader.c and print.c ---- */

/* One head's sums over the decisions two runs both have, at positions with
 * far keys in both: pairs, flips each way (global to local, local to
 * global), each run's globals and known gates, the gates that differ and
 * the pairs where both are known, the first position that differs (-1). */
typedef struct {
    int64_t n, down, up, sx, cx, sy, cy, d, cd, fp;
} StoreDiffHead;

/* Where the diff reads the gates: the tokens' bitmaps (version 5; a run
 * without them cannot answer), the decision_bits rows by key (version 4),
 * the `decided` view's rows joined (any version), or the first of these
 * the file and both runs allow. */
typedef enum { STORE_DIFF_AUTO, STORE_DIFF_GATES, STORE_DIFF_KEYS, STORE_DIFF_VIEWS } StoreDiffPath;

/* The sums of run a against run b per head into dh[layer * n_heads +
 * head] (zeroed, fp -1, by the caller), read the way `path` says, over
 * the positions before store_texts_part's (where the texts part, the
 * positions stop corresponding). 0; 1
 * when STORE_DIFF_GATES finds a run without bitmaps (dh left zeroed); -1
 * with e set on an error. */
int store_diff_sums(Store *s, int64_t a, int64_t b, int n_layers, int n_heads, StoreDiffPath path, StoreDiffHead *dh,
                    Err *e);

#endif
