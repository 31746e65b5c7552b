/* gemm_q_amx.c — Q8_0 and K-quant rows times int8 activations in 16 × 16 tiles: AMX int8, or AVX-512 VNNI.
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
 * activations come in the tile order gemm_q_quantise writes (GqX.qa: per
 * 16 tokens, per 16 bytes, 4 rows of 64 bytes, a token's 4 consecutive
 * bytes side by side).
 *
 * Q4_K rows take one TDPBUSD (unsigned weights, signed activations) a
 * sub-block of 32, whose int32 sums are scaled by the sub-block's 6-bit
 * scale and summed in int32, exactly, as the portable path's isum; the
 * mins' term is the same sum over the activations' per-32 sums (GqX.s32t),
 * and the block then takes k_step's four f32 operations. Their nibbles are
 * unpacked to bytes once for a panel of 16 rows (16 bytes a weight of
 * stack, hence GQ_AMX_K_COLS) and read by every token tile; Q5_K's the
 * same with their fifth bit. Q6_K rows take one a group of 16, signed
 * scales, less 32 × Σ scale · s16 (GqX.s16t) for the weights' offset.
 *
 * Without AMX (vnni 1) the same tiles' sums come from VPDPBUSD, a token a
 * lane of the 16: each row's 4-byte words broadcast against a 64-byte row
 * of the tile order, which is four bytes of each of the 16 tokens. The
 * sums are the tiles' integers and the steps after them the same code, so
 * the bits are too. */
#include <immintrin.h>
#include <string.h>

#include "gemm_half.h"
#include "gemm_q_cell.h"
#include "gguf.h"
#include "quant.h"

/* One target for both products: a VNNI CPU without AMX runs these
 * functions, and no AMX instruction is reached on its path (vnni 1). */
#define TAMX __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,f16c,fma,amx-tile,amx-int8")))

/* Tiles 0-1 and 6-7: the two halves' int32 sums (16 rows × 16 tokens) of
 * alternate blocks; 2-3: the weights' halves (16 rows × 16 bytes); 4-5:
 * the activations' halves (4 rows × 16 tokens × 4 bytes). */
static void amx_configure(void) {
    static const uint16_t colsb[8] = {64, 64, 16, 16, 64, 64, 64, 64};
    static const uint8_t rows[8] = {16, 16, 16, 16, 4, 4, 16, 16};
    gemm_half_tiles_configure(colsb, rows);
}

/* A tile's cells, acc[r] over its 16 tokens, into C's token-major rows. */
TAMX static void tile_store(float *C, int ldc, const __m512 *acc, int j0, int t0) {
    float o[16] __attribute__((aligned(64)));
    for (int r = 0; r < 16; r++) {
        _mm512_store_ps(o, acc[r]);
        for (int t = 0; t < 16; t++) C[(size_t)(t0 + t) * ldc + j0 + r] = o[t];
    }
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
    const int8_t *qp = x->qa + (size_t)tt * nb * 512;
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
    for (int r = 0; r < 16; r++) lo[r] = _mm512_add_ps(lo[r], hi[r]);
    tile_store(C, ldc, lo, j0, t0);
}

/* A 32-bit word of a block, as VPDPBUSD's broadcast operand reads it. */
TAMX static inline __m512i word4(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

/* The Q8_0 tile in AVX-512 VNNI, 8 rows at a time so their 16
 * accumulators stay in registers over the blocks. VPDPBUSD takes one side
 * unsigned: the activations go in as q + 128 (q ^ 0x80) and 128 · Σw
 * (ws, a panel's, per [block][half][row]) comes off each half's sum, so
 * the sums are TDPBSSD's, exact in int32, and the f32 steps after them
 * q8_tile16's: the same bits. */
TAMX static void q8_tile16_vnni(float *C, int ldc, const GqX *x, const uint8_t *w, size_t rb, int j0, int tt,
                                const float *dw, const int32_t *ws) {
    int nb = x->d / 32, T = x->T, t0 = 16 * tt;
    const int8_t *qp = x->qa + (size_t)tt * nb * 512;
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m512 out[16];
    for (int r0 = 0; r0 < 16; r0 += 8) {
        const uint8_t *wr = w + (size_t)(j0 + r0) * rb;
        __m512 lo[8], hi[8];
        for (int r = 0; r < 8; r++) lo[r] = hi[r] = _mm512_setzero_ps();
        for (int k = 0; k < nb; k++) {
            __m512i u[8];
            for (int i = 0; i < 8; i++) u[i] = _mm512_xor_si512(_mm512_loadu_si512(qp + (size_t)k * 512 + 64 * i), flip);
            __m512 dx = _mm512_loadu_ps(x->dx + (size_t)k * T + t0);
            for (int r = 0; r < 8; r++) {
                const uint8_t *b = wr + r * rb + 34 * (size_t)k + 2;
                __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
                for (int i = 0; i < 4; i++) {
                    a0 = _mm512_dpbusd_epi32(a0, u[i], word4(b + 4 * i));
                    a1 = _mm512_dpbusd_epi32(a1, u[4 + i], word4(b + 16 + 4 * i));
                }
                a0 = _mm512_sub_epi32(a0, _mm512_set1_epi32(ws[(2 * k) * 16 + r0 + r]));
                a1 = _mm512_sub_epi32(a1, _mm512_set1_epi32(ws[(2 * k + 1) * 16 + r0 + r]));
                __m512 sc = _mm512_mul_ps(_mm512_set1_ps(dw[16 * k + r0 + r]), dx);
                lo[r] = _mm512_add_ps(lo[r], _mm512_mul_ps(sc, _mm512_cvtepi32_ps(a0)));
                hi[r] = _mm512_add_ps(hi[r], _mm512_mul_ps(sc, _mm512_cvtepi32_ps(a1)));
            }
        }
        for (int r = 0; r < 8; r++) out[r0 + r] = _mm512_add_ps(lo[r], hi[r]);
    }
    tile_store(C, ldc, out, j0, t0);
}

/* The VNNI path's Q8_0 panels: the block scales as amx_q8's, and 128 ·
 * each half's weight sum (the activations' offset times the weights). */
/* A Q8_0 panel of the 16 rows from j0: each block's scale widened once,
 * [block][row], for every token tile; with ws, also 128 · each half's
 * weight sum, [block][half][row], which the VNNI tiles take off. */
TAMX static void q8_panel(float *dw, int32_t *ws, const uint8_t *w, size_t rb, int j0, int nb) {
    for (int k = 0; k < nb; k++)
        for (int r = 0; r < 16; r++) {
            const uint8_t *h = w + (size_t)(j0 + r) * rb + 34 * (size_t)k;
            dw[16 * k + r] = _cvtsh_ss((unsigned short)(h[0] | h[1] << 8));
            for (int half = 0; ws && half < 2; half++) {
                int sum = 0;
                for (int l = 0; l < 16; l++) sum += (int8_t)h[2 + 16 * half + l];
                ws[(2 * k + half) * 16 + r] = 128 * sum;
            }
        }
}

TAMX static void vnni_q8(float *C, int ldc, const GqX *x, const uint8_t *w, int n16) {
    int nb = x->d / 32;
    size_t rb = (size_t)nb * 34;
    float dw[GQ_AMX_K_COLS / 32 * 16];
    int32_t ws[GQ_AMX_K_COLS / 32 * 2 * 16]; /* 48 KiB with dw at GQ_AMX_K_COLS */
    for (int j0 = 0; j0 < n16; j0 += 16) {
        q8_panel(dw, ws, w, rb, j0, nb);
        for (int tt = 0; tt < x->T / 16; tt++) q8_tile16_vnni(C, ldc, x, w, rb, j0, tt, dw, ws);
    }
}

TAMX static void amx_q8(float *C, int ldc, const GqX *x, const uint8_t *w, int n16) {
    int nb = x->d / 32;
    size_t rb = (size_t)nb * 34;
    float dw[GQ_PACK_MAX_COLS / 32 * 16]; /* a panel's block scales, [block][row], read by every token tile
                                             (128 KiB: gemm_q sends wider rows to AVX2) */
    amx_configure();
    for (int j0 = 0; j0 < n16; j0 += 16) {
        q8_panel(dw, NULL, w, rb, j0, nb);
        for (int tt = 0; tt < x->T / 16; tt++) q8_tile16(C, ldc, x, w, rb, j0, tt, dw);
    }
    _tile_release();
}

/* ---- Q4_K ---- */

/* Tile 0: a sub-block's int32 sums (16 rows × 16 tokens); 1: its weights
 * (16 rows × kb bytes: 32 for Q4_K, 16 for Q6_K); 2: its activations
 * (kb/4 rows × 16 tokens × 4 bytes). */
static void amx_configure_k(int kb) {
    const uint16_t colsb[8] = {64, (uint16_t)kb, 64};
    const uint8_t rows[8] = {16, 16, (uint8_t)(kb / 4)};
    gemm_half_tiles_configure(colsb, rows);
}

/* n sub-blocks of kb bytes (a block's), one TDPBUSD each: s[i][row][token]
 * from u's [i][16 rows][kb] bytes and the activations' tile order at qa. */
TAMX static void k_products(int32_t (*s)[16][16], const uint8_t *u, const int8_t *qa, int n, int kb, int vnni) {
    if (vnni) { /* TDPBUSD's sums in VPDPBUSD: a token a lane, the weights' words broadcast */
        for (int i = 0; i < n; i++) {
            __m512i q[8];
            for (int kk = 0; kk < kb / 4; kk++) q[kk] = _mm512_loadu_si512(qa + (size_t)i * (kb / 16) * 256 + 64 * kk);
            for (int r = 0; r < 16; r++) {
                const uint8_t *ur = u + ((size_t)i * 16 + r) * kb;
                __m512i acc = _mm512_setzero_si512();
                for (int kk = 0; kk < kb / 4; kk++) acc = _mm512_dpbusd_epi32(acc, word4(ur + 4 * kk), q[kk]);
                _mm512_store_si512(s[i][r], acc);
            }
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        _tile_zero(0);
        _tile_loadd(1, u + (size_t)i * 16 * kb, kb);
        _tile_loadd(2, qa + (size_t)i * (kb / 16) * 256, 64);
        _tile_dpbusd(0, 1, 2);
        _tile_stored(0, s[i], 64);
    }
}

/* 16 Q4_K rows unpacked: u [block][sub-block][row][32] bytes, and per
 * [block][sub-block][row] the scale and the min, per [block][row] d and dmin. */
typedef struct {
    uint8_t u[GQ_AMX_K_COLS * 16];
    uint8_t sc[GQ_AMX_K_COLS / 32 * 16], mn[GQ_AMX_K_COLS / 32 * 16];
    float d[GQ_AMX_K_COLS / 256 * 16], dmin[GQ_AMX_K_COLS / 256 * 16];
} Q4Panel;

/* Q5_K's blocks (five 1) are Q4_K's with a fifth bit a weight. */
TAMX static void q4k_panel(Q4Panel *p, const uint8_t *w, size_t rb, int j0, int nb, int five) {
    int ty = five ? GGML_Q5_K : GGML_Q4_K;
    for (int r = 0; r < 16; r++)
        for (int k = 0; k < nb; k++) {
            const uint8_t *b = w + (size_t)(j0 + r) * rb + (five ? 176 : 144) * (size_t)k;
            uint8_t sm[16];
            quant_k_scales6(b + 4, sm);
            p->d[16 * k + r] = _cvtsh_ss((unsigned short)(b[0] | b[1] << 8));
            p->dmin[16 * k + r] = _cvtsh_ss((unsigned short)(b[2] | b[3] << 8));
            for (int j = 0; j < 8; j++) {
                _mm256_storeu_si256((__m256i *)(p->u + ((size_t)(8 * k + j) * 16 + r) * 32), gemm_q_k_sub(ty, b, j));
                p->sc[(8 * k + j) * 16 + r] = sm[j], p->mn[(8 * k + j) * 16 + r] = sm[8 + j];
            }
        }
}

TAMX static void q4k_tile16(float *C, int ldc, const GqX *x, const Q4Panel *p, int j0, int tt, int vnni) {
    int nb = x->d / 256, T = x->T, t0 = 16 * tt;
    const int8_t *qa = x->qa + (size_t)tt * 16 * x->d;
    __m512 acc[16];
    int32_t s[8][16][16] __attribute__((aligned(64)));
    for (int r = 0; r < 16; r++) acc[r] = _mm512_setzero_ps();
    for (int k = 0; k < nb; k++) {
        k_products(s, p->u + (size_t)k * 4096, qa + (size_t)k * 4096, 8, 32, vnni);
        __m512i m[8];
        for (int j = 0; j < 8; j++)
            m[j] = _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(x->s32t + (size_t)(8 * k + j) * T + t0)));
        __m512 dx = _mm512_loadu_ps(x->dx + (size_t)k * T + t0);
        for (int r = 0; r < 16; r++) {
            __m512i is = _mm512_setzero_si512(), im = _mm512_setzero_si512();
            for (int j = 0; j < 8; j++) {
                const __m512i sj = _mm512_load_si512(s[j][r]);
                is = _mm512_add_epi32(is, _mm512_mullo_epi32(sj, _mm512_set1_epi32(p->sc[(8 * k + j) * 16 + r])));
                im = _mm512_add_epi32(im, _mm512_mullo_epi32(m[j], _mm512_set1_epi32(p->mn[(8 * k + j) * 16 + r])));
            }
            /* k_step: acc + (d·dx)·isum − (dmin·dx)·imin, each operation rounded */
            __m512 a = _mm512_mul_ps(_mm512_set1_ps(p->d[16 * k + r]), dx);
            acc[r] = _mm512_add_ps(acc[r], _mm512_mul_ps(a, _mm512_cvtepi32_ps(is)));
            __m512 c = _mm512_mul_ps(_mm512_set1_ps(p->dmin[16 * k + r]), dx);
            acc[r] = _mm512_sub_ps(acc[r], _mm512_mul_ps(c, _mm512_cvtepi32_ps(im)));
        }
    }
    tile_store(C, ldc, acc, j0, t0);
}

TAMX static void amx_q4k(float *C, int ldc, const GqX *x, const uint8_t *w, int n16, int vnni, int five) {
    int nb = x->d / 256;
    size_t rb = (size_t)nb * (five ? 176 : 144);
    Q4Panel p; /* 137 KiB of stack at GQ_AMX_K_COLS, as much as the Q8_0 path's scales */
    if (!vnni) amx_configure_k(32);
    for (int j0 = 0; j0 < n16; j0 += 16) {
        q4k_panel(&p, w, rb, j0, nb, five);
        for (int tt = 0; tt < x->T / 16; tt++) q4k_tile16(C, ldc, x, &p, j0, tt, vnni);
    }
    if (!vnni) _tile_release();
}

/* ---- Q6_K ---- */

/* 16 Q6_K rows unpacked: u [block][group of 16][row][16] bytes (0-63),
 * the signed scales [block][group][row], d [block][row]. */
typedef struct {
    uint8_t u[GQ_AMX_K_COLS * 16];
    int8_t sc[GQ_AMX_K_COLS / 16 * 16];
    float d[GQ_AMX_K_COLS / 256 * 16];
} Q6Panel;

TAMX static void q6k_panel(Q6Panel *p, const uint8_t *w, size_t rb, int j0, int nb) {
    for (int r = 0; r < 16; r++)
        for (int k = 0; k < nb; k++) {
            const uint8_t *b = w + (size_t)(j0 + r) * rb + 210 * (size_t)k;
            p->d[16 * k + r] = _cvtsh_ss((unsigned short)(b[208] | b[209] << 8));
            for (int g = 0; g < 16; g++) p->sc[(16 * k + g) * 16 + r] = (int8_t)b[192 + g];
            for (int j = 0; j < 8; j++) { /* sub-block j's 32 weights are groups 2j and 2j + 1 */
                __m256i u = gemm_q_k_sub(GGML_Q6_K, b, j);
                _mm_storeu_si128((__m128i *)(p->u + ((size_t)(16 * k + 2 * j) * 16 + r) * 16), _mm256_castsi256_si128(u));
                _mm_storeu_si128((__m128i *)(p->u + ((size_t)(16 * k + 2 * j + 1) * 16 + r) * 16),
                                 _mm256_extracti128_si256(u, 1));
            }
        }
}

/* As q4k_tile16, a product a group of 16: isum = Σ sc·(u·q) − 32·Σ sc·s16
 * (the weights' offset of 32), then acc + (d·dx)·isum, gemm_q_k_block's. */
TAMX static void q6k_tile16(float *C, int ldc, const GqX *x, const Q6Panel *p, int j0, int tt, int vnni) {
    int nb = x->d / 256, T = x->T, t0 = 16 * tt;
    const int8_t *qa = x->qa + (size_t)tt * 16 * x->d;
    __m512 acc[16];
    int32_t s[16][16][16] __attribute__((aligned(64)));
    for (int r = 0; r < 16; r++) acc[r] = _mm512_setzero_ps();
    for (int k = 0; k < nb; k++) {
        k_products(s, p->u + (size_t)k * 4096, qa + (size_t)k * 4096, 16, 16, vnni);
        __m512 dx = _mm512_loadu_ps(x->dx + (size_t)k * T + t0);
        for (int r = 0; r < 16; r++) {
            __m512i is = _mm512_setzero_si512(), cr = _mm512_setzero_si512();
            for (int g = 0; g < 16; g++) {
                __m512i sc = _mm512_set1_epi32(p->sc[(16 * k + g) * 16 + r]);
                __m512i s16 = _mm512_cvtepi16_epi32(
                    _mm256_loadu_si256((const __m256i *)(x->s16t + (size_t)(16 * k + g) * T + t0)));
                is = _mm512_add_epi32(is, _mm512_mullo_epi32(_mm512_load_si512(s[g][r]), sc));
                cr = _mm512_add_epi32(cr, _mm512_mullo_epi32(s16, sc));
            }
            is = _mm512_sub_epi32(is, _mm512_slli_epi32(cr, 5));
            __m512 a = _mm512_mul_ps(_mm512_set1_ps(p->d[16 * k + r]), dx);
            acc[r] = _mm512_add_ps(acc[r], _mm512_mul_ps(a, _mm512_cvtepi32_ps(is)));
        }
    }
    tile_store(C, ldc, acc, j0, t0);
}

TAMX static void amx_q6k(float *C, int ldc, const GqX *x, const uint8_t *w, int n16, int vnni) {
    int nb = x->d / 256;
    size_t rb = (size_t)nb * 210;
    Q6Panel p; /* 137 KiB of stack at GQ_AMX_K_COLS, as Q4_K's */
    if (!vnni) amx_configure_k(16);
    for (int j0 = 0; j0 < n16; j0 += 16) {
        q6k_panel(&p, w, rb, j0, nb);
        for (int tt = 0; tt < x->T / 16; tt++) q6k_tile16(C, ldc, x, &p, j0, tt, vnni);
    }
    if (!vnni) _tile_release();
}

int gemm_q_amx_takes(int ty, int d, int vnni) {
    int q8_cols = vnni ? GQ_AMX_K_COLS : GQ_PACK_MAX_COLS;
    return (ty == GGML_Q8_0 && d <= q8_cols) ||
           ((ty == GGML_Q4_K || ty == GGML_Q5_K || ty == GGML_Q6_K) && d <= GQ_AMX_K_COLS);
}

void gemm_q_amx(float *C, int ldc, const GqX *x, int ty, const uint8_t *w, int n16, int vnni) {
    if (ty == GGML_Q8_0 && vnni) vnni_q8(C, ldc, x, w, n16);
    else if (ty == GGML_Q8_0) amx_q8(C, ldc, x, w, n16);
    else if (ty == GGML_Q4_K || ty == GGML_Q5_K) amx_q4k(C, ldc, x, w, n16, vnni, ty == GGML_Q5_K);
    else amx_q6k(C, ldc, x, w, n16, vnni);
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
