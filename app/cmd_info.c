/* `ahascope info`: what a model is — architecture, shape, storage dtype,
 * parameters and bytes, tokenizer, routers — without running it. Loading
 * goes through the same validation as every other command, so `info` is
 * also the quickest way to ask "will ahascope accept this folder?". This
 * file reads the flags by their table; app/info_run.h describes. */
#include <stddef.h>
#include <stdio.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/info_run.h"

typedef struct {
    int json;
} InfoOpts;

static const ArgSpec INFO_ROWS[] = {
    {"--routers", ARG_STRING, offsetof(RunOpts, routers), .metavar = "FILE",
     .help = "check these routers against the model (default: its built-in ones, if any)"},
};
static const ArgsTable INFO_FLAGS = ARGS_TABLE(NULL, RunOpts, INFO_ROWS);

static const ArgSpec INFO_OUT_ROWS[] = {
    {"--json", ARG_FLAG, offsetof(InfoOpts, json), .help = "one JSON object instead of the text"},
};
static const ArgsTable INFO_OUT_FLAGS = ARGS_TABLE(NULL, InfoOpts, INFO_OUT_ROWS);

const ArgsTable *const INFO_TABLES[] = {&INFO_FLAGS, &INFO_OUT_FLAGS, &ARGS_MODEL, NULL};

static void info_help(void) {
    puts("usage: ahascope info [--routers FILE] [--json] [model flags]\n"
         "\n"
         "Describe a model: a llama2.c checkpoint, a Hugging Face folder (config.json + safetensors,\n"
         "llama / qwen2 / olmo2 / faolmo, F32 / F16 / BF16) or a GGUF file. Prints architecture,\n"
         "dimensions, dtype, the KV cache's type and size at the full context (--kv-dtype as a run\n"
         "would set it), parameter count, bytes, RoPE, tokenizer kind and router presence.\n"
         "A GGUF file (v2/v3) is described from its header alone: version, architecture, shape, tensor\n"
         "types with their counts and bytes, file type and tokenizer (no weight is read).\n"
         "Exits 1 with one line naming the file (and tensor) when the model or its tokenizer is bad.");
    args_help_tables(INFO_TABLES);
}

int cmd_info(int argc, char **argv) {
    RunOpts o;
    runopts_defaults(&o);
    Err e = {0};
    InfoOpts io = {0};
    void *const opts[] = {&o, &io, &o};
    int r = args_parse_argv(argc, argv, INFO_TABLES, opts, &e);
    if (r == ARGS_HELP) { info_help(); return 0; }
    if (r != ARGS_DONE) return args_fail(&e);
    return info_run(&o, io.json, &e) ? args_fail(&e) : 0;
}
