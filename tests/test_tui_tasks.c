/* test_tui_tasks.c — `tui --tasks FILE --item K`: the needle and question marked where the file says.
 *
 * `tui --tasks FILE --item K`: a generated passkey
 * item opened on stories260K, its needle and question marked where the
 * file says (token pane, timeline, legend, status line), in UTF-8 and
 * under --mono --ascii; the refusals; and the marks' pure rules.
 *
 * The expected positions come from the JSON line itself, not from the
 * generator's code, and each mark is checked at its first and last
 * position and one past them, so a mark drawn one position off fails. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "views/view.h"
#include "test.h"
#include "tmux.h"

/* An item's facts as its JSON line gives them. */
typedef struct {
    int needle_first, needle_last, n_needle, question;
    char answer[32];
} Item;

/* Generate two passkey items into dir/pk.jsonl and read item k's facts. */
static int make_items(const char *dir, int k, Item *it) {
    int st;
    free(test_runf(&st, "mkdir -p '%s' && cd '%s' && %s tasks --task passkey --context 200 --n 2 --seed 1 "
                        "--model '%s' --out pk.jsonl 2>&1", dir, dir, test_bin_abs(), test_stories_model()));
    CHECK_INT(st, 0);
    char path[1024];
    snprintf(path, sizeof path, "%s/pk.jsonl", dir);
    long len;
    char *text = test_read_file(path, &len), *line = text;
    for (int i = 0; line && i < k; i++) line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
    if (line && strchr(line, '\n')) *strchr(line, '\n') = 0;
    cJSON *o = cJSON_Parse(line ? line : "");
    free(text);
    cJSON *np = cJSON_GetObjectItem(o, "needle_pos"), *q = cJSON_GetObjectItem(o, "question_pos");
    const char *a = cJSON_GetStringValue(cJSON_GetObjectItem(o, "answer"));
    int n = cJSON_GetArraySize(np), ok = n > 0 && cJSON_IsNumber(q) && a;
    CHECK_MSG(ok, "item %d of %s lacks its fields", k, path);
    if (ok) {
        it->n_needle = n, it->question = q->valueint;
        it->needle_first = cJSON_GetArrayItem(np, 0)->valueint;
        it->needle_last = cJSON_GetArrayItem(np, n - 1)->valueint;
        snprintf(it->answer, sizeof it->answer, "%s", a);
        CHECK_INT(it->needle_last - it->needle_first + 1, n); /* a passkey's needle is one statement */
    }
    cJSON_Delete(o);
    return ok ? 0 : -1;
}

/* The cursor moved to pos: the token strip then says "pos N" followed by
 * `after` (the mark, or the −log p of an unmarked position). */
static void check_pos(Tmux *t, int pos, const char *after) {
    char p[32], want[96];
    snprintf(p, sizeof p, "pos %d", pos);
    tmux_go_to(t, p);
    snprintf(want, sizeof want, "pos %d %s", pos, after);
    CHECK_MSG(tmux_shows(t, want, 5), "the strip never showed '%s'", want);
}

/* The screen column of byte offset off of line (UTF-8: every glyph here is
 * one column wide). */
static int column(const char *line, const char *at) {
    int c = 0;
    for (const char *s = line; s < at; s++) c += ((unsigned char)*s & 0xc0) != 0x80;
    return c;
}

/* The line of screen holding needle (malloc'd), or NULL. */
static char *line_with(const char *screen, const char *needle) {
    const char *at = screen ? strstr(screen, needle) : NULL;
    if (!at) return NULL;
    const char *b = at, *e = strchr(at, '\n');
    while (b > screen && b[-1] != '\n' && *b != '\n') b--;
    if (*b == '\n') b++; /* a needle that began with the line's newline */
    return strndup(b, e ? (size_t)(e - b) : strlen(b));
}

/* Where the timeline's bottom border puts the needle and the question,
 * in bins counted from the "0" of position 0 (the marks searched right of
 * it only: the legend below holds the same glyphs); the bin from the
 * title. 0, or -1 when screen holds no whole border. */
static int read_timeline(const char *screen, const char *needle_glyph, int ascii, int *needle, int *question,
                         int *bin, char **axis) {
    const char *title = screen ? strstr(screen, "timeline") : NULL;
    const char *binp = title ? strstr(title, "1 col = ") : NULL;
    *bin = binp && binp < strchr(title, '\n') ? atoi(binp + 8) : 1;
    const char *below = title ? strchr(title, '\n') : NULL; /* under the title, the first line the border starts */
    *axis = line_with(below, ascii ? "\n+-" : "\n\xe2\x94\x94"); /* └ */
    const char *zero = *axis ? strchr(*axis, '0') : NULL;
    const char *nd = zero ? strstr(zero, needle_glyph) : NULL, *q = zero ? strchr(zero, '?') : NULL;
    if (!nd || !q || *bin < 1) return -1;
    *needle = column(*axis, nd) - column(*axis, zero), *question = column(*axis, q) - column(*axis, zero);
    return 0;
}

/* The marks sit in the timeline's columns of their positions. A capture
 * can catch a frame half drawn (once, under load, one read the legend's
 * glyphs as marks), so fresh captures are read for up to 5 s before the
 * last one is reported. */
static void check_timeline(Tmux *t, const Item *it, const char *needle_glyph, int ascii) {
    int needle = 0, question = 0, bin = 1, ok = 0;
    char *axis = NULL, *screen = NULL;
    for (int tries = 0; tries < 25 && !ok; tries++) {
        if (tries) usleep(200000);
        free(axis), free(screen);
        axis = NULL, screen = tmux_capture(t);
        ok = !read_timeline(screen, needle_glyph, ascii, &needle, &question, &bin, &axis) &&
             needle == it->needle_first / bin && question == it->question / bin;
    }
    CHECK_MSG(ok, "needle at column %d (want %d), question at %d (want %d), bin %d; border: %s\nscreen:\n%s", needle,
              it->needle_first / bin, question, it->question / bin, bin, axis ? axis : "(none)",
              screen ? screen : "");
    free(axis), free(screen);
}

/* In the token pane the line holding the pass key starts with the needle
 * glyph on the border, the question's line with ?. */
static void check_gutter(const char *screen, const Item *it, const char *needle_glyph) {
    char key[48];
    snprintf(key, sizeof key, "%s. Remember it.", it->answer);
    char *nl = line_with(screen, key), *ql = line_with(screen, "What is the pass key?");
    CHECK_MSG(nl && !strncmp(nl, needle_glyph, strlen(needle_glyph)), "needle line: %s", nl ? nl : "(none)");
    CHECK_MSG(ql && ql[0] == '?', "question line: %s", ql ? ql : "(none)");
    free(nl), free(ql);
}

TEST(tui_tasks_marks_needle_and_question_where_the_item_says) {
    TMUX_NEED_TUI();
    const char *dir = test_tmp("tui_tasks");
    Item it;
    if (make_items(dir, 1, &it)) return;
    char real[4096], cmd[8192], note[256];
    if (!realpath(test_stories_model(), real)) snprintf(real, sizeof real, "missing-model");
    const char *modes[2] = {"", "--mono --ascii"}, *glyph[2] = {"\xe2\x97\x86", "*"};
    for (int m = 0; m < 2; m++) {
        Tmux t;
        snprintf(cmd, sizeof cmd, "%s tui --model %s --seed 1 --temperature 0 --policy full --no-record "
                 "--tasks pk.jsonl --item 1 %s", test_bin_abs(), real, modes[m]);
        CHECK_INT(tmux_open(&t, m ? "tui_tasks_mono" : "tui_tasks_utf8", dir, 140, 45, NULL, cmd, 0), 0);
        snprintf(note, sizeof note, "item 1 of pk.jsonl: needle at pos %d-%d, question at pos %d, answer %s%s%s",
                 it.needle_first, it.needle_last, it.question, m ? "\"" : "\xc2\xab", it.answer, m ? "\"" : "\xc2\xbb");
        TMUX_WAIT(&t, "tokens: 200 prompt", 20);
        char *screen = tmux_wait(&t, note, 5);
        CHECK_MSG(screen != NULL, "no item line '%s'", note);
        char legend[64];
        snprintf(legend, sizeof legend, "%s needle ? question", glyph[m]);
        CHECK_MSG(screen && strstr(screen, legend), "no legend '%s':\n%s", legend, screen ? screen : "");
        check_gutter(screen, &it, glyph[m]);
        check_timeline(&t, &it, glyph[m], m);
        free(screen);
        char mark[32];
        snprintf(mark, sizeof mark, "%s needle", glyph[m]);
        check_pos(&t, it.needle_first - 1, m ? "-log p" : "\xe2\x88\x92log p");
        check_pos(&t, it.needle_first, mark);
        check_pos(&t, it.needle_last, mark);
        check_pos(&t, it.needle_last + 1, m ? "-log p" : "\xe2\x88\x92log p");
        check_pos(&t, it.question, "? question");
        check_pos(&t, it.question + 1, m ? "-log p" : "\xe2\x88\x92log p");
        tmux_keys(&t, "q");
        TMUX_WAIT(&t, "EXITED 0", 5);
        tmux_stop(&t);
    }
}

TEST(tui_tasks_refusals_name_the_file) {
    SKIP_UNLESS_SHARED();
    const char *dir = test_tmp("tui_tasks_bad");
    Item it;
    if (make_items(dir, 0, &it)) return;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s tui --no-record --tasks pk.jsonl --item 2", dir, test_bin_abs());
    CHECK_REFUSAL(cmd, 1, "ahascope tui: ", "pk.jsonl: no item 2: the file holds 2", 1);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s tui --no-record --tasks missing.jsonl", dir, test_bin_abs());
    CHECK_REFUSAL(cmd, 1, "ahascope tui: ", "missing.jsonl", 1);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s tui --no-record --tasks pk.jsonl --item -1", dir, test_bin_abs());
    CHECK_REFUSAL(cmd, 2, "ahascope tui: ", "--item", 1);
    snprintf(cmd, sizeof cmd, "%s tui --no-record --item 1", test_bin());
    CHECK_REFUSAL(cmd, 2, "ahascope tui: ", "--item K goes with --tasks FILE", 1);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s tui --tasks pk.jsonl --prompt hi", dir, test_bin_abs());
    CHECK_REFUSAL(cmd, 2, "ahascope tui: ", "--tasks FILE gives the prompt", 1);
}

/* One mark per position, the question outranking a needle there; a bin
 * holds its strongest mark; clearing leaves none. */
TEST(tui_tasks_marks_rules) {
    ViewModel m;
    Err e;
    CHECK_INT(view_init(&m, 2, 2, &e), 0);
    ViewMark mk[] = {{9, VIEW_MARK_QUESTION}, {3, VIEW_MARK_NEEDLE}, {4, VIEW_MARK_NEEDLE}, {9, VIEW_MARK_NEEDLE}};
    CHECK_INT(view_set_marks(&m, mk, 4, &e), 0);
    CHECK_INT(m.n_marks, 3);
    CHECK_INT(view_mark_at(&m, 2), VIEW_MARK_NONE);
    CHECK_INT(view_mark_at(&m, 3), VIEW_MARK_NEEDLE);
    CHECK_INT(view_mark_at(&m, 4), VIEW_MARK_NEEDLE);
    CHECK_INT(view_mark_at(&m, 5), VIEW_MARK_NONE);
    CHECK_INT(view_mark_at(&m, 9), VIEW_MARK_QUESTION);
    CHECK_INT(view_mark_in(&m, 0, 3), VIEW_MARK_NONE);
    CHECK_INT(view_mark_in(&m, 0, 4), VIEW_MARK_NEEDLE);
    CHECK_INT(view_mark_in(&m, 4, 10), VIEW_MARK_QUESTION);
    CHECK(view_mark_glyph(VIEW_MARK_NEEDLE, 1) == L'*' && view_mark_glyph(VIEW_MARK_NEEDLE, 0) == L'\u25c6');
    CHECK(!strcmp(view_mark_name(VIEW_MARK_QUESTION), "question"));
    CHECK_INT(view_set_marks(&m, NULL, 0, &e), 0);
    CHECK_INT(view_mark_at(&m, 9), VIEW_MARK_NONE);
    view_free(&m);
}
