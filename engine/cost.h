/* cost.h — the bytes one decode step reads, split into weights and KV cache.
 *
 * A decode step at position t (0-based: t+1 keys cached) streams every
 * weight matrix once (model_decode_bytes, the one definition) and, per layer
 * and KV head, the keys and values it attends to. Routing changes only the
 * second part, so the KV bytes are given between two bounds: every head
 * local (each KV head reads its local set, attn_local_set's definition) and
 * every head global (each KV head reads all t+1 positions).
 *
 * Memory traffic is counted per KV head, not per query head: under
 * grouped-query attention a KV head's far keys are read once if ANY query
 * head of its group is global (query head h uses KV head h / (n_heads /
 * n_kv_heads), as engine/forward.c groups them). A caller that knows how many
 * KV positions were actually read turns them into bytes with cost_kv_bytes.
 *
 * Pure functions of the Config: no I/O, no allocation.
 */
#ifndef AHASCOPE_COST_H
#define AHASCOPE_COST_H

#include <stddef.h>
#include <stdint.h>

#include "aha.h"
#include "model.h"

/* The byte split of one decode step at position t. */
typedef struct {
    int t, window, sinks;     /* where and under which local set it was computed */
    size_t weight_bytes;      /* weights the step streams (model_decode_bytes) */
    size_t kv_bytes_local;    /* KV cache read with every head local */
    size_t kv_bytes_global;   /* KV cache read with every head global (full attention) */
} CostStep;

/* Keys in the local set of position t (sinks plus window, never more than
 * the t+1 keys there are), as attn_local_set bounds it. */
int cost_local_keys(int t, int window, int sinks);

/* Bytes of keys and values in c->kv_dtype for kv_positions positions, each
 * a (layer, KV head, position) triple: what the step reads for them. */
size_t cost_kv_bytes(const Config *c, uint64_t kv_positions);

/* The byte split of a decode step at position t with the given local set. */
void cost_step(const Config *c, int t, int window, int sinks, CostStep *out);

/* KV positions one KV head reads at position t: all t+1 if any of its
 * group's `group` query heads is global (gates: 1 global, 0 local), else
 * its local set. */
int cost_kv_head_positions(const int8_t *gates, int group, int t, int window, int sinks);

/* KV positions one layer reads at position t, summed over its KV heads,
 * from the gates of its n_heads query heads (layer-major, as StepTrace). */
uint64_t cost_kv_layer_positions(const int8_t *gates, int n_heads, int n_kv_heads, int t, int window, int sinks);

/* Share of the step's bytes the KV cache is when it reads kv_bytes:
 * kv_bytes / (weight_bytes + kv_bytes). */
double cost_kv_share(const CostStep *s, size_t kv_bytes);

/* The largest share of a step's bytes routing can save: 1 - (weights +
 * all-local KV) / (weights + all-global KV). */
double cost_max_saving(const CostStep *s);

/* The KV footprint of a sequence: what the cache must hold, not what a
 * step reads. An entry (layer, KV head, position p) is held at step t >= p
 * while a step from t on may still read it. A KV head whose query heads
 * are all fixed-local (the architecture's windowed layers: the window W,
 * no sinks; every head under POLICY_LOCAL, the static policy's local
 * heads: the local set) reads only its local set from then on, so it
 * holds cost_local_keys(t, ...) entries; any other (full, aha, the theta
 * predictors, random: any later step may go global) holds all t + 1.
 * entry_steps is the sum over steps 0..len-1 and KV heads of the entries
 * held (entries x lifespan); peak the entries held at the last step, the
 * most any step holds (the held count never falls): for a prompt, the
 * prefill peak. */
typedef struct {
    double entry_steps, peak;
} CostFootprint;

/* Entries one KV head holds at step t: all t + 1, or its local set when
 * local_only (window and sinks as attn_local_set reads them). */
int cost_kv_held(int t, int window, int sinks, int local_only);

/* The footprint of len steps (positions 0..len-1) of m under a, by the
 * rule above. */
CostFootprint cost_kv_footprint(const Model *m, const AttnConfig *a, int len);

/* Add len steps' footprint under a to held and under full attention to
 * held_full: entry_steps summed over sequences, the peak their largest. */
void cost_footprint_add(const Model *m, const AttnConfig *a, int len, CostFootprint *held, CostFootprint *held_full);

#endif
