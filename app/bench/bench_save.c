/* bench_save.c — `bench --save-hf DIR` / `--save-routers FILE`: the random model written as files, timing nothing.
 *
 * `ahascope bench --save-hf DIR` / `--save-routers FILE`:
 * the random model of --shape/--dims (and --arch) written as files that
 * tests and demonstrations load, timing nothing. Fixed seeds, so reruns
 * write the same weights and routers. */
#include <stdio.h>

#include "app/bench/bench.h"
#include "engine/routers.h"

int bench_save(const BenchOpts *b, Err *e) {
    Model mm, *m = &mm;
    Config shape;
    /* the seed every other mode builds its random model with */
    if (bench_shape_config(b, &shape, e) != 0 || model_random_arch(m, &shape, b->arch, 1234, e) != 0) return -1;
    const Config *c = &m->c;
    HfSaveOpts o = {.dtype = b->dtype, .bos_id = c->vocab_size - 1, .eos_id = c->vocab_size - 1, .tokenizer = 1};
    Routers r = {0};
    const char *keys[] = {"trained_on"}, *vals[] = {"random weights (ahascope bench --save-routers)"};
    int rc = 0;
    if (b->save && model_save(m, b->save, 0, e) != 0) rc = -1;
    if (rc == 0 && b->save_hf && model_save_hf(m, b->save_hf, &o, e) != 0) rc = -1;
    if (rc == 0 && b->save_routers && (router_random(&r, c->n_layers, c->n_heads, c->dim, 4321, e) != 0 ||
                                       router_save(&r, b->save_routers, keys, vals, 1, e) != 0))
        rc = -1;
    if (rc == 0 && b->save_hf)
        printf("wrote %s: %s, dim %d, hidden %d, %d layers, %d/%d heads, vocab %d, context %d, %s\n", b->save_hf,
               m->arch_name, c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len,
               model_dtype_name(b->dtype));
    if (rc == 0 && b->save_routers) printf("wrote %s: random routers, %d layers x %d heads\n", b->save_routers, c->n_layers, c->n_heads);
    router_free(&r);
    model_free(m);
    return rc;
}
