/* cost.c — the bytes a decode step reads: weights, and the KV cache per KV head. */
#include "cost.h"

#include "attn.h"

int cost_local_keys(int t, int window, int sinks) { return attn_kv_read(t, window, sinks, 0); }

size_t cost_kv_bytes(const Config *c, uint64_t kv_positions) {
    /* a key and a value of head_size elements per position */
    return (size_t)(kv_positions * 2 * (uint64_t)c->head_size * model_dtype_size(c->kv_dtype));
}

void cost_step(const Config *c, int t, int window, int sinks, CostStep *out) {
    uint64_t heads = (uint64_t)c->n_layers * c->n_kv_heads;
    out->t = t, out->window = window, out->sinks = sinks;
    out->weight_bytes = model_decode_bytes(c);
    out->kv_bytes_local = cost_kv_bytes(c, heads * (uint64_t)cost_local_keys(t, window, sinks));
    out->kv_bytes_global = cost_kv_bytes(c, heads * (uint64_t)(t + 1));
}

int cost_kv_head_positions(const int8_t *gates, int group, int t, int window, int sinks) {
    int any = 0;
    for (int h = 0; h < group; h++) any |= gates[h] == 1; /* one global query head pulls the far keys in for all */
    return attn_kv_read(t, window, sinks, any);
}

uint64_t cost_kv_layer_positions(const int8_t *gates, int n_heads, int n_kv_heads, int t, int window, int sinks) {
    int group = n_heads / n_kv_heads;
    uint64_t n = 0;
    for (int kvh = 0; kvh < n_kv_heads; kvh++)
        n += (uint64_t)cost_kv_head_positions(gates + kvh * group, group, t, window, sinks);
    return n;
}

double cost_kv_share(const CostStep *s, size_t kv_bytes) {
    double total = (double)s->weight_bytes + (double)kv_bytes;
    return total > 0 ? (double)kv_bytes / total : 0.0;
}

double cost_max_saving(const CostStep *s) {
    double global = (double)s->weight_bytes + (double)s->kv_bytes_global;
    return global > 0 ? 1.0 - ((double)s->weight_bytes + (double)s->kv_bytes_local) / global : 0.0;
}
