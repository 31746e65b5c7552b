/* views_fixture.h — shared helpers of the views tests: an off-screen
 * terminal (newterm on /dev/null), a view model filled with a known
 * synthetic trace, and reading a window back as text. */
#ifndef AHASCOPE_TESTS_VIEWS_FIXTURE_H
#define AHASCOPE_TESTS_VIEWS_FIXTURE_H

#include <stdio.h>

#include "views/screen.h"

typedef struct {
    SCREEN *scr;
    FILE *out, *in;
} FxTerm;

/* Start an off-screen terminal of type term (e.g. "xterm-256color") sized
 * cols×rows, in the C.UTF-8 locale. Returns 0 on success. */
int fx_term_open(FxTerm *t, const char *term, int cols, int rows);

/* End and free it. */
void fx_term_close(FxTerm *t);

/* Fill m (already view_init'ed) with n steps whose values follow fx_value. */
void fx_fill(ViewModel *m, int n);

/* The value fx_fill puts at (pos, cell) for metric slot k (0 score,
 * 1 oracle mass (stored as log-odds), 2 oracle_err, 3 qada, 4 qada_bulk); gate = score > 0.5. */
float fx_value(int pos, int cell, int k);

/* Text of line y of window w (UTF-8, trailing spaces kept), in a static buffer. */
const char *fx_line(WINDOW *w, int y);

/* 1 if any line of w contains needle. */
int fx_contains(WINDOW *w, const char *needle);

/* The character and colour pair at (y, x) of w. */
void fx_cell(WINDOW *w, int y, int x, wchar_t *ch, short *pair, attr_t *attr);

#endif
