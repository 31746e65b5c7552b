/* quant_fixture.h — random ggml blocks for the quantised-weight tests.
 *
 * Random bytes are valid blocks of every type except where a block holds
 * an f16 scale: a random half may be a NaN, an infinity or huge. These
 * helpers write every scale as a finite value of a chosen size, so the
 * kernels' and loaders' tests read weights of a known range. */
#ifndef AHASCOPE_TESTS_QUANT_FIXTURE_H
#define AHASCOPE_TESTS_QUANT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/gguf.h"

/* A uniform value in [-1, 1) from the stream *s (a 32-bit LCG). */
float qfx_frand(unsigned *s);

/* malloc'd blocks of type t holding n values (n whole blocks of t): random
 * bytes, each f16 scale (d, and dmin where the type has one) uniform in
 * [-scale, scale). *bytes gets their size. */
uint8_t *qfx_random_blocks(GgmlType t, size_t n, float scale, unsigned *s, size_t *bytes);

#endif
