/* tokstats_ctl.h — `c`: the rates split by token type (views/tokstats.h) for
 * the selected head and all heads pooled, over the run on screen, in the
 * text pane. The history is counted on the UI thread a slice a frame, so a
 * long run never stalls the screen: the status line shows the progress and
 * Esc stops it. */
#ifndef AHASCOPE_TUI_TOKSTATS_H
#define AHASCOPE_TUI_TOKSTATS_H

#include "app/tui/state.h"

/* `c`: count the run on screen for the selected head (a count under way starts over). */
void tui_token_stats(Tui *t);

/* Each frame: the next slice of a count under way, its progress line, and
 * its table in the text pane once done. */
void tui_tokstats_poll(Tui *t);

/* Esc: drop the count under way; 1 if there was one. */
int tui_tokstats_cancel(Tui *t);

/* Free what a count took (the controller is closing). */
void tui_tokstats_close(Tui *t);

#endif
