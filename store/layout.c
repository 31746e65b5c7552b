/* layout.c — the rows: float bits, top-k words, a position's gate bitmap, the per-head totals a writer keeps.
 *
 * A float's bits, a top-k word, keys_read derived, a step's rows in one
 * pass, and the per-head totals a writer keeps as it goes (the same code
 * computes them when an older file is upgraded, so the two always agree). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attn.h"
#include "engine/headtab.h"
#include "store/internal.h"

int store_head_window(const float *span, int cell, int pos, int window) {
    if (!span) return window;
    const float *ab = span + 2 * (size_t)cell;
    return isfinite(ab[0]) && isfinite(ab[1]) ? headtab_window_at(ab, pos) : window;
}

int store_decision_window(const StepTrace *t, const float *span, int cell, int window) {
    return t->local_window[cell] > 0 ? t->local_window[cell] : store_head_window(span, cell, t->pos, window);
}

int store_read_spans(sqlite3 *db, int64_t run_id, int n_layers, int n_heads, float **span) {
    sqlite3_stmt *st;
    *span = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT layer, head, alpha, beta FROM run_heads WHERE run_id=?1", -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    size_t cells = (size_t)n_layers * n_heads;
    int filled = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int l = sqlite3_column_int(st, 0), h = sqlite3_column_int(st, 1);
        if (l < 0 || l >= n_layers || h < 0 || h >= n_heads) continue; /* a file may lie: off the shape */
        if (!*span && !(*span = malloc(cells * 2 * sizeof **span))) { rc = SQLITE_NOMEM; break; }
        if (!filled++)
            for (size_t i = 0; i < 2 * cells; i++) (*span)[i] = NAN; /* a head without a row: the run's window */
        size_t c = (size_t)l * n_heads + h;
        (*span)[2 * c] = (float)sqlite3_column_double(st, 2), (*span)[2 * c + 1] = (float)sqlite3_column_double(st, 3);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int store_keys_read(int pos, int gate, int window, int sinks, int layer_window) {
    if (gate != 0 && gate != 1) return layer_window > 0 ? (layer_window < pos + 1 ? layer_window : pos + 1) : -1;
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

/* Whether head_totals' regime columns count predictor p: the oracle (its
 * globals on each side) and the two QAdA forms compare prints by regime. */
static int regime_counted(int p) { return p == DECIDE_ORACLE || p == DECIDE_QADA || p == DECIDE_QADA_BULK; }

void store_totals_free(StoreTotals *tt) {
    free(tt->head), free(tt->written), free(tt->stored), free(tt->span);
    for (int i = 0; i < 2; i++) sqlite3_finalize(tt->put[i]);
    memset(tt, 0, sizeof *tt);
}

/* The rows of one run in table `table`, each through row(); SQLite's code. */
static int load_rows(StoreTotals *tt, sqlite3 *db, const char *sql, void (*row)(StoreTotals *, sqlite3_stmt *, int)) {
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, tt->run_id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int l = sqlite3_column_int(st, 0), h = sqlite3_column_int(st, 1);
        if (l >= 0 && l < tt->n_layers && h >= 0 && h < tt->n_heads) row(tt, st, l * tt->n_heads + h);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* A head_totals row: one predictor's counts (one this build does not
 * know is left as it is). */
static void total_row(StoreTotals *tt, sqlite3_stmt *st, int c) {
    DecidePred p;
    if (decide_parse((const char *)sqlite3_column_text(st, 2), &p)) return;
    StoreHeadTotal *h = &tt->head[c];
    h->made[p] = (long)sqlite3_column_int64(st, 3), h->global[p] = (long)sqlite3_column_int64(st, 4);
    DecideCounts *k = &h->cells[p];
    k->tp = (long)sqlite3_column_int64(st, 5), k->fp = (long)sqlite3_column_int64(st, 6);
    k->fn = (long)sqlite3_column_int64(st, 7), k->tn = (long)sqlite3_column_int64(st, 8);
    for (int side = 0; side < STORE_N_SIDES; side++)
        for (int i = 0; i < STORE_N_SIDE; i++) h->side[p][side][i] = (long)sqlite3_column_int64(st, 9 + 3 * side + i);
}

static void stats_row(StoreTotals *tt, sqlite3_stmt *st, int c) {
    StoreHeadTotal *h = &tt->head[c];
    tt->stored[c] = 1; /* its rows are in the file (written below once loaded) */
    h->n = (long)sqlite3_column_int64(st, 2);
    for (int m = 0; m < STORE_N_MEANS; m++) {
        h->sum[m] = sqlite3_column_double(st, 3 + 2 * m);
        h->count[m] = (long)sqlite3_column_int64(st, 4 + 2 * m);
    }
    h->keys_read = (long)sqlite3_column_int64(st, 3 + 2 * STORE_N_MEANS);
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
    sqlite3_stmt *put[2] = {tt->put[0], tt->put[1]};
    memset(tt->put, 0, sizeof tt->put);
    store_totals_free(tt);
    memcpy(tt->put, put, sizeof put);
    int rc = load_run(tt, db, run_id);
    if (rc != SQLITE_OK) return rc;
    size_t cells = (size_t)tt->n_layers * tt->n_heads;
    tt->head = calloc(cells, sizeof *tt->head), tt->written = calloc(cells, sizeof *tt->written);
    tt->stored = calloc(cells, 1);
    if (!tt->head || !tt->written || !tt->stored) return SQLITE_NOMEM;
    tt->run_id = run_id;
    rc = store_read_spans(db, run_id, tt->n_layers, tt->n_heads, &tt->span);
    if (rc == SQLITE_OK)
        rc = load_rows(tt, db, "SELECT layer, head, predictor, n, global, tp, fp, fn, tn, calm_n, calm_global, calm_tp,"
                           " frozen_n, frozen_global, frozen_tp FROM head_totals WHERE run_id=?1", total_row);
    if (rc == SQLITE_OK)
        rc = load_rows(tt, db, "SELECT layer, head, n, score_sum, score_n, oracle_mass_sum, oracle_mass_n,"
                               " oracle_err_sum, oracle_err_n, keys_read FROM head_stats WHERE run_id=?1", stats_row);
    if (rc == SQLITE_OK) memcpy(tt->written, tt->head, cells * sizeof *tt->head);
    return rc;
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
    for (int p = 0; p < DECIDE_COUNT; p++) {
        int d = p == DECIDE_ORACLE ? label : decision(tt, t, c, (DecidePred)p);
        if (d >= 0) h->made[p]++, h->global[p] += d;
        if (p != DECIDE_ORACLE) decide_tally(&h->cells[p], d, label);
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
    int side = (double)t->far_std[c] > sqrt(2 * log((double)t->n_far));
    double theta = tt->theta_logit; /* NaN (not recorded): nothing is above it */
    int oracle = (double)t->oracle_logit[c] > theta;
    for (int p = 0; p < DECIDE_COUNT; p++) {
        if (!regime_counted(p)) continue;
        int g = p == DECIDE_ORACLE ? oracle : (double)decide_value(t, c, (DecidePred)p) > theta;
        long *r = tt->head[c].side[p][side];
        r[STORE_SIDE_N]++, r[STORE_SIDE_GLOBAL] += g, r[STORE_SIDE_TP] += g && oracle;
    }
}

/* Cell c into the tokens row's counts and, at a position with a choice,
 * its head's totals. A fixed-local head (its layer windowed by the
 * architecture) adds the keys its window read and nothing else: it made no
 * choice, so it counts in no share, rate or confusion. */
static void count_cell(StoreTotals *tt, const StepTrace *t, int c, int choice, StoreStepCounts *sc) {
    int keys = store_keys_read(t->pos, t->gate[c], store_decision_window(t, tt->span, c, tt->window), tt->sinks,
                               t->layer_window[c / t->n_heads]);
    if (trace_is_arch_local(t, c)) {
        if (keys >= 0) sc->keys_read += keys;
        return;
    }
    int label = isnan(tt->theta_logit) ? -1 : decide_logit(t->oracle_logit[c], tt->theta_logit);
    if (keys >= 0) sc->n_gate++, sc->n_global += t->gate[c] == 1, sc->keys_read += keys;
    if (label >= 0) sc->n_oracle++, sc->n_oracle_global += label;
    if (choice) add_cell(tt, t, c, keys), add_regime(tt, t, c);
}

void store_totals_add(StoreTotals *tt, const StepTrace *t, StoreStepCounts *sc) {
    memset(sc, 0, sizeof *sc);
    int choice = decide_has_choice(t);
    for (int c = 0; c < trace_cells(t); c++) count_cell(tt, t, c, choice, sc);
}

int store_step_rows(StoreTotals *tt, sqlite3_stmt *ins, int64_t run_id, const StepTrace *t, uint8_t *gates,
                    StoreStepCounts *sc) {
    memset(sc, 0, sizeof *sc);
    memset(gates, 0, store_gate_bytes(trace_cells(t)));
    int choice = decide_has_choice(t);
    for (int l = 0, c = 0; l < t->n_layers; l++) {
        for (int h = 0, b = 1; h < t->n_heads; h++, c++) {
            b = store_bind_bits_row(ins, b, run_id, t, c);
            count_cell(tt, t, c, choice, sc);
            if (t->gate[c] >= 0) /* negative: not known, NULL in its row */
                gates[c >> 2] |= (uint8_t)((t->gate[c] == 1 ? STORE_GATE_KNOWN | STORE_GATE_GLOBAL : STORE_GATE_KNOWN)
                                           << STORE_GATE_SHIFT(c));
        }
        int rc = sqlite3_step(ins);
        sqlite3_reset(ins);
        if (rc != SQLITE_DONE) return rc;
    }
    return SQLITE_OK;
}

/* A sum for SQL: NULL only for NaN (+-Inf + -+Inf), as SQL's own sum has it. */
static void bind_sum(sqlite3_stmt *st, int i, double v) {
    if (isnan(v)) sqlite3_bind_null(st, i);
    else sqlite3_bind_double(st, i, v);
}

/* The two REPLACEs of a head's totals, prepared once per writer. */
static int prepare_put(StoreTotals *tt, sqlite3 *db) {
    int rc = sqlite3_prepare_v2(db, "REPLACE INTO head_totals(run_id, layer, head, predictor, n, global, tp, fp, fn,"
                                    " tn, calm_n, calm_global, calm_tp, frozen_n, frozen_global, frozen_tp)"
                                    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                                -1, &tt->put[0], NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "REPLACE INTO head_stats(run_id, layer, head, n, score_sum, score_n,"
                                    " oracle_mass_sum, oracle_mass_n, oracle_err_sum, oracle_err_n, keys_read)"
                                    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)", -1, &tt->put[1], NULL);
    return rc;
}

static int step_reset(sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Bind run, layer and head of cell c to parameters 1-3. */
static void bind_head(const StoreTotals *tt, sqlite3_stmt *st, int c) {
    sqlite3_bind_int64(st, 1, tt->run_id);
    sqlite3_bind_int(st, 2, c / tt->n_heads);
    sqlite3_bind_int(st, 3, c % tt->n_heads);
}

/* Whether predictor p's counts at head h are those w holds. */
static int same_counts(const StoreHeadTotal *h, const StoreHeadTotal *w, int p) {
    return h->made[p] == w->made[p] && h->global[p] == w->global[p] && !memcmp(&h->cells[p], &w->cells[p], sizeof h->cells[p]) &&
           !memcmp(h->side[p], w->side[p], sizeof h->side[p]);
}

/* Predictor p's head_totals row of cell c: its counts, its confusion
 * (NULL on the oracle's row: it is the label), its regime split (NULL for
 * the predictors it does not count). */
static int write_total(StoreTotals *tt, int c, int p) {
    const StoreHeadTotal *h = &tt->head[c];
    sqlite3_stmt *st = tt->put[0];
    bind_head(tt, st, c);
    sqlite3_bind_text(st, 4, decide_name((DecidePred)p), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, h->made[p]), sqlite3_bind_int64(st, 6, h->global[p]);
    const long cell[4] = {h->cells[p].tp, h->cells[p].fp, h->cells[p].fn, h->cells[p].tn};
    for (int i = 0; i < 4; i++)
        if (p == DECIDE_ORACLE) sqlite3_bind_null(st, 7 + i);
        else sqlite3_bind_int64(st, 7 + i, cell[i]);
    for (int side = 0, b = 11; side < STORE_N_SIDES; side++)
        for (int i = 0; i < STORE_N_SIDE; i++, b++)
            if (regime_counted(p) && !(p == DECIDE_ORACLE && i == STORE_SIDE_TP))
                sqlite3_bind_int64(st, b, h->side[p][side][i]);
            else sqlite3_bind_null(st, b);
    return step_reset(st);
}

/* Cell c's head_stats row. */
static int write_stats(StoreTotals *tt, int c) {
    const StoreHeadTotal *h = &tt->head[c];
    sqlite3_stmt *st = tt->put[1];
    bind_head(tt, st, c);
    sqlite3_bind_int64(st, 4, h->n);
    for (int m = 0; m < STORE_N_MEANS; m++) bind_sum(st, 5 + 2 * m, h->sum[m]), sqlite3_bind_int64(st, 6 + 2 * m, h->count[m]);
    sqlite3_bind_int64(st, 11, h->keys_read);
    return step_reset(st);
}

/* Cell c's rows that changed since they were written (all of them the
 * first time): a profiled run moves every predictor's, a plain one the
 * executed gate's and the router's only. */
static int write_head(StoreTotals *tt, int c) {
    const StoreHeadTotal *h = &tt->head[c], *w = &tt->written[c];
    int rc = SQLITE_OK, fresh = !tt->stored[c];
    for (int p = 0; rc == SQLITE_OK && p < DECIDE_COUNT; p++)
        if (fresh || !same_counts(h, w, p)) rc = write_total(tt, c, p);
    if (rc == SQLITE_OK && (fresh || h->n != w->n || memcmp(h->sum, w->sum, sizeof h->sum) ||
                            memcmp(h->count, w->count, sizeof h->count) || h->keys_read != w->keys_read))
        rc = write_stats(tt, c);
    return rc;
}

int store_totals_write(StoreTotals *tt, sqlite3 *db) {
    if (!tt->head) return SQLITE_OK;
    int rc = tt->put[0] ? SQLITE_OK : prepare_put(tt, db);
    for (int c = 0; rc == SQLITE_OK && c < tt->n_layers * tt->n_heads; c++) {
        if (tt->stored[c] && !memcmp(&tt->head[c], &tt->written[c], sizeof tt->head[c])) continue;
        rc = write_head(tt, c);
        if (rc == SQLITE_OK) tt->written[c] = tt->head[c], tt->stored[c] = 1;
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
