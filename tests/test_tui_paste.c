/* test_tui_paste.c — bracketed paste through a real terminal (tmux).
 *
 * tmux's paste-buffer -p brackets the text when the program asked for it
 * (ESC[?2004h); without that, the pasted Esc closes the editor and the
 * pasted `q` quits. */
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/tmux.h"

TEST(tui_paste_an_esc_and_q_into_the_search_line_is_text) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "paste", 100, 30, NULL, "--no-record"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "/");
    TMUX_WAIT(&t, "search", 5);
    int st;
    /* printf's \033 and \n go into the buffer as the bytes a clipboard would hold */
    free(test_runf(&st, "tmux -L %s set-buffer \"$(printf 'zz\\033qyy\\nww')\" && tmux -L %s paste-buffer -p", t.sock,
                   t.sock));
    CHECK_INT(st, 0);
    TMUX_WAIT(&t, "zzqyy ww", 5); /* text: Esc dropped, the newline a space, and no pasted q quit */
    tmux_keys(&t, "Escape");
    CHECK_MSG(tmux_gone(&t, "zzqyy ww", 5), "Esc after the paste did not close the editor");
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}
