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

int cost_kv_held(int t, int window, int sinks, int local_only) {
    return local_only ? cost_local_keys(t, window, sinks) : t + 1;
}

/* 1 when no query head of KV head g of layer l can ever read past its
 * local set under a (the architecture's windows aside). */
static int kv_head_local_only(const Config *c, const AttnConfig *a, int l, int g) {
    if (a->policy == POLICY_LOCAL) return 1;
    if (a->policy != POLICY_STATIC || !a->static_heads) return 0;
    int group = c->n_heads / c->n_kv_heads;
    for (int h = g * group; h < (g + 1) * group; h++)
        if (a->static_heads[l * c->n_heads + h]) return 0;
    return 1;
}

CostFootprint cost_kv_footprint(const Model *m, const AttnConfig *a, int len) {
    const Config *c = &m->c;
    CostFootprint f = {0, 0};
    for (int l = 0; l < c->n_layers; l++)
        for (int g = 0; g < c->n_kv_heads; g++) {
            int arch = m->layers[l].window; /* a windowed layer keeps W keys whatever the policy */
            int local = arch > 0 || kv_head_local_only(c, a, l, g);
            int w = arch > 0 ? arch : a->window, s = arch > 0 ? 0 : a->sinks;
            for (int t = 0; t < len; t++) f.entry_steps += cost_kv_held(t, w, s, local);
            if (len > 0) f.peak += cost_kv_held(len - 1, w, s, local);
        }
    return f;
}

void cost_footprint_add(const Model *m, const AttnConfig *a, int len, CostFootprint *held, CostFootprint *held_full) {
    AttnConfig full = *a;
    full.policy = POLICY_FULL;
    CostFootprint f = cost_kv_footprint(m, a, len), g = cost_kv_footprint(m, &full, len);
    held->entry_steps += f.entry_steps, held->peak = held->peak > f.peak ? held->peak : f.peak;
    held_full->entry_steps += g.entry_steps, held_full->peak = held_full->peak > g.peak ? held_full->peak : g.peak;
}
