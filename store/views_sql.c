/* views_sql.c — the text of version 6's, 7's and 8's views, generated from a file's own lists.
 *
 * From its catalog (catalog.c): its fields name the `decisions` columns, its
 * predictors the `predictions` rules and the rates' columns; the totals
 * views join head_totals on its predictor column, so they name none.
 *
 * These views mirror engine/decide.h's rules in SQL (tests/test_decide.c
 * checks them cell for cell): a predictor's decision is its value above
 * the run's threshold, strictly; NULL where the value was not computed;
 * positions with no far keys are not decisions. keys_read follows each
 * decision's local_window where the file's lists hold that field (version
 * 8's rule otherwise), so the text stays a function of the file's lists. */
#include <string.h>

#include "store/internal.h"

/* expr with every '@' replaced by x: the SQL macros of internal.h written
 * for one column at run time. */
static void put_with(sqlite3_str *out, const char *expr, const char *x) {
    for (const char *c = expr; *c; c++)
        if (*c == '@') sqlite3_str_appendall(out, x);
        else sqlite3_str_appendchar(out, 1, *c);
}

/* A predictor's rule over a row prefixed p ("d." or ""). */
static void put_rule(sqlite3_str *out, const StoreCatPred *r, const char *p) {
    sqlite3_str_appendf(out, "%s%s", p, r->field);
    if (r->rule == PRED_THR_TAU) sqlite3_str_appendf(out, " > %stau", p);
    if (r->rule == PRED_THR_THETA) sqlite3_str_appendf(out, " > %stheta_logit", p);
}

static const StoreCatPred *label_of(const StoreCatalog *c) {
    for (int i = 0; i < c->n_preds; i++)
        if (c->pred[i].label) return &c->pred[i];
    return &c->pred[0];
}

static const StoreCatPred *gate_of(const StoreCatalog *c) {
    for (int i = 0; i < c->n_preds; i++)
        if (c->pred[i].rule == PRED_THR_GATE) return &c->pred[i];
    return &c->pred[0];
}

static void put_decisions(sqlite3_str *out, const StoreCatalog *c, const char *kind, int version) {
    sqlite3_str_appendf(out, "CREATE %s VIEW decisions AS\n  SELECT " STORE_SQL_RUN("b.k") " AS run_id, "
                        STORE_SQL_POS("b.k") " AS pos, " STORE_SQL_LAYER("b.k") " AS layer, " STORE_SQL_HEAD("b.k")
                        " AS head", kind);
    for (int i = 0; i < c->n_fields; i++) {
        const char *n = c->field[i].name;
        if (c->field[i].kind == STORE_FIELD_INT) sqlite3_str_appendf(out, ", b.%s", n);
        else if (c->field[i].kind == STORE_FIELD_DERIVED && version < 7)
            sqlite3_str_appendf(out, ",\n    " STORE_SQL_KEYS_READ_V6("b.gate", STORE_SQL_POS("b.k"), "r.window", "r.sinks")
                                " AS %s", n);
        else if (c->field[i].kind == STORE_FIELD_DERIVED && version == 7)
            sqlite3_str_appendf(out, ",\n    " STORE_SQL_KEYS_READ_V7("b.gate", STORE_SQL_POS("b.k"), "r.window", "r.sinks",
                                                                     STORE_SQL_RUN("b.k"), STORE_SQL_LAYER("b.k")) " AS %s", n);
        else if (c->field[i].kind == STORE_FIELD_DERIVED && store_catalog_has_field(c, STORE_CHOSEN_FIELD))
            sqlite3_str_appendf(out, ",\n    " STORE_SQL_KEYS_READ_CHOSEN("b.gate", STORE_SQL_POS("b.k"), "r.window",
                                                                         "r.sinks", STORE_SQL_RUN("b.k"),
                                                                         STORE_SQL_LAYER("b.k"), STORE_SQL_HEAD("b.k"),
                                                                         "b." STORE_CHOSEN_FIELD) " AS %s", n);
        else if (c->field[i].kind == STORE_FIELD_DERIVED)
            sqlite3_str_appendf(out, ",\n    " STORE_SQL_KEYS_READ("b.gate", STORE_SQL_POS("b.k"), "r.window", "r.sinks",
                                                                  STORE_SQL_RUN("b.k"), STORE_SQL_LAYER("b.k"),
                                                                  STORE_SQL_HEAD("b.k")) " AS %s", n);
        else {
            char col[STORE_CAT_NAME + 2];
            snprintf(col, sizeof col, "b.%s", n);
            sqlite3_str_appendall(out, ",\n    ");
            put_with(out, STORE_SQL_F32("@"), col);
            sqlite3_str_appendf(out, " AS %s", n);
        }
    }
    sqlite3_str_appendall(out, "\n  FROM " STORE_DECISIONS_FROM ";\n");
}

static const char ATTN_TOP[] =
    "CREATE %s VIEW attn_top AS\n"
    "  SELECT run_id, pos, layer, head, rank, w >> 32 AS key_pos,\n"
    "    " STORE_SQL_F32("(w & 4294967295)") " AS weight\n"
    "  FROM (SELECT " STORE_SQL_RUN("b.k") " AS run_id, " STORE_SQL_POS("b.k") " AS pos, " STORE_SQL_LAYER("b.k")
    " AS layer, " STORE_SQL_HEAD("b.k") " AS head, n.rank,\n"
    "      CASE n.rank WHEN 0 THEN b.top0 WHEN 1 THEN b.top1 WHEN 2 THEN b.top2 WHEN 3 THEN b.top3 WHEN 4 THEN b.top4"
    " WHEN 5 THEN b.top5 WHEN 6 THEN b.top6 WHEN 7 THEN b.top7 END AS w\n"
    "    FROM decision_bits b CROSS JOIN (SELECT 0 AS rank UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3"
    " UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7) n)\n"
    "  WHERE w IS NOT NULL;\n";

/* masses, decided, predictions: the views over every decision row. */
static void put_row_views(sqlite3_str *out, const StoreCatalog *c, const char *kind) {
    sqlite3_str_appendf(out, "CREATE %s VIEW masses AS\n  SELECT d.run_id, d.pos, d.layer, d.head,", kind);
    for (int i = 0; i < c->n_preds; i++)
        if (c->pred[i].rule == PRED_THR_THETA)
            sqlite3_str_appendf(out, "\n    1.0 / (1.0 + EXP(-d.%s)) AS %s_mass,", c->pred[i].field, c->pred[i].name);
    sqlite3_str_appendf(out, "\n    CASE WHEN t.n_far > 1 THEN d.far_std / SQRT(2 * LN(t.n_far)) END AS regime\n"
                        "  FROM decisions d LEFT JOIN tokens t USING(run_id, pos);\n"
                        "CREATE %s VIEW decided AS\n"
                        "  SELECT d.*, r.tau, r.theta_logit FROM decisions d JOIN runs r USING(run_id)"
                        " JOIN tokens t USING(run_id, pos)\n  WHERE t.n_far IS NOT 0;\n"
                        "CREATE %s VIEW predictions AS\n"
                        "  SELECT d.run_id, d.pos, d.layer, d.head, p.predictor,\n    CASE p.predictor", kind, kind);
    for (int i = 0; i < c->n_preds; i++) {
        if (c->pred[i].label) continue;
        sqlite3_str_appendf(out, "\n      WHEN '%s' THEN ", c->pred[i].name);
        put_rule(out, &c->pred[i], "d.");
    }
    sqlite3_str_appendall(out, " END\n      AS predicted,\n    ");
    put_rule(out, label_of(c), "d.");
    sqlite3_str_appendf(out, " AS %s\n  FROM decided d\n  CROSS JOIN (SELECT name AS predictor FROM predictors"
                        " WHERE role = 'scored' ORDER BY ord) p;\n", label_of(c)->name);
}

/* One predictor's rate over head_totals rows t grouped by head or layer:
 * global over made, by predictor name. */
static void put_rate(sqlite3_str *out, const char *name, const char *as) {
    sqlite3_str_appendf(out, ",\n    SUM(CASE t.predictor WHEN '%s' THEN t.global END) * 1.0 /"
                        " NULLIF(SUM(CASE t.predictor WHEN '%s' THEN t.n END), 0) AS %s_rate", name, name, as);
}

/* The rates of a head (by "layer, head") or a layer (by "layer"): the
 * executed gate's as global_rate, the label's, then every other scored
 * predictor with a threshold. */
static void put_rates(sqlite3_str *out, const StoreCatalog *c, const char *by) {
    sqlite3_str_appendf(out, "(SELECT t.run_id, %s", by);
    put_rate(out, gate_of(c)->name, "global");
    put_rate(out, label_of(c)->name, label_of(c)->name);
    for (int i = 0; i < c->n_preds; i++)
        if (!c->pred[i].label && c->pred[i].rule != PRED_THR_GATE) put_rate(out, c->pred[i].name, c->pred[i].name);
    sqlite3_str_appendf(out, ",\n    SUM(CASE t.predictor WHEN '%s' THEN t.n END) AS gate_n\n"
                        "    FROM head_totals t GROUP BY t.run_id, %s)", gate_of(c)->name, by);
}

static void put_rate_columns(sqlite3_str *out, const StoreCatalog *c) {
    sqlite3_str_appendf(out, "t.global_rate, t.%s_rate", label_of(c)->name);
    for (int i = 0; i < c->n_preds; i++)
        if (!c->pred[i].label && c->pred[i].rule != PRED_THR_GATE) sqlite3_str_appendf(out, ", t.%s_rate", c->pred[i].name);
}

static void put_rate_views(sqlite3_str *out, const StoreCatalog *c, const char *kind) {
    sqlite3_str_appendf(out, "CREATE %s VIEW head_rates AS\n  SELECT s.run_id, s.layer, s.head, s.n, ", kind);
    put_rate_columns(out, c);
    sqlite3_str_appendall(out, ",\n    s.score_sum / NULLIF(s.score_n, 0) AS mean_score,"
                               " s.oracle_mass_sum / NULLIF(s.oracle_mass_n, 0) AS mean_oracle_mass,\n"
                               "    s.oracle_err_sum / NULLIF(s.oracle_err_n, 0) AS mean_oracle_err,\n"
                               "    CASE WHEN t.gate_n > 0 THEN s.keys_read END AS keys_read\n  FROM head_stats s JOIN ");
    put_rates(out, c, "t.layer, t.head");
    sqlite3_str_appendf(out, " t USING(run_id, layer, head)\n  WHERE s.n > 0;\n"
                        "CREATE %s VIEW layer_rates AS\n  SELECT s.run_id, s.layer, s.n, ", kind);
    put_rate_columns(out, c);
    sqlite3_str_appendall(out, ",\n    s.mean_oracle_mass, CASE WHEN t.gate_n > 0 THEN s.keys_read END AS keys_read\n"
                               "  FROM (SELECT run_id, layer, SUM(n) AS n,"
                               " SUM(oracle_mass_sum) / NULLIF(SUM(oracle_mass_n), 0) AS mean_oracle_mass,"
                               " SUM(keys_read) AS keys_read\n    FROM head_stats WHERE n > 0 GROUP BY run_id, layer) s"
                               " JOIN ");
    put_rates(out, c, "t.layer");
    sqlite3_str_appendall(out, " t USING(run_id, layer);\n");
}

static const char TOKEN_SHARE[] =
    "CREATE %s VIEW token_share AS\n"
    "  SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.n_far,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_global * 1.0 / NULLIF(t.n_gate, 0) END AS global_share,\n"
    "    CASE WHEN t.n_far IS NOT 0 THEN t.n_oracle_global * 1.0 / NULLIF(t.n_oracle, 0) END AS oracle_share,\n"
    "    t.keys_read_sum AS keys_read, r.n_layers * r.n_heads * (t.pos + 1) AS keys_full,\n"
    "    t.keys_read_sum * 1.0 / (r.n_layers * r.n_heads * (t.pos + 1)) AS keys_read_frac,\n"
    "    t.kv_read, COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1) AS kv_full,\n"
    "    t.kv_read * 1.0 / (COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)) AS kv_read_frac\n"
    "  FROM tokens t JOIN runs r USING(run_id);\n";

#define PRF                                                                                                    \
    "  SELECT *, tp * 1.0 / NULLIF(tp + fp, 0) AS precision, tp * 1.0 / NULLIF(tp + fn, 0) AS recall,\n"      \
    "    2.0 * tp / NULLIF(2 * tp + fp + fn, 0) AS f1 FROM (\n"

/* The confusion views name no predictor: a head_totals row per predictor
 * holds its cells, the scored ones listed in `predictors`. */
static const char CONFUSION[] =
    "CREATE %s VIEW confusion_head AS\n" PRF
    "    SELECT h.run_id, h.predictor, h.layer, h.head, h.tp, h.fp, h.fn, h.tn\n"
    "    FROM head_totals h JOIN predictors p ON p.name = h.predictor WHERE p.role = 'scored')\n"
    "  WHERE tp + fp + fn + tn > 0;\n"
    "CREATE %s VIEW confusion AS\n" PRF
    "    SELECT run_id, predictor, SUM(tp) AS tp, SUM(fp) AS fp, SUM(fn) AS fn, SUM(tn) AS tn\n"
    "    FROM confusion_head GROUP BY run_id, predictor);\n";

/* One predictor's share of globals over a run's heads, for run_summary. */
static void put_share(sqlite3_str *out, const char *name, const char *as) {
    sqlite3_str_appendf(out, "    (SELECT SUM(global) * 1.0 / NULLIF(SUM(n), 0) FROM head_totals h"
                        " WHERE h.run_id = r.run_id AND h.predictor = '%s')\n      AS %s,\n", name, as);
}

static void put_summary(sqlite3_str *out, const StoreCatalog *c, const char *kind) {
    sqlite3_str_appendf(out, "CREATE %s VIEW run_summary AS\n  SELECT r.run_id, r.status, r.policy, r.window, r.n_tokens,\n",
                        kind);
    put_share(out, gate_of(c)->name, "global_share");
    put_share(out, label_of(c)->name, "oracle_share");
    sqlite3_str_appendall(out, "    (SELECT SUM(keys_read) * 1.0 / SUM(keys_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
                               "      AS keys_read_frac,\n"
                               "    (SELECT SUM(kv_read) * 1.0 / SUM(kv_full) FROM token_share s WHERE s.run_id = r.run_id)\n"
                               "      AS kv_read_frac,\n"
                               "    (SELECT EXP(-AVG(logprob)) FROM tokens t WHERE t.run_id = r.run_id AND logprob IS NOT NULL)\n"
                               "      AS perplexity\n"
                               "  FROM runs r;\n");
}

char *store_views_sql(const StoreCatalog *c, const char *kind, int version) {
    sqlite3_str *out = sqlite3_str_new(NULL);
    put_decisions(out, c, kind, version);
    sqlite3_str_appendf(out, ATTN_TOP, kind);
    put_row_views(out, c, kind);
    put_rate_views(out, c, kind);
    sqlite3_str_appendf(out, TOKEN_SHARE, kind);
    sqlite3_str_appendf(out, CONFUSION, kind, kind);
    put_summary(out, c, kind);
    return sqlite3_str_finish(out);
}
