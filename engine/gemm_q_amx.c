/* gemm_q_amx.c — Q8_0 rows times int8 activations in AMX int8 tiles (TDPBSSD), 16 rows × 16 tokens a tile.
 *
 * The AVX2 tiles spend three instructions on every 32 products; one
 * TDPBSSD multiplies 16 rows by 16 tokens over 16 bytes (4 096 products),
 * so a prefill is bounded by the f32 steps that follow each block, not by
 * the products. Those steps are the portable path's (gemm_q_cell.h): a
 * block's two 16-byte halves are summed separately and exactly (one tile
 * product each, K = 16), and each half enters its own f32 accumulator by
 * sc = d_w · d_x, v = sc · sum, acc = acc + v, the halves added last, so
 * the bits equal every other path's. Weights are read where they lie (a
 * tile row is 16 bytes of a block, the row stride the matrix's); the
 * activations come in the tile order gemm_q_quantise writes for blocks of
 * 32 (GqX.qp: per 16 tokens, per block, per half, 4 rows of 64 bytes, a
 * token's 4 consecutive bytes side by side). */
#include <immintrin.h>
#include <string.h>

#include "gemm_half.h"
#include "gemm_q_cell.h"

#define TAMX __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c,fma,amx-tile,amx-int8")))

/* Tiles 0-1 and 6-7: the two halves' int32 sums (16 rows × 16 tokens) of
 * alternate blocks; 2-3: the weights' halves (16 rows × 16 bytes); 4-5:
 * the activations' halves (4 rows × 16 tokens × 4 bytes). */
static void amx_configure(void) {
    static const uint16_t colsb[8] = {64, 64, 16, 16, 64, 64, 64, 64};
    static const uint8_t rows[8] = {16, 16, 16, 16, 4, 4, 16, 16};
    gemm_half_tiles_configure(colsb, rows);
}

/* Block k's two tile products into tiles c0 and c1 (immediates). */
#define Q8_PRODUCT(c0, c1, k)                                                   \
    do {                                                                        \
        const uint8_t *b_ = wr + 34 * (size_t)(k);                              \
        const int8_t *q_ = qp + (size_t)(k) * 512;                              \
        _tile_zero(c0);                                                         \
        _tile_zero(c1);                                                         \
        _tile_loadd(2, b_ + 2, (long)rb);                                       \
        _tile_loadd(3, b_ + 18, (long)rb);                                      \
        _tile_loadd(4, q_, 64);                                                 \
        _tile_loadd(5, q_ + 256, 64);                                           \
        _tile_dpbssd(c0, 2, 4);                                                 \
        _tile_dpbssd(c1, 3, 5);                                                 \
    } while (0)

/* C[t0 + t][j0 + r] for the 16 rows from j0 and the 16 tokens of tile tt.
 * The products of block k + 1 (tiles 0-1 and 6-7 in turn) are issued
 * before block k's sums enter the f32 accumulators, so the tile unit and
 * the vector unit work side by side. */
TAMX static void q8_tile16(float *C, int ldc, const GqX *x, const uint8_t *w, size_t rb, int j0, int tt,
                           const float *dw) {
    int nb = x->d / 32, T = x->T, t0 = 16 * tt;
    const int8_t *qp = x->qp + (size_t)tt * nb * 512;
    const uint8_t *wr = w + (size_t)j0 * rb;
    __m512 lo[16], hi[16];
    int32_t s[2][2][16][16] __attribute__((aligned(64))); /* [block parity][half][row][token] */
    for (int r = 0; r < 16; r++) lo[r] = hi[r] = _mm512_setzero_ps();
    Q8_PRODUCT(0, 1, 0);
    _tile_stored(0, s[0][0], 64);
    _tile_stored(1, s[0][1], 64);
    for (int k = 0; k < nb; k++) {
        int odd = k & 1, more = k + 1 < nb;
        if (more && !odd) Q8_PRODUCT(6, 7, k + 1);
        if (more && odd) Q8_PRODUCT(0, 1, k + 1);
        __m512 dx = _mm512_loadu_ps(x->dx + (size_t)k * T + t0);
        for (int r = 0; r < 16; r++) {
            __m512 sc = _mm512_mul_ps(_mm512_set1_ps(dw[16 * k + r]), dx);
            __m512 v0 = _mm512_mul_ps(sc, _mm512_cvtepi32_ps(_mm512_load_si512(s[odd][0][r])));
            __m512 v1 = _mm512_mul_ps(sc, _mm512_cvtepi32_ps(_mm512_load_si512(s[odd][1][r])));
            lo[r] = _mm512_add_ps(lo[r], v0);
            hi[r] = _mm512_add_ps(hi[r], v1);
        }
        if (more && !odd) {
            _tile_stored(6, s[1][0], 64);
            _tile_stored(7, s[1][1], 64);
        }
        if (more && odd) {
            _tile_stored(0, s[0][0], 64);
            _tile_stored(1, s[0][1], 64);
        }
    }
    float o[16] __attribute__((aligned(64)));
    for (int r = 0; r < 16; r++) {
        _mm512_store_ps(o, _mm512_add_ps(lo[r], hi[r]));
        for (int t = 0; t < 16; t++) C[(size_t)(t0 + t) * ldc + j0 + r] = o[t];
    }
}

TAMX void gemm_q_amx_q8(float *C, int ldc, const GqX *x, const uint8_t *w, int n16) {
    int nb = x->d / 32;
    size_t rb = (size_t)nb * 34;
    float dw[GQ_PACK_MAX_COLS / 32 * 16]; /* a panel's block scales, [block][row], read by every token tile
                                             (128 KiB: gemm_q sends wider rows to AVX2) */
    amx_configure();
    for (int j0 = 0; j0 < n16; j0 += 16) {
        for (int k = 0; k < nb; k++)
            for (int r = 0; r < 16; r++) {
                const uint8_t *h = w + (size_t)(j0 + r) * rb + 34 * (size_t)k;
                dw[16 * k + r] = _cvtsh_ss((unsigned short)(h[0] | h[1] << 8));
            }
        for (int tt = 0; tt < x->T / 16; tt++) q8_tile16(C, ldc, x, w, rb, j0, tt, dw);
    }
    _tile_release();
}

void gemm_q_amx_order(int8_t *qp, const int8_t *q, int T, int d, int t) {
    if (t >= T / 16 * 16) return;
    int nb = d / 32, tl = t % 16;
    int8_t *base = qp + (size_t)(t / 16) * nb * 512;
    for (int k = 0; k < nb; k++)
        for (int h = 0; h < 2; h++)
            for (int kk = 0; kk < 4; kk++)
                memcpy(base + (size_t)k * 512 + 256 * h + 64 * kk + 4 * tl, q + 32 * k + 16 * h + 4 * kk, 4);
}
