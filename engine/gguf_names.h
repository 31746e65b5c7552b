/* gguf_names.h — names of a GGUF file's type mix, in one place for `info` and the runs row.
 *
 * general.file_type holds llama.cpp's llama_ftype: what most tensors are
 * (norms and often the embedding or output keep other types). Its names
 * are ggml's without the LLAMA_FTYPE_ prefix ("ALL_F32", "MOSTLY_Q4_K_M");
 * the short mix drops ALL_/MOSTLY_ ("F32", "Q4_K_M"). Bit 1024 (GUESSED)
 * marks a type llama.cpp inferred rather than read. A file without the key
 * is named by the type holding most bytes among its 2-D tensors.
 */
#ifndef AHASCOPE_GGUF_NAMES_H
#define AHASCOPE_GGUF_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "engine/gguf.h"

#define GGUF_FTYPE_GUESSED 1024

/* ggml's name of file type ft ("MOSTLY_Q4_K_M"; the GUESSED bit ignored),
 * or NULL when ft is no llama_ftype. */
const char *gguf_file_type_name(int64_t ft);

/* f's type mix, short: general.file_type's name without ALL_/MOSTLY_
 * ("Q4_K_M"), else the 2-D tensors' type of most bytes ("Q6_K"), else "?".
 * Writes at most cap bytes (NUL included) into out and returns out. */
char *gguf_mix_name(const GgufFile *f, char *out, size_t cap);

#endif
