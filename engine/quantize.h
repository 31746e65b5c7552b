/* quantize.h — f32 rows into ggml's Q8_0 and Q4_0 blocks, as ggml's reference quantizers make them.
 *
 * Both formats cut a row into blocks of 32 values, each led by an IEEE f16
 * scale d (little-endian):
 *   Q8_0 (34 bytes): d = max|x| / 127, then 32 int8 q = round(x / d)
 *        (halves away from zero); a value is q * d.
 *   Q4_0 (18 bytes): d = m / -8, m being the value of largest magnitude with
 *        its sign (the first such in the block on a tie), then 16 bytes of
 *        4-bit q = min(15, trunc(x / d + 8.5)); byte j holds value j in its
 *        low nibble and value j + 16 in its high one; a value is (q - 8) * d.
 * An all-zero block has d = 0 (Q8_0) or -0 (Q4_0: 0 / -8, f16 0x8000) and
 * every q at zero (Q8_0) or 8 (Q4_0). The
 * arithmetic is f32 throughout and the reciprocal of d is taken once, as
 * ggml does, so the bytes equal those of ggml's quantize_row_*_ref. The
 * scale is rounded to f16 by engine/half.h. Nothing here keeps state or
 * knows of any file.
 */
#ifndef AHASCOPE_QUANTIZE_H
#define AHASCOPE_QUANTIZE_H

#include <stddef.h>
#include <stdint.h>

#define QUANTIZE_BLOCK 32     /* values per block of either type */
#define QUANTIZE_Q8_0_BYTES 34
#define QUANTIZE_Q4_0_BYTES 18

/* Quantize n values (n a multiple of QUANTIZE_BLOCK) into n / 32 Q8_0
 * blocks at out. Returns 0, or -1 (nothing written) when n is not. */
int quantize_q8_0(const float *x, uint8_t *out, int64_t n);

/* As quantize_q8_0 for Q4_0 blocks. */
int quantize_q4_0(const float *x, uint8_t *out, int64_t n);

#endif
