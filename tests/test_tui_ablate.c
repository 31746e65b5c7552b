/* test_tui_ablate.c — the ablation's force mask, the engine half of the TUI's ablation in place.
 *
 * An ablation forces chosen heads local or global from a position on
 * (AttnConfig.force, decide_forced): the parse of its settings text, and a
 * forward pass on stories260K whose recorded gates obey it from that
 * position on and only there, while the output changes; and the TUI's `!`
 * key, which re-runs the tokens as a child run with the selected head forced. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/decide.h"
#include "engine/session.h"
#include "tests/stories.h"
#include "tests/test.h"
#include "tests/tmux.h"

TEST(tui_ablate_parses_heads_layers_and_the_position) {
    int8_t f[3 * 4];
    int from = -1;
    Err e;
    CHECK_INT(decide_force_parse("L2H1=local@496", 3, 4, f, &from, &e), 0);
    CHECK_INT(from, 496);
    for (int c = 0; c < 12; c++) CHECK_INT(f[c], c == 2 * 4 + 1 ? 0 : -1);
    CHECK_INT(decide_force_parse("L1=global,L1H3=local", 3, 4, f, &from, &e), 0);
    CHECK_INT(from, 0);
    CHECK(f[4] == 1 && f[5] == 1 && f[6] == 1 && f[7] == 0 && f[0] == -1 && f[8] == -1);
    CHECK_INT(decide_forced(f, 10, 9, 4), -1);
    CHECK_INT(decide_forced(f, 10, 10, 4), 1);
    CHECK_INT(decide_forced(NULL, 0, 10, 4), -1);
    static const char *bad[] = {"", "L3H0=local", "L0H4=local", "L0H-1=local", "L0=both", "H1=local", "L0=local@x",
                                "L0=local@-2", "L0local"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_MSG(decide_force_parse(bad[i], 3, 4, f, &from, &e) == -1, "\"%s\" accepted", bad[i]);
        CHECK_MSG(!strncmp(e.msg, "ablate: ", 8), "\"%s\": %s", bad[i], e.msg);
    }
}

/* The force map written back as text (runs.ablate) parses to the same
 * map: a head, a whole layer, the position; nothing forced is "". */
TEST(tui_ablate_text_of_a_force_parses_back) {
    static const char *const specs[] = {"L2H1=local@496", "L1=global,L0H3=local", "L0H0=global@1", "L2=local@7"};
    static const char *const texts[] = {"L2H1=local@496", "L0H3=local,L1=global", "L0H0=global@1", "L2=local@7"};
    int8_t f[3 * 4], g[3 * 4];
    char buf[64];
    Err e;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        int from = -1, from2 = -1;
        CHECK_INT(decide_force_parse(specs[i], 3, 4, f, &from, &e), 0);
        CHECK_INT(decide_force_format(f, from, 3, 4, buf, sizeof buf), 0);
        CHECK_MSG(!strcmp(buf, texts[i]), "%s written as %s", specs[i], buf);
        CHECK_INT(decide_force_parse(buf, 3, 4, g, &from2, &e), 0);
        CHECK(from2 == from && !memcmp(f, g, sizeof f));
    }
    memset(f, -1, sizeof f);
    CHECK_INT(decide_force_format(f, 5, 3, 4, buf, sizeof buf), 0);
    CHECK_MSG(buf[0] == 0, "nothing forced: '%s'", buf);
    CHECK_INT(decide_force_format(NULL, 0, 3, 4, buf, sizeof buf), 0);
    CHECK(buf[0] == 0);
    CHECK_INT(decide_force_parse("L0H0=local,L1H1=local,L2H2=local@100", 3, 4, f, &(int){0}, &e), 0);
    CHECK_INT(decide_force_format(f, 100, 3, 4, buf, 12), -1); /* too long: nothing rather than a cut spec */
    CHECK(buf[0] == 0);
}

/* Prefill n ids under a; the traces and the last logits. */
static int run(const Model *m, const AttnConfig *a, const int *ids, int n, StepTrace **tr, float *last) {
    Session s;
    Err e;
    if (session_init(&s, m, NULL, a, m->c.seq_len, 0, 0.9f, 1, 1, &e) || session_start_ids(&s, ids, n, &e)) {
        test_fail(__FILE__, __LINE__, "%s", e.msg);
        return -1;
    }
    for (int i = 0; i < n; i++) tr[i] = trace_new(m->c.n_layers, m->c.n_heads);
    int fed = session_prefill(&s, tr);
    memcpy(last, s.prev_logits, (size_t)m->c.vocab_size * sizeof *last);
    session_free(&s);
    return fed == n ? 0 : -1;
}

TEST(tui_ablate_forces_the_gate_from_its_position_on) {
    SKIP_UNLESS_SHARED();
    Model m;
    Err e;
    if (test_load_stories(&m, NULL, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    enum { N = 96, FROM = 40 };
    int ids[N];
    ids[0] = 1;
    for (int i = 1; i < N; i++) ids[i] = 3 + (i * 37) % (m.c.vocab_size - 3);
    AttnConfig a = aha_defaults();
    a.policy = POLICY_FULL, a.window = 8;
    int cells = m.c.n_layers * m.c.n_heads;
    int8_t *force = malloc((size_t)cells);
    int from;
    CHECK_INT(decide_force_parse("L1H0=local,L2=local@40", m.c.n_layers, m.c.n_heads, force, &from, &e), 0);
    StepTrace *base[N] = {0}, *abl[N] = {0};
    float *lb = malloc(m.c.vocab_size * sizeof *lb), *la = malloc(m.c.vocab_size * sizeof *la);
    AttnConfig b = a;
    b.force = force, b.force_from = from;
    CHECK_INT(aha_same_execution(&a, &b), 0);
    if (run(&m, &a, ids, N, base, lb) == 0 && run(&m, &b, ids, N, abl, la) == 0) {
        int wrong = 0;
        for (int t = 0; t < N; t++)
            for (int c = 0; c < cells; c++) {
                int want = t >= FROM && force[c] >= 0 ? force[c] : 1; /* the full policy: global */
                if (abl[t]->gate[c] >= 0 && abl[t]->gate[c] != want) wrong++;
            }
        CHECK_MSG(wrong == 0, "%d gates disobey the force", wrong);
        CHECK_INT(abl[N - 1]->gate[1 * m.c.n_heads + 0], 0);
        double before = 0, after = 0;
        for (int i = 0; i < m.c.vocab_size; i++) after = fmax(after, fabs(la[i] - lb[i]));
        for (int t = 0; t < FROM; t++) before = fmax(before, fabs(abl[t]->logprob - base[t]->logprob));
        CHECK_MSG(before == 0, "positions before %d changed by %g", FROM, before);
        CHECK_MSG(after > 1e-3, "forcing three heads local changed the last logits by only %g", after);
    }
    for (int t = 0; t < N; t++) trace_free(base[t]), trace_free(abl[t]);
    free(force), free(lb), free(la);
    model_free(&m);
}

/* `!` on stories260K: a child run of the same tokens, linked to its parent,
 * with the selected head (L0 H0) forced the other way from the cursor on. */
TEST(tui_ablate_key_makes_a_linked_child_run) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "ablatekey", 120, 40, NULL, "--policy full"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "Space Space Space Space Space");
    TMUX_WAIT(&t, "pos 9/512", 5);
    tmux_keys(&t, "!");
    TMUX_WAIT(&t, "L0H0=local@9", 5);
    /* the parent stays on screen (at pos 9) while the child computes: its
     * steps have arrived only when the status names the new run */
    TMUX_WAIT(&t, "run 2: ablate L0H0=local@9", 30);
    TMUX_WAIT(&t, "pos 9/512", 10);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    int st;
    char *r = test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT run_id, parent_run_id, n_tokens FROM runs\"",
                        test_bin_abs(), t.dir);
    CHECK_MSG(r && strstr(r, "2,1,10"), "runs: %s", r);
    free(r);
    /* the child records what it forced; the parent ran under none */
    r = test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT run_id, COALESCE(ablate, '-') FROM runs\"",
                  test_bin_abs(), t.dir);
    CHECK_MSG(st == 0 && r && strstr(r, "1,-") && strstr(r, "2,L0H0=local@9"), "ablate: %s", r);
    free(r);
    r = test_runf(&st, "%s runs --db %s/ahascope.db", test_bin_abs(), t.dir);
    CHECK_MSG(st == 0 && r && strstr(r, "L0H0=local@9"), "runs: %s", r);
    free(r);
    tmux_stop(&t);
}
