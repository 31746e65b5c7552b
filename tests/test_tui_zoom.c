/* test_tui_zoom.c — the pattern view follows the cursor (issue 52): + zooms about its row and its heaviest key.
 *
 * Before, + zoomed toward the top-left and the cursor's row of a long run
 * took dozens of presses to reach. Now three presses on the organism's
 * passkey item (cursor at 505, L2 H1, heaviest key a needle digit) leave
 * the cursor's row on screen with its heaviest key ranked in it and token
 * text on the key axis; on a 16 × 32-head folder the cursor's row (moved
 * back to pos 24 of 32) stays on screen at 80×24 and 140×45. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "tmux.h"

/* The grid line whose row holds position pos (row labels "│ 504g …", cells
 * of rq positions from the title), malloc'd, or NULL. */
static char *row_of(const char *screen, int pos) {
    const char *cell = screen ? strstr(screen, "1 cell = ") : NULL;
    int rq = cell ? atoi(cell + 9) : 0;
    for (const char *l = screen; rq > 0 && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *s = !strncmp(l, "\xe2\x94\x82", 3) ? l + 3 : *l == '|' ? l + 1 : NULL;
        int label;
        char mark;
        if (!s || sscanf(s, "%d%c", &label, &mark) != 2 || !strchr("gl-f ", mark)) continue;
        if (label <= pos && pos < label + rq) {
            const char *e = strchr(l, '\n');
            return strndup(l, e ? (size_t)(e - l) : strlen(l));
        }
    }
    return NULL;
}

/* The key axis's line ("key" after the border), or NULL. */
static const char *axis_of(const char *screen) {
    const char *a = screen ? strstr(screen, "\xe2\x94\x82key ") : NULL;
    return a ? a : screen ? strstr(screen, "|key ") : NULL;
}

/* Three + and, once drawn (captures polled for up to 15 s: a frame can be
 * caught half drawn, and the sanitizer build at load draws 505 keys slowly), the cursor's row (at pos) shows, with the rank-1 key
 * in it when ranked, and axis_text on the key axis. */
static void check_zoom(Tmux *t, int pos, int ranked, const char *axis_text) {
    tmux_keys(t, "+ + +");
    TMUX_WAIT(t, "zoom ", 5);
    char *s = NULL, *row = NULL;
    int ok = 0;
    for (int tries = 0; tries < 75 && !ok; tries++) {
        if (tries) usleep(200000);
        free(s), free(row);
        s = tmux_capture(t), row = row_of(s, pos);
        const char *grid = row ? strchr(row + 4, ' ') : NULL, *axis = axis_of(s);
        const char *eol = axis ? strchr(axis, '\n') : NULL, *txt = axis ? strstr(axis, axis_text) : NULL;
        ok = row && (!ranked || (grid && strchr(grid, '1'))) && (!axis_text[0] || (txt && eol && txt < eol));
    }
    CHECK_MSG(ok, "the cursor's row (pos %d): %s; the key axis with '%s'\n%s", pos, row ? row : "(none)", axis_text,
              s ? s : "");
    free(row), free(s);
}

TEST(tui_zoom_follows_the_cursor_on_the_organism) {
    TMUX_NEED_TUI();
    static const struct { int cols, rows; const char *flags, *dot; } modes[2] = {
        {140, 45, "", "\xc2\xb7"}, {80, 24, "--mono --ascii", ":"}};
    for (int k = 0; k < 2; k++) {
        Tmux t;
        if (tmux_open_passkey(&t, k ? "zoom_80" : "zoom_140", modes[k].cols, modes[k].rows, NULL, modes[k].flags)) return;
        tmux_go_to(&t, "L2 H1");
        tmux_keys(&t, "A");
        TMUX_WAIT(&t, "pattern L2 H1", 10);
        check_zoom(&t, 505, 1, modes[k].dot);
        tmux_keys(&t, "A q");
        TMUX_WAIT(&t, "EXITED 0", 10);
        tmux_stop(&t);
    }
}

TEST(tui_zoom_follows_the_cursor_on_a_16x32_head_folder) {
    TMUX_NEED_TUI();
    static const int size[2][2] = {{80, 24}, {140, 45}};
    for (int k = 0; k < 2; k++) {
        Tmux t;
        if (tmux_open_16x32(&t, k ? "zoom16_140" : "zoom16_80", size[k][0], size[k][1], NULL, NULL)) return;
        TMUX_WAIT(&t, "12 prompt", 15);
        for (int i = 0; i < 20; i++) tmux_keys(&t, "Space");
        CHECK_MSG(tmux_shows_pos(&t, 31, 20), "pos 31 never came");
        tmux_go_to(&t, "pos 24");
        TMUX_WAIT(&t, "pos 24 ", 5);
        tmux_keys(&t, "A");
        TMUX_WAIT(&t, "pattern L", 10);
        check_zoom(&t, 24, 0, "");
        tmux_keys(&t, "A q");
        TMUX_WAIT(&t, "EXITED 0", 10);
        tmux_stop(&t);
    }
}
