/* pattern_ctl.h — the controller's half of the attention-pattern view (`A`):
 * opening and closing it, its keys, and keeping its data current each
 * frame. A live run asks the worker for the selected head's pattern from
 * the session's cached queries and keys (engine/attn_pattern.h) and for
 * the cursor's exact row; a replay builds it from the recorded far keys
 * (views/pattern.h says what that leaves out). */
#ifndef AHASCOPE_TUI_PATTERN_H
#define AHASCOPE_TUI_PATTERN_H

#include "app/tui/state.h"

/* `A`: open the selected head's pattern, or close the open one. */
void tui_pattern_toggle(Tui *t);

/* A key while the pattern is open: zoom, pan, Esc closes. 1 when it was the
 * pattern's key (nothing else acts on it). */
int tui_pattern_key(Tui *t, int ch);

/* Each frame: take a finished pattern, and ask for a new one when the
 * selection, the run or the window changed (a growing live run at most
 * once a second). */
void tui_pattern_poll(Tui *t);

/* Free the pattern's data (the controller is closing). */
void tui_pattern_close(Tui *t);

#endif
