/* yank.h — what `y` copies out, as plain text: the inspector's block (the
 * selected head at the cursor token: its verdicts and where it looked) or
 * the text pane's selected row under its table's header. Pure: the app
 * writes the text where it goes (a file and the terminal's clipboard). */
#ifndef AHASCOPE_VIEW_YANK_H
#define AHASCOPE_VIEW_YANK_H

#include "views/view.h"

/* The inspector's block for the selected head at the cursor, one line
 * each, '\n'-terminated: "L3 H5 @ pos 28 "w"", the header's settings, the
 * verdicts (view_explain's lines) and where the head looked (the exact
 * weights when m->attn holds them, else what the run recorded). malloc'd;
 * NULL when no token is under the cursor or memory ran out. */
char *view_yank_inspector(const ViewModel *m);

/* The text pane's selected row (the first scrolling line shown), under
 * its table's header when the pane pins one. malloc'd; NULL when the pane
 * is closed or shows no row there. */
char *view_yank_row(const ViewModel *m);

/* What `y` takes now: the row when the text pane is open and focused,
 * else the inspector's block. *what receives "row" or "inspector". */
char *view_yank(const ViewModel *m, const char **what);

/* text as the terminal shows it, for the clipboard and the yank file:
 * every control but newline and tab (the block's lines, the tables'
 * columns) and every byte that does not decode becomes the glyph the
 * panes draw for it (view_next_glyph), so no escape sequence, pasted, can
 * end a bracketed paste or run a command. malloc'd; NULL out of memory. */
char *view_yank_clean(const char *text, int ascii);

#endif
