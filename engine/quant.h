/* quant.h — ggml's quantised block formats: sizes, unpacking, rows widened to f32.
 *
 * A quantised row is a run of blocks, each holding 32 (Q4_0 … Q8_0) or
 * 256 (the K types) weights and the scales that place them. Every format
 * here unpacks to the same shape: small integers q[j] and, per group of 16
 * weights, a scale and an offset, weight j = sc[j/16]·q[j] − mn[j/16].
 * That one expression reproduces ggml's dequantize_row_* bit for bit: each
 * product sc·q is exact in f32 (an f16 scale times a 6-bit sub-scale times
 * an integer of at most 8 bits needs under 24 bits of significand), so
 * only the one subtraction rounds, the same one ggml's formula rounds; and
 * a kernel may fuse it (FMA) without changing a bit. Types are numbered as
 * ggml numbers them (GgmlType). Nothing here keeps state or reads files:
 * callers bound n and hand in whole blocks.
 */
#ifndef AHASCOPE_QUANT_H
#define AHASCOPE_QUANT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/gguf.h"

#define QUANT_MAX_BLOCK 256 /* weights in the largest block */
#define QUANT_GROUP 16      /* weights sharing one sc/mn pair after quant_unpack */

/* 1 if t is a block type quant_unpack reads (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
 * Q2_K … Q6_K); F32, F16 and BF16 are not blocks (quant_dequant reads them). */
int quant_is_block(GgmlType t);

/* Weights and bytes per block of t (F32/F16/BF16: 1 weight of 4 or 2
 * bytes); 0 and -1 for a type quant_dequant cannot read. */
int quant_block(GgmlType t, int *elems, int *bytes);

/* Bytes of a row of n weights of type t (n a multiple of the block); 0 if
 * t is unreadable or n is not a whole number of blocks. */
size_t quant_row_bytes(GgmlType t, int64_t n);

/* One block of block type t at b into q[0..elems) and sc/mn[0..elems/16);
 * returns elems (32 or 256), or 0 if t is not a block type. */
int quant_unpack(GgmlType t, const uint8_t *b, int8_t *q, float *sc, float *mn);

/* Widen n weights of type t at src into dst, equal bit for bit to ggml's
 * to_float. Returns 0; -1 for a type it cannot read; -2 when n is negative
 * or not a whole number of t's blocks (nothing is written then). */
int quant_dequant(GgmlType t, const void *src, float *dst, int64_t n);

/* A Q4_K/Q5_K block's eight 6-bit sub-scales (o[0..8)) and mins (o[8..16))
 * from its 12 packed scale bytes at p, worked on as three little-endian
 * words: the low six bits of bytes 0-7 are sub-blocks 0-3, the upper four
 * take a nibble of bytes 8-11 and the top two bits of bytes 0-7. Inline
 * here so every kernel file unpacks the same way without calling another
 * (quant_unpack's k4_scale_min spells the same layout per sub-block). */
static inline void quant_k_scales6(const uint8_t *p, uint8_t *o) {
    uint32_t lo, mid, hi;
    memcpy(&lo, p, 4), memcpy(&mid, p + 4, 4), memcpy(&hi, p + 8, 4);
    const uint32_t six = 0x3f3f3f3fu, nib = 0x0f0f0f0fu, two = 0x03030303u;
    uint32_t w[4] = {lo & six, (hi & nib) | ((lo >> 6) & two) << 4, mid & six, ((hi >> 4) & nib) | ((mid >> 6) & two) << 4};
    memcpy(o, w, 16);
}

#endif
