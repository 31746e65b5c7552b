/* typed.h — settings typed as numbers (`z`): a pure parser, and the change
 * it asks for, made through the same path as the keys that step them
 * (w W t T o O), live or in a replay.
 *
 * Three forms: `tau 0.42` (the router threshold, 0 to 1); `theta 0.9`, a
 * probability (0 to 1), or `theta -2.2`, log-odds, as θ is stored: a value
 * outside [0, 1] (or written `theta logit 0.5`) is read as log-odds, and
 * the status line says which form it read; `window 64` (1 to the model's
 * context). `t`, `o` and `w` abbreviate the names. Anything else, or a
 * value out of range, is refused with one line saying why.
 */
#ifndef AHASCOPE_TUI_TYPED_H
#define AHASCOPE_TUI_TYPED_H

#include "app/tui/state.h"

typedef enum { TUI_TYPED_BAD, TUI_TYPED_TAU, TUI_TYPED_THETA, TUI_TYPED_WINDOW } TuiTypedKind;

typedef struct {
    TuiTypedKind kind;
    float tau;          /* TUI_TYPED_TAU */
    double theta_logit; /* TUI_TYPED_THETA, as log-odds whichever form was typed */
    int logit_form;     /* TUI_TYPED_THETA: it was typed as log-odds */
    int window;         /* TUI_TYPED_WINDOW */
    char why[160];      /* TUI_TYPED_BAD: the status line's reason */
} TuiTyped;

/* Parse s for a model whose window may go up to max_window. Pure. */
TuiTyped tui_typed_parse(const char *s, int max_window);

/* `z`'s line entered: parse it and change the setting as the stepping keys
 * do (re-evaluate or re-score; a replay re-scores τ and θ and refuses a new
 * window), or say on the status line why not. */
void tui_typed_apply(Tui *t, const char *s);

#endif
