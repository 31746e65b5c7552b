/* attn_pattern.c — a head's softmax rows over a run, max-pooled (see attn_pattern.h). */
#include "attn_pattern.h"

#include <math.h>
#include <stdlib.h>

int attn_pattern_cells(int n, int bin) { return bin > 0 ? (n + bin - 1) / bin : 0; }

/* One query's softmax over keys[0 … q] into row (scores first, then
 * weights); the sum in double, as fwd_attention_weights does. */
static void softmax_row(const float *qv, const float *keys, int hs, int q, float *row) {
    float scale = 1.0f / sqrtf((float)hs), mx = -INFINITY;
    for (int i = 0; i <= q; i++) {
        const float *k = keys + (size_t)i * hs;
        float dot = 0;
        for (int j = 0; j < hs; j++) dot += qv[j] * k[j];
        row[i] = dot * scale;
        if (row[i] > mx) mx = row[i];
    }
    double z = 0;
    for (int i = 0; i <= q; i++) z += (row[i] = expf(row[i] - mx));
    for (int i = 0; i <= q; i++) row[i] = (float)(row[i] / z);
}

int attn_pattern(const RunState *s, int layer, int head, int n, int bin, float *out) {
    const Config *c = &s->c;
    if (!s->q_cache || layer < 0 || layer >= c->n_layers || head < 0 || head >= c->n_heads || n < 1 ||
        n > c->seq_len || bin < 1)
        return -1;
    int hs = c->head_size, kvh = head / (c->n_heads / c->n_kv_heads), nb = attn_pattern_cells(n, bin);
    /* the keys once, as floats: a row reads every earlier key */
    float *keys = malloc((size_t)n * hs * sizeof *keys), *row = malloc((size_t)n * sizeof *row);
    if (!keys || !row) { free(keys), free(row); return -1; }
    for (int i = 0; i < n; i++) fwd_kv_get(s, 0, layer, kvh, i, keys + (size_t)i * hs);
    for (size_t i = 0; i < (size_t)nb * nb; i++) out[i] = -1;
    for (int q = 0; q < n; q++) {
        const float *qv = s->q_cache + ((size_t)layer * c->seq_len + q) * c->q_dim + (size_t)head * hs;
        softmax_row(qv, keys, hs, q, row);
        float *cells = out + (size_t)(q / bin) * nb;
        for (int k = 0; k <= q; k++)
            if (row[k] > cells[k / bin]) cells[k / bin] = row[k];
    }
    free(keys), free(row);
    return 0;
}
