/* picker.h — `P`'s policy picker: the policies that can run on what was
 * loaded, listed over the heatmap (views/pick.h), the one in force
 * highlighted. ↑/↓ or P again move down the list (so cycling is one key
 * away), Enter re-evaluates under the one chosen through the path every
 * setting takes, Esc leaves everything as it was. */
#ifndef AHASCOPE_TUI_PICKER_H
#define AHASCOPE_TUI_PICKER_H

#include "app/tui/state.h"

/* `P` on a live run: open the picker. */
void tui_picker_open(Tui *t);

/* A key while the picker is open: 1 when it took it (every key, until the
 * picker closes), 0 when no picker is open. */
int tui_picker_key(Tui *t, int ch);

#endif
