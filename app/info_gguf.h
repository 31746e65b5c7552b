/* info_gguf.h — `ahascope info` for a GGUF file: what it holds, from its
 * header alone.
 *
 * A GGUF file's metadata and tensor infos say what it is, so no weight is
 * widened (engine/model_gguf.c does that for the commands that run it): format version, architecture, shape, tensor
 * types and their bytes, file type, tokenizer. Describing it opens the file
 * through the validating reader (engine/gguf.h), so a hostile file is refused
 * in one line as any command would refuse it, and no weight is read.
 */
#ifndef AHASCOPE_INFO_GGUF_H
#define AHASCOPE_INFO_GGUF_H

#include "engine/err.h"

/* 1 if path is a regular file whose first bytes are the GGUF magic. */
int info_is_gguf(const char *path);

/* Print path's description on stdout, as text or (json) one JSON object.
 * Returns 0, or -1 with e holding the reader's one line. */
int info_gguf(const char *path, int json, Err *e);

#endif
