/* view.h — the view model: everything the TUI screens draw, and the pure
 * key/mouse handling that changes it.
 *
 * The app owns one ViewModel. It copies each StepTrace the engine produces
 * into it (view_push), sets the header fields, and hands SQL results and
 * attention strips over as plain data. The screens (draw.h, screen.h) only
 * read it. view_key / view_mouse change the view state themselves (cursor,
 * selection, focus, metric, overlays) and return a ViewAction for anything
 * the app must do (step the engine, change a setting, quit, …).
 *
 * A ViewModel is not thread-safe: the engine's worker thread must not touch
 * it. Hand traces to the UI thread (queue or mutex) and push them there.
 */
#ifndef AHASCOPE_VIEW_H
#define AHASCOPE_VIEW_H

#include "engine/decide.h"
#include "engine/err.h"
#include "engine/trace.h"
#include "views/fixed.h"
#include "views/layout.h"

/* The run's head map: per-head rates over the positions of the run so far
 * (views/rates.h), each the mean of an event counted at decided positions
 * only, exactly as the store's head_rates and confusion_head define them:
 *
 *   X(ID, long name, short name, what the rate is)
 *
 * The short names are the store's column names where it has one. */
#define VIEW_RATE_METRICS(X)                                                                                  \
    X(RATE_GLOBAL, "run: global rate", "global_rate", "share of each head's decided positions run global")  \
    X(RATE_ORACLE, "run: oracle rate", "oracle_rate",                                                        \
      "share of each head's decided positions the oracle needed")                                           \
    X(RATE_PRECISION, "run: gate precision", "precision",                                                    \
      "of each head's global positions, the share the oracle needed")                                       \
    X(RATE_RECALL, "run: gate recall", "recall", "of the positions the oracle needed, the share run global") \
    X(RATE_AGREE, "run: agreement", "agree_rate", "share of each head's decided positions where the two agree")

/* What the heatmaps and the token tint show: every per-head field of the
 * trace (engine/trace.h's list, in its order: VIEW_METRIC_gate,
 * VIEW_METRIC_score, …), the run's per-head rates (VIEW_RATE_METRICS), then
 * the agreement of a predictor with the oracle, then the weight on the
 * needle (views/needle.h). This order is the `m` key's cycle. */
typedef enum {
#define VIEW_METRIC_ENUM(name, type, missing, sql, show, title, short_name, doc) VIEW_METRIC_##name,
    TRACE_HEAD_FIELDS(VIEW_METRIC_ENUM)
#undef VIEW_METRIC_ENUM
#define VIEW_METRIC_RATE_ENUM(id, title, short_name, doc) VIEW_METRIC_##id,
    VIEW_RATE_METRICS(VIEW_METRIC_RATE_ENUM)
#undef VIEW_METRIC_RATE_ENUM
    VIEW_METRIC_AGREE, /* a predictor's decision vs the oracle's, four classes */
    VIEW_METRIC_NEEDLE, /* weight on the needle (the marked positions, views/needle.h) */
    VIEW_METRIC_COUNT
} ViewMetric;

/* The decision compared with the oracle by VIEW_METRIC_AGREE: one of
 * engine/decide.h's predictors, in its order, all but the oracle itself. */
typedef DecidePred ViewPredictor;
#define VIEW_PRED_GATE DECIDE_EXECUTED
#define VIEW_PRED_AHA DECIDE_AHA
#define VIEW_PRED_QADA DECIDE_QADA
#define VIEW_PRED_QADA_BULK DECIDE_QADA_BULK
#define VIEW_PRED_COUNT DECIDE_N_SQL

#define VIEW_INPUT_HISTORY 32 /* lines remembered by the input editor */
/* Bytes an input line holds: --prompt-file's limit (APP_PROMPT_FILE_MAX,
 * app/setup.h), so every prompt that ran can be edited whole. */
#define VIEW_INPUT_MAX ((size_t)16 << 20)
#define VIEW_PICK_MAX 12      /* items a picker lists at most */
#define VIEW_SQL_HSTEP 8      /* columns one ←/→ moves the text pane */

typedef enum { VIEW_COLOUR_NONE, VIEW_COLOUR_8, VIEW_COLOUR_256 } ViewColour;

/* What the app must do after a key or mouse event. */
typedef enum {
    VIEW_ACT_NONE,
    VIEW_ACT_STEP,
    VIEW_ACT_PLAY_TOGGLE,
    VIEW_ACT_SPEED_UP,
    VIEW_ACT_SPEED_DOWN,
    VIEW_ACT_CHANGE_POLICY,
    VIEW_ACT_WINDOW_UP,
    VIEW_ACT_WINDOW_DOWN,
    VIEW_ACT_TAU_UP,
    VIEW_ACT_TAU_DOWN,
    VIEW_ACT_THETA_UP,
    VIEW_ACT_THETA_DOWN,
    VIEW_ACT_EDIT_PROMPT,
    VIEW_ACT_SQL_PROMPT,
    VIEW_ACT_EXPORT,
    VIEW_ACT_QUIT,
    VIEW_ACT_PLOTS,  /* v: the app shows its plots (per-head rates, recorded evaluations) in the text pane */
    VIEW_ACT_SUMMARY, /* R: the app shows the run's summary (confusion per predictor, layer, head; reads) */
    VIEW_ACT_DIFF,   /* D: the app shows where the run differs from its parent (tokens, gate flips) */
    VIEW_ACT_RUNS,   /* B: the app lists the database's runs (the run browser) */
    VIEW_ACT_REDRAW, /* Ctrl-L: the app calls clearok(curscr, TRUE) */
    VIEW_ACT_MOUSE,  /* KEY_MOUSE: the app calls getmouse() then view_mouse() */
    VIEW_ACT_GOTO,   /* G: the app asks where to go (a head, a position or a token's text) */
    VIEW_ACT_PATTERN, /* A: the app opens or closes the selected head's attention pattern */
    VIEW_ACT_HEADS,  /* H: the app opens or closes the heads sorted by a run rate (views/heads.h) */
    VIEW_ACT_TYPE_SETTING, /* z: the app asks for a setting typed as a number (tau 0.42, window 64) */
    VIEW_ACT_TOKEN_STATS,  /* c: the app shows the rates split by token type in the text pane */
    VIEW_ACT_YANK,         /* y: the app copies the inspector block or the text pane's row out as text */
    VIEW_ACT_DIST,   /* d: the app opens or closes the distributions pane (router score against the oracle) */
    VIEW_ACT_ABLATE, /* !: the app forces the selected head the other way from the cursor on (a child run) */
    VIEW_ACT_YANK_CSV,   /* Y: the app copies the table on top (H, A, the text pane) out as CSV */
    VIEW_ACT_KEEP_FILES, /* S: the app writes H's or A's table as CSV and SVG files */
    VIEW_ACT_PATHS,      /* &: the app shows the paths from the cursor to the needle (views/path.h) */
    VIEW_ACT_BOOKMARK, /* b: the app sets or drops the cursor's bookmark (view_bookmark_toggle) and keeps it beside the run */
    VIEW_ACT_NOTE,     /* C: the app asks for a note on the cursor's bookmark (setting one first) */
    VIEW_ACT_COUNT
} ViewAction;

typedef enum { VIEW_MOUSE_CLICK, VIEW_MOUSE_WHEEL_UP, VIEW_MOUSE_WHEEL_DOWN, VIEW_MOUSE_OTHER } ViewMouse;

/* The header line's facts; the app fills them in directly. */
typedef struct {
    char model[96];
    char policy[24];
    char record[160]; /* recording target, e.g. "ahascope.db run 7" or "replay" */
    int window, sinks, ctx_len;
    float tau;
    double theta_logit; /* θ as log-odds (engine/decide.h); shown as a probability */
    double tok_s; /* generation speed; <= 0 hides it */
    /* What a decode step reads (engine/cost.h), for the step's byte split;
     * 0 hides it (a replay without the model at hand). */
    double weight_bytes;     /* weights streamed per step */
    double kv_bytes_per_pos; /* K and V of one position of one (layer, KV head) */
    char mode[40];           /* "replay run 3" while a recording is on screen, shown first; "" live */
    /* A replay's gates were recorded at gate_tau and gate_theta_logit:
     * when τ or θ moves off them the header says so (gates_fixed 1). */
    int gates_fixed;
    float gate_tau;
    double gate_theta_logit;
    /* The architecture (view_set_arch: "gemma3") and its layers' kinds
     * (views/fixed.h): with local layers the header says
     * "gemma3 · 22 local (w 512) + 4 global layers"; all global, nothing. */
    char arch[24];
    ViewLayerKinds layers;
    /* What a kept table is headed with (views/keep.h): the recorded run on
     * screen (0 none) and its sampling seed (seed_known 0: not known). */
    long long run_id;
    unsigned long long seed;
    int seed_known;
} ViewHeader;

/* Attention weights of one head at one position, for the inspector strip. */
typedef struct {
    int pos, layer, head; /* whose weights these are; pos < 0: none */
    int n;                /* weights over positions 0 … n-1 */
    float *w;
    int cap;
    int window, sinks; /* local set at pos: the last `window` positions plus the first `sinks` */
} ViewAttn;

/* What drove the router of one head at one position (the app fills it
 * from engine/router_why.h, live only): the logit x·w + b, its largest
 * terms x_i·w_i (signed, by magnitude), what the other dimensions added,
 * and the input's norm. views/why.h words it. */
#define VIEW_WHY_TOP 6
typedef enum {
    VIEW_WHY_NONE,      /* nothing asked yet */
    VIEW_WHY_PENDING,   /* asked, not answered */
    VIEW_WHY_OK,
    VIEW_WHY_NO_ROUTER, /* the run routes without a router (its policy or model has none) */
    VIEW_WHY_NOT_KEPT,  /* the router's input is neither kept nor could be recomputed */
    VIEW_WHY_REPLAY,    /* a recorded run: the router's input is not recorded */
    VIEW_WHY_STOPPED    /* its recompute was stopped (Esc) */
} ViewWhyState;

typedef struct {
    int pos, layer, head; /* whose router this explains; pos < 0: none */
    ViewWhyState state;
    double logit, bias, norm, rest;
    int dim, n_top;
    int top_dim[VIEW_WHY_TOP];
    double top_xw[VIEW_WHY_TOP];
    int fed, to_feed; /* PENDING on a recompute: positions fed so far of those it needs (to_feed 0: none) */
} ViewWhy;

/* A position marked in the token pane and on the timeline: a task item's
 * needle (every position of its statements) or its question, which the app
 * marks, or a bookmark the user set with `b`. Later kinds outrank earlier
 * ones where a position or a timeline bin holds several. */
typedef enum { VIEW_MARK_NONE, VIEW_MARK_NEEDLE, VIEW_MARK_QUESTION, VIEW_MARK_BOOKMARK, VIEW_MARK_KINDS } ViewMarkKind;

typedef struct {
    int pos;
    ViewMarkKind kind;
} ViewMark;

#define VIEW_NOTE_MAX 512 /* bytes a bookmark's note keeps, as the store does (cut at a character's start) */
typedef struct {
    int pos;
    char text[VIEW_NOTE_MAX];
} ViewNote;

/* Cumulative counts per position made at one pair of thresholds. */
typedef struct {
    float tau;          /* thresholds the counts were made with */
    double theta_logit;
    int n, cap;       /* positions counted */
    int32_t *layer;   /* [pos][layer][4]: AHA global, AHA known, oracle global, oracle known */
    double *total;    /* [pos][VIEW_TOTALS]: see view_count_step (metric.h) */
    int32_t *head;    /* [cell][VIEW_RATE_SLOTS][2]: each head's rate events and counts over positions 0 … n-1
                         (views/rates.h) */
} ViewStats;

typedef struct {
    ViewHeader hdr;
    int n_layers, n_heads;

    StepTrace **hist; /* hist[i] is position i; owned copies */
    int n_hist, cap_hist;
    int cursor; /* index into hist; -1 while empty */
    int follow; /* cursor moves along with new steps (it was on the newest) */

    int sel_layer, sel_head;
    ViewPane focus;
    ViewPane text_return; /* the focus the text pane took over, given back when it closes */
    /* Where the timeline's visible rows and columns start after a click on
     * it, so what was clicked stays under the pointer; -1 (keys, new steps):
     * they follow the selection and the cursor, centred. */
    int time_row0, time_tok0;
    ViewMetric metric;
    ViewPredictor agree_pred;
    int tint_share; /* tokens tinted by share of heads global, not by the selected head */
    int timeline_layers; /* the timeline shows one row per layer (share of its heads global), not per head */

    ViewColour colour; /* what the terminal can do; the app sets it (view_colour_pick) */
    int mono;          /* no colour at all: shading glyphs (--mono, NO_COLOR) */
    int ascii;         /* no UTF-8: ASCII ramps and borders (--ascii) */

    int help_open, inspector_open, sql_open;
    int help_scroll; /* the help's first line shown */
    int help_page;   /* lines the help shows (view_help_fit); 0 unknown */
    int playing;  /* set by the app; shown in the status line */
    double speed; /* set by the app: play speed in steps per second, 0 as fast as it goes */
    /* What the engine is doing, set by the app like playing, so an empty
     * token pane can say it rather than ask for a step: busy while positions
     * are being computed or asked for; prefill_done of prefill_total
     * positions of a long prompt's prefill at prefill_tok_s (total 0: no
     * prefill under way). */
    int busy;
    int prefill_done, prefill_total;
    double prefill_tok_s;

    ViewAttn attn;
    ViewWhy why; /* the selected head's router at the cursor, explained (views/why.h) */
    /* Marked positions (view_set_marks, and `b`'s bookmarks), ascending by
     * position then kind, owned; kept across a re-evaluation (the same
     * tokens), dropped by the app for a new prompt. */
    ViewMark *marks;
    int n_marks;
    ViewNote *notes; /* the bookmarks' notes (`C`), any order, owned; one a position, none empty */
    int n_notes;
    /* The small list open over the heatmap (the policy picker), if open:
     * items[sel] is highlighted; the app answers its keys. */
    struct {
        int open, n, sel;
        char title[32];
        char item[VIEW_PICK_MAX][24];
    } pick;
    /* The attention-pattern overlay (views/pattern.h) while it is open,
     * else NULL: the app owns it and keeps it current. */
    const struct ViewPattern *pattern;
    /* The heads sorted by a run rate (views/heads.h) while that pane is
     * open, else NULL: the app owns it. */
    const struct ViewHeads *heads;
    /* The distributions overlay (views/dist.h) while it is open, else
     * NULL: the app owns it and fills its counts. */
    const struct ViewDist *dist;
    /* The text pane (SQL results, plots): sql_text's first sql_pinned
     * lines (a table's header and rule) stay at the top; below them the
     * pane shows the rest from line sql_scroll and column sql_hscroll. */
    char *sql_query, *sql_text; /* owned */
    char sql_title[64];         /* "sql (read-only)" or "plots" */
    int sql_scroll, sql_lines;  /* sql_lines counts every line, pinned ones too */
    int sql_pinned;
    int sql_hscroll, sql_width; /* first column shown; the widest line, in characters */
    int sql_page, sql_cols;     /* scrolling lines and columns the pane shows (view_sql_fit); 0 unknown */
    int time_bin;               /* positions a timeline column held in the last frame (view_time_fit); 0 unknown */

    char status[160];   /* transient message; cleared by the next key */
    char progress[160]; /* a running job's progress line, shown while no message is; kept over keys */
    char search[128];  /* the last `/` search, which > and < repeat */
    struct {
        int active;       /* the status line is a one-line text editor */
        char label[32];   /* e.g. "prompt" or "sql" */
        /* The line, UTF-8, NUL-terminated and owned (NULL before the first
         * view_input_begin): len bytes, at most VIEW_INPUT_MAX, in cap. The
         * cursor cur is a byte offset on the first byte of a character, or len. */
        char *text;
        size_t len, cap, cur;
        int refused;      /* the last byte typed was not added: 1 at VIEW_INPUT_MAX, 2 out of memory */
        /* Lines entered before, newest last, each under its label, so ↑/↓
         * in the SQL editor walk earlier queries and never prompts. */
        struct {
            char label[32];
            char *text;     /* owned */
        } history[VIEW_INPUT_HISTORY];
        int n_history;
        int browse;         /* history entry shown, or -1: the line being typed */
        char *draft;        /* the line being typed, kept while browsing (owned) */
    } input;

    /* Cumulative counts per position for the header and the bars, so a
     * frame costs O(layers) rather than O(tokens × heads) (see metric.h). */
    ViewStats stats;
    /* The same counts at new thresholds, made a slice at a time beside
     * those in use (view_rescore_step), which stay until they are done. */
    ViewStats rescore;
    int rescoring;      /* a rescore is under way */

    /* The pinned head (x), shown beside the selected one in the inspector
     * and on a row of its own in the timeline (views/pin.h); -1: none. */
    int pin_layer, pin_head;
    /* The map of the heads' gate flips against the parent run is open (X,
     * views/flips.h). */
    int flips_open;
    /* Every head at the cursor, a row of attention each (E, views/allheads.h), is open. */
    int allheads_open;
    /* The run the one on screen re-evaluated (same tokens, other settings),
     * set aside by the app when the re-evaluation's first step came, so the
     * inspector can set its values at the cursor beside this run's; owned,
     * n 0: none (views/pin.h). */
    struct {
        StepTrace **hist;
        int n, cap;
        char label[48]; /* "run 1"; "" when it was not recorded */
        /* The run was chosen in B to compare with (`vs run 3`), not the
         * parent: its tokens may differ, so only their common prefix is
         * compared (view_parent_common, views/pin.h). */
        int other;
    } parent;
    /* The span the rates count (`(` `)` set its ends, views/span.h):
     * history indices lo … hi inclusive; lo -1: none, every position
     * counts. head caches each head's rate counts over it (as
     * ViewStats.head) for the positions c_lo … c_lo + c_n - 1 of history
     * generation c_gen at the thresholds c_tau / c_theta_logit
     * (view_stats_sync keeps it, views/rates.c reads it). */
    struct {
        int lo, hi;
        int32_t *head;
        int c_lo, c_n, c_gen;
        float c_tau;
        double c_theta_logit;
    } span;
    int hist_gen; /* view_clear_history counts up: what was counted over the old history is stale */
} ViewModel;

/* The positions the run's rates count: the span (m->span) clipped to the
 * history, else 0 … upto. 1 when a span is set; *lo > *hi when it holds
 * no position of the history. */
static inline int view_span_range(const ViewModel *m, int upto, int *lo, int *hi) {
    if (m->span.lo < 0) {
        *lo = 0, *hi = upto < m->n_hist ? upto : m->n_hist - 1;
        return 0;
    }
    *lo = m->span.lo, *hi = m->span.hi < m->n_hist ? m->span.hi : m->n_hist - 1;
    return 1;
}

/* Clicked or scrolled-over place of the screen. Fields that do not apply are -1. */
typedef struct {
    ViewPane pane;
    int layer, head; /* heatmap, timeline row, bars (layer only) */
    int pos;         /* tokens, timeline column */
} ViewHit;

/* Name the header's architecture from a model's or a run's: its family
 * as people say it, without the store's source prefix ("hf-", "gguf-"),
 * a GGUF type mix after a space, or Hugging Face's "_text" suffix
 * ("hf-gemma3_text" → "gemma3"). */
void view_set_arch(ViewHeader *h, const char *arch);

/* Set up an empty model for a model shape (header zeroed, metric = gate,
 * focus = heatmap, follow on). Fails on a bad shape. */
int view_init(ViewModel *m, int n_layers, int n_heads, Err *e);

/* Free everything the model owns (the struct itself is the caller's). */
void view_free(ViewModel *m);

/* Append a copy of t as the next position. The shape must match the model.
 * With follow on, the cursor moves to the new step. */
int view_push(ViewModel *m, const StepTrace *t, Err *e);

/* Append t itself (the model owns it from now on, freed even on error). */
int view_push_owned(ViewModel *m, StepTrace *t, Err *e);

/* Drop the whole history (a new run starts); the selection is kept. */
void view_clear_history(ViewModel *m);

/* Drop the parent run (views/pin.h sets one aside), if any: a new prompt,
 * another run opened. */
void view_drop_parent(ViewModel *m);

/* Trace at history index i, or NULL when out of range. */
const StepTrace *view_trace(const ViewModel *m, int i);

/* Hand over the attention weights w[0 … n-1] of (layer, head) at pos for the
 * inspector strip; window/sinks describe the local set. Copies w. */
int view_set_attention(ViewModel *m, int pos, int layer, int head, const float *w, int n,
                       int window, int sinks, Err *e);

/* 1 if the inspector is open and holds no strip for the current cursor and
 * selection; then *pos, *layer, *head say which one the app should compute. */
int view_attention_wanted(const ViewModel *m, int *pos, int *layer, int *head);

/* Mark marks[0..n) (any order; a position marked twice keeps its
 * strongest mark), replacing any marks before, bookmarks too; n = 0 clears
 * them. Copies. */
int view_set_marks(ViewModel *m, const ViewMark *marks, int n, Err *e);

/* The mark on position pos, VIEW_MARK_NONE if none. */
ViewMarkKind view_mark_at(const ViewModel *m, int pos);

/* The strongest mark on positions [p0, p1) (a question outranks a needle,
 * so a binned timeline column never hides the question). */
ViewMarkKind view_mark_in(const ViewModel *m, int p0, int p1);

/* Set the note of pos's bookmark (NULL or "" clears it; none there: nothing),
 * cut at a character's start to VIEW_NOTE_MAX - 1 bytes. */
void view_bookmark_note_set(ViewModel *m, int pos, const char *note);

/* The note of pos's bookmark, "" when it has none or pos holds no bookmark. */
const char *view_bookmark_note(const ViewModel *m, int pos);

/* A mark's glyph, the same in the token pane, on the timeline and in the
 * legend: ◆ needle, ? question and ★ bookmark (*, ? and ! under --ascii). */
wchar_t view_mark_glyph(ViewMarkKind k, int ascii);

/* A mark's legend word: "needle", "question" or "bookmark" ("" for none). */
const char *view_mark_name(ViewMarkKind k);

/* 1 if some position holds a mark of kind k (the legend names only those). */
int view_has_mark(const ViewModel *m, ViewMarkKind k);

/* `b`: bookmark position pos (an index into the history), or drop its
 * bookmark, saying which on the status line; any other mark there stays.
 * Returns 1 when it was set, 0 when dropped, -1 when pos holds no token or
 * memory ran out. Bookmarks live with the session's marks: kept across a
 * re-evaluation, dropped with a new prompt, not recorded in the database. */
int view_bookmark_toggle(ViewModel *m, int pos);

/* The nearest bookmark after position from (dir 1) or before it (dir -1),
 * wrapping round; -1 when there is none. */
int view_bookmark_next(const ViewModel *m, int from, int dir);

/* `'` and `"`: move the cursor to the next / previous bookmark (dir 1 / -1)
 * and say which of how many it is, or that there is none. */
void view_bookmark_jump(ViewModel *m, int dir);

/* Open the picker over the heatmap: title, items[0..n) (at most
 * VIEW_PICK_MAX are kept), items[sel] highlighted. */
void view_pick_open(ViewModel *m, const char *title, const char *const *items, int n, int sel);

typedef enum { VIEW_PICK_MOVED, VIEW_PICK_CHOSEN, VIEW_PICK_CANCELLED } ViewPick;

/* A key while the picker is open: ↑/↓ (k/j) and `again` (the key that
 * opened it) move the highlight, wrapping round; Enter chooses (the
 * picker closes, pick.sel says which); Esc or q cancels. Every other key
 * is ignored: the picker holds the keyboard until it closes. */
ViewPick view_pick_key(ViewModel *m, int ch, int again);

/* Show a query and its result text (lines separated by '\n') in the SQL pane,
 * opening it and focusing it. Copies both strings. A table's header and its
 * rule of dashes (store's table format) stay on screen while the rows scroll. */
int view_set_sql(ViewModel *m, const char *query, const char *text, Err *e);

/* The line of text's table header (a line over a rule of dashes) whose
 * table holds line `top`, when the header and rule both lie above top;
 * -1 otherwise (no table there, or a blank line since). The text pane
 * keeps that header on screen while it is scrolled through the table. */
int view_sql_header_above(const char *text, int top);

/* view_set_sql under another pane title (e.g. "plots"); query may be "". */
int view_set_text(ViewModel *m, const char *title, const char *query, const char *text, Err *e);

/* Record how many scrolling lines and columns the text pane shows in
 * layout lay, so PgDn moves by exactly one screenful. The app calls it
 * after each frame. */
void view_sql_fit(ViewModel *m, const Layout *lay);

/* Record how many positions a timeline column holds in layout lay, so
 * PgUp/PgDn move the cursor by a bin when a bin is more than a page. The
 * app calls it after each frame. Defined in geom.c, beside the timeline's
 * geometry it reads. */
void view_time_fit(ViewModel *m, const Layout *lay);

/* Record how many lines the help overlay shows in layout lay, and keep its
 * scroll within them. The app calls it after each frame; it returns 1 when
 * the open help changed size, as the status line drawn for the old size
 * then needs another frame. */
int view_help_fit(ViewModel *m, const Layout *lay);

/* Set the transient status message (printf-style; truncated to fit). */
void view_set_status(ViewModel *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Set the progress line of a job that runs while keys are answered
 * (printf-style). A key's message shows over it until the next key, so a
 * job redrawing its progress never hides what a key just said. */
void view_set_progress(ViewModel *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Drop the progress line: the job ended (its result goes on the status line). */
void view_clear_progress(ViewModel *m);

typedef enum { VIEW_INPUT_EDITING, VIEW_INPUT_DONE, VIEW_INPUT_CANCEL } ViewInput;

/* Turn the status line into a one-line editor labelled `label`, starting
 * with the whole of `text`, the cursor at its end. While m->input.active,
 * keys go to view_input_key. Returns 0, or -1 with the reason on the status
 * line (text over VIEW_INPUT_MAX bytes, out of memory) and no editor. */
int view_input_begin(ViewModel *m, const char *label, const char *text);

/* The byte offset after the UTF-8 character at offset at of t (len
 * bytes), or before the one ending at at: a whole sequence, or a single
 * byte where the bytes do not form one. */
size_t view_utf8_next(const char *t, size_t len, size_t at);
size_t view_utf8_prev(const char *t, size_t at);

/* The next token after position from (dir 1) or before it (dir -1),
 * wrapping round, where a match of needle starts in the token stream read
 * as one text, so " toys" is found though the tokens are " to" and "ys".
 * Case does not matter unless needle holds a capital letter. -1 if there is
 * no match or needle is empty. */
int view_find_text(const ViewModel *m, const char *needle, int from, int dir);

/* Search the token stream for needle (view_find_text) from the cursor in
 * direction dir, remember it for > and <, move the cursor to the match and
 * say where it is on the status line, or that there is none. needle may
 * be m->search itself; an empty needle repeats the last search. */
void view_search(ViewModel *m, const char *needle, int dir);

/* Edit the input line: printable bytes (UTF-8 arrives byte by byte) go in
 * at the cursor (refused past VIEW_INPUT_MAX: input.refused says so),
 * ←/→ move it by a character, Home/End (Ctrl-A/Ctrl-E) to either end,
 * Backspace and Delete remove the character before / under it, Ctrl-U
 * clears, ↑/↓ walk the lines entered before under the same label, Enter
 * finishes (DONE, and remembers the line) and Esc cancels; either ends the
 * editing. */
ViewInput view_input_key(ViewModel *m, int ch);

/* One byte of a bracketed paste into the line being edited: text, never a
 * key, so a pasted Esc, Enter or `q` neither closes the editor nor acts.
 * Newline, CR and tab become a space (the line is one line); other
 * controls and KEY_* codes are dropped. Nothing happens with no editor. */
void view_input_paste(ViewModel *m, int ch);

/* Handle one key from getch()/wget_wch() (KEY_* codes included). Changes the
 * view state itself and returns what the app must do, if anything. `q` says
 * VIEW_ACT_QUIT; the app quits only when view_overlay_open is 0 and closes the
 * top pane otherwise (the help, which the views own, q closes here). */
ViewAction view_key(ViewModel *m, int ch);

/* 1 while anything is drawn over the main screen or in the timeline's place:
 * the help, the picker, the flips map (X), every head (E), the distributions
 * (d), the sorted heads (H), the pattern (A) or the text pane (:, v, R, D, B,
 * c). The inspector is part of the main screen: it does not count. Esc closes
 * these one a press, the top one first; so does `q`, which quits once none is
 * open. */
int view_overlay_open(const ViewModel *m);

/* What lies under screen cell (x, y) in layout lay. Pure. */
ViewHit view_hit(const ViewModel *m, const Layout *lay, int x, int y);

/* Handle a mouse event at (x, y): a click selects the head or token under it
 * and focuses its pane; the wheel scrolls what is under the pointer. */
ViewAction view_mouse(ViewModel *m, const Layout *lay, int x, int y, ViewMouse kind);

/* Map an ncurses MEVENT bstate to a ViewMouse kind. */
ViewMouse view_mouse_kind(unsigned long bstate);

/* Choose the colour mode: NONE with --mono or a non-empty NO_COLOR, else the
 * best of 256/8 colours the terminal offers (colour pairs included). Pure. */
ViewColour view_colour_pick(int mono_flag, const char *no_color_env, int has_colours,
                            int n_colours, int n_pairs);

/* view_colour_pick for the running curses terminal: reads NO_COLOR, calls
 * start_color() and looks at COLORS and COLOR_PAIRS. */
ViewColour view_colour_detect(int mono_flag);

/* Layout options matching the model's current state (shape, open panes, modes)
 * and the key table's help lines. */
LayoutOpts view_layout_opts(const ViewModel *m);

#endif
