/* gemm_q_cell.h — what gemm_q.c shares with gemm_q_pack.c, its packed-row
 * sibling: the portable reference arithmetic, so a packed matrix's
 * products are the stored blocks' products by construction, and the two
 * small reorderings the packing and the activations' permuted copy share;
 * and the AMX tiles of gemm_q_amx.c, and the one unpacking of a K
 * block's sub-blocks that the AVX2 tiles and the 16 × 16 tiles' panels share.
 * Not for callers outside those files. */
#ifndef AHASCOPE_GEMM_Q_CELL_H
#define AHASCOPE_GEMM_Q_CELL_H

#include <immintrin.h>
#include <stdint.h>

#include "gemm_q.h"
#include "gguf.h"

/* The portable product of one stored row of ty with token t of x. */
float gemm_q_cell(int ty, const uint8_t *row, const GqX *x, int t);

/* acc after K block k (stored bytes b) of a row meets token t: the one
 * step gemm_q_cell takes per block, in its order. */
float gemm_q_k_block(int ty, const uint8_t *b, const GqX *x, int t, int k, float acc);

/* One block of 256 rounded activations q in the order packed Q4_K rows
 * read them: qp[32i + 4s + l] = q[32s + 4i + l] (i: the product, s: the
 * sub-block, l < 4), so one 32-byte load meets four weights of each of
 * the eight sub-blocks. */
void gemm_q_permute_block(int8_t *qp, const int8_t *q);

/* The same for packed Q6_K rows, whose sub-blocks are 16 weights:
 * qp[32i + 2s + l] = q[16s + 2i + l] (s < 16, l < 2). */
void gemm_q_permute_block6(int8_t *qp, const int8_t *q);

/* AMX int8 (gemm_q_amx.c), or its tiles' products in AVX-512 VNNI (vnni
 * 1): 1 when its tiles take rows of ty that are d wide (Q4_K, Q5_K and
 * Q6_K up to GQ_AMX_K_COLS, Q8_0 up to GQ_PACK_MAX_COLS in AMX and GQ_AMX_K_COLS
 * in VNNI, whose panel also holds the weights' sums). */
#define GQ_AMX_K_COLS 8192
int gemm_q_amx_takes(int ty, int d, int vnni);

/* Rows [0, n16) (n16 a multiple of 16) of weights w of ty, which
 * gemm_q_amx_takes, against tokens [0, T/16·16) of x, whose qa holds the
 * tile order gemm_q_amx_order writes, in AMX tiles or (vnni 1) AVX-512
 * VNNI; the caller has checked the CPU. */
void gemm_q_amx(float *C, int ldc, const GqX *x, int ty, const uint8_t *w, int n16, int vnni);

/* Token t's rounded row q (d values, blocks of 32) into the tile order of
 * qp for T tokens; the tokens past the last whole 16 are not stored. */
void gemm_q_amx_order(int8_t *qp, const int8_t *q, int T, int d, int t);

/* Sub-block j (32 weights) of a Q4_K, Q5_K or Q6_K block at b, as
 * unsigned bytes (Q5_K's fifth bit and Q6_K's top two added). Inlined
 * into the AVX2 tiles and into gemm_q_amx.c's AVX-512 panels alike. */
__attribute__((target("avx2"), always_inline)) static inline __m256i gemm_q_k_sub(int ty, const uint8_t *b, int j) {
    const __m256i m4 = _mm256_set1_epi8(15);
    if (ty == GGML_Q6_K) {
        int h = j / 4, q = j % 4;
        __m256i l = _mm256_loadu_si256((const __m256i *)(b + 64 * h + 32 * (q & 1)));
        __m256i nib = _mm256_and_si256(q < 2 ? l : _mm256_srli_epi16(l, 4), m4);
        __m256i qh = _mm256_loadu_si256((const __m256i *)(b + 128 + 32 * h));
        __m256i hb = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * q)), _mm256_set1_epi8(3));
        return _mm256_or_si256(nib, _mm256_slli_epi16(hb, 4));
    }
    const uint8_t *qs = b + (ty == GGML_Q5_K ? 48 : 16);
    __m256i v = _mm256_loadu_si256((const __m256i *)(qs + 32 * (j / 2)));
    v = _mm256_and_si256((j & 1) ? _mm256_srli_epi16(v, 4) : v, m4);
    if (ty != GGML_Q5_K) return v;
    __m256i qh = _mm256_loadu_si256((const __m256i *)(b + 16));
    __m256i hb = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(j)), _mm256_set1_epi8(1));
    return _mm256_or_si256(v, _mm256_slli_epi16(hb, 4));
}

#endif
