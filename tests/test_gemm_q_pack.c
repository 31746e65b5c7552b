/* test_gemm_q_pack.c — Q4_K and Q6_K rows packed in groups of four: lossless, and their products the stored rows' bits.
 *
 * engine/gemm_q.h promises that a packed matrix gives back its stored
 * blocks byte for byte and that every path over it returns the portable
 * path's bits over the stored blocks. So random Q4_K and Q6_K rows (every scale,
 * min and nibble drawn) are packed, unpacked and compared by memcmp; and
 * the packed products (portable and AVX2) are compared by memcmp with the
 * stored portable product over shapes that leave every remainder: row
 * counts 1 … 3 past a group, ranges that start and end inside a group
 * (as a thread's slice of concatenated matrices may), T = 1 … 5 (decode,
 * one token past a quad), more than one 16-row block, and a C wider than
 * the range whose other columns must stay untouched. The stored product is
 * itself held to float64 by test_gemm_q.c, so equality here carries that.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/gemm_q.h"
#include "engine/gguf.h"
#include "engine/quant.h"
#include "tests/quant_fixture.h"
#include "tests/test.h"

typedef struct { int T, n, d, j0, j1; } PkShape;

static const PkShape SHAPES[] = {{1, 1, 256, 0, 1},   {1, 5, 512, 0, 5},    {2, 3, 256, 0, 3},   {3, 6, 768, 1, 6},
                                 {4, 7, 256, 2, 7},   {5, 9, 512, 0, 9},    {5, 33, 256, 3, 30}, {1, 34, 1024, 5, 34},
                                 {4, 17, 256, 16, 17}, {2, 40, 512, 13, 27}, {5, 2, 256, 1, 2},   {3, 64, 256, 0, 64}};

/* Packing then unpacking every row gives the stored bytes back. */
static int round_trips(GgmlType ty, int pb, unsigned *seed) {
    int bad = 0;
    for (int n = 1; n <= 9; n++) {
        int d = 256 * (1 + n % 3);
        size_t bytes, rb = quant_row_bytes(ty, d);
        uint8_t *w = qfx_random_blocks(ty, (size_t)n * d, 0.05f, seed, &bytes);
        size_t pbytes = gemm_q_pack_bytes(ty, n, d);
        bad += pbytes != (size_t)((n + 3) / 4 * 4 * (d / 256) * pb);
        uint8_t *p = malloc(pbytes), *row = malloc(rb);
        gemm_q_pack(ty, p, w, n, d);
        for (int j = 0; j < n; j++) {
            gemm_q_unpack_row(ty, row, p, d, j);
            bad += memcmp(row, w + (size_t)j * rb, rb) != 0;
        }
        free(w), free(p), free(row);
    }
    return bad;
}

TEST(gemm_q_pack_round_trips_every_row) {
    unsigned seed = 7;
    CHECK_INT(round_trips(GGML_Q4_K, 148, &seed), 0);
    CHECK_INT(round_trips(GGML_Q6_K, 210, &seed), 0);
    /* the types and widths with no packed form say so */
    CHECK_INT((long)gemm_q_pack_bytes(GGML_Q5_K, 4, 256), 0);
    CHECK_INT((long)gemm_q_pack_bytes(GGML_Q8_0, 4, 256), 0);
    CHECK_INT((long)gemm_q_pack_bytes(GGML_Q4_K, 4, 128), 0);
    CHECK_INT((long)gemm_q_pack_bytes(GGML_Q6_K, 4, GQ_PACK_MAX_COLS + 256), 0);
}

/* One shape: the stored rows' portable product against the packed rows'
 * portable and AVX2 products, bit for bit; 1 when any differs or writes
 * outside its columns. */
static int pack_shape(GgmlType ty, const PkShape *s, unsigned *seed) {
    int T = s->T, n = s->n, d = s->d, w0 = s->j1 - s->j0, ldc = w0 + 3;
    size_t bytes, rb = quant_row_bytes(ty, d);
    uint8_t *w = qfx_random_blocks(ty, (size_t)n * d, 0.05f, seed, &bytes);
    uint8_t *p = malloc(gemm_q_pack_bytes(ty, n, d));
    float *x = malloc((size_t)T * d * sizeof(float)), *C[3];
    for (int i = 0; i < 3; i++) C[i] = malloc((size_t)T * ldc * sizeof(float));
    void *buf = malloc(gemm_q_x_bytes(T, d));
    for (size_t i = 0; i < (size_t)T * d; i++) x[i] = qfx_frand(seed) * (i % 5 == 0 ? 4.0f : 1.0f);
    gemm_q_pack(ty, p, w, n, d);
    GqX gx;
    gemm_q_x_init(&gx, buf, T, d, 256);
    gemm_q_quantise(&gx, x, 0, T);
    for (int i = 0; i < 3; i++)
        for (size_t k = 0; k < (size_t)T * ldc; k++) C[i][k] = -12345.0f;
    gemm_q(GQ_PORTABLE, C[0], ldc, &gx, ty, w + (size_t)s->j0 * rb, w0);
    gemm_q_packed(GQ_PORTABLE, C[1], ldc, &gx, ty, p, s->j0, s->j1);
    int paths = gemm_q_available(GQ_AVX2) ? 3 : 2, bad = 0;
    if (paths == 3) gemm_q_packed(GQ_AVX2, C[2], ldc, &gx, ty, p, s->j0, s->j1);
    for (int i = 1; i < paths; i++) bad |= memcmp(C[0], C[i], (size_t)T * ldc * sizeof(float)) != 0;
    for (int t = 0; t < T; t++) bad |= C[0][(size_t)t * ldc + w0] != -12345.0f;
    free(w), free(p), free(x), free(buf);
    for (int i = 0; i < 3; i++) free(C[i]);
    return bad;
}

static void check_products(GgmlType ty, const char *name) {
    unsigned seed = 21 + (unsigned)ty;
    int differ = 0, n = (int)(sizeof SHAPES / sizeof SHAPES[0]);
    for (int i = 0; i < n; i++) {
        int bad = pack_shape(ty, &SHAPES[i], &seed);
        CHECK_MSG(!bad, "%s: T %d, %d rows of %d, rows [%d, %d): the packed product differs", name, SHAPES[i].T,
                  SHAPES[i].n, SHAPES[i].d, SHAPES[i].j0, SHAPES[i].j1);
        differ += bad;
    }
    printf("      %s packed: %s = stored portable bit for bit in %d of %d shapes\n", name,
           gemm_q_available(GQ_AVX2) ? "portable and avx2" : "portable (no AVX2 here)", n - differ, n);
}

TEST(gemm_q_pack_q4_k_products_equal_the_stored_rows_bit_for_bit) { check_products(GGML_Q4_K, "Q4_K"); }

TEST(gemm_q_pack_q6_k_products_equal_the_stored_rows_bit_for_bit) { check_products(GGML_Q6_K, "Q6_K"); }

/* The permuted copy of the activations is the documented permutation of q. */
TEST(gemm_q_pack_activations_permuted_per_block) {
    int T = 3, d = 512, bad = 0;
    unsigned seed = 5;
    float x[3 * 512];
    for (int i = 0; i < T * d; i++) x[i] = qfx_frand(&seed);
    void *buf = malloc(gemm_q_x_bytes(T, d));
    GqX gx;
    gemm_q_x_init(&gx, buf, T, d, 256);
    gemm_q_quantise(&gx, x, 0, T);
    for (int t = 0; t < T; t++)
        for (int k = 0; k < d / 256; k++)
            for (int i = 0; i < 8; i++)
                for (int s = 0; s < 8; s++)
                    for (int l = 0; l < 4; l++) {
                        size_t base = (size_t)t * d + 256 * k;
                        bad += gx.qp[base + 32 * i + 4 * s + l] != gx.q[base + 32 * s + 4 * i + l];
                        bad += gx.qp6[base + 32 * i + 2 * s + l % 2] != gx.q[base + 16 * s + 2 * i + l % 2];
                        bad += gx.qp6[base + 32 * i + 2 * (s + 8) + l % 2] != gx.q[base + 16 * (s + 8) + 2 * i + l % 2];
                    }
    CHECK_INT(bad, 0);
    free(buf);
}
