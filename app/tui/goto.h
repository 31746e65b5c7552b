/* goto.h — the TUI's go-to (`G`): a typed place, parsed by a pure
 * function, and the move to it.
 *
 * Four forms: `L15 H31` (also `l15h31`, `L15,H31`) and `15.31` select a
 * head; `pos 1200` moves the token cursor; anything else is a token's
 * text, searched forward from the cursor (wrapping round), case-insensitive
 * and across token boundaries. A head or position out of range, or a form
 * begun and not finished (`L15`, `pos x`), is refused with one line
 * saying why, and nothing moves.
 */
#ifndef AHASCOPE_TUI_GOTO_H
#define AHASCOPE_TUI_GOTO_H

#include "views/view.h"

typedef enum { TUI_GOTO_BAD, TUI_GOTO_HEAD, TUI_GOTO_POS, TUI_GOTO_TEXT } TuiGotoKind;

typedef struct {
    TuiGotoKind kind;
    int layer, head; /* TUI_GOTO_HEAD */
    int pos;         /* TUI_GOTO_POS */
    char why[160];   /* TUI_GOTO_BAD: the status line's reason */
} TuiGoto;

/* Parse s for a model of n_layers × n_heads with n_pos positions on
 * screen. Pure; TUI_GOTO_TEXT means s is searched for as it is. */
TuiGoto tui_goto_parse(const char *s, int n_layers, int n_heads, int n_pos);

/* The first position after `from` (wrapping round) whose token holds the
 * start of needle in the run's text, compared ASCII case-insensitively
 * and across token boundaries; -1 when none does or needle is empty. */
int tui_goto_find_text(const ViewModel *m, const char *needle, int from);

/* Go where s says on m (selection or cursor), or say on the status line
 * why not, moving nothing. Returns 1 when it moved. */
int tui_goto_apply(ViewModel *m, const char *s);

#endif
