/* command_flags.c — the list of the commands' flag tables (commands.h),
 * one place the tests walk so that no table escapes them. */
#include <stddef.h>

#include "app/commands.h"
#include "app/compare_heads.h"

const CommandFlags COMMAND_FLAGS[] = {
    {"tui", TUI_TABLES},
    {"generate", GENERATE_TABLES},
    {"trace", TRACE_TABLES},
    {"record", RECORD_TABLES},
    {"runs", RUNS_TABLES},
    {"query", QUERY_TABLES},
    {"export", EXPORT_TABLES},
    {"compare", COMPARE_TABLES},
    {"merge", MERGE_TABLES},
    {"train", TRAIN_TABLES},
    {"fit", FIT_TABLES},
    {"eval", EVAL_TABLES},
    {"sweep", SWEEP_TABLES},
    {"tasks", TASKS_TABLES},
    {"calibrate", CALIBRATE_TABLES},
    {"info", INFO_TABLES},
    {"convert", CONVERT_TABLES},
    {"bench", BENCH_TABLES},
    {"pull", PULL_TABLES},
    {"compare", COMPARE_HEADS_TABLES}, /* its --heads form: the same --help */
    {NULL, NULL},
};
