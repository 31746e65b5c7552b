/* `ahascope tui` (and `ahascope` alone): step through generation token by
 * token and watch every head choose global or local. This file parses the
 * flags by their table, checks them and prints --help; app/tui_open.h opens
 * the task item and the controller, which is app/tui/ (tui.h).
 */
#include <stddef.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/tui/sql.h"
#include "app/tui_open.h"
#include "engine/pool.h"
#include "store/store.h"

/* What the flags hold beyond TuiOpts: the task item to open. */
typedef struct {
    const char *tasks;
    long item; /* -1: not given */
    int progress;
} TuiItem;

static int read_no_record(void *opts, const char *flag, const char *v, Err *e) {
    (void)flag, (void)v, (void)e;
    ((TuiOpts *)opts)->db = NULL;
    return 0;
}

static int read_run(void *opts, const char *flag, const char *v, Err *e) {
    long n = 0;
    if (args_int(flag, v, 1, 1L << 62, &n, e)) return -1;
    ((TuiOpts *)opts)->replay_run = n;
    return 0;
}

#define T(field) offsetof(TuiOpts, field)

static const ArgSpec TUI_ROWS[] = {
    {"--prompt", ARG_STRING, T(run.prompt), .metavar = "TEXT", .also = ARG_ALSO(TuiOpts, run.have_prompt),
     .help = "the text to continue (default \"Once upon a time\"; \"\" starts from BOS alone)"},
    {"--prompt-file", ARG_STRING, T(run.prompt_file), .metavar = "FILE",
     .help = "the prompt is FILE's text, byte for byte (at most 16 MiB, no NUL byte); while a prompt of more "
             "than 64 tokens is prefilled the status line shows \"prefill 1024/4096 · 63 tok/s\" and every key "
             "still answers (q stops it)"},
    {"--db", ARG_STRING, T(db), .metavar = "FILE",
     .help = "record each run into FILE (default ahascope.db in the current directory)"},
    {"--no-record", ARG_CUSTOM, .fn = read_no_record, .help = "record nothing"},
    {"--mono", ARG_FLAG, T(mono), .help = "shading glyphs only, no colour (also when NO_COLOR is set)"},
    {"--ascii", ARG_FLAG, T(ascii), .help = "no UTF-8"},
    {"--threads", ARG_INT, T(threads), 1, 64, "N", .help = "worker threads (default: all cores)"},
    {"--attn-top", ARG_INT, T(attn_top), 0, STORE_ATTN_TOP_MAX, "K",
     .help = "record each head's K heaviest far positions (default 4, 0 none, at most 8) so a replay shows where "
             "it looked"},
    {"--replay", ARG_FLAG, T(replay), .help = "browse a recorded run without a model: --run ID"},
    {"--run", ARG_CUSTOM, .metavar = "ID", .fn = read_run, .help = "the run --replay opens (default the last)"},
    {"--sql-timeout", ARG_DOUBLE, T(sql_timeout), 0.01, 86400, "S",
     .help = "stop a `:` query after S seconds (default 10; Esc or Ctrl-C stops it sooner; results keep their "
             "first 10000 rows)"},
};
static const ArgsTable TUI_FLAGS = ARGS_TABLE(NULL, TuiOpts, TUI_ROWS);

static const ArgSpec TUI_ITEM_ROWS[] = {
    {"--tasks", ARG_STRING, offsetof(TuiItem, tasks), .metavar = "FILE",
     .help = "a task file of `ahascope tasks`: its item K is the prompt, its needle (every position) and question "
             "marked in the token pane and on the timeline"},
    {"--item", ARG_LONG, offsetof(TuiItem, item), 0, 1L << 30, "K",
     .help = "the item, counted from 0 as `eval --tasks --db` names runs FILE#K (default 0)"},
    {"--progress", ARG_FLAG, offsetof(TuiItem, progress),
     .help = "accepted so `ahascope run --progress` works on a terminal too (the status line shows a long "
             "prefill by itself)"},
};
static const ArgsTable TUI_ITEM_FLAGS = ARGS_TABLE(NULL, TuiItem, TUI_ITEM_ROWS);

const ArgsTable *const TUI_TABLES[] = {&TUI_FLAGS, &TUI_ITEM_FLAGS, &ARGS_SAMPLING, &ARGS_MODEL, &ARGS_POLICY,
                                       &ARGS_HEADS, NULL};

static void tui_help(void) {
    puts("usage: ahascope tui [--prompt TEXT | --prompt-file FILE] [--db FILE | --no-record] [--mono] [--ascii]\n"
         "                    [--threads N] [--sql-timeout S] [sampling flags] [model flags] [policy flags]\n"
         "       ahascope tui --replay [--db FILE] [--run ID] [--mono] [--ascii] [--sql-timeout S]\n"
         "       ahascope tui --tasks FILE [--item K] [the flags of the first form but --prompt]\n"
         "\n"
         "Step through generation token by token and watch every attention head choose global or local.\n"
         "Every predictor is computed at every step (--profile is implied). With no --policy, --window\n"
         "or --routers, a model with shipped routers (stories260K) runs aha on them; others run full.\n"
         "The keys (? in the TUI lists them all):\n"
         "  space step   p play/pause   +/- speed   arrows/hjkl head   [ ] Home End token   Tab focus\n"
         "  m metric   a agreement predictor   n/N next missed/needless global   Enter inspect head\n"
         "  P policy   w/W window   t/T tau   o/O theta   (re-evaluates the tokens as a new, linked run)\n"
         "  e edit prompt   : read-only SQL   s export   v plots   R summary   D diff   B runs   q quit\n"
         "ahascope with no command opens this screen.");
    args_help_tables(TUI_TABLES);
}

int cmd_tui(int argc, char **argv) {
    TuiOpts t = {.db = "ahascope.db", .threads = pool_default_threads(), .attn_top = APP_TUI_ATTN_TOP,
                 .sql_timeout = TUI_SQL_TIME_LIMIT};
    TuiItem ti = {.item = -1};
    RunOpts *o = &t.run;
    runopts_defaults(o);
    Err e;
    void *const opts[] = {&t, &ti, o, o, o, o};
    int r = args_parse_argv(argc, argv, TUI_TABLES, opts, &e);
    if (r == ARGS_HELP) { tui_help(); return 0; }
    if (r != ARGS_DONE) return args_fail(&e);
    const char *tasks = ti.tasks;
    long item = ti.item;
    if (t.replay && !t.db) { err_usage(&e, "--replay needs --db FILE"); return args_fail(&e); }
    if (!t.replay && t.replay_run) { err_usage(&e, "--run ID goes with --replay"); return args_fail(&e); }
    if (item >= 0 && !tasks) { err_usage(&e, "--item K goes with --tasks FILE"); return args_fail(&e); }
    if (tasks && (t.replay || o->have_prompt || o->prompt_file || o->chat)) {
        err_usage(&e, "--tasks FILE gives the prompt: not with --prompt, --prompt-file, --chat or --replay");
        return args_fail(&e);
    }
    if (!t.replay && runopts_check(o, &e)) return args_fail(&e);
    return tui_open(&t, tasks, item, &e) ? args_fail(&e) : 0;
}
