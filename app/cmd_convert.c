/* cmd_convert.c — `ahascope convert --to hf|gguf`: the flags, parsed from a table; app/convert_run.c does the work.
 */
#include <stddef.h>
#include <stdio.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/convert_run.h"

static const ArgSpec CONVERT_ROWS[] = {
    {"--to", ARG_STRING, offsetof(ConvertOpts, to), .metavar = "hf|gguf", .help = "the format written"},
    {"--model", ARG_STRING, offsetof(ConvertOpts, model), .metavar = "MODEL",
     .help = "the source: a llama2.c checkpoint (hf, gguf), a HF llama folder or a GGUF llama (gguf)"},
    {"--out", ARG_STRING, offsetof(ConvertOpts, out), .metavar = "DIR|FILE.gguf", .help = "the folder or file written"},
    {"--dtype", ARG_STRING, offsetof(ConvertOpts, dtype), .metavar = "f32|bf16|f16",
     .help = "--to hf: model.safetensors' type (default f32)"},
    {"--type", ARG_STRING, offsetof(ConvertOpts, type), .metavar = "f32|f16|bf16|q8_0|q4_0",
     .help = "--to gguf: the matrices' type (default f32; norms stay f32)"},
    {"--tokenizer", ARG_STRING, offsetof(ConvertOpts, tokenizer), .metavar = "PATH",
     .help = "--to gguf: a tokenizer.bin or tokenizer.json (default: the source's own)"},
};
static const ArgsTable CONVERT_FLAGS = ARGS_TABLE(NULL, ConvertOpts, CONVERT_ROWS);

const ArgsTable *const CONVERT_TABLES[] = {&CONVERT_FLAGS, NULL};

static void convert_help(void) {
    puts("usage: ahascope convert --to hf --model FILE.bin --out DIR [--dtype f32|bf16|f16]\n"
         "       ahascope convert --to gguf --model M --out F.gguf [--type f32|f16|bf16|q8_0|q4_0] [--tokenizer T]\n\n"
         "--to hf writes a llama2.c checkpoint as a Hugging Face llama folder: config.json,\n"
         "generation_config.json and model.safetensors, the q/k rows of every head reordered from\n"
         "interleaved RoPE pairs to rotate-half (the tokenizer is not converted: pass --tokenizer when\n"
         "running the folder).\n"
         "--to gguf writes a llama2.c checkpoint, a HF llama folder or a GGUF llama as one new GGUF v3\n"
         "file with ggml's tensor names and its vocabulary (the tokenizer.bin beside the checkpoint, the\n"
         "folder's tokenizer.json, the GGUF file's own, or --tokenizer). q8_0 and q4_0 need rows that are\n"
         "whole blocks of 32 values.");
    args_help_tables(CONVERT_TABLES);
}

int cmd_convert(int argc, char **argv) {
    Err e;
    ConvertOpts c = {0};
    void *const opts[] = {&c};
    int r = args_parse_argv(argc, argv, CONVERT_TABLES, opts, &e);
    if (r == ARGS_HELP) { convert_help(); return 0; }
    if (r != ARGS_DONE) return args_fail(&e);
    return convert_run(&c, &e) ? args_fail(&e) : 0;
}
