/* palette.h — how swatches and text roles look on this terminal: colour
 * pairs in 256- or 8-colour mode, shading glyphs without colour, ASCII
 * stand-ins without UTF-8. All state lives in a ViewPalette the screen owns.
 *
 * Pair numbering (kept below 256 so any ncurses build can hold it): cells
 * take pairs 1 … K² indexed by (foreground colour, background colour) among
 * the palette's K colours, so a ▀ half-block shows two swatches at once;
 * then K pairs for tinted token text, then one pair per text role.
 */
#ifndef AHASCOPE_VIEW_PALETTE_H
#define AHASCOPE_VIEW_PALETTE_H

#include "engine/err.h"
#include "views/metric.h"
#include "views/tui.h"

#define VIEW_PALETTE_MAX_COLOURS 16

typedef enum {
    VIEW_TX_HEADER,     /* the header line */
    VIEW_TX_FOCUS,      /* border and title of the focused pane */
    VIEW_TX_STATUS,     /* the status line */
    VIEW_TX_MSG,        /* a transient message */
    VIEW_TX_KEY,        /* a key name in the status line and help */
    VIEW_TX_BAR_AHA,    /* AHA's bars */
    VIEW_TX_BAR_ORACLE, /* the oracle's bars */
    VIEW_TX_DIM,        /* secondary text */
    VIEW_TX_COUNT
} ViewText;

typedef struct {
    ViewColour colour; /* in effect: NONE draws with glyphs and attributes only */
    int ascii;         /* no UTF-8 output at all */
    int n_col;
    short col[VIEW_PALETTE_MAX_COLOURS]; /* curses colour numbers; -1 = terminal default */
    unsigned char light[VIEW_PALETTE_MAX_COLOURS]; /* dark text reads better on it */
    unsigned char sw_col[VIEW_SWATCHES];           /* swatch → index into col */
    short cell_base, tok_base, text_base;
    short default_bg; /* -1 when use_default_colors() worked, else black */
} ViewPalette;

/* Pairs a colour mode needs (the terminal's COLOR_PAIRS must exceed it). */
int view_palette_pairs_needed(ViewColour c);

/* Set the palette up for colour mode c (ascii: no UTF-8). With colour this
 * calls start_color() and init_pair(), so curses must be running; with
 * VIEW_COLOUR_NONE it touches nothing. Fails if the terminal has too few pairs. */
int view_palette_init(ViewPalette *p, ViewColour c, int ascii, Err *e);

/* Colour pair showing swatch fg as foreground and swatch bg as background. */
short view_pair_cells(const ViewPalette *p, int fg_sw, int bg_sw);

/* Colour pair for token text tinted with swatch sw (0 without colour). */
short view_pair_token(const ViewPalette *p, int sw);

/* Attributes and colour pair of a text role. */
void view_text_style(const ViewPalette *p, ViewText role, attr_t *attr, short *pair);

/* How a mark's glyph looks, in the token pane's gutter, on the timeline
 * and in the legend alike: bold; with colour the needle in the missed-
 * global colour and the question in the focus colour. */
void view_mark_style(const ViewPalette *p, ViewMarkKind k, attr_t *attr, short *pair);

/* How one heatmap cell looks: a half-block showing top over bottom when
 * half is set (colour mode only), else a full cell of swatch top. A
 * fixed-local top with nothing else in the cell (bottom fixed-local too,
 * or blank) is its glyph (╌, ASCII ~) in its colour, in every mode. */
void view_cell_style(const ViewPalette *p, int top, int bottom, int half, wchar_t *ch,
                     attr_t *attr, short *pair);

/* Glyph of a swatch without colour: shading ramp, letters for agreement,
 * ╌ (~) for a fixed-local head. */
wchar_t view_glyph_shade(const ViewPalette *p, int sw);

/* Sparkline glyph for a value in [0, 1] (space for NAN). */
wchar_t view_glyph_spark(const ViewPalette *p, float v);

/* Bar glyph for a cell filled to fraction f in [0, 1] (eighths in UTF-8). */
wchar_t view_glyph_bar(const ViewPalette *p, float f);

#endif
