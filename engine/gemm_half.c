/* gemm_half.c — prefill products with bf16 weights in bf16: AMX tiles, else AVX-512 BF16. */
#include "gemm_half.h"

#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Both fast paths take 32 weight rows (two 16-column tiles) and 32
 * activation rows at a time, and 32 bf16 of the shared dimension per AMX
 * step; buffers are padded to these so no load runs past them. */
#define BLK 32

#define AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define AMX __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,amx-tile,amx-bf16")))

/* The weights are packed a panel at a time: NC rows (columns of C) × KC
 * of the shared dimension, 256 KiB, which stays in L2 while every row
 * block of X passes over it; a row block's 32 × KC activations (32 KiB)
 * stay in L1 across the panel's 8 column blocks. The panel's columns of C
 * accumulate in scratch across the KC chunks. Packing a whole 32-row
 * block at once instead streamed all of X from L3 for every 32 columns. */
#define KC 512
#define NC 256

static size_t pad32(size_t v) { return (v + BLK - 1) / BLK * BLK; }

/* The rounded activations are stored tile by tile: 16 rows × 32 bf16
 * (1 KiB, one AMX tile) contiguous, tiles of a row block in k order, so a
 * tile load reads 16 consecutive cache lines rather than 16 lines a row
 * apart (4 KiB at d = 2048: one L1 set, a page each). Here it timed the
 * same as plain rows (the products wait elsewhere), but it leaves the
 * loads no stride to trip on. Element (t, k) of a product with padded
 * width dp lies at x_at(t, k, dp). */
static size_t x_at(size_t t, size_t k, size_t dp) { return ((t / 16) * (dp / BLK) + k / BLK) * 512 + t % 16 * BLK + k % BLK; }

/* ---- what the machine allows ---------------------------------------------- */

/* AVX-512 F, BW, VL and BF16, and an OS that saves the zmm state (XCR0). */
static int cpu_avx512bf16(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0xe6) != 0xe6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & (1u << 16)) || !(b & (1u << 30)) || !(b & (1u << 31))) return 0;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5));
}

int gemm_half_tiles_permitted(void) {
#ifdef SYS_arch_prctl
    const long req_perm = 0x1023, get_perm = 0x1022, xtiledata = 18;
    unsigned long perm = 0;
    if (syscall(SYS_arch_prctl, req_perm, xtiledata) != 0) return 0;
    if (syscall(SYS_arch_prctl, get_perm, &perm) != 0) return 0;
    return (perm >> xtiledata) & 1;
#else
    return 0;
#endif
}

/* AMX-TILE and AMX-BF16 in CPUID, and the tile state permitted. */
static int cpu_amx(void) {
    unsigned a, b, c, d;
    if (!cpu_avx512bf16() || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    if (!(d & (1u << 22)) || !(d & (1u << 24))) return 0;
    return gemm_half_tiles_permitted();
}

int gemm_half_available(GemmPath path) {
    if (path == GEMM_AVX512BF16) return cpu_avx512bf16();
    if (path == GEMM_AMX) return cpu_amx();
    return path == GEMM_EXACT;
}

/* AMX first; AVX-512 BF16 where AMX is missing. Measured at AHA-OLMO2's
 * shape (engine/PERFORMANCE.md): on an AMD Zen 5, where VDPBF16PS's peak is
 * twice the f32 FMA's, its prefill ran 3.5x sgemm's; on the Xeon, whose
 * AMX was chosen first anyway, it was only on par with sgemm. No known CPU
 * has AVX-512 BF16 but runs sgemm faster, bar that Xeon, which takes AMX. */
GemmPath gemm_half_best(void) {
    if (cpu_amx()) return GEMM_AMX;
    return cpu_avx512bf16() ? GEMM_AVX512BF16 : GEMM_EXACT;
}

static const char *const NAMES[] = {[GEMM_EXACT] = "exact", [GEMM_AVX512BF16] = "avx512bf16", [GEMM_AMX] = "amx"};

int gemm_half_parse(const char *name) {
    if (!strcmp(name, "auto")) return (int)gemm_half_best();
    for (int i = 0; i < (int)(sizeof NAMES / sizeof NAMES[0]); i++)
        if (!strcmp(name, NAMES[i])) return i;
    return -1;
}

const char *gemm_half_name(GemmPath path) {
    return path >= GEMM_EXACT && path <= GEMM_AMX ? NAMES[path] : "?";
}

int gemm_half_from_env(char *msg, size_t msg_size) {
    const char *v = getenv("AHASCOPE_GEMM");
    if (!v || !*v) return (int)gemm_half_best();
    int p = gemm_half_parse(v);
    if (p < 0) snprintf(msg, msg_size, "AHASCOPE_GEMM: expected exact, avx512bf16, amx or auto (got '%.40s')", v);
    else if (!gemm_half_available((GemmPath)p))
        snprintf(msg, msg_size, "AHASCOPE_GEMM=%s: this CPU (or kernel) does not allow it", v), p = -1;
    return p;
}

/* ---- activations ----------------------------------------------------------- */

size_t gemm_half_x_elems(int T, int d) { return pad32((size_t)T) * pad32((size_t)d); }

size_t gemm_half_scratch_bytes(int T, int d) {
    (void)d;
    return (size_t)NC * KC * sizeof(uint16_t) + pad32((size_t)T) * NC * sizeof(float);
}

/* VCVTNEPS2BF16 rounds to nearest even, as half_f32_to_bf16 does. */
AVX512BF16 void gemm_half_round_rows(uint16_t *xb, const float *x, int T, int d, int t0, int t1) {
    size_t dp = pad32((size_t)d);
    for (int t = t0; t < t1; t++) {
        const float *row = x + (size_t)t * d;
        for (size_t k = 0; k < dp; k += 16) { /* 16 values never straddle a tile row */
            __mmask16 m = (size_t)d >= k + 16 ? 0xffff : (size_t)d > k ? (__mmask16)((1u << (d - k)) - 1) : 0;
            __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, row + k));
            _mm256_storeu_si256((__m256i *)(xb + x_at((size_t)t, k, dp)), (__m256i)h);
        }
    }
    if (t1 == T) /* whole zero rows pad the last row block */
        for (size_t t = (size_t)T; t < pad32((size_t)T); t++)
            for (size_t k = 0; k < dp; k += BLK) memset(xb + x_at(t, k, dp), 0, BLK * sizeof *xb);
}

void gemm_half_round_x(uint16_t *xb, const float *x, int T, int d) { gemm_half_round_rows(xb, x, T, d, 0, T); }

/* ---- weights: 32 rows into the pair-interleaved order ---------------------- */

/* Transpose 16 vectors of 16 32-bit lanes in place: r[c][i] = old r[i][c].
 * Pairs within 128-bit lanes first, then 64-bit halves, then the four
 * 128-bit lanes of each group of four vectors. */
AVX512BF16 static void transpose16(__m512i r[16]) {
    __m512i a[16], b[16];
    for (int i = 0; i < 16; i += 2) {
        a[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        a[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        b[i] = _mm512_unpacklo_epi64(a[i], a[i + 2]);
        b[i + 1] = _mm512_unpackhi_epi64(a[i], a[i + 2]);
        b[i + 2] = _mm512_unpacklo_epi64(a[i + 1], a[i + 3]);
        b[i + 3] = _mm512_unpackhi_epi64(a[i + 1], a[i + 3]);
    }
    /* b[4i + m], 128-bit lane L, holds column 4L + m of rows 4i..4i+3 */
    for (int m = 0; m < 4; m++) {
        __m512i u0 = _mm512_shuffle_i32x4(b[m], b[4 + m], 0x44), u1 = _mm512_shuffle_i32x4(b[m], b[4 + m], 0xee);
        __m512i u2 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], 0x44), u3 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], 0xee);
        r[m] = _mm512_shuffle_i32x4(u0, u2, 0x88);
        r[4 + m] = _mm512_shuffle_i32x4(u0, u2, 0xdd);
        r[8 + m] = _mm512_shuffle_i32x4(u1, u3, 0x88);
        r[12 + m] = _mm512_shuffle_i32x4(u1, u3, 0xdd);
    }
}

/* Rows [0, rows) of w[·][d] (rows ≤ 32), k in [k0, k0 + kc), as two
 * column tiles, each [kc/2 pairs][16 rows] of 32-bit (bf16 k, bf16 k+1)
 * pairs: the layout TDPBF16PS takes its second operand in, one 64-byte
 * line per pair of k, which VDPBF16PS reads as well. Missing rows and
 * columns are zero. */
AVX512BF16 static void pack_block(uint32_t *wp, const uint16_t *w, int rows, int d, int k0, int kc) {
    size_t tile = (size_t)kc / 2 * 16;
    for (int nt = 0; nt < 2; nt++)
        for (int k = k0; k < k0 + kc; k += BLK) {
            __m512i r[16];
            __mmask32 m = d - k >= BLK ? 0xffffffffu : d > k ? (__mmask32)((1u << (d - k)) - 1) : 0;
            for (int i = 0; i < 16; i++) {
                int row = nt * 16 + i;
                r[i] = row < rows ? _mm512_maskz_loadu_epi16(m, w + (size_t)row * d + k) : _mm512_setzero_si512();
            }
            transpose16(r);
            for (int c = 0; c < 16; c++) _mm512_storeu_si512(wp + nt * tile + (size_t)((k - k0) / 2 + c) * 16, r[c]);
        }
}

/* ---- the kernels: 32 columns of C into acc[rows][32] ----------------------- */

/* Rows [0, rows) (≤ 32, rounded up to 8) of the row block at xb, k in
 * [k0, k0 + kc), against one packed block, added into acc (row stride NC;
 * zero: start from nothing), by broadcasting one activation pair against
 * 16 packed weight pairs. */
AVX512BF16 static void avx_block(float *acc, int zero, const uint16_t *xb, int rows, int dp, int k0, int kc,
                                 const uint32_t *wp) {
    size_t tile = (size_t)kc / 2 * 16;
    for (int r0 = 0; r0 < rows; r0 += 8) {
        __m512 c[8][2];
        for (int i = 0; i < 8; i++)
            for (int h = 0; h < 2; h++)
                c[i][h] = zero ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + (size_t)(r0 + i) * NC + 16 * h);
        for (int p = 0; p < kc / 2; p++) {
            __m512bh b0 = (__m512bh)_mm512_loadu_si512(wp + (size_t)p * 16);
            __m512bh b1 = (__m512bh)_mm512_loadu_si512(wp + tile + (size_t)p * 16);
            const uint16_t *xp = xb + x_at((size_t)r0, (size_t)k0 + 2 * (size_t)p, (size_t)dp);
            for (int i = 0; i < 8; i++) {
                uint32_t pair;
                memcpy(&pair, xp + i * BLK, sizeof pair);
                __m512bh a = (__m512bh)_mm512_set1_epi32((int)pair);
                c[i][0] = _mm512_dpbf16_ps(c[i][0], a, b0);
                c[i][1] = _mm512_dpbf16_ps(c[i][1], a, b1);
            }
        }
        for (int i = 0; i < 8; i++) {
            _mm512_storeu_ps(acc + (size_t)(r0 + i) * NC, c[i][0]);
            _mm512_storeu_ps(acc + (size_t)(r0 + i) * NC + 16, c[i][1]);
        }
    }
}

/* LDTILECFG's 64 bytes. */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} TileConfig;

AMX void gemm_half_tiles_configure(const uint16_t colsb[8], const uint8_t rows[8]) {
    TileConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.colsb[t] = colsb[t], cfg.rows[t] = rows[t];
    /* gcc 12's _tile_loadconfig tells the compiler it reads 8 bytes, which
     * then dropped the stores above (and LDTILECFG faulted on the stack's
     * leftovers): the barrier makes every byte of cfg written first. */
    __asm__ volatile("" : : "r"(&cfg) : "memory");
    _tile_loadconfig(&cfg);
}

/* The palette-1 layout every call uses: tiles 0-3 accumulate C (16 rows
 * of 16 floats), 4-5 hold two 16-row slices of X, 6-7 the two packed
 * weight tiles; each is 16 rows of 64 bytes. */
static void amx_configure(void) {
    static const uint16_t colsb[8] = {64, 64, 64, 64, 64, 64, 64, 64};
    static const uint8_t rows[8] = {16, 16, 16, 16, 16, 16, 16, 16};
    gemm_half_tiles_configure(colsb, rows);
}

/* The same by tiles: C in tiles 0-3, loaded from acc unless zero. Tile
 * numbers are immediates, so the 16-row and 32-row variants are written
 * out. */
AMX static void amx_block(float *acc, int zero, const uint16_t *xb, int rows, int dp, int k0, int kc,
                          const uint32_t *wp) {
    size_t tile = (size_t)kc / 2 * 16, sc = NC * sizeof(float), a1 = (size_t)dp * 16; /* the next 16 rows */
    float *c2 = acc + 16 * NC;
    if (zero) {
        _tile_zero(0);
        _tile_zero(1);
    } else {
        _tile_loadd(0, acc, sc);
        _tile_loadd(1, acc + 16, sc);
    }
    if (rows <= 16) {
        for (int k = 0; k < kc; k += BLK) {
            _tile_loadd(4, xb + (size_t)(k0 + k) * 16, 64);
            _tile_loadd(6, wp + (size_t)k / 2 * 16, 64);
            _tile_loadd(7, wp + tile + (size_t)k / 2 * 16, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
        }
    } else {
        if (zero) {
            _tile_zero(2);
            _tile_zero(3);
        } else {
            _tile_loadd(2, c2, sc);
            _tile_loadd(3, c2 + 16, sc);
        }
        for (int k = 0; k < kc; k += BLK) {
            _tile_loadd(4, xb + (size_t)(k0 + k) * 16, 64);
            _tile_loadd(5, xb + a1 + (size_t)(k0 + k) * 16, 64);
            _tile_loadd(6, wp + (size_t)k / 2 * 16, 64);
            _tile_loadd(7, wp + tile + (size_t)k / 2 * 16, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
        _tile_stored(2, c2, sc);
        _tile_stored(3, c2 + 16, sc);
    }
    _tile_stored(0, acc, sc);
    _tile_stored(1, acc + 16, sc);
}

AMX static void amx_release(void) { _tile_release(); }

/* ---- the product ------------------------------------------------------------ */

/* One packed panel (blocks of 32 columns, nb of them) against every row
 * block for k in [k0, k0 + kc). */
static void panel_rows(GemmPath path, float *acc, const uint16_t *xb, int T, int dp, int k0, int kc,
                       const uint32_t *wp, int nb) {
    for (int t0 = 0; t0 < T; t0 += BLK) {
        int rows = T - t0 < BLK ? T - t0 : BLK;
        const uint16_t *xr = xb + x_at((size_t)t0, 0, (size_t)dp);
        for (int b = 0; b < nb; b++) {
            float *a = acc + (size_t)t0 * NC + b * BLK;
            const uint32_t *blk = wp + (size_t)b * kc * 16;
            if (path == GEMM_AMX) amx_block(a, k0 == 0, xr, rows, dp, k0, kc, blk);
            else avx_block(a, k0 == 0, xr, (rows + 7) / 8 * 8, dp, k0, kc, blk);
        }
    }
}

void gemm_half_bf16(GemmPath path, float *C, int ldc, const uint16_t *xb, int T, int d, const uint16_t *w, int n,
                    void *scratch) {
    int dp = (int)pad32((size_t)d);
    uint32_t *wp = scratch;
    float *acc = (float *)(wp + (size_t)NC * KC / 2); /* after the packed panel: [pad32(T)][NC] */
    if (path == GEMM_AMX) amx_configure();
    for (int j0 = 0; j0 < n; j0 += NC) {
        int nc = n - j0 < NC ? n - j0 : NC, nb = (nc + BLK - 1) / BLK;
        for (int k0 = 0; k0 < dp; k0 += KC) {
            int kc = dp - k0 < KC ? dp - k0 : KC;
            for (int b = 0; b < nb; b++) {
                int rows = nc - b * BLK < BLK ? nc - b * BLK : BLK;
                pack_block(wp + (size_t)b * kc * 16, w + (size_t)(j0 + b * BLK) * d, rows, d, k0, kc);
            }
            panel_rows(path, acc, xb, T, dp, k0, kc, wp, nb);
        }
        for (int t = 0; t < T; t++) memcpy(C + (size_t)t * ldc + j0, acc + (size_t)t * NC, nc * sizeof(float));
    }
    if (path == GEMM_AMX) amx_release();
}

/* ---- the peak: the multiply instruction alone, no loads -------------------- */

/* 16 independent accumulators cover VFMADD's and VDPBF16PS's latency at
 * two per cycle (4-6 cycles on current cores); the sum keeps the compiler
 * from dropping them. */
#define PEAK_ACC 16

__attribute__((target("avx512f"))) static double peak_fma512(long reps) {
    __m512 c[PEAK_ACC], a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(1e-9f);
    for (int i = 0; i < PEAK_ACC; i++) c[i] = _mm512_set1_ps((float)i);
    for (long r = 0; r < reps; r++)
        for (int i = 0; i < PEAK_ACC; i++) c[i] = _mm512_fmadd_ps(a, b, c[i]);
    for (int i = 1; i < PEAK_ACC; i++) c[0] = _mm512_add_ps(c[0], c[i]);
    volatile float sink = _mm512_reduce_add_ps(c[0]);
    (void)sink;
    return (double)reps * PEAK_ACC * 16 * 2;
}

__attribute__((target("avx2,fma"))) static double peak_fma256(long reps) {
    __m256 c[PEAK_ACC], a = _mm256_set1_ps(1.0f), b = _mm256_set1_ps(1e-9f);
    for (int i = 0; i < PEAK_ACC; i++) c[i] = _mm256_set1_ps((float)i);
    for (long r = 0; r < reps; r++)
        for (int i = 0; i < PEAK_ACC; i++) c[i] = _mm256_fmadd_ps(a, b, c[i]);
    for (int i = 1; i < PEAK_ACC; i++) c[0] = _mm256_add_ps(c[0], c[i]);
    float v[8];
    _mm256_storeu_ps(v, c[0]);
    volatile float sink = v[0];
    (void)sink;
    return (double)reps * PEAK_ACC * 8 * 2;
}

/* Each VDPBF16PS lane adds two products: 4 FLOP. */
AVX512BF16 static double peak_dpbf16(long reps) {
    __m512 c[PEAK_ACC];
    __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80), b = (__m512bh)_mm512_set1_epi32(0x30003000);
    for (int i = 0; i < PEAK_ACC; i++) c[i] = _mm512_set1_ps((float)i);
    for (long r = 0; r < reps; r++)
        for (int i = 0; i < PEAK_ACC; i++) c[i] = _mm512_dpbf16_ps(c[i], a, b);
    for (int i = 1; i < PEAK_ACC; i++) c[0] = _mm512_add_ps(c[0], c[i]);
    volatile float sink = _mm512_reduce_add_ps(c[0]);
    (void)sink;
    return (double)reps * PEAK_ACC * 16 * 4;
}

/* Four independent tile products, operands loaded once: 16 × 16 × 32
 * multiply-adds each. */
AMX static double peak_tdpbf16(long reps) {
    static const uint16_t ones[16 * 32] = {0};
    float out[16 * 16];
    amx_configure();
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, ones, 64);
    _tile_loadd(5, ones, 64);
    _tile_loadd(6, ones, 64);
    _tile_loadd(7, ones, 64);
    for (long r = 0; r < reps; r++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, out, 64);
    amx_release();
    volatile float sink = out[0];
    (void)sink;
    return (double)reps * 4 * 16 * 16 * 32 * 2;
}

double gemm_half_peak_flops(GemmPath path, long reps) {
    if (path == GEMM_AMX) return cpu_amx() ? peak_tdpbf16(reps) : 0;
    if (path == GEMM_AVX512BF16) return cpu_avx512bf16() ? peak_dpbf16(reps) : 0;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return peak_fma512(reps);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return peak_fma256(reps);
    return 0;
}
