/* tui.h — the one place views include ncurses, with the wide-character
 * API (cchar_t, mvwadd_wch, …) switched on. */
#ifndef AHASCOPE_VIEW_TUI_H
#define AHASCOPE_VIEW_TUI_H

#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#include <ncurses.h>
#include <wchar.h>

#endif
