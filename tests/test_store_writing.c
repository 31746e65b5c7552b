/* test_store_writing.c — a run still being written says so wherever it is shown.
 *
 * A run still being written says so wherever it is
 * shown (store_list_runs, `ahascope runs`, compare), and a diff against it
 * covers only the positions both runs have. */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "test.h"

enum { L = 2, H = 3, N_PARENT = 20, N_CHILD = 12 };

/* A step whose gates follow pos and cell, and whose oracle calls every
 * head global, so the runs' diffs have something to count. */
static StepTrace *step_at(int pos) {
    StepTrace *t = trace_new(L, H);
    if (!t) return NULL;
    t->pos = pos, t->token = 10 + pos % 7, t->is_prompt = pos < 2;
    snprintf(t->piece, sizeof t->piece, " p%d", pos);
    t->n_far = pos, t->n_kv_heads = H;
    for (int i = 0; i < L * H; i++) t->gate[i] = (int8_t)((pos + i) % 2), t->oracle_logit[i] = 1, t->keys_read[i] = 1;
    return t;
}

/* Begin a run (parent 0: none) and write its first n positions. */
static int64_t write_run(Store *s, int64_t parent, int n) {
    Err e;
    StoreRunInfo r;
    memset(&r, 0, sizeof r);
    snprintf(r.model, sizeof r.model, "test.bin");
    r.program_version = "test";
    snprintf(r.policy, sizeof r.policy, "aha");
    r.n_layers = L, r.n_heads = H, r.n_kv_heads = H, r.seq_len = 64, r.window = 4, r.steps = 64;
    r.parent_run_id = parent, r.prompt = "x";
    CHECK_MSG(store_run_begin(s, &r, &e) == 0, "%s", e.msg);
    for (int pos = 0; pos < n; pos++) {
        StepTrace *t = step_at(pos);
        CHECK_MSG(t && store_write_step(s, r.run_id, t, NULL, &e) == 0, "%s", e.msg);
        trace_free(t);
    }
    return r.run_id;
}

static const char *bin(void) { return getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope"; }

/* What store_list_runs (list) or store_compare of a and b prints, as a heap string. */
static char *printed(Store *s, int64_t a, int64_t b, int list) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    Err e;
    int rc = list ? store_list_runs(s, STORE_FMT_TABLE, f, &e) : store_compare(s, a, b, NULL, f, &e);
    fclose(f);
    CHECK_MSG(rc == 0, "%s", e.msg);
    return text;
}

TEST(store_run_being_written_says_how_far_and_diffs_the_common_positions) {
    const char *db = test_tmp("writing.db");
    Err e;
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (!s) return;
    int64_t parent = write_run(s, 0, N_PARENT);
    CHECK(store_run_end(s, parent, "done", &e) == 0);
    int64_t child = write_run(s, parent, N_CHILD); /* left 'running': this process is its live writer */
    CHECK(store_flush(s, &e) == 0);
    Store *r = store_open(db, STORE_READ, 1000, &e);
    CHECK_MSG(r != NULL, "%s", e.msg);
    if (!r) { store_close(s, NULL); return; }

    StoreRunProgress p;
    CHECK_INT(store_run_progress(r, child, &p, &e), 0);
    CHECK_INT(p.writing, 1);
    CHECK_INT(p.n_tokens, N_CHILD);
    CHECK_INT(p.target, N_PARENT); /* a re-evaluation's target: its parent's positions */
    char line[160];
    CHECK_INT(store_run_writing_line(child, &p, line, sizeof line), 1);
    CHECK_MSG(!strcmp(line, "run 2 is being written: 12 of 20 positions"), "%s", line);
    CHECK_INT(store_run_progress(r, parent, &p, &e), 0);
    CHECK_INT(p.writing, 0);
    CHECK_INT(store_run_writing_line(parent, &p, line, sizeof line), 0);

    char *list = printed(r, 0, 0, 1);
    CHECK_MSG(list && strstr(list, "\nrun 2 is being written: 12 of 20 positions\n") && !strstr(list, "run 1 is being"),
              "%s", list ? list : "");
    free(list);
    int st;
    char *cli = test_runf(&st, "%s runs --db %s", bin(), db);
    CHECK_MSG(st == 0 && cli && strstr(cli, "run 2 is being written: 12 of 20 positions"), "%s", cli ? cli : "");
    free(cli);
    cli = test_runf(&st, "%s runs --db %s --csv", bin(), db);
    CHECK_MSG(st == 0 && cli && !strstr(cli, "being written"), "the CSV keeps its shape: %s", cli ? cli : "");
    free(cli);

    char *diff = printed(r, parent, child, 0);
    CHECK_MSG(diff && strstr(diff, "diff over positions 0-11: run 2 is still being written (12 of 20 positions)\n"),
              "%s", diff ? diff : "");
    /* the gates are compared over those positions only: 6 heads x (12 - 1) positions with far keys */
    CHECK_MSG(diff && strstr(diff, "of 66 decisions"), "%s", diff ? diff : "");
    free(diff);
    diff = printed(r, child, parent, 0); /* either order */
    CHECK_MSG(diff && strstr(diff, "diff over positions 0-11: run 2 is still being written"), "%s", diff ? diff : "");
    free(diff);

    CHECK(store_run_end(s, child, "done", &e) == 0); /* done: nothing more is said */
    list = printed(r, 0, 0, 1);
    CHECK_MSG(list && !strstr(list, "being written"), "%s", list ? list : "");
    free(list);
    diff = printed(r, parent, child, 0);
    CHECK_MSG(diff && !strstr(diff, "diff over positions") && strstr(diff, "of 66 decisions"), "%s", diff ? diff : "");
    free(diff);
    store_close(r, NULL);
    store_close(s, NULL);
}
