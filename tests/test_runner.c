/* test_runner.c — the runner's own rules: the filter words, whose WORD and
 * -WORD split the suite in two parts that hold every test once. */
#include "tests/test.h"

TEST(runner_filter_words_take_and_minus_words_leave_out) {
    char *none[] = {"run_tests"};
    char *tui[] = {"run_tests", "test_tui"};
    char *not_tui[] = {"run_tests", "-test_tui"};
    char *both[] = {"run_tests", "store", "-kill9"};
    char *dash[] = {"run_tests", "-"}; /* a bare "-" is a word like any other */
    CHECK(test_filter_wants("store_a", "tests/test_store.c", 1, none));
    CHECK(test_filter_wants("tui_a", "tests/test_tui_keys3.c", 2, tui));
    CHECK(!test_filter_wants("store_a", "tests/test_store.c", 2, tui));
    /* a WORD and its -WORD: each test in exactly one part */
    static const char *const cases[][2] = {{"tui_a", "tests/test_tui.c"}, {"tui_b", "tests/test_tui_heads.c"},
                                           {"store_a", "tests/test_store.c"}, {"views_tui_like", "tests/test_views.c"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(test_filter_wants(cases[i][0], cases[i][1], 2, tui) + test_filter_wants(cases[i][0], cases[i][1], 2, not_tui) == 1,
                  "%s is in %s lanes", cases[i][0], test_filter_wants(cases[i][0], cases[i][1], 2, tui) ? "both" : "neither");
    CHECK(test_filter_wants("store_b", "tests/test_store.c", 3, both));
    CHECK(!test_filter_wants("store_cli_kill9_ten_times", "tests/test_store_cli.c", 3, both));
    CHECK(!test_filter_wants("eval_a", "tests/test_eval.c", 3, both));
    CHECK(!test_filter_wants("eval_a", "tests/test_eval.c", 2, dash));
}
