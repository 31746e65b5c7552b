/* bench_bytes.c — `bench --bytes-only`: the byte split of a decode step from the config alone, nothing timed.
 *
 * `ahascope bench --bytes-only`: the byte split of a decode
 * step (weights; the KV cache with every head local and every head global)
 * from the config alone, so any shape and position answers at once:
 * --shape/--dims build no weights, and a model file is only mapped. */
#include <stdio.h>
#include <stdlib.h>

#include "app/bench/bench.h"
#include "engine/cost.h"

int bench_bytes_only(BenchOpts *b, Err *e) {
    Model m = {0};
    Config c;
    if (b->model) {
        setenv("AHASCOPE_WEIGHTS", "map", 0); /* no weight is read: copying them would only cost time */
        if (bench_load_model(b, &m, e) != 0) return -1;
        c = m.c;
    } else {
        if (bench_shape_config(b, &c, e) != 0) return -1;
        c.dtype = c.kv_dtype = b->dtype; /* the random model would be built in f32, or converted to --dtype */
    }
    if (b->kv_dtype >= 0) c.kv_dtype = b->kv_dtype;
    CostStep cs;
    cost_step(&c, bench_cost_position(b), b->attn.window, b->attn.sinks, &cs);
    if (b->json) {
        printf("{\"dtype\": \"%s\", \"kv_dtype\": \"%s\"", model_dtype_name(c.dtype), model_dtype_name(c.kv_dtype));
        bench_print_cost_json(&cs, 1);
        printf("}\n");
    } else {
        bench_print_cost_text(&c, &cs);
    }
    model_free(&m);
    return 0;
}
