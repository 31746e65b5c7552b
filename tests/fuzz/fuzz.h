/* fuzz.h — what the libFuzzer harnesses in tests/fuzz/ share.
 *
 * Loaders that only take a path are fuzzed through a file: each harness
 * process writes its inputs into one private temporary directory (made on
 * first use in $TMPDIR, else /dev/shm, else /tmp; removed at exit), so
 * parallel jobs never see each other's bytes. The fixed llama2.c vocabulary the encoder harness and the seed
 * generator both use is built here, so seeds and harness cannot drift. No
 * state is kept beyond the directory's name.
 */
#ifndef AHASCOPE_FUZZ_H
#define AHASCOPE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The harness's private directory + "/" + name, valid until the next call.
 * Aborts when no temporary directory can be made: no harness runs without. */
const char *fuzz_path(const char *name);

/* Write n bytes to fuzz_path(name), replacing what was there; returns the
 * path. Aborts on a write error (a full disk is not a finding). */
const char *fuzz_write(const char *name, const uint8_t *data, size_t n);

/* A small llama2.c tokenizer.bin (three specials, the 256 byte pieces and a
 * few merges) in a malloc'd buffer; *n receives its length. */
uint8_t *fuzz_tokenizer_bin(size_t *n);

#endif
