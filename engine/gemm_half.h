/* gemm_half.h — a prefill's C[T][n] = X[T][d] · W[n][d]ᵀ with bf16 weights
 * multiplied in bf16 by the CPU's own dot-product instructions.
 *
 * Widening bf16 weights to f32 for sgemm caps a prefill at the f32 FMA
 * rate; AVX-512 BF16 (VDPBF16PS) does two products per f32 lane, and AMX
 * (TDPBF16PS) a 16×16×32 tile product per instruction. Both round the
 * activations X to bf16 (round to nearest even) first: that is the price,
 * measured in engine/PERFORMANCE.md, and why GEMM_EXACT (the caller's
 * widen-and-sgemm path) stays available. Weights are used where they lie
 * (a read-only mapping): each call packs 32 rows at a time into the
 * caller's scratch in the pair-interleaved order both instructions read,
 * so no second copy of a model ever exists. X is rounded once per product
 * into a buffer of gemm_half_x_elems; every thread then reads it.
 * The path is chosen at run time: AMX needs its CPUID bits and the
 * kernel's permission (arch_prctl), AVX-512 BF16 its CPUID bit; a path the
 * machine lacks is never run.
 */
#ifndef AHASCOPE_GEMM_HALF_H
#define AHASCOPE_GEMM_HALF_H

#include <stddef.h>
#include <stdint.h>

/* How a prefill multiplies bf16 weights: widened to f32 for sgemm (exact
 * products of the stored weights), or in bf16 by one of two instruction sets. */
typedef enum { GEMM_EXACT, GEMM_AVX512BF16, GEMM_AMX } GemmPath;

/* The default path: GEMM_AMX where the CPU and kernel allow it, else
 * GEMM_AVX512BF16 where the CPU has it, else GEMM_EXACT. */
GemmPath gemm_half_best(void);

/* 1 when path can run here (GEMM_EXACT always can). */
int gemm_half_available(GemmPath path);

/* The path a name asks for: "exact", "avx512bf16", "amx", or "auto"
 * (gemm_half_best); -1 for any other name. */
int gemm_half_parse(const char *name);

/* 1 when Linux lets this process use the AMX tile data (it must ask,
 * ARCH_REQ_XCOMP_PERM, before its first tile instruction, or that
 * instruction faults); asks once more each call, which is harmless.
 * gemm_q's AMX int8 path asks through it too. */
int gemm_half_tiles_permitted(void);

/* Load palette 1 with tiles 0-7 of colsb[t] bytes by rows[t] rows (the
 * others unused) on the calling thread; only where gemm_half_tiles_permitted
 * and the CPU has AMX-TILE. gemm_q's AMX path configures through it too. */
void gemm_half_tiles_configure(const uint16_t colsb[8], const uint8_t rows[8]);

/* "exact", "avx512bf16" or "amx". */
const char *gemm_half_name(GemmPath path);

/* The path $AHASCOPE_GEMM asks for (unset: gemm_half_best), or -1 with a message
 * in msg when it names an unknown path or one this machine cannot run. */
int gemm_half_from_env(char *msg, size_t msg_size);

/* uint16 elements of the rounded-activation buffer for up to T rows of d. */
size_t gemm_half_x_elems(int T, int d);

/* Bytes of one thread's scratch for up to T rows of d: a packed block of
 * weights and its 32 columns of C. */
size_t gemm_half_scratch_bytes(int T, int d);

/* Round rows [t0, t1) of x[T][d] to bf16 into xb, padding columns
 * included, and when t1 == T the padding rows after T (zeros): threads
 * may round disjoint ranges of one buffer. */
void gemm_half_round_rows(uint16_t *xb, const float *x, int T, int d, int t0, int t1);

/* All of x[T][d] into xb (gemm_half_round_rows over [0, T)). */
void gemm_half_round_x(uint16_t *xb, const float *x, int T, int d);

/* C[t][j] (row stride ldc) = Σ_k xb[t][k] · w[j][k] for t < T, j < n, with
 * xb from gemm_half_round_x and w[n][d] bf16; scratch holds
 * gemm_half_scratch_bytes(T, d). path must be
 * available and not GEMM_EXACT. */
void gemm_half_bf16(GemmPath path, float *C, int ldc, const uint16_t *xb, int T, int d, const uint16_t *w, int n,
                    void *scratch);

/* Runs path's multiply instruction alone reps × 16 times on independent
 * accumulators held in registers (GEMM_EXACT: the f32 FMA sgemm relies on,
 * AVX-512 or AVX2) and returns the FLOP done (0 when the machine lacks it):
 * timed on every thread, the peak a product on that path can reach here. */
double gemm_half_peak_flops(GemmPath path, long reps);

#endif
