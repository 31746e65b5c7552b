/* `ahascope convert --to hf`: a llama2.c checkpoint as a Hugging Face llama
 * folder (config.json, generation_config.json, model.safetensors), so the
 * converted model can be checked against the original. The folder writer,
 * with its RoPE row reordering, is the engine's model_save_hf.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/setup.h"
#include "engine/files.h"
#include "engine/model.h"
#include "engine/textout.h"

typedef struct {
    const char *to, *model, *out, *dtype;
} ConvertOpts;

static const ArgSpec CONVERT_ROWS[] = {
    {"--to", ARG_STRING, offsetof(ConvertOpts, to), .metavar = "hf", .help = "the one format there is: hf"},
    {"--model", ARG_STRING, offsetof(ConvertOpts, model), .metavar = "FILE.bin", .help = "the llama2.c checkpoint"},
    {"--out", ARG_STRING, offsetof(ConvertOpts, out), .metavar = "DIR", .help = "the folder written"},
    {"--dtype", ARG_STRING, offsetof(ConvertOpts, dtype), .metavar = "f32|bf16|f16",
     .help = "model.safetensors' type (default f32)"},
};
static const ArgsTable CONVERT_FLAGS = ARGS_TABLE(NULL, ConvertOpts, CONVERT_ROWS);

const ArgsTable *const CONVERT_TABLES[] = {&CONVERT_FLAGS, NULL};

static void convert_help(void) {
    puts("usage: ahascope convert --to hf --model FILE.bin --out DIR [--dtype f32|bf16|f16]\n\n"
         "Write a llama2.c checkpoint as a Hugging Face llama folder: config.json, generation_config.json\n"
         "and model.safetensors (default f32). The q/k rows of every head are reordered from llama2.c's\n"
         "interleaved RoPE pairs to HF's rotate-half layout. The tokenizer is not converted: pass\n"
         "--tokenizer tok512.bin (or the model's tokenizer.bin) when running the folder.");
    args_help_tables(CONVERT_TABLES);
}

static int convert(const char *model_arg, const char *dir, int dt, Err *e) {
    Model m;
    char model_path[1024]; /* a bare name (stories260K) is looked up as the default model is */
    if (app_model_path(model_arg, model_path, sizeof model_path, e) || model_load(&m, model_path, e)) return -1;
    if (m.c.arch != ARCH_LLAMA2C) {
        model_free(&m);
        return err_set(e, "%s: convert --to hf reads llama2.c checkpoints (this is a Hugging Face folder already)",
                       model_path);
    }
    HfSaveOpts o = {.dtype = dt, .bos_id = 1, .eos_id = 2}; /* llama2.c's BOS and EOS */
    int rc = model_save_hf(&m, dir, &o, e);
    model_free(&m);
    return rc;
}

int cmd_convert(int argc, char **argv) {
    Err e;
    ConvertOpts c = {.dtype = "f32"};
    void *const opts[] = {&c};
    int r = args_parse_argv(argc, argv, CONVERT_TABLES, opts, &e);
    if (r == ARGS_HELP) { convert_help(); return 0; }
    if (r != ARGS_DONE) return args_fail(&e);
    const char *to = c.to, *model = c.model, *out = c.out, *dtype = c.dtype;
    if (!to || strcmp(to, "hf") != 0) { err_usage(&e, "--to hf is the one conversion there is"); return args_fail(&e); }
    if (!model || !out) { err_usage(&e, "--model FILE.bin and --out DIR are required"); return args_fail(&e); }
    int dt = model_dtype_parse(dtype);
    if (dt < 0) { err_usage(&e, "--dtype must be f32, bf16 or f16, not '%s'", dtype); return args_fail(&e); }
    if (convert(model, out, dt, &e)) return args_fail(&e);
    char safe[4 * 1024 + 1]; /* the path as typed: escaped for the terminal */
    printf("wrote %s/config.json, generation_config.json, model.safetensors (%s)\n", textout_term(out, safe, sizeof safe),
           dtype);
    return 0;
}
