/* compare.c — a predictor against the oracle per head; where two runs diverge.
 *
 * How well a predictor matches the oracle in a run, and where
 * two runs part ways (tokens, then gates). */
#include <stdlib.h>
#include <string.h>

#include "engine/textout.h"
#include "store/internal.h"
#include "store/print.h"


/* Confusion counts of one predictor for one run, grouped by `group`
 * ("" for overall, "layer", or "layer, head"). The rates mirror
 * decide_rates (engine/decide.h); the ORDER BY is its predictor order. */
/* The cells of a confusion table: summed from the totals (version 4), or
 * counted over the predictions' rows. */
#define TOTAL_CELLS "SUM(tp + fp + fn + tn) AS n, SUM(tp) AS tp, SUM(fp) AS fp, SUM(fn) AS fn, SUM(tn) AS tn"
#define ROW_CELLS                                                                                              \
    "COUNT(*) AS n, SUM(predicted AND oracle) AS tp, SUM(predicted AND NOT oracle) AS fp,"                      \
    " SUM(NOT predicted AND oracle) AS fn, SUM(NOT predicted AND NOT oracle) AS tn"

static int print_confusion(Store *s, int64_t run, const char *pred, const char *group, int rows, FILE *out, Err *e) {
    char sql[2400], names[512], order[600];
    const char *sel = *group ? group : "predictor";
    int totals = !rows;
    decide_list(names, sizeof names, DECIDE_N_SQL, ","); /* the predictors' order: engine/decide.h's */
    snprintf(order, sizeof order, "INSTR(',%s,', ',' || predictor || ',')", names);
    snprintf(sql, sizeof sql,
             "SELECT %s, n, tp, fp, fn, tn, ROUND(tp * 1.0 / NULLIF(tp + fp, 0), 4) AS precision,"
             " ROUND(tp * 1.0 / NULLIF(tp + fn, 0), 4) AS recall,"
             " ROUND(2.0 * tp / NULLIF(2 * tp + fp + fn, 0), 4) AS f1,"
             " ROUND((tp + fp) * 1.0 / n, 4) AS predicted_rate, ROUND((tp + fn) * 1.0 / n, 4) AS oracle_rate FROM ("
             " SELECT %s, %s FROM %s WHERE run_id=?1 AND (?2 IS NULL OR predictor=?2)%s GROUP BY %s) ORDER BY %s",
             sel, sel, totals ? TOTAL_CELLS : ROW_CELLS, totals ? "confusion_head" : "predictions",
             totals ? "" : " AND predicted IS NOT NULL AND oracle IS NOT NULL", sel,
             *group ? group : order);
    sqlite3_stmt *st;
    if (store_prepare(s, sql, &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run);
    if (pred) sqlite3_bind_text(st, 2, pred, -1, SQLITE_STATIC);
    int rc = print_result(st, STORE_FMT_TABLE, out);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "compare failed", e);
    return 0;
}

static int count_where(Store *s, const char *sql, int64_t run, int64_t *out, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, sql, &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return store_sql_err(s->db, s->path, "compare failed", e);
    return 0;
}

static int print_reads(Store *s, int64_t a, int64_t b, int upto, int rows, FILE *out, Err *e);
static int print_sql(Store *s, const char *sql, int64_t a, int64_t b, FILE *out, Err *e);

/* Precision and recall of estimate col (a log-odds column of decided)
 * among the decisions whose regime test `in` holds, as four SQL columns. */
static int regime_rates(char *buf, size_t cap, const char *col, const char *tag, const char *in) {
    return snprintf(buf, cap,
                    ", ROUND(SUM(%2$s AND %1$s > theta_logit AND oracle_logit > theta_logit) * 1.0"
                    " / NULLIF(SUM(%2$s AND %1$s > theta_logit), 0), 4) AS %3$s_p"
                    ", ROUND(SUM(%2$s AND %1$s > theta_logit AND oracle_logit > theta_logit) * 1.0"
                    " / NULLIF(SUM(%2$s AND oracle_logit > theta_logit), 0), 4) AS %3$s_r",
                    col, in, tag);
}

/* The regime split from the counts head_totals keeps (layout.c counts
 * them as regime_rates' SQL would over the rows): one row a head, the
 * oracle's row giving each side's decisions and globals. */
static int regime_totals(char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "SELECT layer, head, SUM(CASE predictor WHEN 'oracle' THEN calm_n + frozen_n"
                                            " END) AS n, ROUND(SUM(CASE predictor WHEN 'oracle' THEN frozen_n END) * 1.0"
                                            " / SUM(CASE predictor WHEN 'oracle' THEN calm_n + frozen_n END), 4)"
                                            " AS frozen_share");
    static const char *const preds[2] = {"qada", "qada_bulk"}, *const tags[2] = {"qada", "bulk"};
    static const char *const sides[2] = {"calm", "frozen"};
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 2; k++)
            len += (size_t)snprintf(buf + len, cap - len,
                                    ", ROUND(SUM(CASE predictor WHEN '%1$s' THEN %2$s_tp END) * 1.0"
                                    " / NULLIF(SUM(CASE predictor WHEN '%1$s' THEN %2$s_global END), 0), 4) AS %3$s_%2$s_p"
                                    ", ROUND(SUM(CASE predictor WHEN '%1$s' THEN %2$s_tp END) * 1.0"
                                    " / NULLIF(SUM(CASE predictor WHEN 'oracle' THEN %2$s_global END), 0), 4)"
                                    " AS %3$s_%2$s_r",
                                    preds[c], sides[k], tags[c]);
    return snprintf(buf + len, cap - len, " FROM head_totals WHERE run_id = ?1 GROUP BY layer, head"
                                          " HAVING SUM(CASE predictor WHEN 'oracle' THEN calm_n + frozen_n END) > 0"
                                          " ORDER BY layer, head");
}

/* Per head: the share of decisions in the frozen regime (far scores' σ >
 * √(2 ln n_far), where the log-normal sum overshoots) and the precision
 * and recall of qada and qada_bulk on each side of that boundary. */
static int print_regimes(Store *s, int64_t run, int rows, FILE *out, Err *e) {
    static const char *const cols[2] = {"qada_logit", "qada_bulk_logit"}, *const tags[2] = {"qada", "bulk"};
    static const char *const sides[2] = {"NOT frozen", "frozen"}, *const side_tags[2] = {"calm", "frozen"};
    char sql[16384], part[600], tag[32];
    if (!rows) regime_totals(sql, sizeof sql);
    else {
        /* Each decision's fields and regime worked out once (materialized: the aggregates read each several
         * times). */
        size_t len = (size_t)snprintf(sql, sizeof sql,
                                      "WITH d AS MATERIALIZED (SELECT d.layer, d.head, d.oracle_logit, d.qada_logit,"
                                      " d.qada_bulk_logit, d.theta_logit, d.far_std > SQRT(2 * LN(t.n_far)) AS frozen"
                                      " FROM decided d JOIN tokens t USING(run_id, pos) WHERE d.run_id = ?1 AND"
                                      " d.far_std IS NOT NULL AND t.n_far > 1 AND d.oracle_logit IS NOT NULL)"
                                      " SELECT layer, head, COUNT(*) AS n, ROUND(AVG(frozen), 4) AS frozen_share");
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < 2; k++) {
                snprintf(tag, sizeof tag, "%s_%s", tags[c], side_tags[k]);
                regime_rates(part, sizeof part, cols[c], tag, sides[k]);
                len += (size_t)snprintf(sql + len, sizeof sql - len, "%s", part);
            }
        snprintf(sql + len, sizeof sql - len, " FROM d GROUP BY layer, head ORDER BY layer, head");
    }
    fprintf(out, "\nper head, by regime of the far scores (frozen: sigma > sqrt(2 ln n_far), where the Gaussian"
                 " sum overshoots;\ncalm: at or below), precision _p and recall _r against the oracle:\n");
    return print_sql(s, sql, run, run, out, e);
}

/* Whether run's totals can be believed; if not, a line saying why and
 * that the tables are counted from the decision rows. 1: count the rows
 * (so too for a file before version 4, which has no totals). */
static int rows_instead(Store *s, int64_t run, FILE *out, Err *e) {
    int bad = store_summary_note(s, run, 0, out, "every table below is counted from its decision rows", e);
    return bad < 0 ? -1 : bad || s->version < 4;
}

static int compare_one(Store *s, int64_t run, const char *pred, FILE *out, Err *e) {
    StoreRunInfo r;
    if (store_run_info(s, run, &r, e)) return -1; /* an impossible shape is refused before any note */
    int rows = rows_instead(s, run, out, e);
    if (rows < 0) goto fail;
    int64_t n_oracle = 0, n_pred = 0;
    /* version 4: from the totals (oracle values exist only where there are far keys) */
    if (count_where(s, !rows ? "SELECT COALESCE(SUM(oracle_mass_n), 0) FROM head_stats WHERE run_id=?1"
                                       : "SELECT COUNT(*) FROM decisions WHERE run_id=?1 AND oracle_logit IS NOT NULL",
                    run, &n_oracle, e))
        goto fail;
    if (n_oracle == 0) {
        err_set(e, "%s: run %lld has no oracle values (record it with --profile or --policy oracle)", s->path,
                (long long)run);
        goto fail;
    }
    if (!pred) pred = r.policy[0] && strcmp(r.policy, "aha") == 0 ? "aha" : "qada";
    char sql[200];
    if (!rows) snprintf(sql, sizeof sql, "SELECT COALESCE(SUM(n), 0) FROM head_totals WHERE run_id=?1 AND predictor='%s'",
                                  pred);
    else snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM predictions WHERE run_id=?1 AND predictor='%s' AND"
                  " predicted IS NOT NULL", pred);
    if (count_where(s, sql, run, &n_pred, e)) goto fail;
    char policy[4 * sizeof r.policy], status[4 * sizeof r.status]; /* the database's words: escaped as the tables are */
    char ablate[4 * sizeof r.ablate + 16] = "", safe[4 * sizeof r.ablate];
    if (r.ablate[0]) snprintf(ablate, sizeof ablate, ", ablate %s", textout_term(r.ablate, safe, sizeof safe));
    fprintf(out, "run %lld: policy %s, window %d, sinks %d, tau %g, theta %g%s, %d positions, %s\n", (long long)run,
            textout_term(r.policy, policy, sizeof policy), r.window, r.sinks, r.tau, decide_prob(r.theta_logit),
            ablate, r.n_tokens, textout_term(r.status, status, sizeof status));
    if (print_reads(s, run, run, r.n_tokens - 1, rows, out, e)) goto fail;
    fprintf(out, "\nevery predictor vs the oracle (global iff out_mass > theta), over the positions with far"
                 " keys:\n");
    if (print_confusion(s, run, NULL, "", rows, out, e)) goto fail;
    if (n_pred == 0) {
        fprintf(out, "\npredictor %s has no values in this run (no routers, or not profiled)\n", pred);
    } else {
        fprintf(out, "\n%s per layer:\n", pred);
        if (print_confusion(s, run, pred, "layer", rows, out, e)) goto fail;
        fprintf(out, "\n%s per head:\n", pred);
        if (print_confusion(s, run, pred, "layer, head", rows, out, e)) goto fail;
    }
    int64_t n_regime = 0;
    if (count_where(s, s->version >= 4 ? "SELECT EXISTS(SELECT 1 FROM decision_bits b WHERE " STORE_SQL_IN_RUN("1")
                                         " AND far_std IS NOT NULL)"
                                       : "SELECT COUNT(*) FROM decisions WHERE run_id=?1 AND far_std IS NOT NULL",
                    run, &n_regime, e))
        goto fail;
    if (n_regime == 0) fprintf(out, "\nno far-score moments in this run (recorded before they were): no regimes\n");
    else if (print_regimes(s, run, rows, out, e)) goto fail;
    store_run_info_free(&r);
    return 0;
fail:
    store_run_info_free(&r);
    return -1;
}

static int print_sql(Store *s, const char *sql, int64_t a, int64_t b, FILE *out, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, sql, &st, e)) return -1;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    int rc = print_result(st, STORE_FMT_TABLE, out);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "compare failed", e);
    return 0;
}

/* The reads table over positions 0 .. upto of each run: the share of
 * known gates that went global at the positions with a choice, from the
 * tokens' counts (what head_totals sums, store_check_totals holds them
 * equal) or, with rows, from the decision rows; keys and KV positions read
 * from the tokens rows. */
static const char READS_TOKENS[] =
    "SELECT r.run_id, ROUND((SELECT SUM(n_global) * 1.0 / NULLIF(SUM(n_gate), 0) FROM tokens t WHERE t.run_id = r.run_id"
    " AND t.n_far IS NOT 0 AND t.pos <= ?3), 4) AS global_share,";
static const char READS_ROWS[] =
    "SELECT r.run_id, ROUND((SELECT AVG(gate) FROM decided d WHERE d.run_id = r.run_id AND d.pos <= ?3), 4)"
    " AS global_share,";
static const char READS_FRACS[] =
    " ROUND((SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id AND s.pos <= ?3),"
    " 4) AS keys_per_query_head, ROUND((SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE"
    " s.run_id = r.run_id AND s.pos <= ?3), 4) AS kv_per_kv_head FROM runs r WHERE r.run_id IN (?1, ?2) ORDER BY r.run_id";

/* What each run read: keys per query head and KV positions per KV head
 * (the memory traffic), both against full attention, over positions
 * 0 .. upto (a file before version 4: from its decision rows). */
static int print_reads(Store *s, int64_t a, int64_t b, int upto, int rows, FILE *out, Err *e) {
    char range[80] = "";
    if (a != b) snprintf(range, sizeof range, ", over positions 0-%d (the positions both runs have)", upto);
    fprintf(out, "\nreads against full attention (keys per query head; KV positions per KV head, the memory"
                 " traffic)%s:\n", range);
    /* a file before version 4 has no per-position counts in tokens: its rows (read through views), over the range */
    char *sql = sqlite3_mprintf("%s%s", rows || s->version < 4 ? READS_ROWS : READS_TOKENS, READS_FRACS);
    sqlite3_stmt *st;
    int rc = sql ? store_prepare(s, sql, &st, e) : err_set(e, "out of memory");
    sqlite3_free(sql);
    if (rc) return -1;
    sqlite3_bind_int64(st, 1, a), sqlite3_bind_int64(st, 2, b), sqlite3_bind_int(st, 3, upto);
    rc = print_result(st, STORE_FMT_TABLE, out);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_sql_err(s->db, s->path, "compare failed", e);
}

static int first_divergence(Store *s, int64_t a, int64_t b, int *pos, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT MIN(x.pos) FROM tokens x JOIN tokens y ON y.run_id=?2 AND y.pos=x.pos"
                         " WHERE x.run_id=?1 AND x.token_id<>y.token_id", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    int rc = sqlite3_step(st);
    *pos = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return store_sql_err(s->db, s->path, "compare failed", e);
    return 0;
}

int store_texts_part(Store *s, int64_t a, int64_t b, int *parted, Err *e) {
    int div;
    if (first_divergence(s, a, b, &div, e)) return -1;
    if (parted) *parted = div >= 0;
    if (div >= 0) return div;
    sqlite3_stmt *st; /* the same text throughout: the shorter run ends the comparison */
    if (store_prepare(s, "SELECT MIN((SELECT COUNT(*) FROM tokens WHERE run_id = ?1),"
                         " (SELECT COUNT(*) FROM tokens WHERE run_id = ?2))", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    int rc = sqlite3_step(st), n = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? n : store_sql_err(s->db, s->path, "compare failed", e);
}

/* Any version (and the only way before version 4): the decided views of
 * the two runs joined, at positions with far keys in both, before `part`. */
static int diff_sums_rows(Store *s, int64_t a, int64_t b, int part, int n_layers, int n_heads, StoreDiffHead *dh,
                          Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT x.layer, x.head, COUNT(*), SUM(x.gate=1 AND y.gate=0), SUM(x.gate=0 AND y.gate=1),"
                         " SUM(x.gate), COUNT(x.gate), SUM(y.gate), COUNT(y.gate), SUM(x.gate<>y.gate),"
                         " COUNT(x.gate<>y.gate), MIN(CASE WHEN x.gate<>y.gate THEN x.pos END)"
                         " FROM decided x JOIN decided y ON y.run_id=?2 AND y.pos=x.pos AND y.layer=x.layer"
                         " AND y.head=x.head WHERE x.run_id=?1 AND x.pos < ?3 GROUP BY 1, 2", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    sqlite3_bind_int(st, 3, part);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int l = sqlite3_column_int(st, 0), h = sqlite3_column_int(st, 1);
        if (l < 0 || l >= n_layers || h < 0 || h >= n_heads) continue; /* not this shape: the reader bounds it */
        int64_t v[10];
        for (int i = 0; i < 10; i++) v[i] = sqlite3_column_int64(st, 2 + i);
        if (sqlite3_column_type(st, 11) == SQLITE_NULL) v[9] = -1;
        StoreDiffHead *o = &dh[(size_t)l * n_heads + h];
        *o = (StoreDiffHead){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_sql_err(s->db, s->path, "compare failed", e);
}

/* A cursor over one run's gates by key, positions from .. part - 1. */
static int gate_cursor(Store *s, int64_t run, int from, int part, sqlite3_stmt **st, Err *e) {
    if (store_prepare(s, "SELECT k, gate FROM decision_bits WHERE k BETWEEN ?1 AND ?2 ORDER BY k", st, e)) return -1;
    sqlite3_bind_int64(*st, 1, store_k(run, from, 0, 0));
    sqlite3_bind_int64(*st, 2, (run << STORE_K_RUN) + ((int64_t)part << STORE_K_POS) - 1);
    return 0;
}

/* Version 4, and runs written before version 5: both runs' key ranges
 * read in key order and merged here (the same position, layer and head
 * pair up), past the positions without far keys in either (n_far is 0 on
 * a prefix of positions): two sequential scans instead of a key lookup
 * per decision. */
static int diff_sums_bits(Store *s, int64_t a, int64_t b, int part, int n_layers, int n_heads, StoreDiffHead *dh,
                          Err *e) {
    sqlite3_stmt *st, *x = NULL, *y = NULL;
    if (store_prepare(s, "SELECT MAX((SELECT COUNT(*) FROM tokens WHERE run_id = ?1 AND n_far = 0),"
                         " (SELECT COUNT(*) FROM tokens WHERE run_id = ?2 AND n_far = 0))", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    int from = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    if (from < 0 || from >= 1 << (STORE_K_RUN - STORE_K_POS)) return 0; /* nothing past it can be keyed */
    if (part > 1 << (STORE_K_RUN - STORE_K_POS)) part = 1 << (STORE_K_RUN - STORE_K_POS);
    if (from >= part) return 0;
    if (gate_cursor(s, a, from, part, &x, e) || gate_cursor(s, b, from, part, &y, e)) { sqlite3_finalize(x); return -1; }
    int rx = sqlite3_step(x), ry = sqlite3_step(y);
    const int64_t mask = ((int64_t)1 << STORE_K_RUN) - 1;
    while (rx == SQLITE_ROW && ry == SQLITE_ROW) {
        int64_t kx = sqlite3_column_int64(x, 0) & mask, ky = sqlite3_column_int64(y, 0) & mask;
        if (kx != ky) {
            if (kx < ky) rx = sqlite3_step(x);
            else ry = sqlite3_step(y);
            continue;
        }
        int l = (int)(kx >> STORE_K_LAYER & 1023), h = (int)(kx & 262143), pos = (int)(kx >> STORE_K_POS);
        if (l < n_layers && h < n_heads) {
            StoreDiffHead *o = &dh[(size_t)l * n_heads + h];
            /* NULL (not known) is the only gate left out, as SQL's sums leave it */
            int knx = sqlite3_column_type(x, 1) != SQLITE_NULL, kny = sqlite3_column_type(y, 1) != SQLITE_NULL;
            int64_t gx = sqlite3_column_int64(x, 1), gy = sqlite3_column_int64(y, 1);
            o->n++;
            if (knx) o->sx += gx, o->cx++;
            if (kny) o->sy += gy, o->cy++;
            if (knx && kny) {
                o->cd++;
                o->down += gx == 1 && gy == 0, o->up += gx == 0 && gy == 1;
                if (gx != gy && !o->d++) o->fp = pos; /* keys ascend: the first is the lowest position */
            }
        }
        rx = sqlite3_step(x), ry = sqlite3_step(y);
    }
    sqlite3_finalize(x), sqlite3_finalize(y);
    if ((rx != SQLITE_ROW && rx != SQLITE_DONE) || (ry != SQLITE_ROW && ry != SQLITE_DONE))
        return store_sql_err(s->db, s->path, "compare failed", e);
    return 0;
}

/* Add one position's pair of gate bitmaps to the per-head sums. */
static void add_gates(const uint8_t *x, const uint8_t *y, int pos, int cells, StoreDiffHead *dh) {
    for (int c = 0; c < cells; c++) {
        unsigned gx = store_gate_at(x, c), gy = store_gate_at(y, c);
        StoreDiffHead *o = &dh[c];
        o->n++;
        /* an unknown gate is left out, as SQL's sums leave a NULL out */
        if (gx & STORE_GATE_KNOWN) o->sx += gx >> 1, o->cx++;
        if (gy & STORE_GATE_KNOWN) o->sy += gy >> 1, o->cy++;
        if (gx & gy & STORE_GATE_KNOWN) {
            o->cd++;
            o->down += gx > gy, o->up += gx < gy; /* 3 global, 1 local */
            if (gx != gy && !o->d++) o->fp = pos; /* positions ascend: the first is the lowest */
        }
    }
}

/* Version 5: the two runs' tokens rows paired by position, at positions
 * with far keys in both before `part`, and their gate bitmaps compared head by head: one
 * row a position instead of one a decision. 1 (nothing summed) when a
 * paired row of either run has no bitmap of the run's shape: written
 * before version 5, or not by ahascope. */
static int diff_sums_gates(Store *s, int64_t a, int64_t b, int part, int n_layers, int n_heads, StoreDiffHead *dh,
                           Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT x.pos, x.gates, y.gates FROM tokens x JOIN tokens y ON y.run_id = ?2 AND"
                         " y.pos = x.pos WHERE x.run_id = ?1 AND x.pos < ?3 AND x.n_far IS NOT 0 AND y.n_far IS NOT 0"
                         " ORDER BY x.pos", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    sqlite3_bind_int(st, 3, part);
    int cells = n_layers * n_heads, rc, lacking = 0;
    int bytes = (int)store_gate_bytes(cells);
    while (!lacking && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const uint8_t *x = sqlite3_column_blob(st, 1), *y = sqlite3_column_blob(st, 2);
        lacking = !x || !y || sqlite3_column_bytes(st, 1) != bytes || sqlite3_column_bytes(st, 2) != bytes;
        if (!lacking) add_gates(x, y, sqlite3_column_int(st, 0), cells, dh);
    }
    sqlite3_finalize(st);
    if (lacking) {
        for (int c = 0; c < cells; c++) dh[c] = (StoreDiffHead){.fp = -1};
        return 1;
    }
    return rc == SQLITE_DONE ? 0 : store_sql_err(s->db, s->path, "compare failed", e);
}

int store_diff_sums(Store *s, int64_t a, int64_t b, int n_layers, int n_heads, StoreDiffPath path, StoreDiffHead *dh,
                    Err *e) {
    int part = store_texts_part(s, a, b, NULL, e); /* past it the positions hold other texts */
    if (part < 0) return -1;
    if (path == STORE_DIFF_VIEWS) return diff_sums_rows(s, a, b, part, n_layers, n_heads, dh, e);
    if (path == STORE_DIFF_KEYS) return diff_sums_bits(s, a, b, part, n_layers, n_heads, dh, e);
    if (path == STORE_DIFF_GATES) return diff_sums_gates(s, a, b, part, n_layers, n_heads, dh, e);
    int rc = s->version >= 5 ? diff_sums_gates(s, a, b, part, n_layers, n_heads, dh, e) : 1;
    if (rc != 1) return rc;
    return (s->version >= 4 ? diff_sums_bits : diff_sums_rows)(s, a, b, part, n_layers, n_heads, dh, e);
}

/* One head's sums as a row of the CTE `h`: NULL where SQL's SUM or MIN
 * over no values would give NULL. */
static void cte_row(sqlite3_str *cte, int l, int h, const StoreDiffHead *o, int first) {
    char sx[24] = "NULL", sy[24] = "NULL", d[24] = "NULL", fp[24] = "NULL";
    if (o->cx) snprintf(sx, sizeof sx, "%lld", (long long)o->sx);
    if (o->cy) snprintf(sy, sizeof sy, "%lld", (long long)o->sy);
    if (o->cd) snprintf(d, sizeof d, "%lld", (long long)o->d);
    if (o->fp >= 0) snprintf(fp, sizeof fp, "%lld", (long long)o->fp);
    sqlite3_str_appendf(cte, "%s(%d,%d,%lld,%lld,%lld,%s,%lld,%s,%lld,%s,%lld,%s)", first ? "" : ",", l, h,
                        (long long)o->n, (long long)o->down, (long long)o->up, sx, (long long)o->cx, sy,
                        (long long)o->cy, d, (long long)o->cd, fp);
}

/* Gate flips from run a to run b as a layer × head map: one character per
 * head ('.' none, digit d: flipped in up to d tenths of its decisions), each
 * layer's flips by direction at the row's end, and the totals above; the
 * per-head sums, as a CTE `h` (layer, head, n, down, up, sx, cx, sy, cy, d,
 * cd, fp), into cte for the tables after it (one pass over the decisions
 * both runs have). */
static int print_flip_map(Store *s, int64_t a, int64_t b, int n_layers, int n_heads, StoreDiffPath path, sqlite3_str *cte,
                          FILE *out, Err *e) {
    size_t cells = (size_t)n_layers * (size_t)n_heads;
    StoreDiffHead *dh = calloc(cells, sizeof *dh);
    int64_t tot[3] = {0, 0, 0};
    if (!dh) return err_set(e, "out of memory");
    for (size_t i = 0; i < cells; i++) dh[i].fp = -1;
    if (store_diff_sums(s, a, b, n_layers, n_heads, path, dh, e)) {
        free(dh);
        return -1;
    }
    int rows = 0;
    sqlite3_str_appendall(cte, "WITH h(layer, head, n, down, up, sx, cx, sy, cy, d, cd, fp) AS (");
    for (size_t i = 0; i < cells; i++) {
        if (!dh[i].n) continue; /* no pair: no group */
        if (!rows++) sqlite3_str_appendall(cte, "VALUES");
        cte_row(cte, (int)(i / n_heads), (int)(i % n_heads), &dh[i], rows == 1);
        tot[0] += dh[i].n, tot[1] += dh[i].down, tot[2] += dh[i].up;
    }
    sqlite3_str_appendall(cte, rows ? ") " : "SELECT 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 WHERE 0) ");
    fprintf(out, "\ngate flips per head, run %lld -> run %lld: %lld global->local (-), %lld local->global (+) of %lld"
                 " decisions; the gates agree on %.2f%%\n", (long long)a, (long long)b, (long long)tot[1],
            (long long)tot[2], (long long)tot[0], tot[0] ? 100.0 * (tot[0] - tot[1] - tot[2]) / tot[0] : 100.0);
    fprintf(out, "('.' no flip; digit d: flipped in up to d tenths of the head's decisions)\n     ");
    for (int h = 0; h < n_heads; h++) fputc(h % 10 == 0 ? '0' + (h / 10) % 10 : ' ', out);
    fprintf(out, "  head / 10\n     ");
    for (int h = 0; h < n_heads; h++) fputc('0' + h % 10, out);
    fputc('\n', out);
    for (int l = 0; l < n_layers; l++) {
        int64_t down = 0, up = 0;
        fprintf(out, "L%-3d ", l);
        for (int h = 0; h < n_heads; h++) {
            const StoreDiffHead *k = &dh[(size_t)l * n_heads + h];
            int64_t f = k->down + k->up;
            int d = f == 0 || k->n == 0 ? 0 : (int)((f * 10 + k->n - 1) / k->n);
            fputc(d == 0 ? '.' : '0' + (d > 9 ? 9 : d), out);
            down += k->down, up += k->up;
        }
        fprintf(out, "  -%lld +%lld\n", (long long)down, (long long)up);
    }
    free(dh);
    return 0;
}

/* When one run is still being written and has fewer positions than the
 * other, the diff covers only the positions both have: say which. */
static int print_partial(Store *s, int64_t a, int64_t b, FILE *out, Err *e) {
    StoreRunProgress p[2];
    if (store_run_progress(s, a, &p[0], e) || store_run_progress(s, b, &p[1], e)) return -1;
    int64_t id[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        const StoreRunProgress *w = &p[k], *o = &p[1 - k];
        if (!w->writing || w->n_tokens >= o->n_tokens) continue;
        char of[40] = "";
        if (w->target > w->n_tokens) snprintf(of, sizeof of, " of %d", w->target);
        if (w->n_tokens == 0) fprintf(out, "no positions to diff yet: run %lld is still being written (0%s positions)\n",
                                      (long long)id[k], of);
        else fprintf(out, "diff over positions 0-%d: run %lld is still being written (%d%s positions)\n",
                     w->n_tokens - 1, (long long)id[k], w->n_tokens, of);
        return 0;
    }
    return 0;
}

/* Whether both runs' gate bitmaps and tokens counts can be believed; if
 * not, a line saying why, and the diff and reads come from the decision
 * rows. 1: read the rows. */
static int gates_instead(Store *s, const int64_t run[2], FILE *out, Err *e) {
    for (int k = 0; k < 2; k++) {
        int bad = store_summary_note(s, run[k], 1, out, "the gates are read from the decision rows", e);
        if (bad) return bad;
    }
    return 0;
}

static int compare_two(Store *s, int64_t a, int64_t b, FILE *out, Err *e) {
    StoreRunInfo ra, rb;
    if (store_run_info(s, a, &ra, e)) return -1;
    if (store_run_info(s, b, &rb, e)) { store_run_info_free(&ra); return -1; }
    int same_shape = ra.n_layers == rb.n_layers && ra.n_heads == rb.n_heads;
    char aa[4 * sizeof ra.ablate + 16] = "", ab[sizeof aa] = "", safe[4 * sizeof ra.ablate];
    if (ra.ablate[0]) snprintf(aa, sizeof aa, ", ablate %s", textout_term(ra.ablate, safe, sizeof safe));
    if (rb.ablate[0]) snprintf(ab, sizeof ab, ", ablate %s", textout_term(rb.ablate, safe, sizeof safe));
    fprintf(out, "run %lld: policy %s, window %d%s, %d positions | run %lld: policy %s, window %d%s, %d positions\n",
            (long long)a, ra.policy, ra.window, aa, ra.n_tokens, (long long)b, rb.policy, rb.window, ab, rb.n_tokens);
    int n_layers = ra.n_layers, n_heads = ra.n_heads, upto = (ra.n_tokens < rb.n_tokens ? ra.n_tokens : rb.n_tokens) - 1;
    store_run_info_free(&ra);
    store_run_info_free(&rb);
    if (!same_shape) return err_set(e, "runs %lld and %lld have different shapes", (long long)a, (long long)b);
    if (print_partial(s, a, b, out, e)) return -1;
    const int64_t both[2] = {a, b};
    int rows = gates_instead(s, both, out, e);
    if (rows < 0) return -1;
    int div;
    if (first_divergence(s, a, b, &div, e)) return -1;
    if (div < 0) fprintf(out, "tokens: identical over the positions both runs have\n");
    else {
        fprintf(out, "tokens: diverge at position %d:\n", div);
        char sql[300];
        snprintf(sql, sizeof sql, "SELECT x.pos AS pos, x.token_id AS token_a, x.piece AS piece_a, y.token_id AS token_b,"
                                  " y.piece AS piece_b FROM tokens x JOIN tokens y ON y.run_id=?2 AND y.pos=x.pos"
                                  " WHERE x.run_id=?1 AND x.pos BETWEEN %d AND %d ORDER BY x.pos", div, div + 4);
        if (print_sql(s, sql, a, b, out, e)) return -1;
        /* past the parting the positions hold other texts: store_diff_sums stops there */
        if (div > 0) fprintf(out, "gates compared over positions 0-%d, where the texts part\n", div - 1);
        else fprintf(out, "gates: no position compared, the texts part at position 0\n");
    }
    if (print_reads(s, a, b, upto, rows, out, e)) return -1;
    sqlite3_str *cte = sqlite3_str_new(s->db);
    int rc = print_flip_map(s, a, b, n_layers, n_heads, rows ? STORE_DIFF_KEYS : STORE_DIFF_AUTO, cte, out, e);
    char *with = sqlite3_str_finish(cte);
    if (rc || !with) { sqlite3_free(with); return rc ? -1 : err_set(e, "out of memory"); }
    /* the averages as sums over counts of the per-head sums: the same doubles AVG gives */
    fprintf(out, "\ngates per layer (over the decisions both runs have before their texts part: positions with"
                 " far keys):\n");
    char *per_layer = sqlite3_mprintf("%sSELECT layer, SUM(n) AS n, ROUND(SUM(sx) * 1.0 / NULLIF(SUM(cx), 0), 4) AS"
                                      " global_a, ROUND(SUM(sy) * 1.0 / NULLIF(SUM(cy), 0), 4) AS global_b, SUM(d) AS"
                                      " differ, ROUND(SUM(d) * 1.0 / NULLIF(SUM(cd), 0), 4) AS differ_rate FROM h"
                                      " GROUP BY layer ORDER BY layer", with);
    char *per_head = sqlite3_mprintf("%sSELECT layer, head, n, d AS differ, ROUND(d * 1.0 / NULLIF(cd, 0), 4) AS"
                                     " differ_rate, fp AS first_pos FROM h WHERE d > 0 ORDER BY differ DESC, layer, head"
                                     " LIMIT 10", with);
    sqlite3_free(with);
    rc = !per_layer || !per_head ? err_set(e, "out of memory") : print_sql(s, per_layer, a, b, out, e);
    if (!rc) fprintf(out, "\nheads whose gates differ most:\n");
    if (!rc) rc = print_sql(s, per_head, a, b, out, e);
    sqlite3_free(per_layer), sqlite3_free(per_head);
    return rc;
}

int store_compare(Store *s, int64_t run_a, int64_t run_b, const char *predictor, FILE *out, Err *e) {
    if (predictor) {
        DecidePred p;
        char names[128];
        decide_list(names, sizeof names, DECIDE_N_SQL, ", ");
        if (decide_parse(predictor, &p) || p >= DECIDE_N_SQL)
            return err_set(e, "unknown predictor '%s' (%s)", predictor, names);
    }
    if (run_b > 0) return compare_two(s, run_a, run_b, out, e);
    return compare_one(s, run_a, predictor, out, e);
}
