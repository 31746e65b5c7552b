/* test_cost.c — a decode step's bytes against figures worked out by hand.
 *
 * Engine/cost.c: the bytes of a decode step, against figures worked out by
 * hand for a tiny config (dim 16, hidden 24, 2 layers, 4 query heads over 2
 * KV heads of size 4, vocabulary 300), and the GQA rule that a KV head's far
 * keys are read once however many of its query heads are global. */
#include "engine/attn.h"
#include "engine/cost.h"
#include "tests/test.h"

static Config tiny_config(int shared, int dt) {
    Config c = {.dim = 16, .hidden_dim = 24, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 300,
                .seq_len = 64, .shared_classifier = shared, .dtype = dt, .kv_dtype = dt};
    Err e;
    CHECK(model_config_check(&c, "tiny", &e) == 0);
    return c;
}

/* Matrices: 300·16 (embedding = classifier) + 2·(16·16·2 + 16·8·2 + 16·24·3)
 * = 4800 + 3840 = 8640 elements; norms 2·16·2 + 16 = 80 floats. */
TEST(cost_weight_bytes_by_hand) {
    Config c = tiny_config(1, DT_F32);
    CostStep s;
    cost_step(&c, 9, 4, 0, &s);
    CHECK_INT(s.weight_bytes, (8640 + 80) * 4);
    c = tiny_config(0, DT_F32); /* untied: one embedding row, the whole classifier */
    cost_step(&c, 9, 4, 0, &s);
    CHECK_INT(s.weight_bytes, (8640 + 16 + 80) * 4);
    c = tiny_config(1, DT_BF16); /* norms stay f32 */
    cost_step(&c, 9, 4, 0, &s);
    CHECK_INT(s.weight_bytes, 8640 * 2 + 80 * 4);
}

/* A (layer, KV head, position) is a key and a value of 4 elements: 32 bytes
 * in f32, 16 in bf16; there are 2 × 2 (layer, KV head) pairs. */
TEST(cost_kv_bounds_by_hand) {
    Config c = tiny_config(1, DT_F32);
    CostStep s;
    cost_step(&c, 9, 4, 0, &s); /* 10 keys; local: the last 4 */
    CHECK_INT(s.t, 9);
    CHECK_INT(s.kv_bytes_local, 4 * 4 * 32);
    CHECK_INT(s.kv_bytes_global, 4 * 10 * 32);
    CHECK_INT(s.kv_bytes_global, model_kv_bytes(&c, 10)); /* full attention, as bench counted it */
    CHECK_NEAR(cost_kv_share(&s, s.kv_bytes_global), 1280.0 / (34880 + 1280), 1e-12);
    CHECK_NEAR(cost_kv_share(&s, s.kv_bytes_local), 512.0 / (34880 + 512), 1e-12);
    CHECK_NEAR(cost_max_saving(&s), 1.0 - (34880.0 + 512) / (34880 + 1280), 1e-12);
    CHECK_INT(cost_kv_bytes(&c, 14), 14 * 32);
    c = tiny_config(1, DT_BF16);
    cost_step(&c, 9, 4, 0, &s);
    CHECK_INT(s.kv_bytes_global, 4 * 10 * 16);
    c.kv_dtype = DT_F32; /* the cache's own type, not the weights' */
    cost_step(&c, 9, 4, 0, &s);
    CHECK_INT(s.kv_bytes_global, 4 * 10 * 32);
}

/* Sinks join the window; before there are far keys, local is global. */
TEST(cost_local_set_edges) {
    CHECK_INT(cost_local_keys(9, 4, 0), 4);
    CHECK_INT(cost_local_keys(9, 4, 2), 6);   /* keys 0,1 and 6..9 */
    CHECK_INT(cost_local_keys(6, 4, 2), 6);   /* keys 0,1 and 3..6: key 2 is far */
    CHECK_INT(cost_local_keys(5, 4, 2), 6);   /* all 6 keys: none far */
    CHECK_INT(cost_local_keys(3, 4, 0), 4);   /* t < window */
    CHECK_INT(cost_local_keys(0, 4, 2), 1);   /* one key, more sinks than keys */
    CHECK_INT(cost_local_keys(9, 100, 0), 10); /* window beyond the context */
    CHECK_INT(cost_local_keys(9, 1, 0), 1);
    Config c = tiny_config(1, DT_F32);
    CostStep s;
    int cases[][3] = {{3, 4, 0}, {2, 4, 0}, {9, 10, 0}, {9, 100, 3}, {5, 4, 2}, {0, 1, 0}};
    for (int i = 0; i < 6; i++) {
        cost_step(&c, cases[i][0], cases[i][1], cases[i][2], &s);
        CHECK_MSG(s.kv_bytes_local == s.kv_bytes_global && cost_max_saving(&s) == 0,
                  "t %d w %d S %d: local %zu global %zu", cases[i][0], cases[i][1], cases[i][2], s.kv_bytes_local,
                  s.kv_bytes_global);
    }
    cost_step(&c, 9, 4, 2, &s);
    CHECK_INT(s.kv_bytes_local, 4 * 6 * 32);
}

/* The count agrees with the set attn_local_set bounds, key by key. */
TEST(cost_local_keys_match_attn_local_set) {
    for (int t = 0; t < 40; t++)
        for (int w = 1; w < 12; w++)
            for (int S = 0; S < 5; S++) {
                int ns, lo, n = 0;
                attn_local_set(t, w, S, &ns, &lo);
                for (int i = 0; i <= t; i++) n += i < ns || i >= lo;
                CHECK_MSG(cost_local_keys(t, w, S) == n, "t %d w %d S %d: %d, counted %d", t, w, S,
                          cost_local_keys(t, w, S), n);
            }
}

/* 2 query heads per KV head: query heads 0,1 share KV head 0, heads 2,3 KV
 * head 1. At t 9, w 4: a KV head reads 10 positions if either of its heads
 * is global, else 4 — never 10 twice for one KV head. */
TEST(cost_gqa_counts_each_kv_head_once) {
    int8_t none[4] = {0, 0, 0, 0}, one[4] = {1, 0, 0, 0}, pair[4] = {1, 1, 0, 0}, split[4] = {0, 1, 1, 0};
    int8_t all[4] = {1, 1, 1, 1}, unset[4] = {-1, -1, 0, -1};
    CHECK_INT(cost_kv_layer_positions(none, 4, 2, 9, 4, 0), 4 + 4);
    CHECK_INT(cost_kv_layer_positions(one, 4, 2, 9, 4, 0), 10 + 4);
    CHECK_INT(cost_kv_layer_positions(pair, 4, 2, 9, 4, 0), 10 + 4);
    CHECK_INT(cost_kv_layer_positions(split, 4, 2, 9, 4, 0), 10 + 10);
    CHECK_INT(cost_kv_layer_positions(all, 4, 2, 9, 4, 0), 10 + 10);
    CHECK_INT(cost_kv_layer_positions(unset, 4, 2, 9, 4, 0), 4 + 4); /* only 1 means global */
    CHECK_INT(cost_kv_layer_positions(one, 4, 2, 9, 4, 2), 10 + 6);
    CHECK_INT(cost_kv_layer_positions(one, 4, 2, 3, 4, 0), 4 + 4);     /* no far keys yet */
    CHECK_INT(cost_kv_layer_positions(one, 4, 4, 9, 4, 0), 10 + 4 * 3); /* no GQA: one head per KV head */
    CHECK_INT(cost_kv_layer_positions(pair, 4, 1, 9, 4, 0), 10);        /* one KV head for all */
    CHECK_INT(cost_kv_head_positions(one + 1, 1, 9, 4, 0), 4);
    /* both layers as `one`: the actual bytes sit between the bounds */
    Config c = tiny_config(1, DT_F32);
    CostStep s;
    cost_step(&c, 9, 4, 0, &s);
    size_t actual = cost_kv_bytes(&c, 2 * cost_kv_layer_positions(one, 4, 2, 9, 4, 0));
    CHECK_INT(actual, 2 * 14 * 32);
    CHECK(actual > s.kv_bytes_local && actual < s.kv_bytes_global);
    CHECK_INT(cost_kv_bytes(&c, 2 * cost_kv_layer_positions(none, 4, 2, 9, 4, 0)), s.kv_bytes_local);
    CHECK_INT(cost_kv_bytes(&c, 2 * cost_kv_layer_positions(all, 4, 2, 9, 4, 0)), s.kv_bytes_global);
}
