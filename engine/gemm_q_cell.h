/* gemm_q_cell.h — what gemm_q.c shares with gemm_q_pack.c, its packed-row
 * sibling: the portable reference arithmetic, so a packed matrix's
 * products are the stored blocks' products by construction, and the two
 * small reorderings the packing and the activations' permuted copy share;
 * and the AMX tiles of gemm_q_amx.c.
 * Not for callers outside those files. */
#ifndef AHASCOPE_GEMM_Q_CELL_H
#define AHASCOPE_GEMM_Q_CELL_H

#include <stdint.h>

#include "gemm_q.h"

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

#endif
