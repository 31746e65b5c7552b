/* yank_ctl.h — `y`: copy the inspector's block, or the text pane's selected
 * row, out as plain text (views/yank.h says which): to the terminal's
 * clipboard with an OSC 52 sequence, and to a file, $AHASCOPE_YANK or
 * ahascope-yank.txt in the current directory, replaced each time. The
 * status line says where it went. */
#ifndef AHASCOPE_TUI_YANK_H
#define AHASCOPE_TUI_YANK_H

#include <stddef.h>

#include "app/tui/state.h"

/* The file a yank goes to: env ($AHASCOPE_YANK) when set and not empty,
 * else "ahascope-yank.txt". Pure. */
const char *tui_yank_path(const char *env);

/* text (n bytes) as the OSC 52 sequence that puts it on the clipboard
 * ("\033]52;c;BASE64\a"), malloc'd; NULL when out of memory. Pure. */
char *tui_yank_osc52(const char *text, size_t n);

/* `y`: yank now, saying where on the status line (or why not). */
void tui_yank(Tui *t);

#endif
