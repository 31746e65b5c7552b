/* gguf_write_hftok.c — a Hugging Face tokenizer.json as GGUF tokenizer metadata (byte-level BPE as "gpt2"). */
#include "engine/gguf_write.h"

int gguf_write_hf_vocab(GgufWriter *w, const char *path, int vocab_size, Err *e) {
    (void)w, (void)vocab_size;
    return err_set(e, "%s: a tokenizer.json cannot be written as GGUF yet", path);
}
