/* main.c — `ahascope <command> [flags]`: dispatch to a subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/version.h"

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} Command;

static const Command COMMANDS[] = {
    {"tui", cmd_tui, "step through generation and watch every head choose global or local (the default)"},
    {"generate", cmd_generate, "generate text from a prompt"},
    {"trace", cmd_trace, "print the per-step trace (every head's decision) as JSON lines"},
    {"record", cmd_record, "run the model headless, recording every decision into a SQLite database"},
    {"runs", cmd_runs, "list the runs recorded in a database"},
    {"query", cmd_query, "read-only SQL over a recorded database (table, CSV or JSON)"},
    {"export", cmd_export, "write one recorded run as JSON or CSV"},
    {"compare", cmd_compare, "predictor vs oracle confusion of a run, or where two runs diverge"},
    {"merge", cmd_merge, "merge databases recorded in parallel into one"},
    {"train", cmd_train, "learn AHA routers for a model (straight-through estimator + lambda * mean(r))"},
    {"fit", cmd_fit, "fit AHA routers to the oracle's labels, any model, no backward pass (logistic regression)"},
    {"eval", cmd_eval, "teacher-forced quality, global share and predictor scores of a policy; --match-budget"},
    {"sweep", cmd_sweep, "windows x policies x thresholds on the same data: Pareto front, window curve"},
    {"tasks", cmd_tasks, "write long-context task items (passkey, multikey, vt, local) for eval --tasks"},
    {"calibrate", cmd_calibrate, "choose the static baseline's heads from recorded oracle rates"},
    {"info", cmd_info, "describe a model: architecture, dims, dtype, parameters, bytes, tokenizer, routers"},
    {"convert", cmd_convert, "write a model as a Hugging Face llama folder or a GGUF file"},
    {"bench", cmd_bench, "measure prefill/decode speed against the bandwidth roofline"},
    {"pull", cmd_pull, "download a model from the Hugging Face Hub into the cache (resumed, checked)"},
    {"run", cmd_run, "the main job (what `make run` does): fetch the default model if needed, then run"},
};
#define N_COMMANDS (int)(sizeof COMMANDS / sizeof COMMANDS[0])

static void usage(FILE *f) {
    fprintf(f, "ahascope %s — All-or-Here Attention profiler\n\n", AHASCOPE_VERSION);
    fprintf(f, "usage: ahascope <command> [flags]    (ahascope <command> --help for details)\n\ncommands:\n");
    for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
}

char *openblas_get_corename(void); /* OpenBLAS extension, not in cblas.h everywhere */

/* Debian's OpenBLAS 0.3.21 does not recognise CPUs newer than itself and
 * falls back to its SSE3 "Prescott" kernels: prefill (sgemm) ran 2.5x
 * slower than with its AVX-512 kernels on this project's Xeon. The core
 * type can only be chosen before the library initialises, so ahascope runs
 * itself again, once, with OPENBLAS_CORETYPE set. Setting that variable
 * (to anything) opts out. */
static void openblas_pick_core(char **argv) {
    if (getenv("OPENBLAS_CORETYPE")) return;
    const char *core = openblas_get_corename();
    if (!core || strcasecmp(core, "Prescott") != 0) return;
    __builtin_cpu_init();
    const char *want = NULL;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        want = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        want = "Haswell";
    if (!want || setenv("OPENBLAS_CORETYPE", want, 1) != 0) return;
    fflush(NULL);
    execv("/proc/self/exe", argv); /* returns only on failure: keep the slow kernels */
}

int main(int argc, char **argv) {
    openblas_pick_core(argv);
    if (argc < 2) return cmd_tui(1, (char *[]){"tui", NULL});
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        printf("ahascope %s\n", AHASCOPE_VERSION);
        return 0;
    }
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(name, COMMANDS[i].name)) {
            args_set_command(COMMANDS[i].name);
            return COMMANDS[i].fn(argc - 1, argv + 1);
        }
    Err e; /* through args_fail, so the name is escaped as every echoed argument is */
    err_usage(&e, "unknown command '%s' (try: ahascope --help)", name);
    return args_fail(&e);
}
