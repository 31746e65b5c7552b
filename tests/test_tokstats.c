/* test_tokstats.c — token types, rates by type, bookmarks, the picker and the yank, without a terminal.
 *
 * The pure halves of the microscope's counting and
 * copying keys: the token types (a table of pieces), the rates by type
 * against a recount straight from the trace fields, bookmarks and their
 * next / previous with wrapping, the picker's keys, and the text `y`
 * copies (the inspector's block, the text pane's row under its header). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/keymap.h"
#include "views/tokstats.h"
#include "views/yank.h"

TEST(token_kinds_follow_their_one_definition) {
    static const struct { const char *piece; ViewTokKind k; } cases[] = {
        {"Once", VIEW_TOK_WORD},      {" upon", VIEW_TOK_WORD},     {"x2", VIEW_TOK_WORD},
        {"2nd", VIEW_TOK_WORD},       {" caf\xc3\xa9", VIEW_TOK_WORD}, {"\xe4\xb8\xad", VIEW_TOK_WORD},
        {"1200", VIEW_TOK_NUMBER},    {" 3.14", VIEW_TOK_NUMBER},   {"$5", VIEW_TOK_NUMBER},
        {",", VIEW_TOK_PUNCT},        {" .", VIEW_TOK_PUNCT},       {"\xe2\x80\x94", VIEW_TOK_PUNCT}, /* em dash */
        {"\xe2\x80\xa6\"", VIEW_TOK_PUNCT},                          /* ellipsis and a quote */
        {"", VIEW_TOK_SPACE},         {" ", VIEW_TOK_SPACE},        {"\n\n", VIEW_TOK_SPACE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(view_token_kind(cases[i].piece) == cases[i].k, "\"%s\": %s, expected %s", cases[i].piece,
                  view_token_kind_name(view_token_kind(cases[i].piece)), view_token_kind_name(cases[i].k));
    CHECK(!strcmp(view_token_kind_name(VIEW_TOK_PUNCT), "punctuation"));
}

/* A 2 x 3-head run whose values follow simple formulas: positions 0-1 have
 * no choice (no far keys), 0-3 are the prompt. */
enum { TL = 2, TH = 3, TN = 40 };
static const char *const PIECES[] = {"Once", " upon", ",", " 12", " upon", "\n", " upon", "."};

static StepTrace *make_step(int p) {
    StepTrace *t = trace_new(TL, TH);
    trace_clear(t);
    t->pos = p, t->token = p, t->is_prompt = p < 4, t->n_far = p < 2 ? 0 : 5;
    snprintf(t->piece, sizeof t->piece, "%s", PIECES[p % 8]);
    for (int c = 0; c < TL * TH; c++) {
        t->score[c] = (float)((p * 7 + c * 3) % 10) / 10.0f;
        t->gate[c] = t->score[c] > 0.45f;
        t->oracle_logit[c] = (float)(((p * 5 + c) % 9) - 4); /* -4 … 4 */
    }
    return t;
}

/* The recount: group membership and the three rates from the fields. */
static void recount(int group, int cell_or_all, double want[6], float tau, double theta) {
    memset(want, 0, 6 * sizeof *want);
    for (int p = 0; p < TN; p++) {
        StepTrace *t = make_step(p);
        int kind = !strcmp(t->piece, ",") || !strcmp(t->piece, ".") ? VIEW_TOK_PUNCT
                   : !strcmp(t->piece, " 12")                         ? VIEW_TOK_NUMBER
                   : !strcmp(t->piece, "\n")                          ? VIEW_TOK_SPACE
                                                                      : VIEW_TOK_WORD;
        int in = group == VIEW_TOKS_PROMPT ? t->is_prompt
                 : group == VIEW_TOKS_GENERATED ? !t->is_prompt
                                                : kind == group - VIEW_TOKS_KIND0;
        for (int c = 0; in && c < TL * TH; c++) {
            if (cell_or_all >= 0 && c != cell_or_all) continue;
            if (t->n_far == 0) continue; /* no choice: counts in no rate */
            int o = t->oracle_logit[c] > theta, a = t->score[c] > tau;
            want[0] += t->gate[c], want[1]++, want[2] += o, want[3]++, want[4] += a == o, want[5]++;
        }
        trace_free(t);
    }
}

TEST(token_stats_match_a_recount_from_the_fields) {
    const float tau = 0.5f;
    const double theta = 0.5;
    ViewTokStats s;
    view_tokstats_begin(&s, TL, TH, 1, 2, DECIDE_AHA, tau, theta);
    for (int p = 0; p < TN; p++) {
        StepTrace *t = make_step(p);
        CHECK_INT(view_tokstats_add(&s, t), 0);
        trace_free(t);
    }
    CHECK_INT(s.n, TN);
    CHECK_INT(s.count[VIEW_TOKS_PROMPT], 4);
    CHECK_INT(s.count[VIEW_TOKS_GENERATED], TN - 4);
    CHECK_INT(s.count[VIEW_TOKS_KIND0 + VIEW_TOK_PUNCT], TN / 4);
    CHECK_INT(s.count[VIEW_TOKS_KIND0 + VIEW_TOK_NUMBER], TN / 8);
    for (int g = 0; g < VIEW_TOKS_GROUPS; g++)
        for (int pooled = 0; pooled < 2; pooled++) {
            double want[6];
            recount(g, pooled ? -1 : 1 * TH + 2, want, tau, theta);
            const ViewRates *r = pooled ? &s.all_rates[g] : &s.head_rates[g];
            double got[6] = {r->global, r->decided, r->oracle, r->labelled, r->agree, r->compared};
            for (int k = 0; k < 6; k++)
                CHECK_MSG(got[k] == want[k], "group %d %s field %d: %g, recount %g", g, pooled ? "all" : "head", k,
                          got[k], want[k]);
        }
    /* " upon" is the most frequent piece (3 of every 8), first in the list */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    view_tokstats_print(&s, f, 3, 1);
    fclose(f);
    const char *upon = text ? strstr(text, "\" upon\"") : NULL;
    CHECK_MSG(text && !strncmp(text, "type ", 5) && strstr(text, "\n-----") && upon, "%s", text ? text : "");
    CHECK_MSG(upon && strstr(upon, "    15 "), "%s", text ? text : ""); /* 15 of 40 */
    CHECK_MSG(text && strstr(text, "\nprompt ") && strstr(text, "\ngenerated ") && strstr(text, "\nwhitespace "),
              "%s", text ? text : "");
    /* the prompt's first two positions had no choice, so its rates count two positions only */
    double want[6];
    recount(VIEW_TOKS_PROMPT, 1 * TH + 2, want, tau, theta);
    CHECK_INT((int)want[1], 2);
    int lines = 0;
    for (const char *p = text; p && *p; p++) lines += *p == '\n';
    CHECK_INT(lines, 2 + VIEW_TOKS_GROUPS + 3);
    free(text);
    view_tokstats_free(&s);
}

TEST(bookmarks_toggle_and_wrap_both_ways) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    fx_fill(&m, 30);
    CHECK_INT(view_bookmark_next(&m, 0, 1), -1);
    view_bookmark_jump(&m, 1);
    CHECK_MSG(strstr(m.status, "no bookmarks"), "%s", m.status);
    ViewMark needle = {12, VIEW_MARK_NEEDLE};
    CHECK_INT(view_set_marks(&m, &needle, 1, NULL), 0);
    CHECK_INT(view_bookmark_toggle(&m, 20), 1);
    CHECK_INT(view_bookmark_toggle(&m, 5), 1);
    CHECK_INT(view_bookmark_toggle(&m, 12), 1);  /* over the needle: the bookmark shows, the needle stays */
    CHECK_INT(view_mark_at(&m, 12), VIEW_MARK_BOOKMARK);
    CHECK_INT(view_bookmark_toggle(&m, 99), -1); /* no token there */
    CHECK_INT(view_bookmark_next(&m, 5, 1), 12);
    CHECK_INT(view_bookmark_next(&m, 20, 1), 5); /* wraps */
    CHECK_INT(view_bookmark_next(&m, 5, -1), 20);
    CHECK_INT(view_bookmark_next(&m, 13, -1), 12);
    m.cursor = 13;
    view_bookmark_jump(&m, 1);
    CHECK_INT(m.cursor, 20);
    CHECK_MSG(strstr(m.status, "bookmark 3 of 3: pos 20"), "%s", m.status);
    view_bookmark_jump(&m, -1);
    CHECK_INT(m.cursor, 12);
    CHECK_INT(view_bookmark_toggle(&m, 12), 0);  /* dropped: the needle is back */
    CHECK_INT(view_mark_at(&m, 12), VIEW_MARK_NEEDLE);
    CHECK(view_has_mark(&m, VIEW_MARK_BOOKMARK) && view_has_mark(&m, VIEW_MARK_NEEDLE));
    CHECK(!view_has_mark(&m, VIEW_MARK_QUESTION));
    CHECK_INT(view_mark_in(&m, 0, 10), VIEW_MARK_BOOKMARK);
    /* the key asks the app, which toggles at the cursor (12) and keeps it beside the run */
    CHECK_INT(view_key(&m, 'b'), VIEW_ACT_BOOKMARK);
    CHECK_INT(view_mark_at(&m, 12), VIEW_MARK_NEEDLE);
    CHECK_INT(view_bookmark_toggle(&m, m.cursor), 1);
    CHECK_INT(view_mark_at(&m, 12), VIEW_MARK_BOOKMARK);
    view_key(&m, '"');
    CHECK_INT(m.cursor, 5);
    view_key(&m, '\'');
    CHECK_INT(m.cursor, 12);
    view_free(&m);
}

TEST(picker_moves_wraps_chooses_and_cancels) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    const char *items[] = {"aha", "full", "local"};
    view_pick_open(&m, "policy", items, 3, 1);
    CHECK(m.pick.open && m.pick.sel == 1 && !strcmp(m.pick.item[2], "local"));
    CHECK_INT(view_pick_key(&m, 'P', 'P'), VIEW_PICK_MOVED);
    CHECK_INT(m.pick.sel, 2);
    view_pick_key(&m, 'P', 'P');
    CHECK_INT(m.pick.sel, 0); /* wraps */
    view_pick_key(&m, KEY_UP, 'P');
    CHECK_INT(m.pick.sel, 2);
    view_pick_key(&m, 'x', 'P'); /* ignored */
    CHECK(m.pick.open && m.pick.sel == 2);
    CHECK_INT(view_pick_key(&m, '\n', 'P'), VIEW_PICK_CHOSEN);
    CHECK(!m.pick.open && m.pick.sel == 2);
    view_pick_open(&m, "policy", items, 3, 0);
    CHECK_INT(view_pick_key(&m, VIEW_KEY_ESC, 'P'), VIEW_PICK_CANCELLED);
    CHECK(!m.pick.open);
    view_free(&m);
}

TEST(yank_text_is_the_inspector_block_or_the_row_under_its_header) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    CHECK(view_yank_inspector(&m) == NULL); /* nothing under the cursor yet */
    fx_fill(&m, 12);
    m.hdr.tau = 0.5f, m.hdr.window = 4;
    m.cursor = 9, m.sel_layer = 1, m.sel_head = 0;
    const char *what;
    char *s = view_yank(&m, &what);
    CHECK_MSG(s && !strcmp(what, "inspector") && !strncmp(s, "L1 H0 @ pos 9 \" upon\"\n", 22), "%s", s ? s : "");
    /* the router's verdict, with the score fx_fill stored at (9, cell 2) */
    char router[64];
    snprintf(router, sizeof router, "router %.2f", fx_value(9, 2, 0));
    CHECK_MSG(s && strstr(s, router) && strstr(s, "tau 0.50"), "%s\nwanted %s", s ? s : "", router);
    free(s);
    Err e;
    static const char table[] = "layer  head  pos\n-----  ----  ---\n0      1     2\n1      0     7\n";
    CHECK_INT(view_set_text(&m, "t", "", table, &e), 0);
    m.sql_scroll = 1;
    s = view_yank(&m, &what);
    CHECK_MSG(s && !strcmp(what, "row") && !strcmp(s, "layer  head  pos\n1      0     7\n"), "%s", s ? s : "");
    free(s);
    CHECK_INT(view_set_text(&m, "t", "", "no table\nsecond\n", &e), 0);
    m.sql_scroll = 1;
    s = view_yank_row(&m);
    CHECK_MSG(s && !strcmp(s, "second\n"), "%s", s ? s : "");
    free(s);
    m.sql_scroll = 5;
    CHECK(view_yank_row(&m) == NULL);
    view_free(&m);
}
