/* palette.c — colours, pairs and glyphs (see palette.h). */
#include "views/palette.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One palette entry: a curses colour and whether dark text reads on it. */
typedef struct {
    short colour;
    unsigned char light;
} Ink;

/* 256 colours: index 0 is the screen background, 1 "not computed", then a
 * viridis-like ramp (perceptually ordered, colour-blind safe), then the four
 * agreement classes in Okabe–Ito hues that no common colour blindness
 * confuses (no red against green): both global blue, both local grey,
 * missed global vermillion, needless global reddish purple; last the
 * fixed-local heads in tan, a hue neither the ramp nor the classes use. */
static const Ink INK256[] = {
    {-1, 0},  {236, 0}, {54, 0},  {61, 0},  {24, 0},  {30, 0},  {35, 1},  {77, 1},
    {148, 1}, {220, 1}, {32, 0},  {240, 0}, {166, 0}, {175, 1}, {137, 1},
};
static const unsigned char SW256[VIEW_SWATCHES] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0};

/* 8 colours: black serves as background and "not computed"; the eight levels
 * share four hues; agreement avoids red against green: both global blue,
 * both local cyan, missed yellow, needless red. A seventh colour would need
 * 65 pairs, one past the 64 of an 8-colour terminal, so a fixed-local cell
 * is black like one not computed in a half-block, and its glyph alone in
 * the dim text colour (view_cell_style). */
static const Ink INK8[] = {
    {COLOR_BLACK, 0}, {COLOR_BLUE, 0}, {COLOR_CYAN, 1}, {COLOR_GREEN, 1}, {COLOR_YELLOW, 1}, {COLOR_RED, 0},
};
static const unsigned char SW8[VIEW_SWATCHES] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 1, 2, 4, 5, 0, 0};

/* Text roles: foreground, background (-2 = the screen background), attributes. */
typedef struct {
    short fg, bg;
    attr_t attr;
} Role;
static const Role ROLE256[VIEW_TX_COUNT] = {
    {231, 24, A_BOLD}, {220, -2, A_BOLD}, {252, 236, 0}, {16, 214, A_BOLD},
    {16, 250, A_BOLD}, {220, -2, 0},      {45, -2, 0},   {244, -2, 0},
};
static const Role ROLE8[VIEW_TX_COUNT] = {
    {COLOR_WHITE, COLOR_BLUE, A_BOLD}, {COLOR_YELLOW, -2, A_BOLD}, {COLOR_BLACK, COLOR_WHITE, 0},
    {COLOR_BLACK, COLOR_YELLOW, 0},    {COLOR_BLACK, COLOR_CYAN, 0}, {COLOR_YELLOW, -2, 0},
    {COLOR_CYAN, -2, 0},               {COLOR_WHITE, -2, A_DIM},
};
/* Without colour, roles differ by attributes only. */
static const attr_t ROLE_MONO[VIEW_TX_COUNT] = {
    A_REVERSE, A_BOLD, A_REVERSE, A_REVERSE | A_BOLD, A_BOLD, A_NORMAL, A_NORMAL, A_DIM,
};

int view_palette_pairs_needed(ViewColour c) {
    int k = c == VIEW_COLOUR_256 ? (int)(sizeof INK256 / sizeof INK256[0])
          : c == VIEW_COLOUR_8   ? (int)(sizeof INK8 / sizeof INK8[0])
                                 : 0;
    return k ? 1 + k * k + k + VIEW_TX_COUNT : 0;
}

ViewColour view_colour_pick(int mono_flag, const char *no_color_env, int has_colours, int n_colours,
                            int n_pairs) {
    if (mono_flag || (no_color_env && *no_color_env) || !has_colours) return VIEW_COLOUR_NONE;
    if (n_colours >= 256 && n_pairs > view_palette_pairs_needed(VIEW_COLOUR_256)) return VIEW_COLOUR_256;
    if (n_colours >= 8 && n_pairs > view_palette_pairs_needed(VIEW_COLOUR_8)) return VIEW_COLOUR_8;
    return VIEW_COLOUR_NONE;
}

ViewColour view_colour_detect(int mono_flag) {
    const char *nc = getenv("NO_COLOR");
    if (mono_flag || (nc && *nc) || !has_colors() || start_color() != OK) return VIEW_COLOUR_NONE;
    return view_colour_pick(0, NULL, 1, COLORS, COLOR_PAIRS);
}

static short bg_of(const ViewPalette *p, short c) { return c == -1 || c == -2 ? p->default_bg : c; }

static int init_pairs(ViewPalette *p, const Role *roles, Err *e) {
    int k = p->n_col, ok = 1;
    for (int f = 0; f < k; f++)
        for (int b = 0; b < k; b++) {
            short fg = p->col[f] < 0 ? (short)COLOR_WHITE : p->col[f];
            ok &= init_pair((short)(p->cell_base + f * k + b), fg, bg_of(p, p->col[b])) == OK;
        }
    for (int c = 0; c < k; c++) {
        short fg = p->light[c] ? (p->colour == VIEW_COLOUR_256 ? 16 : COLOR_BLACK)
                               : (p->colour == VIEW_COLOUR_256 ? 231 : COLOR_WHITE);
        if (p->col[c] < 0) fg = -1;
        ok &= init_pair((short)(p->tok_base + c), fg, bg_of(p, p->col[c])) == OK;
    }
    for (int r = 0; r < VIEW_TX_COUNT; r++)
        ok &= init_pair((short)(p->text_base + r), roles[r].fg, bg_of(p, roles[r].bg)) == OK;
    return ok ? 0 : err_set(e, "view: the terminal refused a colour pair");
}

int view_palette_init(ViewPalette *p, ViewColour c, int ascii, Err *e) {
    memset(p, 0, sizeof *p);
    p->colour = c;
    p->ascii = ascii;
    if (c == VIEW_COLOUR_NONE) return 0;
    const Ink *ink = c == VIEW_COLOUR_256 ? INK256 : INK8;
    p->n_col = c == VIEW_COLOUR_256 ? (int)(sizeof INK256 / sizeof *INK256) : (int)(sizeof INK8 / sizeof *INK8);
    memcpy(p->sw_col, c == VIEW_COLOUR_256 ? SW256 : SW8, sizeof p->sw_col);
    for (int i = 0; i < p->n_col; i++) {
        p->col[i] = ink[i].colour;
        p->light[i] = ink[i].light;
    }
    if (!has_colors() || start_color() != OK) return err_set(e, "view: the terminal has no colours");
    if (COLOR_PAIRS <= view_palette_pairs_needed(c))
        return err_set(e, "view: the terminal has %d colour pairs, %d needed", COLOR_PAIRS,
                       view_palette_pairs_needed(c) + 1);
    p->default_bg = use_default_colors() == OK ? -1 : COLOR_BLACK;
    p->cell_base = 1;
    p->tok_base = (short)(1 + p->n_col * p->n_col);
    p->text_base = (short)(p->tok_base + p->n_col);
    return init_pairs(p, c == VIEW_COLOUR_256 ? ROLE256 : ROLE8, e);
}

short view_pair_cells(const ViewPalette *p, int fg_sw, int bg_sw) {
    if (p->colour == VIEW_COLOUR_NONE) return 0;
    return (short)(p->cell_base + p->sw_col[fg_sw] * p->n_col + p->sw_col[bg_sw]);
}

short view_pair_token(const ViewPalette *p, int sw) {
    return p->colour == VIEW_COLOUR_NONE ? 0 : (short)(p->tok_base + p->sw_col[sw]);
}

void view_text_style(const ViewPalette *p, ViewText role, attr_t *attr, short *pair) {
    if (p->colour == VIEW_COLOUR_NONE) {
        *attr = ROLE_MONO[role];
        *pair = 0;
        return;
    }
    *attr = (p->colour == VIEW_COLOUR_256 ? ROLE256 : ROLE8)[role].attr;
    *pair = (short)(p->text_base + role);
}

void view_cell_style(const ViewPalette *p, int top, int bottom, int half, wchar_t *ch, attr_t *attr,
                     short *pair) {
    *attr = A_NORMAL;
    int fixed_alone = top == VIEW_SW_FIXED && (!half || bottom == VIEW_SW_FIXED || bottom == VIEW_SW_BLANK);
    if (p->colour != VIEW_COLOUR_NONE && fixed_alone) {
        /* a fixed-local cell alone: its glyph in its colour, so it reads as no decision in colour too */
        *ch = view_glyph_shade(p, VIEW_SW_FIXED);
        *pair = view_pair_cells(p, VIEW_SW_FIXED, VIEW_SW_BLANK);
        if (p->colour == VIEW_COLOUR_8) view_text_style(p, VIEW_TX_DIM, attr, pair); /* no hue of its own */
    } else if (p->colour == VIEW_COLOUR_NONE) {
        *ch = view_glyph_shade(p, top);
        *pair = 0;
    } else if (half && !p->ascii) {
        *ch = L'\u2580'; /* ▀: foreground paints the upper half */
        *pair = view_pair_cells(p, top, bottom);
    } else {
        *ch = p->ascii ? L' ' : L'\u2588';
        *pair = view_pair_cells(p, top, top);
    }
}

wchar_t view_glyph_shade(const ViewPalette *p, int sw) {
    /* the lowest level is a faint mark, not a blank, so it differs from a
     * cell with nothing to show (no choice, not computed), and the legend's
     * sample is what the cells show */
    static const wchar_t shade_u[] = L"\u00b7\u2591\u2592\u2593\u2588"; /* ·░▒▓█ */
    static const char shade_a[] = "_.:-=+*#%@";
    if (sw >= VIEW_SW_LEVEL1 && sw < VIEW_SW_LEVEL1 + VIEW_LEVELS) {
        int l = sw - VIEW_SW_LEVEL1;
        if (p->ascii) return (wchar_t)shade_a[(l * 9 + (VIEW_LEVELS - 1) / 2) / (VIEW_LEVELS - 1)];
        return shade_u[(l * 4 + (VIEW_LEVELS - 1) / 2) / (VIEW_LEVELS - 1)];
    }
    switch (sw) {
    case VIEW_SW_BOTH_GLOBAL: return p->ascii ? L'#' : L'\u2588';
    case VIEW_SW_BOTH_LOCAL: return L'.';
    case VIEW_SW_MISSED_GLOBAL: return L'X';
    case VIEW_SW_NEEDLESS_GLOBAL: return L'o';
    case VIEW_SW_FIXED: return p->ascii ? L'~' : L'\u254c'; /* ╌: no choice, the layer's window */
    default: return L' ';
    }
}

wchar_t view_glyph_spark(const ViewPalette *p, float v) {
    static const wchar_t spark_u[] = L"\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588";
    static const char spark_a[] = "_.-=+*#@";
    if (isnan(v)) return L' ';
    int i = (int)floorf(v * 8);
    i = i < 0 ? 0 : i > 7 ? 7 : i;
    return p->ascii ? (wchar_t)spark_a[i] : spark_u[i];
}

wchar_t view_glyph_bar(const ViewPalette *p, float f) {
    static const wchar_t eighth_u[] = L" \u258f\u258e\u258d\u258c\u258b\u258a\u2589\u2588";
    if (!(f > 0)) return L' ';
    if (f >= 1) return p->ascii ? L'#' : L'\u2588';
    if (p->ascii) return f >= 0.5f ? L'+' : L' ';
    return eighth_u[(int)(f * 8)];
}

void view_mark_style(const ViewPalette *p, ViewMarkKind k, attr_t *attr, short *pair) {
    attr_t a = 0;
    *pair = 0;
    if (k == VIEW_MARK_QUESTION) view_text_style(p, VIEW_TX_FOCUS, &a, pair);
    else if (k == VIEW_MARK_NEEDLE) *pair = view_pair_token(p, VIEW_SW_MISSED_GLOBAL);
    *attr = a | A_BOLD;
}
