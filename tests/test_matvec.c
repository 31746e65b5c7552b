/* test_matvec.c — the half-precision decode kernels against a double
 * reference over the widened weights, at lengths that exercise the vector
 * body and every tail (d mod 64, 32, 16, 8). The products are exact in
 * float, so only summation order separates kernel and reference: 1e-5
 * relative to the sum of |w·x|. Row counts 1, 2, 5 and 6 cover the kernel
 * pairing row i with row i + n/2 and the odd row it leaves over. */
#include <stdlib.h>

#include "engine/matvec.h"
#include "engine/safetensors.h"
#include "tests/test.h"

static float frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

TEST(matvec_half_kernels_match_reference_at_every_tail) {
    const int dims[] = {1, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 100, 172, 257};
    unsigned seed = 7;
    const int rows[] = {1, 2, 5, 6};
    for (size_t k = 0; k < sizeof dims / sizeof dims[0] * 4; k++) {
        int d = dims[k / 4], n = rows[k % 4];
        uint16_t *wb = malloc((size_t)n * d * 2), *wh = malloc((size_t)n * d * 2);
        float *x = malloc((size_t)d * 4), *wide = malloc((size_t)n * d * 4), outb[6], outh[6];
        for (int i = 0; i < n * d; i++) {
            float v = frand(&seed) * 3;
            wb[i] = st_f32_to_bf16(v), wh[i] = st_f32_to_f16(v);
        }
        for (int j = 0; j < d; j++) x[j] = frand(&seed);
        mv_bf16(outb, wb, x, n, d);
        mv_f16(outh, wh, x, n, d);
        for (int pass = 0; pass < 2; pass++) {
            const uint16_t *w = pass ? wh : wb;
            mv_widen(wide, w, (size_t)n * d, !pass);
            for (int i = 0; i < n * d; i++) {
                float ref = pass ? st_f16_to_f32(w[i]) : st_bf16_to_f32(w[i]);
                CHECK_MSG(wide[i] == ref, "widen d=%d i=%d: %g vs %g", d, i, wide[i], ref);
                if (wide[i] != ref) break;
            }
            for (int i = 0; i < n; i++) {
                double ref = 0, mag = 0;
                for (int j = 0; j < d; j++) ref += (double)wide[i * d + j] * x[j], mag += fabs((double)wide[i * d + j] * x[j]);
                double got = pass ? outh[i] : outb[i];
                CHECK_MSG(fabs(got - ref) <= 1e-5 * mag + 1e-7, "%s d=%d row %d: %.9g vs %.9g", pass ? "f16" : "bf16", d,
                          i, got, ref);
            }
        }
        free(wb), free(wh), free(x), free(wide);
    }
}
