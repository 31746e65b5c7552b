/* tui_open.h — what `ahascope tui` runs once app/cmd_tui.c has read and
 * checked its flags: with --tasks FILE its item K read and made the
 * prompt, its needle and question marked on the screen, then the
 * controller (app/tui/tui_ctl.h) on a terminal; without one, a refusal. */
#ifndef AHASCOPE_TUI_OPEN_H
#define AHASCOPE_TUI_OPEN_H

#include "app/tui/tui_ctl.h"

/* Open t (tasks NULL: no item; item < 0: item 0); 0 when the TUI ends,
 * -1 with e set. */
int tui_open(TuiOpts *t, const char *tasks, long item, Err *e);

#endif
