/* tmux.h — the TUI end to end: keys in, screen text out.
 *
 * Each session runs on a tmux server of its own (-L ahascope-PID-N-NAME, no
 * configuration file), so tests never touch the user's tmux nor each other's.
 * The pane runs one shell command in a working directory with TERM and LANG
 * fixed; when the command exits the pane prints "EXITED <status>" and stays,
 * so a test can see how the program ended.
 */
#ifndef AHASCOPE_TEST_TMUX_H
#define AHASCOPE_TEST_TMUX_H

typedef struct {
    char sock[64];  /* the private server's name */
    char dir[1024]; /* the working directory of the pane's command */
} Tmux;

/* 1 if tmux is installed: TUI tests skip without it. */
int tmux_available(void);

/* How many times longer every wait below lasts than its secs: the load
 * average per core, between 1 and 8. The waits poll, so a quiet machine
 * passes as fast as ever; on a busy one (CI at load 8) a key answered in
 * two seconds instead of a tenth is not a failure. */
double tmux_patience(void);

/* 1 once the pane no longer shows text, within secs (polled every 0.1 s). */
int tmux_gone(Tmux *t, const char *text, double secs);

/* Go-to as a user types it: `G`, the text, Enter. */
void tmux_go_to(Tmux *t, const char *text);

/* `tui --model m --seed 1 --temperature 0 --window 8 FLAGS` on a random
 * 16 x 32-head llama folder (`bench --dims 256,512,16,32,8,512,1024
 * --save-hf`, written once into test_tmp(name)/m), in a cols x rows pane
 * running in test_tmp(name): the many-heads shape the TUI tests share. env
 * as tmux_open's. 0, or -1 after a failed check. */
int tmux_open_16x32(Tmux *t, const char *name, int cols, int rows, const char *env, const char *flags);

/* The TUI on the organism (engine/organism/organism.bin, full attention,
 * greedy, not recorded) with its passkey item open (`tasks --task passkey
 * --context 504 --n 1 --seed 1`: the needle at pos 139-152, the question at
 * 494), stepped to pos 505, the answer's second digit, with extra flags and
 * environment (env as tmux_open's), in a cols x rows pane running in
 * test_tmp(name). 0, or -1 after a skip (no organism) or a failed check
 * (the session is then stopped). */
int tmux_open_passkey(Tmux *t, const char *name, int cols, int rows, const char *env, const char *flags);

/* The same, recorded (into test_tmp(name)/ahascope.db). */
int tmux_open_passkey_recorded(Tmux *t, const char *name, int cols, int rows, const char *env, const char *flags);

/* The pair issue 52's tests run on: the organism's passkey item, recorded
 * (tmux_open_passkey_recorded), or the 16 x 32-head folder once its
 * 12-token prompt is in (tmux_open_16x32), in a session named prefix +
 * "org" or "16x32" + "_" + cols. 0, or -1 after a skip or a failed check
 * (the session then stopped). */
int tmux_open_model(Tmux *t, int organism, const char *prefix, int cols, int rows, const char *env,
                    const char *flags);

/* The position the header shows, -1 when it shows none. */
int tmux_pos(Tmux *t);

/* The TUI on stories260K (seed 1, greedy) with extra flags and environment
 * (env as tmux_open's), in a cols x rows pane of a session of its own,
 * running in test_tmp(name). 0, or tmux_open's failure. */
int tmux_open_stories(Tmux *t, const char *name, int cols, int rows, const char *env, const char *flags);

/* Start `cmd` (a shell command line; extra VAR=value words in env, or NULL)
 * in a cols x rows pane, in dir (NULL: test_tmp(name), created). `settle`
 * seconds pass first, for tests that need the pane's own early redraws over
 * before the program draws. Returns tmux's exit status (0: started). */
int tmux_open(Tmux *t, const char *name, const char *dir, int cols, int rows, const char *env, const char *cmd,
              int settle);

/* Send keys, in tmux send-keys syntax ("Space", "C-l", "\"text\" Enter"). */
void tmux_keys(Tmux *t, const char *keys);

/* The pane's text now (malloc'd; NULL if tmux failed). */
char *tmux_capture(Tmux *t);

/* Wait up to secs until the screen shows text and return it (malloc'd); NULL,
 * with the last screen on stderr, if it never did. A blank screen is answered
 * with Ctrl-L, the TUI's redraw key: tmux sometimes wipes a pane it has just
 * made after the program drew its first frame, which the program cannot see. */
char *tmux_wait(Tmux *t, const char *text, double secs);

/* tmux_wait without the screen: 1 if text appeared in time. */
int tmux_shows(Tmux *t, const char *text, double secs);

/* 1 if the header's "pos N/" reached at least `pos` within secs: a playing
 * TUI can pass any one position between two captures. */
int tmux_shows_pos(Tmux *t, int pos, double secs);

/* Leave the TUI from wherever it is: `q` closes the top pane (or quits
 * the main screen), so press it until the program exits, a second apart
 * at most. 1 if it exited with status 0 within secs. */
int tmux_quit(Tmux *t, double secs);

/* Kill the session's server (and the program, if it still runs). */
void tmux_stop(Tmux *t);

/* Skip a TUI test without the shared model or without tmux. */
#define TMUX_NEED_TUI()                                                     \
    do {                                                                    \
        SKIP_UNLESS_SHARED();                                               \
        if (!tmux_available()) { test_skip("tmux not installed"); return; } \
    } while (0)

/* A wait the rest of the test depends on: fail and stop the test at once. */
#define TMUX_WAIT(t, text, secs)                                             \
    do {                                                                     \
        if (!tmux_shows(t, text, secs)) {                                    \
            test_fail(__FILE__, __LINE__, "screen never showed '%s'", text); \
            tmux_stop(t);                                                    \
            return;                                                          \
        }                                                                    \
    } while (0)

/* tmux_quit the test depends on: fail and stop the test when it does not exit 0. */
#define TMUX_QUIT(t, secs)                                                   \
    do {                                                                     \
        if (!tmux_quit(t, secs)) {                                           \
            test_fail(__FILE__, __LINE__, "the TUI did not quit with status 0"); \
            tmux_stop(t);                                                    \
            return;                                                          \
        }                                                                    \
    } while (0)

#endif
