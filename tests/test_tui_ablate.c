/* test_tui_ablate.c — the ablation's force mask, the engine half of the TUI's ablation in place.
 *
 * An ablation forces chosen heads local or global from a position on
 * (AttnConfig.force, decide_forced): the parse of its settings text, and a
 * forward pass on stories260K whose recorded gates obey it from that
 * position on and only there, while the output changes; and the TUI's `!`
 * key, which re-runs the tokens as a child run with the selected head forced
 * and then shows what that changed (app/ablate_diff.h): on stories260K its
 * numbers against ablate_diff_run on the recorded tokens, on the organism's
 * passkey item the answer the copying head L2 H1 no longer copies, at 80x24
 * and 140x45. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/ablate_diff.h"
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
    TMUX_QUIT(&t, 5); /* q closes the pane on top first */
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

/* The run's tokens as recorded in db, into ids (n of them); -1 on failure. */
static int recorded_ids(const char *dir, int64_t run, int *ids, int cap) {
    int st, n = 0;
    char *r = test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT token_id FROM tokens WHERE run_id = %lld "
                             "ORDER BY pos\"", test_bin_abs(), dir, (long long)run);
    for (char *line = r ? strchr(r, '\n') : NULL; line && n < cap; line = strchr(line + 1, '\n'))
        if (sscanf(line + 1, "%d", &ids[n]) == 1) n++;
    free(r);
    return st == 0 && n > 0 ? n : -1;
}

/* The pane's line for position `label` ("start"): its −log p and KL. */
static int screen_numbers(const char *scr, const char *label, int pos, double *a, double *b, double *kl) {
    char want[48];
    snprintf(want, sizeof want, "%-5s pos %d -> ", label, pos);
    const char *at = scr ? strstr(scr, want) : NULL, *k = at ? strstr(at, "  KL ") : NULL;
    const char *lp = k ? strstr(k, "-log p parent ") : NULL;
    if (!lp || sscanf(k, "  KL %lf", kl) != 1 || sscanf(lp, "-log p parent %lf child %lf", a, b) != 2) return -1;
    return 0;
}

/* `!` on stories260K (full attention, w 1, L0 H0 forced local from pos 12):
 * the pane's numbers are those of ablate_diff_run on the tokens recorded. */
static void ablate_numbers_at(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "ablatekl%d", cols);
    CHECK_INT(tmux_open_stories(&t, name, cols, rows, NULL, "--policy full --window 1"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 16; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 20/512", 10);
    for (int i = 0; i < 8; i++) tmux_keys(&t, "[");
    TMUX_WAIT(&t, "pos 12/512", 5);
    tmux_keys(&t, "!");
    TMUX_WAIT(&t, "run 2: ablate L0H0=local@12 \xc2\xb7 pos 12: KL ", 30);
    char *scr = tmux_wait(&t, "largest KL ", 10);
    double a = NAN, b = NAN, kl = NAN, top_kl = NAN;
    int top = -1;
    CHECK_MSG(screen_numbers(scr, "start", 12, &a, &b, &kl) == 0, "no start line:\n%s", scr ? scr : "");
    const char *lk = scr ? strstr(scr, "largest KL ") : NULL;
    CHECK(lk && sscanf(lk, "largest KL %lf at pos %d", &top_kl, &top) == 2);
    int same = scr && strstr(scr, "the continuation is unchanged for 16 tokens") != NULL;
    int split = -1;
    const char *ch = scr ? strstr(scr, "changes at its token ") : NULL;
    if (ch) sscanf(ch, "changes at its token %d", &split);
    for (int down = 0; down < 8 && !same && split < 0; down++) { /* 80x24 shows 6 lines of it: scroll */
        tmux_keys(&t, "Down");
        usleep(300000);
        free(scr);
        scr = tmux_capture(&t);
        same = scr && strstr(scr, "the continuation is unchanged for 16 tokens") != NULL;
        ch = scr ? strstr(scr, "changes at its token ") : NULL;
        if (ch) sscanf(ch, "changes at its token %d", &split);
    }
    CHECK_MSG(same || split > 0, "no continuation line:\n%s", scr ? scr : "");
    free(scr);
    TMUX_QUIT(&t, 5); /* q closes the pane on top first */
    Model m;
    Err e;
    int ids[64], n = recorded_ids(t.dir, 1, ids, 64);
    CHECK_INT(n, 21);
    if (n == 21 && test_load_stories(&m, NULL, &e) == 0) {
        AttnConfig pa = aha_defaults(), cf;
        pa.policy = POLICY_FULL, pa.window = 1;
        int8_t *f = malloc((size_t)m.c.n_layers * m.c.n_heads);
        memset(f, -1, (size_t)m.c.n_layers * m.c.n_heads);
        f[0] = 0;
        cf = pa, cf.force = f, cf.force_from = 12;
        AblateDiff d;
        CHECK_INT(ablate_diff_run(&m, &pa, &cf, ids, n, 12, 16, 1, NULL, NULL, &d, &e), 0);
        CHECK_MSG(fabs(a - d.nll_parent[0]) < 0.0011 && fabs(b - d.nll_child[0]) < 0.0011,
                  "screen -log p %.3f, %.3f; recount %.5f, %.5f", a, b, d.nll_parent[0], d.nll_child[0]);
        CHECK_MSG(fabs(kl - d.kl[0]) < 0.00011, "screen KL %.4f, recount %.6f", kl, d.kl[0]);
        int want = ablate_diff_argmax(&d);
        CHECK_MSG(top == want && fabs(top_kl - d.kl[want - 12]) < 0.00011, "largest KL %.4f at %d; recount %.6f at %d",
                  top_kl, top, want >= 12 ? d.kl[want - 12] : NAN, want);
        CHECK_MSG(d.kl[want - 12] > 1e-3, "forcing L0 H0 local changed almost nothing: KL %g", d.kl[want - 12]);
        CHECK_INT(split, ablate_diff_cont_split(&d) < 0 ? -1 : ablate_diff_cont_split(&d) + 1);
        ablate_diff_free(&d);
        free(f);
        model_free(&m);
    }
    tmux_stop(&t);
}

TEST(tui_ablate_shows_kl_and_logp_as_recounted_80x24) { ablate_numbers_at(80, 24); }

TEST(tui_ablate_shows_kl_and_logp_as_recounted_140x45) { ablate_numbers_at(140, 45); }

/* `!` on the organism's passkey item with L2 H1, the head that copies the
 * needle, selected at pos 504 (the answer's first digit predicted): forced
 * local, the child no longer continues the passkey 78712 the parent does. */
static void ablate_passkey_at(int cols, int rows) {
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "ablatepk%d", cols);
    SKIP_UNLESS_SHARED();
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    if (tmux_open_passkey(&t, name, cols, rows, NULL, NULL)) return;
    tmux_go_to(&t, "L2 H1");
    TMUX_WAIT(&t, "L2 H1", 5);
    tmux_keys(&t, "[");
    TMUX_WAIT(&t, "pos 504/", 5);
    tmux_keys(&t, "!");
    TMUX_WAIT(&t, "not recorded: ablate L2H1=local@504", 60);
    TMUX_WAIT(&t, "changes at its token 1 of 16", 10);
    if (rows < 40) tmux_keys(&t, "NPage"); /* the two columns are below the pane's first screenful */
    char *scr = tmux_wait(&t, "8712", 10);
    const char *row = scr ? strstr(scr, "8712") : NULL, *bar = row ? strstr(row, " | ") : NULL;
    CHECK_MSG(bar && strncmp(bar + 3, "8712", 4) != 0, "the child continues the passkey too:\n%s", scr ? scr : "");
    free(scr);
    TMUX_QUIT(&t, 5); /* q closes the pane on top first */
    tmux_stop(&t);
}

TEST(tui_ablate_passkey_copying_head_local_changes_the_answer_80x24) { ablate_passkey_at(80, 24); }

TEST(tui_ablate_passkey_copying_head_local_changes_the_answer_140x45) { ablate_passkey_at(140, 45); }

/* Esc while the comparison runs (slowed by the re-evaluation's test knob)
 * stops it, says so, and leaves the child run on screen. */
TEST(tui_ablate_esc_stops_the_comparison) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "ablateesc", 100, 30, "AHASCOPE_TEST_REEVAL_DELAY_MS=300", "--policy full --window 1"),
              0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 8; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 12/512", 10);
    tmux_keys(&t, "!");
    TMUX_WAIT(&t, "run 2: ablate L0H0=local@12 \xc2\xb7 comparing with its parent", 30);
    tmux_keys(&t, "Escape");
    TMUX_WAIT(&t, "ablate L0H0=local@12: its comparison with the parent was stopped", 30);
    CHECK_MSG(!tmux_shows(&t, "largest KL", 1), "the comparison showed after Esc");
    TMUX_QUIT(&t, 5); /* q closes the pane on top first */
    int st;
    char *r = test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT run_id, parent_run_id, n_tokens FROM runs\"",
                        test_bin_abs(), t.dir);
    CHECK_MSG(r && strstr(r, "2,1,13"), "runs: %s", r);
    free(r);
    tmux_stop(&t);
}
