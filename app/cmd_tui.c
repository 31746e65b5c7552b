/* `ahascope tui` (and `ahascope` alone): step through generation token by
 * token and watch every head choose global or local. This file parses the
 * flags and prints --help; the controller itself is app/tui/ (tui.h).
 */
#include <locale.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/tui/sql.h"
#include "app/tui/tui.h"
#include "engine/pool.h"
#include "engine/tasks/tasks.h"
#include "engine/trace.h"
#include "store/store.h"
#include "views/explain.h"

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

/* The needle's positions as runs, "41-67" or "12-20, 88-95": what the
 * status line can hold of a list of every position. */
static void pos_runs(const TaskItem *it, char *buf, size_t cap) {
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < it->n_needle_pos && o + 24 < cap;) {
        int j = i;
        while (j + 1 < it->n_needle_pos && it->needle_pos[j + 1] == it->needle_pos[j] + 1) j++;
        o += (size_t)(j > i ? snprintf(buf + o, cap - o, "%s%d-%d", o ? ", " : "", it->needle_pos[i], it->needle_pos[j])
                            : snprintf(buf + o, cap - o, "%s%d", o ? ", " : "", it->needle_pos[i]));
        i = j + 1;
    }
}

/* --tasks FILE --item K: the item's prompt becomes the run's, its needle
 * and question the screen's marks (into marks[], n_needle_pos + 1 long),
 * its facts the status line's note. Errors name the file. */
static int tui_task_item(TuiOpts *t, const TaskSet *s, const char *file, long k, ViewMark **marks, char *note,
                         size_t cap, Err *e) {
    if (k >= s->n) return err_set(e, "%s: no item %ld: the file holds %d (counted from 0)", file, k, s->n);
    const TaskItem *it = &s->item[k];
    if (!(*marks = malloc((size_t)(it->n_needle_pos + 1) * sizeof **marks))) return err_set(e, "out of memory");
    for (int i = 0; i < it->n_needle_pos; i++) (*marks)[i] = (ViewMark){it->needle_pos[i], VIEW_MARK_NEEDLE};
    (*marks)[it->n_needle_pos] = (ViewMark){it->question_pos, VIEW_MARK_QUESTION};
    char runs[96];
    pos_runs(it, runs, sizeof runs);
    snprintf(note, cap, "item %ld of %.200s: needle at pos %s, question at pos %d, answer \xc2\xab%.24s\xc2\xbb", k, file, runs,
             it->question_pos, it->answer);
    t->run.prompt = it->prompt, t->run.have_prompt = 1;
    t->marks = *marks, t->n_marks = it->n_needle_pos + 1, t->item_note = note;
    return 0;
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
    TaskSet set = {0};
    ViewMark *marks = NULL;
    char note[512]; /* the status line shows what fits */
    int rc = 1;
    if (tasks && (tasks_read_jsonl(tasks, &set, &e) ||
                  tui_task_item(&t, &set, tasks, item < 0 ? 0 : item, &marks, note, sizeof note, &e))) {
        rc = args_fail(&e);
    } else if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        err_set(&e, "needs a terminal on stdin and stdout (for headless runs use 'ahascope record')");
        rc = args_fail(&e);
    } else {
        setlocale(LC_ALL, "");
        rc = tui_run(&t, &e) == 0 ? 0 : args_fail(&e);
    }
    free(marks);
    tasks_free(&set);
    return rc;
}
