/* goto.h — the TUI's go-to (`G`): a typed place, parsed by a pure
 * function, and the move to it.
 *
 * Four forms: `L15 H31` (also `l15h31`, `L15,H31`) and `15.31` select a
 * head; `pos 1200` moves the token cursor; both at once (`L15 H31 pos
 * 1200`) also open the inspector on that decision, so "why did this head
 * go global there" is one go-to; anything else is a token's
 * text, searched forward from the cursor (wrapping round), case-insensitive
 * and across token boundaries. A head or position out of range, or a form
 * begun and not finished (`L15`, `pos x`), is refused with one line
 * saying why, and nothing moves. Enter on a row of the text pane that
 * names a head (and a position) selects them the same way.
 */
#ifndef AHASCOPE_TUI_GOTO_H
#define AHASCOPE_TUI_GOTO_H

#include "views/view.h"

typedef enum { TUI_GOTO_BAD, TUI_GOTO_HEAD, TUI_GOTO_POS, TUI_GOTO_TEXT } TuiGotoKind;

typedef struct {
    TuiGotoKind kind;
    int layer, head; /* TUI_GOTO_HEAD */
    int pos;         /* TUI_GOTO_POS; with TUI_GOTO_HEAD, -1 or the position named too */
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

/* The head, and the position (-1: none), that a row of the text pane
 * names: by its table's `layer`, `head` and `pos` columns when header (the
 * line above the table's rule of dashes) names them, else by an `L3 H5` (or
 * `L3H5`) and a `pos 12` in the row. Pure; 1 when a head was found. */
int tui_goto_row(const char *header, const char *row, int *layer, int *head, int *pos);

/* Enter on the text pane (`:`, `v`, `R`, `D`): select the head (and
 * position) its first row shown names, the one just under the pinned
 * header. Returns 0, moving nothing and saying nothing, when that row names
 * no head in range. */
int tui_goto_text_row(ViewModel *m);

#endif
