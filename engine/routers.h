/* routers.h — AHA router vectors for models that ship none.
 *
 * A router file is safetensors with one F32 tensor per layer,
 * `model.layers.{l}.self_attn.router.weight` of shape [n_heads, dim], an
 * optional F32 `model.layers.{l}.self_attn.router.bias` of shape [n_heads]
 * (added to the logit; `ahascope fit` writes one, `train` does not: a file
 * has it for every layer or for none), and string metadata (window, tau,
 * lambda, objective, …). In memory the routers are one array
 * [n_layers][n_heads][dim], as the forward pass reads them, and the biases
 * one array [n_layers][n_heads] or NULL.
 *
 * A multi-choice router file (engine/README.md, "The multi-choice router")
 * has metadata "windows" = "w_1,…,w_K" (1 ≤ K ≤ ROUTER_MAX_WINDOWS,
 * strictly increasing, each 1 … 2^20) and each layer's tensor of shape
 * [n_heads, K + 1, dim]: K + 1 vectors a head, one logit per window and
 * the last for global; no bias. In memory [n_layers][n_heads][K + 1][dim].
 */
#ifndef AHASCOPE_ROUTERS_H
#define AHASCOPE_ROUTERS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct {
    float *w;             /* [n_layers][n_heads][dim] */
    int n_layers, n_heads, dim;
    int window;           /* metadata "window" (0 if absent) */
    float tau;            /* metadata "tau" (NAN if absent) */
    char desc[1024];      /* file path, or "random:SEED" */
    float *b;             /* [n_layers][n_heads] logit biases, or NULL (the file has none) */
    int n_windows;        /* K > 0: a multi-choice router, w holds K + 1 vectors a head; 0: two-way */
    int windows[8];       /* [n_windows] strictly increasing (ROUTER_MAX_WINDOWS) */
} Routers;

#define ROUTER_MAX_WINDOWS 8

/* Parse "w_1,w_2,…" (what = the flag or file for the message): 1 to
 * ROUTER_MAX_WINDOWS whole numbers from 1 to 2^20, strictly increasing.
 * Returns 0 and fills w[], *k; else -1 with one line naming what. */
int router_windows_parse(const char *s, const char *what, int *w, int *k, Err *e);

/* Vectors a head has: 1, or K + 1 for a multi-choice router. */
static inline int router_choices(const Routers *r) { return r->n_windows ? r->n_windows + 1 : 1; }

/* Load routers for a model of the given shape; every layer's tensor must be
 * present with exactly that shape and dtype F32, and finite (a NaN or Inf
 * is refused naming the file and tensor); biases likewise, in every layer
 * or none. Returns 0 on success. */
int router_load(Routers *r, const char *path, int n_layers, int n_heads, int dim, Err *e);

/* Gaussian routers N(0, 1/dim), deterministic in seed (tests, benchmarks). */
int router_random(Routers *r, int n_layers, int n_heads, int dim, uint64_t seed, Err *e);

/* Gaussian multi-choice routers N(0, 1/dim) over windows w[0..k) (tests). */
int router_random_multi(Routers *r, int n_layers, int n_heads, int dim, const int *w, int k, uint64_t seed, Err *e);

/* Parse a --routers value ("random", "random:SEED" or a path) and load it. */
int router_open(Routers *r, const char *spec, int n_layers, int n_heads, int dim, Err *e);

/* The path a --routers value names for one window: "{w}" in spec replaced
 * by the window (a spec without "{w}" is the path itself). */
void router_path_for(const char *spec, int window, char *out, size_t cap);

/* router_open on router_path_for(spec, window); when a "{w}" template names
 * no file at this window, the message names the file and the windows the
 * template has files for. */
int router_open_for(Routers *r, const char *spec, int window, int n_layers, int n_heads, int dim, Err *e);

/* Write routers (and r->b when set) with metadata pairs (keys[i] = values[i]);
 * a multi-choice router's "windows" is written from r (not given in keys). */
int router_save(const Routers *r, const char *path, const char *const *keys, const char *const *values, int n_meta,
                Err *e);

/* Free the vectors (safe on a zeroed struct). */
void router_free(Routers *r);

#endif
