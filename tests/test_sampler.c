/* test_sampler.c — the sampler and the session's use of it: a resumed
 * sequence draws where the first left off. */
#include <stdlib.h>
#include <string.h>

#include "engine/session.h"
#include "test.h"

/* Sample a sequence from a prompt, then resume a second session from its
 * first 20 tokens (prompt + 15 generated): the rest must come out the same,
 * as it does for a TUI run re-evaluated midway and for `record`. */
TEST(session_resume_draws_where_sampling_left_off) {
    SKIP_UNLESS_SHARED();
    Model m;
    Tokenizer tok;
    Err e;
    CHECK(model_load(&m, test_shared("models/stories260K/stories260K.bin"), &e) == 0);
    CHECK(tok_load(&tok, test_shared("models/stories260K/tok512.bin"), m.c.vocab_size, &e) == 0);
    AttnConfig a = aha_defaults();
    Session s1, s2;
    CHECK(session_init(&s1, &m, &tok, &a, 60, 1.0f, 0.9f, 12, 1, &e) == 0);
    CHECK(session_start_text(&s1, "Once upon a time", 16, &e) == 0);
    int n_prompt = s1.n_prompt;
    while (session_step(&s1, NULL)) {}
    CHECK(s1.n_ids > 40);
    CHECK(session_init(&s2, &m, &tok, &a, 60, 1.0f, 0.9f, 12, 1, &e) == 0);
    CHECK(session_resume_ids(&s2, s1.ids, 20, n_prompt, &e) == 0);
    while (session_step(&s2, NULL)) {}
    CHECK_INT(s2.n_ids, s1.n_ids);
    int first = -1;
    for (int i = 0; i < s1.n_ids && first < 0; i++)
        if (s1.ids[i] != s2.ids[i]) first = i;
    CHECK_MSG(first < 0, "resumed sequence differs from position %d", first);
    session_free(&s1), session_free(&s2);
    tok_free(&tok);
    model_free(&m);
}
