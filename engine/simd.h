/* simd.h — pieces the kernels share: software prefetch for the streams a
 * decode step reads, and loads that widen 16 half-precision values to f32.
 *
 * Out of cache, the hardware prefetchers alone let a core pull bf16 rows at
 * only ~70% of the rate it pulls f32 rows: twice the instructions per cache
 * line leave fewer lines in flight. Asking for the line 4 KiB ahead, into L2
 * (T1: it spends L2's miss slots, not L1's fill buffers), closes the gap: an
 * out-of-cache matvec on 2 threads went from 8.5 to 11 G bf16 weights/s, f32
 * gained ~5%, and 2 KiB ahead or T0 did worse. In-cache speed is unchanged.
 * The address is formed as an integer: it may lie past the array, which a
 * prefetch never faults on, but pointer arithmetic may not.
 */
#ifndef AHASCOPE_SIMD_H
#define AHASCOPE_SIMD_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define MV_PREFETCH 4096

/* Attention asks for the key or value this many positions ahead: ~5 cycles
 * a key means 8 ahead would arrive too late for a DRAM miss. */
#define MV_AHEAD_ROWS 32

/* Ask for `lines` cache lines starting `ahead` bytes past p. */
static inline void mv_prefetch_at(const void *p, size_t ahead, int lines) {
    for (int l = 0; l < lines; l++) _mm_prefetch((const char *)((uintptr_t)p + ahead + 64 * l), _MM_HINT_T1);
}

/* The weight stream's prefetch: `lines` lines MV_PREFETCH bytes ahead. */
static inline void mv_prefetch(const void *p, int lines) { mv_prefetch_at(p, MV_PREFETCH, lines); }

/* Half-precision rows also ask for the line 2 KiB ahead into L1 (T0):
 * widening costs the core two extra instructions per 16 weights, and with
 * its loads waiting on L2 it fell behind the stream. In `bench --dtype bf16`
 * on the 110M shape (runs of the two builds alternated) this second
 * prefetch took bf16 decode from 1.72-1.76x f32 to 1.84-1.90x, with one
 * row at a time and 1 KiB ahead. Reading two rows at once, 2 KiB per
 * stream did best: roofline 0.86-0.92 against 0.80-0.86 at 1 KiB, 0.83-0.89
 * at 1.5 KiB, 0.82-0.85 at 3 KiB. f32 rows gained nothing from it.
 *
 * An AMD Zen 5 wants the opposite: no second prefetch, and the one 4 KiB
 * ahead straight into L1 (T0). Builds alternated on its host (engine/
 * PERFORMANCE.md): dropping the 2 KiB one took the bf16 110M folder from
 * roofline 0.75-0.76 to 0.79-0.81 when the host gave ~80 GB/s; T0 for the
 * far one then to 0.82, and the 1B-class folder from 0.875-0.886 to
 * 0.921-0.928. So the kernels ask mv_prefetch_kind() which way to go. */
#define MV_PREFETCH_NEAR 2048

static inline void mv_prefetch_near(const void *p, int lines) {
    for (int l = 0; l < lines; l++) _mm_prefetch((const char *)((uintptr_t)p + MV_PREFETCH_NEAR + 64 * l), _MM_HINT_T0);
}

/* A half-precision weight row's prefetches for the line at p: 4 KiB ahead
 * into L2 and 2 KiB ahead into L1 (l1_only 0), or 4 KiB ahead into L1. */
static inline void mv_prefetch_half(const void *p, int l1_only) {
    if (l1_only) {
        _mm_prefetch((const char *)((uintptr_t)p + MV_PREFETCH), _MM_HINT_T0);
        return;
    }
    mv_prefetch(p, 1);
    mv_prefetch_near(p, 1);
}

/* 16 bf16 values widened to f32 (exact: a bf16 is the top half of an f32). */
__attribute__((target("avx512f"))) static inline __m512 ld16_bf16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}

/* 16 IEEE f16 values widened to f32 (exact). */
__attribute__((target("avx512f"))) static inline __m512 ld16_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

#endif
