/* test_trace.c — StepTrace: a new one starts uncomputed, and copies whole. */
#include "tests/test.h"
#include "engine/trace.h"

TEST(trace_new_starts_uncomputed_and_copies) {
    StepTrace *t = trace_new(5, 8);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_INT(trace_cells(t), 40);
    CHECK(isnan(t->score[39]) && t->keys_read[0] == -1 && t->gate[7] == -1);
    t->score[3] = 0.25f; t->gate[39] = 1; t->keys_read[10] = 7; t->pos = 4;
    StepTrace *u = trace_new(5, 8);
    trace_copy(u, t);
    CHECK(u->score != t->score);
    CHECK_NEAR(u->score[3], 0.25, 0);
    CHECK_INT(u->gate[39], 1);
    CHECK_INT(u->keys_read[10], 7);
    CHECK_INT(u->pos, 4);
    CHECK(trace_new(0, 3) == NULL);
    trace_free(t); trace_free(u);
}
