/* pick.h — the picker's drawing: a small boxed list over the top left of
 * the heatmap (the whole screen's top left when the heatmap is hidden),
 * its highlighted item reversed. Its state and keys are the view model's
 * (view.h: view_pick_open, view_pick_key); the app fills its items. */
#ifndef AHASCOPE_VIEW_PICK_H
#define AHASCOPE_VIEW_PICK_H

#include "views/palette.h"
#include "views/view.h"

/* Where the picker of m goes in layout lay, clipped to the screen; w 0
 * when it is closed or the screen has no room. Pure. */
ViewRect view_pick_rect(const ViewModel *m, const Layout *lay);

/* Draw the open picker into the virtual screen (wnoutrefresh, a window of
 * its own for this frame); nothing when it is closed. */
void view_draw_pick(const ViewModel *m, const Layout *lay, const ViewPalette *p);

#endif
