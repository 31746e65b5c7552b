/* `ahascope trace --jsonl`: the per-step trace as JSON lines, one object per
 * position fed, so any tool can read every head's decision without SQLite.
 * This file reads the flags by their table; app/trace_run.h runs. */
#include <stddef.h>
#include <stdio.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/trace_run.h"
#include "engine/trace.h"

typedef struct {
    int jsonl, progress;
} TraceOpts;

static const ArgSpec TRACE_ROWS[] = {
    {"--jsonl", ARG_FLAG, offsetof(TraceOpts, jsonl), .help = "JSON lines, the one format there is (the default)"},
    {"--progress", ARG_FLAG, offsetof(TraceOpts, progress),
     .help = "a prefill bar on stderr even when it is not a terminal (on one it shows by itself once the prefill "
             "runs over 0.5 s)"},
};
static const ArgsTable TRACE_FLAGS = ARGS_TABLE(NULL, TraceOpts, TRACE_ROWS);

const ArgsTable *const TRACE_TABLES[] = {&ARGS_PROMPT, &TRACE_FLAGS, &ARGS_SAMPLING, &ARGS_MODEL, &ARGS_POLICY,
                                         &ARGS_HEADS, NULL};

/* The per-head fields of a line, from engine/trace.h's list: ", gate, ..." shown from its third byte. */
#define FIELD_NAME(name, ...) ", " #name
static const char HEAD_FIELDS[] = "" TRACE_HEAD_FIELDS(FIELD_NAME);
#undef FIELD_NAME

static void trace_help(void) {
    char fields[2048];
    puts("usage: ahascope trace [--prompt TEXT | --prompt-file FILE] [--jsonl] [--progress] [sampling flags]\n"
         "                      [model flags] [policy flags]\n"
         "\n"
         "Run the model and print one JSON object per position fed (prompt and generated):");
    snprintf(fields, sizeof fields,
             "pos, token, piece, logprob, entropy, step_us, and per (layer, head) flat arrays of n_layers*n_heads "
             "numbers in layer-major order: %s ({ours_fields} are this project's: QAdA from exact far-key moments, "
             "and REM-corrected QAdA; far_mean, far_std are the far scores' exact moments; null where a value was "
             "not computed); the *_logit values are ln(mass outside the local set / mass inside); n_far (keys "
             "outside the local set: 0 means no choice) and kv_read (KV positions read per KV head, summed).",
             HEAD_FIELDS + 2);
    args_help_wrap(fields, 2);
    puts("logprob/entropy describe the distribution that predicted the token (null at position 0).\n"
         "Lines are valid UTF-8: a piece that is not (a byte-fallback token, e.g. one byte of an emoji)\n"
         "is written with U+FFFD, and piece_hex (only then) holds its raw bytes as hex.");
    args_help_tables(TRACE_TABLES);
}

int cmd_trace(int argc, char **argv) {
    RunOpts o;
    TraceOpts t = {0};
    Err e;
    runopts_defaults(&o);
    void *const opts[] = {&o, &t, &o, &o, &o, &o};
    int r = args_parse_argv(argc, argv, TRACE_TABLES, opts, &e);
    if (r == ARGS_HELP) { trace_help(); return 0; }
    if (r != ARGS_DONE) return args_fail(&e);
    return runopts_check(&o, &e) == 0 && trace_run(&o, t.progress, &e) == 0 ? 0 : args_fail(&e);
}
