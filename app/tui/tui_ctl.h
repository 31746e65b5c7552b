/* tui_ctl.h — the TUI controller: `ahascope tui`, live or `--replay`.
 *
 * The controller owns the terminal (curses, signals, the frame loop), the
 * ViewModel the views draw, and every request to the rest of the program:
 * the engine worker, and the pane jobs: the `:` query and the store reads
 * behind the text pane, each on a thread of its own. The views turn keys
 * into actions (views/keymap.c names them); what an action does, live or
 * in a replay, is decided here, in one table.
 *
 * Which file holds what, and the order calls run in: README.md beside
 * this file.
 */
#ifndef AHASCOPE_TUI_TUI_H
#define AHASCOPE_TUI_TUI_H

#include <stdint.h>

#include "app/args.h"
#include "views/view.h"

/* What `ahascope tui` was asked for, flags parsed and checked. */
typedef struct {
    RunOpts run;        /* model, prompt, sampling and policy (live only) */
    const char *db;     /* the database recorded into or replayed; NULL: record nothing */
    int replay;         /* browse a recorded run instead of running the model */
    int64_t replay_run; /* the run replayed, 0: the last one */
    int mono, ascii;    /* no colour; no UTF-8 */
    int threads;        /* the engine's worker threads */
    int attn_top;       /* far positions recorded per head */
    double sql_timeout; /* seconds a `:` query may run */
    const ViewMark *marks; /* --tasks: the item's needle and question positions, marked on screen */
    int n_marks;
    const char *item_note; /* --tasks: the status line's "item K of FILE: …", NULL none */
} TuiOpts;

/* Run the TUI on this terminal until the user quits; 0 on a clean exit,
 * -1 with e set when the model, the database or the screen failed. */
int tui_run(const TuiOpts *o, Err *e);

#endif
