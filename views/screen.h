/* screen.h — a whole TUI frame: the windows of the current layout, the
 * palette, and view_frame, which redraws every pane and sends the result to
 * the terminal with one doupdate.
 *
 * The app starts curses (setlocale, initscr or newterm, cbreak, noecho,
 * keypad, mousemask), sets m->colour from view_colour_pick, then calls
 * view_screen_init once and view_frame whenever something changed.
 */
#ifndef AHASCOPE_VIEW_SCREEN_H
#define AHASCOPE_VIEW_SCREEN_H

#include "views/draw.h"

typedef struct {
    ViewPalette pal;
    ViewColour pal_colour; /* what the palette was made for, to notice mode changes */
    int pal_ascii, pal_ready;
    Layout lay; /* the layout the windows follow; pass it to view_mouse */
    LayoutOpts opts;
    WINDOW *win[VIEW_PANE_COUNT];
    WINDOW *help;
    WINDOW *pattern; /* the attention-pattern overlay's, made when it first shows */
    WINDOW *heads;   /* the sorted heads' (views/heads.h), made when it first shows */
    WINDOW *dist;    /* the distributions overlay's, likewise */
    WINDOW *flips;   /* the map of gate flips against the parent run (views/flips.h), likewise */
    WINDOW *allheads; /* every head at the cursor (views/allheads.h), likewise */
} ViewScreen;

/* Prepare a screen for the current curses terminal (colours per the model's
 * mode: m->mono or NO colour draws with glyphs only). Call after curses is up. */
int view_screen_init(ViewScreen *s, const ViewModel *m, Err *e);

/* Draw one frame: follow the terminal size (re-laying out and recreating
 * windows when it or the open panes changed), draw every pane and the help
 * overlay with wnoutrefresh, then doupdate once. Below the minimum size
 * only the "enlarge" message is shown. */
int view_frame(ViewScreen *s, const ViewModel *m, Err *e);

/* Delete the screen's windows (curses itself stays up). */
void view_screen_free(ViewScreen *s);

#endif
