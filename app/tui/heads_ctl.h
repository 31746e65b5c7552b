/* heads_ctl.h — the controller's half of the heads sorted by a run rate (`H`):
 * opening and closing the pane, and its keys. The pane reads the rates the
 * view model keeps as steps arrive (views/rates.h), live or in a replay, so
 * it asks nothing of the worker and never waits. */
#ifndef AHASCOPE_TUI_HEADS_H
#define AHASCOPE_TUI_HEADS_H

#include "app/tui/state.h"

/* `H`: open the pane at the top of its order (sorted as it was last; the
 * selected head's row is marked), or close the open one. */
void tui_heads_toggle(Tui *t);

/* Close the pane (Esc, q, or its own key). */
void tui_heads_close(Tui *t);

/* A key while the pane is open: move, sort, Enter selects the row's head
 * and closes the pane, Esc closes it. 1 when it was the pane's key. */
int tui_heads_key(Tui *t, int ch);

#endif
