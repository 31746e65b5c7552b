/* llamacpp_fixture.h — llama.cpp's harness (tests/llamacpp/ref.c) and ahascope side by side, for the tests that compare them.
 *
 * build/llamacpp-ref ($AHASCOPE_LLAMACPP_REF) drives the npm-installed
 * libraries; these helpers run it, read what it writes, and compute
 * ahascope's answer to the same question (f32 KV caches on both sides), so
 * test_llamacpp.c and test_families.c ask llama.cpp the one same way. A
 * failure is recorded with test_fail and the helper returns NULL or -1. */
#ifndef AHASCOPE_TESTS_LLAMACPP_FIXTURE_H
#define AHASCOPE_TESTS_LLAMACPP_FIXTURE_H

#include <stddef.h>

#include "engine/model.h"

/* What the skip says to do. */
#define LC_HOWTO "make llamacpp (npm installs @node-llama-cpp/linux-x64@3.22.1 into build/llamacpp; see build/llamacpp-install.log)"

/* The harness's path. */
const char *lcfx_ref(void);

/* 1 if `ref info` runs; else a skip naming what is missing, or a failure
 * when the libraries load but do not match ref.c's declarations. */
int lcfx_available(void);

/* Run the harness with args; 0 when it exited 0, else a failure showing its output. */
int lcfx_run(const char *args);

/* A file of exactly want floats, malloc'd, or NULL and a failure. */
float *lcfx_read_floats(const char *path, long want);

/* llama.cpp's logits [n][vocab] over ids, its KV cache of type kv
 * ("f32", "f16"); tag names the scratch files in test_tmp. */
float *lcfx_logits_kv(const char *model, const int *ids, int n, int vocab, const char *tag, const char *kv);

/* lcfx_logits_kv with an f32 cache, as ahascope keeps one in these comparisons. */
float *lcfx_logits(const char *model, const int *ids, int n, int vocab, const char *tag);

/* ahascope's logits [n][vocab] over ids as one prefill (f32 KV). */
float *lcfx_aha_logits(Model *m, const int *ids, int n);

/* The index of x's largest value (the first of equals). */
int lcfx_argmax(const float *x, int n);

/* ahascope's greedy continuation: ids holds n_prompt ids, prefilled at
 * once, and receives steps more, one a step (as ref greedy runs). */
int lcfx_aha_greedy(Model *m, int *ids, int n_prompt, int steps);

/* max over rows [0, rows) and entries of |log_softmax(a) - log_softmax(b)|, in double (NaN sticks). */
double lcfx_max_dlogprob(const float *a, const float *b, int rows, int vocab);

/* ids as "1 2 3", for ref greedy's command line and messages. */
void lcfx_id_text(const int *ids, int n, char *buf, size_t cap);

/* llama.cpp's greedy ids after the prompt (ref greedy, f32 KV) into out; how many it gave. */
int lcfx_greedy(const char *model, const int *prompt, int n, int steps, int *out);

#endif
