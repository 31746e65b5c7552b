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

/* mv_f32, and mv_bf16 (bf16 = 1) or mv_f16, with the kernel for isa rather
 * than the widest: tests run every variant the CPU has. An isa the CPU
 * lacks gives the widest it has; f16 on AVX2 without F16C is portable. */
void mv_f32_isa(MvIsa isa, float *out, const float *w, const float *x, int n, int d);
void mv_half_isa(MvIsa isa, float *out, const uint16_t *w, const float *x, int n, int d, int bf16);

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
