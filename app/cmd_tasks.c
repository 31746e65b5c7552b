/* `ahascope tasks`: write long-context task items (engine/tasks/) for a
 * model, with its own tokenizer, as JSON lines for `eval --tasks`. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/setup.h"
#include "engine/tasks/tasks.h"

/* Ids a prompt leaves free for the answer and its separating space. */
#define TASKS_ANSWER_ROOM 8

typedef struct {
    RunOpts o;
    const char *out, *task;
    TaskKind kind;
    long context, n, seed, keys, key_letters, reask;
    int list;
} TasksOpts;

#define K(field) offsetof(TasksOpts, field)

static const ArgSpec TASKS_ROWS[] = {
    {"--task", ARG_STRING, K(task), .metavar = "KIND", .help = TASK_LIST},
    {"--list", ARG_FLAG, K(list), .help = "print every kind with its metric and one line on what it asks, then exit"},
    {"--context", ARG_LONG, K(context), 1, 1 << 20, "N",
     .help = "ids per prompt, BOS included (at most the model's context minus 8, which the answer needs)"},
    {"--n", ARG_LONG, K(n), 1, 1 << 20, "K", .help = "items to write"},
    {"--seed", ARG_LONG, K(seed), 0, 9.3e18, "S", .help = "the items' seed (default 1)"},
    {"--keys", ARG_LONG, K(keys), 1, TASK_RECALL_MAX_KEYS, "K",
     .help = "multikey: key -> value pairs an item holds, 2-8 (default 4; fewer make a curriculum's first steps); "
             "recall: keys besides the pass key, 1-22 (default context / 128; more make denser documents)"},
    {"--key-letters", ARG_LONG, K(key_letters), 1, TASK_KEY_LETTERS, "L",
     .help = "letters of every key and variable name, 1-3 (default 3, \"gzf\"); with 1, telling keys apart is one "
             "token's look-up where letters are pieces"},
    {"--reask", ARG_LONG, K(reask), 1, TASK_MAX_REASKS, "N",
     .help = "multikey, for training: after the statements N keys, each drawn from all of them, are asked again "
             "with the value written out, then the question (1-16; N retrievals more an item; the needle stays the "
             "asked key's statement)"},
    {"--out", ARG_STRING, K(out), .metavar = "FILE", .help = "the JSON-lines file (written whole or not at all)"},
};
static const ArgsTable TASKS_FLAGS = ARGS_TABLE(NULL, TasksOpts, TASKS_ROWS);

static const ArgSpec TASKS_MODEL_ROWS[] = {
    {"--model", ARG_STRING, K(o.model), .metavar = "PATH",
     .help = ARGS_MODEL_KINDS " (default: stories260K)"},
    {"--tokenizer", ARG_STRING, K(o.tokenizer), .metavar = "PATH", .help = "its tokenizer (default: found beside the model)"},
};
static const ArgsTable TASKS_MODEL_FLAGS = ARGS_TABLE("model flags", TasksOpts, TASKS_MODEL_ROWS);

const ArgsTable *const TASKS_TABLES[] = {&TASKS_FLAGS, &TASKS_MODEL_FLAGS, NULL};

static void tasks_help(void) {
    puts("usage: ahascope tasks --task KIND --context N --n K --out FILE [--seed S]\n"
         "                      [--keys K] [--key-letters L] [--reask N] [--model M] [--tokenizer T]\n"
         "       ahascope tasks --list\n"
         "\n"
         "Write K long-context task items as JSON lines, each prompt encoding to exactly N ids with the\n"
         "model's own tokenizer (its BOS counted): the project's own kinds (a pass key, key -> value pairs,\n"
         "chains of assignments, a local control, training documents) and RULER's thirteen synthetic\n"
         "tasks but its two question-answering ones (--list says what each is and how it is scored). Each\n"
         "line holds prompt, answer, answers (what a right answer holds), metric, needle_pos (the token\n"
         "positions of the asked statements), question_pos, needles, n_tokens and needle_distance; the\n"
         "same seed writes the same file. Score them with `eval --tasks FILE`.");
    args_help_tables(TASKS_TABLES);
}

/* Flags of tasks. Returns 1 on --help, 0 parsed, -1 error. */
static int parse(int argc, char **argv, TasksOpts *x, Err *e) {
    runopts_defaults(&x->o);
    x->seed = 1;
    void *const opts[] = {x, x};
    int r = args_parse_argv(argc, argv, TASKS_TABLES, opts, e);
    if (r != ARGS_DONE) return r;
    if (x->list) return 2;
    const char *missing = !x->task ? "--task KIND (`ahascope tasks --list` names them)" : !x->context ? "--context N" : !x->n ? "--n K"
                        : !x->out ? "--out FILE" : NULL;
    if (missing) return err_usage(e, "%s is required", missing);
    if (task_parse("--task", x->task, &x->kind, e)) return -1; /* after the missing flags, which say more */
    int lo, hi;
    if (x->keys && !task_keys_range(x->kind, &lo, &hi))
        return err_usage(e, "--keys is for --task multikey or recall only");
    if (x->keys && (x->keys < lo || x->keys > hi))
        return err_usage(e, "--keys %ld: a %s item holds %d to %d keys", x->keys, task_name(x->kind), lo, hi);
    if (x->reask && x->kind != TASK_MULTIKEY) return err_usage(e, "--reask is for --task multikey only");
    if (x->key_letters && task_is_ruler(x->kind))
        return err_usage(e, "--key-letters is for the project's own kinds: %s names its keys as RULER does",
                         task_name(x->kind));
    return 0;
}

/* `tasks --list`: every kind, its metric and what it asks, one line each. */
static void tasks_list(void) {
    for (int k = 0; k < TASK_COUNT; k++)
        printf("%-16s %-5s %-6s %s\n", task_name((TaskKind)k), task_metric_name(task_metric((TaskKind)k)),
               task_is_ruler((TaskKind)k) ? "RULER" : "own", task_about((TaskKind)k));
    puts("(RULER's qa_1 and qa_2, on SQuAD and HotpotQA, are not offered: their data cannot be fetched here; items\n"
         "written by hand with \"answers\" and \"metric\": \"part\" are scored as RULER scores them)");
}

/* Refuse an item whose answer, generated as eval does, would not fit the
 * model's context after the prompt. */
static int answer_room(const AppLoaded *L, const TaskItem *it, int index, Err *e) {
    int cap = (int)(4 * strlen(it->answer) + 8), n = 0, seq = L->model.c.seq_len;
    int *ids = malloc((size_t)cap * sizeof *ids);
    if (!ids) return err_set(e, "out of memory");
    int rc = tok_encode(&L->tok, it->answer, strlen(it->answer), 0, 0, ids, cap, &n, e);
    free(ids);
    if (rc) return -1;
    int need = task_gen_budget(it->metric, n);
    if (it->n_tokens + need > seq)
        return err_usage(e, "--context %d leaves %d of the model's context (%d) for item %d's answer, which eval "
                         "generates %d tokens for: at most --context %d", it->n_tokens, seq - it->n_tokens, seq,
                         index, need, seq - need);
    return 0;
}

static int run_tasks(TasksOpts *x, Err *e) {
    AppLoaded L;
    int rc = -1, made = 0;
    TaskItem *items = NULL;
    if (app_load(&x->o, &L, 1, e)) goto out;
    if (x->context + TASKS_ANSWER_ROOM > L.model.c.seq_len) {
        err_usage(e, "--context %ld leaves no room for the answer in the model's context (%d): at most %d", x->context,
                  L.model.c.seq_len, L.model.c.seq_len - TASKS_ANSWER_ROOM);
        goto out;
    }
    if (!(items = calloc((size_t)x->n, sizeof *items))) { err_set(e, "out of memory"); goto out; }
    TaskSpec spec = {x->kind, (int)x->context, (int)x->keys, (int)x->key_letters, (uint64_t)x->seed, (int)x->reask};
    for (; made < x->n; made++)
        if (task_make(&L.tok, &spec, made, &items[made], e) || answer_room(&L, &items[made], made, e)) {
            if (items[made].prompt) made++; /* made, so freed below */
            goto out;
        }
    rc = tasks_write_jsonl(x->out, items, made, e);
out:
    for (int i = 0; items && i < made; i++) task_item_free(&items[i]);
    free(items);
    app_unload(&L);
    return rc;
}

int cmd_tasks(int argc, char **argv) {
    static TasksOpts x;
    Err e;
    memset(&x, 0, sizeof x);
    int r = parse(argc, argv, &x, &e);
    if (r == 1) { tasks_help(); return 0; }
    if (r == 2) { tasks_list(); return 0; }
    if (r < 0 || run_tasks(&x, &e)) return args_fail(&e);
    return 0;
}
