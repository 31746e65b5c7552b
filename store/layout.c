/* layout.c — the rows of schema version 4: a float's bits, a top-k word,
 * keys_read derived, and the per-head totals a writer keeps as it goes
 * (the same code computes them when an older file is upgraded, so the
 * two always agree). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attn.h"
#include "store/internal.h"

int store_keys_read(int pos, int gate, int window, int sinks) {
    if (gate != 0 && gate != 1) return -1;
    if (gate) return pos + 1;
    int ns, lo;
    attn_local_set(pos, window, sinks, &ns, &lo);
    return ns + (pos - lo + 1);
}

void store_bind_bits(sqlite3_stmt *st, int i, float v) {
    if (isnan(v)) { sqlite3_bind_null(st, i); return; }
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    sqlite3_bind_int64(st, i, (int32_t)u);
}

float store_col_bits(sqlite3_stmt *st, int i) {
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return NAN;
    uint32_t u = (uint32_t)sqlite3_column_int64(st, i);
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

void store_sql_f32(sqlite3_context *ctx, int argc, sqlite3_value **v) {
    (void)argc;
    if (sqlite3_value_type(v[0]) == SQLITE_NULL) { sqlite3_result_null(ctx); return; }
    uint32_t u = (uint32_t)sqlite3_value_int64(v[0]);
    float f;
    memcpy(&f, &u, sizeof f);
    if (isnan(f)) sqlite3_result_null(ctx);
    else sqlite3_result_double(ctx, f);
}

void store_bind_top(sqlite3_stmt *st, int i, const StepTrace *t, int c, int r) {
    size_t at = (size_t)c * (t->top_k > 0 ? t->top_k : 0) + r;
    if (r >= t->top_k || t->top_pos[at] < 0 || !isfinite(t->top_w[at])) { sqlite3_bind_null(st, i); return; }
    uint32_t u;
    memcpy(&u, &t->top_w[at], sizeof u);
    sqlite3_bind_int64(st, i, (int64_t)t->top_pos[at] << 32 | u);
}

size_t store_gate_bits(const StepTrace *t, uint8_t *out) {
    size_t n = store_gate_bytes(trace_cells(t));
    memset(out, 0, n);
    for (int c = 0; c < trace_cells(t); c++) {
        int g = t->gate[c]; /* stored as decision_bits stores it: negative is not known (NULL) */
        if (g >= 0) out[c >> 2] |= (uint8_t)((g == 1 ? STORE_GATE_KNOWN | STORE_GATE_GLOBAL : STORE_GATE_KNOWN)
                                             << STORE_GATE_SHIFT(c));
    }
    return n;
}

/* The predictors of head_totals' columns, in their order: the scored ones
 * the views carry, then the oracle; the first STORE_TOT_N_CELLS also have
 * confusion cells. */
#define LAYOUT_ID(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names) DECIDE_##ID,
static const DecidePred COLUMN_PREDS[] = {PRED_TABLE(DECIDE_IN_SQL, LAYOUT_ID) PRED_TABLE(DECIDE_LABEL, LAYOUT_ID)};
#define N_COUNTED (sizeof COLUMN_PREDS / sizeof COLUMN_PREDS[0])
#define N_CELLS DECIDE_N_SQL
/* run_id, layer, head, n; made and global each; four cells each; the means and keys_read */
#define N_COLUMNS (4 + 2 * N_COUNTED + 4 * N_CELLS + 2 * STORE_N_MEANS + 1 + STORE_N_SIDES * STORE_N_REG)

void store_totals_free(StoreTotals *tt) {
    free(tt->head);
    sqlite3_finalize(tt->put);
    memset(tt, 0, sizeof *tt);
}

/* One head_totals row (SELECT * order) into h. */
static void read_total(sqlite3_stmt *st, StoreHeadTotal *h) {
    int c = 3;
    h->n = (long)sqlite3_column_int64(st, c++);
    for (size_t p = 0; p < N_COUNTED; p++) {
        h->made[COLUMN_PREDS[p]] = (long)sqlite3_column_int64(st, c++);
        h->global[COLUMN_PREDS[p]] = (long)sqlite3_column_int64(st, c++);
    }
    for (size_t p = 0; p < N_CELLS; p++) {
        DecideCounts *k = &h->cells[COLUMN_PREDS[p]];
        k->tp = (long)sqlite3_column_int64(st, c++), k->fp = (long)sqlite3_column_int64(st, c++);
        k->fn = (long)sqlite3_column_int64(st, c++), k->tn = (long)sqlite3_column_int64(st, c++);
    }
    for (int m = 0; m < STORE_N_MEANS; m++) {
        h->sum[m] = sqlite3_column_double(st, c++);
        h->count[m] = (long)sqlite3_column_int64(st, c++);
    }
    h->keys_read = (long)sqlite3_column_int64(st, c++);
    for (int k = 0; k < STORE_N_SIDES; k++)
        for (int i = 0; i < STORE_N_REG; i++) h->regime[k][i] = (long)sqlite3_column_int64(st, c++);
}

/* The run's shape and thresholds from its row. */
static int load_run(StoreTotals *tt, sqlite3 *db, int64_t run_id) {
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, "SELECT n_layers, n_heads, window, sinks, tau, theta_logit FROM runs"
                                    " WHERE run_id=?1", -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        tt->n_layers = sqlite3_column_int(st, 0), tt->n_heads = sqlite3_column_int(st, 1);
        tt->window = sqlite3_column_int(st, 2), tt->sinks = sqlite3_column_int(st, 3);
        tt->tau = (float)store_col_REAL(st, 4, NAN);
        tt->theta_logit = sqlite3_column_type(st, 5) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 5);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) rc = SQLITE_NOTFOUND;
    sqlite3_finalize(st);
    if (rc == SQLITE_OK && (tt->n_layers < 1 || tt->n_heads < 1 || (long)tt->n_layers * tt->n_heads > STORE_MAX_CELLS))
        rc = SQLITE_TOOBIG;
    return rc;
}

int store_totals_load(StoreTotals *tt, sqlite3 *db, int64_t run_id) {
    sqlite3_stmt *put = tt->put;
    tt->put = NULL;
    store_totals_free(tt);
    tt->put = put;
    int rc = load_run(tt, db, run_id);
    if (rc != SQLITE_OK) return rc;
    tt->head = calloc((size_t)tt->n_layers * tt->n_heads, sizeof *tt->head);
    if (!tt->head) return SQLITE_NOMEM;
    tt->run_id = run_id;
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(db, "SELECT * FROM head_totals WHERE run_id=?1", -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int l = sqlite3_column_int(st, 1), h = sqlite3_column_int(st, 2);
        if (l >= 0 && l < tt->n_layers && h >= 0 && h < tt->n_heads) read_total(st, &tt->head[l * tt->n_heads + h]);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Predictor p's decision at a cell, or -1: decide_cell's, except that a
 * threshold the run did not record (NULL, as SQL compares it) decides
 * nothing rather than "local". */
static int decision(const StoreTotals *tt, const StepTrace *t, int c, DecidePred p) {
    PredThr thr = decide_threshold(p);
    if ((thr == PRED_THR_TAU && isnan(tt->tau)) || (thr == PRED_THR_THETA && isnan(tt->theta_logit))) return -1;
    return decide_cell(t, c, p, tt->tau, tt->theta_logit);
}

/* One cell into its head's totals (only at positions with a choice). */
static void add_cell(StoreTotals *tt, const StepTrace *t, int c, int keys) {
    StoreHeadTotal *h = &tt->head[c];
    int label = decision(tt, t, c, DECIDE_ORACLE);
    h->n++;
    for (size_t i = 0; i < N_COUNTED; i++) {
        DecidePred p = COLUMN_PREDS[i];
        int d = p == DECIDE_ORACLE ? label : decision(tt, t, c, p);
        if (d >= 0) h->made[p]++, h->global[p] += d;
        if (i < N_CELLS) decide_tally(&h->cells[p], d, label);
    }
    const double v[STORE_N_MEANS] = {t->score[c], 1.0 / (1.0 + exp(-(double)t->oracle_logit[c])), t->oracle_err[c]};
    const float raw[STORE_N_MEANS] = {t->score[c], t->oracle_logit[c], t->oracle_err[c]};
    for (int m = 0; m < STORE_N_MEANS; m++)
        if (!isnan(raw[m])) h->sum[m] += v[m], h->count[m]++;
    if (keys >= 0) h->keys_read += keys;
}

/* One cell into its head's regime split, with the comparisons compare's
 * SQL made on the stored values (doubles of the float32s; NaN is NULL
 * there and counts nowhere here either). */
static void add_regime(StoreTotals *tt, const StepTrace *t, int c) {
    if (t->n_far <= 1 || isnan(t->far_std[c]) || isnan(t->oracle_logit[c])) return;
    long *r = tt->head[c].regime[(double)t->far_std[c] > sqrt(2 * log((double)t->n_far))];
    double theta = tt->theta_logit; /* NaN (not recorded): nothing is above it */
    int oracle = (double)t->oracle_logit[c] > theta;
    int qada = (double)t->qada_logit[c] > theta, bulk = (double)t->qada_bulk_logit[c] > theta;
    r[STORE_REG_N]++;
    r[STORE_REG_ORACLE] += oracle;
    r[STORE_REG_QADA] += qada, r[STORE_REG_QADA_TP] += qada && oracle;
    r[STORE_REG_BULK] += bulk, r[STORE_REG_BULK_TP] += bulk && oracle;
}

void store_totals_add(StoreTotals *tt, const StepTrace *t, StoreStepCounts *sc) {
    memset(sc, 0, sizeof *sc);
    int choice = decide_has_choice(t);
    for (int c = 0; c < trace_cells(t); c++) {
        int keys = store_keys_read(t->pos, t->gate[c], tt->window, tt->sinks);
        int label = isnan(tt->theta_logit) ? -1 : decide_logit(t->oracle_logit[c], tt->theta_logit);
        if (keys >= 0) sc->n_gate++, sc->n_global += t->gate[c] == 1, sc->keys_read += keys;
        if (label >= 0) sc->n_oracle++, sc->n_oracle_global += label;
        if (choice) add_cell(tt, t, c, keys), add_regime(tt, t, c);
    }
}

/* A sum for SQL: NULL only for NaN (+-Inf + -+Inf), as SQL's own sum has it. */
static void bind_sum(sqlite3_stmt *st, int i, double v) {
    if (isnan(v)) sqlite3_bind_null(st, i);
    else sqlite3_bind_double(st, i, v);
}

static int prepare_put(StoreTotals *tt, sqlite3 *db) {
    char sql[64 + 2 * N_COLUMNS] = "REPLACE INTO head_totals VALUES(?";
    size_t o = strlen(sql);
    for (int i = 1; i < (int)N_COLUMNS; i++) sql[o++] = ',', sql[o++] = '?';
    sql[o++] = ')', sql[o] = 0;
    return sqlite3_prepare_v2(db, sql, -1, &tt->put, NULL);
}

int store_totals_write(StoreTotals *tt, sqlite3 *db) {
    if (!tt->head) return SQLITE_OK;
    int rc = tt->put ? SQLITE_OK : prepare_put(tt, db);
    sqlite3_stmt *st = tt->put;
    for (int c = 0; rc == SQLITE_OK && c < tt->n_layers * tt->n_heads; c++) {
        const StoreHeadTotal *h = &tt->head[c];
        int b = 1;
        sqlite3_bind_int64(st, b++, tt->run_id);
        sqlite3_bind_int(st, b++, c / tt->n_heads);
        sqlite3_bind_int(st, b++, c % tt->n_heads);
        sqlite3_bind_int64(st, b++, h->n);
        for (size_t p = 0; p < N_COUNTED; p++) {
            sqlite3_bind_int64(st, b++, h->made[COLUMN_PREDS[p]]);
            sqlite3_bind_int64(st, b++, h->global[COLUMN_PREDS[p]]);
        }
        for (size_t p = 0; p < N_CELLS; p++) {
            const DecideCounts *k = &h->cells[COLUMN_PREDS[p]];
            sqlite3_bind_int64(st, b++, k->tp), sqlite3_bind_int64(st, b++, k->fp);
            sqlite3_bind_int64(st, b++, k->fn), sqlite3_bind_int64(st, b++, k->tn);
        }
        for (int m = 0; m < STORE_N_MEANS; m++) {
            bind_sum(st, b++, h->sum[m]);
            sqlite3_bind_int64(st, b++, h->count[m]);
        }
        sqlite3_bind_int64(st, b++, h->keys_read);
        for (int k = 0; k < STORE_N_SIDES; k++)
            for (int i = 0; i < STORE_N_REG; i++) sqlite3_bind_int64(st, b++, h->regime[k][i]);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    return rc;
}

int store_bits_row_values(void) {
#define LAYOUT_ONE_BITS(name, type, missing) +1
#define LAYOUT_ONE_KEPT(name, type, missing) +1
#define LAYOUT_ONE_DERIVED(name, type, missing)
#define LAYOUT_ONE(name, type, missing, sql, show, title, short_name, doc) \
    STORE_BY_KIND(LAYOUT_ONE_, name, type, missing, sql, show)
    return 1 TRACE_HEAD_FIELDS(LAYOUT_ONE) + STORE_ATTN_TOP_MAX;
}

int store_bind_bits_row(sqlite3_stmt *st, int b, int64_t run_id, const StepTrace *t, int c) {
    sqlite3_bind_int64(st, b++, store_k(run_id, t->pos, c / t->n_heads, c % t->n_heads));
#define LAYOUT_BIND_BITS(name, type, missing) store_bind_bits(st, b++, t->name[c]);
#define LAYOUT_BIND_KEPT(name, type, missing) store_bind_INTEGER(st, b++, t->name[c]);
#define LAYOUT_BIND_DERIVED(name, type, missing)
#define LAYOUT_BIND(name, type, missing, sql, show, title, short_name, doc) \
    STORE_BY_KIND(LAYOUT_BIND_, name, type, missing, sql, show)
    TRACE_HEAD_FIELDS(LAYOUT_BIND)
    for (int r = 0; r < STORE_ATTN_TOP_MAX; r++) store_bind_top(st, b++, t, c, r);
    return b;
}
