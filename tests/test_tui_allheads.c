/* test_tui_allheads.c — every head at the cursor (`E`, issue 52): the copying head stands out; Enter selects it.
 *
 * On the organism's passkey item, while the answer is generated, the
 * overlay's row of L2 H1 names a needle position as its heaviest key with
 * weight 1.00, and Enter on it selects it (140×45; at 80×24 under --ascii
 * too). On a 16 × 32-head folder at 80×24 and 140×45 the overlay scrolls
 * to the head the arrows reach and Enter selects it. `bench --tui-view
 * allheads` draws frames with it open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tmux.h"

TEST(tui_allheads_the_copying_head_stands_out_on_the_organism) {
    TMUX_NEED_TUI();
    static const struct { int cols, rows; const char *flags; } modes[2] = {{140, 45, ""}, {80, 24, "--mono --ascii"}};
    for (int k = 0; k < 2; k++) {
        Tmux t;
        if (tmux_open_passkey(&t, k ? "allheads_80" : "allheads_140", modes[k].cols, modes[k].rows, NULL, modes[k].flags))
            return;
        tmux_keys(&t, "E");
        TMUX_WAIT(&t, "every head at the cursor", 5);
        tmux_keys(&t, "j j l Enter"); /* from L0 H0 to L2 H1 */
        char *s = tmux_wait(&t, "L2 H1 selected: its heaviest key at pos 505 is ", 5);
        const char *at = s ? strstr(s, "heaviest key at pos 505 is ") : NULL;
        int key = -1;
        double w = 0;
        const char *q = at ? strrchr(at, '"') : NULL; /* the weight follows the key's quoted text */
        if (at) sscanf(at + strlen("heaviest key at pos 505 is "), "%d", &key);
        if (q) sscanf(q + 1, "%lf", &w);
        /* the needle is "The pass key is NNNNN. Remember it." from pos 139 (tasks --seed 1) */
        CHECK_MSG(key >= 139 && key <= 152 && w > 0.9, "key %d weight %.2f: %s", key, w, s ? s : "");
        free(s);
        tmux_keys(&t, "q");
        TMUX_WAIT(&t, "EXITED 0", 10);
        tmux_stop(&t);
    }
}

TEST(tui_allheads_on_a_16x32_head_folder) {
    TMUX_NEED_TUI();
    static const int size[2][2] = {{80, 24}, {140, 45}};
    for (int k = 0; k < 2; k++) {
        Tmux t;
        if (tmux_open_16x32(&t, k ? "allheads16_140" : "allheads16_80", size[k][0], size[k][1], NULL, NULL)) return;
        TMUX_WAIT(&t, "12 prompt", 15);
        for (int i = 0; i < 10; i++) tmux_keys(&t, "Space");
        CHECK_MSG(tmux_shows_pos(&t, 10, 20), "the 10 steps never came");
        tmux_keys(&t, "E");
        TMUX_WAIT(&t, "every head at the cursor", 5);
        TMUX_WAIT(&t, "L0 ", 2);
        tmux_keys(&t, "End"); /* End moves the cursor, as anywhere */
        for (int i = 0; i < 14; i++) tmux_keys(&t, "j");
        tmux_keys(&t, "l l l");
        if (!k) TMUX_WAIT(&t, "L14", 3); /* scrolled to the selection at 80x24 */
        tmux_keys(&t, "Enter");
        TMUX_WAIT(&t, "L14 H3 selected", 5);
        CHECK(tmux_gone(&t, "every head at the cursor", 3));
        tmux_keys(&t, "q");
        TMUX_WAIT(&t, "EXITED 0", 10);
        tmux_stop(&t);
    }
}

TEST(tui_allheads_bench_draws_frames_with_it_open) {
    int st;
    char *out = test_runf(&st, "%s bench --tui-heads 8x8 --tui-size 120x40 --tui-view allheads --runs 1 --json 2>&1",
                          test_bin_abs());
    CHECK_MSG(st == 0 && out && strstr(out, "\"view\": \"allheads\"") && strstr(out, "\"frame_ms\""), "%s",
              out ? out : "");
    free(out);
}
