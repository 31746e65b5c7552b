/* screen.c — windows per layout and the one-doupdate frame (see screen.h). */
#include "views/screen.h"

#include "views/heads.h"
#include "views/dist.h"
#include "views/allheads.h"
#include "views/flips.h"
#include "views/pattern.h"
#include "views/pick.h"

#include <string.h>

typedef void (*DrawFn)(WINDOW *, const ViewModel *, const ViewPalette *);

static const DrawFn DRAW[VIEW_PANE_COUNT] = {
    [VIEW_PANE_HEADER] = view_draw_header,       [VIEW_PANE_TOKENS] = view_draw_tokens,
    [VIEW_PANE_HEATMAP] = view_draw_heatmap,     [VIEW_PANE_BARS] = view_draw_bars,
    [VIEW_PANE_INSPECTOR] = view_draw_inspector, [VIEW_PANE_TIMELINE] = view_draw_timeline,
    [VIEW_PANE_SQL] = view_draw_sql,             [VIEW_PANE_LEGEND] = view_draw_legend,
    [VIEW_PANE_STATUS] = view_draw_status,       [VIEW_PANE_KEYBAR] = view_draw_keybar,
};

static ViewColour effective_colour(const ViewModel *m) { return m->mono ? VIEW_COLOUR_NONE : m->colour; }

static void drop_windows(ViewScreen *s) {
    for (int p = 0; p < VIEW_PANE_COUNT; p++) {
        if (s->win[p]) delwin(s->win[p]);
        s->win[p] = NULL;
    }
    if (s->help) delwin(s->help);
    s->help = NULL;
    if (s->pattern) delwin(s->pattern);
    s->pattern = NULL;
    if (s->heads) delwin(s->heads);
    s->heads = NULL;
    if (s->dist) delwin(s->dist);
    s->dist = NULL;
    if (s->flips) delwin(s->flips);
    s->flips = NULL;
    if (s->allheads) delwin(s->allheads);
    s->allheads = NULL;
}

static WINDOW *make_window(const ViewRect *r, Err *e) {
    WINDOW *w = newwin(r->h, r->w, r->y, r->x);
    if (!w) err_set(e, "view: cannot create a %d×%d window", r->w, r->h);
    return w;
}

/* Lay out for the current size and options, creating one window per pane. */
static int relayout(ViewScreen *s, int cols, int rows, const LayoutOpts *o, Err *e) {
    drop_windows(s);
    view_layout(cols, rows, o, &s->lay);
    s->opts = *o;
    if (s->lay.too_small) return 0;
    for (int p = 0; p < VIEW_PANE_COUNT; p++) {
        const ViewRect *r = &s->lay.pane[p];
        if (r->w > 0 && !(s->win[p] = make_window(r, e))) return -1;
    }
    if (s->lay.help.w > 0 && !(s->help = make_window(&s->lay.help, e))) return -1;
    return 0;
}

int view_screen_init(ViewScreen *s, const ViewModel *m, Err *e) {
    memset(s, 0, sizeof *s);
    s->pal_colour = effective_colour(m);
    s->pal_ascii = m->ascii;
    if (view_palette_init(&s->pal, s->pal_colour, m->ascii, e)) return -1;
    s->pal_ready = 1;
    return 0;
}

static int same_opts(const LayoutOpts *a, const LayoutOpts *b) {
    return a->n_layers == b->n_layers && a->n_heads == b->n_heads && a->inspector == b->inspector &&
           a->sql == b->sql && a->half_blocks == b->half_blocks && a->keybar == b->keybar;
}

/* The pattern overlay over the middle panes, its window made for this layout. */
static int draw_pattern(ViewScreen *s, const ViewModel *m, Err *e) {
    ViewRect r = view_pattern_rect(&s->lay);
    if (r.w <= 0) return 0;
    if (!s->pattern && !(s->pattern = make_window(&r, e))) return -1;
    view_draw_pattern(s->pattern, m->pattern, m, &s->pal);
    wnoutrefresh(s->pattern);
    return 0;
}

/* The sorted heads over the middle panes (and over the pattern: the pane
 * opened to pick the head the pattern shows), in the pattern's rectangle. */
static int draw_heads(ViewScreen *s, const ViewModel *m, Err *e) {
    ViewRect r = view_pattern_rect(&s->lay);
    if (r.w <= 0) return 0;
    if (!s->heads && !(s->heads = make_window(&r, e))) return -1;
    view_draw_heads(s->heads, m->heads, m, &s->pal);
    wnoutrefresh(s->heads);
    return 0;
}

/* The map of gate flips against the parent, over the same rectangle and
 * on top of the others: it is opened to pick a head and closed again. */
static int draw_flips(ViewScreen *s, const ViewModel *m, Err *e) {
    ViewRect r = view_pattern_rect(&s->lay);
    if (r.w <= 0) return 0;
    if (!s->flips && !(s->flips = make_window(&r, e))) return -1;
    view_draw_flips(s->flips, m, &s->pal);
    wnoutrefresh(s->flips);
    return 0;
}

/* Every head at the cursor, over the same rectangle. */
static int draw_allheads(ViewScreen *s, const ViewModel *m, Err *e) {
    ViewRect r = view_pattern_rect(&s->lay);
    if (r.w <= 0) return 0;
    if (!s->allheads && !(s->allheads = make_window(&r, e))) return -1;
    view_draw_allheads(s->allheads, m, &s->pal);
    wnoutrefresh(s->allheads);
    return 0;
}

/* The distributions overlay, over the same rectangle. */
static int draw_dist(ViewScreen *s, const ViewModel *m, Err *e) {
    ViewRect r = view_dist_rect(&s->lay);
    if (r.w <= 0) return 0;
    if (!s->dist && !(s->dist = make_window(&r, e))) return -1;
    view_draw_dist(s->dist, m->dist, m, &s->pal);
    wnoutrefresh(s->dist);
    return 0;
}

int view_frame(ViewScreen *s, const ViewModel *m, Err *e) {
    if (!s->pal_ready || s->pal_colour != effective_colour(m) || s->pal_ascii != m->ascii) {
        if (view_palette_init(&s->pal, effective_colour(m), m->ascii, e)) return -1;
        s->pal_colour = effective_colour(m);
        s->pal_ascii = m->ascii;
        s->pal_ready = 1;
    }
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    LayoutOpts o = view_layout_opts(m);
    int fresh = cols != s->lay.cols || rows != s->lay.rows || !same_opts(&o, &s->opts);
    if (fresh && relayout(s, cols, rows, &o, e)) return -1;
    if (s->lay.too_small) {
        werase(stdscr);
        view_draw_too_small(stdscr, &s->pal, cols, rows);
        wnoutrefresh(stdscr);
        doupdate();
        return 0;
    }
    /* stdscr first, under the panes: getch() refreshes stdscr whenever it is
     * touched (after initscr and every resize it all is), which would paint
     * its blank cells over the frame just drawn until the next key redrew it
     * (a replay always opened blank). Once passed to the virtual screen here
     * it is untouched, and getch leaves the frame alone. */
    wnoutrefresh(stdscr);
    for (int p = 0; p < VIEW_PANE_COUNT; p++) {
        if (!s->win[p]) continue;
        werase(s->win[p]);
        DRAW[p](s->win[p], m, &s->pal);
        wnoutrefresh(s->win[p]);
    }
    if (m->pattern && draw_pattern(s, m, e)) return -1;
    if (m->heads && draw_heads(s, m, e)) return -1;
    if (m->dist && draw_dist(s, m, e)) return -1;
    if (m->allheads_open && draw_allheads(s, m, e)) return -1;
    if (m->flips_open && m->parent.n > 0 && draw_flips(s, m, e)) return -1;
    view_draw_pick(m, &s->lay, &s->pal); /* it holds the keyboard: nothing else may hide it */
    if (m->help_open && s->help) {
        view_draw_help(s->help, m, &s->pal);
        wnoutrefresh(s->help);
    }
    doupdate();
    return 0;
}

void view_screen_free(ViewScreen *s) {
    drop_windows(s);
    memset(s, 0, sizeof *s);
}
