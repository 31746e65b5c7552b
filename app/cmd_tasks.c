/* `ahascope tasks`: write long-context task items (engine/tasks/) for a
 * model, with its own tokenizer, as JSON lines for `eval --tasks`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/setup.h"
#include "engine/tasks/tasks.h"

/* Ids a prompt leaves free for the answer and its separating space. */
#define TASKS_ANSWER_ROOM 8

static void tasks_help(void) {
    puts("usage: ahascope tasks --task " TASK_LIST " --context N --n K --out FILE [--seed S]\n"
         "                      [--keys K] [--key-letters L] [--reask N] [--model M] [--tokenizer T]\n"
         "\n"
         "Write K long-context task items as JSON lines, each prompt encoding to exactly N ids with the\n"
         "model's own tokenizer (its BOS counted): a five-digit number stated once in filler and asked at\n"
         "the end (passkey), four key -> value pairs with one asked (multikey), two chains of variable\n"
         "assignments with one chain's last variable asked (vt), or passkey with the statement right\n"
         "before the question (local: routing must not matter), or training documents whose facts are\n"
         "each asked again later with the answer written out (recall). Each line holds prompt, answer,\n"
         "needle_pos (the token positions of the asked statements), question_pos, needles, n_tokens and\n"
         "needle_distance; the same seed writes the same file. Score them with `eval --tasks FILE`.\n"
         "  --task KIND     " TASK_LIST "\n"
         "  --context N     ids per prompt, BOS included (at most the model's context minus 8,\n"
         "                  which the answer needs)\n"
         "  --n K           items to write\n"
         "  --seed S        the items' seed (default 1)\n"
         "  --keys K        multikey: key -> value pairs an item holds, 2-8 (default 4; fewer make\n"
         "                  a curriculum's first steps); recall: keys besides the pass key, 1-22\n"
         "                  (default context / 128; more make denser documents)\n"
         "  --key-letters L letters of every key and variable name, 1-3 (default 3, \"gzf\"); with 1,\n"
         "                  telling keys apart is one token's look-up where letters are pieces\n"
         "  --reask N       multikey, for training: after the statements N keys, each drawn from all of\n"
         "                  them, are asked again with the value written out, then the question (1-16;\n"
         "                  N retrievals more an item; the needle stays the asked key's statement)\n"
         "  --out FILE      the JSON-lines file (written whole or not at all)");
    puts("model flags:\n"
         "  --model PATH      a llama2.c checkpoint or a Hugging Face folder (default: stories260K)\n"
         "  --tokenizer PATH  its tokenizer (default: found beside the model)");
}

typedef struct {
    RunOpts o;
    const char *out, *task;
    TaskKind kind;
    long context, n, seed, keys, key_letters, reask;
} TasksOpts;

/* Flags of tasks. Returns 1 on --help, 0 parsed, -1 error. */
static int parse(int argc, char **argv, TasksOpts *x, Err *e) {
    runopts_defaults(&x->o);
    x->seed = 1;
    Args a = {argc, argv, 1};
    while (a.i < argc) {
        const char *f = argv[a.i++];
        if (args_is_help(f)) return 1;
        const char **str = !strcmp(f, "--model") ? &x->o.model : !strcmp(f, "--tokenizer") ? &x->o.tokenizer
                         : !strcmp(f, "--out") ? &x->out : !strcmp(f, "--task") ? &x->task : NULL;
        long *num = !strcmp(f, "--context") ? &x->context : !strcmp(f, "--n") ? &x->n
                  : !strcmp(f, "--seed") ? &x->seed : !strcmp(f, "--keys") ? &x->keys
                  : !strcmp(f, "--key-letters") ? &x->key_letters : !strcmp(f, "--reask") ? &x->reask : NULL;
        const char *v;
        if (!str && !num) return args_unknown(f, e);
        if (!(v = args_value(&a, e))) return -1;
        if (str) *str = v;
        else if (num == &x->seed) { if (args_int(f, v, 0, 0x7fffffffffffffffL, num, e)) return -1; }
        else if (num == &x->keys) { if (args_int(f, v, 1, TASK_RECALL_MAX_KEYS, num, e)) return -1; }
        else if (num == &x->key_letters) { if (args_int(f, v, 1, TASK_KEY_LETTERS, num, e)) return -1; }
        else if (num == &x->reask) { if (args_int(f, v, 1, TASK_MAX_REASKS, num, e)) return -1; }
        else if (args_int(f, v, 1, 1 << 20, num, e)) return -1;
    }
    const char *missing = !x->task ? "--task " TASK_LIST : !x->context ? "--context N" : !x->n ? "--n K"
                        : !x->out ? "--out FILE" : NULL;
    if (missing) return err_usage(e, "%s is required", missing);
    if (task_parse("--task", x->task, &x->kind, e)) return -1; /* after the missing flags, which say more */
    int lo, hi;
    if (x->keys && !task_keys_range(x->kind, &lo, &hi))
        return err_usage(e, "--keys is for --task multikey or recall only");
    if (x->keys && (x->keys < lo || x->keys > hi))
        return err_usage(e, "--keys %ld: a %s item holds %d to %d keys", x->keys, task_name(x->kind), lo, hi);
    if (x->reask && x->kind != TASK_MULTIKEY) return err_usage(e, "--reask is for --task multikey only");
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
        if (task_make(&L.tok, &spec, made, &items[made], e)) goto out;
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
    if (r < 0 || run_tasks(&x, &e)) return args_fail(&e);
    return 0;
}
