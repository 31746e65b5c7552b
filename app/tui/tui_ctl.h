/* tui_ctl.h — the TUI controller: `ahascope tui`, live or `--replay`.
 *
 * The controller owns the terminal (curses, signals, the frame loop), the
 * ViewModel the views draw, and every request to the rest of the program:
 * the engine worker, and the pane jobs: the `:` query and the store reads
 * behind the text pane, each on a thread of its own. The views turn keys
 * into actions (views/keymap.c names them); what an action does, live or
 * in a replay, is decided here, in one table.
 *
 * The sub-room, top down (calls run one way): loop.c tui_run, curses,
 * signals and the frame loop; actions.c the action table and the line
 * editor's Enter; live.c a run on the model (open, results in from the
 * worker, close), replay.c a recorded run (open, play, open another),
 * modes.c the live run set aside while one opened with B is browsed,
 * settings.c the policy, window and thresholds that re-evaluate or
 * re-score a run (a slice a frame), replay.c also a run's load, a job whose
 * positions come onto the screen a chunk at a time, panes.c the text
 * pane's plots, summary, diff, run list and export as jobs, and each
 * frame's look at the running job, query.c the `:` query's start and
 * result; goto.c `G`'s parser and move, and Enter on a text pane's row;
 * pattern_ctl.c the attention-pattern view (`A`): its keys and its data, asked
 * of the worker or built from a replay's recorded far keys; heads_ctl.c the
 * heads sorted by a run rate (`H`): opening it, its keys, Enter's
 * selection; picker.c `P`'s policy picker and typed.c `z`'s typed
 * settings, both through settings.c's one path; tokstats_ctl.c `c`'s rates by
 * token type, counted a slice a frame; yank_ctl.c `y`, to a file and the
 * clipboard; dist_ctl.c the distributions pane (`d`): its counts, a recorded
 * run's as a job of its own, and what drove the router at the cursor, asked
 * of the worker; play.c the play speed and state,
 * which every file above may call; worker.c/.h the engine thread, job.c/.h
 * the pane jobs' threads (where the UI thread and a job meet), sql.c/.h
 * the `:` query's work. state.h holds the state they share, for them alone.
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
