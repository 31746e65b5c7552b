/* paint.h — small drawing primitives shared by the panes: one wide
 * character, clipped UTF-8 text, pane borders with titles. They write into
 * a WINDOW and never refresh it. */
#ifndef AHASCOPE_VIEW_PAINT_H
#define AHASCOPE_VIEW_PAINT_H

#include "views/palette.h"

/* Put one character with attributes and colour pair at (y, x). */
void view_put(WINDOW *w, int y, int x, wchar_t ch, attr_t attr, short pair);

/* Put a run of n copies of ch starting at (y, x). */
void view_fill(WINDOW *w, int y, int x, int n, wchar_t ch, attr_t attr, short pair);

/* Write UTF-8 text at (y, x), at most maxw columns; control characters and
 * (in ascii mode or a non-UTF-8 locale) anything non-ASCII become '?'.
 * Returns the number of columns written. */
int view_puts(WINDOW *w, int y, int x, int maxw, const char *s, int ascii, attr_t attr, short pair);

/* view_puts that marks text cut at maxw with a final … ('~' in ascii),
 * cut after the last whole word that fits (view_fit_words). */
int view_puts_fit(WINDOW *w, int y, int x, int maxw, const char *s, int ascii, attr_t attr, short pair);

/* Bytes of s to keep so it fits in maxw columns: all of it when it fits,
 * else up to the last space when that keeps at least half, without the
 * separators (spaces, · | , : ; -) it would end on. */
size_t view_fit_words(const char *s, int maxw, int ascii);

/* printf into view_puts. */
int view_printf(WINDOW *w, int y, int x, int maxw, int ascii, attr_t attr, short pair, const char *fmt,
                ...) __attribute__((format(printf, 8, 9)));

/* Columns the UTF-8 text takes as view_puts would draw it. */
int view_text_width(const char *s, int ascii);

/* The next character of UTF-8 text *s as running text shows it, *s moved
 * past it and its columns in *cw (0: a combining mark): newline ↵, tab →,
 * other controls ·, bytes that do not decode ?, and ASCII stand-ins ($ > .
 * ?) in ascii mode. *s must not be at the NUL. */
wchar_t view_next_glyph(const char **s, int ascii, int *cw);

/* Decode a token's text into at most max display characters: newline → ↵
 * (sets *newline), tab → →, other controls → ·; ASCII stand-ins in ascii
 * mode. Returns the number of characters; *width gets their columns. */
int view_token_glyphs(const char *piece, int ascii, wchar_t *out, int max, int *width, int *newline);

/* A token's text as a printable one-line UTF-8 label (newline → ↵ …), for titles. */
void view_piece_label(const char *piece, int ascii, char *out, size_t n);

/* Border around the whole window with a title in its top edge; the focused
 * pane's border and title are highlighted. */
void view_frame_box(WINDOW *w, const ViewPalette *p, const char *title, int focused);

#endif
