/* commands.h — one entry point per subcommand. Each takes the arguments
 * after the subcommand name (argv[0] is the subcommand), returns the exit
 * status, prints its own --help (stdout, status 0), and reports an error as
 * one line "ahascope CMD: ..." through args_fail: 2 for a usage error, 1 for
 * a failure (app/args.h). */
#ifndef AHASCOPE_COMMANDS_H
#define AHASCOPE_COMMANDS_H

#include "app/args.h"

/* Far positions per head the TUI records by default (`tui --attn-top`;
 * `bench --long` records the same): four keep a TUI recording near 100
 * bytes a decision, and the inspector shows what was recorded. */
#define APP_TUI_ATTN_TOP 4

/* A command's flag tables (app/args.h), NULL-terminated: what it parses
 * and what its --help lists, the same rows. */
typedef struct {
    const char *name;
    const ArgsTable *const *tables;
} CommandFlags;

/* Every command whose flags are tables, NULL-name-terminated; the tests
 * walk it to hold each row to the help and the parser. */
extern const CommandFlags COMMAND_FLAGS[];

extern const ArgsTable *const TUI_TABLES[];
extern const ArgsTable *const GENERATE_TABLES[];
extern const ArgsTable *const TRACE_TABLES[];
extern const ArgsTable *const RECORD_TABLES[];
extern const ArgsTable *const RUNS_TABLES[];
extern const ArgsTable *const QUERY_TABLES[];
extern const ArgsTable *const EXPORT_TABLES[];
extern const ArgsTable *const COMPARE_TABLES[];
extern const ArgsTable *const MERGE_TABLES[];
extern const ArgsTable *const TRAIN_TABLES[];
extern const ArgsTable *const FIT_TABLES[];
extern const ArgsTable *const EVAL_TABLES[];
extern const ArgsTable *const SWEEP_TABLES[];
extern const ArgsTable *const TASKS_TABLES[];
extern const ArgsTable *const CALIBRATE_TABLES[];
extern const ArgsTable *const INFO_TABLES[];
extern const ArgsTable *const CONVERT_TABLES[];
extern const ArgsTable *const BENCH_TABLES[];
extern const ArgsTable *const PULL_TABLES[];

/* The held-out data and output flags of eval, which sweep takes too
 * (their rows' offsets into EvalOpts, app/eval_table.h). */
extern const ArgsTable EVAL_DATA_FLAGS;

int cmd_generate(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_tui(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_tasks(int argc, char **argv);

#endif
