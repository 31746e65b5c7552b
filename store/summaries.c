/* summaries.c — whether a run's recorded summaries can be believed, checked before they are read.
 *
 * The summaries (tokens' counts and gate bitmaps, head_totals and
 * head_stats, an evaluation's row) are what the fast readers report
 * instead of recounting the decisions; a file edited by hand or copied
 * wrongly can make them disagree with the rows beside them. Each kind has
 * one rule here, used by every reader that trusts it (compare and the
 * TUI's D, head_rates, merge), so a reader either falls back to the rows
 * or refuses, and never prints a number the rows contradict. The rules
 * are cheap: one pass over the run's tokens rows and its totals rows, and
 * the decision rows of two positions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

/* A run's shape, as the checks bound every cell by it. */
typedef struct {
    int layers, heads;
} Shape;

/* The run's shape by store_run_info, so its limits are the ones every reader applies. */
static int run_shape(Store *s, int64_t run, Shape *sh, Err *e) {
    StoreRunInfo r;
    if (store_run_info(s, run, &r, e)) return -1;
    sh->layers = r.n_layers, sh->heads = r.n_heads;
    store_run_info_free(&r);
    return 0;
}

/* Why one position's bitmap cannot be its tokens row's, or NULL: its
 * length, a pair no writer makes (global but not known), unused pairs
 * set, or populations other than n_gate and n_global. */
static const char *bitmap_fault(const uint8_t *g, int bytes, int cells, long n_gate, long n_global) {
    if (bytes != (int)store_gate_bytes(cells)) return "is not the run's length";
    long known = 0, global = 0;
    for (int c = 0; c < 4 * bytes; c++) {
        unsigned v = store_gate_at(g, c);
        if (c >= cells && v) return "sets pairs past the run's heads";
        if (v == STORE_GATE_GLOBAL) return "holds a pair no writer makes (global, not known)";
        known += v & STORE_GATE_KNOWN, global += v >> 1;
    }
    if (known != n_gate || global != n_global) return "counts other gates than n_gate and n_global";
    return NULL;
}

/* Why a tokens row's counts cannot be, or NULL. */
static const char *counts_fault(sqlite3_stmt *st, int cells) {
    long v[4];
    for (int i = 0; i < 4; i++) {
        if (sqlite3_column_type(st, 2 + i) == SQLITE_NULL) return NULL; /* a file before version 4 */
        if (sqlite3_column_type(st, 2 + i) != SQLITE_INTEGER) return "holds a count that is not an integer";
        v[i] = (long)sqlite3_column_int64(st, 2 + i);
        if (v[i] < 0 || v[i] > cells) return "holds a count outside 0 .. the run's heads";
    }
    if (v[1] > v[0] || v[3] > v[2]) return "counts more global heads than heads";
    return NULL;
}

/* Every tokens row of the run: its counts in range, and (with `bitmaps`)
 * its bitmap matching them. 1 with why set at the first that fails. */
static int check_tokens(Store *s, int64_t run, const Shape *sh, int bitmaps, char *why, size_t cap, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, s->version >= 5 ? "SELECT pos, gates, n_gate, n_global, n_oracle, n_oracle_global FROM tokens"
                                           " WHERE run_id = ?1 ORDER BY pos"
                                         : "SELECT pos, NULL, n_gate, n_global, n_oracle, n_oracle_global FROM tokens"
                                           " WHERE run_id = ?1 ORDER BY pos", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, run);
    int rc, bad = 0, cells = sh->layers * sh->heads;
    while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *f = counts_fault(st, cells), *of = "";
        const uint8_t *g = sqlite3_column_blob(st, 1);
        if (!f && bitmaps && g)
            f = bitmap_fault(g, sqlite3_column_bytes(st, 1), cells, (long)sqlite3_column_int64(st, 2),
                             (long)sqlite3_column_int64(st, 3)), of = "'s gates";
        if (f) bad = 1, snprintf(why, cap, "tokens row %d%s %s", sqlite3_column_int(st, 0), of, f);
    }
    sqlite3_finalize(st);
    if (!bad && rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot check the run's summaries", e);
    return bad;
}

/* The decision rows of one position against its tokens row: the same
 * gate in every cell as its bitmap (when it has one), and as many known
 * and global gates as n_gate and n_global. The rows are the record; a
 * position whose summaries they contradict makes the summaries untrue. */
static int check_position(Store *s, int64_t run, int pos, const Shape *sh, char *why, size_t cap, Err *e) {
    sqlite3_stmt *t, *r;
    if (store_prepare(s, s->version >= 5 ? "SELECT gates, n_gate, n_global FROM tokens WHERE run_id = ?1 AND pos = ?2"
                                         : "SELECT NULL, n_gate, n_global FROM tokens WHERE run_id = ?1 AND pos = ?2", &t, e))
        return -1;
    if (store_prepare(s, "SELECT k, gate FROM decision_bits WHERE k BETWEEN ?1 AND ?2", &r, e)) { sqlite3_finalize(t); return -1; }
    sqlite3_bind_int64(t, 1, run), sqlite3_bind_int(t, 2, pos);
    sqlite3_bind_int64(r, 1, store_k(run, pos, 0, 0)), sqlite3_bind_int64(r, 2, store_k(run, pos + 1, 0, 0) - 1);
    int rc = sqlite3_step(t), bad = 0, cells = sh->layers * sh->heads;
    const uint8_t *g = rc == SQLITE_ROW ? sqlite3_column_blob(t, 0) : NULL;
    if (g && sqlite3_column_bytes(t, 0) != (int)store_gate_bytes(cells)) g = NULL; /* check_tokens names it */
    long n_gate = 0, n_global = 0;
    while (rc == SQLITE_ROW && !bad && sqlite3_step(r) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(r, 0);
        int l = (int)(k >> STORE_K_LAYER & 1023), h = (int)(k & 262143), known = sqlite3_column_type(r, 1) != SQLITE_NULL;
        int64_t gate = sqlite3_column_int64(r, 1);
        if (l >= sh->layers || h >= sh->heads) continue; /* the readers bound it too */
        unsigned want = !known ? 0 : gate == 1 ? STORE_GATE_KNOWN | STORE_GATE_GLOBAL : STORE_GATE_KNOWN;
        n_gate += known, n_global += known && gate == 1;
        if (g && store_gate_at(g, l * sh->heads + h) != want)
            bad = 1, snprintf(why, cap, "tokens row %d's gates say L%d H%d %s, its decision row says %s", pos, l, h,
                              store_gate_at(g, l * sh->heads + h) >> 1 ? "global" : "local", gate == 1 ? "global" : "local");
    }
    if (rc == SQLITE_ROW && !bad && sqlite3_column_type(t, 1) == SQLITE_INTEGER &&
        (n_gate != sqlite3_column_int64(t, 1) || n_global != sqlite3_column_int64(t, 2)))
        bad = 1, snprintf(why, cap, "tokens row %d counts %lld of %lld gates global, its decision rows %ld of %ld", pos,
                          (long long)sqlite3_column_int64(t, 2), (long long)sqlite3_column_int64(t, 1), n_global, n_gate);
    sqlite3_finalize(t), sqlite3_finalize(r);
    return bad;
}

/* The rows of the first and the last position with a choice: flipping
 * or copying rows anywhere wholesale shows there. */
static int check_rows(Store *s, int64_t run, const Shape *sh, char *why, size_t cap, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT MIN(pos), MAX(pos) FROM tokens WHERE run_id = ?1 AND n_far IS NOT 0", &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st), ends[2] = {-1, -1};
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
        ends[0] = sqlite3_column_int(st, 0), ends[1] = sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return store_sql_err(s->db, s->path, "cannot check the run's summaries", e);
    for (int i = 0; i < 2; i++) {
        if (ends[i] < 0 || ends[i] >= 1 << (STORE_K_RUN - STORE_K_POS)) continue;
        int bad = check_position(s, run, ends[i], sh, why, cap, e);
        if (bad) return bad;
    }
    return 0;
}

int store_check_gates(Store *s, int64_t run, char *why, size_t cap, Err *e) {
    Shape sh;
    why[0] = 0;
    if (s->version < 4 || run_shape(s, run, &sh, e)) return s->version < 4 ? 0 : -1;
    int bad = check_tokens(s, run, &sh, 1, why, cap, e);
    return bad ? bad : check_rows(s, run, &sh, why, cap, e);
}

/* A head_totals or head_stats value that cannot be a count. */
#define NOT_COUNT(x) "(" x " IS NOT NULL AND (typeof(" x ") <> 'integer' OR " x " < 0))"

/* The first head_totals row of the run no writer could have written:
 * outside the run's heads, a negative count, more globals (or confusion
 * cells) than decisions, or more decisions than its head_stats row. */
static const char TOTALS_FAULT[] =
    "SELECT t.layer, t.head, t.predictor, CASE"
    " WHEN t.layer < 0 OR t.layer >= ?2 OR t.head < 0 OR t.head >= ?3 THEN 'lies outside the run''s heads'"
    " WHEN t.n IS NULL OR t.global IS NULL OR " NOT_COUNT("t.n") " OR " NOT_COUNT("t.global") " OR " NOT_COUNT("t.tp")
    " OR " NOT_COUNT("t.fp") " OR " NOT_COUNT("t.fn") " OR " NOT_COUNT("t.tn") " OR " NOT_COUNT("t.calm_n") " OR "
    NOT_COUNT("t.calm_global") " OR " NOT_COUNT("t.calm_tp") " OR " NOT_COUNT("t.frozen_n") " OR "
    NOT_COUNT("t.frozen_global") " OR " NOT_COUNT("t.frozen_tp") " THEN 'holds a count that cannot be (negative, or not"
    " an integer)'"
    " WHEN t.global > t.n OR COALESCE(t.tp + t.fp + t.fn + t.tn, 0) > t.n OR t.calm_global > t.calm_n OR"
    " t.frozen_global > t.frozen_n THEN 'counts more than its decisions'"
    " WHEN t.n > COALESCE(s.n, 0) THEN 'counts more decisions than its head_stats row'"
    " END AS why FROM head_totals t LEFT JOIN head_stats s USING(run_id, layer, head) WHERE t.run_id = ?1"
    " AND why IS NOT NULL LIMIT 1";

/* The first head_stats row of the run that cannot be: outside the run's
 * heads, a negative count, or more decisions than positions (a file
 * upgraded from version 2 counts every position's, choice or not). */
static const char STATS_FAULT[] =
    "SELECT layer, head, NULL, CASE"
    " WHEN layer < 0 OR layer >= ?2 OR head < 0 OR head >= ?3 THEN 'lies outside the run''s heads'"
    " WHEN n IS NULL OR " NOT_COUNT("n") " OR " NOT_COUNT("score_n") " OR " NOT_COUNT("oracle_mass_n") " OR "
    NOT_COUNT("oracle_err_n") " OR " NOT_COUNT("keys_read") " THEN 'holds a count that cannot be (negative, or not an"
    " integer)'"
    " WHEN n > (SELECT COUNT(*) FROM tokens WHERE run_id = ?1) OR score_n > n OR oracle_mass_n > n OR oracle_err_n > n THEN 'counts more decisions than positions'"
    " END AS why FROM head_stats WHERE run_id = ?1 AND why IS NOT NULL LIMIT 1";

static int first_fault(Store *s, const char *sql, const char *table, int64_t run, const Shape *sh, char *why,
                       size_t cap, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, sql, &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run), sqlite3_bind_int(st, 2, sh->layers), sqlite3_bind_int(st, 3, sh->heads);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *pred = (const char *)sqlite3_column_text(st, 2);
        char p[48] = "";
        if (pred) snprintf(p, sizeof p, " '%.32s'", pred);
        snprintf(why, cap, "%s row L%lld H%lld%s %s (the run has %d x %d heads)", table,
                 (long long)sqlite3_column_int64(st, 0), (long long)sqlite3_column_int64(st, 1), p,
                 (const char *)sqlite3_column_text(st, 3), sh->layers, sh->heads);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot check the run's totals", e);
    return rc == SQLITE_ROW;
}

/* The executed gate's and the oracle's totals over the run's heads equal
 * what its tokens rows count at the positions with a choice: the writer
 * adds both from the same cells in the same transaction. */
static int check_sums(Store *s, int64_t run, char *why, size_t cap, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT p.name, (SELECT COALESCE(SUM(n), 0) FROM head_totals WHERE run_id = ?1 AND predictor = p.name),"
                         " (SELECT COALESCE(SUM(global), 0) FROM head_totals WHERE run_id = ?1 AND predictor = p.name),"
                         " (SELECT COALESCE(SUM(CASE p.name WHEN 'executed' THEN n_gate ELSE n_oracle END), 0) FROM tokens"
                         "  WHERE run_id = ?1 AND n_far IS NOT 0),"
                         " (SELECT COALESCE(SUM(CASE p.name WHEN 'executed' THEN n_global ELSE n_oracle_global END), 0)"
                         "  FROM tokens WHERE run_id = ?1 AND n_far IS NOT 0)"
                         " FROM (SELECT 'executed' AS name UNION ALL SELECT 'oracle') p", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, run);
    int rc, bad = 0;
    while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t v[4];
        for (int i = 0; i < 4; i++) v[i] = sqlite3_column_int64(st, 1 + i);
        if (v[0] != v[2] || v[1] != v[3])
            bad = 1, snprintf(why, cap, "head_totals '%s' rows sum to %lld of %lld global, its tokens rows count %lld of %lld",
                              (const char *)sqlite3_column_text(st, 0), (long long)v[1], (long long)v[0], (long long)v[3],
                              (long long)v[2]);
    }
    sqlite3_finalize(st);
    if (!bad && rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot check the run's totals", e);
    return bad;
}

int store_check_totals(Store *s, int64_t run, char *why, size_t cap, Err *e) {
    Shape sh;
    why[0] = 0;
    if (s->version < 4) return 0; /* no totals: every reader counts the rows */
    if (run_shape(s, run, &sh, e)) return -1;
    int bad = first_fault(s, TOTALS_FAULT, "head_totals", run, &sh, why, cap, e);
    if (!bad) bad = first_fault(s, STATS_FAULT, "head_stats", run, &sh, why, cap, e);
    if (!bad) bad = check_tokens(s, run, &sh, 0, why, cap, e);
    if (!bad) bad = check_sums(s, run, why, cap, e);
    if (!bad) bad = check_rows(s, run, &sh, why, cap, e);
    return bad;
}

int store_summary_note(Store *s, int64_t run, int gates, FILE *out, const char *instead, Err *e) {
    char why[400];
    int bad = (gates ? store_check_gates : store_check_totals)(s, run, why, sizeof why, e);
    if (bad > 0) fprintf(out, "note: run %lld's %s: cannot be true, so %s\n", (long long)run, why, instead);
    return bad;
}

/* A share or a fraction: NaN (not measured) or within [0, 1]. */
static int is_share(double v) { return isnan(v) || (v >= 0 && v <= 1); }

int store_check_eval(const StoreEval *ev, char *why, size_t cap) {
    why[0] = 0;
    /* KL is a sum of p log(p/q) >= 0; float sums of exact zeros may come out a rounding below */
    if (!isnan(ev->kl_mean) && !(ev->kl_mean >= -1e-6)) snprintf(why, cap, "kl_mean %g is negative (a KL never is)", ev->kl_mean);
    else if (!isnan(ev->perplexity) && !(ev->perplexity >= 1)) snprintf(why, cap, "perplexity %g is below 1", ev->perplexity);
    else if (!isnan(ev->perplexity_full) && !(ev->perplexity_full >= 1))
        snprintf(why, cap, "perplexity_full %g is below 1", ev->perplexity_full);
    else if (!is_share(ev->global_share)) snprintf(why, cap, "global_share %g is not a share", ev->global_share);
    else if (!is_share(ev->keys_read_frac)) snprintf(why, cap, "keys_read_frac %g is not a share", ev->keys_read_frac);
    else if (!is_share(ev->kv_read_frac)) snprintf(why, cap, "kv_read_frac %g is not a share", ev->kv_read_frac);
    else if (ev->n_seqs < 0 || ev->n_tokens < 0) snprintf(why, cap, "counts %d sequences and %ld tokens", ev->n_seqs, ev->n_tokens);
    return why[0] != 0;
}
