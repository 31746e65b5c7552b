/* sniff.h — what a file is, from its first bytes.
 *
 * A loader that is handed the wrong file refuses it by saying what it looks
 * like ("README.md: not a llama2.c checkpoint or Hugging Face folder (a text
 * file)"), and the command line tells a tokenizer.bin from a tokenizer.json
 * the same way. The recognisers sit here, above the file layer (files.h,
 * which only names the kinds) and beneath the format readers that report
 * through them: a checkpoint is recognised by its header (model_sniff, in
 * model_config.c), a llama2.c tokenizer by its first records (here), so no
 * reader is called. Nothing here keeps state.
 */
#ifndef AHASCOPE_SNIFF_H
#define AHASCOPE_SNIFF_H

#include <stddef.h>
#include <stdint.h>

#include "files.h"

/* The longest token a llama2.c tokenizer.bin may declare: its loader and
 * its recogniser refuse the same headers. */
#define SNIFF_TOK_MAX_LEN (1 << 16)

/* The kind of what is at path, from stat and at most its first 4096 bytes;
 * non-regular files are classified without being opened. */
FileKind sniff_kind(const char *path);

/* The kind of a regular file from its first n bytes and its full size. */
FileKind sniff_kind_bytes(const unsigned char *b, size_t n, uint64_t size);

/* 1 if the first n bytes of a file of `size` bytes look like a llama2.c
 * tokenizer.bin: a sane max_token_length, then well-formed token records. */
int sniff_tokenizer_bin(const unsigned char *b, size_t n, uint64_t size);

#endif
