/* loop.c — the TUI's frame loop, curses and signals (see README.md).
 *
 * Two threads: the engine steps in a TuiWorker (worker.h), this UI thread
 * owns the ViewModel and curses. Each frame it takes the worker's finished
 * traces, draws (one doupdate), and waits at most 20 ms for a key, so keys
 * are answered while a long step runs. Signal handlers only set flags;
 * every way out restores the terminal.
 */
#include <langinfo.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <unistd.h>

#include "app/tui/dist_ctl.h"
#include "app/tui/pattern_ctl.h"
#include "app/tui/state.h"
#include "app/tui/yank_ctl.h"
#include "app/tui/tokstats_ctl.h"
#include "views/keymap.h"

/* The handlers only set these. SIGWINCH is handled here rather than by
 * ncurses: a process-wide signal may land in an engine or BLAS thread, and
 * ncurses then learns of it only when a key arrives. The UI loop polls the
 * flag every frame instead. Ctrl-C (g_interrupt) cancels a running job
 * (a `:` query or a pane's read), and quits only when none runs. */
static volatile sig_atomic_t g_quit, g_interrupt, g_winch;

static void on_winch(int sig) { (void)sig, g_winch = 1; }

/* Follow the terminal's new size (read from the tty) and repaint it all. */
static void follow_resize(void) {
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) resizeterm(ws.ws_row, ws.ws_col);
    clearok(curscr, TRUE);
}

static void on_quit(int sig) {
    if (sig == SIGINT) g_interrupt = 1;
    else g_quit = 1;
}

static void curses_start(Tui *t, int mono, int ascii) {
    signal(SIGWINCH, on_winch);
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    timeout(20);
    mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    /* tmux and screen send Home and End as these whatever TERM says; where
     * the terminal description lacks them, the sequence would arrive split,
     * and its Esc would close the editor and lose the line being edited. */
    define_key("\033[1~", KEY_HOME);
    define_key("\033[4~", KEY_END);
    /* bracketed paste: pasted text arrives between these, so a pasted Esc is
     * text, not the key (the editor would close and the rest act as keys) */
    define_key("\033[200~", TUI_KEY_PASTE_BEGIN);
    define_key("\033[201~", TUI_KEY_PASTE_END);
    fputs("\033[?2004h", stdout), fflush(stdout);
    t->m.ascii = ascii || strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
    t->m.mono = mono || (getenv("NO_COLOR") && *getenv("NO_COLOR"));
    t->m.colour = view_colour_detect(mono);
}

/* The "enlarge" screen shows nothing to act on: only quit and redraw work
 * there (q quits at once: no pane it would close is in sight). 'Q' is let
 * through as it always was; it is bound to nothing, so it only closes the
 * help and clears the status line. */
static int works_when_too_small(int ch) {
    int cmd = view_key_command(ch);
    return cmd == VIEW_ACT_QUIT || cmd == VIEW_ACT_REDRAW || ch == 'Q';
}

/* The UI loop: results in, one frame out, one key (or 20 ms) at a time. */
static void ui_loop(Tui *t) {
    Err e;
    t->dirty = 1;
    for (;;) {
        if (g_quit) break;
        if (g_interrupt) {
            g_interrupt = 0;
            if (!tui_cancel_job(t)) break;
        }
        if (g_winch) g_winch = 0, follow_resize(), t->dirty = 1;
        tui_take_results(t);
        tui_pattern_poll(t);
        tui_paths_poll(t);
        tui_dist_poll(t);
        tui_poll_load(t);
        tui_rescore_poll(t);
        tui_tokstats_poll(t);
        tui_bookmarks_poll(t);
        if (t->replay && t->playing) tui_replay_advance(t);
        tui_poll_job(t);
        if (t->dirty) {
            if (view_frame(&t->scr, &t->m, &e)) break;
            view_sql_fit(&t->m, &t->scr.lay); /* PgDn pages by what this frame showed */
            view_time_fit(&t->m, &t->scr.lay);
            t->dirty = view_help_fit(&t->m, &t->scr.lay); /* the help too; hints for a new size redraw */
        }
        timeout(t->m.rescoring || tui_loading(t) ? 1 : 20); /* work in slices: look for keys between them */
        int ch = getch();
        if (ch == ERR) continue;
        t->dirty = 1;
        if (ch == KEY_RESIZE) { /* resizeterm's own notice */
            clearok(curscr, TRUE);
            continue;
        }
        int paste = t->pasting || ch == TUI_KEY_PASTE_BEGIN; /* a pasted `q` is text even here */
        if (t->scr.lay.too_small && !paste && !works_when_too_small(ch)) continue;
        if (t->scr.lay.too_small && !paste && view_key_command(ch) == VIEW_ACT_QUIT) break;
        if (tui_key(t, ch)) break;
    }
}

int tui_show(Tui *t, int mono, int ascii, Err *e) {
    int rc = -1;
    signal(SIGINT, on_quit);
    signal(SIGTERM, on_quit);
    curses_start(t, mono, ascii);
    if (view_screen_init(&t->scr, &t->m, e) == 0) {
        ui_loop(t);
        rc = 0;
        view_screen_free(&t->scr);
    }
    fputs("\033[?2004l", stdout), fflush(stdout);
    endwin();
    tui_bookmarks_flush(t);
    tui_job_stop(&t->job);
    tui_job_stop(&t->load);
    tui_dist_close(t);
    tui_job_stop(&t->dist_job);
    return rc;
}

/* Curses draws nothing on a terminal that cannot move the cursor (TERM=dumb)
 * and initscr exits on one terminfo does not know: say which, before the
 * model loads. */
static int terminal_check(Err *e) {
    const char *term = getenv("TERM");
    if (!term || !*term)
        return err_set(e, "TERM is not set: the TUI needs a terminal curses can drive, such as xterm-256color");
    int why = 0;
    if (setupterm(term, STDOUT_FILENO, &why) != OK)
        return err_set(e, "TERM=%.40s is a terminal curses does not know (no terminfo entry): try TERM=xterm-256color",
                       term);
    const char *cup = tigetstr("cup");
    int can_move = cup && cup != (const char *)-1;
    del_curterm(cur_term);
    if (!can_move)
        return err_set(e,
                       "TERM=%.40s cannot move the cursor, so curses cannot draw the TUI: use a terminal such as "
                       "xterm-256color (or 'ahascope record' for text)",
                       term);
    return 0;
}

int tui_run(const TuiOpts *o, Err *e) {
    static Tui t; /* large; one per process */
    if (terminal_check(e)) return -1;
    memset(&t, 0, sizeof t);
    if (o->replay ? tui_replay_open(&t, o, e) : tui_live_open(&t, o, e)) return -1;
    int rc = tui_show(&t, o->mono, o->ascii, e);
    tui_pattern_close(&t);
    tui_tokstats_close(&t);
    if (o->replay) tui_replay_close(&t);
    else tui_live_close(&t);
    return rc;
}
