/* train_scratch.h — what training from random weights needs before its
 * first step: a llama2.c tokenizer.bin of a small vocabulary, and a model
 * initialised for training (ahascope train --from-scratch).
 *
 * The vocabulary keeps the llama2.c layout every loader here expects: ids
 * 0–2 <unk>, <s>, </s>, ids 3–258 the byte-fallback pieces <0x00>…<0xFF>
 * (so any text encodes), then every printable ASCII character as a piece
 * of its own, then the given words with every prefix of two characters or
 * more — llama2.c's encoder only merges two pieces into one that exists,
 * so a word is reachable only through its prefixes. Longer pieces score
 * higher and so merge first. Digits stay single pieces: a number's tokens
 * are its digits, which is what retrieval tasks want.
 */
#ifndef AHASCOPE_TRAIN_SCRATCH_H
#define AHASCOPE_TRAIN_SCRATCH_H

#include <stdint.h>

#include "err.h"
#include "model.h"

/* The words of the vocabulary when no --vocab-file is given: filler prose
 * and the nouns of key/value and passkey prompts, each with its leading
 * space (SentencePiece's convention, which the encoder's dummy prefix
 * follows). NULL-terminated. */
extern const char *const train_vocab_default_words[];

/* Pieces the vocabulary of these n words holds (before any padding). */
int train_vocab_count(const char *const *words, int n);

/* Write the tokenizer.bin of n words to path (atomically), padded with
 * unreachable "<pad_K>" pieces to vocab_size if that is larger (0: no
 * padding). A file already at path is left alone when it holds exactly
 * these bytes (a rerun) and refused when it holds anything else, so no
 * other model's tokenizer is ever replaced. A word longer than 64 bytes,
 * empty, or holding a control byte is refused by its index. *n_pieces
 * receives the size. */
int train_vocab_write(const char *path, const char *const *words, int n, int vocab_size, int *n_pieces, Err *e);

/* Random weights to train from, deterministic in seed: model_random's
 * uniform matrices (±1/√fan-in), the embedding scaled to ±1/√dim so the
 * first logits are small, and the output projections (W_O, W_2) scaled by
 * 1/√(2·layers) so the residual stream does not grow with depth. */
int train_model_init(Model *m, const Config *c, uint64_t seed, Err *e);

#endif
