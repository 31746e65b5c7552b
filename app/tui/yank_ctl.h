/* yank_ctl.h — `y`: copy the inspector's block, or the text pane's selected
 * row, out as plain text (views/yank.h says which): to the terminal's
 * clipboard with an OSC 52 sequence, and to a file, $AHASCOPE_YANK or
 * ahascope-yank.txt in the current directory, replaced each time. The
 * status line says where it went. */
#ifndef AHASCOPE_TUI_YANK_H
#define AHASCOPE_TUI_YANK_H

#include <stddef.h>

#include "app/tui/state.h"

/* Bytes a yank puts on the clipboard at most (1 MiB); a longer one goes
 * to the file only, and the status line says so. */
#define TUI_YANK_CLIP_MAX (1u << 20)

/* The file a yank goes to: env ($AHASCOPE_YANK) when set and not empty,
 * else "ahascope-yank.txt". Pure. */
const char *tui_yank_path(const char *env);

/* text (n bytes) as the OSC 52 sequence that puts it on the clipboard
 * ("\033]52;c;BASE64\a"), malloc'd; NULL when out of memory. Pure. */
char *tui_yank_osc52(const char *text, size_t n);

/* `y` (csv 0) or `Y` (csv 1): yank now, saying where on the status line
 * (or why not). With H, A or a focused text pane open it is that whole
 * table, headed by the run's line (views/keep.h); else the inspector's
 * block or the text pane's row, as text. */
void tui_yank(Tui *t, int csv);

/* `S`: H's table or A's pattern as CSV and SVG files in the current
 * directory (ahascope-run7-heads.csv and .svg, ahascope-run7-L2H1-pattern.csv
 * and .svg), each written as every output file is (a fresh temporary
 * renamed over the name: a symlink is replaced, never followed; a FIFO is
 * refused), the status line naming them. */
void tui_keep_files(Tui *t);

/* `&`: the paths from the cursor to the needle (views/path.h) in the text
 * pane: (a) from the recorded top-k at once; on a live run the worker is
 * asked for every head's full rows, and (b), the exact paths and the
 * rollout, follow when they come (tui_paths_poll). */
void tui_paths(Tui *t);

/* Each frame: take the rows `&` asked for and show (b), if the cursor and
 * the text pane are still the paths'. */
void tui_paths_poll(Tui *t);

#endif
