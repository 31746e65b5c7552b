/* keymap.h — the TUI's one key table. Every key the TUI answers is listed
 * here once, with what it does and the words that explain it: view_key
 * dispatches through it, the `?` help is drawn from it, and the status line's
 * hints name their keys from it, so the three cannot drift apart.
 *
 * A binding row holds up to VIEW_KEYS_PER_ROW keys, each with its own
 * command; the row's label and help describe them together ("w W" lower /
 * raise the window). Rows without keys are help-only lines (mouse, the line
 * editor's keys, which view_input_key answers) or section headings (label
 * == NULL).
 */
#ifndef AHASCOPE_VIEW_KEYMAP_H
#define AHASCOPE_VIEW_KEYMAP_H

#include "views/view.h"

/* Commands that change only view state. They are numbered after ViewAction's
 * values, so one int names either an app request or a view change. */
typedef enum {
    VIEW_OP_STEP = VIEW_ACT_COUNT, /* step one token; behind the newest step, move the cursor */
    VIEW_OP_CURSOR_PREV,
    VIEW_OP_CURSOR_NEXT,
    VIEW_OP_CURSOR_FIRST,
    VIEW_OP_CURSOR_LAST,
    VIEW_OP_PAGE_UP,
    VIEW_OP_PAGE_DOWN,
    VIEW_OP_LEFT,
    VIEW_OP_RIGHT,
    VIEW_OP_UP,
    VIEW_OP_DOWN,
    VIEW_OP_FOCUS_NEXT,
    VIEW_OP_FOCUS_PREV,
    VIEW_OP_METRIC_NEXT,
    VIEW_OP_METRIC_PREV,
    VIEW_OP_AGREE_NEXT,
    VIEW_OP_TINT,
    VIEW_OP_SEARCH,
    VIEW_OP_SEARCH_NEXT,   /* the next / previous match of the last search */
    VIEW_OP_SEARCH_PREV,
    VIEW_OP_NEXT_MISSED,   /* the next missed global of the compared predictor */
    VIEW_OP_NEXT_NEEDLESS, /* the next needless global */
    VIEW_OP_TIMELINE_LAYERS,
    VIEW_OP_HELP,
    VIEW_OP_INSPECT,
    VIEW_OP_CLOSE,
    /* one head through time and against another (views/pin.h) */
    VIEW_OP_FIRST_GLOBAL,  /* the selected head's first executed global */
    VIEW_OP_NEXT_GLOBAL,   /* its next / previous one from the cursor */
    VIEW_OP_PREV_GLOBAL,
    VIEW_OP_NEXT_NEEDED,   /* its next global the oracle says was needed */
    VIEW_OP_FIRST_NEEDED,  /* the first position the oracle says it needed far keys */
    VIEW_OP_PIN,           /* pin the selected head beside it (again: unpin) */
    VIEW_OP_FLIPS,         /* the map of the heads' gate flips against the parent run */
    VIEW_OP_BOOKMARK_NEXT, /* the next / previous bookmark */
    VIEW_OP_BOOKMARK_PREV,
    VIEW_OP_ALLHEADS,      /* every head at the cursor: a row of attention each (views/allheads.h) */
    VIEW_OP_SPAN_START,    /* the span the rates count: its start / end at the cursor (views/span.h) */
    VIEW_OP_SPAN_END,
    VIEW_OP_SPAN_PRESET,   /* the next span a task item, the generated part or the bookmarks give */
    VIEW_OP_SPAN_CLEAR,
    VIEW_OP_END
} ViewOp;

/* The control keys the table and the line editor bind, by name: ncurses
 * has no KEY_ code for them, and a bare 27 or 12 says nothing. */
enum {
    VIEW_KEY_CTRL_A = 1,  /* editor: start of the line */
    VIEW_KEY_CTRL_E = 5,  /* editor: end of the line */
    VIEW_KEY_CTRL_H = 8,  /* Backspace, as some terminals send it */
    VIEW_KEY_TAB = '\t',
    VIEW_KEY_CTRL_L = 12, /* redraw */
    VIEW_KEY_CTRL_U = 21, /* editor: clear the line */
    VIEW_KEY_ESC = 27,    /* close; stops a running query first */
    VIEW_KEY_DEL = 127    /* Backspace, as most terminals send it */
};

#define VIEW_KEYS_PER_ROW 4

/* A key's place on the main screen's key bar, the line that lists the panes
 * and their keys ("? help  H heads  E every head  A pattern …"). */
typedef struct {
    int at;           /* 1, 2, …: its place from the left; 0: not on the bar */
    const char *word; /* what it opens, in the words of the pane's title */
} ViewBarSlot;

typedef struct {
    const char *label;            /* the keys as the help shows them; NULL: a section heading */
    const char *help;             /* what they do (the heading's text for a section) */
    int key[VIEW_KEYS_PER_ROW];   /* ncurses key codes; 0 ends the list */
    int cmd[VIEW_KEYS_PER_ROW];   /* per key: a ViewAction or a ViewOp */
    const char *hint[VIEW_KEYS_PER_ROW]; /* per key: the status line's word, or NULL */
    ViewBarSlot bar[VIEW_KEYS_PER_ROW];  /* per key: its place on the key bar, if any */
} ViewBinding;

/* One entry of the key bar, placed: the key, its word, and the column its
 * name starts at (the word follows after a space). */
typedef struct {
    int key;
    const char *word;
    int x;
} ViewBarEntry;

#define VIEW_KEYBAR_MAX 16

/* The key bar's entries that fit in width columns, in the table's order of
 * places (ViewBarSlot.at), each x from 1, two spaces between entries: whole
 * entries only, dropped from the right, never wrapped. Key names and words
 * are ASCII, so the line reads the same under --ascii. Returns how many fit
 * (0 … VIEW_KEYBAR_MAX). */
int view_keybar_fit(int width, ViewBarEntry out[VIEW_KEYBAR_MAX]);

/* The table, in help order; *n receives its length. */
const ViewBinding *view_bindings(int *n);

/* How many lines the `?` help has: one per row of the table, but rows that
 * only add keys to the row above. The help overlay is sized from it. */
int view_help_count(void);

/* Line i of the `?` help (0 … view_help_count() - 1), or NULL past the end. */
const ViewBinding *view_help_line(int i);

/* The command bound to key ch (a ViewAction or ViewOp); VIEW_ACT_NONE when
 * no row binds it. */
int view_key_command(int ch);

/* The first key bound to command cmd, or 0 when none is. */
int view_command_key(int cmd);

/* The status line's word for command cmd, or NULL. */
const char *view_command_hint(int cmd);

/* A key's name as the hints print it ("spc", "Enter", "p", "?"). */
const char *view_key_name(int ch, char buf[8]);

#endif
