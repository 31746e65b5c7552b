/* test_tui_needle.c — weight on the needle (issue 52): the metric, the H pane's columns, the pattern's marked keys.
 *
 * On the organism's passkey item (504 tokens) the head that copies the
 * needle, L2 H1, puts weight 1.00 on it while the answer is generated: the
 * H pane sorted by the weight on the needle must rank it first and Enter
 * select it, the legend name the metric, and the pattern's key axis mark
 * the needle and the question (◆ ?, under --ascii N Q) at 140×45 and 80×24.
 * On a 16 × 32-head folder with no task item, a bookmark stands in for
 * the needle (a span marked by hand). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "tmux.h"

/* The line of the pattern's key axis ("key" at its left), malloc'd, or NULL. */
static char *axis_line(Tmux *t, const char *want) {
    for (int tries = 0; tries < 25; tries++) {
        char *s = tmux_capture(t), *at = s ? strstr(s, "key") : NULL;
        while (at && !(at - s >= 3 && !strncmp(at - 3, "\xe2\x94\x82", 3)) && !(at > s && at[-1] == '|'))
            at = strstr(at + 3, "key"); /* the axis's "key" starts the line, after the border */
        char *e = at ? strchr(at, '\n') : NULL;
        char *line = at ? strndup(at, e ? (size_t)(e - at) : strlen(at)) : NULL;
        free(s);
        if (line && strstr(line, want)) return line;
        free(line);
        usleep(200000); /* a capture can catch a frame half drawn: poll again */
    }
    return NULL;
}

TEST(tui_needle_weight_finds_the_copying_head_on_the_organism) {
    TMUX_NEED_TUI();
    static const struct { int cols, rows; const char *flags, *ge, *needle, *question; } modes[2] = {
        {140, 45, "", "\xe2\x89\xa5", "\xe2\x97\x86", "?"},
        {80, 24, "--mono --ascii", ">=", "N", "Q"},
    };
    for (int k = 0; k < 2; k++) {
        Tmux t;
        if (tmux_open_passkey(&t, k ? "needle_80" : "needle_140", modes[k].cols, modes[k].rows, NULL, modes[k].flags)) return;
        tmux_keys(&t, "H 6");
        TMUX_WAIT(&t, "heads by weight on the needle at the cursor", 5);
        TMUX_WAIT(&t, "   1  L2 H1 ", 3);
        tmux_keys(&t, "Enter");
        char want[128];
        snprintf(want, sizeof want, "L2 H1 selected (weight on the needle at the cursor %s1.00)", modes[k].ge);
        TMUX_WAIT(&t, want, 3);
        tmux_keys(&t, "M"); /* the cycle's last metric */
        TMUX_WAIT(&t, "weight on the needle: ", 3);
        tmux_keys(&t, "A");
        TMUX_WAIT(&t, "pattern L2 H1", 10);
        char *axis = axis_line(&t, modes[k].needle);
        CHECK_MSG(axis && strstr(axis, modes[k].question), "key axis at %dx%d: %s", modes[k].cols, modes[k].rows,
                  axis ? axis : "(none)");
        free(axis);
        tmux_keys(&t, "A q");
        TMUX_WAIT(&t, "EXITED 0", 10);
        tmux_stop(&t);
    }
}

TEST(tui_needle_a_bookmark_stands_in_on_a_16x32_head_folder) {
    TMUX_NEED_TUI();
    static const int size[2][2] = {{80, 24}, {140, 45}};
    for (int k = 0; k < 2; k++) {
        Tmux t;
        if (tmux_open_16x32(&t, k ? "needle16x32_140" : "needle16x32_80", size[k][0], size[k][1], NULL, NULL)) return;
        TMUX_WAIT(&t, "12 prompt", 15);
        tmux_keys(&t, "b");
        TMUX_WAIT(&t, "bookmark", 3);
        for (int i = 0; i < 12; i++) tmux_keys(&t, "Space");
        CHECK_MSG(tmux_shows_pos(&t, 12, 20), "the 12 steps never came");
        tmux_keys(&t, "M");
        TMUX_WAIT(&t, "weight on the needle: ", 3);
        if (k) TMUX_WAIT(&t, "attention on the bookmark", 3); /* the note needs the wide screen */
        tmux_keys(&t, "H 6");
        TMUX_WAIT(&t, "heads by weight on the needle at the cursor", 5);
        TMUX_WAIT(&t, "6:\xe2\x96\xbcneedle", 3);
        tmux_keys(&t, "Escape q");
        TMUX_WAIT(&t, "EXITED 0", 10);
        tmux_stop(&t);
    }
}
