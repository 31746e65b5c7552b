/* run_info.h — what the app tells the store about a run, and what the
 * commands that run the model (record, generate, trace, the TUI, eval,
 * sweep, fit) share about it. */
#ifndef AHASCOPE_RUN_INFO_H
#define AHASCOPE_RUN_INFO_H

#include "app/args.h"
#include "app/setup.h"
#include "engine/session.h"
#include "store/store.h"

/* Fill a runs row from the options and what was loaded (hashes the model,
 * tokenizer and router files). info->prompt borrows o->prompt. */
int app_run_info(const RunOpts *o, const AppLoaded *L, StoreRunInfo *info, Err *e);

/* 0 if s generated normally; else -1 with e set to the one line saying why
 * it stopped: the position, and the likely cause (a half-precision KV
 * cache overflowing, a temperature too small for the logits). */
int app_session_error(const Session *s, Err *e);

/* "l.h,l.h,…" of the global heads in a [n_layers*n_heads] map. */
void app_heads_text(const uint8_t *map, int n_layers, int n_heads, char *out, size_t cap);

/* Where an export of a run goes in dir: ahascope-run<ID>.json and .csv, or
 * ahascope-run<ID>-2.json, -3, ... when those names hold another run (ids
 * restart in every database). A file is only ever replaced by an export of
 * the same run (same id, creation time, seed and prompt). */
int app_export_names(Store *st, int64_t run, const char *dir, char *json, char *csv, size_t cap, Err *e);

/* record --prompts FILE: one prompt a line (a trailing CR dropped), empty
 * lines skipped, at most APP_PROMPTS_MAX lines of at most
 * APP_PROMPT_LINE_MAX bytes each; line[i] is prompt i's 1-based line. */
#define APP_PROMPTS_MAX 100000
#define APP_PROMPT_LINE_MAX 65536
typedef struct {
    char *buf;   /* the file, its newlines made NULs */
    char **text; /* [n] prompts, into buf */
    int *line;   /* [n] their line numbers */
    int n;
} AppPrompts;

/* Read FILE's prompts; errors name the file (and the line): missing, not
 * text, a line too long, too many lines, no prompt at all. */
int app_prompts_read(const char *path, AppPrompts *p, Err *e);

void app_prompts_free(AppPrompts *p);

#endif
