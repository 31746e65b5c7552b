/* quant_fixture.c — random ggml blocks with finite f16 scales, for the quantised-weight tests. */
#include "tests/quant_fixture.h"

#include <stdlib.h>

#include "engine/half.h"
#include "engine/quant.h"

float qfx_frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Where a block of t keeps its f16 scales (byte offsets; -1 for none). */
static void scale_offsets(GgmlType t, int block_elems, int at[2]) {
    at[0] = at[1] = -1;
    if (block_elems == 32) at[0] = 0;
    if (t == GGML_Q4_1 || t == GGML_Q5_1) at[1] = 2;
    if (t == GGML_Q2_K) at[0] = 80, at[1] = 82;
    if (t == GGML_Q3_K) at[0] = 108;
    if (t == GGML_Q4_K || t == GGML_Q5_K) at[0] = 0, at[1] = 2;
    if (t == GGML_Q6_K) at[0] = 208;
}

uint8_t *qfx_random_blocks(GgmlType t, size_t n, float scale, unsigned *s, size_t *bytes) {
    int be, bb, at[2];
    quant_block(t, &be, &bb);
    size_t nb = n / (size_t)be;
    uint8_t *b = malloc(nb * (size_t)bb);
    if (!b) return NULL;
    for (size_t i = 0; i < nb * (size_t)bb; i++) *s = *s * 1103515245u + 12345u, b[i] = (uint8_t)(*s >> 16);
    scale_offsets(t, be, at);
    for (size_t k = 0; k < nb; k++)
        for (int i = 0; i < 2; i++)
            if (at[i] >= 0) {
                uint16_t h = half_f32_to_f16(qfx_frand(s) * scale);
                b[k * bb + at[i]] = (uint8_t)h, b[k * bb + at[i] + 1] = (uint8_t)(h >> 8);
            }
    if (bytes) *bytes = nb * (size_t)bb;
    return b;
}
