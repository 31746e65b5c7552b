/* actions.c — the one action table for live and replay, and the line editor's Enter.
 *
 * What each of the views' actions does, live and in a replay:
 * one table, one dispatch (see README.md). The views map keys to actions
 * (views/keymap.c); a row here says what the action does on a live run
 * and on a recorded one, or why a replay cannot do it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "app/setup.h"
#include "app/tui/dist_ctl.h"
#include "app/tui/goto.h"
#include "app/tui/heads_ctl.h"
#include "app/tui/pattern_ctl.h"
#include "app/tui/picker.h"
#include "app/tui/state.h"
#include "app/tui/tokstats_ctl.h"
#include "app/tui/typed.h"
#include "app/tui/yank_ctl.h"
#include "views/allheads.h"
#include "views/explain.h"
#include "views/flips.h"
#include "views/keymap.h"

/* The `e` editor takes any prompt a run can begin from whole. */
_Static_assert(VIEW_INPUT_MAX >= APP_PROMPT_FILE_MAX, "the prompt editor must hold a whole --prompt-file");

/* One action's two meanings. Each handler returns 1 to quit. A NULL replay
 * handler: the action needs the model, and a replay says no_replay. */
typedef int (*TuiHandler)(Tui *t, ViewAction a);
typedef struct {
    TuiHandler live, replay;
    const char *no_replay; /* what needs the model, as "the window" */
} TuiAction;

#define NEEDS_POLICY "a new policy"
#define NEEDS_WINDOW "a new window"
#define NEEDS_PROMPT "a new prompt"

static int quit(Tui *t, ViewAction a) { (void)t, (void)a; return 1; }

static int step(Tui *t, ViewAction a) {
    (void)a;
    if (!tui_worker_step(&t->w)) view_set_status(&t->m, "sequence finished: e for a new prompt, or change a setting");
    return 0;
}

/* view_key asks for a step only at the last position. */
static int replay_step(Tui *t, ViewAction a) {
    (void)a;
    view_set_status(&t->m, "end of the recorded run ([ or Home to go back)");
    return 0;
}

static int play(Tui *t, ViewAction a) {
    (void)a;
    tui_set_play(t, !t->playing);
    return 0;
}

/* Play the recording: the cursor moves on at the play speed, from the
 * start when it is at the end. */
static int replay_play(Tui *t, ViewAction a) {
    (void)a;
    t->playing = t->m.playing = !t->playing;
    if (t->playing && t->m.cursor >= t->m.n_hist - 1) t->m.cursor = 0;
    t->m.follow = 0, t->m.speed = tui_speed(t), t->replay_next = 0;
    return 0;
}

static int speed(Tui *t, ViewAction a) {
    tui_speed_step(t, a == VIEW_ACT_SPEED_UP);
    tui_set_play(t, t->playing);
    return 0;
}

static int replay_speed(Tui *t, ViewAction a) {
    tui_speed_step(t, a == VIEW_ACT_SPEED_UP);
    t->m.speed = tui_speed(t);
    return 0;
}

static int setting(Tui *t, ViewAction a) {
    tui_change_setting(t, a);
    return 0;
}

/* A replay's scores and masses are stored: τ and θ re-threshold them. */
static int replay_threshold(Tui *t, ViewAction a) {
    float tau;
    double theta;
    tui_thresholds(t, &tau, &theta); /* a second press steps on from the rescore under way */
    float was_tau = tau;
    double was_theta = theta;
    tui_next_threshold(a, &tau, &theta);
    if (tau == was_tau && theta == was_theta) { /* at a limit (θ 0, τ 1, …): nothing to re-score */
        char tt[48];
        view_tau_theta_text(tt, sizeof tt, " ", tau, decide_prob(theta));
        view_set_status(&t->m, "unchanged: %s is the limit", tt);
        return 0;
    }
    tui_replay_rethreshold(t, tau, theta);
    return 0;
}

static int edit_prompt(Tui *t, ViewAction a) {
    (void)a;
    view_input_begin(&t->m, "prompt", t->prompt);
    return 0;
}

static int sql_prompt(Tui *t, ViewAction a) {
    (void)a;
    view_input_begin(&t->m, "sql", "");
    return 0;
}

static int export(Tui *t, ViewAction a) { (void)a, tui_export_run(t); return 0; }
static int plots(Tui *t, ViewAction a) { (void)a, tui_show_plots(t); return 0; }
static int compare(Tui *t, ViewAction a) { tui_show_compare(t, a == VIEW_ACT_DIFF); return 0; }
static int runs(Tui *t, ViewAction a) { (void)a, tui_show_runs(t); return 0; }
static int redraw(Tui *t, ViewAction a) { (void)t, (void)a, clearok(curscr, TRUE); return 0; }
static int go_to(Tui *t, ViewAction a) { (void)a, view_input_begin(&t->m, "go to", ""); return 0; }
static int pattern(Tui *t, ViewAction a) { (void)a, tui_pattern_toggle(t); return 0; }
static int heads(Tui *t, ViewAction a) { (void)a, tui_heads_toggle(t); return 0; }
static int pick_policy(Tui *t, ViewAction a) { (void)a, tui_picker_open(t); return 0; }
static int type_setting(Tui *t, ViewAction a) { (void)a, view_input_begin(&t->m, "set", ""); return 0; }
static int token_stats(Tui *t, ViewAction a) { (void)a, tui_token_stats(t); return 0; }
static int yank(Tui *t, ViewAction a) { tui_yank(t, a == VIEW_ACT_YANK_CSV); return 0; }
static int keep_files(Tui *t, ViewAction a) { (void)a, tui_keep_files(t); return 0; }
static int paths(Tui *t, ViewAction a) { (void)a, tui_paths(t); return 0; }
static int dist(Tui *t, ViewAction a) { (void)a, tui_dist_toggle(t); return 0; }
static int ablate(Tui *t, ViewAction a) { (void)a, tui_ablate(t); return 0; }
static int bookmark(Tui *t, ViewAction a) { (void)a, tui_bookmark(t); return 0; }
static int note(Tui *t, ViewAction a) { (void)a, tui_bookmark_note(t); return 0; }

/* Indexed by ViewAction; VIEW_ACT_NONE and VIEW_ACT_MOUSE (already turned
 * into a view change) do nothing. */
static const TuiAction ACTIONS[VIEW_ACT_COUNT] = {
    [VIEW_ACT_QUIT] = {quit, quit, NULL},
    [VIEW_ACT_STEP] = {step, replay_step, NULL},
    [VIEW_ACT_PLAY_TOGGLE] = {play, replay_play, NULL},
    [VIEW_ACT_SPEED_UP] = {speed, replay_speed, NULL},
    [VIEW_ACT_SPEED_DOWN] = {speed, replay_speed, NULL},
    [VIEW_ACT_CHANGE_POLICY] = {pick_policy, NULL, NEEDS_POLICY},
    [VIEW_ACT_WINDOW_UP] = {setting, NULL, NEEDS_WINDOW},
    [VIEW_ACT_WINDOW_DOWN] = {setting, NULL, NEEDS_WINDOW},
    [VIEW_ACT_TAU_UP] = {setting, replay_threshold, NULL},
    [VIEW_ACT_TAU_DOWN] = {setting, replay_threshold, NULL},
    [VIEW_ACT_THETA_UP] = {setting, replay_threshold, NULL},
    [VIEW_ACT_THETA_DOWN] = {setting, replay_threshold, NULL},
    [VIEW_ACT_EDIT_PROMPT] = {edit_prompt, NULL, NEEDS_PROMPT},
    [VIEW_ACT_SQL_PROMPT] = {sql_prompt, sql_prompt, NULL},
    [VIEW_ACT_EXPORT] = {export, export, NULL},
    [VIEW_ACT_PLOTS] = {plots, plots, NULL},
    [VIEW_ACT_SUMMARY] = {compare, compare, NULL},
    [VIEW_ACT_DIFF] = {compare, compare, NULL},
    [VIEW_ACT_RUNS] = {runs, runs, NULL},
    [VIEW_ACT_REDRAW] = {redraw, redraw, NULL},
    [VIEW_ACT_GOTO] = {go_to, go_to, NULL},
    [VIEW_ACT_PATTERN] = {pattern, pattern, NULL},
    [VIEW_ACT_HEADS] = {heads, heads, NULL},
    [VIEW_ACT_TYPE_SETTING] = {type_setting, type_setting, NULL},
    [VIEW_ACT_TOKEN_STATS] = {token_stats, token_stats, NULL},
    [VIEW_ACT_YANK] = {yank, yank, NULL},
    [VIEW_ACT_DIST] = {dist, dist, NULL},
    [VIEW_ACT_ABLATE] = {ablate, NULL, "ablate"},
    [VIEW_ACT_YANK_CSV] = {yank, yank, NULL},
    [VIEW_ACT_KEEP_FILES] = {keep_files, keep_files, NULL},
    [VIEW_ACT_PATHS] = {paths, paths, NULL},
    [VIEW_ACT_BOOKMARK] = {bookmark, bookmark, NULL},
    [VIEW_ACT_NOTE] = {note, note, NULL},
};

/* Run action a as this mode defines it. */
static int dispatch(Tui *t, ViewAction a) {
    const TuiAction *row = &ACTIONS[a];
    TuiHandler fn = t->replay ? row->replay : row->live;
    if (fn) return fn(t, a);
    if (t->replay && row->no_replay) /* the way to the model: back to the live run, or a live session */
        view_set_status(&t->m, "replay of run %lld: %s needs the model (%s)", (long long)t->replay_run, row->no_replay,
                        t->from_live ? "Esc: the live run" : "tui without --replay");
    return 0;
}

/* `/`: the next match of the text; > and < repeat it. */
static void search_done(Tui *t) { view_search(&t->m, t->m.input.text, 1); }

/* `B`'s question answered: open that run as a replay. */
static void open_run_done(Tui *t) {
    char *end;
    errno = 0;
    long long id = strtoll(t->m.input.text, &end, 10);
    if (errno == ERANGE) view_set_status(&t->m, "not a run id: \"%s\" is out of range", t->m.input.text);
    else if (end == t->m.input.text || *end || id <= 0) view_set_status(&t->m, "not a run id: \"%s\"", t->m.input.text);
    else {
        /* the list has done its work: the Esc the status line offers goes back, not to the list */
        if (t->m.sql_open && !strncmp(t->m.sql_title, "runs:", 5)) view_key(&t->m, VIEW_KEY_ESC);
        tui_open_run(t, id);
    }
}

/* Tab in `B`'s editor: the run typed is compared with the one on screen
 * (D, X, `par`) instead of being opened; an empty line: the parent again. */
static void compare_run_done(Tui *t) {
    char text[32];
    snprintf(text, sizeof text, "%s", t->m.input.text ? t->m.input.text : "");
    view_input_key(&t->m, VIEW_KEY_ESC); /* the editor closes, the line is not kept */
    char *end, *p = text;
    while (*p == ' ') p++;
    errno = 0;
    long long id = *p ? strtoll(p, &end, 10) : 0;
    if (*p && (errno == ERANGE || end == p || *end || id <= 0)) {
        view_set_status(&t->m, "not a run id: \"%s\" (Tab compares with the run typed, Enter opens it)", text);
        return;
    }
    if (t->m.sql_open && !strncmp(t->m.sql_title, "runs:", 5)) view_key(&t->m, VIEW_KEY_ESC);
    tui_compare_with(t, id);
}

/* `e`: the edited prompt starts a new run. */
static void prompt_done(Tui *t) {
    char *p = strdup(t->m.input.text);
    if (!p) { view_set_status(&t->m, "prompt: out of memory for %zu bytes", t->m.input.len); return; }
    free(t->prompt);
    t->prompt = p;
    view_set_marks(&t->m, NULL, 0, NULL); /* a task item's marks belong to its prompt */
    t->m.span.lo = t->m.span.hi = -1;    /* and a span its positions */
    t->item_note[0] = 0;
    tui_set_play(t, 0);
    t->m.cursor = -1;
    t->m.follow = 1;
    tui_worker_restart(&t->w, &t->cfg, t->prompt);
}

/* Finish an input line, by the label its action gave it. */
static void input_done(Tui *t) {
    const char *label = t->m.input.label;
    if (!strcmp(label, "search")) search_done(t);
    else if (!strcmp(label, "open run")) open_run_done(t);
    else if (!strcmp(label, "prompt")) prompt_done(t);
    else if (!strcmp(label, "go to")) tui_goto_apply(&t->m, t->m.input.text);
    else if (!strcmp(label, "set")) tui_typed_apply(t, t->m.input.text);
    else if (!strcmp(label, "note")) tui_note_done(t);
    else tui_run_sql(t, t->m.input.text);
}

/* A pane Esc would close: the help, a text pane, the inspector, the heads
 * list, the flips map, the pattern or the distributions. */
static int any_pane_open(const Tui *t) {
    return t->m.help_open || t->m.sql_open || t->m.inspector_open || t->heads.open || t->m.flips_open ||
           t->m.allheads_open || t->pat.open || t->dist.open;
}

/* A bracketed paste: its bytes go into the line being edited as text;
 * with no editor open they are dropped (a pasted `q` must not quit). 1 if
 * ch was part of one. */
static int paste_key(Tui *t, int ch) {
    if (ch == TUI_KEY_PASTE_BEGIN || ch == TUI_KEY_PASTE_END) {
        t->pasting = ch == TUI_KEY_PASTE_BEGIN;
        if (!t->pasting && !t->m.input.active) view_set_status(&t->m, "paste ignored: no line is being edited");
        return 1;
    }
    if (t->pasting) view_input_paste(&t->m, ch);
    return t->pasting;
}

/* Close the top pane, one a press, in the order they are drawn (views/screen.c): the help,
 * the flips map, every head, the distributions (Esc there first stops a count under way), the
 * sorted heads, the pattern, the text pane; then, for Esc alone, the inspector. */
static void close_top(Tui *t, int esc) {
    ViewModel *m = &t->m;
    if (m->help_open) m->help_open = 0;
    else if (m->flips_open) m->flips_open = 0;
    else if (m->allheads_open) m->allheads_open = 0;
    else if (t->dist.open) {
        if (!esc || !tui_dist_stop(t)) tui_dist_close(t);
    } else if (t->heads.open) tui_heads_close(t);
    else if (t->pat.open) tui_pattern_close(t);
    else if (m->sql_open || esc) view_key(m, VIEW_KEY_ESC); /* the text pane, else the inspector */
}

/* Esc stops what runs before it closes anything: a pane job, a count, a why being recomputed, else
 * a re-evaluation (which belongs to the live run, set aside while a replay opened from it is
 * browsed). 1 if it stopped one. */
static int esc_stops(Tui *t) {
    return tui_cancel_job(t) || tui_tokstats_cancel(t) || tui_why_cancel(t) || (!t->replay && tui_stop_reeval(t));
}

int tui_key(Tui *t, int ch) {
    if (paste_key(t, ch)) return 0;
    if (tui_picker_key(t, ch)) return 0; /* an open picker holds the keyboard, Esc and q included */
    int cmd = t->m.input.active ? VIEW_ACT_NONE : view_key_command(ch); /* an editor takes q and Esc itself */
    if (cmd == VIEW_OP_CLOSE && esc_stops(t)) return 0;
    /* with no pane left to close, Esc leaves a replay opened from the live session */
    if (cmd == VIEW_OP_CLOSE && !any_pane_open(t) && tui_back_to_live(t)) return 0;
    if (t->m.input.active && ch == VIEW_KEY_TAB && !strcmp(t->m.input.label, "open run")) {
        compare_run_done(t);
        return 0;
    }
    if (t->m.input.active) {
        if (view_input_key(&t->m, ch) == VIEW_INPUT_DONE) input_done(t);
        return 0;
    }
    /* q quits the main screen only: over a pane it closes that pane, as Esc would */
    if (cmd == VIEW_OP_CLOSE || (cmd == VIEW_ACT_QUIT && view_overlay_open(&t->m))) {
        close_top(t, cmd == VIEW_OP_CLOSE);
        return 0;
    }
    if (!t->m.help_open) { /* the help, on top of them all, takes every key first (view_key) */
        if (view_flips_key(&t->m, ch)) return 0; /* drawn over the others, it answers first */
        if (view_allheads_key(&t->m, ch)) return 0;
        if (tui_dist_key(t, ch)) return 0; /* over the sorted heads and the pattern */
        if (tui_heads_key(t, ch)) return 0; /* over the pattern, when both are open */
        if (tui_pattern_key(t, ch)) return 0;
    }
    /* Enter on the text pane selects the head its first row names, if it names one */
    if (t->m.sql_open && t->m.focus == VIEW_PANE_SQL && cmd == VIEW_OP_INSPECT && tui_goto_text_row(&t->m))
        return 0;
    if (cmd == VIEW_OP_FLIPS && !t->m.flips_open && !t->m.help_open && tui_flips_wait(t)) return 0;
    ViewAction a = view_key(&t->m, ch);
    if (a == VIEW_ACT_MOUSE) {
        MEVENT ev;
        a = getmouse(&ev) == OK ? view_mouse(&t->m, &t->scr.lay, ev.x, ev.y, view_mouse_kind(ev.bstate)) : VIEW_ACT_NONE;
    }
    return dispatch(t, a);
}
