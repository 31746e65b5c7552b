/* test_qada_measure.c — tests/qada_measure.py is a trusted reference.
 *
 * The script re-implements the forward pass in float64 NumPy and derives
 * every decision's far mass and both QAdA estimates from the scores; the
 * findings on QAdA (app/FINDINGS.md) quote its measurements. Here the
 * engine records two short profiled runs (window 16 without sinks; window
 * 8 with 4 sinks) and the script's per-decision oracle far mass, qada and
 * qada_bulk estimates are held to the database's to MASS_TOL absolute, for
 * every decision that has a far key, and so are this project's
 * REM-corrected pair (qada_rem, qada_rem_bulk) and the far scores' exact
 * mean and spread (far_mean, far_std, to MOMENT_TOL: scores, not masses).
 * The database may store each estimate as a
 * mass (oracle_mass, …) or as log-odds (oracle_logit, …): either is read,
 * and a copy of the database with oracle_mass rewritten as oracle_logit
 * is checked as well.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"

#define MASS_TOL 1e-4 /* measured: at most 4e-6 (the float32 engine against float64) */

#define MOMENT_TOL 1e-3 /* scores of magnitude ~10 from a float32 forward */

enum { MAX_POS = 512, MAX_CELLS = 64, N_CHECKED = 7 };
static const char *const NAMES[N_CHECKED] = {"oracle", "qada", "qada_bulk", "qada_rem", "qada_rem_bulk",
                                             "far_mean", "far_std"};

/* The column holding predictor `name` in decisions: name_logit, else
 * name_mass, else name itself (a raw value, *is_logit 2); 0 if none (then
 * *col is empty). */
static int pick_column(sqlite3 *db, const char *name, char *col, size_t n, int *is_logit) {
    sqlite3_stmt *st;
    int found = 0;
    col[0] = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA table_info(decisions)", -1, &st, NULL) != SQLITE_OK) return 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 1);
        char want[64];
        snprintf(want, sizeof want, "%s_logit", name);
        if (c && !strcmp(c, want)) { snprintf(col, n, "%s", c); *is_logit = 1; found = 2; }
        snprintf(want, sizeof want, "%s_mass", name);
        if (c && !strcmp(c, want) && found < 2) { snprintf(col, n, "%s", c); *is_logit = 0; found = 1; }
        if (c && !strcmp(c, name) && !found) { snprintf(col, n, "%s", c); *is_logit = 2; found = 1; }
    }
    sqlite3_finalize(st);
    return found != 0;
}

/* The database's values of one predictor for run `run`, as masses, into
 * v[pos * cells + layer * heads + head] (NAN where absent). */
static int load_masses(sqlite3 *db, int run, const char *name, int heads, int cells, double *v, char *col, size_t n) {
    int is_logit = 0;
    for (int i = 0; i < MAX_POS * cells; i++) v[i] = NAN;
    if (!pick_column(db, name, col, n, &is_logit)) return -1;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT pos, layer, head, %s FROM decisions WHERE run_id = %d AND %s IS NOT NULL", col,
             run, col);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int pos = sqlite3_column_int(st, 0), l = sqlite3_column_int(st, 1), h = sqlite3_column_int(st, 2);
        double x = sqlite3_column_double(st, 3);
        if (pos < 0 || pos >= MAX_POS || l * heads + h >= cells) continue;
        v[(size_t)pos * cells + l * heads + h] = is_logit == 1 ? 1.0 / (1.0 + exp(-x)) : x;
    }
    sqlite3_finalize(st);
    return 0;
}

static int db_int(sqlite3 *db, const char *sql) {
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Run the script over run `run` of dbpath and compare its dump with the
 * database; returns the number of decisions compared. */
static int check_run(const char *py, const char *dbpath, int run, int window, int sinks) {
    char dump[600], sql[200];
    snprintf(dump, sizeof dump, "%s", test_tmp(run == 1 ? "dump1.csv" : "dump2.csv"));
    int st;
    char *out = test_runf(&st, "'%s' tests/qada_measure.py --db '%s' --run %d --model '%s' --synthetic 0 --dump '%s'",
                          py, dbpath, run, test_stories_model(), dump);
    CHECK_MSG(st == 0, "qada_measure.py failed on run %d: %s", run, out ? out : "");
    free(out);
    if (st != 0) return 0;

    sqlite3 *db;
    if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        test_fail(__FILE__, __LINE__, "cannot open %s", dbpath);
        sqlite3_close(db);
        return 0;
    }
    snprintf(sql, sizeof sql, "SELECT n_heads FROM runs WHERE run_id = %d", run);
    int heads = db_int(db, sql);
    snprintf(sql, sizeof sql, "SELECT n_layers * n_heads FROM runs WHERE run_id = %d", run);
    int cells = db_int(db, sql);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM decisions WHERE run_id = %d AND pos >= %d", run, window + sinks);
    int want = db_int(db, sql); /* the decisions with a far key: t - window + 1 > sinks */
    CHECK_MSG(heads > 0 && cells > 0 && cells <= MAX_CELLS, "run %d: %d heads, %d cells", run, heads, cells);
    if (!(heads > 0 && cells > 0 && cells <= MAX_CELLS)) { sqlite3_close(db); return 0; }
    double *v[N_CHECKED];
    char col[N_CHECKED][64];
    for (int k = 0; k < N_CHECKED; k++) {
        v[k] = malloc((size_t)MAX_POS * cells * sizeof(double));
        CHECK_MSG(load_masses(db, run, NAMES[k], heads, cells, v[k], col[k], sizeof col[k]) == 0,
                  "run %d: no %s_logit or %s_mass column", run, NAMES[k], NAMES[k]);
    }
    sqlite3_close(db);

    FILE *f = fopen(dump, "r");
    CHECK_MSG(f != NULL, "no dump %s", dump);
    int n = 0, missing = 0;
    double worst[N_CHECKED] = {0};
    char line[400];
    if (f && fgets(line, sizeof line, f)) { /* header */
        int seq, pos, l, h, nf;
        double m[N_CHECKED];
        while (fscanf(f, "%d,%d,%d,%d,%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &seq, &pos, &l, &h, &nf, &m[0], &m[1], &m[2],
                      &m[3], &m[4], &m[5], &m[6]) == 12) {
            CHECK_INT(nf, pos - window + 1 - sinks);
            if (pos < 0 || pos >= MAX_POS || l * heads + h >= cells) { missing++; continue; }
            n++;
            for (int k = 0; k < N_CHECKED; k++) {
                double d = v[k][(size_t)pos * cells + l * heads + h];
                if (isnan(d)) { missing++; continue; }
                d = fabs(d - m[k]);
                if (!(d <= worst[k])) worst[k] = d;
            }
        }
    }
    if (f) fclose(f);
    CHECK_MSG(n == want && missing == 0, "run %d: script gave %d decisions with far keys, the database %d (%d unmatched)",
              run, n, want, missing);
    for (int k = 0; k < N_CHECKED; k++) {
        CHECK_MSG(worst[k] <= (k < 5 ? MASS_TOL : MOMENT_TOL), "run %d (window %d, sinks %d): %s differs from the database's %s by %g", run,
                  window, sinks, NAMES[k], col[k], worst[k]);
        free(v[k]);
    }
    return n;
}

static void logit_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) { sqlite3_result_null(ctx); return; }
    double m = sqlite3_value_double(argv[0]);
    sqlite3_result_double(ctx, log(m) - log1p(-m));
}

/* dst = src with decisions.oracle_mass turned into oracle_logit = ln(m/(1-m)),
 * the column's replacement. Returns 0 if made, 1 if src has no oracle_mass. */
static int logit_copy(const char *src, const char *dst) {
    sqlite3 *db;
    char sql[1400], col[64];
    int is_logit = 0, rc = -1;
    remove(dst);
    if (sqlite3_open(src, &db) != SQLITE_OK) { sqlite3_close(db); return -1; }
    if (!pick_column(db, "oracle", col, sizeof col, &is_logit) || is_logit) { sqlite3_close(db); return 1; }
    snprintf(sql, sizeof sql, "VACUUM INTO '%s'", dst);
    rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    if (rc != SQLITE_OK || sqlite3_open(dst, &db) != SQLITE_OK) { sqlite3_close(db); return -1; }
    sqlite3_create_function(db, "to_logit", 1, SQLITE_UTF8, NULL, logit_fn, NULL, NULL);
    rc = sqlite3_exec(db, "ALTER TABLE decisions RENAME COLUMN oracle_mass TO oracle_logit;"
                          "UPDATE decisions SET oracle_logit = to_logit(oracle_logit)", NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

TEST(qada_measure_reference_matches_engine_oracle_and_qada) {
    SKIP_UNLESS_SHARED();
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    const char *db = test_tmp("qada_measure.db"), *model = test_stories_model();
    remove(db);
    int st;
    /* run 1: greedy, window 16, no sinks; run 2: sampled, window 8, 4 sinks */
    char *out = test_runf(&st, "%s record --db %s --model %s --steps 120 --temperature 0 --window 16 --profile "
                               "--commit-every 120 --threads 1 && %s record --db %s --model %s --prompt 'Lily had a' "
                               "--steps 120 --seed 3 --window 8 --sinks 4 --profile --commit-every 120 --threads 1",
                          test_bin(), db, model, test_bin(), db, model);
    CHECK_MSG(st == 0, "record failed: %s", out ? out : "");
    free(out);
    if (st != 0) return;
    int n1 = check_run(py, db, 1, 16, 0), n2 = check_run(py, db, 2, 8, 4);
    CHECK_MSG(n1 >= 40 * 40 && n2 >= 20 * 40, "too few decisions compared: %d and %d", n1, n2);
    const char *db2 = test_tmp("qada_measure_logit.db");
    int made = logit_copy(db, db2);
    CHECK_MSG(made >= 0, "could not write the oracle_logit copy of %s", db);
    if (made == 0) CHECK_INT(check_run(py, db2, 1, 16, 0), n1);
}
