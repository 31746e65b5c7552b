/* convert_run.h — `ahascope convert`: a model written in another format.
 *
 * cmd_convert.c parses the flags into ConvertOpts and calls convert_run,
 * which does the rest: --to hf writes a llama2.c checkpoint as a Hugging
 * Face folder (engine model_save_hf); --to gguf writes a llama2.c
 * checkpoint, a Hugging Face llama folder or a GGUF llama as one GGUF file
 * (engine gguf_write_model) with its vocabulary: the tokenizer.bin beside a
 * checkpoint (or --tokenizer), a folder's tokenizer.json, a GGUF file's own.
 * --out must not exist yet for gguf (a file is never overwritten by a
 * conversion), and must be a path a regular file can be created at.
 */
#ifndef AHASCOPE_CONVERT_RUN_H
#define AHASCOPE_CONVERT_RUN_H

#include "engine/err.h"

typedef struct {
    const char *to, *model, *out;
    const char *dtype;     /* --to hf: f32, bf16, f16 */
    const char *type;      /* --to gguf: f32, f16, bf16, q8_0, q4_0 */
    const char *tokenizer; /* --to gguf: a tokenizer.bin or tokenizer.json, else the source's */
} ConvertOpts;

/* Run the conversion o asks for and print one line naming what was written.
 * Returns 0; -1 with e holding one line (a usage error marked by
 * err_usage, so the command exits 2; anything else exits 1). */
int convert_run(const ConvertOpts *o, Err *e);

#endif
