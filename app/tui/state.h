/* state.h — the state the TUI controller's files share (app/tui/ only).
 *
 * One Tui per process, owned by the UI thread: the view model and screen,
 * the worker and query thread it talks to, and what the keys have asked
 * for. The functions below are the seams between the controller's files;
 * README.md says which file holds what.
 */
#ifndef AHASCOPE_TUI_STATE_H
#define AHASCOPE_TUI_STATE_H

#include "app/setup.h"
#include "app/tui/job.h"
#include "app/tui/sql.h"
#include "app/tui/tui_ctl.h"
#include "app/tui/worker.h"
#include "store/store.h"
#include "views/heads.h"
#include "views/dist.h"
#include "views/pattern.h"
#include "views/tokstats.h"
#include "views/screen.h"

/* What a job runs: the `:` query, what one of the panes reads (the job
 * slot), or a run being loaded onto the screen (the load slot). */
typedef enum {
    TUI_PANE_SQL, TUI_PANE_SUMMARY, TUI_PANE_DIFF, TUI_PANE_PLOTS, TUI_PANE_RUNS, TUI_PANE_EXPORT, TUI_PANE_OPEN
} TuiPane;

/* A bookmark write waiting for a database another process has locked (bookmarks.c). */
typedef struct {
    int64_t run;
    int pos, drop;
    char note[VIEW_NOTE_MAX];
} TuiMarkWrite;
#define TUI_MARK_QUEUE 64     /* writes that may wait at once; past it, the status line says one was not kept */
#define TUI_MARK_RETRY_S 0.25 /* how often the frame loop tries them again */
#define TUI_MARK_WAIT_MS 100  /* a key's own write waits this long for the lock before queueing */
#define TUI_MARK_POLL_MS 20   /* a retry's, so no frame stalls */

typedef struct {
    ViewModel m;
    ViewScreen scr;
    TuiWorker w;
    TuiJob job;         /* the one read of the database running off this thread (a `:` query or a pane's), if any */
    double job_shown;   /* when its progress line was last redrawn */
    TuiJob load;        /* the run being read onto the screen, a chunk at a time (replay.c) */
    int64_t load_run;   /* which run that is */
    int load_first;     /* it is the `--replay` run itself */
    int load_began;     /* its row came: the screen shows it */
    int load_total;     /* its positions committed when the read began */
    char load_status[16]; /* its status then ("done", "running") */
    double load_shown;  /* when its progress line was last redrawn (monotonic seconds) */
    char rescore_msg[200]; /* what the status line says once a rescore is done */
    double rescore_shown; /* when a rescore's progress line was last redrawn (monotonic seconds) */
    double sql_timeout; /* seconds a `:` query may run (0: TUI_SQL_TIME_LIMIT) */
    int64_t screen_run; /* the recorded run whose positions are on screen (0: none, or not recorded) */
    double prefill_shown; /* when a long prefill's line was last redrawn */
    int prefill_on;     /* that line is up: say what the prefill took when it ends */
    const AppLoaded *L; /* &loaded in a live run, NULL in a replay */
    AppLoaded loaded;   /* the model, tokenizer and routers of a live run */
    RunOpts run;        /* a live run's options, as the run was begun with them */
    const char *db;     /* recording target, NULL: not recording */
    int speed_i, playing, dirty, want_sql;
    int attn_pending;   /* an attention request is out */
    int replay;         /* browsing a recorded run: no model, no worker */
    int64_t replay_run;
    double replay_next; /* when a playing replay moves its cursor on */
    AttnConfig cfg;     /* the settings asked for last (the worker may not have started them yet) */
    int8_t **ablate_maps; /* every force map `!` made this session, kept to the end: a parent's settings (the
                             comparison's) may name any of them, and they are n_layers * n_heads bytes each */
    int n_ablate_maps;
    char ablate_what[64]; /* the last `!`'s force, "L2H1=local@503", for the comparison's text */
    AblateDiff *ablate;   /* the last comparison of an ablated child with its parent (ablate.c), NULL none */
    int64_t ablate_run, ablate_parent; /* the runs it compares (0: not recorded) */
    int ablate_shown;     /* the comparison's progress line is up */
    int ablate_pending;   /* a comparison was asked for and has not come (nor been stopped) */
    int restore;        /* cursor to put back once a re-evaluated run reaches it, -1 none */
    int new_run_pending; /* a new run began: the old one stays on screen until its first step */
    int reevaluating;   /* a re-evaluation was asked for: say its run id when it shows */
    char reevaluating_what[160];
    char reeval_note[128]; /* a re-evaluation replaced by this one: where it stopped, for the progress line */
    AttnConfig reeval_from; /* the settings of the run on screen, back in force if a re-evaluation stops */
    float *attn_buf;    /* [seq_len] attention weights taken from the worker */
    char *prompt;       /* the prompt of the last run begun from text, whole (owned): what `e` edits */
    char item_note[160]; /* tui --tasks: the item's line, shown at open and again when its prefill ends; "" none */
    int note_pos;        /* `C`: the position whose bookmark the note line is for */
    struct {
        TuiMarkWrite w[TUI_MARK_QUEUE]; /* oldest first */
        int n;
        double next_try; /* clock_now() of the next retry */
    } marks_q;
    ViewPattern pat;    /* the attention-pattern view (A), see pattern_ctl.h */
    int pat_pending;    /* a pattern request is out to the worker */
    double pat_asked;   /* when it was asked for */
    double pat_cost;    /* seconds the last one took to arrive */
    ViewHeads heads;    /* the heads sorted by a run rate (H), see heads_ctl.h */
    int paths_pending;  /* `&` asked the worker for every head's full rows, for the rollout at paths_pos */
    int paths_pos;
    ViewTokStats *tokstats; /* `c`'s count under way, NULL none (tokstats_ctl.h) */
    int tokstats_total; /* the positions it counts */
    int tokstats_lo;    /* the first of them (a span's start, else 0) */
    const StepTrace *tokstats_first; /* the history's first trace and the recorded run then: */
    int64_t tokstats_run;               /* either changed means another run is on screen */
    double tokstats_shown; /* when its progress line was last redrawn */
    ViewDist dist;      /* the distributions pane (d), see dist_ctl.h */
    TuiJob dist_job;    /* its count of a recorded run, off this thread */
    double dist_asked, dist_cost; /* when the last count began; seconds it took */
    int why_pending, why_n; /* a why request is out; the positions on screen when it was asked */
    int pasting;        /* between a bracketed paste's start and end: keys are text, never commands */
    int from_live;      /* the replay on screen was opened from a live session, which kept is waiting for */
    int64_t parent_next; /* the recorded parent of the replay on screen, read once it is loaded and the inspector opens (0: none) */
    int load_parent;    /* the load under way reads that parent into the model's parent run (views/pin.h); 2: drops what comes */
    int flips_on_read;  /* X was pressed before that run had come: its map opens when it has */
    int64_t parent_run; /* the parent of the run on screen (a replay's recorded one, a re-evaluation's), 0: none */
    int64_t other_run;  /* the run chosen in B to compare with instead (D, X, `par`), 0: the parent */
    struct {            /* the live session's positions and header while a recorded run is browsed */
        StepTrace **hist;
        int n_hist, cap_hist, cursor, follow;
        ViewHeader hdr;
        int64_t screen_run;
        int64_t parent_run; /* its parent, which Tab on an empty line in B reads back */
        ViewMark *marks; /* a task item's marks belong to the live run, not to the recording browsed */
        int n_marks;
        ViewNote *notes; /* and its bookmarks' notes */
        int n_notes;
    } kept;
} Tui;

/* The play speed every run starts at: 10 positions a second. */
#define TUI_SPEED_START 4

/* --- play.c (calls no other file of the controller) --- */

/* The play speed in positions a second (0: as fast as it goes). */
double tui_speed(const Tui *t);

/* + and -: one step along the speeds, held at their ends. */
void tui_speed_step(Tui *t, int up);

/* Tell the worker to play or pause at the current speed. */
void tui_set_play(Tui *t, int playing);

/* --- loop.c --- */

/* Take the terminal, run the frame loop until a quit, and give the
 * terminal back; -1 with e set when the screen could not be set up. */
int tui_show(Tui *t, int mono, int ascii, Err *e);

/* --- actions.c --- */

/* The codes curses gives the terminal's bracketed-paste brackets
 * (ESC[200~ … ESC[201~, asked for with ESC[?2004h): past every KEY_*. */
#define TUI_KEY_PASTE_BEGIN (KEY_MAX + 1)
#define TUI_KEY_PASTE_END (KEY_MAX + 2)

/* Act on one key (live or replay, through the one action table); 1 to quit. */
int tui_key(Tui *t, int ch);


/* --- live.c --- */

/* Load the model, start the worker on the prompt and set up the screen's
 * model; -1 with e set (and nothing left to free) when anything failed. */
int tui_live_open(Tui *t, const TuiOpts *o, Err *e);

/* Stop the worker and free what tui_live_open took. */
void tui_live_close(Tui *t);

/* Take what the worker finished and ask for the attention the view wants. */
void tui_take_results(Tui *t);


/* --- settings.c --- */

/* τ or θ one step up or down (t T o O); 0 if a is neither. */
int tui_next_threshold(ViewAction a, float *tau, double *theta_logit);

/* Score the stored values of the history at new thresholds: a slice now,
 * the rest a slice a frame (tui_rescore_poll); the status line says `done`
 * once the new thresholds are in force, and its progress until then. */
void tui_rescore(Tui *t, float tau, double theta_logit, const char *done);

/* Each frame: the next slice of a rescore under way, and its progress line. */
void tui_rescore_poll(Tui *t);

/* Esc: drop the rescore under way (the thresholds in use stay); 1 if one was. */
int tui_cancel_rescore(Tui *t);

/* The thresholds a new step starts from: a rescore's under way, else those in use. */
void tui_thresholds(const Tui *t, float *tau, double *theta_logit);

/* w W t T o O (and P's cycling): a changed setting re-runs the same tokens
 * as a new run; pressed during one, it stops that one (kept, interrupted)
 * and starts anew. */
void tui_change_setting(Tui *t, ViewAction a);

/* The path every setting change of a live run takes (the keys, the policy
 * picker, a typed value): re-evaluate as a new linked run under c, or
 * re-score when the same branches run; "unchanged" when c is the config
 * in force. */
void tui_apply_setting(Tui *t, const AttnConfig *c);

/* `!`: re-run as a child with the selected head forced the other way
 * (local where its gate at the cursor was global, else global) from the
 * cursor's position on. */
void tui_ablate(Tui *t);

/* --- ablate.c --- */

/* Greedy tokens an ablation's comparison generates from the end under each run. */
#define TUI_ABLATE_CONT 16

/* Each frame of a live run: the comparison's progress line while the worker
 * computes it, then its text in the text pane and its summary on the
 * status line (ablate_diff.h says what is compared). */
void tui_ablate_poll(Tui *t);

/* `b`: set or drop the bookmark at the cursor, kept in the database beside
 * the run on screen, a live run's or a replay's (a file of schema 8 or
 * later: an older one's stay on screen, and the status line says why). */
void tui_bookmark(Tui *t);

/* The frame loop's turn: retry the bookmark writes a locked database made
 * wait, every TUI_MARK_RETRY_S, saying on the status line when they land. */
void tui_bookmarks_poll(Tui *t);

/* At quit, after the terminal is given back: the writes still waiting get
 * STORE_BUSY_MS each, and each one still not kept is a line on stderr. */
void tui_bookmarks_flush(Tui *t);

/* `C`: ask for the note of the cursor's bookmark (set first if none);
 * tui_note_done keeps the line typed (empty: no note). */
void tui_bookmark_note(Tui *t);
void tui_note_done(Tui *t);

/* 1 if policy p can run on what was loaded (aha needs routers, static its heads). */
int tui_policy_runs(const Tui *t, Policy p);

/* A replay re-thresholded at tau and theta: its stored scores and masses
 * re-scored, the recorded gates kept. */
void tui_replay_rethreshold(Tui *t, float tau, double theta_logit);

/* Esc on a live run: stop the re-evaluation under way, saying so; 1 if
 * there was one (running, or asked for and not begun). */
int tui_stop_reeval(Tui *t);

/* A re-evaluation stopped: the settings of the run on screen are back. */
void tui_reeval_stopped(Tui *t);

/* --- modes.c --- */

/* Set the live session's positions and header aside (kept) before a
 * recorded run replaces them on screen. */
void tui_keep_live(Tui *t);

/* Esc in a replay opened from a live session: the live run comes back as
 * it was left; 0 when the replay is not one (nothing happens). */
int tui_back_to_live(Tui *t);

/* Free what tui_keep_live set aside, if anything (at the end of the session). */
void tui_free_kept(Tui *t);

/* --- replay.c --- */

/* `--replay`: read a recorded run (the last one by default) onto the
 * screen's model, no model needed; -1 with e set (nothing left to free). */
int tui_replay_open(Tui *t, const TuiOpts *o, Err *e);

/* Free what tui_replay_open took. */
void tui_replay_close(Tui *t);

/* Open recorded run `id` on this screen, as a replay: it is read off this
 * thread, and fills the screen as it comes (tui_poll_load). */
void tui_open_run(Tui *t, int64_t id);

/* Each frame: the positions of the run being read that came (a frame's
 * budget of them), its progress line, and its end. */
void tui_poll_load(Tui *t);

/* 1 while a run is being read onto the screen. */
int tui_loading(const Tui *t);

/* Esc: stop reading the run (what came stays); 1 if one was being read. */
int tui_cancel_load(Tui *t);

/* Tab in B's editor: compare the run on screen with recorded run id
 * instead of its parent (D, X and the `par` row; views/pin.h), read off
 * this thread into the model's parent slot; id 0: with the parent again. */
void tui_compare_with(Tui *t, int64_t id);

/* X before the run it compares with is on screen (a replay's parent not
 * yet read, or a run chosen in B still coming): start reading it if no
 * one has, say how far it has come, and open the map once it is all here.
 * 1 if it took the key; 0 when there is no such run (the view says so). */
int tui_flips_wait(Tui *t);

/* A playing replay: the cursor moves on at the play speed. */
void tui_replay_advance(Tui *t);

/* --- panes.c --- */

/* `s`: export the run on screen as JSON and CSV in the current directory. */
void tui_export_run(Tui *t);

/* `v`: the plots, as text in the scrollable pane. */
void tui_show_plots(Tui *t);

/* `R` (diff 0) the run on screen summarised, or `D` (diff 1) where it
 * differs from its parent. */
void tui_show_compare(Tui *t, int diff);

/* `B`: the database's runs in the text pane; the status line asks for one. */
void tui_show_runs(Tui *t);

/* Each frame: the running job's progress line, or a finished job's result
 * in its pane. */
void tui_poll_job(Tui *t);

/* Esc or Ctrl-C: stop the running pane job, else the read of a run, else
 * a rescore, saying so; 1 if one was running. */
int tui_cancel_job(Tui *t);

/* --- query.c --- */

/* Start `:` query sql over the current database, off this thread. */
void tui_run_sql(Tui *t, const char *sql);

/* A finished `:` query into the SQL pane. */
void tui_sql_done(Tui *t, TuiJobResult *jr);

#endif
