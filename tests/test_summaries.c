/* test_summaries.c — recorded summaries are checked before they are believed (issue 53 §3).
 *
 * A small file is written, one summary tampered with plain SQL (a bitmap
 * copied from another run, a total made negative, a head the model does
 * not have, every decision row flipped, an evaluation's KL scaled), and
 * each command must then print what the decision rows give, recounted here
 * with SQL over the rows, or refuse naming the table: never the tampered
 * number with exit 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "tests/store_fixture.h"
#include "test.h"

#define L 5
#define H 8
#define N 24

/* One made-up step of run `which` (1 or 2): gates, router scores and
 * oracle values a function of the cell and position, the two runs' gates
 * different enough that they flip in both directions. */
static StepTrace *made_step(int which, int p) {
    StepTrace *t = trace_new(L, H);
    t->pos = p, t->token = p + 1, t->n_far = p > 4 ? p - 4 : 0, t->n_kv_heads = H;
    for (int i = 0; i < L * H; i++) {
        t->gate[i] = (int8_t)(which == 1 ? (i + p) % 2 : (i * p + i) % 3 == 0);
        t->score[i] = 0.25f * (float)((i + which) % 4);
        t->oracle_logit[i] = (float)((i + 2 * p) % 5) - 2.0f;
    }
    return t;
}

/* A fresh file of two runs of N positions on an L x H model. */
static void two_runs(const char *path) {
    test_db_fresh(path);
    Err e;
    Store *s = store_open(path, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "open: %s", e.msg);
    if (!s) return;
    for (int which = 1; which <= 2; which++) {
        StoreRunInfo r;
        test_run_info(&r, L, H);
        r.profile = 1;
        CHECK(store_run_begin(s, &r, &e) == 0);
        for (int p = 0; p < N; p++) {
            StepTrace *t = made_step(which, p);
            CHECK_MSG(store_write_step(s, r.run_id, t, NULL, &e) == 0, "write: %s", e.msg);
            trace_free(t);
        }
        CHECK(store_run_end(s, r.run_id, "done", &e) == 0);
    }
    CHECK(store_close(s, &e) == 0);
}

/* The share of gates that agree between runs 1 and 2, in percent, counted
 * from the decision rows at the positions with far keys. */
static double agree_from_rows(const char *db) {
    long long n = test_db_scalar(db, "SELECT COUNT(*) FROM decisions x JOIN decisions y ON y.run_id = 2 AND y.pos = x.pos"
                                     " AND y.layer = x.layer AND y.head = x.head JOIN tokens t ON t.run_id = 1 AND"
                                     " t.pos = x.pos WHERE x.run_id = 1 AND t.n_far > 0");
    long long d = test_db_scalar(db, "SELECT SUM(x.gate <> y.gate) FROM decisions x JOIN decisions y ON y.run_id = 2 AND"
                                     " y.pos = x.pos AND y.layer = x.layer AND y.head = x.head JOIN tokens t ON"
                                     " t.run_id = 1 AND t.pos = x.pos WHERE x.run_id = 1 AND t.n_far > 0");
    CHECK(n > 0);
    return n > 0 ? 100.0 * (double)(n - d) / (double)n : -1;
}

/* compare's line "the gates agree on X%" for runs 1 and 2 of db, which
 * must be what the rows give; the output is returned (caller frees). */
static char *check_agreement(const char *db) {
    int st;
    char *out = test_runf(&st, "%s compare --db %s --run 1 --run 2 2>&1", test_bin(), db);
    char want[64];
    snprintf(want, sizeof want, "the gates agree on %.2f%%", agree_from_rows(db));
    CHECK_MSG(st == 0 && out && strstr(out, want), "want '%s' (exit 0) in: %s", want, out);
    return out;
}

/* The numbers after `first` on the first line of the table below the line
 * holding `title` that starts with it (the tables are aligned by spaces). */
static int table_row(const char *out, const char *title, const char *first, double *v, int n) {
    const char *t = out ? strstr(out, title) : NULL;
    for (const char *line = t ? strchr(t, '\n') : NULL; line && line[1] && line[1] != '\n'; line = strchr(line + 1, '\n')) {
        char word[32];
        int used = 0;
        if (sscanf(line + 1, "%31s%n", word, &used) != 1 || strcmp(word, first)) continue;
        const char *c = line + 1 + used;
        int got = 0;
        for (char *end; got < n; got++, c = end) {
            v[got] = strtod(c, &end);
            if (end == c) break;
        }
        return got;
    }
    return 0;
}

/* Run `run`'s global share in compare's reads table. */
static double reads_share(const char *out, int run) {
    char id[16];
    double v = -1;
    snprintf(id, sizeof id, "%d", run);
    table_row(out, "reads against full attention", id, &v, 1);
    return v;
}

/* Run `run`'s global share from its decision rows, at positions with a choice. */
static double share_from_rows(const char *db, int run) {
    char sql[300];
    snprintf(sql, sizeof sql, "SELECT CAST(ROUND(AVG(d.gate), 4) * 10000 AS INTEGER) FROM decisions d JOIN tokens t"
                              " USING(run_id, pos) WHERE d.run_id = %d AND t.n_far > 0", run);
    return (double)test_db_scalar(db, sql) / 10000;
}

/* Run 2's bitmaps replaced by run 1's: they still fit the run's length,
 * and before the check compare said the gates agree on 100.00%. */
TEST(summaries_copied_bitmap_is_diffed_from_the_rows) {
    const char *db = test_tmp("sum_copied.db");
    two_runs(db);
    char *clean = check_agreement(db);
    CHECK_MSG(clean && !strstr(clean, "note:"), "an untouched file needs no note: %s", clean);
    free(clean);
    test_db_exec(db, "UPDATE tokens SET gates = (SELECT x.gates FROM tokens x WHERE x.run_id = 1 AND x.pos = tokens.pos)"
                     " WHERE run_id = 2");
    char *out = check_agreement(db);
    CHECK_MSG(out && strstr(out, "note: run 2's tokens row") && !strstr(out, "agree on 100.00%"), "%s", out);
    CHECK_NEAR(reads_share(out, 2), share_from_rows(db, 2), 1e-9);
    free(out);
}

/* Every decision row of run 2 flipped: the bitmaps and totals beside them
 * no longer say what the rows do, and the diff and the reads are the rows'. */
TEST(summaries_flipped_decision_rows_are_what_compare_reports) {
    const char *db = test_tmp("sum_flipped.db");
    two_runs(db);
    test_db_exec(db, "UPDATE decision_bits SET gate = 1 - gate WHERE gate IS NOT NULL AND k BETWEEN 2 << 48 AND (3 << 48) - 1");
    char *out = check_agreement(db);
    CHECK_MSG(out && strstr(out, "its decision row"), "%s", out);
    CHECK_NEAR(reads_share(out, 2), share_from_rows(db, 2), 1e-9);
    CHECK_NEAR(reads_share(out, 1), share_from_rows(db, 1), 1e-9);
    free(out);
}

/* compare of one run, its totals tampered by `sql`: a note naming the
 * table, and the AHA row's tp the rows give. */
static void check_one_run(const char *name, const char *sql, const char *table) {
    const char *db = test_tmp(name);
    two_runs(db);
    test_db_exec(db, sql);
    int st;
    char *out = test_runf(&st, "%s compare --db %s --run 1 --predictor aha 2>&1", test_bin(), db);
    char note[64];
    snprintf(note, sizeof note, "note: run 1's %s row", table);
    CHECK_MSG(st == 0 && out && strstr(out, note), "want '%s' in: %s", note, out);
    long long tp = test_db_scalar(db, "SELECT SUM(predicted AND oracle) FROM predictions WHERE run_id = 1 AND"
                                      " predictor = 'aha' AND predicted IS NOT NULL AND oracle IS NOT NULL");
    double cells[2] = {-1, -1};
    CHECK_INT(table_row(out, "every predictor vs the oracle", "aha", cells, 2), 2);
    CHECK_MSG((long long)cells[1] == tp, "aha's tp: %g printed, the rows count %lld: %s", cells[1], tp, out);
    CHECK_MSG(out && !strstr(out, "-1000") && !strstr(out, "\n9 "), "a tampered number was printed: %s", out);
    CHECK_NEAR(reads_share(out, 1), share_from_rows(db, 1), 1e-9);
    free(out);
}

TEST(summaries_negative_total_is_counted_from_the_rows) {
    check_one_run("sum_negative.db", "UPDATE head_totals SET tp = -1000 WHERE run_id = 1 AND predictor = 'aha'", "head_totals");
    check_one_run("sum_negative_n.db", "UPDATE head_totals SET n = -1000, global = -1000 WHERE run_id = 1 AND"
                  " predictor IN ('executed', 'aha') AND layer = 0 AND head = 0", "head_totals");
}

/* A head L9 H99 a 5 x 8 model does not have. */
TEST(summaries_cell_outside_the_shape_is_not_shown) {
    check_one_run("sum_outside.db", "INSERT INTO head_stats(run_id, layer, head, n, keys_read) VALUES(1, 9, 99, 10, 0);"
                  " INSERT INTO head_totals(run_id, layer, head, predictor, n, global, tp, fp, fn, tn)"
                  " VALUES(1, 9, 99, 'aha', 10, 10, 10, 0, 0, 0)", "head_totals");
}

/* calibrate's per-head oracle rates (head_rates) when the oracle's totals
 * are scaled: the rates the rows give (written as a DuoAttention table,
 * one value a head), and a run given twice is refused, naming it. */
TEST(summaries_head_rates_are_the_rows_when_totals_cannot_be) {
    const char *db = test_tmp("sum_rates.db"), *tsv = test_tmp("sum_rates.tsv");
    two_runs(db);
    test_db_exec(db, "UPDATE head_totals SET global = global * 20 + 1 WHERE run_id = 1 AND predictor = 'oracle'");
    int st;
    char *out = test_runf(&st, "%s calibrate --format duo --db %s --run 1 --out %s 2>&1", test_bin(), db, tsv);
    CHECK_MSG(st == 0 && out && strstr(out, "head_totals"), "%s", out);
    free(out);
    char *t = test_read_file(tsv, NULL);
    int layer = 0, checked = 0;
    for (char *line = t ? strtok(t, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char *c = line;
        for (int h = 0; h < H && layer < L; h++) {
            double v = strtod(c, &c);
            char sql[300];
            snprintf(sql, sizeof sql, "SELECT CAST(ROUND(AVG(oracle_logit > 0), 6) * 1000000 AS INTEGER) FROM decided"
                                      " WHERE run_id = 1 AND layer = %d AND head = %d AND oracle_logit IS NOT NULL", layer, h);
            CHECK_NEAR(v, (double)test_db_scalar(db, sql) / 1e6, 1e-9);
            checked++;
        }
        layer++;
    }
    free(t);
    CHECK_INT(checked, L * H);
    out = test_runf(&st, "%s calibrate --format duo --db %s --run 2 --run 2 --out %s 2>&1", test_bin(), db, tsv);
    CHECK_MSG(st != 0 && out && strstr(out, "run 2 is given twice"), "%s", out);
    free(out);
}

/* merge refuses an input whose totals cannot be true, or whose run names
 * a parent the file lacks, naming the input (not the output), before it
 * touches the output: a fresh one is not even created, an existing one
 * keeps its bytes (issue 53 §4 and §5). */
TEST(summaries_merge_refuses_a_tampered_shard) {
    const char *good = test_tmp("sum_good.db"), *bad = test_tmp("sum_bad.db"), *out_db = test_tmp("sum_merged.db");
    const char *copy = test_tmp("sum_merged_copy.db");
    two_runs(good);
    two_runs(bad);
    test_db_fresh(out_db);
    test_db_exec(bad, "UPDATE head_totals SET n = -5 WHERE run_id = 2 AND layer = 1 AND head = 3");
    int st;
    char *out = test_runf(&st, "%s merge --out %s %s %s 2>&1", test_bin(), out_db, good, bad);
    CHECK_MSG(st != 0 && out && strstr(out, bad) && strstr(out, "run 2's head_totals row L1 H3"), "%s", out);
    free(out);
    CHECK_MSG(access(out_db, F_OK) != 0, "a refused merge created %s", out_db);
    free(test_runf(&st, "%s merge --out %s %s && cp %s %s", test_bin(), out_db, good, out_db, copy));
    CHECK_INT(st, 0);
    two_runs(bad);
    test_db_exec(bad, "UPDATE runs SET parent_run_id = 9 WHERE run_id = 2");
    out = test_runf(&st, "%s merge --out %s %s 2>&1", test_bin(), out_db, bad);
    CHECK_MSG(st != 0 && out && strstr(out, bad) && strstr(out, "run 2's parent_run_id 9 names no run") &&
                  !strstr(out, out_db), "%s", out);
    free(out);
    CHECK_MSG(test_same_file(out_db, copy), "a refused merge changed %s", out_db);
}

/* Run `run`'s global share from its decision rows at positions 0 .. upto with a choice. */
static double share_upto(const char *db, int run, int upto) {
    char sql[300];
    snprintf(sql, sizeof sql, "SELECT CAST(ROUND(AVG(d.gate), 4) * 10000 AS INTEGER) FROM decisions d JOIN tokens t"
                              " USING(run_id, pos) WHERE d.run_id = %d AND t.n_far > 0 AND d.pos <= %d", run, upto);
    return (double)test_db_scalar(db, sql) / 10000;
}

/* Run 1 shorter than run 2 (as a child is while it is written): the reads
 * table counts the positions both have for both runs, and says which;
 * before, run 2's row counted all of its positions (issue 52's D). */
TEST(summaries_reads_of_two_runs_count_the_positions_both_have) {
    const char *db = test_tmp("sum_short.db");
    two_runs(db);
    test_db_exec(db, "DELETE FROM decision_bits WHERE k >= (1 << 48) + (16 << 28) AND k < 2 << 48;"
                     " DELETE FROM tokens WHERE run_id = 1 AND pos >= 16; UPDATE runs SET n_tokens = 16 WHERE run_id = 1");
    CHECK(fabs(share_upto(db, 2, 15) - share_upto(db, 2, N - 1)) > 1e-4); /* the range matters */
    int st;
    char *out = test_runf(&st, "%s compare --db %s --run 1 --run 2 2>&1", test_bin(), db);
    CHECK_MSG(st == 0 && out && strstr(out, "over positions 0-15 (the positions both runs have)"), "%s", out);
    CHECK_NEAR(reads_share(out, 1), share_upto(db, 1, 15), 1e-9);
    CHECK_NEAR(reads_share(out, 2), share_upto(db, 2, 15), 1e-9);
    free(out);
}

/* An evaluation whose kl_mean was scaled below zero: eval --from-db and
 * merge refuse it, naming the file, the evaluation and the column. */
TEST(summaries_eval_from_db_refuses_a_negative_kl) {
    SKIP_UNLESS_SHARED();
    const char *db = test_tmp("sum_eval.db"), *merged = test_tmp("sum_eval_merged.db");
    test_db_fresh(db), test_db_fresh(merged);
    int st;
    char *out = test_runf(&st, "%s eval --self 2 --seq-len 24 --routers random:3 --window 8 --theta 0.2 --db %s --model %s"
                          " 2>&1", test_bin(), db, test_stories_model());
    CHECK_MSG(st == 0, "%s", out);
    free(out);
    CHECK(test_db_scalar(db, "SELECT COUNT(*) FROM evals WHERE kl_mean > 0") > 0);
    test_db_exec(db, "UPDATE evals SET kl_mean = kl_mean * -3 WHERE kl_mean > 0");
    out = test_runf(&st, "%s eval --from-db %s --model %s 2>&1", test_bin(), db, test_stories_model());
    CHECK_MSG(st != 0 && out && strstr(out, db) && strstr(out, "evaluation ") && strstr(out, "kl_mean -") &&
                  strstr(out, "is negative"), "%s", out);
    free(out);
    out = test_runf(&st, "%s merge --out %s %s 2>&1", test_bin(), merged, db);
    CHECK_MSG(st != 0 && out && strstr(out, "evals row: kl_mean -"), "%s", out);
    free(out);
}

/* --static-heads calib:DB#2,2,2 would pool run 2 three times without a
 * word: refused, naming the run (issue 53 §5). */
TEST(summaries_calib_spec_refuses_a_repeated_run) {
    SKIP_UNLESS_SHARED();
    const char *db = test_tmp("sum_calib.db");
    two_runs(db);
    int st;
    char *out = test_runf(&st, "%s eval --policy static --static-heads 'calib:%s#2,2,2' --budget 2 --self 1 --seq-len 16"
                          " --window 8 --model %s 2>&1", test_bin(), db, test_stories_model());
    CHECK_MSG(st != 0 && out && strstr(out, "run 2 is given twice"), "%s", out);
    free(out);
}
