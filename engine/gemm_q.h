/* gemm_q.h — C[t][j] = Σ_k x[t][k] · w[j][k] for ggml-quantised weight rows
 * (Q8_0, Q4_K, Q5_K, Q6_K) in integer arithmetic, against activations
 * rounded to int8 the way ggml rounds them.
 *
 * Widening quantised rows to f32 for sgemm caps a prefill at the f32 FMA
 * rate and reads four bytes a weight from cache; an int8 dot product
 * (VPMADDUBSW, then VPMADDWD) does 32 products per instruction. The price
 * is the activations' rounding: each block of 32 (for Q8_0 rows) or 256
 * (for the K types, with sums per 16 and per 32 for their offsets) becomes
 * int8 values x·127/amax rounded to nearest even and one scale (amax/127
 * rounded to f16 for Q8_0, 1/(127/amax) in f32 for the K types), ggml's
 * own arithmetic, so llama.cpp and ahascope multiply the same integers;
 * the product is that of the rounded activations, not of x. The integer
 * sums inside a weight block are exact; each block then adds its
 * scale·sum into f32 accumulators in one fixed order, which the portable
 * path (GQ_PORTABLE) repeats operation for operation: every path returns
 * the same bits. Weights are read where they lie; the rounded activations
 * live in a caller's buffer (gemm_q_x_bytes), so no call allocates.
 *
 * Q4_K and Q6_K rows may instead be packed once at load (gemm_q_pack):
 * groups of four rows whose blocks lie side by side, Q4_K's 6-bit scales
 * and mins unpacked to bytes, and the weights in the order one int8
 * product with the activations' permuted copy (GqX.qp, GqX.qp6) wants, so
 * a block costs loads, VPMADDUBSW, adds and one VPMADDWD per product pair
 * at most (engine/PERFORMANCE.md, "Packed rows"). The packing is lossless
 * (gemm_q_unpack_row gives the stored blocks back) and every path over it
 * returns the bits of the portable path over the stored blocks.
 */
#ifndef AHASCOPE_GEMM_Q_H
#define AHASCOPE_GEMM_Q_H

#include <stddef.h>
#include <stdint.h>

/* How the products run: not at all (the caller's widen-and-sgemm path),
 * plain C, AVX2 tiles of 2 rows × 4 tokens (4 rows × 1 for decode), AMX
 * int8 tiles of 16 rows × 16 tokens for Q8_0, Q4_K, Q5_K and Q6_K, or the
 * same tiles' products in AVX-512 VNNI, a token a lane (gemm_q_amx.c; the
 * rows and tokens past the last whole tile take AVX2's). */
typedef enum { GQ_OFF, GQ_PORTABLE, GQ_AVX2, GQ_AMX, GQ_VNNI } GqPath;

/* Activations rounded for one product: T rows of d columns in blocks of
 * blk (32 or 256). Scales are stored block-major, tokens contiguous, so a
 * tile reads four tokens' scales in one load. */
typedef struct {
    int8_t *q;     /* [T][d] */
    float *dx;     /* [d/blk][T] */
    int16_t *s16;  /* [T][d/16] sums of q per 16 (blk 256 only) */
    int16_t *s32;  /* [T][d/32] sums of q per 32 (blk 256 only) */
    int8_t *qp;    /* [T][d] q in the order packed Q4_K rows read it (blk 256 only) */
    int8_t *qp6;   /* [T][d] q in the order packed Q6_K rows read it (blk 256 only) */
    int8_t *qa;    /* q in the order AMX tiles read it: per 16 tokens, per 16 bytes, 4 rows of 64 */
    int16_t *s32t; /* [d/32][T] s32 with tokens contiguous, for AMX's 16-token rows (blk 256 only) */
    int16_t *s16t; /* [d/16][T] s16 likewise (blk 256 only) */
    int T, d, blk;
    int tiles;     /* 1: gemm_q_quantise also writes qa, the order GQ_AMX and GQ_VNNI read; 0 spares that pass */
} GqX;

/* The activation block a weight type wants: 32 for Q8_0, 256 for Q4_K,
 * Q5_K and Q6_K; 0 for a type these kernels do not take. */
int gemm_q_block(int ggml_type);

/* Bytes of a buffer that holds a GqX of up to T rows of d (either block). */
size_t gemm_q_x_bytes(int T, int d);

/* Carve x out of buf (gemm_q_x_bytes(T, d) bytes, any alignment) for T rows
 * of d in blocks of blk; d must be a multiple of blk. x->tiles starts 0:
 * a caller that will run GQ_AMX or GQ_VNNI sets it before gemm_q_quantise
 * (without it, they run the AVX2 tiles). */
void gemm_q_x_init(GqX *x, void *buf, int T, int d, int blk);

/* Round rows [t0, t1) of in[T][d] into x: threads may round disjoint ranges. */
void gemm_q_quantise(GqX *x, const float *in, int t0, int t1);

/* C[t][j] (row stride ldc) for t < x->T, j < n, with w n rows of x->d
 * weights of ggml_type (whole blocks; gemm_q_block(ggml_type) == x->blk).
 * path must not be GQ_OFF and must be available. */
void gemm_q(GqPath path, float *C, int ldc, const GqX *x, int ggml_type, const void *w, int n);

/* The widest rows gemm_q_pack takes, so a caller can hold one row's
 * stored blocks (GQ_PACK_MAX_COLS / 256 · 210 bytes at most) on its stack. */
#define GQ_PACK_MAX_COLS 65536

/* Bytes of `rows` rows of `cols` weights of ggml_type packed (the rows
 * padded to a multiple of four; Q4_K 148 bytes a block of 256, Q6_K its
 * stored 210), or 0 when the type has no packed form
 * (Q4_K and Q6_K have) or cols is not whole blocks of at most GQ_PACK_MAX_COLS. */
size_t gemm_q_pack_bytes(int ggml_type, int rows, int cols);

/* Pack rows × cols stored blocks (src) into dst (gemm_q_pack_bytes of them). */
void gemm_q_pack(int ggml_type, void *dst, const void *src, int rows, int cols);

/* Row `row` of a packed matrix of `cols` columns as its stored blocks,
 * into dst (cols / 256 · the stored block: 144 bytes Q4_K, 210 Q6_K). */
void gemm_q_unpack_row(int ggml_type, void *dst, const void *packed, int cols, int row);

/* C[t][j − j0] (row stride ldc) for rows [j0, j1) of the packed matrix
 * whose row 0 is at `packed`, x->d columns (x->blk 256), every token of x.
 * path must not be GQ_OFF and must be available. */
void gemm_q_packed(GqPath path, float *C, int ldc, const GqX *x, int ggml_type, const void *packed, int j0, int j1);

/* 1 when a model loaded now should pack its matrices of ggml_type: the
 * type has a packed form, $AHASCOPE_REPACK is not "0", and products of it
 * will run gemm_q's AVX2 tiles (AHASCOPE_GEMMQ auto, avx2, amx or
 * avx512vnni, the integer decode, no AVX-512 VNNI kernels of matvec_q.c
 * in charge of decode). */
int gemm_q_pack_wanted(int ggml_type);

/* 1 when path can run on this CPU (GQ_OFF and GQ_PORTABLE always can). */
int gemm_q_available(GqPath path);

/* The fastest path this CPU has: GQ_AMX with AMX-INT8, AVX-512 and the
 * kernel's leave for the tile state, else GQ_VNNI with AVX-512 VNNI, else
 * GQ_AVX2 with AVX2, FMA and F16C, else GQ_PORTABLE. */
GqPath gemm_q_best(void);

/* "off", "portable", "avx2", "amx" or "avx512vnni". */
const char *gemm_q_name(GqPath path);

/* The path $AHASCOPE_GEMMQ names ("off", "portable", "avx2", "amx",
 * "avx512vnni", or unset or "auto": gemm_q_best), or -1 with a message in
 * msg for an unknown name or one this CPU cannot run. */
int gemm_q_from_env(char *msg, size_t msg_size);

#endif
