/* matvec.h — out[n] = W[n][d] · x[d], the decode step's hot loop.
 *
 * A decode step streams every weight once, so this kernel is judged by
 * bytes per second: rows with independent accumulators read W as
 * sequential streams, which the hardware prefetchers follow (OpenBLAS's
 * sgemv reached about half the machine's bandwidth here), and software
 * prefetches 4 KiB ahead keep enough lines in flight. The half-precision
 * kernels read two rows half the call's rows apart at once: two streams
 * keep more lines in flight than one.
 * The widest instruction set the CPU has is chosen at run time.
 */
#ifndef AHASCOPE_MATVEC_H
#define AHASCOPE_MATVEC_H

#include <stddef.h>
#include <stdint.h>

/* out[i] = Σ_j w[i*d + j] · x[j] for i in [0, n). */
void mv_f32(float *out, const float *w, const float *x, int n, int d);

/* The same over bf16 or IEEE f16 weights (x and out stay f32; each weight
 * is widened exactly). */
void mv_bf16(float *out, const uint16_t *w, const float *x, int n, int d);
void mv_f16(float *out, const uint16_t *w, const float *x, int n, int d);

/* Widen n bf16 (bf16 = 1) or f16 values to f32. */
void mv_widen(float *out, const uint16_t *in, size_t n, int bf16);

/* Instruction sets the kernels come in, narrowest first. */
typedef enum { MV_PORTABLE, MV_AVX2, MV_AVX512 } MvIsa;

/* The widest instruction set this CPU runs (AVX2 counts only with FMA). */
MvIsa mv_isa(void);

/* 1 when the CPU runs AVX-512F (the kernels here and attention's use it). */
int mv_cpu_avx512(void);
/* 1 if the CPU has F16C (half-float conversions), read from cpuid once. */
int mv_cpu_f16c(void);

/* mv_f32, and mv_bf16 (bf16 = 1) or mv_f16, with the kernel for isa rather
 * than the widest: tests run every variant the CPU has. An isa the CPU
 * lacks gives the widest it has; f16 on AVX2 without F16C is portable. */
void mv_f32_isa(MvIsa isa, float *out, const float *w, const float *x, int n, int d);
void mv_half_isa(MvIsa isa, float *out, const uint16_t *w, const float *x, int n, int d, int bf16);

/* ---- quantised weights (engine/quant.h; matvec_q.c) ----
 * A row is d / block weights of ggml blocks, ggml_type numbered as
 * GgmlType. Each block is unpacked to its integers and per-16 scales and
 * turned into f32 weights in registers, w = sc·q − mn (one FMA, exact as
 * quant.h explains), which are then dotted with x in f32: the products are
 * those of the widened row, so the result differs from mv_f32 over
 * quant_dequant's row only in summation order: the exact path, whose
 * activations are never rounded (ggml's integer dot rounds x to Q8 per
 * block). With AVX-512 or AVX2, Q8_0, Q4_0, Q4_K, Q5_K and Q6_K are unpacked in
 * registers straight from their bytes; the other types unpack a block at
 * a time into bytes (quant_unpack, which the compiler vectorises per ISA)
 * and then run the vector dot. That exact path is mv_q_isa's; mv_q takes
 * the integer (VNNI) path, which rounds x to 8 bits, where it exists
 * (mv_q_set_int8 below). */

/* 1 if mv_q reads ggml_type: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K … Q6_K. */
int mv_q_supported(int ggml_type);

/* out[i] = Σ_j W[i][j] · x[j] over n rows of d weights (d a whole number of
 * blocks), the rows one after another. */
void mv_q(float *out, int ggml_type, const void *w, const float *x, int n, int d);

/* mv_q with the kernel for isa (clamped to what the CPU has): for tests. */
void mv_q_isa(MvIsa isa, float *out, int ggml_type, const void *w, const float *x, int n, int d);

/* Choose mv_q's path: 1 the integer one, 0 the exact one. With AVX-512
 * VNNI, Q8_0, Q4_K, Q5_K and Q6_K rows are dotted as bytes against x
 * rounded once per call (or once for many, mv_q_x_round) to 8 bits per
 * 32 values (mv_q_quantise_x's rounding, as ggml rounds activations), 64
 * weights a dpbusd; other
 * types, and CPUs without VNNI, stay exact. The default is the integer
 * path, unless AHASCOPE_QDOT=exact (or int8) is set in the environment:
 * 3.5-6x the exact kernels in cache (engine/PERFORMANCE.md). Measured on
 * a random dim-256 llama quantised by llama.cpp (q8_0, q4_k, q5_k, q6_k,
 * q4_k_m; 64 decode positions): the integer path moves a log-prob by
 * 0.0135-0.0156 against the widened weights and 0.015-0.025 against
 * llama.cpp; the exact path 1.5e-6 and 0.014-0.021. Process-wide:
 * `bench` and tests compare the two. */
void mv_q_set_int8(int on);

/* 1 if mv_q takes the integer path where it exists (the mode in force). */
int mv_q_int8(void);

/* 1 if the integer path exists for ggml_type on this CPU. */
int mv_q_int8_available(int ggml_type);

/* x rounded once for the integer path, so that several calls over one x
 * (a decode step's row slices, the matrices sharing an input) round it
 * once between them instead of once each: mv_q_rounded's bits are
 * mv_q's. */
typedef struct MvqX MvqX;

/* A buffer for one rounded x (d up to 65 536), or NULL; mv_q_x_free frees it. */
MvqX *mv_q_x_new(void);
void mv_q_x_free(MvqX *xq);

/* Round x[0..d) into xq as mv_q's integer path would: 1, or 0 when that
 * path is not in force for any type here (exact mode, no VNNI, d not whole
 * blocks or too long), and xq is left unusable. */
int mv_q_x_round(MvqX *xq, const float *x, int d);

/* mv_q over the x xq holds (rounded from d values): 1, or 0 when the
 * integer path does not take ggml_type (call mv_q then). */
int mv_q_rounded(float *out, int ggml_type, const void *w, const MvqX *xq, int n, int d);

/* x[0..d) (d a multiple of 32) rounded the integer path's way: per 32
 * values dx = max|x|/127 and q = x·(1/dx) rounded to nearest even (0 for
 * a block of zeros); sum = Σ q of the block. The integer path's own
 * (vector) quantiser where it exists, so tests hold it to a scalar
 * reference. */
void mv_q_quantise_x(int8_t *q, float *dx, int32_t *sum, const float *x, int d);

/* n weights (whole blocks) of ggml_type widened to f32: a prefill tile. */
void mv_q_widen(float *out, int ggml_type, const void *w, size_t n);

/* Σ x[0..n), read the way the kernels above read their weights: the
 * streaming probe `bench` measures bandwidth with. */
float mv_stream_sum(const float *x, size_t n);

/* How the half-precision decode kernels prefetch their weight rows
 * (engine/simd.h): 4 KiB ahead into L2 and 2 KiB ahead into L1, as a Xeon
 * read fastest, or on AMD CPUs 4 KiB ahead into L1 alone, 5-8% faster than
 * the other on a Zen 5. */
typedef enum { MV_PF_L2_L1, MV_PF_L1 } MvPrefetch;

/* The way this CPU's kernels prefetch. */
MvPrefetch mv_prefetch_kind(void);

/* "l2+l1" or "l1". */
const char *mv_prefetch_name(MvPrefetch k);

/* Name of the kernel variant in use ("avx512", "avx2", "portable"). */
const char *mv_variant(void);

#endif
