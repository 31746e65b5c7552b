/* half.h — bf16 and IEEE binary16 (f16) to and from f32, in portable C.
 *
 * Plain integer bit manipulation, no F16C or AVX-512 instructions, so every
 * machine gets the same bits: the vector kernels (matvec.c, gemm_half.c,
 * attn_kernels.c) are checked against these, and the safetensors files,
 * half-precision models and KV caches are rounded by them. Widening is
 * exact; narrowing rounds to nearest even and keeps a NaN a NaN. Nothing
 * here keeps state, and nothing here knows of any file format.
 */
#ifndef AHASCOPE_HALF_H
#define AHASCOPE_HALF_H

#include <stddef.h>
#include <stdint.h>

/* bf16 bits to float (exact). */
float half_bf16_to_f32(uint16_t h);

/* float to bf16 bits, round to nearest even; NaN stays NaN (quieted). */
uint16_t half_f32_to_bf16(float x);

/* IEEE binary16 bits to float (exact, including subnormals, inf, NaN). */
float half_f16_to_f32(uint16_t h);

/* float to IEEE binary16 bits, round to nearest even; overflow gives inf,
 * tiny values give subnormals or zero, NaN stays NaN (quieted). */
uint16_t half_f32_to_f16(float x);

/* n floats to bf16 (bf16 = 1) or f16 bits, each rounded as above. */
void half_from_f32_n(uint16_t *out, const float *in, size_t n, int bf16);

#endif
