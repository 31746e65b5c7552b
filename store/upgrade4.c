/* upgrade4.c — a version-3 file's rows into the compact layout (its own columns frozen), totalled by layout.c.
 *
 * A version-3 file's rows into the compact layout: each
 * decision's REALs (float32 values, so the conversion to bits is exact)
 * and its attn_top ranks into one decision_bits row, and the totals the
 * summary views read computed by the writer's own code (layout.c), so an
 * upgraded file and a recorded one cannot disagree. It reads version 3's
 * columns and writes version 4's, both frozen here: a field added later is
 * not in either (its column, appended afterwards, stays NULL). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model.h"
#include "store/internal.h"

/* The statements of one run's conversion. */
typedef struct {
    sqlite3_stmt *dec, *top, *nfar, *ins, *upd;
    int top_rc;  /* the attn_top cursor's last step */
    int top_k;   /* ranks seen: the run's top_k */
} Upgrade;

/* Version 3's per-head columns and version 4's decision_bits columns
 * (keys_read derived), in the order fill_cell and put_cell take them. */
#define V3_COLUMNS ", gate, score, oracle_logit, oracle_err, qada_logit, qada_bulk_logit, keys_read, qada_rem_logit," \
                   " qada_rem_bulk_logit, far_mean, far_std"
#define V4_COLUMNS "k, gate, score, oracle_logit, oracle_err, qada_logit, qada_bulk_logit, qada_rem_logit," \
                   " qada_rem_bulk_logit, far_mean, far_std" STORE_TOP_COLUMNS

static int prepare_all(sqlite3 *db, Upgrade *u) {
    char ins[512];
    int o = snprintf(ins, sizeof ins, "INSERT INTO decision_bits(" V4_COLUMNS ") VALUES(?");
    for (int i = 1; i < 11 + STORE_ATTN_TOP_MAX; i++) o += snprintf(ins + o, sizeof ins - (size_t)o, ",?");
    snprintf(ins + o, sizeof ins - (size_t)o, ")");
    int rc = sqlite3_prepare_v2(db, "SELECT pos, layer, head" V3_COLUMNS " FROM decisions WHERE run_id=?1"
                                    " ORDER BY pos, layer, head", -1, &u->dec, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT pos, layer, head, rank, key_pos, weight FROM attn_top WHERE run_id=?1"
                                    " ORDER BY pos, layer, head, rank", -1, &u->top, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT n_far FROM tokens WHERE run_id=?1 AND pos=?2", -1, &u->nfar, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, ins, -1, &u->ins, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "UPDATE tokens SET n_gate=?3, n_global=?4, n_oracle=?5, n_oracle_global=?6,"
                                    " keys_read_sum=?7 WHERE run_id=?1 AND pos=?2", -1, &u->upd, NULL);
    return rc;
}

static void finalize_all(Upgrade *u) {
    sqlite3_finalize(u->dec), sqlite3_finalize(u->top), sqlite3_finalize(u->nfar);
    sqlite3_finalize(u->ins), sqlite3_finalize(u->upd);
}

/* The far positions recorded at position pos into t (the cursor is
 * ordered by position; ranks past STORE_ATTN_TOP_MAX are not kept). */
static void fill_top(Upgrade *u, StepTrace *t, int pos) {
    while (u->top_rc == SQLITE_ROW && sqlite3_column_int(u->top, 0) <= pos) {
        int p = sqlite3_column_int(u->top, 0), l = sqlite3_column_int(u->top, 1), h = sqlite3_column_int(u->top, 2);
        int r = sqlite3_column_int(u->top, 3);
        if (p == pos && l >= 0 && l < t->n_layers && h >= 0 && h < t->n_heads && r >= 0 && r < t->top_k) {
            size_t i = ((size_t)l * t->n_heads + h) * t->top_k + r;
            t->top_pos[i] = sqlite3_column_int(u->top, 4);
            t->top_w[i] = (float)store_col_REAL(u->top, 5, NAN);
            if (r + 1 > u->top_k) u->top_k = r + 1;
        }
        u->top_rc = sqlite3_step(u->top);
    }
}

/* Cell c of t as version 4's row (V4_COLUMNS). */
static void put_cell(sqlite3_stmt *st, int64_t run_id, const StepTrace *t, int c) {
    int b = 1;
    sqlite3_bind_int64(st, b++, store_k(run_id, t->pos, c / t->n_heads, c % t->n_heads));
    store_bind_INTEGER(st, b++, t->gate[c]);
    const float *v[] = {t->score,          t->oracle_logit,        t->oracle_err, t->qada_logit, t->qada_bulk_logit,
                        t->qada_rem_logit, t->qada_rem_bulk_logit, t->far_mean,   t->far_std};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) store_bind_bits(st, b++, v[i][c]);
    for (int r = 0; r < STORE_ATTN_TOP_MAX; r++) store_bind_top(st, b++, t, c, r);
}

/* One position: its rows written, its totals added, its tokens row given
 * its counts. present[c]: the cell had a row (only those get one). */
static int put_position(Upgrade *u, StoreTotals *tt, StepTrace *t, const unsigned char *present) {
    sqlite3_bind_int64(u->nfar, 1, tt->run_id);
    sqlite3_bind_int(u->nfar, 2, t->pos);
    int rc = sqlite3_step(u->nfar);
    t->n_far = rc == SQLITE_ROW ? (int)store_col_INTEGER(u->nfar, 0, -1) : -1;
    sqlite3_reset(u->nfar);
    fill_top(u, t, t->pos);
    if (u->top_rc != SQLITE_ROW && u->top_rc != SQLITE_DONE) return u->top_rc;
    for (int c = 0; c < trace_cells(t); c++) {
        if (!present[c]) continue;
        put_cell(u->ins, tt->run_id, t, c);
        rc = sqlite3_step(u->ins);
        sqlite3_reset(u->ins);
        if (rc != SQLITE_DONE) return rc;
    }
    StoreStepCounts sc;
    store_totals_add(tt, t, &sc);
    const long v[] = {sc.n_gate, sc.n_global, sc.n_oracle, sc.n_oracle_global};
    sqlite3_bind_int64(u->upd, 1, tt->run_id);
    sqlite3_bind_int(u->upd, 2, t->pos);
    for (int i = 0; i < 4; i++) sqlite3_bind_int64(u->upd, 3 + i, v[i]);
    if (sc.n_gate) sqlite3_bind_int64(u->upd, 7, sc.keys_read);
    else sqlite3_bind_null(u->upd, 7);
    rc = sqlite3_step(u->upd);
    sqlite3_reset(u->upd);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The next cell of the decisions cursor into t (its position already
 * set); 1 when the row belongs to t's position, 0 when it starts the next
 * one. */
static void fill_cell(sqlite3_stmt *st, StepTrace *t, unsigned char *present) {
    int l = sqlite3_column_int(st, 1), h = sqlite3_column_int(st, 2), c = l * t->n_heads + h, k = 3;
    present[c] = 1;
    t->gate[c] = (int8_t)store_col_INTEGER(st, k++, -1);
    float *v[] = {t->score,           t->oracle_logit, t->oracle_err, t->qada_logit, t->qada_bulk_logit, NULL,
                  t->qada_rem_logit,  t->qada_rem_bulk_logit, t->far_mean, t->far_std};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++, k++)
        if (v[i]) v[i][c] = (float)store_col_REAL(st, k, NAN);
        else t->keys_read[c] = (int32_t)store_col_INTEGER(st, k, -1);
}

/* Whether a row's key parts fit the packed key and the run's shape. */
static int fits(int64_t run, int pos, int l, int h, const StoreTotals *tt) {
    return run >= 1 && run <= STORE_MAX_RUNS && pos >= 0 && pos < MODEL_MAX_SEQ && l >= 0 && l < tt->n_layers &&
           h >= 0 && h < tt->n_heads;
}

static int upgrade_run(sqlite3 *db, Upgrade *u, StoreTotals *tt, int64_t run) {
    int rc = store_totals_load(tt, db, run);
    if (rc != SQLITE_OK) return rc;
    StepTrace *t = trace_new_top(tt->n_layers, tt->n_heads, STORE_ATTN_TOP_MAX);
    unsigned char *present = calloc(t ? (size_t)trace_cells(t) : 1, 1);
    if (!t || !present) rc = SQLITE_NOMEM;
    sqlite3_bind_int64(u->dec, 1, run);
    sqlite3_bind_int64(u->top, 1, run);
    u->top_k = 0;
    u->top_rc = rc == SQLITE_OK ? sqlite3_step(u->top) : rc;
    int pos = -1;
    while (rc == SQLITE_OK && (rc = sqlite3_step(u->dec)) == SQLITE_ROW) {
        int p = sqlite3_column_int(u->dec, 0), l = sqlite3_column_int(u->dec, 1), h = sqlite3_column_int(u->dec, 2);
        if (!fits(run, p, l, h, tt)) { rc = SQLITE_TOOBIG; break; }
        if (p != pos && pos >= 0 && (rc = put_position(u, tt, t, present)) != SQLITE_OK) break;
        if (p != pos) trace_clear(t), memset(present, 0, (size_t)trace_cells(t)), t->pos = pos = p;
        fill_cell(u->dec, t, present);
        rc = SQLITE_OK;
    }
    if (rc == SQLITE_DONE) rc = pos >= 0 ? put_position(u, tt, t, present) : SQLITE_OK;
    if (rc == SQLITE_OK) rc = store_totals_write(tt, db);
    if (rc == SQLITE_OK && u->top_k) {
        char sql[96];
        snprintf(sql, sizeof sql, "UPDATE runs SET top_k=%d WHERE run_id=%lld", u->top_k, (long long)run);
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    sqlite3_reset(u->dec), sqlite3_reset(u->top);
    trace_free(t);
    free(present);
    return rc;
}

int store_upgrade_rows(sqlite3 *db) {
    Upgrade u = {0};
    StoreTotals tt = {0};
    sqlite3_stmt *runs = NULL;
    int rc = prepare_all(db, &u);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "SELECT run_id FROM runs ORDER BY run_id", -1, &runs, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(runs)) == SQLITE_ROW) {
        int64_t run = sqlite3_column_int64(runs, 0);
        rc = run >= 1 && run <= STORE_MAX_RUNS ? upgrade_run(db, &u, &tt, run) : SQLITE_TOOBIG;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(runs);
    finalize_all(&u);
    store_totals_free(&tt);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "DROP TABLE decisions; DROP TABLE attn_top;", NULL, NULL, NULL);
    return rc;
}
